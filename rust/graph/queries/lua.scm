; Lua, on top of its tags query (functions, methods, functions in tables, calls):
; `require "a.b"` (`local m = require "a.b"` binds `m`), file-level variables.
((function_call name: (identifier) @_require arguments: (arguments . (string content: (string_content) @import.module))) @import (#eq? @_require "require"))
((assignment_statement (variable_list . name: (identifier) @import.alias) (expression_list . value: (function_call name: (identifier) @_require arguments: (arguments . (string content: (string_content) @import.module))) @import)) (#eq? @_require "require"))
(chunk (variable_declaration (assignment_statement (variable_list name: (identifier) @name)) @definition.variable))
(chunk (variable_declaration (variable_list name: (identifier) @name) @definition.variable))
(chunk (assignment_statement (variable_list name: (identifier) @name)) @definition.variable)
