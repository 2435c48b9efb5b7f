; Scala (2 and 3). The crate's tags query (queries/tags.scm, MIT) is not exported;
; these patterns follow it, less its locals as definitions (`val`s inside
; functions) and with objects as classes: classes, objects, traits, enums and their
; cases with parameters, functions (abstract ones too), type aliases, file-level and
; member `val`/`var`/`given`, class parameters; calls (plain, on a receiver,
; generic, infix `a max b`); `new C` and types in declarations; supertypes
; (`extends A with B`); imports (the statement as written: see `scala_imports`);
; the declared or constructed class of values and parameters.
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
