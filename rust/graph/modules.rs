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
        // Kotlin and Scala import Java classes and each other's (one JVM build).
        Language::Java | Language::Kotlin | Language::Scala => "java",
        Language::C | Language::Cpp => "c",
        Language::CSharp => "cs",
        Language::Ruby => "rb",
        Language::Php => "php",
        Language::Lua => "lua",
        Language::Bash => "sh",
        Language::Swift => "swift",
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
        Language::Lua if file == "init" => parent(path),
        _ => stem,
    }
}

fn suffixes(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path)
        .chain(path.match_indices('/').map(move |(i, _)| &path[i + 1..]))
        .filter(|s| !s.is_empty())
}

/// The key of a path from the root (`c:/src/x.h`), for includes and requires
/// relative to the including file, where any file ending so would be wrong.
fn exact(language: Language, path: &str) -> String {
    key(language, &format!("/{path}"))
}

/// A C# file's path with the dots of its folders as slashes (a folder
/// `Newtonsoft.Json/Linq` holds the namespace `Newtonsoft.Json.Linq`), in lower
/// case (the namespace `Python.Runtime` lives in `src/runtime`).
fn dotted_folders(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, file)) => format!("{}/{file}", dir.replace('.', "/")),
        None => path.to_string(),
    }
    .to_lowercase()
}

/// The keys a file answers to: every suffix of its module path (and, for Java
/// classes and JavaScript `index` files, of their folder too: a package or a folder import).
/// C and C++ files answer to their paths with the extension (`#include` names
/// the file), from the root and every suffix; a Ruby file to its path without
/// `.rb` from the root too (`require_relative`); a PHP file to both forms (`use` a
/// class, `include` a file); a C# file to its folder's suffixes too (a namespace).
pub fn keys(language: Language, path: &str) -> Vec<String> {
    match language {
        Language::C | Language::Cpp => {
            let mut out = vec![exact(language, path)];
            out.extend(suffixes(path).map(|s| key(language, s)));
            return out;
        }
        Language::Ruby => {
            let stem = strip_extension(path);
            let mut out = vec![exact(language, stem)];
            out.extend(suffixes(stem).map(|s| key(language, s)));
            return out;
        }
        Language::Php | Language::Bash => {
            let mut out = vec![exact(language, path)];
            out.extend(suffixes(path).map(|s| key(language, s)));
            out.extend(suffixes(strip_extension(path)).map(|s| key(language, s)));
            return out;
        }
        Language::Swift => {
            // `import M` names a module: the files under any folder named `M`.
            let mut out: Vec<String> = Vec::new();
            for folder in parent(path).split('/').filter(|f| !f.is_empty()) {
                let k = key(language, folder);
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            return out;
        }
        Language::CSharp => {
            let path = dotted_folders(path);
            let module = strip_extension(&path);
            let mut out: Vec<String> = suffixes(module).map(|s| key(language, s)).collect();
            out.extend(suffixes(parent(module)).map(|s| key(language, s)));
            return out;
        }
        _ => {}
    }
    let module = module_path(language, path);
    let mut out: Vec<String> = suffixes(module).map(|s| key(language, s)).collect();
    let folder_too = match language {
        Language::Java | Language::Kotlin | Language::Scala => true,
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

/// A path with its leading `./` and `../` removed: what a file ending so is named.
fn below(path: &str) -> String {
    let mut rest = path;
    while let Some(r) = rest.strip_prefix("./").or_else(|| rest.strip_prefix("../")) {
        rest = r;
    }
    rest.to_string()
}

/// `path` from `dir` (from the root: `/dir/path`), then `path` as a suffix, then
/// its last parts (two at least).
fn relative_then_suffix(dir: &str, path: &str) -> Vec<String> {
    let mut out: Vec<String> = normalize(&join(dir, path))
        .filter(|p| !p.is_empty())
        .map(|p| format!("/{p}"))
        .into_iter()
        .collect();
    out.extend(namespace_suffixes(&below(path)));
    out.retain(|p| !p.is_empty() && p != "/");
    out
}

/// A namespace's (or include path's) trailing parts, longest first, down to two
/// (one if that is all): `App/Models/User`, `Models/User`. A namespace's root
/// (`App`) is rarely a folder (`app/`, `src/`); a single last part alone would find
/// any file of that name (`<linux/types.h>` is not `types.h`).
fn namespace_suffixes(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let shortest = parts.len().min(2);
    (0..(parts.len() + 1).saturating_sub(shortest.max(1)))
        .map(|i| parts[i..].join("/"))
        .collect()
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
        Language::Kotlin | Language::Scala => {
            // As Java's, then the class's and the package's last parts (two at
            // least): Kotlin's sources often leave out the common root package
            // (`org.example.net.Api` in `net/Api.kt`).
            let path = import.module.replace('.', "/");
            let package = parent(&path).to_string();
            let mut out = vec![path.clone()];
            if !package.is_empty() {
                out.push(package.clone());
            }
            for suffix in namespace_suffixes(&path)
                .into_iter()
                .skip(1)
                .chain(namespace_suffixes(&package).into_iter().skip(1))
            {
                if !out.contains(&suffix) {
                    out.push(suffix);
                }
            }
            (out, Match::First)
        }
        Language::Swift => {
            // `import M`, `import struct M.T`: the module, the first name.
            let module = import.module.split('.').next().unwrap_or_default().trim();
            (
                vec![module.to_string()]
                    .into_iter()
                    .filter(|m| !m.is_empty())
                    .collect(),
                Match::First,
            )
        }
        Language::Go => (
            suffixes(&import.module).map(str::to_string).collect(),
            Match::First,
        ),
        Language::C | Language::Cpp => {
            let module = import.module.as_str();
            match module.strip_prefix('<').and_then(|m| m.strip_suffix('>')) {
                // `<x.h>`: a file of the project only if one ends so (or ends with
                // its last parts, two at least: `<boost/asio/ip.hpp>` in a tree
                // rooted at `asio/`).
                Some(system) => (namespace_suffixes(&below(system)), Match::First),
                // `"x.h"`: beside the including file first, then by suffix.
                None => (relative_then_suffix(dir, module), Match::First),
            }
        }
        Language::Ruby => {
            let module = import.module.strip_suffix(".rb").unwrap_or(&import.module);
            if module.starts_with("./") || module.starts_with("../") {
                let target = normalize(&join(dir, module));
                let paths = target.map(|t| format!("/{t}")).into_iter().collect();
                (paths, Match::First)
            } else {
                (vec![below(module)], Match::First)
            }
        }
        Language::Php if import.module.contains('/') || import.module.ends_with(".php") => {
            // `include "x.php"`, `require __DIR__ . "/x.php"`: a file beside the
            // including one first, then any file ending so.
            let module = import.module.trim_start_matches('/');
            (relative_then_suffix(dir, module), Match::First)
        }
        Language::Php => {
            let module = import.module.trim_start_matches('\\').replace('\\', "/");
            if import.items.is_empty() {
                (namespace_suffixes(&module), Match::First)
            } else {
                let paths = import
                    .items
                    .iter()
                    .flat_map(|item| namespace_suffixes(&join(&module, &item.replace('\\', "/"))))
                    .collect();
                (paths, Match::All)
            }
        }
        Language::Lua => (vec![import.module.replace('.', "/")], Match::First),
        Language::Bash => {
            // `source "$DIR/x.sh"`: what follows the variable, beside the file first.
            let module = import.module.trim_matches(|c| c == '"' || c == '\'');
            let module = match module.strip_prefix('$') {
                Some(rest) => rest.split_once('/').map_or("", |(_, path)| path),
                None => module,
            };
            if module.is_empty() || module.contains('$') {
                (vec![], Match::First)
            } else {
                (relative_then_suffix(dir, module), Match::First)
            }
        }
        Language::CSharp => (
            namespace_suffixes(&import.module.replace('.', "/").to_lowercase()),
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

/// The keys a Kotlin or Scala file answers to by the package it declares (`package
/// a.b` in `X.kt`: `a/b` and `a/b/X`), wherever its folder is; none for other
/// languages.
pub fn declared_keys(language: Language, path: &str, declared: Option<&str>) -> Vec<String> {
    match (language, declared) {
        (Language::Kotlin | Language::Scala, Some(package)) if !package.is_empty() => {
            let package = package.replace('.', "/");
            let stem = strip_extension(path);
            let file = stem.rsplit('/').next().unwrap_or(stem);
            vec![
                key(language, &package),
                key(language, &join(&package, file)),
            ]
        }
        _ => vec![],
    }
}

/// A file's package as a key: the package a Kotlin or Scala file declares, else
/// `package`'s folder.
pub fn package_of(language: Language, path: &str, declared: Option<&str>) -> Option<String> {
    match declared_keys(language, path, declared).into_iter().next() {
        Some(package) => Some(package),
        None => package(language, path),
    }
}

/// Folder of a file's package, as a key, for Go, Java and C# (whose files see their
/// package's definitions without an import); None for other languages.
pub fn package(language: Language, path: &str) -> Option<String> {
    match language {
        Language::Go | Language::Java | Language::Kotlin | Language::Scala => {
            Some(key(language, parent(path)))
        }
        // A Swift module's files see each other: the folder after `Sources` or
        // `Tests` (a Swift package's target), else the top folder (an Xcode target).
        Language::Swift => {
            let folders: Vec<&str> = parent(path).split('/').filter(|f| !f.is_empty()).collect();
            let target = folders
                .iter()
                .rposition(|f| matches!(*f, "Sources" | "Tests"))
                .and_then(|i| folders.get(i + 1))
                .or(folders.first());
            target.map(|t| key(language, t))
        }
        // A namespace's files, as `keys` names C# folders.
        Language::CSharp => Some(key(language, parent(&dotted_folders(path)))),
        _ => None,
    }
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

    #[test]
    fn includes_requires_and_namespaces() {
        let l = |lang, importer, i: Import| lookups(lang, importer, &i);
        assert_eq!(
            keys(Language::C, "src/util/list.h"),
            [
                "c:/src/util/list.h",
                "c:src/util/list.h",
                "c:util/list.h",
                "c:list.h"
            ]
        );
        assert_eq!(keys(Language::Cpp, "a.hpp"), ["c:/a.hpp", "c:a.hpp"]);
        // Quoted: beside the includer (from the root), then any file ending so.
        assert_eq!(
            l(Language::C, "src/main.c", import("util/list.h", &[])),
            (
                vec!["c:/src/util/list.h".into(), "c:util/list.h".into()],
                Match::First
            )
        );
        assert_eq!(
            l(Language::Cpp, "src/a/b.cpp", import("../inc/x.h", &[])).0,
            ["c:/src/inc/x.h", "c:inc/x.h"]
        );
        assert_eq!(
            l(
                Language::Cpp,
                "ip/tcp.hpp",
                import("<boost/asio/ip/tcp.hpp>", &[])
            )
            .0,
            [
                "c:boost/asio/ip/tcp.hpp",
                "c:asio/ip/tcp.hpp",
                "c:ip/tcp.hpp"
            ]
        );
        assert_eq!(
            l(Language::C, "a.c", import("<stdio.h>", &[])).0,
            ["c:stdio.h"]
        );
        // System: only a file of the project ending so.
        assert_eq!(
            l(Language::C, "src/main.c", import("<linux/list.h>", &[])).0,
            ["c:linux/list.h"]
        );
        assert_eq!(
            keys(Language::Ruby, "lib/shop/cart.rb"),
            [
                "rb:/lib/shop/cart",
                "rb:lib/shop/cart",
                "rb:shop/cart",
                "rb:cart"
            ]
        );
        assert_eq!(
            l(Language::Ruby, "lib/shop.rb", import("./shop/cart", &[])).0,
            ["rb:/lib/shop/cart"]
        );
        assert_eq!(
            l(Language::Ruby, "lib/a/b.rb", import("../c.rb", &[])).0,
            ["rb:/lib/c"]
        );
        assert_eq!(
            l(Language::Ruby, "bin/run.rb", import("shop/cart", &[])).0,
            ["rb:shop/cart"]
        );
        assert_eq!(
            keys(Language::Php, "src/Models/User.php"),
            [
                "php:/src/Models/User.php",
                "php:src/Models/User.php",
                "php:Models/User.php",
                "php:User.php",
                "php:src/Models/User",
                "php:Models/User",
                "php:User"
            ]
        );
        assert_eq!(
            l(
                Language::Php,
                "src/Http/A.php",
                import("App\\Models\\User", &[])
            ),
            (
                vec!["php:App/Models/User".into(), "php:Models/User".into()],
                Match::First
            )
        );
        assert_eq!(
            l(
                Language::Php,
                "src/Http/A.php",
                import("App\\Support", &["Str", "Arr"])
            ),
            (
                vec![
                    "php:App/Support/Str".into(),
                    "php:Support/Str".into(),
                    "php:App/Support/Arr".into(),
                    "php:Support/Arr".into()
                ],
                Match::All
            )
        );
        assert_eq!(
            l(
                Language::Php,
                "src/Http/A.php",
                import("/../helpers.php", &[])
            )
            .0,
            ["php:/src/helpers.php", "php:helpers.php"]
        );
        assert_eq!(
            keys(Language::CSharp, "src/Newtonsoft.Json/Linq/JToken.cs"),
            [
                "cs:src/newtonsoft/json/linq/jtoken",
                "cs:newtonsoft/json/linq/jtoken",
                "cs:json/linq/jtoken",
                "cs:linq/jtoken",
                "cs:jtoken",
                "cs:src/newtonsoft/json/linq",
                "cs:newtonsoft/json/linq",
                "cs:json/linq",
                "cs:linq"
            ]
        );
        // `using System.Linq` does not find a project's own `Linq` folder.
        assert_eq!(
            l(Language::CSharp, "a.cs", import("System.Linq", &[])).0,
            ["cs:system/linq"]
        );
        assert_eq!(
            l(
                Language::CSharp,
                "a.cs",
                import("Newtonsoft.Json.Linq", &[])
            )
            .0,
            ["cs:newtonsoft/json/linq", "cs:json/linq"]
        );
        assert_eq!(
            package(Language::CSharp, "src/Shop.Web/A.cs").as_deref(),
            Some("cs:src/shop/web")
        );
        assert_eq!(package(Language::C, "src/a.c"), None);
        assert_eq!(
            keys(Language::Lua, "game/board/init.lua"),
            ["lua:game/board", "lua:board"]
        );
        assert_eq!(
            l(Language::Lua, "main.lua", import("game.board", &[])).0,
            ["lua:game/board"]
        );
        assert_eq!(
            l(
                Language::Bash,
                "bin/run.sh",
                import("\"$(dirname \"$0\")/../lib/x.sh\"", &[])
            )
            .0,
            ["sh:/lib/x.sh", "sh:lib/x.sh"]
        );
        assert_eq!(
            l(Language::Bash, "run.sh", import("$HOME/.rc", &[])).0,
            ["sh:/.rc", "sh:.rc"]
        );
        assert!(l(Language::Bash, "run.sh", import("$RC", &[])).0.is_empty());
        // Kotlin and Scala: as Java (one family: they import each other's classes),
        // then the last parts of the class and of the package.
        assert_eq!(
            l(Language::Kotlin, "a.kt", import("org.example.net.Api", &[])),
            (
                vec![
                    "java:org/example/net/Api".to_string(),
                    "java:org/example/net".into(),
                    "java:example/net/Api".into(),
                    "java:net/Api".into(),
                    "java:example/net".into()
                ],
                Match::First
            )
        );
        assert_eq!(
            l(Language::Scala, "a.scala", import("scala.util", &[])).0,
            ["java:scala/util", "java:scala"]
        );
        assert_eq!(
            keys(Language::Kotlin, "src/net/Api.kt"),
            keys(Language::Java, "src/net/Api.java")
        );
        assert_eq!(
            package(Language::Scala, "src/net/Api.scala").as_deref(),
            Some("java:src/net")
        );
        // Swift: a module is a folder's name; a file's own module is the folder
        // after `Sources` or `Tests`, else its top folder.
        assert_eq!(
            keys(Language::Swift, "Sources/Shop/Models/Cart.swift"),
            ["swift:Sources", "swift:Shop", "swift:Models"]
        );
        assert!(keys(Language::Swift, "main.swift").is_empty());
        assert_eq!(
            l(Language::Swift, "a.swift", import("Shop.Cart", &[])).0,
            ["swift:Shop"]
        );
        assert_eq!(
            package(Language::Swift, "Sources/Shop/Models/Cart.swift").as_deref(),
            Some("swift:Shop")
        );
        assert_eq!(
            package(Language::Swift, "App/Views/Home.swift").as_deref(),
            Some("swift:App")
        );
        assert_eq!(package(Language::Swift, "main.swift"), None);
        // A declared package answers wherever the file is.
        assert_eq!(
            declared_keys(
                Language::Kotlin,
                "core/src/Channel.kt",
                Some("kotlinx.coroutines")
            ),
            ["java:kotlinx/coroutines", "java:kotlinx/coroutines/Channel"]
        );
        assert!(declared_keys(Language::Kotlin, "a/B.kt", None).is_empty());
        assert!(declared_keys(Language::Java, "a/B.java", Some("a")).is_empty());
        assert_eq!(
            package_of(Language::Scala, "src/X.scala", Some("a.b")).as_deref(),
            Some("java:a/b")
        );
        assert_eq!(
            package_of(Language::Scala, "src/X.scala", None).as_deref(),
            Some("java:src")
        );
    }
}
