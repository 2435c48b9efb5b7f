//! Which files an import names. Every file registers the module keys it answers to
//! (its module path and each suffix of it, so `email.utils` finds `Lib/email/utils.py`
//! whatever the source root), and every import is turned into the keys to look up.
//! Keys carry a language family prefix: a Python import never finds a Go package.

use super::extract::{Import, Language};

/// Languages that can import each other's files (JavaScript and TypeScript) share one.
pub fn family(language: Language) -> &'static str {
    match language {
        Language::Python => "py",
        Language::Rust => "rs",
        Language::JavaScript | Language::TypeScript | Language::Tsx => "js",
        Language::Go => "go",
        Language::Java => "java",
    }
}

fn key(language: Language, path: &str) -> String {
    format!("{}:{}", family(language), path)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn strip_extension(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, _)) if !stem.ends_with('/') && !stem.is_empty() => stem,
        _ => path,
    }
}

/// The module a file is, as a path: `pkg/mod.py` is `pkg/mod`, `pkg/__init__.py` is
/// `pkg`; a Rust `mod.rs`, `lib.rs` or `main.rs` is its folder; a Go file is its
/// package, the folder.
fn module_path(language: Language, path: &str) -> &str {
    let stem = strip_extension(path);
    let file = stem.rsplit('/').next().unwrap_or(stem);
    match language {
        Language::Go => parent(path),
        Language::Python if file == "__init__" => parent(path),
        Language::Rust if matches!(file, "mod" | "lib" | "main") => parent(path),
        _ => stem,
    }
}

fn suffixes(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path)
        .chain(path.match_indices('/').map(move |(i, _)| &path[i + 1..]))
        .filter(|s| !s.is_empty())
}

/// The keys a file answers to: every suffix of its module path (and, for Java
/// classes and JavaScript `index` files, of their folder too: a package or a folder import).
pub fn keys(language: Language, path: &str) -> Vec<String> {
    let module = module_path(language, path);
    let mut out: Vec<String> = suffixes(module).map(|s| key(language, s)).collect();
    let folder_too = match language {
        Language::Java => true,
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            module.rsplit('/').next() == Some("index")
        }
        _ => false,
    };
    if folder_too {
        out.extend(suffixes(parent(module)).map(|s| key(language, s)));
    }
    out
}

/// How an import's keys are used: all that match, or the first (longest) that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    All,
    First,
}

/// Removes `.` and `..` components.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (false, true) => dir.to_string(),
        (false, false) => format!("{dir}/{rest}"),
    }
}

/// The keys an import of `importer` looks up, and how to combine their matches.
/// Unresolvable forms (a JavaScript package, a relative import above the root) give
/// no keys: the import stays a node without an `Imports` edge.
pub fn lookups(language: Language, importer: &str, import: &Import) -> (Vec<String>, Match) {
    let dir = parent(importer);
    let with_items = |base: String| -> Vec<String> {
        let mut out = vec![base.clone()];
        out.extend(
            import
                .items
                .iter()
                .map(|item| join(&base, &item.replace(['.', ':'], "/"))),
        );
        out.retain(|k| !k.is_empty());
        out
    };
    let (paths, how) = match language {
        Language::Python => {
            let dots = import.module.chars().take_while(|c| *c == '.').count();
            let rest = import.module[dots..].replace('.', "/");
            if dots == 0 {
                (with_items(rest), Match::All)
            } else {
                let up = "../".repeat(dots - 1);
                match normalize(&join(dir, &format!("{up}{rest}"))) {
                    Some(base) => (with_items(base), Match::All),
                    None => (vec![], Match::All),
                }
            }
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            if !import.module.starts_with('.') {
                (vec![], Match::All)
            } else {
                let target = normalize(&join(dir, &import.module)).unwrap_or_default();
                let known = ["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"];
                let target = match target.rsplit_once('.') {
                    Some((stem, ext)) if known.contains(&ext) => stem.to_string(),
                    _ => target,
                };
                (
                    vec![target].into_iter().filter(|t| !t.is_empty()).collect(),
                    Match::All,
                )
            }
        }
        Language::Java => {
            let path = import.module.replace('.', "/");
            // `import a.b.C` is a class, `import a.b.*` a package, `import static a.b.C.m` a member.
            let mut out = vec![path.clone()];
            out.extend(Some(parent(&path).to_string()).filter(|p| !p.is_empty()));
            (out, Match::First)
        }
        Language::Go => (
            suffixes(&import.module).map(str::to_string).collect(),
            Match::First,
        ),
        Language::Rust => {
            let own = module_path(language, importer);
            if import.submodule {
                (vec![join(own, &import.module)], Match::All)
            } else {
                let mut segments = import.module.split("::").peekable();
                let mut base = String::new();
                match segments.peek() {
                    Some(&"crate") => {
                        segments.next();
                    }
                    Some(&"self") => {
                        segments.next();
                        base = own.to_string();
                    }
                    Some(&"super") => {
                        base = own.to_string();
                        while segments.peek() == Some(&"super") {
                            segments.next();
                            base = parent(&base).to_string();
                        }
                    }
                    _ => {}
                }
                let rest: Vec<&str> = segments.collect();
                (with_items(join(&base, &rest.join("/"))), Match::All)
            }
        }
    };
    (paths.into_iter().map(|p| key(language, &p)).collect(), how)
}

/// Folder of a file's package, as a key, for Go and Java (whose files see their
/// package's definitions without an import); None for other languages.
pub fn package(language: Language, path: &str) -> Option<String> {
    matches!(language, Language::Go | Language::Java)
        .then(|| key(language, parent(path)))
        .filter(|k| !k.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(module: &str, items: &[&str]) -> Import {
        Import {
            module: module.into(),
            items: items.iter().map(|s| s.to_string()).collect(),
            alias: None,
            renamed: vec![],
            submodule: false,
            line: 1,
            statement: String::new(),
        }
    }

    #[test]
    fn keys_are_module_suffixes() {
        assert_eq!(
            keys(Language::Python, "Lib/email/utils.py"),
            ["py:Lib/email/utils", "py:email/utils", "py:utils"]
        );
        assert_eq!(keys(Language::Python, "pkg/__init__.py"), ["py:pkg"]);
        assert_eq!(
            keys(Language::Rust, "src/graph/mod.rs"),
            ["rs:src/graph", "rs:graph"]
        );
        assert_eq!(
            keys(Language::Go, "cmd/tool/main.go"),
            ["go:cmd/tool", "go:tool"]
        );
        assert_eq!(
            keys(Language::Java, "com/x/Foo.java"),
            [
                "java:com/x/Foo",
                "java:x/Foo",
                "java:Foo",
                "java:com/x",
                "java:x"
            ]
        );
        assert_eq!(
            keys(Language::TypeScript, "src/ui/index.ts"),
            [
                "js:src/ui/index",
                "js:ui/index",
                "js:index",
                "js:src/ui",
                "js:ui"
            ]
        );
    }

    #[test]
    fn lookups_per_language() {
        let l = |lang, importer, i: Import| lookups(lang, importer, &i);
        assert_eq!(
            l(Language::Python, "a/b.py", import("os.path", &["join"])).0,
            ["py:os/path", "py:os/path/join"]
        );
        assert_eq!(
            l(Language::Python, "a/b/c.py", import("..x", &["y"])).0,
            ["py:a/x", "py:a/x/y"]
        );
        assert_eq!(
            l(Language::Python, "a/c.py", import(".", &["y"])).0,
            ["py:a", "py:a/y"]
        );
        assert!(
            l(Language::Python, "c.py", import("..x", &[])).0.is_empty(),
            "above the root"
        );
        assert_eq!(
            l(
                Language::TypeScript,
                "src/app.ts",
                import("./util/str.js", &[])
            )
            .0,
            ["js:src/util/str"]
        );
        assert!(l(Language::JavaScript, "src/app.js", import("react", &[]))
            .0
            .is_empty());
        assert_eq!(
            l(Language::Java, "A.java", import("com.x.Foo", &[])),
            (
                vec!["java:com/x/Foo".into(), "java:com/x".into()],
                Match::First
            )
        );
        assert_eq!(
            l(Language::Go, "main.go", import("example.com/m/util", &[])).0,
            ["go:example.com/m/util", "go:m/util", "go:util"]
        );
        assert_eq!(
            l(
                Language::Rust,
                "src/graph/store.rs",
                import("super", &["extract"])
            )
            .0,
            ["rs:src/graph", "rs:src/graph/extract"]
        );
        assert_eq!(
            l(
                Language::Rust,
                "src/lib.rs",
                import("crate::graph", &["Edge"])
            )
            .0,
            ["rs:graph", "rs:graph/Edge"]
        );
        let sub = Import {
            submodule: true,
            ..import("store", &[])
        };
        assert_eq!(
            l(Language::Rust, "src/graph/mod.rs", sub).0,
            ["rs:src/graph/store"]
        );
        assert_eq!(
            package(Language::Go, "cmd/main.go").as_deref(),
            Some("go:cmd")
        );
        assert_eq!(package(Language::Python, "cmd/main.py"), None);
    }
}
