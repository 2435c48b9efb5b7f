//! The languages: which files are each one's, its grammar, and its compiled query:
//! the grammar's own tags query (less `DROPPED_TAGS`), then ours from
//! `queries/<language>.scm`, then a pattern for every identifier.

use std::path::Path;
use std::sync::OnceLock;

use tree_sitter::Query;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Language {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Lua,
    Bash,
    Kotlin,
    Swift,
    Scala,
}

impl Language {
    pub const ALL: [Language; 17] = [
        Language::Python,
        Language::Rust,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Lua,
        Language::Bash,
        Language::Kotlin,
        Language::Swift,
        Language::Scala,
    ];

    pub fn from_path(path: &Path) -> Option<Language> {
        Some(match path.extension()?.to_str()? {
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            // A header is C's unless its extension says C++.
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" => {
                Language::Cpp
            }
            "cs" => Language::CSharp,
            "rb" | "rake" => Language::Ruby,
            "php" => Language::Php,
            "lua" => Language::Lua,
            "sh" | "bash" => Language::Bash,
            "kt" | "kts" => Language::Kotlin,
            "swift" => Language::Swift,
            "scala" | "sc" => Language::Scala,
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
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Lua => "lua",
            Language::Bash => "bash",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Scala => "scala",
        }
    }

    /// The language's name as people write it ("Python", "TypeScript", "TSX").
    pub fn display_name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Rust => "Rust",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::C => "C",
            Language::Cpp => "C++",
            Language::CSharp => "C#",
            Language::Ruby => "Ruby",
            Language::Php => "PHP",
            Language::Lua => "Lua",
            Language::Bash => "Bash",
            Language::Kotlin => "Kotlin",
            Language::Swift => "Swift",
            Language::Scala => "Scala",
        }
    }

    pub(super) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Language::Lua => tree_sitter_lua::LANGUAGE.into(),
            Language::Bash => tree_sitter_bash::LANGUAGE.into(),
            Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Language::Swift => tree_sitter_swift::LANGUAGE.into(),
            Language::Scala => tree_sitter_scala::LANGUAGE.into(),
        }
    }

    pub(super) fn tags_query(self) -> String {
        let tags = match self {
            Language::Python => tree_sitter_python::TAGS_QUERY.to_string(),
            Language::Rust => tree_sitter_rust::TAGS_QUERY.to_string(),
            Language::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_string(),
            // TypeScript's tags only cover what it adds to JavaScript.
            Language::TypeScript | Language::Tsx => {
                format!(
                    "{}\n{}",
                    tree_sitter_javascript::TAGS_QUERY,
                    tree_sitter_typescript::TAGS_QUERY
                )
            }
            Language::Go => tree_sitter_go::TAGS_QUERY.to_string(),
            Language::Java => tree_sitter_java::TAGS_QUERY.to_string(),
            Language::C | Language::Cpp => String::new(),
            Language::CSharp => tree_sitter_c_sharp::TAGS_QUERY.to_string(),
            Language::Ruby => tree_sitter_ruby::TAGS_QUERY.to_string(),
            Language::Php => tree_sitter_php::TAGS_QUERY.to_string(),
            Language::Lua => tree_sitter_lua::TAGS_QUERY.to_string(),
            // The crate has no tags query: ours only.
            Language::Bash => String::new(),
            // Kotlin's crate has no tags query, Scala's does not export its file (ours
            // follow it: see queries/scala.scm).
            Language::Kotlin | Language::Scala => String::new(),
            Language::Swift => tree_sitter_swift::TAGS_QUERY.to_string(),
        };
        let tags = DROPPED_TAGS
            .iter()
            .filter(|(l, _)| *l == self)
            .fold(tags, |tags, (_, pattern)| tags.replace(pattern, ""));
        // Every identifier, for `uses` (cheaper in this pass than in a walk of its own).
        let names = match self {
            Language::Ruby => "[(identifier) (constant)]",
            Language::Php => "(name)",
            Language::Bash => "(variable_name)",
            Language::Swift => "(simple_identifier)",
            _ => "(identifier)",
        };
        format!("{tags}\n{}\n{names} @use\n", self.structure_query())
    }

    /// Our own patterns, from `queries/<language>.scm` (JavaScript's and TypeScript's
    /// after ecmascript.scm, C++'s after c.scm). Captures: `@import` (the statement)
    /// with `@import.module` and `@import.item`, or `@import.submodule` (Rust's `mod
    /// x;`); `@inherit` (a base class, implemented interface, embedded struct or
    /// supertrait, inside the class that names it); `@ref` (a type annotation); and
    /// variable definitions in the tags form (`@name` inside `@definition.variable`).
    pub(super) fn structure_query(self) -> &'static str {
        match self {
            Language::Python => include_str!("../queries/python.scm"),
            Language::Rust => include_str!("../queries/rust.scm"),
            Language::JavaScript => concat!(
                include_str!("../queries/ecmascript.scm"),
                include_str!("../queries/javascript.scm")
            ),
            Language::TypeScript | Language::Tsx => concat!(
                include_str!("../queries/ecmascript.scm"),
                include_str!("../queries/typescript.scm")
            ),
            Language::Go => include_str!("../queries/go.scm"),
            Language::Java => include_str!("../queries/java.scm"),
            Language::C => include_str!("../queries/c.scm"),
            Language::Cpp => concat!(
                include_str!("../queries/c.scm"),
                include_str!("../queries/cpp.scm")
            ),
            Language::CSharp => include_str!("../queries/csharp.scm"),
            Language::Ruby => include_str!("../queries/ruby.scm"),
            Language::Php => include_str!("../queries/php.scm"),
            Language::Lua => include_str!("../queries/lua.scm"),
            Language::Bash => include_str!("../queries/bash.scm"),
            Language::Kotlin => include_str!("../queries/kotlin.scm"),
            Language::Swift => include_str!("../queries/swift.scm"),
            Language::Scala => include_str!("../queries/scala.scm"),
        }
    }

    /// The compiled query (tags and structure), built the first time a file of the
    /// language is parsed and shared by all threads.
    pub(super) fn query(self) -> &'static Query {
        static QUERIES: [OnceLock<Query>; Language::ALL.len()] =
            [const { OnceLock::new() }; Language::ALL.len()];
        let index = Language::ALL
            .iter()
            .position(|l| *l == self)
            .expect("every language is in ALL");
        use_mimalloc();
        QUERIES[index].get_or_init(|| {
            Query::new(&self.grammar(), &self.tags_query())
                .expect("the tags and structure queries compile")
        })
    }
}

impl Language {
    /// The ids of the fields that hold the object of a call in this grammar, in the
    /// order `receiver` tries them (the names the grammar lacks left out: no node
    /// has them). Looked up once per language: a lookup by name scans all the
    /// grammar's field names, and every call asks.
    pub(super) fn receiver_fields(self) -> &'static [u16] {
        static FIELDS: [OnceLock<Vec<u16>>; Language::ALL.len()] =
            [const { OnceLock::new() }; Language::ALL.len()];
        let index = Language::ALL
            .iter()
            .position(|l| *l == self)
            .expect("every language is in ALL");
        FIELDS[index].get_or_init(|| {
            let names: &[&str] = match self {
                Language::C | Language::Cpp => &["argument", "scope"],
                Language::CSharp => &["expression"],
                Language::Ruby => &["receiver"],
                Language::Php => &["object", "scope"],
                Language::Lua => &["table"],
                _ => &["object", "operand", "value", "path"],
            };
            let grammar = self.grammar();
            names
                .iter()
                .filter_map(|name| grammar.field_id_for_name(name))
                .map(|id| id.get())
                .collect()
        })
    }
}

/// Patterns of a grammar's tags query left out, with why (see the heads of
/// queries/ruby.scm, csharp.scm and php.scm); a test checks each is still in the
/// crate's query.
pub(super) const DROPPED_TAGS: &[(Language, &str)] = &[
    (
        Language::Ruby,
        r#"(
  [(identifier) (constant)] @name @reference.call
  (#is-not? local)
  (#not-match? @name "^(lambda|load|require|require_relative|__FILE__|__LINE__)$")
)"#,
    ),
    (
        Language::CSharp,
        "(class_declaration (base_list (_) @name)) @reference.class",
    ),
    (
        Language::CSharp,
        "(interface_declaration (base_list (_) @name)) @reference.interface",
    ),
    (
        Language::Php,
        "(class_interface_clause [(name) (qualified_name)] @name) @reference.implementation",
    ),
    (Language::Php, "    (variable_name (name)) @name\n"),
    // Swift's methods, initializers and properties of a class or protocol: their
    // definition node is the whole class (every method would span it); ours name
    // them by their own node. Its pattern for every `property_declaration` makes
    // locals definitions.
    (
        Language::Swift,
        "(class_declaration\n    (class_body\n        [\n            (function_declaration\n                name: (simple_identifier) @name\n            )\n            (subscript_declaration\n                (parameter (simple_identifier) @name)\n            )\n            (init_declaration \"init\" @name)\n            (deinit_declaration \"deinit\" @name)\n        ]\n    )\n) @definition.method",
    ),
    (
        Language::Swift,
        "(protocol_declaration\n    (protocol_body\n        [\n            (protocol_function_declaration\n                name: (simple_identifier) @name\n            )\n            (subscript_declaration\n                (parameter (simple_identifier) @name)\n            )\n            (init_declaration \"init\" @name)\n        ]\n    )\n) @definition.method",
    ),
    (
        Language::Swift,
        "(class_declaration\n    (class_body\n        [\n            (property_declaration\n                (pattern (simple_identifier) @name)\n            )\n        ]\n    )\n) @definition.property",
    ),
    (
        Language::Swift,
        "(property_declaration\n    (pattern (simple_identifier) @name)\n) @definition.property",
    ),
];

/// Sends tree-sitter's C allocations to mimalloc, once, before the first parser or
/// query exists. Parsing allocates and frees a node per token, and with glibc's
/// malloc threads parsing at once each cost more CPU than one alone.
pub(super) fn use_mimalloc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use libmimalloc_sys as mi;
        let allocator = tree_sitter::Allocator {
            malloc: mi::mi_malloc,
            calloc: mi::mi_calloc,
            realloc: mi::mi_realloc,
            free: mi::mi_free,
        };
        // SAFETY: the four functions are one allocator family returning malloc-aligned
        // memory (null only when out of memory, as malloc); this runs once, before
        // this crate creates any tree-sitter object (`parse_tree` and `Language::query`,
        // the only places that make them, call this first).
        unsafe { tree_sitter::set_allocator(Some(allocator)) };
    });
}
