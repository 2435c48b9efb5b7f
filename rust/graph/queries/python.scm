; Python, on top of its tags query (classes, functions, calls): imports (`import a.b
; as c`, `from m import x as y`), base classes (generic ones too), `@overload`
; stubs, types in annotations, the declared or constructed class of variables and
; parameters, and of `self` attributes and annotated class attributes.
(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import
(import_from_statement module_name: (_) @import.module) @import
(import_from_statement name: (dotted_name) @import.item) @import
(import_from_statement name: (aliased_import name: (dotted_name) @import.item alias: (identifier) @import.item_alias)) @import
(class_definition superclasses: (argument_list [(identifier) @inherit (attribute attribute: (identifier) @inherit)]))
; A generic base (`Base[int]`, `typing.Generic[T]`, `mod.Base[K, V]`) is its class.
(class_definition superclasses: (argument_list (subscript value: [(identifier) @inherit (attribute attribute: (identifier) @inherit)])))
; `@overload` and `@typing.overload` stubs: folded into their implementation (see
; `extract::fold_overloads`).
(decorated_definition (decorator [(identifier) @_overload (attribute attribute: (identifier) @_overload)]) definition: (function_definition) @overload (#eq? @_overload "overload"))
(type (identifier) @ref)
(type (generic_type (identifier) @ref))
(assignment left: (identifier) @bind.name right: (call function: [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(assignment left: (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(typed_parameter (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
(typed_default_parameter name: (identifier) @bind.name type: (type [(identifier) @bind.type (attribute attribute: (identifier) @bind.type)]))
((assignment left: (attribute object: (identifier) @_self attribute: (identifier) @attr.name) right: (call function: [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])) (#eq? @_self "self"))
((assignment left: (attribute object: (identifier) @_self attribute: (identifier) @attr.name) type: (type [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])) (#eq? @_self "self"))
(class_definition body: (block (expression_statement (assignment left: (identifier) @attr.name type: (type [(identifier) @attr.type (attribute attribute: (identifier) @attr.type)])))))
