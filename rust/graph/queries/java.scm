; Java, on top of its tags query: imports, superclasses, implemented and extended
; interfaces, fields; the declared class of variables (`var x = new C()` too),
; parameters and fields.
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
(superclass [(type_identifier) @inherit (generic_type (type_identifier) @inherit)])
(super_interfaces (type_list [(type_identifier) @inherit (generic_type (type_identifier) @inherit)]))
(extends_interfaces (type_list [(type_identifier) @inherit (generic_type (type_identifier) @inherit)]))
(class_body (field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.variable)
((local_variable_declaration type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)] declarator: (variable_declarator name: (identifier) @bind.name)) (#not-eq? @bind.type "var"))
((local_variable_declaration type: (type_identifier) @_var declarator: (variable_declarator name: (identifier) @bind.name value: (object_creation_expression type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)]))) (#eq? @_var "var"))
(formal_parameter type: [(type_identifier) @bind.type (generic_type (type_identifier) @bind.type)] name: (identifier) @bind.name)
(field_declaration type: [(type_identifier) @attr.type (generic_type (type_identifier) @attr.type)] declarator: (variable_declarator name: (identifier) @attr.name))
