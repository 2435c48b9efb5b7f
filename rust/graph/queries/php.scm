; PHP, on top of its tags query (classes, interfaces, traits, functions, methods;
; qualified, scoped and member calls; `new`), less its patterns for implemented
; interfaces (bases here) and calls through a variable (`$f()`).
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
