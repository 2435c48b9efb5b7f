; JavaScript: ecmascript.scm, then base classes (`extends B`, `extends m.B`).
(class_heritage [(identifier) @inherit (member_expression property: (property_identifier) @inherit)])
