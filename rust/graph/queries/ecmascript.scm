; JavaScript and TypeScript (javascript.scm and typescript.scm follow it): imports
; (`import`, `export ... from`, `require`), file-level functions and variables, the
; constructed class of variables and of `this` attributes.
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
