; Ruby, on top of its tags query (methods, classes, calls with `method:`) without
; its pattern that makes every identifier a call: here a bare identifier is a call
; only where a statement or an argument can be one, and not when the file assigns
; or takes a parameter of that name (`@local`).
((call method: (identifier) @_require arguments: (argument_list . (string . (string_content) @import.module .))) @import (#any-of? @_require "require" "load"))
((call method: (identifier) @_require arguments: (argument_list . (string . (string_content) @import.relative .))) @import (#eq? @_require "require_relative"))
(module name: [(constant) @name (scope_resolution name: (constant) @name)]) @definition.class
(assignment left: (constant) @name) @definition.constant
(call receiver: [(constant) @name (scope_resolution name: (constant) @name)] method: (identifier) @_new (#eq? @_new "new")) @reference.call
(body_statement (identifier) @name @reference.bare)
(block_body (identifier) @name @reference.bare)
(then (identifier) @name @reference.bare)
(else (identifier) @name @reference.bare)
(begin (identifier) @name @reference.bare)
(parenthesized_statements (identifier) @name @reference.bare)
(argument_list (identifier) @name @reference.bare)
(assignment right: (identifier) @name @reference.bare)
(binary left: (identifier) @name @reference.bare)
(binary right: (identifier) @name @reference.bare)
(array (identifier) @name @reference.bare)
(pair value: (identifier) @name @reference.bare)
[(if condition: (identifier) @name @reference.bare) (unless condition: (identifier) @name @reference.bare) (while condition: (identifier) @name @reference.bare) (until condition: (identifier) @name @reference.bare)]
(call receiver: (identifier) @name @reference.bare)
(method body: (identifier) @name @reference.bare)
(superclass [(constant) @inherit (scope_resolution name: (constant) @inherit)])
((call method: (identifier) @_mixin arguments: (argument_list [(constant) @inherit (scope_resolution name: (constant) @inherit)])) (#any-of? @_mixin "include" "extend" "prepend"))
(assignment left: (identifier) @local)
(operator_assignment left: (identifier) @local)
(left_assignment_list (identifier) @local)
[(method_parameters (identifier) @local) (block_parameters (identifier) @local) (lambda_parameters (identifier) @local)]
[(optional_parameter name: (identifier) @local) (keyword_parameter name: (identifier) @local) (splat_parameter name: (identifier) @local) (hash_splat_parameter name: (identifier) @local) (block_parameter name: (identifier) @local)]
(for pattern: (identifier) @local)
(exception_variable (identifier) @local)
