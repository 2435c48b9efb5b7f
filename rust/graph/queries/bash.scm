; Bash (its crate has no tags query): functions, commands as calls, `source x`
; and `. x` as imports, file-level variables.
(function_definition name: (word) @name) @definition.function
(command name: (command_name (word) @name)) @reference.call
((command name: (command_name (word) @_source) argument: [(word) (string) (raw_string) (concatenation)] @import.module) @import (#any-of? @_source "source" "."))
(program (variable_assignment name: (variable_name) @name) @definition.variable)
(program (declaration_command (variable_assignment name: (variable_name) @name)) @definition.variable)
