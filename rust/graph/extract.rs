//! Per-file extraction with tree-sitter: definitions, imports and references (calls,
//! base classes, type references, uses of module-level variables). Definitions and
//! calls come from each grammar's own tags query (the queries GitHub's code
//! navigation uses); imports, inheritance and variables from our own queries
//! (`STRUCTURE`), run in the same pass.

use std::path::Path;
use std::sync::OnceLock;

use foldhash::{HashMap, HashSet};

use streaming_iterator::StreamingIterator;
use tree_sitter::{Parser, Query, QueryCursor};

use super::model::line32;

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

    fn grammar(self) -> tree_sitter::Language {
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

    fn tags_query(self) -> String {
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
            // follow it: see `SCALA`).
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

    /// Our own patterns. Captures: `@import` (the statement) with `@import.module` and
    /// `@import.item`, or `@import.submodule` (Rust's `mod x;`); `@inherit` (a base
    /// class, implemented interface, embedded struct or supertrait, inside the class
    /// that names it); `@ref` (a type annotation); and variable definitions in the tags
    /// form (`@name` inside `@definition.variable`).
    fn structure_query(self) -> &'static str {
        match self {
            Language::Python => PYTHON,
            Language::Rust => RUST,
            Language::JavaScript => JAVASCRIPT,
            Language::TypeScript | Language::Tsx => TYPESCRIPT,
            Language::Go => GO,
            Language::Java => JAVA,
            Language::C => C,
            Language::Cpp => CPP,
            Language::CSharp => CSHARP,
            Language::Ruby => RUBY,
            Language::Php => PHP,
            Language::Lua => LUA,
            Language::Bash => BASH,
            Language::Kotlin => KOTLIN,
            Language::Swift => SWIFT,
            Language::Scala => SCALA,
        }
    }

    /// The compiled query (tags and structure), built the first time a file of the
    /// language is parsed and shared by all threads.
    fn query(self) -> &'static Query {
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

const PYTHON: &str = r#"
(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import
(import_from_statement module_name: (_) @import.module) @import
(import_from_statement name: (dotted_name) @import.item) @import
(import_from_statement name: (aliased_import name: (dotted_name) @import.item alias: (identifier) @import.item_alias)) @import
(class_definition superclasses: (argument_list [(identifier) @inherit (attribute attribute: (identifier) @inherit)]))
(type (identifier) @ref)
(type (generic_type (identifier) @ref))
(assignment left: (identifier) @bind.name right: (call function: [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(assignment left: (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(typed_parameter (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(typed_default_parameter name: (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
((assignment left: (attribute object: (identifier) @_self attribute: (identifier) @attr.name) right: (call function: [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])) (#eq? @_self "self"))
((assignment left: (attribute object: (identifier) @_self attribute: (identifier) @attr.name) type: (type [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])) (#eq? @_self "self"))
(class_definition body: (block (expression_statement (assignment left: (identifier) @attr.name type: (type [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])))))
"#;

const RUST: &str = r#"
(use_declaration argument: (_) @import.module) @import
(mod_item name: (identifier) @import.submodule !body) @import
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(trait_item bounds: (trait_bounds [(type_identifier) @inherit (generic_type type: (type_identifier) @inherit)]))
(const_item name: (identifier) @name) @definition.variable
(static_item name: (identifier) @name) @definition.variable
"#;

/// Imports and top-level variables, shared by JavaScript and TypeScript.
macro_rules! js_common {
    () => {
        r#"
(import_statement source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @import.item)))) @import
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @import.item alias: (identifier) @import.item_alias)))) @import
(import_statement (import_clause [(identifier) @import.alias (namespace_import (identifier) @import.alias)]) source: (string (string_fragment) @import.module)) @import
(export_statement source: (string (string_fragment) @import.module)) @import
((call_expression function: (identifier) @_require arguments: (arguments (string (string_fragment) @import.module))) @import (#eq? @_require "require"))
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function)))
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable)))
(variable_declarator name: (identifier) @bind.name value: (new_expression constructor: [(identifier) @bind.type (member_expression property: (property_identifier) @bind.type)]))
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @attr.name) right: (new_expression constructor: [(identifier) @attr.type (member_expression property: (property_identifier) @attr.type)]))
"#
    };
}

const JAVASCRIPT: &str = concat!(
    js_common!(),
    r#"
(class_heritage [(identifier) @inherit (member_expression property: (property_identifier) @inherit)])
"#
);

const TYPESCRIPT: &str = concat!(
    js_common!(),
    r#"
(extends_clause value: [(identifier) @inherit (member_expression property: (property_identifier) @inherit)])
(implements_clause [(type_identifier) @inherit (generic_type name: (type_identifier) @inherit)])
(extends_type_clause type: [(type_identifier) @inherit (generic_type name: (type_identifier) @inherit)])
(variable_declarator name: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(required_parameter pattern: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(optional_parameter pattern: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(public_field_definition name: (property_identifier) @attr.name type: (type_annotation [(type_identifier) @attr.type (generic_type name: (type_identifier) @attr.type)]))
(required_parameter (accessibility_modifier) pattern: (identifier) @attr.name type: (type_annotation [(type_identifier) @attr.type (generic_type name: (type_identifier) @attr.type)]))
"#
);

const GO: &str = r#"
(import_spec path: (interpreted_string_literal) @import.module) @import
(import_spec name: (package_identifier) @import.alias path: (interpreted_string_literal) @import.module) @import
(field_declaration_list (field_declaration !name type: [(type_identifier) @inherit (pointer_type (type_identifier) @inherit) (qualified_type name: (type_identifier) @inherit)]))
(interface_type (type_elem (type_identifier) @inherit))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.variable))
(var_spec name: (identifier) @bind.name type: [(type_identifier) @bind.type (pointer_type (type_identifier) @bind.type) (qualified_type name: (type_identifier) @bind.type) (pointer_type (qualified_type name: (type_identifier) @bind.type))])
(parameter_declaration name: (identifier) @bind.name type: [(type_identifier) @bind.type (pointer_type (type_identifier) @bind.type) (qualified_type name: (type_identifier) @bind.type) (pointer_type (qualified_type name: (type_identifier) @bind.type))])
(short_var_declaration left: (expression_list . (identifier) @bind.name) right: (expression_list . [(composite_literal type: (type_identifier) @bind.type) (unary_expression operand: (composite_literal type: (type_identifier) @bind.type))]))
"#;

const JAVA: &str = r#"
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
(superclass [(type_identifier) @inherit (generic_type (type_identifier) @inherit)])
(super_interfaces (type_list [(type_identifier) @inherit (generic_type (type_identifier) @inherit)]))
(extends_interfaces (type_list [(type_identifier) @inherit (generic_type (type_identifier) @inherit)]))
(class_body (field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.variable)
((local_variable_declaration type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)] declarator: (variable_declarator name: (identifier) @bind.name)) (#not-eq? @bind.type "var"))
((local_variable_declaration type: (type_identifier) @_var declarator: (variable_declarator name: (identifier) @bind.name value: (object_creation_expression type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)]))) (#eq? @_var "var"))
(formal_parameter type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)] name: (identifier) @bind.name)
(field_declaration type: [(type_identifier) @attr.type (generic_type (type_identifier) @attr.type)] declarator: (variable_declarator name: (identifier) @attr.name))
"#;

/// C and C++ (whose own tags queries capture a function's declarator rather than
/// its definition, count prototypes and `enum e x;` uses as definitions, and have no
/// calls): definitions with bodies, file-level variables (not `extern` declarations),
/// macros, `#include` (`"x.h"` as `x.h`, `<x.h>` with its brackets), calls, types.
macro_rules! c_common {
    () => {
        r#"
(preproc_include path: (string_literal (string_content) @import.module)) @import
(preproc_include path: (system_lib_string) @import.module) @import
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(translation_unit (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_if (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_ifdef (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_else (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_elif (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(declaration_list (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
[(parameter_declaration type: (type_identifier) @ref) (field_declaration type: (type_identifier) @ref) (declaration type: (type_identifier) @ref) (function_definition type: (type_identifier) @ref) (type_definition type: (type_identifier) @ref) (type_descriptor type: (type_identifier) @ref)]
[(parameter_declaration type: (_ name: (type_identifier) @ref !body)) (field_declaration type: (_ name: (type_identifier) @ref !body)) (declaration type: (_ name: (type_identifier) @ref !body)) (function_definition type: (_ name: (type_identifier) @ref !body)) (type_definition type: (_ name: (type_identifier) @ref !body)) (type_descriptor type: (_ name: (type_identifier) @ref !body))]
"#
    };
}

const C: &str = c_common!();

const CPP: &str = concat!(
    c_common!(),
    r#"
(function_definition declarator: (function_declarator declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @definition.function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: [(identifier) (operator_name) (destructor_name)] @name))) @definition.function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (qualified_identifier name: [(identifier) (operator_name) (destructor_name)] @name)))) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (operator_name)] @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))) @definition.function
(function_definition declarator: [(pointer_declarator declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name))) (reference_declarator (function_declarator declarator: (qualified_identifier name: (identifier) @name)))]) @definition.function
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(class_specifier name: (qualified_identifier name: (type_identifier) @name) body: (_)) @definition.class
(struct_specifier name: (qualified_identifier name: (type_identifier) @name) body: (_)) @definition.struct
(alias_declaration name: (type_identifier) @name) @definition.type
(field_declaration_list (field_declaration declarator: [(field_identifier) @name (pointer_declarator declarator: (field_identifier) @name) (array_declarator declarator: (field_identifier) @name)]) @definition.variable)
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(call_expression function: (field_expression field: (template_method name: (field_identifier) @name))) @reference.call
(base_class_clause [(type_identifier) @inherit (template_type name: (type_identifier) @inherit) (qualified_identifier name: [(type_identifier) @inherit (template_type name: (type_identifier) @inherit)])])
(new_expression type: [(type_identifier) @ref (template_type name: (type_identifier) @ref) (qualified_identifier name: (type_identifier) @ref)])
(template_argument_list (type_descriptor type: (type_identifier) @ref))
[(parameter_declaration type: [(template_type name: (type_identifier) @ref) (qualified_identifier name: (type_identifier) @ref)]) (field_declaration type: [(template_type name: (type_identifier) @ref) (qualified_identifier name: (type_identifier) @ref)]) (declaration type: [(template_type name: (type_identifier) @ref) (qualified_identifier name: (type_identifier) @ref)]) (function_definition type: [(template_type name: (type_identifier) @ref) (qualified_identifier name: (type_identifier) @ref)])]
"#
);

/// C#, on top of its tags query (definitions of classes, interfaces and methods;
/// `new` and declared types; calls on a member, `@reference.send`).
const CSHARP: &str = r#"
(using_directive !name [(identifier) (qualified_name)] @import.module) @import
(using_directive name: (identifier) @import.alias [(identifier) (qualified_name)] @import.module) @import
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(declaration_list (field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.variable)
(declaration_list (property_declaration name: (identifier) @name) @definition.variable)
(invocation_expression function: (identifier) @name) @reference.call
(invocation_expression function: (generic_name (identifier) @name)) @reference.call
(invocation_expression function: (member_access_expression name: (generic_name (identifier) @name))) @reference.call
(base_list [(identifier) @inherit (generic_name (identifier) @inherit) (qualified_name name: [(identifier) @inherit (generic_name (identifier) @inherit)])])
(parameter type: [(identifier) @ref (generic_name (identifier) @ref) (qualified_name name: (identifier) @ref)])
(method_declaration returns: [(identifier) @ref (generic_name (identifier) @ref) (qualified_name name: (identifier) @ref)])
(property_declaration type: [(identifier) @ref (generic_name (identifier) @ref)])
(variable_declaration type: (generic_name (identifier) @ref))
(object_creation_expression type: [(generic_name (identifier) @ref) (qualified_name name: (identifier) @ref)])
(variable_declaration type: [(identifier) @bind.type (generic_name (identifier) @bind.type)] (variable_declarator name: (identifier) @bind.name))
(variable_declaration type: (implicit_type) (variable_declarator name: (identifier) @bind.name (object_creation_expression type: [(identifier) @bind.type (generic_name (identifier) @bind.type)])))
(parameter type: [(identifier) @bind.type (generic_name (identifier) @bind.type)] name: (identifier) @bind.name)
(field_declaration (variable_declaration type: [(identifier) @attr.type (generic_name (identifier) @attr.type)] (variable_declarator name: (identifier) @attr.name)))
(property_declaration type: [(identifier) @attr.type (generic_name (identifier) @attr.type)] name: (identifier) @attr.name)
"#;

/// Ruby, on top of its tags query (methods, classes, calls with `method:`) without
/// its pattern that makes every identifier a call: here a bare identifier is a call
/// only where a statement or an argument can be one, and not when the file assigns
/// or takes a parameter of that name (`@local`).
const RUBY: &str = r#"
((call method: (identifier) @_require arguments: (argument_list . (string . (string_content) @import.module .))) @import (#any-of? @_require "require" "load"))
((call method: (identifier) @_require arguments: (argument_list . (string . (string_content) @import.relative .))) @import (#eq? @_require "require_relative"))
(module name: [(constant) @name (scope_resolution name: (constant) @name)]) @definition.class
(assignment left: (constant) @name) @definition.constant
(call receiver: [(constant) @name (scope_resolution name: (constant) @name)] method: (identifier) @_new (#eq? @_new "new")) @reference.call
(body_statement (identifier) @name @reference.bare)
(block_body (identifier) @name @reference.bare)
(then (identifier) @name @reference.bare)
(else (identifier) @name @reference.bare)
(begin (identifier) @name @reference.bare)
(parenthesized_statements (identifier) @name @reference.bare)
(argument_list (identifier) @name @reference.bare)
(assignment right: (identifier) @name @reference.bare)
(binary left: (identifier) @name @reference.bare)
(binary right: (identifier) @name @reference.bare)
(array (identifier) @name @reference.bare)
(pair value: (identifier) @name @reference.bare)
[(if condition: (identifier) @name @reference.bare) (unless condition: (identifier) @name @reference.bare) (while condition: (identifier) @name @reference.bare) (until condition: (identifier) @name @reference.bare)]
(call receiver: (identifier) @name @reference.bare)
(method body: (identifier) @name @reference.bare)
(superclass [(constant) @inherit (scope_resolution name: (constant) @inherit)])
((call method: (identifier) @_mixin arguments: (argument_list [(constant) @inherit (scope_resolution name: (constant) @inherit)])) (#any-of? @_mixin "include" "extend" "prepend"))
(assignment left: (identifier) @local)
(operator_assignment left: (identifier) @local)
(left_assignment_list (identifier) @local)
[(method_parameters (identifier) @local) (block_parameters (identifier) @local) (lambda_parameters (identifier) @local)]
[(optional_parameter name: (identifier) @local) (keyword_parameter name: (identifier) @local) (splat_parameter name: (identifier) @local) (hash_splat_parameter name: (identifier) @local) (block_parameter name: (identifier) @local)]
(for pattern: (identifier) @local)
(exception_variable (identifier) @local)
"#;

/// PHP, on top of its tags query (classes, interfaces, traits, functions, methods;
/// qualified, scoped and member calls; `new`), less its patterns for implemented
/// interfaces (bases here) and calls through a variable (`$f()`).
const PHP: &str = r#"
(namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module !alias)) @import
(namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module alias: (name) @import.alias)) @import
(namespace_use_declaration (namespace_name) @import.module body: (namespace_use_group (namespace_use_clause [(name) (qualified_name)] @import.item !alias))) @import
(namespace_use_declaration (namespace_name) @import.module body: (namespace_use_group (namespace_use_clause [(name) (qualified_name)] @import.item alias: (name) @import.item_alias))) @import
(include_expression [(string (string_content) @import.module) (binary_expression right: (string (string_content) @import.module))]) @import
(include_once_expression [(string (string_content) @import.module) (binary_expression right: (string (string_content) @import.module))]) @import
(require_expression [(string (string_content) @import.module) (binary_expression right: (string (string_content) @import.module))]) @import
(require_once_expression [(string (string_content) @import.module) (binary_expression right: (string (string_content) @import.module))]) @import
(enum_declaration name: (name) @name) @definition.enum
(const_declaration (const_element (name) @name) @definition.constant)
(property_declaration (property_element name: (variable_name (name) @name))) @definition.variable
(function_call_expression function: (name) @name) @reference.call
(object_creation_expression [(name) @ref (qualified_name (name) @ref)])
(base_clause [(name) @inherit (qualified_name (name) @inherit)])
(class_interface_clause [(name) @inherit (qualified_name (name) @inherit)])
(use_declaration [(name) @inherit (qualified_name (name) @inherit)])
(named_type [(name) @ref (qualified_name (name) @ref)])
"#;

/// Lua, on top of its tags query (functions, methods, functions in tables, calls):
/// `require "a.b"` (`local m = require "a.b"` binds `m`), file-level variables.
const LUA: &str = r#"
((function_call name: (identifier) @_require arguments: (arguments . (string content: (string_content) @import.module))) @import (#eq? @_require "require"))
((assignment_statement (variable_list . name: (identifier) @import.alias) (expression_list . value: (function_call name: (identifier) @_require arguments: (arguments . (string content: (string_content) @import.module))) @import)) (#eq? @_require "require"))
(chunk (variable_declaration (assignment_statement (variable_list name: (identifier) @name)) @definition.variable))
(chunk (variable_declaration (variable_list name: (identifier) @name) @definition.variable))
(chunk (assignment_statement (variable_list name: (identifier) @name)) @definition.variable)
"#;

/// Bash (its crate has no tags query): functions, commands as calls, `source x`
/// and `. x` as imports, file-level variables.
const BASH: &str = r#"
(function_definition name: (word) @name) @definition.function
(command name: (command_name (word) @name)) @reference.call
((command name: (command_name (word) @_source) argument: [(word) (string) (raw_string) (concatenation)] @import.module) @import (#any-of? @_source "source" "."))
(program (variable_assignment name: (variable_name) @name) @definition.variable)
(program (declaration_command (variable_assignment name: (variable_name) @name)) @definition.variable)
"#;

/// Kotlin (its crate has no tags query): classes, interfaces, objects, functions,
/// constructors and `init` blocks, type aliases, file-level and class properties
/// (`val`/`var` constructor parameters too); calls, plain or on a receiver;
/// `import a.b.C` (`as x` binds `x`); supertypes; types named in declarations; the
/// declared or constructed class of properties and parameters. A type's name is the
/// last identifier of its `user_type` (`a.b.C<T>` is `C`).
const KOTLIN: &str = r#"
(source_file (package_header (qualified_identifier) @package))
(import (qualified_identifier) @import.module) @import
(import (qualified_identifier) @import.module (identifier) @import.alias) @import
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(secondary_constructor "constructor" @name) @definition.function
(anonymous_initializer "init" @name) @definition.function
(type_alias type: (identifier) @name) @definition.type
(source_file (property_declaration (variable_declaration (identifier) @name)) @definition.variable)
([(class_body (property_declaration (variable_declaration (identifier) @name)) @definition.variable) (enum_class_body (property_declaration (variable_declaration (identifier) @name)) @definition.variable)])
(class_parameter ["val" "var"] (identifier) @name) @definition.variable
(call_expression . (identifier) @name) @reference.call
(call_expression . (navigation_expression (identifier) @name .)) @reference.call
([(class_declaration (delegation_specifiers (delegation_specifier [(user_type (identifier) @inherit .) (user_type (identifier) @inherit . (type_arguments)) (constructor_invocation [(user_type (identifier) @inherit .) (user_type (identifier) @inherit . (type_arguments))]) (explicit_delegation [(user_type (identifier) @inherit .) (user_type (identifier) @inherit . (type_arguments))])]))) (object_declaration (delegation_specifiers (delegation_specifier [(user_type (identifier) @inherit .) (user_type (identifier) @inherit . (type_arguments)) (constructor_invocation [(user_type (identifier) @inherit .) (user_type (identifier) @inherit . (type_arguments))])])))])
[(user_type (identifier) @ref .) (user_type (identifier) @ref . (type_arguments))]
(property_declaration (variable_declaration (identifier) @bind.name [(user_type (identifier) @bind.type .) (user_type (identifier) @bind.type . (type_arguments)) (nullable_type (user_type (identifier) @bind.type .))]))
(property_declaration (variable_declaration (identifier) @bind.name) (call_expression . (identifier) @bind.type))
(parameter (identifier) @bind.name [(user_type (identifier) @bind.type .) (user_type (identifier) @bind.type . (type_arguments)) (nullable_type (user_type (identifier) @bind.type .))])
(class_parameter ["val" "var"] (identifier) @attr.name [(user_type (identifier) @attr.type .) (user_type (identifier) @attr.type . (type_arguments)) (nullable_type (user_type (identifier) @attr.type .))])
(class_body (property_declaration (variable_declaration (identifier) @attr.name [(user_type (identifier) @attr.type .) (user_type (identifier) @attr.type . (type_arguments)) (nullable_type (user_type (identifier) @attr.type .))])))
(class_body (property_declaration (variable_declaration (identifier) @attr.name) (call_expression . (identifier) @attr.type)))
"#;

/// Swift, on top of its tags query (classes, structs, enums, actors, protocols,
/// functions) less its patterns whose definition is the whole class (`DROPPED_TAGS`):
/// `import M`, protocol requirements, `init`/`deinit`, file-level and stored
/// properties (a computed property is a function: its body runs code), calls,
/// supertypes and conformances (an `extension` is no definition: its methods are the
/// file's, as Rust's `impl`, and the type it extends is a type reference), types,
/// the declared or constructed class of properties and parameters.
const SWIFT: &str = r#"
(import_declaration (identifier) @import.module) @import
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.function
(deinit_declaration "deinit" @name) @definition.function
(source_file (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable)
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable)
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name) computed_value: (computed_property)) @definition.function)
(call_expression . (simple_identifier) @name) @reference.call
(call_expression . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))) @reference.call
([(class_declaration name: (type_identifier) (inheritance_specifier inherits_from: [(user_type (type_identifier) @inherit .) (user_type (type_identifier) @inherit . (type_arguments))])) (protocol_declaration (inheritance_specifier inherits_from: [(user_type (type_identifier) @inherit .) (user_type (type_identifier) @inherit . (type_arguments))]))])
[(user_type (type_identifier) @ref .) (user_type (type_identifier) @ref . (type_arguments))]
(property_declaration name: (pattern bound_identifier: (simple_identifier) @bind.name) (type_annotation [(user_type (type_identifier) @bind.type .) (user_type (type_identifier) @bind.type . (type_arguments)) (optional_type wrapped: (user_type (type_identifier) @bind.type .))]))
(property_declaration name: (pattern bound_identifier: (simple_identifier) @bind.name) value: (call_expression . (simple_identifier) @bind.type))
(parameter name: (simple_identifier) @bind.name [(user_type (type_identifier) @bind.type .) (user_type (type_identifier) @bind.type . (type_arguments)) (optional_type wrapped: (user_type (type_identifier) @bind.type .))])
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @attr.name) (type_annotation [(user_type (type_identifier) @attr.type .) (user_type (type_identifier) @attr.type . (type_arguments)) (optional_type wrapped: (user_type (type_identifier) @attr.type .))])))
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @attr.name) value: (call_expression . (simple_identifier) @attr.type)))
"#;

/// Scala (2 and 3). The crate's tags query (queries/tags.scm, MIT) is not exported;
/// these patterns follow it, less its locals as definitions (`val`s inside
/// functions) and with objects as classes: classes, objects, traits, enums and their
/// cases with parameters, functions (abstract ones too), type aliases, file-level and
/// member `val`/`var`/`given`, class parameters; calls (plain, on a receiver,
/// generic, infix `a max b`); `new C` and types in declarations; supertypes
/// (`extends A with B`); imports (the statement as written: see `scala_imports`);
/// the declared or constructed class of values and parameters.
const SCALA: &str = r#"
(compilation_unit (package_clause name: (package_identifier) @package))
(import_declaration) @import @import.module
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.interface
(enum_definition name: (identifier) @name) @definition.enum
(full_enum_case name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
(compilation_unit [(val_definition pattern: (identifier) @name) (var_definition pattern: (identifier) @name) (given_definition name: (identifier) @name)] @definition.variable)
(template_body [(val_definition pattern: (identifier) @name) (var_definition pattern: (identifier) @name) (val_declaration name: (identifier) @name) (var_declaration name: (identifier) @name) (given_definition name: (identifier) @name)] @definition.variable)
(class_parameter name: (identifier) @name) @definition.variable
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (identifier) @name)) @reference.call
(call_expression function: (generic_function function: [(identifier) @name (field_expression field: (identifier) @name)])) @reference.call
(infix_expression operator: (identifier) @name) @reference.call
(extends_clause [(type_identifier) @inherit (generic_type type: (type_identifier) @inherit) (stable_type_identifier (type_identifier) @inherit .) (generic_type type: (stable_type_identifier (type_identifier) @inherit .))])
(instance_expression [(type_identifier) @ref (generic_type type: (type_identifier) @ref) (stable_type_identifier (type_identifier) @ref .)])
[(parameter type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref) (stable_type_identifier (type_identifier) @ref .)]) (class_parameter type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref) (stable_type_identifier (type_identifier) @ref .)]) (function_definition return_type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref) (stable_type_identifier (type_identifier) @ref .)]) (function_declaration return_type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref) (stable_type_identifier (type_identifier) @ref .)]) (val_definition type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref)]) (var_definition type: [(type_identifier) @ref (generic_type type: (type_identifier) @ref)]) (type_arguments (type_identifier) @ref)]
([(val_definition pattern: (identifier) @bind.name type: [(type_identifier) @bind.type (generic_type type: (type_identifier) @bind.type)]) (var_definition pattern: (identifier) @bind.name type: [(type_identifier) @bind.type (generic_type type: (type_identifier) @bind.type)])])
([(val_definition pattern: (identifier) @bind.name value: (instance_expression [(type_identifier) @bind.type (generic_type type: (type_identifier) @bind.type)])) (var_definition pattern: (identifier) @bind.name value: (instance_expression [(type_identifier) @bind.type (generic_type type: (type_identifier) @bind.type)]))])
(val_definition pattern: (identifier) @bind.name value: (call_expression function: (identifier) @bind.type))
(parameter name: (identifier) @bind.name type: [(type_identifier) @bind.type (generic_type type: (type_identifier) @bind.type)])
(class_parameter name: (identifier) @attr.name type: [(type_identifier) @attr.type (generic_type type: (type_identifier) @attr.type)])
(template_body [(val_definition pattern: (identifier) @attr.name type: [(type_identifier) @attr.type (generic_type type: (type_identifier) @attr.type)]) (var_definition pattern: (identifier) @attr.name type: [(type_identifier) @attr.type (generic_type type: (type_identifier) @attr.type)])])
"#;

/// Patterns of a grammar's tags query left out, with why (see `RUBY`, `CSHARP` and
/// `PHP`); a test checks each is still in the crate's query.
const DROPPED_TAGS: &[(Language, &str)] = &[
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

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum DefKind {
    /// Functions, methods, macros.
    Function,
    /// Classes, interfaces, structs, enums, traits, type declarations.
    Class,
    /// Module-level constants and variables, class fields.
    Variable,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    pub kind: DefKind,
    pub name: Box<str>,
    /// First line of the definition, trimmed (at most 200 characters).
    pub signature: Box<str>,
    /// 1-based, inclusive. (u32, as tree-sitter counts rows and bytes.)
    pub line: u32,
    pub end_line: u32,
    start_byte: u32,
    end_byte: u32,
}

impl Definition {
    /// The definition's bytes in its file's source.
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        self.start_byte as usize..self.end_byte as usize
    }

    pub fn contains(&self, other: &Definition) -> bool {
        self.start_byte <= other.start_byte && other.end_byte <= self.end_byte && self != other
    }

    /// For each definition of `defs`, the innermost one containing it: the
    /// latest before it that `contains` it (None: none does, the file). Linear
    /// when `defs` are in start order, as extraction gives them: every one before
    /// starts no later, so the answer is the latest before it that ends no
    /// earlier, kept on a stack of those whose ends are still ahead. Otherwise each
    /// looks back over all before it (a file of 10,000 definitions, as some of the
    /// Linux kernel's, is 50 million comparisons so).
    pub fn containers(defs: &[Definition]) -> Vec<Option<usize>> {
        if !defs.is_sorted_by_key(|d| d.start_byte) {
            return (0..defs.len())
                .map(|i| (0..i).rev().find(|&j| defs[j].contains(&defs[i])))
                .collect();
        }
        // Indices, their ends non-increasing upwards.
        let mut open: Vec<usize> = Vec::new();
        defs.iter()
            .enumerate()
            .map(|(i, d)| {
                while open.last().is_some_and(|&j| defs[j].end_byte < d.end_byte) {
                    open.pop();
                }
                // An equal definition does not contain it: the next one down.
                let container = open.iter().rev().copied().find(|&j| defs[j] != *d);
                open.push(i);
                container
            })
            .collect()
    }

    fn contains_byte(&self, byte: usize) -> bool {
        self.byte_range().contains(&byte)
    }

    /// The definition without its name and signature (its node holds those).
    pub(super) fn span(&self) -> Span {
        Span {
            kind: self.kind,
            line: self.line,
            end_line: self.end_line,
            start_byte: self.start_byte,
            end_byte: self.end_byte,
        }
    }

    /// The definition `span` was taken from, given its name and signature.
    pub(super) fn with_span(span: Span, name: Box<str>, signature: Box<str>) -> Definition {
        Definition {
            kind: span.kind,
            name,
            signature,
            line: span.line,
            end_line: span.end_line,
            start_byte: span.start_byte,
            end_byte: span.end_byte,
        }
    }
}

/// A `Definition` as the graph keeps it, beside the node that holds its name and
/// signature: 20 bytes and no allocation, where a `Definition` is 88 bytes and two
/// (the kernel has 3 million: 477 MB, against 60). Lines and byte offsets fit in 32
/// bits, as tree-sitter counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    kind: DefKind,
    line: u32,
    end_line: u32,
    start_byte: u32,
    end_byte: u32,
}

/// One import statement's module (a statement importing several modules gives one
/// `Import` each).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Import {
    /// As written: `a.b`, `..pkg`, `./util`, `crate::graph`, `net/http`.
    pub module: String,
    /// The names it brings in (`from m import a, b`, `import {a} from "m"`, `use m::{a, b}`).
    pub items: Vec<String>,
    /// The local name it binds, when renamed (`import a.b as c`, `import * as m`,
    /// a Go package name).
    pub alias: Option<String>,
    /// Items imported under another name: (local name, item).
    pub renamed: Vec<(String, String)>,
    /// Rust's `mod name;`: the child module's file.
    pub submodule: bool,
    pub line: usize,
    /// The statement's first line, trimmed (at most 200 characters).
    pub statement: String,
}

/// What a reference names; each kind becomes its own kind of edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RefKind {
    /// A call of a function, method or class.
    Call,
    /// A base class, implemented interface, embedded struct or supertrait.
    Inherit,
    /// A type in an annotation, a `new`, an `impl`.
    Type,
    /// A variable of the file (or one it imports) read or written inside a definition.
    Use,
    /// A name an import brings in.
    Item,
}

/// Where a reference is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Origin {
    File,
    /// Index into `FileSymbols::definitions`.
    Definition(u32),
    /// Index into `FileSymbols::imports`.
    Import(u32),
}

/// What a call is made on, when that pins its target down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Receiver {
    Unknown,
    /// `self.f()`, `this.f()`: a method of the enclosing class.
    This,
    /// `m.f()` where `m` is the name an import (by index) binds.
    Import(u32),
    /// `f()` where an import (by index) brings `f` in (perhaps renamed): looked up
    /// there after the file itself.
    Named(u32),
    /// `x.f()` where `x` has a known class (by index into `FileSymbols::types`):
    /// `x = C(...)`, `x: C`, a parameter `x: C`, `self.x = C(...)` in the class,
    /// Go/Java/TypeScript declared types. `f` is looked up in `C`, then its bases.
    Type(u32),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reference {
    pub kind: RefKind,
    pub name: Box<str>,
    pub line: u32,
    pub origin: Origin,
    pub receiver: Receiver,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSymbols {
    pub language: Language,
    /// In source order.
    pub definitions: Vec<Definition>,
    pub imports: Vec<Import>,
    /// Sorted by name; within a name, calls in source order, then the other kinds.
    pub references: Vec<Reference>,
    /// The class names `Receiver::Type` refers to, each once.
    pub types: Vec<String>,
    /// Set when the source did not parse cleanly: what was extracted is kept.
    pub syntax_errors: bool,
    /// The package the file declares (Kotlin's and Scala's `package a.b`; Scala's
    /// chained clauses joined: `package a` then `package b` is `a.b`): its imports'
    /// files are found by it too, wherever its folder is.
    pub package: Option<String>,
    /// Where the parser failed first (1-based): the start of the first error node
    /// that holds no other (see `first_error_line`). Reported in the file's warning;
    /// not saved with the symbols (the graph file keeps the warnings).
    #[serde(skip)]
    pub error_line: Option<usize>,
    /// Why the extraction stopped short of the whole file (a limit of `MAX_TREE_DEPTH`,
    /// `MAX_USE_DEPTH` or `FILE_BUDGET` was reached), one note per limit; what was found
    /// before is kept. Reported as the file's warnings; not saved with the symbols
    /// (the graph file keeps the warnings).
    #[serde(skip)]
    pub truncated: Vec<String>,
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

/// A node's first line, trimmed, at most 200 characters. Reads at most 1 KiB past
/// the leading blanks: it runs once per match, and many matches can share one huge
/// line (`import {a0, ..., a24999} from "m"`).
fn first_line(text: &[u8]) -> String {
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..text.len().min(start + 1024)];
    let line = text.split(|b| *b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line)
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// A node's last line, 1-based: the line of its last byte (C's `#define` ends
/// with its newline, at column 0 of the next line).
fn last_line(node: tree_sitter::Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row
    } else {
        end.row + 1
    }
}

/// A reference found by the query, before its origin is known.
struct Found {
    kind: RefKind,
    name: String,
    line: usize,
    byte: usize,
    /// A call's receiver, when it is a plain name (`m` in `m.f()`) or an attribute
    /// of `self` or `this` (`self.x` in `self.x.f()`).
    receiver: Option<String>,
    /// A Ruby identifier that is a call unless the file has a local of that name.
    bare: bool,
}

/// A name given a class in the source: a variable or parameter (`x = C(...)`,
/// `x: C`, `C x`, `var x C`), or an attribute of the enclosing class (`self.x =
/// C(...)`, a field `x: C`) when `attribute`.
struct Binding {
    name: String,
    class: String,
    byte: usize,
    attribute: bool,
}

/// An import capture, before grouping by statement.
struct RawImport {
    statement: usize,
    line: usize,
    text: String,
    module: Option<String>,
    item: Option<String>,
    item_alias: Option<String>,
    alias: Option<String>,
    submodule: bool,
    /// Ruby's `require_relative`: the path is relative to the file's folder.
    relative: bool,
}

/// Sends tree-sitter's C allocations to mimalloc, once, before the first parser or
/// query exists. Parsing allocates and frees a node per token; with glibc's malloc
/// two threads parsing at once took ~40% more CPU than one alone.
fn use_mimalloc() {
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

/// How deep in a syntax tree extraction looks: patterns start only at nodes up to
/// this depth, and nothing below is indexed. Real code stays far above (a dozen
/// nested callbacks in JavaScript is ~80 levels); hostile input (`f(f(f(...)))`
/// 60,000 deep, a 200,000-link `a.b.b...` chain) goes much deeper, and there
/// tree-sitter's query cursor keeps a pending match per level and walks all of
/// them at every node: quadratic time (and its 16-bit depth counters wrap past
/// 65,535). A file that goes deeper is indexed down to this depth and gets a
/// warning (`nesting deeper than 256 levels: truncated`).
pub const MAX_TREE_DEPTH: u32 = 256;

/// Each file's budget for extraction, all phases together (the parse, the query
/// and the resolution of references): past it extraction stops, keeps what it
/// found and the file gets a warning naming the phase. A backstop: real code of
/// 1 MB takes well under a second, but a grammar's error recovery is slow on input
/// that is no code (Lua's parse of 100 KB of random bytes ran past 10 s), and a
/// query may have superlinear cases we have not met.
pub const FILE_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// The note for a file nested deeper than `MAX_TREE_DEPTH`.
fn too_deep(levels: impl std::fmt::Display) -> String {
    format!("nesting deeper than {levels} levels: truncated")
}

/// The note for a file whose parse or query ran out of `FILE_BUDGET`.
fn over_budget(phase: &str) -> String {
    format!(
        "{phase} took longer than the {} s budget per file: truncated",
        FILE_BUDGET.as_secs()
    )
}

/// One file's syntax tree (None only if tree-sitter gives up). `extract` starts here;
/// public so that the parse alone can be timed (`examples/graph_phases.rs`).
pub fn parse_tree(language: Language, source: &[u8]) -> Option<tree_sitter::Tree> {
    parse_within(language, source, std::time::Instant::now() + FILE_BUDGET)
}

/// `parse_tree`, given up (None) at `deadline`.
fn parse_within(
    language: Language,
    source: &[u8],
    deadline: std::time::Instant,
) -> Option<tree_sitter::Tree> {
    let patched = match language {
        Language::TypeScript | Language::Tsx => typescript_patched(source),
        _ => None,
    };
    let source = patched.as_deref().unwrap_or(source);
    use_mimalloc();
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .expect("grammar versions match the tree-sitter crate");
    let mut check = |_: &tree_sitter::ParseState| {
        if std::time::Instant::now() < deadline {
            std::ops::ControlFlow::Continue(())
        } else {
            std::ops::ControlFlow::Break(())
        }
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut check);
    let len = source.len();
    parser.parse_with_options(
        &mut |i, _| if i < len { &source[i..] } else { &[] },
        None,
        Some(options),
    )
}

/// TypeScript that tree-sitter-typescript 0.23 (the latest grammar crate) does not
/// parse, blanked out so that the rest of the file parses: the variance modifiers of
/// type parameters (`interface I<out O, in I>`, TypeScript 4.7) and the `type` of
/// `export type * from` (5.0). Spaces replace the words, so every byte keeps its
/// offset and the tree's ranges still index the original source (text is always
/// read from it). A modifier is `in` or `out` after `<` or `,`, followed on the same
/// line by a name and then `,`, `>`, `=`, `extends` or another name (`in out T`):
/// in valid code that is a type parameter (or text of a string, comment or JSX,
/// where blanking changes nothing extracted). None when nothing needs blanking.
fn typescript_patched(source: &[u8]) -> Option<Vec<u8>> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let blank = |b: u8| b == b' ' || b == b'\t';
    let skip = |at: usize, ws: &dyn Fn(u8) -> bool| {
        source[at..]
            .iter()
            .position(|&b| !ws(b))
            .map_or(source.len(), |n| at + n)
    };
    let word_end = |at: usize| {
        source[at..]
            .iter()
            .position(|&b| !word(b))
            .map_or(source.len(), |n| at + n)
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < source.len() {
        let b = source[i];
        i += 1;
        if b == b'<' || b == b',' {
            let mut at = skip(i, &|b: u8| b.is_ascii_whitespace());
            // `in`, `out` or `in out`, then the parameter's name.
            let mut modifiers = Vec::new();
            loop {
                let end = word_end(at);
                let text = &source[at..end];
                let next = skip(end, &blank);
                if (text == b"in" || text == b"out") && next > end && word_end(next) > next {
                    modifiers.push(at..end);
                    at = next;
                } else {
                    break;
                }
            }
            if modifiers.is_empty() {
                continue;
            }
            let name_end = word_end(at);
            let after = skip(name_end, &|b: u8| b.is_ascii_whitespace());
            let follows = source.get(after).copied();
            let fits = matches!(follows, Some(b',' | b'>' | b'='))
                || source[after..].starts_with(b"extends")
                    && !source.get(after + 7).copied().is_some_and(word);
            if name_end > at && fits {
                let out = out.get_or_insert_with(|| source.to_vec());
                for range in modifiers {
                    out[range].fill(b' ');
                }
            }
        } else if b == b'e'
            && (i < 2 || !word(source[i - 2]))
            && source[i - 1..].starts_with(b"export")
        {
            // `export type *`: the `type` goes.
            let after_export = i - 1 + 6;
            let at = skip(after_export, &|b: u8| b.is_ascii_whitespace());
            if at > after_export && source[at..].starts_with(b"type") {
                let star = skip(at + 4, &|b: u8| b.is_ascii_whitespace());
                if star > at + 4 && source.get(star) == Some(&b'*') {
                    out.get_or_insert_with(|| source.to_vec())[at..at + 4].fill(b' ');
                }
            }
        }
    }
    out
}

/// The line (1-based) where the parser failed first: the start of the first error
/// (or missing) node, in source order, that holds no other. An outer error node
/// often spans from far before the failure (tree-sitter wraps what it could not fit
/// around it, up to the whole file); the innermost one starts where parsing went
/// wrong. None when the tree has no error.
fn first_error_line(tree: &tree_sitter::Tree) -> Option<usize> {
    let mut node = tree.root_node();
    if !node.has_error() {
        return None;
    }
    let mut cursor = tree.walk();
    loop {
        // The first child holding an error, if any: go down into it.
        let next = node
            .children(&mut cursor)
            .find(|c| c.has_error() || c.is_error() || c.is_missing());
        match next {
            Some(child) => node = child,
            None => return Some(node.start_position().row + 1),
        }
    }
}

/// Whether any node of `tree` lies deeper than `limit` (the root is at depth 0).
/// Iterative (a tree cursor), and it stops at the first such node. A node is
/// entered only if it has descendants enough to reach past `limit` (a chain of `k`
/// levels below a node needs `k` descendants; the count is stored in the tree):
/// in real code that leaves only the few nodes along the spine of each large
/// definition to visit, where a walk of every node cost 7% of extraction.
fn deeper_than(tree: &tree_sitter::Tree, limit: u32) -> bool {
    let mut cursor = tree.walk();
    let mut depth = 0u32;
    loop {
        let below = cursor.node().descendant_count().saturating_sub(1);
        if depth as usize + below > limit as usize && cursor.goto_first_child() {
            depth += 1;
            if depth > limit {
                return true;
            }
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

/// Extracts definitions, imports and references from one file's bytes. Invalid UTF-8
/// is read lossily; a file that does not parse cleanly yields what tree-sitter recovered.
/// Time and memory are linear in the file's size: nesting is cut at
/// `MAX_TREE_DEPTH`, all phases together at `FILE_BUDGET`, and either leaves a note in
/// `truncated`.
pub fn extract(language: Language, source: &[u8]) -> FileSymbols {
    extract_within(language, source, FILE_BUDGET)
}

fn extract_within(language: Language, source: &[u8], budget: std::time::Duration) -> FileSymbols {
    let deadline = std::time::Instant::now() + budget;
    let Some(tree) = parse_within(language, source, deadline) else {
        return FileSymbols {
            language,
            definitions: vec![],
            imports: vec![],
            references: vec![],
            types: vec![],
            syntax_errors: true,
            package: None,
            error_line: None,
            truncated: vec![over_budget("parsing")],
        };
    };
    extract_tree(language, source, &tree, deadline)
}

/// The symbols of a parsed file: the query's matches, then references given their
/// origins; both stop at `deadline` (what was found stays, with a note).
fn extract_tree(
    language: Language,
    source: &[u8],
    tree: &tree_sitter::Tree,
    deadline: std::time::Instant,
) -> FileSymbols {
    let mut truncated = Vec::new();
    if deeper_than(tree, MAX_TREE_DEPTH) {
        truncated.push(too_deep(MAX_TREE_DEPTH));
    }
    let query = language.query();
    let names = query.capture_names();
    let index_of = |name: &str| names.iter().position(|n| *n == name).map(|i| i as u32);
    let (name_index, import_index, use_index) =
        (index_of("name"), index_of("import"), index_of("use"));
    let binding_index = [
        (index_of("bind.name"), index_of("bind.type"), false),
        (index_of("attr.name"), index_of("attr.type"), true),
    ];
    let text =
        |node: tree_sitter::Node| String::from_utf8_lossy(&source[node.byte_range()]).into_owned();
    let mut cursor = QueryCursor::new();
    cursor.set_max_start_depth(Some(MAX_TREE_DEPTH));
    let out_of_time = std::cell::Cell::new(false);
    let mut check = |_: &tree_sitter::QueryCursorState| {
        if std::time::Instant::now() < deadline {
            std::ops::ControlFlow::Continue(())
        } else {
            out_of_time.set(true);
            std::ops::ControlFlow::Break(())
        }
    };
    let mut definitions: Vec<Definition> = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    let mut raw_imports: Vec<RawImport> = Vec::new();
    let mut identifiers: Vec<tree_sitter::Node> = Vec::new();
    // Ruby's local variables and parameters, by name: bare identifiers so named are
    // no calls.
    let mut locals: HashSet<Vec<u8>> = HashSet::default();
    let mut bindings: Vec<Binding> = Vec::new();
    // Kotlin's and Scala's package clauses, in source order.
    let mut package: Vec<String> = Vec::new();
    // Two patterns can match one node (JavaScript's and TypeScript's queries; a
    // top-level constant holding a function is a function): (start, name) -> index.
    let mut defined: HashMap<(u32, Box<str>), usize> = HashMap::default();
    let options = tree_sitter::QueryCursorOptions::new().progress_callback(&mut check);
    let mut matches = cursor.matches_with_options(query, tree.root_node(), source, options);
    while let Some(m) = matches.next() {
        if let [only] = m.captures() {
            if Some(only.index) == use_index {
                identifiers.push(only.node);
                continue;
            }
        }
        let binding = binding_index.iter().find_map(|&(name, class, attribute)| {
            let of = |index: Option<u32>| {
                m.captures()
                    .iter()
                    .find(|c| index.is_some() && Some(c.index) == index)
                    .map(|c| c.node)
            };
            Some((of(name)?, of(class)?, attribute))
        });
        if let Some((name, class, attribute)) = binding {
            bindings.push(Binding {
                name: text(name),
                class: text(class),
                byte: name.start_byte(),
                attribute,
            });
            continue;
        }
        if let Some(statement) = m
            .captures()
            .iter()
            .find(|c| Some(c.index) == import_index)
            .map(|c| c.node)
        {
            let mut raw = RawImport {
                statement: statement.start_byte(),
                line: statement.start_position().row + 1,
                text: first_line(&source[statement.byte_range()]),
                module: None,
                item: None,
                item_alias: None,
                alias: None,
                submodule: false,
                relative: false,
            };
            for capture in m.captures() {
                match names[capture.index as usize] {
                    "import.module" => raw.module = Some(text(capture.node)),
                    "import.submodule" => {
                        (raw.module, raw.submodule) = (Some(text(capture.node)), true)
                    }
                    "import.relative" => {
                        (raw.module, raw.relative) = (Some(text(capture.node)), true)
                    }
                    "import.item" => raw.item = Some(text(capture.node)),
                    "import.alias" => raw.alias = Some(text(capture.node)),
                    "import.item_alias" => raw.item_alias = Some(text(capture.node)),
                    _ => {}
                }
            }
            raw_imports.push(raw);
            continue;
        }
        let name_node = m
            .captures()
            .iter()
            .find(|c| Some(c.index) == name_index)
            .map(|c| c.node);
        for capture in m.captures() {
            let capture_name = names[capture.index as usize];
            let node = capture.node;
            let reference = |kind: RefKind, at: tree_sitter::Node| Found {
                kind,
                name: text(at),
                line: at.start_position().row + 1,
                byte: at.start_byte(),
                receiver: None,
                bare: false,
            };
            match (capture_name, name_node) {
                ("inherit", _) => found.push(reference(RefKind::Inherit, node)),
                ("package", _) => package.push(text(node).split_whitespace().collect()),
                ("ref", _) if !builtin_attribute(language, node, source) => {
                    found.push(reference(RefKind::Type, node))
                }
                ("ref", _) => {}
                ("local", _) => {
                    locals.insert(source[node.byte_range()].to_vec());
                }
                ("reference.bare", Some(name)) => found.push(Found {
                    bare: true,
                    ..reference(RefKind::Call, name)
                }),
                // C#'s tags name a call on a member `@reference.send`.
                ("reference.call" | "reference.send", Some(name)) => found.push(Found {
                    receiver: receiver(language, node, name, source),
                    ..reference(RefKind::Call, name)
                }),
                (other, Some(name)) if other.starts_with("reference.") => {
                    found.push(reference(RefKind::Type, name))
                }
                (other, Some(name)) => {
                    let Some(kind) = def_kind(other) else {
                        continue;
                    };
                    let def = Definition {
                        kind,
                        name: text(name).into(),
                        signature: first_line(&source[node.byte_range()]).into(),
                        line: line32(node.start_position().row + 1),
                        end_line: line32(last_line(node)),
                        start_byte: line32(node.start_byte()),
                        end_byte: line32(node.end_byte()),
                    };
                    match defined.entry((def.start_byte, def.name.clone())) {
                        std::collections::hash_map::Entry::Occupied(seen) => {
                            let seen = &mut definitions[*seen.get()];
                            if seen.kind == DefKind::Variable {
                                *seen = def;
                            }
                        }
                        std::collections::hash_map::Entry::Vacant(slot) => {
                            slot.insert(definitions.len());
                            definitions.push(def);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    drop(matches);
    if out_of_time.get() {
        truncated.push(over_budget("the query"));
    }
    definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
    let (imports, cut) = group_imports(language, raw_imports);
    if cut {
        truncated.push(too_deep(format!("{MAX_USE_DEPTH} use-tree")));
    }
    found.retain(|f| !f.bare || !locals.contains(f.name.as_bytes()));
    let mut uses = uses(language, &identifiers, source, &definitions, &imports);
    found.append(&mut uses);
    let (references, types, cut) =
        resolve_origins(language, found, &definitions, &imports, &bindings, deadline);
    if cut {
        truncated.push(over_budget("resolving references"));
    }
    FileSymbols {
        language,
        definitions,
        imports,
        references,
        types,
        syntax_errors: tree.root_node().has_error(),
        package: (!package.is_empty()).then(|| package.join(".")),
        error_line: first_error_line(tree),
        truncated,
    }
}

/// One `Import` per (statement, module), items attached, in source order; true when
/// a Rust use tree was cut at `MAX_USE_DEPTH`. Linear in the captures (each lookup
/// is a hash).
fn group_imports(language: Language, raw: Vec<RawImport>) -> (Vec<Import>, bool) {
    let mut imports: Vec<(usize, Import)> = Vec::new();
    let mut index: HashMap<(usize, String), usize> = HashMap::default();
    // Every import of a statement, by the statement's start.
    let mut of_statement: HashMap<usize, Vec<usize>> = HashMap::default();
    // Items already in each import (`Import::items` without repeats).
    let mut has: Vec<HashSet<String>> = Vec::new();
    // Items matched apart from their module: (statement, item, local name if renamed).
    let mut loose_items: Vec<(usize, String, Option<String>)> = Vec::new();
    let mut cut = false;
    for r in raw {
        let Some(module) = r.module else {
            loose_items.extend(r.item.map(|i| (r.statement, i, r.item_alias)));
            continue;
        };
        let paths: Vec<(String, Option<String>)> = match language {
            Language::Rust if !r.submodule => {
                let (paths, deeper) = flatten_use(&module);
                cut |= deeper;
                paths
            }
            Language::Go => vec![(
                module.trim_matches(|c| c == '"' || c == '`').to_string(),
                None,
            )],
            Language::Scala => scala_imports(&module),
            // `require_relative "x"` is the file `./x`.
            _ if r.relative && !module.starts_with('.') => vec![(format!("./{module}"), r.item)],
            _ => vec![(module, r.item)],
        };
        for (module, item) in paths {
            let at = *index
                .entry((r.statement, module.clone()))
                .or_insert_with(|| {
                    let import = Import {
                        module,
                        items: vec![],
                        alias: None,
                        renamed: vec![],
                        submodule: r.submodule,
                        line: r.line,
                        statement: r.text.clone(),
                    };
                    imports.push((r.statement, import));
                    has.push(HashSet::default());
                    of_statement
                        .entry(r.statement)
                        .or_default()
                        .push(imports.len() - 1);
                    imports.len() - 1
                });
            let import = &mut imports[at].1;
            add_item(import, &mut has[at], item, r.item_alias.clone());
            if r.alias.is_some() {
                import.alias.clone_from(&r.alias);
            }
        }
    }
    for (statement, item, local) in loose_items {
        for &at in of_statement.get(&statement).into_iter().flatten() {
            add_item(
                &mut imports[at].1,
                &mut has[at],
                Some(item.clone()),
                local.clone(),
            );
        }
    }
    imports.sort_by_key(|(s, _)| *s);
    (imports.into_iter().map(|(_, i)| i).collect(), cut)
}

/// Adds an item (under `local` when renamed) to an import once; `has` holds the
/// import's items and renamed local names, for constant-time repeats.
fn add_item(
    import: &mut Import,
    has: &mut HashSet<String>,
    item: Option<String>,
    local: Option<String>,
) {
    let Some(item) = item else { return };
    if let Some(local) = local.filter(|l| *l != item) {
        if has.insert(format!("as {local}")) {
            import.renamed.push((local, item.clone()));
        }
    }
    if has.insert(item.clone()) {
        import.items.push(item);
    }
}

/// How deep `flatten_use` follows nested braces; deeper groups are dropped and the
/// file gets a warning (`nesting deeper than 32 use-tree levels: truncated`). No real
/// use tree comes near.
const MAX_USE_DEPTH: usize = 32;

/// A Rust use tree as (module path, item) pairs: `a::{b, c::d as e, self}` gives
/// (a, b), (a::c, d), (a, none); a glob or a bare path imports the module itself.
/// Iterative (a work list), each brace group read once: linear in the text. Groups
/// nested deeper than `MAX_USE_DEPTH` are dropped, and the flag says so.
fn flatten_use(tree: &str) -> (Vec<(String, Option<String>)>, bool) {
    let compact = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = compact.as_str();
    // The matching close of each `{` (None if unbalanced), by one pass with a stack.
    let mut closes: HashMap<usize, usize> = HashMap::default();
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '{' => open.push(i),
            '}' => {
                if let Some(start) = open.pop() {
                    closes.insert(start, i);
                }
            }
            _ => {}
        }
    }
    let join = |prefix: &str, head: &str| match (prefix.is_empty(), head.is_empty()) {
        (true, _) => head.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}::{head}"),
    };
    let mut cut = false;
    let mut paths = Vec::new();
    // (prefix, byte range of a use tree, level), last first.
    let mut work: Vec<(String, usize, usize, usize)> = vec![(String::new(), 0, text.len(), 0)];
    while let Some((prefix, start, end, level)) = work.pop() {
        if level > MAX_USE_DEPTH {
            cut = true;
            continue;
        }
        let part = &text[start..end];
        let lead = part.len() - part.trim_start().len();
        let brace = part
            .find('{')
            .map(|o| start + o)
            .and_then(|o| closes.get(&o).filter(|c| **c < end).map(|c| (o, *c)));
        match brace {
            Some((open, close)) => {
                let head = join(
                    &prefix,
                    text[start + lead..open].trim().trim_end_matches("::"),
                );
                // The group's members at its own level, split at top-level commas.
                let mut members = Vec::new();
                let mut at = open + 1;
                let mut i = open + 1;
                while i < close {
                    match text.as_bytes()[i] {
                        b'{' => i = closes.get(&i).map_or(close, |c| *c + 1),
                        b',' => {
                            members.push((at, i));
                            at = i + 1;
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                members.push((at, close));
                for (a, b) in members.into_iter().rev() {
                    work.push((head.clone(), a, b, level + 1));
                }
            }
            None => {
                let path = part.split(" as ").next().unwrap_or_default().trim();
                if !path.is_empty() && !path.contains(['{', '}']) {
                    paths.push(join(&prefix, path));
                }
            }
        }
    }
    let pairs = paths
        .into_iter()
        .map(|path| match path.rsplit_once("::") {
            Some((module, "*" | "self")) => (module.to_string(), None),
            Some((module, item)) => (module.to_string(), Some(item.to_string())),
            None => (path, None),
        })
        .collect();
    (pairs, cut)
}

/// The receiver of a call whose name is `name`, when it is a plain word before it:
/// `m` in `m.f()`, `m::f()`, `self.f()`.
fn receiver(
    language: Language,
    call: tree_sitter::Node,
    name: tree_sitter::Node,
    source: &[u8],
) -> Option<String> {
    if matches!(language, Language::Kotlin | Language::Swift) {
        return navigation_receiver(call, name, source);
    }
    // The name's parent, found down from the call (`Node::parent` walks down from
    // the root: it took 3% of extraction). Java's and JavaScript's tags mark the
    // arguments as the call, beside the name: there the parent is asked for.
    let mut parent = call;
    if call.start_byte() > name.start_byte() {
        parent = name.parent()?;
    } else {
        loop {
            let child = parent.child_with_descendant(name)?;
            if child == name {
                break;
            }
            parent = child;
        }
    }
    // The field holding the object, per grammar (each lookup by name costs: a
    // plain call `f()` tries them all).
    let fields: &[&str] = match language {
        Language::C | Language::Cpp => &["argument", "scope"],
        Language::CSharp => &["expression"],
        Language::Ruby => &["receiver"],
        Language::Php => &["object", "scope"],
        Language::Lua => &["table"],
        _ => &["object", "operand", "value", "path"],
    };
    let object = fields
        .iter()
        .find_map(|field| parent.child_by_field_name(field))?;
    let text = &source[object.byte_range()];
    // PHP's `$this->f()`, `$m->f()`.
    let text = text.strip_prefix(b"$").unwrap_or(text);
    let is_word = |text: &[u8]| {
        !text.is_empty()
            && text.len() <= 64
            && text.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    // `self.x` and `this.x`: an attribute of the enclosing class.
    let word = is_word(text)
        || [&b"self."[..], b"this."]
            .iter()
            .any(|p| text.starts_with(p) && is_word(&text[p.len()..]));
    (object.end_byte() <= name.start_byte() && word)
        .then(|| String::from_utf8_lossy(text).into_owned())
}

/// The receiver of a Kotlin or Swift call on a member, as `receiver` gives it: the
/// object of the call's `navigation_expression` (Kotlin's first child, Swift's
/// `target`), when it is a plain word (`self` and `this` too) or an attribute of one.
fn navigation_receiver(
    call: tree_sitter::Node,
    name: tree_sitter::Node,
    source: &[u8],
) -> Option<String> {
    let navigation = call.named_child(0)?;
    if navigation.kind() != "navigation_expression" || navigation.end_byte() < name.end_byte() {
        return None;
    }
    let object = navigation
        .child_by_field_name("target")
        .or_else(|| navigation.named_child(0))?;
    let text = &source[object.byte_range()];
    let is_word = |text: &[u8]| {
        !text.is_empty()
            && text.len() <= 64
            && text.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let word = is_word(text)
        || [&b"self."[..], b"this."]
            .iter()
            .any(|p| text.starts_with(p) && is_word(&text[p.len()..]));
    (object.end_byte() <= name.start_byte() && word)
        .then(|| String::from_utf8_lossy(text).into_owned())
}

/// A Scala import statement as (module, no item) pairs, one per class or package it
/// names, as Java's: `import a.b.C` is a.b.C, `import a.b._` and `a.b.*` a.b,
/// `import a.b.{C, D => E, given}` a.b.C and a.b.D, `import a.b.C as D` a.b.C; a
/// statement of several clauses (`import a.B, c.D`) gives each. Renames keep the
/// imported name.
fn scala_imports(statement: &str) -> Vec<(String, Option<String>)> {
    let body = statement.trim();
    let body = body.strip_prefix("import").unwrap_or(body);
    // Clauses, split at commas outside braces.
    let mut clauses = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                clauses.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    clauses.push(&body[start..]);
    let plain = |s: &str| s.split_whitespace().collect::<String>();
    let mut out = Vec::new();
    for clause in clauses {
        let clause = clause.trim();
        match clause.split_once('{') {
            Some((prefix, selectors)) => {
                let module = plain(prefix).trim_end_matches('.').to_string();
                let selectors = selectors.split('}').next().unwrap_or_default();
                let mut any = false;
                for selector in selectors.split(',') {
                    let item = selector
                        .split("=>")
                        .next()
                        .unwrap_or_default()
                        .split(" as ")
                        .next()
                        .unwrap_or_default()
                        .trim();
                    let wildcard =
                        matches!(item, "_" | "*" | "given" | "") || item.starts_with("given ");
                    if !wildcard && item.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        out.push((format!("{module}.{item}"), None));
                        any = true;
                    }
                }
                if !any && !module.is_empty() {
                    out.push((module, None));
                }
            }
            None => {
                let path = clause.split(" as ").next().unwrap_or_default();
                let path = plain(path);
                let path = path
                    .strip_suffix("._")
                    .or_else(|| path.strip_suffix(".*"))
                    .or_else(|| path.strip_suffix(".given"))
                    .unwrap_or(&path);
                if !path.is_empty() {
                    out.push((path.to_string(), None));
                }
            }
        }
    }
    out
}

/// Whether a Swift type name is a built-in attribute (`@objc`, `@available`,
/// `@testable`, `@discardableResult`: lower case), not a type. An attribute in upper
/// case names a type: a property wrapper, result builder or global actor
/// (`@Published`, `@MainActor`).
fn builtin_attribute(language: Language, node: tree_sitter::Node, source: &[u8]) -> bool {
    language == Language::Swift
        && source
            .get(node.start_byte())
            .is_some_and(u8::is_ascii_lowercase)
        && node
            .parent()
            .and_then(|user_type| user_type.parent())
            .is_some_and(|parent| parent.kind() == "attribute")
}

/// The names an import binds in the file: its alias; else, for a module import, the
/// name code uses to reach it (`os` for `import os.path`, `util` for a Go import of
/// `x/util`, `Foo` for `import a.Foo`) and, where an item can be a module, its items.
fn bound_names(language: Language, import: &Import) -> Vec<&str> {
    if let Some(alias) = &import.alias {
        return vec![alias.as_str()];
    }
    let module = import.module.as_str();
    let last = |sep: &str| module.rsplit(sep).next().unwrap_or(module);
    let mut out: Vec<&str> = match language {
        Language::Python if import.items.is_empty() && !module.starts_with('.') => {
            vec![module.split('.').next().unwrap_or(module)]
        }
        Language::Go => vec![last("/")],
        Language::Java | Language::Kotlin | Language::Scala => vec![last(".")],
        Language::Rust => vec![last("::")],
        // A grouped `use A\{B, C}` binds its items, `use A\B` the last name.
        Language::Php if import.items.is_empty() && !module.contains(['/', '.']) => {
            vec![last("\\")]
        }
        _ => vec![],
    };
    if matches!(language, Language::Python | Language::Rust | Language::Php) {
        out.extend(import.items.iter().map(String::as_str));
    }
    out
}

/// Whether a C or C++ name is written as a macro or constant is (`LIST_MAX`,
/// `EINVAL`): two or more capitals, digits and `_`, one capital at least.
fn macro_like(name: &[u8]) -> bool {
    name.len() >= 2
        && name.iter().any(u8::is_ascii_uppercase)
        && name
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// Identifiers inside definitions that name one of the file's variables or a name
/// it imports (a variable defined elsewhere): one `Use` per (definition, name). In
/// C and C++, whose `#include` names no items, also every name written as a macro
/// is: linked to a `#define` of the file or of the files it includes.
fn uses(
    language: Language,
    identifiers: &[tree_sitter::Node],
    source: &[u8],
    definitions: &[Definition],
    imports: &[Import],
) -> Vec<Found> {
    let wanted: HashSet<&[u8]> = definitions
        .iter()
        .filter(|d| d.kind == DefKind::Variable)
        .map(|d| d.name.as_bytes())
        .chain(imports.iter().flat_map(|i| {
            i.items
                .iter()
                .chain(i.renamed.iter().map(|(local, _)| local))
                .map(|n| n.as_bytes())
        }))
        .collect();
    identifiers
        .iter()
        .filter(|node| {
            let name = &source[node.byte_range()];
            wanted.contains(name)
                || (matches!(language, Language::C | Language::Cpp) && macro_like(name))
        })
        .map(|node| Found {
            kind: RefKind::Use,
            name: String::from_utf8_lossy(&source[node.byte_range()]).into_owned(),
            line: node.start_position().row + 1,
            byte: node.start_byte(),
            receiver: None,
            bare: false,
        })
        .collect()
}

/// Gives each reference its origin and drops what is not a reference:
/// - a call is made from the innermost enclosing function (else the file);
/// - a base from the innermost enclosing class;
/// - a type reference or a use from the innermost enclosing definition, and a use
///   at file level, or inside the variable's own definition, is no reference;
/// - a type reference where a base was found is the base; repeats of a (kind,
///   origin, name) other than calls are dropped, calls are one per call site.
///
/// Each import's items follow as `Item` references.
fn resolve_origins(
    language: Language,
    mut found: Vec<Found>,
    definitions: &[Definition],
    imports: &[Import],
    bindings: &[Binding],
    deadline: std::time::Instant,
) -> (Vec<Reference>, Vec<String>, bool) {
    let classes = Classes::of(bindings, definitions);
    let mut types: Vec<String> = Vec::new();
    let mut type_index: HashMap<String, u32> = HashMap::default();
    // The import bringing each plain name in, and the item a renamed one stands for.
    let mut named: HashMap<&str, (u32, &str)> = HashMap::default();
    for (i, import) in imports.iter().enumerate().rev() {
        for item in &import.items {
            named.insert(item.as_str(), (i as u32, item.as_str()));
        }
        for (local, item) in &import.renamed {
            named.insert(local.as_str(), (i as u32, item.as_str()));
        }
        // Kotlin's `import a.b.max as maximum` renames what it imports, a function
        // or a class as much as a package: `maximum(...)` calls `max`.
        if let (Language::Kotlin, Some(alias)) = (language, &import.alias) {
            let item = import.module.rsplit('.').next().unwrap_or(&import.module);
            named.insert(alias.as_str(), (i as u32, item));
        }
    }
    // The first import binding each name.
    let mut bound: HashMap<&str, u32> = HashMap::default();
    for (i, import) in imports.iter().enumerate() {
        for name in bound_names(language, import) {
            bound.entry(name).or_insert(i as u32);
        }
    }
    // A receiver as written, where the call is made from (the open definitions,
    // outermost first), to what it pins the call to.
    let mut receiver_of = |text: &Option<String>, open: &[usize], byte: usize| -> Receiver {
        let class = match text.as_deref() {
            None => return Receiver::Unknown,
            Some("self" | "this" | "cls" | "Self") => return Receiver::This,
            Some(attribute) if attribute.contains('.') => {
                let field = attribute.split_once('.').map_or("", |(_, f)| f);
                classes.attribute(open, byte, field)
            }
            Some(word) => match classes.variable(open, byte, word) {
                Some(class) => Some(class),
                None if bound.contains_key(word) => {
                    return Receiver::Import(bound[word]);
                }
                // A Java, C#, Kotlin, Swift or Scala field named without `this`.
                None if matches!(
                    language,
                    Language::Java
                        | Language::CSharp
                        | Language::Kotlin
                        | Language::Swift
                        | Language::Scala
                ) =>
                {
                    classes.attribute(open, byte, word)
                }
                None => None,
            },
        };
        match class {
            Some(class) => {
                let next = types.len() as u32;
                let at = *type_index.entry(class.to_string()).or_insert(next);
                if at == next {
                    types.push(class.to_string());
                }
                Receiver::Type(at)
            }
            None => Receiver::Unknown,
        }
    };
    found.sort_by_key(|f| (f.byte, f.kind as u8));
    let inherit_bytes: HashSet<usize> = found
        .iter()
        .filter(|f| f.kind == RefKind::Inherit)
        .map(|f| f.byte)
        .collect();
    // The definitions open at the current byte, outermost first: `found` is in byte
    // order and `definitions` in start order, so one sweep keeps it up to date and
    // each lookup scans only the nesting (not every definition of the file).
    let mut open: Vec<usize> = Vec::new();
    let mut next_definition = 0;
    let innermost = |open: &[usize], byte: usize, accept: &dyn Fn(&Definition) -> bool| {
        open.iter()
            .rev()
            .copied()
            .find(|&d| accept(&definitions[d]) && definitions[d].contains_byte(byte))
    };
    let mut seen: HashSet<(RefKind, Option<usize>, &str)> = HashSet::default();
    let mut out: Vec<Reference> = Vec::new();
    let mut last_call: Option<(usize, &str)> = None;
    let mut cut = false;
    for (n, f) in found.iter().enumerate() {
        // The clock is read every 1,024 references (a read costs ~20 ns): past
        // `deadline`, the references resolved so far are kept (the first 1,024
        // always: a query that ran out of time still leaves some).
        if n > 0 && n % 1024 == 0 && std::time::Instant::now() >= deadline {
            cut = true;
            break;
        }
        while next_definition < definitions.len()
            && definitions[next_definition].start_byte as usize <= f.byte
        {
            open.push(next_definition);
            next_definition += 1;
        }
        while open
            .last()
            .is_some_and(|&d| definitions[d].end_byte as usize <= f.byte)
        {
            open.pop();
        }
        let innermost = |accept: &dyn Fn(&Definition) -> bool| innermost(&open, f.byte, accept);
        let origin = match f.kind {
            RefKind::Call => {
                if last_call == Some((f.byte, f.name.as_str())) {
                    continue;
                }
                last_call = Some((f.byte, f.name.as_str()));
                innermost(&|d| d.kind == DefKind::Function)
            }
            RefKind::Inherit => match innermost(&|d| d.kind == DefKind::Class) {
                Some(class) => Some(class),
                None => continue,
            },
            RefKind::Type if inherit_bytes.contains(&f.byte) => continue,
            RefKind::Type => innermost(&|d| d.kind != DefKind::Variable),
            RefKind::Use => {
                if innermost(&|d| d.kind == DefKind::Variable && *d.name == *f.name).is_some() {
                    continue;
                }
                match innermost(&|d| d.kind != DefKind::Variable) {
                    Some(def) => Some(def),
                    None => continue,
                }
            }
            RefKind::Item => continue, // items come from the imports, below
        };
        if f.kind != RefKind::Call && !seen.insert((f.kind, origin, f.name.as_str())) {
            continue;
        }
        let origin = origin.map_or(Origin::File, |d| Origin::Definition(d as u32));
        // A renamed import is looked up under its item's name (a class through it
        // is a base or a type as much as a call).
        let (name, receiver) = match (f.kind, &f.receiver, named.get(f.name.as_str())) {
            (RefKind::Call, None, Some(&(i, item))) => (item.into(), Receiver::Named(i)),
            (RefKind::Inherit | RefKind::Type, _, Some(&(i, item))) if item != f.name => {
                (item.into(), Receiver::Named(i))
            }
            (RefKind::Use, _, Some(&(_, item))) => (item.into(), Receiver::Unknown),
            (RefKind::Call, _, _) => (
                f.name.as_str().into(),
                receiver_of(&f.receiver, &open, f.byte),
            ),
            _ => (f.name.as_str().into(), Receiver::Unknown),
        };
        out.push(Reference {
            kind: f.kind,
            name,
            line: line32(f.line),
            origin,
            receiver,
        });
    }
    for (i, import) in imports.iter().enumerate() {
        for item in &import.items {
            let name = item.rsplit(['.', ':']).next().unwrap_or(item).into();
            out.push(Reference {
                kind: RefKind::Item,
                name,
                line: line32(import.line),
                origin: Origin::Import(i as u32),
                receiver: Receiver::Unknown,
            });
        }
    }
    // By name, and within a name calls first in source order, then the other kinds:
    // a file's references to one name are one run, found by binary search.
    out.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then((a.kind != RefKind::Call).cmp(&(b.kind != RefKind::Call)))
    });
    (out, types, cut)
}

/// The classes the file's bindings give names, by scope: a variable's scope is the
/// innermost function around it (or the file), an attribute's the innermost class.
/// A name given two different classes in one scope has none (the code is read
/// without its control flow).
struct Classes<'a> {
    /// (scope: a function's index or None for the file, name) -> class.
    variables: HashMap<(Option<usize>, &'a str), Option<&'a str>>,
    /// (class index, attribute) -> class.
    attributes: HashMap<(usize, &'a str), Option<&'a str>>,
    definitions: &'a [Definition],
}

impl<'a> Classes<'a> {
    fn of(bindings: &'a [Binding], definitions: &'a [Definition]) -> Self {
        let mut variables: HashMap<(Option<usize>, &str), Option<&str>> = HashMap::default();
        let mut attributes: HashMap<(usize, &str), Option<&str>> = HashMap::default();
        let merge = |slot: &mut Option<&'a str>, class: &'a str| {
            if *slot != Some(class) {
                *slot = None;
            }
        };
        // One sweep in byte order, as in `resolve_origins`: the definitions open at
        // each binding, outermost first.
        let mut order: Vec<&Binding> = bindings.iter().collect();
        order.sort_by_key(|b| b.byte);
        let mut open: Vec<usize> = Vec::new();
        let mut next = 0;
        for b in order {
            while next < definitions.len() && definitions[next].start_byte as usize <= b.byte {
                open.push(next);
                next += 1;
            }
            while open
                .last()
                .is_some_and(|&d| definitions[d].end_byte as usize <= b.byte)
            {
                open.pop();
            }
            let innermost = |kind: DefKind| {
                open.iter()
                    .rev()
                    .copied()
                    .find(|&d| definitions[d].kind == kind && definitions[d].contains_byte(b.byte))
            };
            let class = b.class.as_str();
            if b.attribute {
                if let Some(owner) = innermost(DefKind::Class) {
                    attributes
                        .entry((owner, b.name.as_str()))
                        .and_modify(|slot| merge(slot, class))
                        .or_insert(Some(class));
                }
            } else if innermost(DefKind::Class) > innermost(DefKind::Function) {
                // A name bound in a class body (a field) is no variable of the methods.
                continue;
            } else {
                variables
                    .entry((innermost(DefKind::Function), b.name.as_str()))
                    .and_modify(|slot| merge(slot, class))
                    .or_insert(Some(class));
            }
        }
        Classes {
            variables,
            attributes,
            definitions,
        }
    }

    /// The class of a variable seen from `byte` inside `open` (the definitions open
    /// there, outermost first, some perhaps closed already): the innermost function
    /// binding it, else the file.
    fn variable(&self, open: &[usize], byte: usize, name: &str) -> Option<&'a str> {
        if self.variables.is_empty() {
            return None;
        }
        let functions = open
            .iter()
            .rev()
            .filter(|&&d| {
                self.definitions[d].kind == DefKind::Function
                    && self.definitions[d].contains_byte(byte)
            })
            .map(|&d| Some(d));
        for scope in functions.chain([None]) {
            if let Some(class) = self.variables.get(&(scope, name)) {
                return *class;
            }
        }
        None
    }

    /// The class of an attribute of the innermost class around `byte`.
    fn attribute(&self, open: &[usize], byte: usize, name: &str) -> Option<&'a str> {
        if self.attributes.is_empty() {
            return None;
        }
        let class = open.iter().rev().find(|&&d| {
            self.definitions[d].kind == DefKind::Class && self.definitions[d].contains_byte(byte)
        })?;
        self.attributes.get(&(*class, name)).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts each sample and compares its definitions, imports and references
    /// (as `summary`, `imports` and `refs` print them) with the expected text.
    fn check_samples(samples: Vec<(Language, &str)>, expected: Vec<(&str, &str, &str)>) {
        assert_eq!(samples.len(), expected.len());
        for ((l, src), (defs, imps, rs)) in samples.into_iter().zip(expected) {
            let s = extract(l, src.as_bytes());
            assert_eq!(format!("{:?}", summary(&s)), defs, "{l:?}");
            assert_eq!(format!("{:?}", imports(&s)), imps, "{l:?}");
            assert_eq!(format!("{:?}", refs(&s)), rs, "{l:?}");
            assert!(!s.syntax_errors, "{l:?}");
        }
    }

    fn summary(symbols: &FileSymbols) -> Vec<(DefKind, &str, u32)> {
        symbols
            .definitions
            .iter()
            .map(|d| (d.kind, &*d.name, d.line))
            .collect()
    }

    /// (kind, name, line, origin as a definition's name, "file" or "import <module>").
    /// By line, kind and name (the file holds them by name).
    fn refs(s: &FileSymbols) -> Vec<(RefKind, String, u32, String)> {
        assert!(s.references.is_sorted_by(|a, b| a.name <= b.name));
        let mut out: Vec<_> = s
            .references
            .iter()
            .map(|r| {
                let origin = match r.origin {
                    Origin::File => "file".to_string(),
                    Origin::Definition(d) => s.definitions[d as usize].name.to_string(),
                    Origin::Import(i) => format!("import {}", s.imports[i as usize].module),
                };
                (r.kind, r.name.to_string(), r.line, origin)
            })
            .collect();
        out.sort_by(|a, b| (a.2, a.0 as u8, &a.1).cmp(&(b.2, b.0 as u8, &b.1)));
        out
    }

    fn imports(s: &FileSymbols) -> Vec<(String, Vec<String>, usize)> {
        s.imports
            .iter()
            .map(|i| (i.module.clone(), i.items.clone(), i.line))
            .collect()
    }

    const EXPECTED: [(&str, &str, &str); 6] = [
        (
            r#"[(Variable, "LIMIT", 4), (Class, "Repo", 6), (Function, "load", 7), (Function, "fetch", 10)]"#,
            r#"[("os", [], 1), ("a.b", [], 1), ("..pkg", ["x", "y"], 2), ("m", [], 3)]"#,
            r#"[(Item, "x", 2, "import ..pkg"), (Item, "y", 2, "import ..pkg"), (Inherit, "Base", 6, "Repo"), (Inherit, "Mixin", 6, "Repo"), (Type, "Key", 7, "load"), (Type, "int", 7, "load"), (Call, "fetch", 8, "load"), (Use, "LIMIT", 8, "load"), (Use, "x", 8, "load"), (Call, "helper", 11, "fetch"), (Call, "strip", 11, "fetch"), (Call, "main", 13, "file")]"#,
        ),
        (
            r#"[(Variable, "MAX", 4), (Class, "S", 5), (Class, "T", 6), (Function, "go", 9), (Function, "helper", 11)]"#,
            r#"[("crate::graph", ["extract"], 1), ("crate::graph::store", ["Edge"], 1), ("std", ["io"], 2), ("util", [], 3)]"#,
            r#"[(Item, "Edge", 1, "import crate::graph::store"), (Item, "extract", 1, "import crate::graph"), (Item, "io", 2, "import std"), (Inherit, "Base", 6, "T"), (Inherit, "Other", 6, "T"), (Type, "T", 7, "file"), (Type, "S", 8, "file"), (Call, "helper", 9, "go"), (Use, "MAX", 9, "go")]"#,
        ),
        (
            r#"[(Variable, "Count", 8), (Class, "T", 10), (Class, "I", 16), (Function, "Run", 21), (Function, "Helper", 23)]"#,
            r#"[("fmt", [], 4), ("example.com/m/util", [], 5)]"#,
            r#"[(Type, "T", 10, "T"), (Inherit, "Base", 11, "T"), (Inherit, "Other", 12, "T"), (Type, "string", 13, "T"), (Type, "I", 16, "I"), (Type, "Stringer", 17, "I"), (Inherit, "Reader", 18, "I"), (Call, "Helper", 21, "Run"), (Call, "Println", 21, "Run"), (Type, "T", 21, "Run"), (Use, "Count", 21, "Run"), (Type, "int", 23, "Helper")]"#,
        ),
        (
            r#"[(Class, "A", 4), (Variable, "count", 5), (Function, "run", 6), (Function, "helper", 7), (Class, "I", 9)]"#,
            r#"[("com.x.Foo", [], 2), ("java.util", [], 3)]"#,
            r#"[(Inherit, "Base", 4, "A"), (Inherit, "I", 4, "A"), (Inherit, "J", 4, "A"), (Call, "helper", 6, "run"), (Type, "Foo", 6, "run"), (Use, "count", 6, "run"), (Inherit, "K", 9, "I")]"#,
        ),
        (
            r#"[(Variable, "fs", 3), (Variable, "LIMIT", 4), (Function, "f", 5), (Class, "A", 6), (Function, "run", 7), (Function, "helper", 9)]"#,
            r#"[("./util.js", ["slug", "title"], 1), ("react", [], 2), ("fs", [], 3)]"#,
            r#"[(Item, "slug", 1, "import ./util.js"), (Item, "title", 1, "import ./util.js"), (Inherit, "Base", 6, "A"), (Call, "helper", 7, "run"), (Call, "slug", 7, "run"), (Use, "LIMIT", 7, "run"), (Use, "slug", 7, "run")]"#,
        ),
        (
            r#"[(Class, "I", 3), (Class, "A", 4), (Function, "run", 5), (Function, "helper", 7)]"#,
            r#"[("../repo", ["Repo"], 1), ("./types", [], 2)]"#,
            r#"[(Item, "Repo", 1, "import ../repo"), (Inherit, "J", 3, "I"), (Inherit, "Base", 4, "A"), (Inherit, "I", 4, "A"), (Call, "helper", 5, "run"), (Type, "Repo", 5, "run")]"#,
        ),
    ];

    /// Every language: definitions, imports (module, items) and references with their
    /// origin, checked by hand.
    #[test]
    fn definitions_imports_and_references_in_every_language() {
        let samples: Vec<(Language, &str)> = vec![
            (Language::Python, "import os, a.b as c\nfrom ..pkg import x, y as z\nfrom m import *\nLIMIT = 3\n\nclass Repo(Base, mod.Mixin):\n    def load(self, key: Key) -> int:\n        return fetch(key) + LIMIT + x\n\ndef fetch(key):\n    return helper(key).strip()\n\nmain()\n"),
            (Language::Rust, "use crate::graph::{extract, store::Edge as E};\nuse std::io;\nmod util;\nconst MAX: usize = 3;\nstruct S;\ntrait T: Base + Other<u8> {}\nimpl T for S {}\nimpl S {\n    fn go(&self) { helper(MAX); }\n}\nfn helper(n: usize) {}\n"),
            (Language::Go, "package p\n\nimport (\n\t\"fmt\"\n\tu \"example.com/m/util\"\n)\n\nvar Count = 1\n\ntype T struct {\n\tBase\n\t*Other\n\tname string\n}\n\ntype I interface {\n\tfmt.Stringer\n\tReader\n}\n\nfunc (t T) Run() { Helper(Count); fmt.Println() }\n\nfunc Helper(n int) {}\n"),
            (Language::Java, "package a;\nimport com.x.Foo;\nimport java.util.*;\nclass A extends Base implements I, J<String> {\n  static int count = 0;\n  void run() { helper(count); new Foo(); }\n  void helper(int n) {}\n}\ninterface I extends K {}\n"),
            (Language::JavaScript, "import { slug, title as t } from './util.js';\nimport React from 'react';\nconst fs = require('fs');\nexport const LIMIT = 3;\nconst f = () => 1;\nclass A extends Base {\n  run() { helper(LIMIT); slug(); }\n}\nfunction helper() {}\n"),
            (Language::TypeScript, "import { Repo } from \"../repo\";\nexport * from './types';\ninterface I extends J<number> { x: number }\nclass A extends Base implements I {\n  run(r: Repo): void { helper(); }\n}\nfunction helper(): void {}\n"),
        ];
        for ((l, src), (defs, imps, rs)) in samples.into_iter().zip(EXPECTED) {
            let s = extract(l, src.as_bytes());
            assert_eq!(format!("{:?}", summary(&s)), defs, "{l:?}");
            assert_eq!(format!("{:?}", imports(&s)), imps, "{l:?}");
            assert_eq!(format!("{:?}", refs(&s)), rs, "{l:?}");
            assert!(!s.syntax_errors, "{l:?}");
        }
        assert_eq!(
            flatten_use("a::{b, c::{d as e, self}, *}").0,
            [
                ("a".into(), Some("b".into())),
                ("a::c".into(), Some("d".into())),
                ("a::c".into(), None),
                ("a".into(), None)
            ]
        );
    }

    /// The languages added after the first six, as above: C (prototypes and
    /// `extern` declarations are no definitions), C++ (out-of-class methods are
    /// top-level, as Go's), C#, Ruby (a bare identifier is a call unless the file
    /// has a local so named: `sum` here) and PHP.
    #[test]
    fn definitions_imports_and_references_in_c_cpp_csharp_ruby_php() {
        let samples: Vec<(Language, &str)> = vec![
            (Language::C, "#include \"util.h\"\n#include <stdio.h>\n#define LIMIT 3\nstatic int count = 0;\nextern int shared;\nstruct node { struct node *next; };\ntypedef struct node node_t;\nint run(node_t *n) { helper(count); n->visit(LIMIT); return 0; }\nstatic void helper(int x) {}\nint proto(int);\n"),
            (Language::Cpp, "#include \"shape.hpp\"\nnamespace geo {\nint limit = 3;\nclass Square : public Shape, private base::Named<int> {\n  int side;\n  double area() { return helper(side) + this->scale(); }\n  void run();\n};\nvoid Square::run() { geo::helper(limit); auto *s = new Square(); }\n}\n"),
            (Language::CSharp, "using System.Text;\nusing M = App.Models.User;\nnamespace App.Web {\n  class Shop : Base, IShop<int> {\n    int count = 0;\n    public void Run(User u) { Helper(count); this.Stop(); new Cart(); u.Save(); }\n    void Stop() { }\n  }\n  interface IShop<T> : IBase { }\n}\n"),
            (Language::Ruby, "require 'json'\nrequire_relative 'models/user'\nLIMIT = 3\nmodule Shop\n  class Cart < Base\n    include Comparable\n    def total(items)\n      sum = helper(items)\n      sum + LIMIT + validate\n    end\n    def self.build\n      Cart.new.total([])\n    end\n  end\nend\n"),
            (Language::Php, "<?php\nnamespace App\\Http;\nuse App\\Models\\User;\nuse App\\Support\\{Str, Arr as A};\nrequire_once __DIR__ . '/helpers.php';\nconst LIMIT = 3;\nclass Shop extends Base implements Named {\n    use Greets;\n    private $count = 0;\n    public function run(User $u) { helper($this->count); $this->stop(); User::find(LIMIT); }\n    function stop() {}\n}\n"),
        ];
        let expected: Vec<(&str, &str, &str)> = vec![
            (
                r#"[(Variable, "LIMIT", 3), (Variable, "count", 4), (Class, "node", 6), (Class, "node_t", 7), (Function, "run", 8), (Function, "helper", 9)]"#,
                r#"[("util.h", [], 1), ("<stdio.h>", [], 2)]"#,
                r#"[(Type, "node", 6, "node"), (Type, "node", 7, "node_t"), (Call, "helper", 8, "run"), (Call, "visit", 8, "run"), (Type, "node_t", 8, "run"), (Use, "LIMIT", 8, "run"), (Use, "count", 8, "run")]"#,
            ),
            (
                r#"[(Variable, "limit", 3), (Class, "Square", 4), (Variable, "side", 5), (Function, "area", 6), (Function, "run", 9)]"#,
                r#"[("shape.hpp", [], 1)]"#,
                r#"[(Inherit, "Named", 4, "Square"), (Inherit, "Shape", 4, "Square"), (Call, "helper", 6, "area"), (Call, "scale", 6, "area"), (Use, "side", 6, "area"), (Call, "helper", 9, "run"), (Type, "Square", 9, "run"), (Use, "limit", 9, "run")]"#,
            ),
            (
                r#"[(Class, "Shop", 4), (Variable, "count", 5), (Function, "Run", 6), (Function, "Stop", 7), (Class, "IShop", 9)]"#,
                r#"[("System.Text", [], 1), ("App.Models.User", [], 2)]"#,
                r#"[(Inherit, "Base", 4, "Shop"), (Inherit, "IShop", 4, "Shop"), (Call, "Helper", 6, "Run"), (Call, "Save", 6, "Run"), (Call, "Stop", 6, "Run"), (Type, "Cart", 6, "Run"), (Type, "User", 6, "Run"), (Use, "count", 6, "Run"), (Inherit, "IBase", 9, "IShop")]"#,
            ),
            (
                r#"[(Variable, "LIMIT", 3), (Class, "Shop", 4), (Class, "Cart", 5), (Function, "total", 7), (Function, "build", 11)]"#,
                r#"[("json", [], 1), ("./models/user", [], 2)]"#,
                r#"[(Call, "require", 1, "file"), (Call, "require_relative", 2, "file"), (Inherit, "Base", 5, "Cart"), (Call, "include", 6, "file"), (Inherit, "Comparable", 6, "Cart"), (Call, "helper", 8, "total"), (Call, "validate", 9, "total"), (Use, "LIMIT", 9, "total"), (Call, "Cart", 12, "build"), (Call, "new", 12, "build"), (Call, "total", 12, "build")]"#,
            ),
            (
                r#"[(Variable, "LIMIT", 6), (Class, "Shop", 7), (Variable, "count", 9), (Function, "run", 10), (Function, "stop", 11)]"#,
                r#"[("App\\Models\\User", [], 3), ("App\\Support", ["Str", "Arr"], 4), ("/helpers.php", [], 5)]"#,
                r#"[(Item, "Arr", 4, "import App\\Support"), (Item, "Str", 4, "import App\\Support"), (Inherit, "Base", 7, "Shop"), (Inherit, "Named", 7, "Shop"), (Inherit, "Greets", 8, "Shop"), (Call, "find", 10, "run"), (Call, "helper", 10, "run"), (Call, "stop", 10, "run"), (Type, "User", 10, "run"), (Use, "LIMIT", 10, "run"), (Use, "count", 10, "run")]"#,
            ),
        ];
        check_samples(samples, expected);
    }

    /// Kotlin (a constructor's `val` parameter is a field, `init` a function), Swift
    /// (a computed property is a function; an extension is no class: its methods are
    /// the file's, the type it extends a type reference) and Scala (objects are
    /// classes; `import a.{b, c => d}` is one import per name), checked by hand;
    /// calls on a declared or constructed receiver name its class.
    #[test]
    fn definitions_imports_and_references_in_kotlin_swift_scala() {
        let samples: Vec<(Language, &str)> = vec![
            (Language::Kotlin, "package com.shop.web\n\nimport com.shop.model.User\nimport com.shop.util.*\nimport kotlin.math.max as maximum\n\nconst val LIMIT = 3\n\ninterface Named {\n    fun name(): String\n}\n\nclass Cart(private val owner: User, seed: Int) : Base(1), Named {\n    var count: Int = 0\n    init { register(seed) }\n    override fun name(): String = owner.name\n    fun total(u: User?): Int {\n        val repo = Repo()\n        helper(LIMIT)\n        this.name()\n        u.save()\n        repo.find(count)\n        return maximum(count, 1)\n    }\n}\n\nobject Registry : Named {\n    override fun name() = \"r\"\n}\ntypealias Users = List<User>\nfun helper(n: Int) { println(n) }\n"),
            (Language::Swift, "import Foundation\n@testable import ShopCore\n\nlet limit = 3\n\nprotocol Named: AnyObject { func name() -> String }\n\nclass Cart: Base, Named {\n    var count: Int = 0\n    let owner: User\n    init(owner: User) { self.owner = owner; setUp() }\n    func name() -> String { return owner.name }\n    func total(u: User?) -> Int {\n        let repo = Repo()\n        helper(limit)\n        self.name()\n        u?.save()\n        repo.find(count)\n        return max(count, 1)\n    }\n    var label: String { format(count) }\n}\n\nstruct Point: Equatable { let x: Int }\nextension Cart: CustomStringConvertible {\n    func extra() { describe() }\n}\nfunc helper(_ n: Int) { print(n) }\nfinal class Model {\n    @Published var title: String = \"\"\n    @objc func tap() {}\n}\n"),
            (Language::Scala, "package com.shop.web\n\nimport com.shop.model.User\nimport com.shop.util._\nimport scala.collection.{mutable, immutable => im}\n\nobject Config {\n  val Limit = 3\n}\n\ntrait Named { def name(): String }\n\nclass Cart(owner: User) extends Base(1) with Named {\n  var count: Int = 0\n  def name(): String = owner.name\n  def total(u: User): Int = {\n    val repo = new Repo()\n    helper(Config.Limit)\n    this.name()\n    u.save()\n    repo.find(count)\n    count max 1\n  }\n}\n\ncase class Point(x: Int) extends Ordered[Point]\ntype Users = List[User]\ndef helper(n: Int): Unit = println(n)\n"),
        ];
        let expected: Vec<(&str, &str, &str)> = vec![
            (
                r#"[(Variable, "LIMIT", 7), (Class, "Named", 9), (Function, "name", 10), (Class, "Cart", 13), (Variable, "owner", 13), (Variable, "count", 14), (Function, "init", 15), (Function, "name", 16), (Function, "total", 17), (Class, "Registry", 27), (Function, "name", 28), (Class, "Users", 30), (Function, "helper", 31)]"#,
                r#"[("com.shop.model.User", [], 3), ("com.shop.util", [], 4), ("kotlin.math.max", [], 5)]"#,
                r#"[(Type, "String", 10, "name"), (Inherit, "Base", 13, "Cart"), (Inherit, "Named", 13, "Cart"), (Type, "Int", 13, "Cart"), (Type, "User", 13, "Cart"), (Call, "register", 15, "init"), (Type, "String", 16, "name"), (Use, "owner", 16, "name"), (Type, "Int", 17, "total"), (Type, "User", 17, "total"), (Call, "Repo", 18, "total"), (Call, "helper", 19, "total"), (Use, "LIMIT", 19, "total"), (Call, "name", 20, "total"), (Call, "save", 21, "total"), (Call, "find", 22, "total"), (Use, "count", 22, "total"), (Call, "max", 23, "total"), (Inherit, "Named", 27, "Registry"), (Type, "List", 30, "Users"), (Type, "User", 30, "Users"), (Call, "println", 31, "helper"), (Type, "Int", 31, "helper")]"#,
            ),
            (
                r#"[(Variable, "limit", 4), (Class, "Named", 6), (Function, "name", 6), (Class, "Cart", 8), (Variable, "count", 9), (Variable, "owner", 10), (Function, "init", 11), (Function, "name", 12), (Function, "total", 13), (Function, "label", 21), (Class, "Point", 24), (Variable, "x", 24), (Function, "extra", 26), (Function, "helper", 28), (Class, "Model", 29), (Variable, "title", 30), (Function, "tap", 31)]"#,
                r#"[("Foundation", [], 1), ("ShopCore", [], 2)]"#,
                r#"[(Inherit, "AnyObject", 6, "Named"), (Type, "String", 6, "name"), (Inherit, "Base", 8, "Cart"), (Inherit, "Named", 8, "Cart"), (Type, "Int", 9, "Cart"), (Type, "User", 10, "Cart"), (Call, "setUp", 11, "init"), (Type, "User", 11, "init"), (Use, "owner", 11, "init"), (Type, "String", 12, "name"), (Use, "owner", 12, "name"), (Type, "Int", 13, "total"), (Type, "User", 13, "total"), (Call, "Repo", 14, "total"), (Call, "helper", 15, "total"), (Use, "limit", 15, "total"), (Call, "name", 16, "total"), (Call, "save", 17, "total"), (Call, "find", 18, "total"), (Use, "count", 18, "total"), (Call, "max", 19, "total"), (Call, "format", 21, "label"), (Type, "String", 21, "label"), (Use, "count", 21, "label"), (Inherit, "Equatable", 24, "Point"), (Type, "Int", 24, "Point"), (Type, "Cart", 25, "file"), (Type, "CustomStringConvertible", 25, "file"), (Call, "describe", 26, "extra"), (Call, "print", 28, "helper"), (Type, "Int", 28, "helper"), (Type, "Published", 30, "Model"), (Type, "String", 30, "Model")]"#,
            ),
            (
                r#"[(Class, "Config", 7), (Variable, "Limit", 8), (Class, "Named", 11), (Function, "name", 11), (Class, "Cart", 13), (Variable, "owner", 13), (Variable, "count", 14), (Function, "name", 15), (Function, "total", 16), (Class, "Point", 26), (Variable, "x", 26), (Class, "Users", 27), (Function, "helper", 28)]"#,
                r#"[("com.shop.model.User", [], 3), ("com.shop.util", [], 4), ("scala.collection.mutable", [], 5), ("scala.collection.immutable", [], 5)]"#,
                r#"[(Type, "String", 11, "name"), (Inherit, "Base", 13, "Cart"), (Inherit, "Named", 13, "Cart"), (Type, "User", 13, "Cart"), (Type, "Int", 14, "Cart"), (Type, "String", 15, "name"), (Use, "owner", 15, "name"), (Type, "Int", 16, "total"), (Type, "User", 16, "total"), (Type, "Repo", 17, "total"), (Call, "helper", 18, "total"), (Use, "Limit", 18, "total"), (Call, "name", 19, "total"), (Call, "save", 20, "total"), (Call, "find", 21, "total"), (Use, "count", 21, "total"), (Call, "max", 22, "total"), (Inherit, "Ordered", 26, "Point"), (Type, "Int", 26, "Point"), (Type, "Point", 26, "Point"), (Type, "User", 27, "Users"), (Call, "println", 28, "helper"), (Type, "Int", 28, "helper"), (Type, "Unit", 28, "helper")]"#,
            ),
        ];
        check_samples(samples.clone(), expected);
        for (l, src) in samples {
            let s = extract(l, src.as_bytes());
            let receivers: Vec<(&str, Receiver)> = s
                .references
                .iter()
                .filter(|r| r.receiver != Receiver::Unknown)
                .map(|r| (&*r.name, r.receiver))
                .collect();
            let mut expected = vec![
                ("find", Receiver::Type(1)),
                ("name", Receiver::This),
                ("save", Receiver::Type(0)),
            ];
            if l == Language::Kotlin {
                // `maximum(...)` through `import kotlin.math.max as maximum`.
                expected.insert(1, ("max", Receiver::Named(2)));
            }
            assert_eq!(receivers, expected, "{l:?}");
            assert_eq!(s.types, ["User", "Repo"], "{l:?}");
        }
        let kotlin = extract(Language::Kotlin, b"import a.b.max as maximum\nimport a.C\n");
        assert_eq!(kotlin.imports[0].alias.as_deref(), Some("maximum"));
        assert_eq!(kotlin.imports[1].alias, None);
        // The package declared, Scala's chained clauses joined.
        let package = |l: Language, src: &str| extract(l, src.as_bytes()).package;
        assert_eq!(
            package(Language::Kotlin, "package com.shop.web\n\nfun f() {}\n").as_deref(),
            Some("com.shop.web")
        );
        assert_eq!(package(Language::Kotlin, "fun f() {}\n"), None);
        assert_eq!(
            package(Language::Scala, "package a.b\npackage c\n\nobject O\n").as_deref(),
            Some("a.b.c")
        );
        assert_eq!(package(Language::Java, "package a;\nclass A {}\n"), None);
    }

    /// Scala's import statements, as `scala_imports` reads them.
    #[test]
    fn scala_import_statements() {
        let modules = |statement: &str| -> Vec<String> {
            scala_imports(statement)
                .into_iter()
                .map(|(m, _)| m)
                .collect()
        };
        assert_eq!(modules("import a.b.C"), ["a.b.C"]);
        assert_eq!(modules("import a.b._"), ["a.b"]);
        assert_eq!(modules("import a.b.*"), ["a.b"]);
        assert_eq!(modules("import a.b.given"), ["a.b"]);
        assert_eq!(modules("import a.b.C as D"), ["a.b.C"]);
        assert_eq!(
            modules("import a.b.{C, D => E, given, _}"),
            ["a.b.C", "a.b.D"]
        );
        assert_eq!(modules("import a.b.{\n  C,\n  D\n}"), ["a.b.C", "a.b.D"]);
        assert_eq!(modules("import a.B, c.d.{E, F}"), ["a.B", "c.d.E", "c.d.F"]);
        assert_eq!(modules("import a.b.{_, given}"), ["a.b"]);
        assert!(modules("import").is_empty());
    }

    /// C's includes name no items: a name written as a macro is a use (linked to a
    /// `#define` of the file or of what it includes), other names are not.
    #[test]
    fn c_names_written_as_macros_are_uses() {
        let source = "#include \"list.h\"\nint f(int n) { return n > LIST_MAX ? -EINVAL : X1 + x_max + A; }\n";
        let s = extract(Language::C, source.as_bytes());
        assert_eq!(
            format!("{:?}", refs(&s)),
            r#"[(Use, "EINVAL", 2, "f"), (Use, "LIST_MAX", 2, "f"), (Use, "X1", 2, "f")]"#
        );
        let python = extract(Language::Python, b"def f():\n    return LIST_MAX\n");
        assert!(python.references.is_empty());
        assert!(macro_like(b"O_RDONLY") && macro_like(b"X1"));
        assert!(
            !macro_like(b"A") && !macro_like(b"x_max") && !macro_like(b"__") && !macro_like(b"Foo")
        );
    }

    /// Lua (`local m = require "x"` binds `m`: `util.trim` is looked up in it) and
    /// Bash (commands are calls; `source "$DIR/x.sh"` is the file `x.sh`).
    #[test]
    fn definitions_imports_and_references_in_lua_and_bash() {
        let samples: Vec<(Language, &str)> = vec![
            (Language::Lua, "local util = require(\"app.util\")\nrequire \"app.log\"\nlocal LIMIT = 3\nCount = 0\nlocal M = {}\nfunction M.run(x)\n  util.trim(x)\n  helper(LIMIT)\n  return x:upper()\nend\nlocal function helper(n) Count = Count + n end\nlocal f = function() end\nreturn M\n"),
            (Language::Bash, "#!/bin/bash\nsource ./lib/util.sh\n. \"$DIR/common.sh\"\nLIMIT=3\nrun() {\n  helper \"$LIMIT\"\n  echo done\n}\nfunction helper { trim \"$1\"; }\nrun\n"),
        ];
        let expected: Vec<(&str, &str, &str)> = vec![
            (
                r#"[(Variable, "util", 1), (Variable, "LIMIT", 3), (Variable, "Count", 4), (Variable, "M", 5), (Function, "run", 6), (Function, "helper", 11), (Function, "f", 12)]"#,
                r#"[("app.util", [], 1), ("app.log", [], 2)]"#,
                r#"[(Call, "require", 1, "file"), (Call, "require", 2, "file"), (Use, "M", 6, "run"), (Call, "trim", 7, "run"), (Use, "util", 7, "run"), (Call, "helper", 8, "run"), (Use, "LIMIT", 8, "run"), (Call, "upper", 9, "run"), (Use, "Count", 11, "helper")]"#,
            ),
            (
                r#"[(Variable, "LIMIT", 4), (Function, "run", 5), (Function, "helper", 9)]"#,
                r#"[("./lib/util.sh", [], 2), ("\"$DIR/common.sh\"", [], 3)]"#,
                r#"[(Call, "source", 2, "file"), (Call, ".", 3, "file"), (Call, "helper", 6, "run"), (Use, "LIMIT", 6, "run"), (Call, "echo", 7, "run"), (Call, "trim", 9, "helper"), (Call, "run", 10, "file")]"#,
            ),
        ];
        check_samples(samples, expected);
    }

    #[test]
    fn deeply_nested_use_trees_are_cut_off_not_a_stack_overflow() {
        let nest = |depth: usize| format!("a::{}b{}", "{x::".repeat(depth), "}".repeat(depth));
        assert_eq!(flatten_use(&nest(200_000)), (vec![], true));
        let module = format!("a{}", "::x".repeat(MAX_USE_DEPTH));
        assert_eq!(
            flatten_use(&nest(MAX_USE_DEPTH)),
            (vec![(module, Some("b".into()))], false)
        );
        let source = format!("use {};\nfn f() {{}}\n", nest(50));
        let symbols = extract(Language::Rust, source.as_bytes());
        assert_eq!(symbols.definitions.len(), 1);
        assert_eq!(
            symbols.truncated,
            ["nesting deeper than 32 use-tree levels: truncated"]
        );
        let source = format!("use {};\nfn f() {{}}\n", nest(2_000));
        let symbols = extract(Language::Rust, source.as_bytes());
        assert_eq!(symbols.definitions.len(), 1);
        assert!(symbols.truncated.contains(&too_deep(MAX_TREE_DEPTH)));
    }

    fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
        format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
    }

    /// Hostile files of every language (deep nesting, long chains, huge import
    /// lists): each is indexed (what lies within the limits is found) and says
    /// whether it was cut. They once took 40 s to minutes each, or overflowed the
    /// stack; the bound here is only that they finish (timings are in the commit
    /// messages and `examples/pathological.rs`). Run on a thread with a small stack:
    /// nothing recurses over the input.
    /// The depth of the deepest node, by a walk of every node.
    fn max_depth(tree: &tree_sitter::Tree) -> u32 {
        let mut cursor = tree.walk();
        let (mut depth, mut deepest) = (0u32, 0u32);
        loop {
            if cursor.goto_first_child() {
                depth += 1;
                deepest = deepest.max(depth);
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return deepest;
                }
                depth -= 1;
            }
        }
    }

    /// `deeper_than` skips nodes with too few descendants to reach past the limit:
    /// it answers as a walk of every node does, at and around the limit, for
    /// nesting alone, beside wide siblings, and after a deep node early in a file.
    #[test]
    fn deeper_than_agrees_with_a_full_walk() {
        let mut sources: Vec<(Language, String)> = Vec::new();
        for depth in [1, 40, 83, 84, 85, 86, 120, 127, 128, 129, 130, 300] {
            let deep = nested("f(", "x", ")", depth);
            sources.push((Language::Python, format!("{deep}\n")));
            sources.push((
                Language::C,
                format!("int a[] = {{1, 2, 3}};\nvoid g(void) {{ {deep}; h(1, 2, 3); }}\nint b;\n"),
            ));
            sources.push((
                Language::JavaScript,
                format!("{}\n{deep};\n", "let q = [1, [2, [3, [4]]]];\n".repeat(20)),
            ));
        }
        let mut checked = 0;
        for (language, source) in &sources {
            let tree = parse_tree(*language, source.as_bytes()).unwrap();
            let deepest = max_depth(&tree);
            for limit in deepest.saturating_sub(3)..deepest + 3 {
                assert_eq!(
                    deeper_than(&tree, limit),
                    deepest > limit,
                    "{language:?} depth {deepest} limit {limit}"
                );
                checked += 1;
            }
            assert!(!deeper_than(&tree, deepest));
            assert!(deepest == 0 || deeper_than(&tree, deepest - 1));
        }
        assert_eq!(checked, sources.len() * 6);
    }

    #[test]
    fn pathological_files_finish_and_say_what_was_cut() {
        let imports = (0..2_500)
            .map(|i| format!("a{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let deep = too_deep(MAX_TREE_DEPTH);
        let cases: Vec<(Language, String, usize, bool)> = vec![
            // (language, source, references at least, truncated)
            (
                Language::JavaScript,
                format!("import {{{imports}}} from \"./m\";\n"),
                2_500,
                false,
            ),
            (
                Language::TypeScript,
                format!("import {{{imports}}} from \"./m\";\n"),
                2_500,
                false,
            ),
            (Language::Python, nested("f(", "x", ")", 60_000), 50, true),
            (
                Language::Python,
                format!("a{}\n", ".b".repeat(200_000)),
                0,
                true,
            ),
            (Language::Python, nested("[", "", "]", 100_000), 0, true),
            (
                Language::Rust,
                format!("use a::{};\n", nested("b::{", "c", "}", 250_000)),
                0,
                true,
            ),
            (
                Language::Rust,
                format!("fn m() {{ {}; }}\n", nested("f(", "x", ")", 60_000)),
                50,
                true,
            ),
            (Language::JavaScript, nested("[", "", "]", 100_000), 0, true),
            (
                Language::JavaScript,
                nested("f(", "x", ")", 60_000),
                50,
                true,
            ),
            (
                Language::JavaScript,
                format!("a{}\n", ".b".repeat(200_000)),
                0,
                true,
            ),
            (Language::Tsx, nested("f(", "x", ")", 60_000), 50, true),
            (Language::TypeScript, nested("{", "", "}", 100_000), 0, true),
            (
                Language::Go,
                format!(
                    "package p\nfunc m() {{ {} }}\n",
                    nested("f(", "x", ")", 60_000)
                ),
                50,
                true,
            ),
            (
                Language::Java,
                format!(
                    "class A {{ void m() {{ {}; }} }}\n",
                    nested("f(", "x", ")", 60_000)
                ),
                50,
                true,
            ),
            (
                Language::Java,
                format!("class A {{ void m() {} }}\n", nested("{", "", "}", 100_000)),
                0,
                true,
            ),
            (
                Language::Python,
                (0..20_000)
                    .map(|i| format!("def f{i}():\n    g{i}()\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::C,
                format!("int m() {{ {}; }}\n", nested("f(", "x", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::C,
                format!("int m() {} \n", nested("{", "", "}", 30_000)),
                0,
                true,
            ),
            (
                Language::C,
                nested("#if X\n", "int x;\n", "#endif\n", 5_000),
                0,
                true,
            ),
            (
                Language::C,
                (0..20_000)
                    .map(|i| format!("int f{i}(void) {{ return g{i}(); }}\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Cpp,
                format!(
                    "namespace n {{ void m() {{ {}; }} }}\n",
                    nested("f(", "x", ")", 20_000)
                ),
                50,
                true,
            ),
            (
                Language::Cpp,
                nested("namespace a { ", "", "}", 20_000),
                0,
                true,
            ),
            (
                Language::CSharp,
                format!(
                    "class A {{ void M() {{ {}; }} }}\n",
                    nested("f(", "x", ")", 20_000)
                ),
                50,
                true,
            ),
            (
                Language::CSharp,
                nested("class A { ", "", "}", 20_000),
                0,
                true,
            ),
            (Language::Ruby, nested("f(", "x", ")", 20_000), 50, true),
            (Language::Ruby, nested("[", "", "]", 30_000), 0, true),
            (
                Language::Ruby,
                (0..20_000)
                    .map(|i| format!("def f{i}\n  g{i}(1)\nend\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Php,
                format!("<?php\n{};\n", nested("f(", "x", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::Php,
                format!("<?php\n{}\n", nested("[", "", "]", 30_000)),
                0,
                true,
            ),
            (Language::Lua, nested("f(", "x", ")", 20_000), 50, true),
            (
                Language::Lua,
                format!("x = {}\n", nested("{", "", "}", 30_000)),
                0,
                true,
            ),
            (
                Language::Lua,
                (0..20_000)
                    .map(|i| format!("function f{i}() g{i}() end\n"))
                    .collect(),
                20_000,
                false,
            ),
            (Language::Bash, nested("$(f ", "x", ")", 30_000), 0, true),
            (
                Language::Cpp,
                (0..20_000)
                    .map(|i| format!("void f{i}() {{ g{i}(); }}\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::CSharp,
                format!(
                    "class A {{\n{}}}\n",
                    (0..20_000)
                        .map(|i| format!("void F{i}() {{ G{i}(); }}\n"))
                        .collect::<String>()
                ),
                20_000,
                false,
            ),
            (
                Language::Php,
                format!(
                    "<?php\n{}",
                    (0..20_000)
                        .map(|i| format!("function f{i}() {{ g{i}(); }}\n"))
                        .collect::<String>()
                ),
                20_000,
                false,
            ),
            (
                Language::Bash,
                (0..20_000)
                    .map(|i| format!("f{i}() {{ g{i}; }}\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Bash,
                nested("f() { g; ", "true", "; }", 20_000),
                10,
                true,
            ),
            (
                Language::Kotlin,
                format!("fun m() {{ {} }}\n", nested("f(", "x", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::Kotlin,
                format!("val x = {}\n", nested("listOf(", "", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::Kotlin,
                nested("class A { ", "", "}\n", 20_000),
                0,
                true,
            ),
            (
                Language::Kotlin,
                format!("val x = a{}\n", ".b".repeat(100_000)),
                0,
                true,
            ),
            (
                Language::Kotlin,
                (0..20_000)
                    .map(|i| format!("fun f{i}() {{ g{i}() }}\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Swift,
                format!("func m() {{ {} }}\n", nested("f(", "x", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::Swift,
                format!("let x = {}\n", nested("[", "", "]", 30_000)),
                0,
                true,
            ),
            (
                Language::Swift,
                nested("class A { ", "", "}\n", 20_000),
                0,
                true,
            ),
            (
                Language::Swift,
                (0..20_000)
                    .map(|i| format!("func f{i}() {{ g{i}() }}\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Scala,
                format!("def m = {}\n", nested("f(", "x", ")", 20_000)),
                50,
                true,
            ),
            (
                Language::Scala,
                nested("object A { ", "", "}\n", 20_000),
                0,
                true,
            ),
            (
                Language::Scala,
                format!("val x = a{}\n", ".b".repeat(100_000)),
                0,
                true,
            ),
            (
                Language::Scala,
                format!("import a.{{{imports}}}\n"),
                0,
                false,
            ),
            (
                Language::Scala,
                (0..20_000)
                    .map(|i| format!("def f{i}() = g{i}()\n"))
                    .collect(),
                20_000,
                false,
            ),
            (
                Language::Python,
                format!("import m\n{}", "m.f()\n".repeat(100_000)),
                1,
                false,
            ),
        ];
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                for (i, (language, source, references, cut)) in cases.into_iter().enumerate() {
                    let s = extract(language, source.as_bytes());
                    assert!(
                        s.references.len() >= references,
                        "case {i}: {}",
                        s.references.len()
                    );
                    assert_eq!(
                        s.truncated.contains(&deep),
                        cut,
                        "case {i}: {:?}",
                        s.truncated
                    );
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// Past its budget, the query stops, keeps what it found and says so.
    #[test]
    fn the_time_budget_cuts_extraction_off() {
        let source = "def f():\n    g()\n".repeat(50_000);
        let s = extract_within(
            Language::Python,
            source.as_bytes(),
            std::time::Duration::ZERO,
        );
        assert!(
            s.truncated.iter().any(|t| t.contains("budget")),
            "{:?}",
            s.truncated
        );
        let s = extract(Language::Python, source.as_bytes());
        assert!(s.truncated.is_empty());
        assert_eq!(s.definitions.len(), 50_000);
        // Every grammar's parse is given up past its budget (PHP's outside `<?php`
        // is one text token: no work to cut).
        let php = format!("<?php\n{source}");
        for language in Language::ALL {
            let source = if language == Language::Php {
                &php
            } else {
                &source
            };
            let s = extract_within(language, source.as_bytes(), std::time::Duration::ZERO);
            assert_eq!(s.truncated, [over_budget("parsing")], "{language:?}");
            assert!(s.definitions.is_empty() && s.syntax_errors, "{language:?}");
        }
    }

    /// One deadline covers every phase: a tree parsed in time but queried past the
    /// deadline keeps what the query found first and says which phases ran out;
    /// references past it are not resolved (the first 1,024 are), and random bytes
    /// in Lua and Scala,
    /// 500 KB of them, are parsed, queried and resolved within the budget.
    #[test]
    fn every_phase_stops_at_the_files_deadline() {
        let source = "def f():\n    g()\n".repeat(5_000);
        let tree = parse_tree(Language::Python, source.as_bytes()).unwrap();
        let past = std::time::Instant::now();
        let s = extract_tree(Language::Python, source.as_bytes(), &tree, past);
        assert_eq!(s.truncated.first(), Some(&over_budget("the query")));
        // What the query matched before its first look at the clock stays.
        assert!(s.definitions.len() < 5_000 && s.references.len() <= 1_024);
        let later = past + FILE_BUDGET;
        let s = extract_tree(Language::Python, source.as_bytes(), &tree, later);
        assert!(s.truncated.is_empty());
        assert_eq!((s.definitions.len(), s.references.len()), (5_000, 5_000));

        let found = || -> Vec<Found> {
            (0..3_000)
                .map(|i| Found {
                    kind: RefKind::Call,
                    name: format!("g{i}"),
                    line: i + 1,
                    byte: i * 10,
                    receiver: None,
                    bare: false,
                })
                .collect()
        };
        let (refs, _, cut) = resolve_origins(Language::Python, found(), &[], &[], &[], later);
        assert_eq!((refs.len(), cut), (3_000, false));
        let (refs, _, cut) = resolve_origins(Language::Python, found(), &[], &[], &[], past);
        assert_eq!((refs.len(), cut), (1_024, true));

        // Random bytes without NUL (a fixed xorshift), were they not refused as
        // binary first (`scan::binary_reason`): within the budget, with a note if cut.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let noise: Vec<u8> = (0..500_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 56) as u8 | 1
            })
            .collect();
        for language in [Language::Lua, Language::Scala] {
            language.query(); // compiled once a process, outside any file's budget
            let start = std::time::Instant::now();
            let s = extract_within(language, &noise, std::time::Duration::from_secs(2));
            let took = start.elapsed();
            assert!(
                took < std::time::Duration::from_secs(4),
                "{language:?}: {took:?}"
            );
            if took >= std::time::Duration::from_secs(2) {
                assert!(
                    s.truncated.iter().any(|t| t.contains("budget")),
                    "{language:?}: {:?}",
                    s.truncated
                );
            }
        }
    }

    /// The patterns left out of a grammar's tags query are still in it (else a new
    /// version of the crate changed them, and they would stay in unnoticed).
    #[test]
    fn dropped_tags_patterns_are_in_their_queries() {
        for (language, pattern) in DROPPED_TAGS {
            let tags = match language {
                Language::CSharp => tree_sitter_c_sharp::TAGS_QUERY,
                Language::Ruby => tree_sitter_ruby::TAGS_QUERY,
                Language::Php => tree_sitter_php::TAGS_QUERY,
                Language::Swift => tree_sitter_swift::TAGS_QUERY,
                _ => unreachable!("only these drop patterns"),
            };
            assert!(tags.contains(pattern), "{language:?}: {pattern}");
        }
    }

    #[test]
    fn every_language_query_compiles() {
        for l in Language::ALL {
            let _ = l.query();
        }
    }

    /// TypeScript the grammar does not know (variance modifiers, `export type *`)
    /// parses once blanked, with every byte at its place; look-alikes elsewhere
    /// are left alone.
    #[test]
    fn typescript_the_grammar_lacks_parses_without_errors() {
        let source = "export interface A<out O = unknown, in I, in out T extends B> extends C<O> {\n  x: O;\n}\ntype F<in I, out O> = (i: I) => O;\nexport type * from \"./m\";\nexport function run(a: A<number, string, B>): void { helper(a); }\n";
        for language in [Language::TypeScript, Language::Tsx] {
            let s = extract(language, source.as_bytes());
            assert!(!s.syntax_errors, "{language:?}");
            assert_eq!(s.error_line, None);
            assert_eq!(
                format!("{:?}", summary(&s)),
                r#"[(Class, "A", 1), (Function, "run", 6)]"#
            );
            assert_eq!(
                &*s.definitions[0].signature,
                "interface A<out O = unknown, in I, in out T extends B> extends C<O> {"
            );
            assert_eq!(imports(&s), [("./m".to_string(), vec![], 5)]);
        }
        let patched =
            |s: &str| typescript_patched(s.as_bytes()).map(|p| String::from_utf8(p).unwrap());
        assert_eq!(
            patched("interface A<out O> {}").as_deref(),
            Some("interface A<    O> {}")
        );
        assert_eq!(
            patched("type B<in out T,>=T;").as_deref(),
            Some("type B<       T,>=T;")
        );
        assert_eq!(
            patched("export  type * as n from 'm';").as_deref(),
            Some("export       * as n from 'm';")
        );
        // Not a type parameter: no name after the word, a line break, or no `,`, `>`,
        // `=` or `extends` after the name; `export type {` and `exporter type *`.
        for same in [
            "f(a, out)",
            "x = a,\nout\nb",
            "for (const k in o) {}",
            "a < out b + c",
            "export type { A } from 'm';",
            "exporter type * 2",
            "let v = x < in_ ? 1 : 2",
        ] {
            assert_eq!(patched(same), None, "{same}");
        }
    }

    /// A syntax error is placed where the parser failed, not at the start of the
    /// error node wrapping it; a file without errors has no line.
    #[test]
    fn syntax_errors_name_the_line_where_parsing_failed() {
        let line = |l: Language, src: &str| extract(l, src.as_bytes()).error_line;
        assert_eq!(
            line(
                Language::Python,
                "def ok():\n    pass\n\ndef broken(:\n    pass\n"
            ),
            Some(4)
        );
        assert_eq!(line(Language::Python, "x = 1\n"), None);
        // tree-sitter-python fails on a line inside brackets indented less than the
        // block (valid Python): the error wraps the whole class, its line is 4.
        let dedent = "import os\n\nclass T:\n    def f(self):\n        def g():\n            (bar.\n        baz)\n        return g\n";
        let s = extract(Language::Python, dedent.as_bytes());
        assert!(s.syntax_errors);
        assert_eq!(s.error_line, Some(6));
        assert_eq!(
            line(
                Language::Java,
                "class A {\n  void m() {\n    int x = ;\n  }\n}\n"
            ),
            Some(3)
        );
        assert_eq!(
            line(Language::TypeScript, "let a = 1;\nlet b = (;\n"),
            Some(2)
        );
    }

    #[test]
    fn broken_and_binary_input_does_not_panic() {
        let s = extract(Language::Python, b"def ok():\n    pass\n\ndef broken(:\n");
        assert!(s.syntax_errors);
        assert_eq!(&*s.definitions[0].name, "ok");
        let junk: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for l in Language::ALL {
            let _ = extract(l, &junk);
        }
        let latin1 = extract(Language::Python, b"def caf\xe9():\n    pass\n");
        assert_eq!(latin1.definitions.len(), 1);
    }
}

#[cfg(test)]
mod containers {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `Definition::containers` is the latest earlier definition that
        /// contains each, nested or overlapping, equal or not, in start order or
        /// not.
        #[test]
        fn containers_are_the_latest_that_contain(
            spans in proptest::collection::vec((0u32..40, 0u32..12, 0u8..3, any::<bool>()), 0..40),
            sort in any::<bool>(),
        ) {
            let mut defs: Vec<Definition> = spans
                .iter()
                .map(|&(start, len, name, function)| Definition {
                    kind: if function { DefKind::Function } else { DefKind::Class },
                    name: format!("n{name}").into(),
                    signature: "".into(),
                    line: 1,
                    end_line: 1,
                    start_byte: start,
                    end_byte: start + len,
                })
                .collect();
            if sort {
                defs.sort_by_key(|d| d.start_byte);
            }
            let slow: Vec<Option<usize>> = (0..defs.len())
                .map(|i| (0..i).rev().find(|&j| defs[j].contains(&defs[i])))
                .collect();
            prop_assert_eq!(Definition::containers(&defs), slow);
        }
    }
}
