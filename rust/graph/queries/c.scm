; C and C++ (whose own tags queries capture a function's declarator rather than
; its definition, count prototypes and `enum e x;` uses as definitions, and have no
; calls): definitions with bodies, file-level variables (not `extern` declarations),
; macros, `#include` (`"x.h"` as `x.h`, `<x.h>` with its brackets), calls, types.
; C++ adds cpp.scm after these.
(preproc_include path: (string_literal (string_content) @import.module)) @import
(preproc_include path: (system_lib_string) @import.module) @import
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.constant
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(translation_unit (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_if (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_ifdef (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_else (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(preproc_elif (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(declaration_list (declaration declarator: [(identifier) @name (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) (pointer_declarator declarator: (identifier) @name) (array_declarator declarator: (identifier) @name)]) @definition.variable (#not-match? @definition.variable "^extern"))
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
[(parameter_declaration type: (type_identifier) @ref) (field_declaration type: (type_identifier) @ref) (declaration type: (type_identifier) @ref) (function_definition type: (type_identifier) @ref) (type_definition type: (type_identifier) @ref) (type_descriptor type: (type_identifier) @ref)]
[(parameter_declaration type: (_ name: (type_identifier) @ref !body)) (field_declaration type: (_ name: (type_identifier) @ref !body)) (declaration type: (_ name: (type_identifier) @ref !body)) (function_definition type: (_ name: (type_identifier) @ref !body)) (type_definition type: (_ name: (type_identifier) @ref !body)) (type_descriptor type: (_ name: (type_identifier) @ref !body))]
