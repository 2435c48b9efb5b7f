use std::collections::BTreeMap;

use super::*;
use crate::graph::adjacency::Direction;
use crate::graph::extract::extract;
use crate::graph::model::{Links, SavedFile};
use crate::graph::Symbols;
use EdgeKind::*;

pub(crate) fn graph(files: &[(&str, &str)]) -> KnowledgeGraph {
    KnowledgeGraph::from_files(
        files
            .iter()
            .map(|(p, src)| {
                let language =
                    Language::from_path(std::path::Path::new(p)).unwrap_or(Language::Python);
                (p.to_string(), extract(language, src.as_bytes()))
            })
            .collect(),
    )
}

/// `files()` gives back the symbols the graph was built from, exactly: the
/// definitions' names and signatures come from their nodes, the rest from what
/// the graph keeps, and an update replaces one file's alone.
#[test]
fn files_are_the_symbols_built_from() {
    let sources = [
        (
            "a.py",
            "import b\n\nclass A(b.B):\n    def run(self, x):\n        return helper(x)\n\n\ndef helper(y):\n    \"\"\"Doc.\"\"\"\n    return b.go(y)\n",
        ),
        ("b.py", "class B:\n    pass\n\ndef go(z):\n    return z\n"),
        ("c.go", "package c\n\nfunc Run() int { return 1 }\n"),
    ];
    let symbols = |(p, src): (&str, &str)| {
        let language = Language::from_path(std::path::Path::new(p)).expect("known");
        (p.to_string(), extract(language, src.as_bytes()))
    };
    let files: Vec<(String, FileSymbols)> = sources.into_iter().map(symbols).collect();
    let mut g = graph(&sources);
    assert_eq!(g.files(), files);
    assert!(files.iter().all(|(_, s)| !s.definitions.is_empty()));
    let (_, changed) = symbols((
        "b.py",
        "def go(z, w):\n    return z\n\nclass C:\n    x = 1\n",
    ));
    g.update_file("b.py", changed.clone());
    let mut expected = files;
    expected[1].1 = changed;
    assert_eq!(g.files(), expected);
}

/// What the definitions named `name` call: (callee label, call line, confidence).
pub(crate) fn callees(g: &KnowledgeGraph, name: &str) -> Vec<(String, usize, f32)> {
    g.callees(name)
        .iter()
        .map(|(n, e)| (g.label(*n), e.line as usize, e.confidence))
        .collect()
}

pub(crate) fn e(a: &str, k: EdgeKind, b: &str) -> (String, EdgeKind, String) {
    (a.to_string(), k, b.to_string())
}

#[test]
fn exact_graph_of_a_small_repo() {
    let g = graph(&[
        (
            "app.py",
            "from util import slug\nfrom models import Base, LIMIT\n\nclass Page(Base):\n    def title(self) -> str:\n        return slug(self.name)[:LIMIT]\n\ndef render(p):\n    return p.title()\n",
        ),
        ("util.py", "def slug(s):\n    return s.lower()\n\ndef title():\n    pass\n"),
        ("models.py", "LIMIT = 10\n\nclass Base:\n    pass\n"),
    ]);
    assert_eq!((g.file_count(), g.node_count()), (3, 12));
    let edges: Vec<_> = g
        .edge_list()
        .into_iter()
        .map(|(a, k, b, _, _)| (a, k, b))
        .collect();
    assert_eq!(
        edges,
        vec![
            e("app.py", Contains, "app.py:Page"),
            e("app.py", Contains, "app.py:import models"),
            e("app.py", Contains, "app.py:import util"),
            e("app.py", Contains, "app.py:render"),
            e("app.py:Page", Contains, "app.py:title"),
            e("app.py:Page", Inherits, "models.py:Base"),
            e("app.py:import models", Imports, "models.py"),
            e("app.py:import models", References, "models.py:Base"),
            e("app.py:import models", References, "models.py:LIMIT"),
            e("app.py:import util", Imports, "util.py"),
            e("app.py:import util", References, "util.py:slug"),
            e("app.py:render", Calls, "app.py:title"), // same file wins over util.py's title
            e("app.py:title", Calls, "util.py:slug"),
            e("app.py:title", Uses, "models.py:LIMIT"),
            e("models.py", Contains, "models.py:Base"),
            e("models.py", Contains, "models.py:LIMIT"),
            e("util.py", Contains, "util.py:slug"),
            e("util.py", Contains, "util.py:title"),
        ]
    );
    let callers: Vec<_> = g
        .callers("slug")
        .iter()
        .map(|(n, e)| (g.node(*n).name.to_string(), e.line as usize, e.confidence))
        .collect();
    assert_eq!(callers, vec![("title".to_string(), 6, 1.0)]);
    let contents: Vec<_> = g
        .file_contents("app.py")
        .unwrap()
        .iter()
        .map(|&n| g.node(n).name.to_string())
        .collect();
    assert_eq!(contents, ["util", "models", "Page", "title", "render"]);
    assert_eq!(
        g.dependencies("app.py", Direction::Outgoing).unwrap(),
        ["models.py", "util.py"]
    );
    assert_eq!(
        g.dependencies("util.py", Direction::Incoming).unwrap(),
        ["app.py"]
    );
    assert!(g
        .dependencies("util.py", Direction::Outgoing)
        .unwrap()
        .is_empty());
    assert!(g.dependencies("nope.py", Direction::Outgoing).is_none());
    assert_eq!(g.find_symbol("title", false).len(), 2);
    assert_eq!(g.find_symbol("ti", true).len(), 2);
    assert!(g.file_contents("nope.py").is_none());
    let import = g.file_contents("app.py").unwrap()[1];
    assert_eq!(
        (g.node(import).kind, g.node(import).items.clone()),
        (NodeKind::Import, ["Base".into(), "LIMIT".into()].into())
    );
    assert_eq!(&*g.node(g.parent(import).unwrap()).name, "app.py");
}

/// A built or loaded graph has room for a 16th more nodes and edges, so the
/// first updates that add some do not copy the whole vectors.
#[test]
fn built_and_loaded_graphs_have_room_to_grow() {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            let source = format!(
                "import f{}\n\ndef g{i}():\n    g{}()\n    h()\n\ndef h():\n    pass\n",
                (i + 1) % 40,
                (i + 1) % 40
            );
            (format!("f{i}.py"), source)
        })
        .collect();
    let built = graph_of(&files);
    let loaded = KnowledgeGraph::from_saved(built.saved()).unwrap();
    for g in [&built, &loaded] {
        let (nodes, edges) = (g.node_count(), g.edge_count());
        assert_eq!((nodes, edges), (160, 240));
        assert!(g.graph.room().0 >= nodes / 16, "{:?}", g.graph.room());
        assert!(g.graph.room().1 >= edges / 16, "{:?}", g.graph.room());
        assert!(g.owner.capacity() - g.owner.len() >= nodes / 16);
        assert!(g.parents.capacity() - g.parents.len() >= nodes / 16);
    }
}

/// The graph of (path, source) pairs held as strings.
fn graph_of(files: &[(String, String)]) -> KnowledgeGraph {
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, s)| (p.as_str(), s.as_str()))
        .collect();
    graph(&pairs)
}

/// Eleven files loaded in runs of `LINK_RUN` (3 in tests): the graph saved, and
/// a file refused in the last run is an error naming it.
#[test]
fn a_graph_loaded_in_runs_is_the_graph_saved() {
    let files: Vec<(String, String)> = (0..11)
        .map(|i| {
            let next = (i + 1) % 11;
            let source = format!(
                "import f{next}\n\nclass C{i}:\n    def m(self):\n        f{next}.g{next}()\n\ndef g{i}():\n    pass\n"
            );
            (format!("f{i}.py"), source)
        })
        .collect();
    let built = graph_of(&files);
    let saved = built.saved();
    let loaded = KnowledgeGraph::from_saved(saved.clone()).unwrap();
    assert_eq!(loaded.edge_list(), built.edge_list());
    assert_eq!(loaded.files(), built.files());
    assert_eq!(loaded.saved(), saved);
    // Sorted by path, the tenth file (in the last run) is f8.py.
    let mut bad = saved;
    let last = bad.names.intern("zz");
    let refs = &mut bad.files[9].references;
    let mut first = refs[0];
    first.name = last;
    refs.insert(0, first);
    let why = KnowledgeGraph::from_saved(bad).unwrap_err();
    assert_eq!(why, "f8.py: references out of order");
}

#[test]
fn links_that_do_not_fit_the_files_are_an_error() {
    let g = graph(&[
        ("a.py", "import b\n\ndef f():\n    b.g()\n"),
        ("b.py", "def g():\n    pass\n"),
    ]);
    let saved = g.saved();
    let loaded = KnowledgeGraph::from_saved(saved.clone()).unwrap();
    assert_eq!(loaded.edge_list(), g.edge_list());
    let damaged = |damage: fn(&mut Links)| {
        let mut bad = saved.clone();
        damage(&mut bad.files[0].links);
        KnowledgeGraph::from_saved(bad).unwrap_err()
    };
    assert!(damaged(|l| l.edges[0].to_file = 7).contains("a.py: no file at position 7"));
    assert!(damaged(|l| l.edges[0].to = 99).contains("no node at position"));
    assert!(damaged(|l| l.resolved.clear()).contains("1 imports but 0 resolved"));
    // Names and references that do not fit the file (a file decodes into any
    // of these).
    let named = |damage: fn(&mut SavedFile)| {
        let mut bad = saved.clone();
        damage(&mut bad.files[0]);
        KnowledgeGraph::from_saved(bad).unwrap_err()
    };
    let unfit = "a.py: names that do not fit its symbols";
    assert_eq!(named(|f| f.definitions.clear()), unfit);
    assert_eq!(
        named(|f| f.symbols.references = vec![Reference {
            kind: RefKind::Call,
            name: "g".into(),
            line: 1,
            origin: Origin::File,
            receiver: Receiver::Unknown,
        }]),
        unfit
    );
    let unknown = "a.py: a name the graph does not have";
    assert_eq!(named(|f| f.definitions[0] = 99), unknown);
    assert_eq!(named(|f| f.references[0].name = u32::MAX), unknown);
    let range = "a.py: a reference's origin or receiver out of range";
    assert_eq!(
        named(|f| f.references[0].origin = Origin::Definition(1)),
        range
    );
    assert_eq!(named(|f| f.references[0].origin = Origin::Import(1)), range);
    assert_eq!(
        named(|f| f.references[0].receiver = Receiver::Type(0)),
        range
    );
    assert_eq!(
        named(|f| f.references[0].receiver = Receiver::Named(1)),
        range
    );
}

/// `files` (path -> text) parsed as `language`, in path order.
fn parsed(language: Language, files: &BTreeMap<String, String>) -> Vec<(String, FileSymbols)> {
    files
        .iter()
        .map(|(p, s)| (p.clone(), extract(language, s.as_bytes())))
        .collect()
}

/// Gives the file `path` in `g` and in `files` its new `text` (in `language`),
/// or removes it (`None`).
fn change(
    g: &mut KnowledgeGraph,
    files: &mut BTreeMap<String, String>,
    language: Language,
    path: &str,
    text: Option<String>,
) {
    match text {
        Some(text) => {
            g.update_file(path, extract(language, text.as_bytes()));
            files.insert(path.to_string(), text);
        }
        None => {
            g.remove_file(path);
            files.remove(path);
        }
    }
}

/// A package import (`import p.*`) links only the files of the package the
/// importer uses (through a call, a type or a base), at the confidence of the
/// best such link; a class import links its class's file, used or not; a C#
/// `using` is a package import; a Go import still links its whole package.
#[test]
fn package_imports_link_the_files_used() {
    let g = graph(&[
        ("src/com/acme/util/Strings.java", "package com.acme.util;\npublic class Strings { public static String trim(String s) { return s; } }\n"),
        ("src/com/acme/util/Numbers.java", "package com.acme.util;\npublic class Numbers { public static int parse(String s) { return 0; } }\n"),
        ("src/com/acme/util/Dates.java", "package com.acme.util;\npublic class Dates { }\n"),
        ("src/com/acme/util/Base.java", "package com.acme.util;\npublic class Base { }\n"),
        ("src/com/acme/app/Main.java", "package com.acme.app;\nimport com.acme.util.*;\nimport com.acme.util.Dates;\npublic class Main extends Base { void run(String a) { Strings.trim(a); } }\n"),
        ("Util/Strings.cs", "namespace Util { public class Strings { public static string Trim(string s) { return s; } } }\n"),
        ("Util/Dates.cs", "namespace Util { public class Dates { } }\n"),
        ("App/Main.cs", "using Util;\nnamespace App { public class Main { public static void Run() { Strings.Trim(\"x\"); } } }\n"),
        ("go.mod", ""),
        ("util/a.go", "package util\n\nfunc A() {}\n"),
        ("util/b.go", "package util\n\nfunc B() {}\n"),
        ("main.go", "package main\n\nimport \"x/util\"\n\nfunc main() { util.A() }\n"),
    ]);
    let imports: Vec<(String, String, f32)> = g
        .edge_list()
        .into_iter()
        .filter(|(_, kind, _, _, _)| *kind == Imports)
        .map(|(a, _, b, _, confidence)| (a, b, confidence))
        .collect();
    let import = |a: &str, b: &str| (a.to_string(), b.to_string(), 1.0);
    assert_eq!(
        imports,
        [
            import("App/Main.cs:import Util", "Util/Strings.cs"),
            (
                "main.go:import x/util".to_string(),
                "util/a.go".to_string(),
                0.5
            ),
            (
                "main.go:import x/util".to_string(),
                "util/b.go".to_string(),
                0.5
            ),
            import(
                "src/com/acme/app/Main.java:import com.acme.util",
                "src/com/acme/util/Base.java"
            ),
            import(
                "src/com/acme/app/Main.java:import com.acme.util",
                "src/com/acme/util/Strings.java"
            ),
            import(
                "src/com/acme/app/Main.java:import com.acme.util.Dates",
                "src/com/acme/util/Dates.java"
            ),
        ]
    );
}

/// Java files with package imports, class imports and bases across two
/// packages, updated, removed and added at random: after each step, the same
/// graph as a fresh build (the package imports' edges follow the links the
/// importers have: repaired when those change).
#[test]
fn package_import_updates_equal_a_fresh_build() {
    use std::collections::BTreeMap;
    const PACKAGES: [&str; 2] = ["a", "b"];
    for seed in 1..=40u64 {
        let mut next = crate::testing::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let path_of = |next: &mut dyn FnMut(u64) -> u64| {
            let (package, i) = (PACKAGES[next(2) as usize], next(4));
            format!("src/{package}/C{i}.java")
        };
        let source = |next: &mut dyn FnMut(u64) -> u64, path: &str| {
            let package = &path[4..5];
            let other = PACKAGES[next(2) as usize];
            let class = path.rsplit_once('/').unwrap().1.trim_end_matches(".java");
            // Sometimes the file defines another class than its name says.
            let class = if next(4) == 0 {
                format!("D{}", next(4))
            } else {
                class.to_string()
            };
            let mut text = format!("package {package};\n");
            if next(3) != 0 {
                text.push_str(&format!("import {other}.*;\n"));
            }
            if next(3) == 0 {
                text.push_str(&format!("import {other}.C{};\n", next(4)));
            }
            let base = if next(2) == 0 {
                format!(" extends C{}", next(4))
            } else {
                String::new()
            };
            let (callee, made) = (next(4), next(4));
            text.push_str(&format!(
                "public class {class}{base} {{\n  static void m{}() {{ C{callee}.m{callee}(); new C{made}(); }}\n}}\n",
                next(4)
            ));
            text
        };
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for _ in 0..6 {
            let path = path_of(&mut next);
            let text = source(&mut next, &path);
            files.insert(path, text);
        }
        let mut g = KnowledgeGraph::from_files(parsed(Language::Java, &files));
        for step in 0..12 {
            let path = path_of(&mut next);
            let text = (next(4) != 0).then(|| source(&mut next, &path));
            change(&mut g, &mut files, Language::Java, &path, text);
            let fresh = KnowledgeGraph::from_files(parsed(Language::Java, &files));
            assert_eq!(
                g.edge_list(),
                fresh.edge_list(),
                "seed {seed}, step {step}, after changing {path}"
            );
        }
    }
}

/// Kotlin files whose `package` lines change (the module keys they answer to
/// change with them): after each update, the same graph as a fresh build.
#[test]
fn package_changes_equal_a_fresh_build() {
    use std::collections::BTreeMap;
    const PACKAGES: [&str; 3] = ["a.b", "c", "a.b.k"];
    for seed in 1..=20u64 {
        let mut next = crate::testing::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let source = |next: &mut dyn FnMut(u64) -> u64, i: u64| {
            let package = PACKAGES[next(3) as usize];
            let import = PACKAGES[next(3) as usize];
            let other = next(4);
            format!(
                "package {package}\n\nimport {import}.f{other}\nimport {import}.K{other}\n\nclass K{i}\nfun f{i}() {{ f{other}(); K{other}() }}\n"
            )
        };
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for i in 0..4 {
            files.insert(format!("d{i}/F{i}.kt"), source(&mut next, i));
        }
        let mut g = KnowledgeGraph::from_files(parsed(Language::Kotlin, &files));
        for step in 0..10 {
            let i = next(4);
            let path = format!("d{i}/F{i}.kt");
            let text = source(&mut next, i);
            change(&mut g, &mut files, Language::Kotlin, &path, Some(text));
            let fresh = KnowledgeGraph::from_files(parsed(Language::Kotlin, &files));
            assert_eq!(
                g.edge_list(),
                fresh.edge_list(),
                "seed {seed}, step {step}, after changing {path}"
            );
            assert_eq!(g.node_count(), fresh.node_count());
        }
    }
}

#[test]
fn incremental_updates_equal_a_fresh_build() {
    use std::collections::BTreeMap;
    const NAMES: [&str; 7] = ["load", "save", "run", "fetch", "Repo", "Base", "LIMIT"];
    for seed in 1..=60u64 {
        let mut next = crate::testing::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let path_of = |next: &mut dyn FnMut(u64) -> u64| {
            let i = next(10); // f8, f9 are new files
            if next(3) == 0 {
                format!("pkg/f{i}.py")
            } else {
                format!("f{i}.py")
            }
        };
        let source = |next: &mut dyn FnMut(u64) -> u64| {
            let mut text = String::new();
            let name = |next: &mut dyn FnMut(u64) -> u64| NAMES[next(7) as usize];
            for _ in 0..next(5) {
                match next(8) {
                    0 => text.push_str(&format!(
                        "from f{} import {}, {} as other\nother()\n",
                        next(10),
                        name(next),
                        name(next)
                    )),
                    1 => text.push_str(&format!("from .f{} import {}\n", next(10), name(next))),
                    2 => text.push_str("LIMIT = 1\n"),
                    3 => {
                        let class = if next(2) == 0 { "Repo" } else { "Base" };
                        let (base, method, callee) =
                            (name(next), NAMES[next(4) as usize], name(next));
                        text.push_str(&format!("class {class}({base}):\n    def {method}(self):\n        self.{callee}() + LIMIT\n"));
                    }
                    4 => {
                        let (module, def, callee) = (next(10), NAMES[next(4) as usize], name(next));
                        text.push_str(&format!(
                            "import f{module} as m\ndef {def}():\n    m.{callee}()\n"
                        ));
                    }
                    6 => {
                        // A call on a variable of a known class.
                        let class = if next(2) == 0 { "Repo" } else { "Base" };
                        let (def, callee) = (NAMES[next(4) as usize], name(next));
                        text.push_str(&format!(
                            "def {def}():\n    x = {class}()\n    x.{callee}()\n"
                        ));
                    }
                    7 => {
                        // A call on an annotated parameter and on an attribute.
                        let class = if next(2) == 0 { "Repo" } else { "Base" };
                        let (method, callee) = (NAMES[next(4) as usize], name(next));
                        text.push_str(&format!(
                            "class Repo:\n    def __init__(self):\n        self.y = {class}()\n    def {method}(self, p: {class}):\n        p.{callee}()\n        self.y.{callee}()\n"
                        ));
                    }
                    _ => {
                        let (def, a, b) = (NAMES[next(4) as usize], name(next), name(next));
                        text.push_str(&format!("def {def}():\n    {a}()\n    return {b}\n"));
                    }
                }
            }
            text.push_str(&format!("{}()\n", name(next)));
            text
        };
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for _ in 0..10 {
            let path = path_of(&mut next);
            files.insert(path, source(&mut next));
        }
        let mut g = KnowledgeGraph::from_files(parsed(Language::Python, &files));
        for step in 0..12 {
            let path = path_of(&mut next);
            let text = (next(4) != 0).then(|| source(&mut next));
            change(&mut g, &mut files, Language::Python, &path, text);
            if step % 4 == 3 {
                // Saved and loaded (renumbered): equal, and it goes on updating.
                g = KnowledgeGraph::from_saved(g.saved()).expect("a graph's own links fit it");
            }
            let fresh = KnowledgeGraph::from_files(parsed(Language::Python, &files));
            assert_eq!(
                g.edge_list(),
                fresh.edge_list(),
                "seed {seed}, step {step}, after changing {path}"
            );
            assert_eq!(
                (g.node_count(), g.file_count()),
                (fresh.node_count(), fresh.file_count())
            );
            let mut a = g
                .find_symbol("", true)
                .into_iter()
                .map(|n| g.node(n).clone())
                .collect::<Vec<_>>();
            let mut b = fresh
                .find_symbol("", true)
                .into_iter()
                .map(|n| fresh.node(n).clone())
                .collect::<Vec<_>>();
            a.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
            b.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
            assert_eq!(a, b);
        }
    }
}

/// A graph's module tables by path: key -> files answering to it, key -> files
/// looking it up, path -> (keys it answers to, keys each import looks up).
type Tables = (
    BTreeMap<String, Vec<String>>,
    BTreeMap<String, Vec<String>>,
    BTreeMap<String, (Vec<String>, Vec<(Vec<String>, Match)>)>,
);

fn tables(g: &KnowledgeGraph) -> Tables {
    let paths = |files: &Vec<NodeIndex>| -> Vec<String> {
        files.iter().map(|&f| g.graph[f].path.to_string()).collect()
    };
    let by_path = |map: &HashMap<String, Vec<NodeIndex>>| -> BTreeMap<String, Vec<String>> {
        map.iter().map(|(k, v)| (k.clone(), paths(v))).collect()
    };
    let entries = g
        .files
        .iter()
        .map(|(p, e)| (p.clone(), (e.keys.clone(), e.import_keys.clone())))
        .collect();
    (by_path(&g.modules), by_path(&g.lookups), entries)
}

/// A loaded graph leaves its module tables to be made when it is first changed
/// (only linking reads them); made, they are the built graph's, entry for entry;
/// an update or a removal makes them first.
#[test]
fn a_loaded_graph_makes_its_module_tables_when_first_changed() {
    let files = [
        ("app/models.py", "class User:\n    pass\n"),
        (
            "app/views.py",
            "from app.models import User\nfrom . import models\nUser()\n",
        ),
        (
            "src/main/java/a/B.java",
            "package a;\nimport c.D;\nimport c.*;\nclass B { D d; }\n",
        ),
        ("src/main/java/c/D.java", "package c;\npublic class D {}\n"),
        ("src/main/java/c/E.java", "package c;\npublic class E {}\n"),
        (
            "cmd/main.go",
            "package main\nimport \"example.com/x/pkg\"\nfunc main() { pkg.P() }\n",
        ),
        ("pkg/p.go", "package pkg\nfunc P() {}\n"),
        ("web/a.ts", "import { b } from './b';\nb();\n"),
        ("web/b.ts", "export function b() {}\n"),
    ];
    let built = graph(&files);
    assert!(!built.modules_pending && !built.modules.is_empty());
    let loaded = || KnowledgeGraph::from_saved(built.saved()).unwrap();
    let mut g = loaded();
    assert!(g.modules_pending && g.modules.is_empty() && g.lookups.is_empty());
    assert!(g
        .files
        .values()
        .all(|e| e.keys.is_empty() && e.import_keys.is_empty()));
    g.make_modules();
    assert!(!g.modules_pending);
    assert_eq!(tables(&g), tables(&built));
    let mut removed = loaded();
    assert!(!removed.remove_file("absent.py"));
    assert_eq!(tables(&removed), tables(&built));
    let mut updated = loaded();
    let mut fresh = graph(&files);
    let source = "from app.models import User\nUser()\n";
    for g in [&mut updated, &mut fresh] {
        g.update_file("app/views.py", extract(Language::Python, source.as_bytes()));
    }
    assert_eq!(tables(&updated), tables(&fresh));
    assert_eq!(updated.edge_list(), fresh.edge_list());
}
