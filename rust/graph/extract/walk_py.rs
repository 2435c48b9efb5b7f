//! Python's matches without the query cursor, as `walk_c` finds C's: one walk of
//! the tree that finds what the grammar's tags query, `queries/python.scm` and
//! `(identifier) @use` would, match for match and in the order the cursor gives
//! them. A test holds the two to the same symbols, and `examples/extract_time.rs`
//! compares them on real files.

use std::time::Instant;

use tree_sitter::Node;

use super::walk_c::{field, run, Children, Matches, Patterns, Walked};

/// The capture indices of the Python query (`Query::capture_names`), by name.
pub(super) struct Captures {
    name: u32,
    constant: u32,
    class: u32,
    function: u32,
    call: u32,
    import: u32,
    module: u32,
    alias: u32,
    item: u32,
    item_alias: u32,
    inherit: u32,
    overload_name: u32,
    overload: u32,
    reference: u32,
    bind_name: u32,
    bind_type: u32,
    self_: u32,
    attr_name: u32,
    attr_type: u32,
}

impl Captures {
    /// The indices in `names`; None when one is missing (the query changed).
    pub(super) fn of(names: &[&str]) -> Option<Captures> {
        let at = |name: &str| names.iter().position(|n| *n == name).map(|i| i as u32);
        Some(Captures {
            name: at("name")?,
            constant: at("definition.constant")?,
            class: at("definition.class")?,
            function: at("definition.function")?,
            call: at("reference.call")?,
            import: at("import")?,
            module: at("import.module")?,
            alias: at("import.alias")?,
            item: at("import.item")?,
            item_alias: at("import.item_alias")?,
            inherit: at("inherit")?,
            overload_name: at("_overload")?,
            overload: at("overload")?,
            reference: at("ref")?,
            bind_name: at("bind.name")?,
            bind_type: at("bind.type")?,
            self_: at("_self")?,
            attr_name: at("attr.name")?,
            attr_type: at("attr.type")?,
        })
    }
}

/// The grammar's ids of the kinds and fields the patterns name.
struct Ids {
    module: u16,
    expression_statement: u16,
    assignment: u16,
    identifier: u16,
    class_definition: u16,
    function_definition: u16,
    call: u16,
    attribute: u16,
    import_statement: u16,
    import_from_statement: u16,
    dotted_name: u16,
    aliased_import: u16,
    argument_list: u16,
    subscript: u16,
    decorated_definition: u16,
    decorator: u16,
    type_: u16,
    generic_type: u16,
    typed_parameter: u16,
    typed_default_parameter: u16,
    block: u16,
    f_left: u16,
    f_right: u16,
    f_type: u16,
    f_name: u16,
    f_function: u16,
    f_attribute: u16,
    f_object: u16,
    f_alias: u16,
    f_module_name: u16,
    f_superclasses: u16,
    f_value: u16,
    f_definition: u16,
    f_body: u16,
}

impl Ids {
    fn of(language: &tree_sitter::Language) -> Option<Ids> {
        let kind = |name: &str| Some(language.id_for_node_kind(name, true)).filter(|&id| id != 0);
        let field = |name: &str| language.field_id_for_name(name).map(|id| id.get());
        Some(Ids {
            module: kind("module")?,
            expression_statement: kind("expression_statement")?,
            assignment: kind("assignment")?,
            identifier: kind("identifier")?,
            class_definition: kind("class_definition")?,
            function_definition: kind("function_definition")?,
            call: kind("call")?,
            attribute: kind("attribute")?,
            import_statement: kind("import_statement")?,
            import_from_statement: kind("import_from_statement")?,
            dotted_name: kind("dotted_name")?,
            aliased_import: kind("aliased_import")?,
            argument_list: kind("argument_list")?,
            subscript: kind("subscript")?,
            decorated_definition: kind("decorated_definition")?,
            decorator: kind("decorator")?,
            type_: kind("type")?,
            generic_type: kind("generic_type")?,
            typed_parameter: kind("typed_parameter")?,
            typed_default_parameter: kind("typed_default_parameter")?,
            block: kind("block")?,
            f_left: field("left")?,
            f_right: field("right")?,
            f_type: field("type")?,
            f_name: field("name")?,
            f_function: field("function")?,
            f_attribute: field("attribute")?,
            f_object: field("object")?,
            f_alias: field("alias")?,
            f_module_name: field("module_name")?,
            f_superclasses: field("superclasses")?,
            f_value: field("value")?,
            f_definition: field("definition")?,
            f_body: field("body")?,
        })
    }
}

/// The matches of Python's query in `tree` (see `walk_c::walk`); None when the
/// grammar lacks a kind or field the patterns name.
pub(super) fn walk<'tree>(
    tree: &'tree tree_sitter::Tree,
    source: &[u8],
    captures: &Captures,
    deadline: Instant,
) -> Option<Walked<'tree>> {
    let ids = Ids::of(&tree.language())?;
    let identifier = ids.identifier;
    let walker = Walker {
        ids,
        c: captures,
        source,
        found: Matches::default(),
        children: Children::new(tree),
    };
    Some(run(tree, identifier, deadline, walker))
}

struct Walker<'a, 'tree> {
    ids: Ids,
    c: &'a Captures,
    source: &'a [u8],
    found: Matches<'tree>,
    children: Children<'tree>,
}

impl<'tree> Patterns<'tree> for Walker<'_, 'tree> {
    fn visit(&mut self, node: Node<'tree>, depth: u32) {
        self.node(node, depth);
    }

    fn matches(self) -> Matches<'tree> {
        self.found
    }
}

impl<'tree> Walker<'_, 'tree> {
    /// `[(identifier) @x (attribute attribute: (identifier) @x)]`: the identifier,
    /// with its depth below `node`.
    fn name_or_attribute(&self, node: Node<'tree>) -> Option<(Node<'tree>, u32)> {
        if node.kind_id() == self.ids.identifier {
            return Some((node, 0));
        }
        if node.kind_id() != self.ids.attribute {
            return None;
        }
        let attribute = field(node, self.ids.f_attribute)?;
        (attribute.kind_id() == self.ids.identifier).then_some((attribute, 1))
    }

    /// `(type [(identifier) @x (attribute attribute: (identifier) @x)])`: each such
    /// child of a `type` node, with its depth below it.
    fn typed(&mut self, type_: Node<'tree>) -> Vec<(Node<'tree>, u32)> {
        if type_.kind_id() != self.ids.type_ {
            return Vec::new();
        }
        (self.children.all(type_).into_iter())
            .filter_map(|child| self.name_or_attribute(child).map(|(n, d)| (n, d + 1)))
            .collect()
    }

    fn text(&self, node: Node<'tree>) -> &[u8] {
        &self.source[node.byte_range()]
    }

    fn node(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let kind = node.kind_id();
        if kind == ids.module {
            self.module(node, depth);
        } else if kind == ids.class_definition {
            self.class(node, depth);
        } else if kind == ids.function_definition {
            let name = field(node, ids.f_name).filter(|n| n.kind_id() == ids.identifier);
            if let Some(name) = name {
                let c = self.c;
                self.found
                    .push((name, depth + 1, 2), &[(node, c.function), (name, c.name)]);
            }
        } else if kind == ids.call {
            let function = field(node, ids.f_function);
            if let Some((name, below)) = function.and_then(|f| self.name_or_attribute(f)) {
                let c = self.c;
                self.found.push(
                    (name, depth + 1 + below, 3),
                    &[(node, c.call), (name, c.name)],
                );
            }
        } else if kind == ids.import_statement {
            self.import(node, depth);
        } else if kind == ids.import_from_statement {
            self.import_from(node, depth);
        } else if kind == ids.decorated_definition {
            self.overload(node, depth);
        } else if kind == ids.type_ {
            self.type_reference(node, depth);
        } else if kind == ids.assignment {
            self.assignment(node, depth);
        } else if kind == ids.typed_parameter || kind == ids.typed_default_parameter {
            self.parameter(node, depth);
        }
    }

    /// `(module (expression_statement (assignment left: (identifier) @name)
    /// @definition.constant))`.
    fn module(&mut self, node: Node<'tree>, depth: u32) {
        for statement in self.children.named(node, self.ids.expression_statement) {
            for assignment in self.children.named(statement, self.ids.assignment) {
                let left = field(assignment, self.ids.f_left);
                if let Some(name) = left.filter(|n| n.kind_id() == self.ids.identifier) {
                    let c = self.c;
                    self.found.push(
                        (name, depth + 3, 0),
                        &[(assignment, c.constant), (name, c.name)],
                    );
                }
            }
        }
    }

    /// A class's name, its bases (`Base`, `mod.Base`, `Base[T]`, `mod.Base[T]`) and
    /// the annotated attributes of its body.
    fn class(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let c = self.c;
        if let Some(name) = field(node, ids.f_name).filter(|n| n.kind_id() == ids.identifier) {
            self.found
                .push((name, depth + 1, 1), &[(node, c.class), (name, c.name)]);
        }
        let superclasses = field(node, ids.f_superclasses);
        if let Some(list) = superclasses.filter(|s| s.kind_id() == ids.argument_list) {
            for child in self.children.all(list) {
                if let Some((base, below)) = self.name_or_attribute(child) {
                    self.found
                        .push((base, depth + 2 + below, 9), &[(base, c.inherit)]);
                } else if child.kind_id() == self.ids.subscript {
                    let value = field(child, self.ids.f_value);
                    if let Some((base, below)) = value.and_then(|v| self.name_or_attribute(v)) {
                        self.found
                            .push((base, depth + 3 + below, 10), &[(base, c.inherit)]);
                    }
                }
            }
        }
        let body = field(node, self.ids.f_body);
        let Some(block) = body.filter(|b| b.kind_id() == self.ids.block) else {
            return;
        };
        for statement in self.children.named(block, self.ids.expression_statement) {
            for assignment in self.children.named(statement, self.ids.assignment) {
                let left = field(assignment, self.ids.f_left);
                let Some(name) = left.filter(|n| n.kind_id() == self.ids.identifier) else {
                    continue;
                };
                let Some(type_) = field(assignment, self.ids.f_type) else {
                    continue;
                };
                for (class, below) in self.typed(type_) {
                    self.found.push(
                        (class, depth + 4 + below, 20),
                        &[(name, c.attr_name), (class, c.attr_type)],
                    );
                }
            }
        }
    }

    /// `import a.b` and `import a.b as c`.
    fn import(&mut self, node: Node<'tree>, depth: u32) {
        let c = self.c;
        for name in self.children.in_field(node, self.ids.f_name) {
            if name.kind_id() == self.ids.dotted_name {
                self.found
                    .push((name, depth + 1, 4), &[(node, c.import), (name, c.module)]);
            } else if name.kind_id() == self.ids.aliased_import {
                let (Some(module), Some(alias)) =
                    (field(name, self.ids.f_name), field(name, self.ids.f_alias))
                else {
                    continue;
                };
                if module.kind_id() == self.ids.dotted_name
                    && alias.kind_id() == self.ids.identifier
                {
                    self.found.push(
                        (alias, depth + 2, 5),
                        &[(node, c.import), (module, c.module), (alias, c.alias)],
                    );
                }
            }
        }
    }

    /// `from m import x` and `from m import x as y`: a match for the module, and
    /// one for each name.
    fn import_from(&mut self, node: Node<'tree>, depth: u32) {
        let c = self.c;
        if let Some(module) = field(node, self.ids.f_module_name).filter(|m| m.is_named()) {
            self.found.push(
                (module, depth + 1, 6),
                &[(node, c.import), (module, c.module)],
            );
        }
        for name in self.children.in_field(node, self.ids.f_name) {
            if name.kind_id() == self.ids.dotted_name {
                self.found
                    .push((name, depth + 1, 7), &[(node, c.import), (name, c.item)]);
            } else if name.kind_id() == self.ids.aliased_import {
                let (Some(item), Some(alias)) =
                    (field(name, self.ids.f_name), field(name, self.ids.f_alias))
                else {
                    continue;
                };
                if item.kind_id() == self.ids.dotted_name && alias.kind_id() == self.ids.identifier
                {
                    self.found.push(
                        (alias, depth + 2, 8),
                        &[(node, c.import), (item, c.item), (alias, c.item_alias)],
                    );
                }
            }
        }
    }

    /// `@overload` and `@typing.overload` on a function.
    fn overload(&mut self, node: Node<'tree>, depth: u32) {
        let c = self.c;
        let definition = field(node, self.ids.f_definition);
        let Some(function) = definition.filter(|d| d.kind_id() == self.ids.function_definition)
        else {
            return;
        };
        for decorator in self.children.named(node, self.ids.decorator) {
            for child in self.children.all(decorator) {
                let Some((name, _)) = self.name_or_attribute(child) else {
                    continue;
                };
                if self.text(name) == b"overload" {
                    self.found.push(
                        (function, depth + 1, 11),
                        &[(name, c.overload_name), (function, c.overload)],
                    );
                }
            }
        }
    }

    /// `(type (identifier) @ref)` and `(type (generic_type (identifier) @ref))`.
    fn type_reference(&mut self, node: Node<'tree>, depth: u32) {
        let c = self.c;
        for name in self.children.named(node, self.ids.identifier) {
            self.found
                .push((name, depth + 1, 12), &[(name, c.reference)]);
        }
        for generic in self.children.named(node, self.ids.generic_type) {
            for name in self.children.named(generic, self.ids.identifier) {
                self.found
                    .push((name, depth + 2, 13), &[(name, c.reference)]);
            }
        }
    }

    /// `x = Class(...)`, `x: Class = ...`, `self.x = Class(...)`, `self.x: Class`.
    fn assignment(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let c = self.c;
        let Some(left) = field(node, ids.f_left) else {
            return;
        };
        let right = field(node, ids.f_right).filter(|r| r.kind_id() == ids.call);
        let constructed = right
            .and_then(|call| field(call, ids.f_function))
            .and_then(|f| self.name_or_attribute(f).map(|(n, d)| (n, d + 2)));
        let type_ = field(node, ids.f_type);
        let typed = type_.map(|t| self.typed(t)).unwrap_or_default();
        if left.kind_id() == self.ids.identifier {
            if let Some((class, below)) = constructed {
                self.found.push(
                    (class, depth + below, 14),
                    &[(left, c.bind_name), (class, c.bind_type)],
                );
            }
            for &(class, below) in &typed {
                self.found.push(
                    (class, depth + 1 + below, 15),
                    &[(left, c.bind_name), (class, c.bind_type)],
                );
            }
            return;
        }
        if left.kind_id() != self.ids.attribute {
            return;
        }
        let object = field(left, self.ids.f_object);
        let attribute = field(left, self.ids.f_attribute);
        let (Some(object), Some(attribute)) = (object, attribute) else {
            return;
        };
        if object.kind_id() != self.ids.identifier
            || attribute.kind_id() != self.ids.identifier
            || self.text(object) != b"self"
        {
            return;
        }
        if let Some((class, below)) = constructed {
            self.found.push(
                (class, depth + below, 18),
                &[
                    (object, c.self_),
                    (attribute, c.attr_name),
                    (class, c.attr_type),
                ],
            );
        }
        for &(class, below) in &typed {
            self.found.push(
                (class, depth + 1 + below, 19),
                &[
                    (object, c.self_),
                    (attribute, c.attr_name),
                    (class, c.attr_type),
                ],
            );
        }
    }

    /// `def f(x: Class)` and `def f(x: Class = ...)`.
    fn parameter(&mut self, node: Node<'tree>, depth: u32) {
        let c = self.c;
        let ids = &self.ids;
        let typed = field(node, ids.f_type)
            .map(|t| self.typed(t))
            .unwrap_or_default();
        if typed.is_empty() {
            return;
        }
        let (names, pattern) = if node.kind_id() == self.ids.typed_parameter {
            (self.children.named(node, self.ids.identifier), 16)
        } else {
            let name = field(node, self.ids.f_name);
            let name = name.filter(|n| n.kind_id() == self.ids.identifier);
            (name.into_iter().collect(), 17)
        };
        for name in names {
            for &(class, below) in &typed {
                self.found.push(
                    (class, depth + 1 + below, pattern),
                    &[(name, c.bind_name), (class, c.bind_type)],
                );
            }
        }
    }
}
