//! The definitions and imports of one source text, without a graph: what
//! `KnowledgeGraph::file_contents` would hold for it, were it the file at `path`.
//! For comparing two versions of a file (one from git, one on disk), neither of
//! which need be in a built graph.

use std::path::Path;

use super::extract::{Definition, Language};
use super::model::{line32, NodeKind};
use super::scan::{parse_file, shebang_language, symbols_of, SHEBANG_BYTES};
use crate::error::invalid;
use crate::Result;

/// A definition or import of an outlined source, as the graph's node for it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outlined {
    pub kind: NodeKind,
    /// A definition's name; an import's module as written.
    pub name: String,
    pub language: Language,
    /// 1-based, inclusive.
    pub line: u32,
    pub end_line: u32,
    /// A definition's first line; an import's statement.
    pub signature: String,
    /// The type or function the definition is in (a Go receiver's type, a Rust
    /// `impl`'s type, else the enclosing definition); "" at file level.
    pub scope: String,
    /// The names an import brings in (empty for other entries).
    pub items: Vec<String>,
}

/// The language the graph parses the file at `path` as: its extension's, else
/// (no extension) its `#!` line's; None for a file the graph does not parse.
pub fn language_of(path: &str, source: &[u8]) -> Option<Language> {
    let as_path = Path::new(path);
    if as_path.extension().is_some() {
        return Language::from_path(as_path);
    }
    let head = &source[..source.len().min(SHEBANG_BYTES as usize)];
    shebang_language(head).and_then(|found| found.ok())
}

/// The definitions and imports of `source`, read as the file at `path` (its
/// language as the graph decides it, `language_of`), in line order as
/// `file_contents` gives them (definitions before imports on one line). Empty for
/// a path the graph does not parse and for binary text (`binary_reason`); an
/// error for a source over `max_bytes`, as the graph skips such files. Within a
/// source the graph's per-file limits hold (`MAX_TREE_DEPTH`, `FILE_BUDGET`).
pub fn outline(path: &str, source: &[u8], max_bytes: u64) -> Result<Vec<Outlined>> {
    if source.len() as u64 > max_bytes {
        return Err(invalid(
            "source",
            format!(
                "{} bytes, over the limit of {max_bytes} bytes for one file",
                source.len()
            ),
        ));
    }
    let Some(language) = language_of(path, source) else {
        return Ok(Vec::new());
    };
    // `parse_file` picks C or C++ for a `.h` header; only its symbols are wanted.
    let symbols = if path.ends_with(".h") {
        parse_file(path, language, source).map(|parsed| parsed.symbols)
    } else {
        symbols_of(language, source)
    };
    let Ok(symbols) = symbols else {
        return Ok(Vec::new()); // binary
    };
    let containers = Definition::containers(&symbols.definitions);
    let scope = |d: &Definition, container: Option<usize>| -> String {
        match (&d.owner, container) {
            (Some(owner), _) => owner.to_string(),
            (None, Some(j)) => symbols.definitions[j].name.to_string(),
            (None, None) => String::new(),
        }
    };
    let mut out: Vec<Outlined> = symbols
        .definitions
        .iter()
        .zip(&containers)
        .map(|(d, &container)| Outlined {
            kind: NodeKind::of(d.kind),
            name: d.name.to_string(),
            language: symbols.language,
            line: d.line,
            end_line: d.end_line,
            signature: d.signature.to_string(),
            scope: scope(d, container),
            items: Vec::new(),
        })
        .collect();
    out.extend(symbols.imports.iter().map(|i| Outlined {
        kind: NodeKind::Import,
        name: i.module.clone(),
        language: symbols.language,
        line: line32(i.line),
        end_line: line32(i.line),
        signature: i.statement.clone(),
        scope: String::new(),
        items: i.items.clone(),
    }));
    // Stable: definitions keep their source order where lines tie.
    out.sort_by_key(|o| (o.line, o.end_line, o.kind == NodeKind::Import));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry's kind, name, lines, scope and items.
    type Brief<'a> = (&'static str, &'a str, u32, u32, &'a str, Vec<&'a str>);

    fn brief(found: &[Outlined]) -> Vec<Brief<'_>> {
        found
            .iter()
            .map(|o| {
                (
                    o.kind.name(),
                    o.name.as_str(),
                    o.line,
                    o.end_line,
                    o.scope.as_str(),
                    o.items.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn python_definitions_scopes_and_imports() {
        let source = b"\"\"\"Doc.\"\"\"\nimport os\nfrom a.b import c, d\n\nclass Box:\n    def open(self, x: int) -> None:\n        pass\n\n\ndef helper():\n    return 1\n";
        let found = outline("pkg/box.py", source, 1_000_000).unwrap();
        assert_eq!(
            brief(&found),
            vec![
                ("import", "os", 2, 2, "", vec![]),
                ("import", "a.b", 3, 3, "", vec!["c", "d"]),
                ("class", "Box", 5, 7, "", vec![]),
                ("function", "open", 6, 7, "Box", vec![]),
                ("function", "helper", 10, 11, "", vec![]),
            ]
        );
        assert_eq!(found[3].signature, "def open(self, x: int) -> None:");
        assert_eq!(found[1].signature, "from a.b import c, d");
        assert!(found.iter().all(|o| o.language == Language::Python));
    }

    #[test]
    fn rust_methods_take_their_impl_type_as_scope() {
        let source = b"use std::io::{Read, Write};\nstruct S;\nimpl S {\n    fn go(&self) {}\n}\n";
        let found = outline("src/s.rs", source, 1_000_000).unwrap();
        let go = found.iter().find(|o| o.name == "go").unwrap();
        assert_eq!(
            (go.kind, go.scope.as_str(), go.line),
            (NodeKind::Function, "S", 4)
        );
        let import = found.iter().find(|o| o.kind == NodeKind::Import).unwrap();
        assert_eq!(import.name, "std::io");
        assert_eq!(import.items, vec!["Read", "Write"]);
    }

    #[test]
    fn the_language_comes_from_the_extension_or_the_shebang() {
        let script = b"#!/usr/bin/env python3\ndef main():\n    pass\n";
        assert_eq!(language_of("bin/tool", script), Some(Language::Python));
        assert_eq!(outline("bin/tool", script, 1_000).unwrap().len(), 1);
        // An extension the graph does not parse: nothing, whatever the text.
        assert_eq!(language_of("notes.txt", script), None);
        assert!(outline("notes.txt", script, 1_000).unwrap().is_empty());
        assert!(outline("README", b"plain words\n", 1_000)
            .unwrap()
            .is_empty());
        // A header with C++ in it is read as C++.
        let header = b"namespace n {\nclass K {};\n}\n";
        let found = outline("k.h", header, 1_000).unwrap();
        assert_eq!(found[0].language, Language::Cpp);
    }

    #[test]
    fn binary_text_is_empty_and_oversized_text_an_error() {
        assert!(outline("a.py", b"def f():\0\n", 1_000).unwrap().is_empty());
        let err = outline("a.py", b"def f(): pass\n", 4).unwrap_err();
        assert!(
            err.to_string().contains("over the limit of 4 bytes"),
            "{err}"
        );
        assert!(outline("a.py", b"", 0).unwrap().is_empty());
        // Invalid UTF-8 in a name or a string is read, not refused.
        let found = outline("a.py", b"def f():\n    return '\xff\xfe'\n", 1_000).unwrap();
        assert_eq!(brief(&found), vec![("function", "f", 1, 2, "", vec![])]);
    }
}
