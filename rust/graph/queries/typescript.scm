; TypeScript and TSX: ecmascript.scm, then base classes, implemented interfaces and
; extended interfaces; the declared class of variables and parameters, of fields and
; of parameter properties (`constructor(private x: C)`).
(extends_clause value: [(identifier) @inherit (member_expression property: (property_identifier) @inherit)])
(implements_clause [(type_identifier) @inherit (generic_type name: (type_identifier) @inherit)])
(extends_type_clause type: [(type_identifier) @inherit (generic_type name: (type_identifier) @inherit)])
(variable_declarator name: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(required_parameter pattern: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(optional_parameter pattern: (identifier) @bind.name type: (type_annotation [(type_identifier) @bind.type (generic_type name: (type_identifier) @bind.type)]))
(public_field_definition name: (property_identifier) @attr.name type: (type_annotation [(type_identifier) @attr.type (generic_type name: (type_identifier) @attr.type)]))
(required_parameter (accessibility_modifier) pattern: (identifier) @attr.name type: (type_annotation [(type_identifier) @attr.type (generic_type name: (type_identifier) @attr.type)]))
