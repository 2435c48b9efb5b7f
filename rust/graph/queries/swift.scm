; Swift, on top of its tags query (classes, structs, enums, actors, protocols,
; functions) less its patterns whose definition is the whole class (`DROPPED_TAGS`
; in extract/language.rs): `import M`, protocol requirements, `init`/`deinit`,
; file-level and stored properties (a computed property is a function: its body
; runs code), calls, supertypes and conformances (an `extension` is no definition:
; its methods are the file's, as Rust's `impl`, and the type it extends is a type
; reference), types, the declared or constructed class of properties and parameters.
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
