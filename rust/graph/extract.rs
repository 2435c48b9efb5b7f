//! Per-file extraction with tree-sitter: definitions and call sites, from each
//! grammar's own tags query (the queries GitHub's code navigation uses).

use std::path::Path;
use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Parser, Query, QueryCursor};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Language {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
}

impl Language {
    pub const ALL: [Language; 7] =
        [Language::Python, Language::Rust, Language::JavaScript, Language::TypeScript, Language::Tsx, Language::Go, Language::Java];

    pub fn from_path(path: &Path) -> Option<Language> {
        Some(match path.extension()?.to_str()? {
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    fn tags_query(self) -> String {
        match self {
            Language::Python => tree_sitter_python::TAGS_QUERY.to_string(),
            Language::Rust => tree_sitter_rust::TAGS_QUERY.to_string(),
            Language::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_string(),
            // TypeScript's tags only cover what it adds to JavaScript.
            Language::TypeScript | Language::Tsx => {
                format!("{}\n{}", tree_sitter_javascript::TAGS_QUERY, tree_sitter_typescript::TAGS_QUERY)
            }
            Language::Go => tree_sitter_go::TAGS_QUERY.to_string(),
            Language::Java => tree_sitter_java::TAGS_QUERY.to_string(),
        }
    }

    /// The compiled tags query, built once per language and shared by all threads.
    fn query(self) -> &'static Query {
        static QUERIES: OnceLock<Vec<Query>> = OnceLock::new();
        let all = QUERIES.get_or_init(|| {
            Language::ALL
                .iter()
                .map(|l| Query::new(&l.grammar(), &l.tags_query()).expect("the grammars' own tags queries compile"))
                .collect()
        });
        &all[Language::ALL.iter().position(|l| *l == self).expect("every language is in ALL")]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum DefKind {
    /// Functions, methods, macros.
    Function,
    /// Classes, interfaces, structs, enums, traits, type declarations.
    Class,
    /// Module-level constants and variables.
    Variable,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    pub kind: DefKind,
    pub name: String,
    /// First line of the definition, trimmed (at most 200 characters).
    pub signature: String,
    /// 1-based, inclusive.
    pub line: usize,
    pub end_line: usize,
    start_byte: usize,
    end_byte: usize,
}

impl Definition {
    pub fn contains(&self, other: &Definition) -> bool {
        self.start_byte <= other.start_byte && other.end_byte <= self.end_byte && self != other
    }

    fn contains_byte(&self, byte: usize) -> bool {
        self.start_byte <= byte && byte < self.end_byte
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallSite {
    pub name: String,
    pub line: usize,
    /// Index into `FileSymbols::definitions` of the innermost enclosing function, or
    /// None at file level.
    pub caller: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSymbols {
    pub language: Language,
    /// In source order.
    pub definitions: Vec<Definition>,
    pub calls: Vec<CallSite>,
    /// Set when the source did not parse cleanly: what was extracted is kept.
    pub syntax_errors: bool,
}

fn def_kind(capture: &str) -> Option<DefKind> {
    let kind = capture.strip_prefix("definition.")?;
    Some(match kind {
        "function" | "method" | "macro" => DefKind::Function,
        "class" | "interface" | "type" | "struct" | "enum" | "trait" => DefKind::Class,
        "constant" | "variable" => DefKind::Variable,
        _ => return None, // modules and others are not nodes of the graph
    })
}

/// Extracts definitions and call sites from one file's bytes. Invalid UTF-8 is read
/// lossily; a file that does not parse cleanly yields what tree-sitter recovered.
pub fn extract(language: Language, source: &[u8]) -> FileSymbols {
    let mut parser = Parser::new();
    parser.set_language(&language.grammar()).expect("grammar versions match the tree-sitter crate");
    let Some(tree) = parser.parse(source, None) else {
        return FileSymbols { language, definitions: vec![], calls: vec![], syntax_errors: true };
    };
    let query = language.query();
    let names = query.capture_names();
    let name_index = names.iter().position(|n| *n == "name");
    let mut cursor = QueryCursor::new();
    let mut definitions: Vec<Definition> = Vec::new();
    let mut calls: Vec<(String, usize, usize)> = Vec::new(); // name, line, byte
    let mut matches = cursor.matches(query, tree.root_node(), source);
    while let Some(m) = matches.next() {
        let Some(name_node) = m.captures().iter().find(|c| Some(c.index as usize) == name_index).map(|c| c.node) else {
            continue;
        };
        let name = String::from_utf8_lossy(&source[name_node.byte_range()]).into_owned();
        for capture in m.captures() {
            let capture_name = names[capture.index as usize];
            let node = capture.node;
            if let Some(kind) = def_kind(capture_name) {
                let text = &source[node.byte_range()];
                let first = String::from_utf8_lossy(text.split(|b| *b == b'\n').next().unwrap_or_default());
                let signature: String = first.trim().chars().take(200).collect();
                let def = Definition {
                    kind,
                    name: name.clone(),
                    signature,
                    line: node.start_position().row + 1,
                    end_line: node.end_position().row + 1,
                    start_byte: node.start_byte(),
                    end_byte: node.end_byte(),
                };
                // The JavaScript and TypeScript queries can both match one node.
                if !definitions.iter().any(|d| d.start_byte == def.start_byte && d.name == def.name) {
                    definitions.push(def);
                }
            } else if capture_name == "reference.call" {
                calls.push((name.clone(), node.start_position().row + 1, name_node.start_byte()));
            }
        }
    }
    definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
    calls.sort_by_key(|c| c.2);
    calls.dedup();
    let calls = calls
        .into_iter()
        .map(|(name, line, byte)| {
            // Innermost enclosing function: the last one in source order that contains it.
            let caller = definitions.iter().rposition(|d| d.kind == DefKind::Function && d.contains_byte(byte));
            CallSite { name, line, caller }
        })
        .collect();
    FileSymbols { language, definitions, calls, syntax_errors: tree.root_node().has_error() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(symbols: &FileSymbols) -> Vec<(DefKind, &str, usize)> {
        symbols.definitions.iter().map(|d| (d.kind, d.name.as_str(), d.line)).collect()
    }

    #[test]
    fn every_language_query_compiles() {
        for l in Language::ALL {
            let _ = l.query();
        }
    }

    #[test]
    fn python_definitions_and_calls() {
        let src = b"LIMIT = 3\n\nclass Repo(Base):\n    def load(self, key):\n        return fetch(key)\n\ndef fetch(key):\n    return helper(key).strip()\n\nmain()\n";
        let s = extract(Language::Python, src);
        assert_eq!(
            summary(&s),
            vec![(DefKind::Variable, "LIMIT", 1), (DefKind::Class, "Repo", 3), (DefKind::Function, "load", 4), (DefKind::Function, "fetch", 7)]
        );
        assert_eq!(s.definitions[2].signature, "def load(self, key):");
        assert!(s.definitions[1].contains(&s.definitions[2]));
        let calls: Vec<_> = s.calls.iter().map(|c| (c.name.as_str(), c.line, c.caller)).collect();
        assert_eq!(calls, vec![("fetch", 5, Some(2)), ("helper", 8, Some(3)), ("strip", 8, Some(3)), ("main", 10, None)]);
        assert!(!s.syntax_errors);
    }

    #[test]
    fn other_languages() {
        let rust = extract(Language::Rust, b"struct S;\nimpl S {\n    fn go(&self) { helper(); }\n}\nfn helper() {}\n");
        assert_eq!(summary(&rust), vec![(DefKind::Class, "S", 1), (DefKind::Function, "go", 3), (DefKind::Function, "helper", 5)]);
        assert_eq!(rust.calls, vec![CallSite { name: "helper".into(), line: 3, caller: Some(1) }]);

        let go = extract(Language::Go, b"package p\n\ntype T struct{}\n\nfunc (t T) Run() { Helper() }\n\nfunc Helper() {}\n");
        assert_eq!(summary(&go), vec![(DefKind::Class, "T", 3), (DefKind::Function, "Run", 5), (DefKind::Function, "Helper", 7)]);
        assert_eq!(go.calls.len(), 1);

        let java = extract(Language::Java, b"class A {\n  void run() { helper(); }\n  void helper() {}\n}\n");
        assert_eq!(summary(&java), vec![(DefKind::Class, "A", 1), (DefKind::Function, "run", 2), (DefKind::Function, "helper", 3)]);
        assert_eq!(java.calls[0].caller, Some(1));

        let js = extract(Language::JavaScript, b"class A {\n  run() { helper(); }\n}\nfunction helper() {}\n");
        assert_eq!(summary(&js), vec![(DefKind::Class, "A", 1), (DefKind::Function, "run", 2), (DefKind::Function, "helper", 4)]);

        let ts = extract(Language::TypeScript, b"interface I { x: number }\nclass A implements I {\n  run(): void { helper(); }\n}\nfunction helper(): void {}\n");
        assert_eq!(
            summary(&ts),
            vec![(DefKind::Class, "I", 1), (DefKind::Class, "A", 2), (DefKind::Function, "run", 3), (DefKind::Function, "helper", 5)]
        );
        let tsx = extract(Language::Tsx, b"function App() { return <div>{render()}</div>; }\n");
        assert_eq!(summary(&tsx), vec![(DefKind::Function, "App", 1)]);
        assert_eq!(tsx.calls[0].name, "render");
    }

    #[test]
    fn broken_and_binary_input_does_not_panic() {
        let s = extract(Language::Python, b"def ok():\n    pass\n\ndef broken(:\n");
        assert!(s.syntax_errors);
        assert_eq!(s.definitions[0].name, "ok");
        let junk: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for l in Language::ALL {
            let _ = extract(l, &junk);
        }
        let latin1 = extract(Language::Python, b"def caf\xe9():\n    pass\n");
        assert_eq!(latin1.definitions.len(), 1);
    }
}
