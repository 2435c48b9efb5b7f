//! C's matches without the query cursor: one walk of the tree with a tree cursor
//! that finds what `queries/c.scm` (and `(identifier) @use`) would, match for
//! match and in the order the cursor gives them, in about half its time (Python's
//! walk, `walk_py`, built the same way, in two thirds). The query cursor checks
//! every node against every pattern's first step and keeps the progress of each in
//! a state of its own; here each node's kind picks the one or two patterns that
//! can start there, and their few remaining steps are read off the node's fields.
//! A test holds the two to the same symbols, and `examples/extract_time.rs`
//! compares them on real files.

use std::time::Instant;

use tree_sitter::{Node, QueryCapture, TreeCursor};

use super::MAX_TREE_DEPTH;

/// Nodes walked between two looks at the clock.
const CLOCK_EVERY: usize = 4096;

/// The capture indices of the C query (`Query::capture_names`), by name.
pub(super) struct Captures {
    pub import: u32,
    pub import_module: u32,
    pub name: u32,
    pub function: u32,
    pub macro_: u32,
    pub constant: u32,
    pub struct_: u32,
    pub enum_: u32,
    pub type_: u32,
    pub variable: u32,
    pub call: u32,
    pub reference: u32,
}

impl Captures {
    /// The indices in `names`; None when one is missing (the query changed).
    pub(super) fn of(names: &[&str]) -> Option<Captures> {
        let at = |name: &str| names.iter().position(|n| *n == name).map(|i| i as u32);
        Some(Captures {
            import: at("import")?,
            import_module: at("import.module")?,
            name: at("name")?,
            function: at("definition.function")?,
            macro_: at("definition.macro")?,
            constant: at("definition.constant")?,
            struct_: at("definition.struct")?,
            enum_: at("definition.enum")?,
            type_: at("definition.type")?,
            variable: at("definition.variable")?,
            call: at("reference.call")?,
            reference: at("ref")?,
        })
    }
}

/// The grammar's ids of the kinds and fields the patterns name.
struct Ids {
    include: u16,
    string_literal: u16,
    string_content: u16,
    system_lib_string: u16,
    function_definition: u16,
    function_declarator: u16,
    pointer_declarator: u16,
    array_declarator: u16,
    init_declarator: u16,
    identifier: u16,
    type_identifier: u16,
    field_identifier: u16,
    function_def: u16,
    def: u16,
    struct_specifier: u16,
    union_specifier: u16,
    enum_specifier: u16,
    type_definition: u16,
    translation_unit: u16,
    preproc_if: u16,
    preproc_ifdef: u16,
    preproc_else: u16,
    preproc_elif: u16,
    declaration_list: u16,
    declaration: u16,
    call_expression: u16,
    field_expression: u16,
    parameter_declaration: u16,
    field_declaration: u16,
    type_descriptor: u16,
    path: u16,
    declarator: u16,
    name: u16,
    body: u16,
    function: u16,
    field: u16,
    type_: u16,
}

impl Ids {
    fn of(language: &tree_sitter::Language) -> Option<Ids> {
        let kind = |name: &str| Some(language.id_for_node_kind(name, true)).filter(|&id| id != 0);
        let field = |name: &str| language.field_id_for_name(name).map(|id| id.get());
        Some(Ids {
            include: kind("preproc_include")?,
            string_literal: kind("string_literal")?,
            string_content: kind("string_content")?,
            system_lib_string: kind("system_lib_string")?,
            function_definition: kind("function_definition")?,
            function_declarator: kind("function_declarator")?,
            pointer_declarator: kind("pointer_declarator")?,
            array_declarator: kind("array_declarator")?,
            init_declarator: kind("init_declarator")?,
            identifier: kind("identifier")?,
            type_identifier: kind("type_identifier")?,
            field_identifier: kind("field_identifier")?,
            function_def: kind("preproc_function_def")?,
            def: kind("preproc_def")?,
            struct_specifier: kind("struct_specifier")?,
            union_specifier: kind("union_specifier")?,
            enum_specifier: kind("enum_specifier")?,
            type_definition: kind("type_definition")?,
            translation_unit: kind("translation_unit")?,
            preproc_if: kind("preproc_if")?,
            preproc_ifdef: kind("preproc_ifdef")?,
            preproc_else: kind("preproc_else")?,
            preproc_elif: kind("preproc_elif")?,
            declaration_list: kind("declaration_list")?,
            declaration: kind("declaration")?,
            call_expression: kind("call_expression")?,
            field_expression: kind("field_expression")?,
            parameter_declaration: kind("parameter_declaration")?,
            field_declaration: kind("field_declaration")?,
            type_descriptor: kind("type_descriptor")?,
            path: field("path")?,
            declarator: field("declarator")?,
            name: field("name")?,
            body: field("body")?,
            function: field("function")?,
            field: field("field")?,
            type_: field("type")?,
        })
    }
}

/// One match: its captures, and where the query cursor would finish it (the
/// start byte and depth of the node of its last step, then its pattern's place).
struct Found<'tree> {
    at: (usize, u32, u8),
    captures: [Option<QueryCapture<'tree>>; 3],
}

/// The matches a walk found, in any order.
#[derive(Default)]
pub(super) struct Matches<'tree> {
    found: Vec<Found<'tree>>,
}

impl<'tree> Matches<'tree> {
    /// A match of the pattern at place `pattern` of its query, whose last step
    /// is `last` at `depth`, capturing `captures` (a node and its capture index
    /// each, at most three).
    pub(super) fn push(
        &mut self,
        (last, depth, pattern): (Node<'tree>, u32, u8),
        captures: &[(Node<'tree>, u32)],
    ) {
        let mut kept = [None; 3];
        for (slot, &(node, index)) in kept.iter_mut().zip(captures) {
            *slot = Some(QueryCapture { node, index });
        }
        self.found.push(Found {
            at: (last.start_byte(), depth, pattern),
            captures: kept,
        });
    }

    /// The matches in the order the query cursor gives them: it finishes a match
    /// when it reaches the node of its last step, walking in document order
    /// (a node before its children), and matches finished at one node in the
    /// order of their patterns.
    fn into_ordered(self) -> Vec<Vec<QueryCapture<'tree>>> {
        let mut found = self.found;
        found.sort_by_key(|f| f.at);
        (found.into_iter())
            .map(|f| f.captures.into_iter().flatten().collect())
            .collect()
    }
}

/// What a walk found: the matches in the query cursor's order, every identifier
/// (`@use`) in document order, and whether it stopped at the deadline.
pub(super) struct Walked<'tree> {
    pub matches: Vec<Vec<QueryCapture<'tree>>>,
    pub identifiers: Vec<Node<'tree>>,
    pub out_of_time: bool,
}

impl<'tree> Walked<'tree> {
    /// What `walk_tree` gave, with the matches found meanwhile.
    fn new(matches: Matches<'tree>, (identifiers, out_of_time): Walk<'tree>) -> Self {
        Walked {
            matches: matches.into_ordered(),
            identifiers,
            out_of_time,
        }
    }
}

/// The identifiers of a walk, in document order, and whether it stopped at the
/// deadline.
type Walk<'tree> = (Vec<Node<'tree>>, bool);

/// Walks `tree` in document order, as deep as the query cursor starts patterns
/// (`MAX_TREE_DEPTH`), giving `visit` each node but identifiers (the `@use`
/// pattern, collected here) with its depth, and looking at the clock every
/// `CLOCK_EVERY` nodes.
fn walk_tree<'tree>(
    tree: &'tree tree_sitter::Tree,
    identifier: u16,
    deadline: Instant,
    mut visit: impl FnMut(Node<'tree>, u32),
) -> Walk<'tree> {
    let mut identifiers = Vec::new();
    let mut cursor = tree.walk();
    let mut depth = 0u32;
    let mut seen = 0usize;
    let mut out_of_time = false;
    'walk: loop {
        let node = cursor.node();
        if node.kind_id() == identifier {
            identifiers.push(node);
        } else {
            visit(node, depth);
        }
        seen += 1;
        if seen.is_multiple_of(CLOCK_EVERY) && Instant::now() >= deadline {
            out_of_time = true;
            break;
        }
        // No pattern starts below MAX_TREE_DEPTH, and none reads more than five
        // levels down from its start.
        if depth < MAX_TREE_DEPTH && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            depth -= 1;
        }
    }
    (identifiers, out_of_time)
}

/// A walk's patterns: what each node starts, and the matches found at the end.
pub(super) trait Patterns<'tree> {
    fn visit(&mut self, node: Node<'tree>, depth: u32);
    fn matches(self) -> Matches<'tree>;
}

/// The matches of `patterns` in `tree` and its identifiers (`identifier`: the
/// grammar's id of that kind), by `walk_tree`.
pub(super) fn run<'tree>(
    tree: &'tree tree_sitter::Tree,
    identifier: u16,
    deadline: Instant,
    mut patterns: impl Patterns<'tree>,
) -> Walked<'tree> {
    let walk = walk_tree(tree, identifier, deadline, |node, depth| {
        patterns.visit(node, depth)
    });
    Walked::new(patterns.matches(), walk)
}

/// `node`'s child in `field` (a grammar's field id).
pub(super) fn field<'tree>(node: Node<'tree>, field: u16) -> Option<Node<'tree>> {
    node.child_by_field_id(field)
}

/// A node's children, read with one cursor kept for the purpose.
pub(super) struct Children<'tree> {
    cursor: TreeCursor<'tree>,
}

impl<'tree> Children<'tree> {
    pub(super) fn new(tree: &'tree tree_sitter::Tree) -> Self {
        Children {
            cursor: tree.walk(),
        }
    }

    /// Every child of `node`, in order.
    pub(super) fn all(&mut self, node: Node<'tree>) -> Vec<Node<'tree>> {
        self.cursor.reset(node);
        node.children(&mut self.cursor).collect()
    }

    /// The named children of `node` of kind `kind`, in order.
    pub(super) fn named(&mut self, node: Node<'tree>, kind: u16) -> Vec<Node<'tree>> {
        self.cursor.reset(node);
        (node.named_children(&mut self.cursor))
            .filter(|c| c.kind_id() == kind)
            .collect()
    }

    /// The children of `node` in `field`, in order.
    pub(super) fn in_field(&mut self, node: Node<'tree>, field: u16) -> Vec<Node<'tree>> {
        let Some(field) = std::num::NonZeroU16::new(field) else {
            return Vec::new();
        };
        self.cursor.reset(node);
        node.children_by_field_id(field, &mut self.cursor).collect()
    }
}

/// The matches of `queries/c.scm` and `(identifier) @use` in `tree`, as the query
/// cursor finds them with its deepest start at `MAX_TREE_DEPTH`. None when the
/// grammar lacks a kind or field the patterns name (a grammar update): the caller
/// runs the query.
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
    /// A match of pattern `pattern` (its line in c.scm) that ends at `last` (depth
    /// `depth`), capturing `outer` (a node and its capture) and `name` as `@name`.
    fn push(
        &mut self,
        pattern: u8,
        (last, depth): (Node<'tree>, u32),
        outer: (Node<'tree>, u32),
        name: Node<'tree>,
    ) {
        let name = (name, self.c.name);
        self.found.push((last, depth, pattern), &[outer, name]);
    }

    fn node(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let kind = node.kind_id();
        if kind == ids.include {
            self.include(node, depth);
        } else if kind == ids.function_definition {
            self.function(node, depth);
            self.type_reference(node, depth);
        } else if kind == ids.function_def || kind == ids.def {
            let pattern = if kind == ids.function_def { 5 } else { 6 };
            let index = if kind == ids.function_def {
                self.c.macro_
            } else {
                self.c.constant
            };
            if let Some(name) = field(node, ids.name).filter(|n| n.kind_id() == ids.identifier) {
                self.push(pattern, (name, depth + 1), (node, index), name);
            }
        } else if kind == ids.struct_specifier
            || kind == ids.union_specifier
            || kind == ids.enum_specifier
        {
            self.specifier(node, depth);
        } else if kind == ids.type_definition {
            for declarator in self.children.in_field(node, self.ids.declarator) {
                if declarator.kind_id() == self.ids.type_identifier {
                    let at = (declarator, depth + 1);
                    self.push(10, at, (node, self.c.type_), declarator);
                }
            }
            self.type_reference(node, depth);
        } else if kind == ids.call_expression {
            self.call(node, depth);
        } else if kind == ids.parameter_declaration
            || kind == ids.field_declaration
            || kind == ids.type_descriptor
            || kind == ids.declaration
        {
            self.type_reference(node, depth);
        }
        let ids = &self.ids;
        if kind == ids.translation_unit
            || kind == ids.preproc_if
            || kind == ids.preproc_ifdef
            || kind == ids.preproc_else
            || kind == ids.preproc_elif
            || kind == ids.declaration_list
        {
            self.variables(node, depth);
        }
    }

    fn include(&mut self, node: Node<'tree>, depth: u32) {
        let Some(path) = field(node, self.ids.path) else {
            return;
        };
        let import = (node, self.c.import);
        if path.kind_id() == self.ids.string_literal {
            let contents = self.children.named(path, self.ids.string_content);
            for content in contents {
                let module = (content, self.c.import_module);
                self.found.push((content, depth + 2, 0), &[import, module]);
            }
        } else if path.kind_id() == self.ids.system_lib_string {
            let module = (path, self.c.import_module);
            self.found.push((path, depth + 1, 1), &[import, module]);
        }
    }

    /// `function_definition declarator: (function_declarator declarator:
    /// (identifier))`, directly or under one or two `pointer_declarator`s.
    fn function(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let mut at = field(node, ids.declarator);
        for pattern in 2..5u8 {
            let Some(declarator) = at else {
                return;
            };
            let levels = u32::from(pattern) - 2;
            if declarator.kind_id() == ids.function_declarator {
                let name = field(declarator, ids.declarator);
                if let Some(name) = name.filter(|n| n.kind_id() == ids.identifier) {
                    let last = (name, depth + levels + 2);
                    self.push(pattern, last, (node, self.c.function), name);
                }
                return;
            }
            if declarator.kind_id() != ids.pointer_declarator {
                return;
            }
            at = field(declarator, ids.declarator);
        }
    }

    /// `struct_specifier`, `union_specifier` or `enum_specifier` with a name and a
    /// body.
    fn specifier(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let kind = node.kind_id();
        let Some(name) = field(node, ids.name).filter(|n| n.kind_id() == ids.type_identifier)
        else {
            return;
        };
        let Some(body) = field(node, ids.body).filter(|b| b.is_named()) else {
            return;
        };
        let (pattern, index) = if kind == ids.struct_specifier {
            (7, self.c.struct_)
        } else if kind == ids.union_specifier {
            (8, self.c.struct_)
        } else {
            (9, self.c.enum_)
        };
        self.push(pattern, (body, depth + 1), (node, index), name);
    }

    /// The variables declared by the `declaration`s directly inside `node` (a file,
    /// a preprocessor conditional or a declaration list), but `extern` ones.
    fn variables(&mut self, node: Node<'tree>, depth: u32) {
        let kind = node.kind_id();
        let ids = &self.ids;
        let pattern = if kind == ids.translation_unit {
            11
        } else if kind == ids.preproc_if {
            12
        } else if kind == ids.preproc_ifdef {
            13
        } else if kind == ids.preproc_else {
            14
        } else if kind == ids.preproc_elif {
            15
        } else {
            16
        };
        let declarations = self.children.named(node, self.ids.declaration);
        for declaration in declarations {
            if self.source[declaration.byte_range()].starts_with(b"extern") {
                continue;
            }
            for declarator in self.children.in_field(declaration, self.ids.declarator) {
                if let Some((name, below)) = self.declared(declarator) {
                    let last = (name, depth + 2 + below);
                    self.push(pattern, last, (declaration, self.c.variable), name);
                }
            }
        }
    }

    /// The identifier a declarator declares in the variable patterns' forms:
    /// `x`, `x = ...`, `*x`, `x[]`, `*x = ...`, `x[] = ...`; with its depth below the
    /// declarator.
    fn declared(&self, declarator: Node<'tree>) -> Option<(Node<'tree>, u32)> {
        let ids = &self.ids;
        let kind = declarator.kind_id();
        let inner = |node: Node<'tree>| {
            field(node, ids.declarator).filter(|n| n.kind_id() == ids.identifier)
        };
        if kind == ids.identifier {
            return Some((declarator, 0));
        }
        if kind == ids.pointer_declarator || kind == ids.array_declarator {
            return inner(declarator).map(|n| (n, 1));
        }
        if kind != ids.init_declarator {
            return None;
        }
        let below = field(declarator, ids.declarator)?;
        let below_kind = below.kind_id();
        if below_kind == ids.identifier {
            Some((below, 1))
        } else if below_kind == ids.pointer_declarator || below_kind == ids.array_declarator {
            inner(below).map(|n| (n, 2))
        } else {
            None
        }
    }

    /// `call_expression function: (identifier)` or `function: (field_expression
    /// field: (field_identifier))`.
    fn call(&mut self, node: Node<'tree>, depth: u32) {
        let ids = &self.ids;
        let Some(function) = field(node, ids.function) else {
            return;
        };
        if function.kind_id() == ids.identifier {
            self.push(17, (function, depth + 1), (node, self.c.call), function);
        } else if function.kind_id() == ids.field_expression {
            let field = field(function, ids.field);
            if let Some(field) = field.filter(|f| f.kind_id() == ids.field_identifier) {
                self.push(18, (field, depth + 2), (node, self.c.call), field);
            }
        }
    }

    /// The type a declaration, parameter, field, function, `typedef` or type
    /// descriptor names: `type: (type_identifier)`, or `type: (_ name:
    /// (type_identifier) !body)` (`struct x`, `enum x` without a body).
    fn type_reference(&mut self, node: Node<'tree>, depth: u32) {
        for type_ in self.children.in_field(node, self.ids.type_) {
            let ids = &self.ids;
            if type_.kind_id() == ids.type_identifier {
                let reference = (type_, self.c.reference);
                self.found.push((type_, depth + 1, 19), &[reference]);
                continue;
            }
            if !type_.is_named() || field(type_, ids.body).is_some() {
                continue;
            }
            let names = self.children.in_field(type_, self.ids.name);
            for name in names {
                if name.kind_id() == self.ids.type_identifier {
                    let reference = (name, self.c.reference);
                    self.found.push((name, depth + 2, 20), &[reference]);
                }
            }
        }
    }
}
