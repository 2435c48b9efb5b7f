; Go, on top of its tags query: imports (a package name too), embedded structs and
; interfaces as bases, package-level `var` and `const`, the declared or constructed
; type of variables and parameters.
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
