; Kotlin (its crate has no tags query): classes, interfaces, objects, functions,
; constructors and `init` blocks, type aliases, file-level and class properties
; (`val`/`var` constructor parameters too); calls, plain or on a receiver;
; `import a.b.C` (`as x` binds `x`); supertypes; types named in declarations; the
; declared or constructed class of properties and parameters. A type's name is the
; last identifier of its `user_type` (`a.b.C<T>` is `C`).
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
