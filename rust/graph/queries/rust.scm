; Rust, on top of its tags query: `use` trees (read by `flatten_use`), `mod x;` (a
; child module in its own file), calls of a path (`a::f()`), supertraits, `const`
; and `static` items.
(use_declaration argument: (_) @import.module) @import
(mod_item name: (identifier) @import.submodule !body) @import
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(trait_item bounds: (trait_bounds [(type_identifier) @inherit (generic_type type: (type_identifier) @inherit)]))
(const_item name: (identifier) @name) @definition.variable
(static_item name: (identifier) @name) @definition.variable
