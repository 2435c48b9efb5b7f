; C++: c.scm, then methods, operators and destructors (qualified or not, returning
; a pointer or a reference), classes, aliases, fields; qualified, template and
; template-method calls; base classes; `new` and template arguments as types.
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
