; C#, on top of its tags query (definitions of classes, interfaces and methods;
; `new` and declared types; calls on a member, `@reference.send`).
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
