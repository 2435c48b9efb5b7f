//! Per-file extraction with tree-sitter: definitions, imports and references (calls,
//! base classes, type references, uses of module-level variables). Definitions and
//! calls come from each grammar's own tags query (the queries GitHub's code
//! navigation uses); imports, inheritance and variables from our own queries
//! (`queries/<language>.scm`), run in the same pass.

mod imports;
mod language;
mod macros;
mod patches;
mod skipped;
#[cfg(test)]
mod tests;
mod walk_c;
mod walk_py;

use foldhash::{HashMap, HashSet};

use streaming_iterator::StreamingIterator;
use tree_sitter::{Parser, QueryCursor};

use super::model::line32;
use imports::{bound_names, group_imports, MAX_USE_DEPTH};
use language::use_mimalloc;
pub use language::Language;
use patches::{python_patched, typescript_patched};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum DefKind {
    /// Functions, methods, macros.
    Function,
    /// Classes, interfaces, structs, enums, traits, type declarations.
    Class,
    /// Module-level constants and variables, class fields.
    Variable,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    pub kind: DefKind,
    pub name: Box<str>,
    /// First line of the definition, trimmed (at most 200 characters).
    pub signature: Box<str>,
    /// 1-based, inclusive. (u32, as tree-sitter counts rows and bytes.)
    pub line: u32,
    pub end_line: u32,
    start_byte: u32,
    end_byte: u32,
    /// The type a method belongs to when it is written outside the type's body: a
    /// Go method's receiver type (`Engine` for `func (e *Engine) addRoute`, `List`
    /// for `func (l *List[T]) Push`), the type of the Rust `impl` block holding it
    /// (`Foo` for `impl<T> Foo<T>` and `impl Trait for Foo`; the trait for a blanket
    /// `impl<T> Trait for T`). It is the definition's scope (`Engine.addRoute`).
    pub owner: Option<Box<str>>,
}

impl Definition {
    /// The definition's bytes in its file's source.
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        self.start_byte as usize..self.end_byte as usize
    }

    pub fn contains(&self, other: &Definition) -> bool {
        self.start_byte <= other.start_byte && other.end_byte <= self.end_byte && self != other
    }

    /// For each definition of `defs`, the innermost one containing it: the
    /// latest before it that `contains` it (None: none does, the file). Linear
    /// when `defs` are in start order, as extraction gives them: every one before
    /// starts no later, so the answer is the latest before it that ends no
    /// earlier, kept on a stack of those whose ends are still ahead. Otherwise each
    /// looks back over all before it (quadratic in the file's definitions).
    pub fn containers(defs: &[Definition]) -> Vec<Option<usize>> {
        if !defs.is_sorted_by_key(|d| d.start_byte) {
            return (0..defs.len())
                .map(|i| (0..i).rev().find(|&j| defs[j].contains(&defs[i])))
                .collect();
        }
        // Indices, their ends non-increasing upwards.
        let mut open: Vec<usize> = Vec::new();
        defs.iter()
            .enumerate()
            .map(|(i, d)| {
                while open.last().is_some_and(|&j| defs[j].end_byte < d.end_byte) {
                    open.pop();
                }
                // An equal definition does not contain it: the next one down.
                let container = open.iter().rev().copied().find(|&j| defs[j] != *d);
                open.push(i);
                container
            })
            .collect()
    }

    fn contains_byte(&self, byte: usize) -> bool {
        self.byte_range().contains(&byte)
    }

    /// The definition without its name and signature (its node holds those).
    pub(super) fn span(&self) -> Span {
        Span {
            kind: self.kind,
            line: self.line,
            end_line: self.end_line,
            start_byte: self.start_byte,
            end_byte: self.end_byte,
        }
    }

    /// The definition `span` was taken from, given its name, signature and owner.
    pub(super) fn with_span(
        span: Span,
        name: Box<str>,
        signature: Box<str>,
        owner: Option<Box<str>>,
    ) -> Definition {
        Definition {
            kind: span.kind,
            name,
            signature,
            line: span.line,
            end_line: span.end_line,
            start_byte: span.start_byte,
            end_byte: span.end_byte,
            owner,
        }
    }
}

/// A `Definition` as the graph keeps it, beside the node that holds its name and
/// signature: 20 bytes and no allocation, where a `Definition` is 88 bytes and two.
/// Lines and byte offsets fit in 32 bits, as tree-sitter counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    kind: DefKind,
    line: u32,
    end_line: u32,
    start_byte: u32,
    end_byte: u32,
}

/// One import statement's module (a statement importing several modules gives one
/// `Import` each).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Import {
    /// As written: `a.b`, `..pkg`, `./util`, `crate::graph`, `net/http`.
    pub module: String,
    /// The names it brings in (`from m import a, b`, `import {a} from "m"`, `use m::{a, b}`).
    pub items: Vec<String>,
    /// The local name it binds, when renamed (`import a.b as c`, `import * as m`,
    /// a Go package name).
    pub alias: Option<String>,
    /// Items imported under another name: (local name, item).
    pub renamed: Vec<(String, String)>,
    /// Rust's `mod name;`: the child module's file.
    pub submodule: bool,
    pub line: usize,
    /// The statement's first line, trimmed (at most 200 characters).
    pub statement: String,
}

/// What a reference names; each kind becomes its own kind of edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RefKind {
    /// A call of a function, method or class.
    Call,
    /// A base class, implemented interface, embedded struct or supertrait.
    Inherit,
    /// A type in an annotation, a `new`, an `impl`.
    Type,
    /// A variable of the file (or one it imports) read or written inside a definition.
    Use,
    /// A name an import brings in.
    Item,
}

/// Where a reference is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Origin {
    File,
    /// Index into `FileSymbols::definitions`.
    Definition(u32),
    /// Index into `FileSymbols::imports`.
    Import(u32),
}

/// What a call is made on, when that pins its target down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Receiver {
    Unknown,
    /// `self.f()`, `this.f()`: a method of the enclosing class.
    This,
    /// `m.f()` where `m` is the name an import (by index) binds.
    Import(u32),
    /// `f()` where an import (by index) brings `f` in (perhaps renamed): looked up
    /// there after the file itself.
    Named(u32),
    /// `x.f()` where `x` has a known class (by index into `FileSymbols::types`):
    /// `x = C(...)`, `x: C`, a parameter `x: C`, `self.x = C(...)` in the class,
    /// Go/Java/TypeScript declared types. `f` is looked up in `C`, then its bases.
    Type(u32),
    /// `self.x.f()`, `this.x.f()`, `$this->x->f()` (any chain of attributes of
    /// `self` or `this`) where `x` has no known class: a call on another object,
    /// not on `self`, so never linked to the enclosing class's own methods (the
    /// caller included) unless no other definition of the name is found.
    Member,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reference {
    pub kind: RefKind,
    pub name: Box<str>,
    pub line: u32,
    pub origin: Origin,
    pub receiver: Receiver,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSymbols {
    pub language: Language,
    /// In source order.
    pub definitions: Vec<Definition>,
    pub imports: Vec<Import>,
    /// Sorted by name; within a name, calls in source order, then the other kinds.
    pub references: Vec<Reference>,
    /// The class names `Receiver::Type` refers to, each once.
    pub types: Vec<String>,
    /// Set when the parser skipped text the extraction cannot read (see
    /// `skipped::skipped`; a token the parser supplied loses nothing) or gave up:
    /// what was extracted is kept.
    pub syntax_errors: bool,
    /// The package the file declares (Kotlin's and Scala's `package a.b`; Scala's
    /// chained clauses joined: `package a` then `package b` is `a.b`): its imports'
    /// files are found by it too, wherever its folder is.
    pub package: Option<String>,
    /// What the parser skipped, as the file's warning says it (`Skipped::note`:
    /// the lines, and whether parts of definitions are among them). Not saved
    /// with the symbols (the graph file keeps the warnings).
    #[serde(skip)]
    pub error_note: Option<String>,
    /// Why the extraction stopped short of the whole file (a limit of `MAX_TREE_DEPTH`,
    /// `MAX_USE_DEPTH` or `FILE_BUDGET` was reached), one note per limit; what was found
    /// before is kept. Reported as the file's warnings; not saved with the symbols
    /// (the graph file keeps the warnings).
    #[serde(skip)]
    pub truncated: Vec<String>,
}

fn def_kind(capture: &str) -> Option<DefKind> {
    let kind = capture.strip_prefix("definition.")?;
    Some(match kind {
        "function" | "method" | "macro" => DefKind::Function,
        "class" | "interface" | "type" | "struct" | "enum" | "trait" => DefKind::Class,
        "constant" | "variable" => DefKind::Variable,
        _ => return None, // modules and others are not nodes of the graph
    })
}

/// A node's first line, trimmed, at most 200 characters. Reads at most 1 KiB past
/// the leading blanks: it runs once per match, and many matches can share one huge
/// line (`import {a0, ..., a24999} from "m"`).
fn first_line(text: &[u8]) -> String {
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..text.len().min(start + 1024)];
    let line = text.split(|b| *b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line)
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// A node's last line, 1-based: the line of its last byte (C's `#define` ends
/// with its newline, at column 0 of the next line).
fn last_line(node: tree_sitter::Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row
    } else {
        end.row + 1
    }
}

/// A reference found by the query, before its origin is known.
struct Found {
    kind: RefKind,
    name: String,
    line: usize,
    byte: usize,
    /// A call's receiver, when it is a plain name (`m` in `m.f()`) or goes through
    /// `self` or `this` (see `receiver_text`).
    receiver: Option<String>,
    /// A Ruby identifier that is a call unless the file has a local of that name.
    bare: bool,
}

/// A name given a class in the source: a variable or parameter (`x = C(...)`,
/// `x: C`, `C x`, `var x C`), or an attribute of the enclosing class (`self.x =
/// C(...)`, a field `x: C`) when `attribute`.
struct Binding {
    name: String,
    class: String,
    byte: usize,
    attribute: bool,
}

/// An import capture, before grouping by statement.
struct RawImport {
    statement: usize,
    line: usize,
    text: String,
    module: Option<String>,
    item: Option<String>,
    item_alias: Option<String>,
    alias: Option<String>,
    submodule: bool,
    /// Ruby's `require_relative`: the path is relative to the file's folder.
    relative: bool,
}

/// How deep in a syntax tree extraction looks: patterns start only at nodes up to
/// this depth, and nothing below is indexed. Real code stays far above (a dozen
/// nested callbacks in JavaScript is ~80 levels); hostile input (`f(f(f(...)))`
/// 60,000 deep, a 200,000-link `a.b.b...` chain) goes much deeper, and there
/// tree-sitter's query cursor keeps a pending match per level and walks all of
/// them at every node: quadratic time (and its 16-bit depth counters wrap past
/// 65,535). A file that goes deeper is indexed down to this depth and gets a
/// warning (`nesting deeper than 256 levels: truncated`).
pub const MAX_TREE_DEPTH: u32 = 256;

/// Each file's budget for extraction, all phases together (the parse, the query
/// and the resolution of references): past it extraction stops, keeps what it
/// found and the file gets a warning naming the phase. A backstop: real code stays
/// far inside it, but a grammar's error recovery is slow on input that is no code
/// (random bytes, say), and a query may have superlinear cases we have not met.
pub const FILE_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// The note for a file nested deeper than `MAX_TREE_DEPTH`.
fn too_deep(levels: impl std::fmt::Display) -> String {
    format!("nesting deeper than {levels} levels: truncated")
}

/// The note for a file whose parse or query ran out of `FILE_BUDGET`.
fn over_budget(phase: &str) -> String {
    format!(
        "{phase} took longer than the {} s budget per file: truncated",
        FILE_BUDGET.as_secs()
    )
}

/// One file's syntax tree (None only if tree-sitter gives up). `extract` starts here;
/// public so that the parse alone can be timed (`examples/graph_phases.rs`).
pub fn parse_tree(language: Language, source: &[u8]) -> Option<tree_sitter::Tree> {
    let blanks = blanked_macros(language, source);
    parse_within(
        language,
        source,
        &blanks,
        std::time::Instant::now() + FILE_BUDGET,
    )
}

/// The macros of a C or C++ source that are parsed as blanks
/// (`macros::attribute_macros`); none in other languages.
fn blanked_macros(language: Language, source: &[u8]) -> Vec<std::ops::Range<usize>> {
    match language {
        Language::C | Language::Cpp => macros::attribute_macros(source),
        _ => Vec::new(),
    }
}

/// `parse_tree`, given up (None) at `deadline`; `blanks` are parsed as spaces.
fn parse_within(
    language: Language,
    source: &[u8],
    blanks: &[std::ops::Range<usize>],
    deadline: std::time::Instant,
) -> Option<tree_sitter::Tree> {
    let patched = match language {
        Language::TypeScript | Language::Tsx => typescript_patched(source),
        Language::Python => python_patched(source),
        _ if !blanks.is_empty() => Some(macros::blanked(source, blanks)),
        _ => None,
    };
    let source = patched.as_deref().unwrap_or(source);
    use_mimalloc();
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .expect("grammar versions match the tree-sitter crate");
    let mut check = |_: &tree_sitter::ParseState| {
        if std::time::Instant::now() < deadline {
            std::ops::ControlFlow::Continue(())
        } else {
            std::ops::ControlFlow::Break(())
        }
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut check);
    let len = source.len();
    parser.parse_with_options(
        &mut |i, _| if i < len { &source[i..] } else { &[] },
        None,
        Some(options),
    )
}

/// Whether any node of `tree` lies deeper than `limit` (the root is at depth 0).
/// Iterative (a tree cursor), and it stops at the first such node. A node is
/// entered only if it has descendants enough to reach past `limit` (a chain of `k`
/// levels below a node needs `k` descendants; the count is stored in the tree):
/// in real code that leaves only the few nodes along the spine of each large
/// definition to visit, not every node.
fn deeper_than(tree: &tree_sitter::Tree, limit: u32) -> bool {
    let mut cursor = tree.walk();
    let mut depth = 0u32;
    loop {
        let below = cursor.node().descendant_count().saturating_sub(1);
        if depth as usize + below > limit as usize && cursor.goto_first_child() {
            depth += 1;
            if depth > limit {
                return true;
            }
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

/// Extracts definitions, imports and references from one file's bytes. Invalid UTF-8
/// is read lossily; a file that does not parse cleanly yields what tree-sitter recovered.
/// Time and memory are linear in the file's size: nesting is cut at
/// `MAX_TREE_DEPTH`, all phases together at `FILE_BUDGET`, and either leaves a note in
/// `truncated`.
pub fn extract(language: Language, source: &[u8]) -> FileSymbols {
    extract_within(language, source, FILE_BUDGET)
}

/// `extract` with the query cursor for every language, C and Python too (whose
/// patterns `extract` finds by walks of their own, `walk_c` and `walk_py`): what
/// those walks are held to.
#[doc(hidden)]
pub fn extract_by_query(language: Language, source: &[u8]) -> FileSymbols {
    extract_with(language, source, FILE_BUDGET, Matcher::Query)
}

/// How a file's matches are found: C's and Python's by their walks where they
/// can, or every language's by the query cursor.
#[derive(Clone, Copy, PartialEq)]
enum Matcher {
    Fastest,
    Query,
}

fn extract_within(language: Language, source: &[u8], budget: std::time::Duration) -> FileSymbols {
    extract_with(language, source, budget, Matcher::Fastest)
}

fn extract_with(
    language: Language,
    source: &[u8],
    budget: std::time::Duration,
    matcher: Matcher,
) -> FileSymbols {
    let deadline = std::time::Instant::now() + budget;
    let blanks = blanked_macros(language, source);
    let Some(tree) = parse_within(language, source, &blanks, deadline) else {
        return FileSymbols {
            language,
            definitions: vec![],
            imports: vec![],
            references: vec![],
            types: vec![],
            syntax_errors: true,
            package: None,
            error_note: None,
            truncated: vec![over_budget("parsing")],
        };
    };
    extract_tree(language, source, &tree, &blanks, deadline, matcher)
}

/// The symbols of a parsed file: the query's matches, then references given their
/// origins; both stop at `deadline` (what was found stays, with a note).
fn extract_tree(
    language: Language,
    source: &[u8],
    tree: &tree_sitter::Tree,
    blanks: &[std::ops::Range<usize>],
    deadline: std::time::Instant,
    matcher: Matcher,
) -> FileSymbols {
    let mut truncated = Vec::new();
    if deeper_than(tree, MAX_TREE_DEPTH) {
        truncated.push(too_deep(MAX_TREE_DEPTH));
    }
    let query = language.query();
    let names = query.capture_names();
    let index_of = |name: &str| names.iter().position(|n| *n == name).map(|i| i as u32);
    let (name_index, import_index, use_index) =
        (index_of("name"), index_of("import"), index_of("use"));
    let binding_index = [
        (index_of("bind.name"), index_of("bind.type"), false),
        (index_of("attr.name"), index_of("attr.type"), true),
    ];
    let text =
        |node: tree_sitter::Node| String::from_utf8_lossy(&source[node.byte_range()]).into_owned();
    let mut cursor = QueryCursor::new();
    cursor.set_max_start_depth(Some(MAX_TREE_DEPTH));
    let out_of_time = std::cell::Cell::new(false);
    let mut check = |_: &tree_sitter::QueryCursorState| {
        if std::time::Instant::now() < deadline {
            std::ops::ControlFlow::Continue(())
        } else {
            out_of_time.set(true);
            std::ops::ControlFlow::Break(())
        }
    };
    let mut definitions: Vec<Definition> = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    let mut raw_imports: Vec<RawImport> = Vec::new();
    let mut identifiers: Vec<tree_sitter::Node> = Vec::new();
    // Ruby's local variables and parameters, by name: bare identifiers so named are
    // no calls.
    let mut locals: HashSet<Vec<u8>> = HashSet::default();
    let mut bindings: Vec<Binding> = Vec::new();
    // Kotlin's and Scala's package clauses, in source order.
    let mut package: Vec<String> = Vec::new();
    // Two patterns can match one node (JavaScript's and TypeScript's queries; a
    // top-level constant holding a function is a function): (start, name) -> index.
    let mut defined: HashMap<(u32, Box<str>), usize> = HashMap::default();
    // The start bytes of Python's `@overload` stubs.
    let mut overloads: HashSet<u32> = HashSet::default();
    let options = tree_sitter::QueryCursorOptions::new().progress_callback(&mut check);
    // C's and Python's patterns are found by a walk of their own (walk_c,
    // walk_py), in half to two thirds of the query cursor's time; other
    // languages run the query.
    let walked = match (language, matcher) {
        (Language::C, Matcher::Fastest) => walk_c::Captures::of(names)
            .and_then(|captures| walk_c::walk(tree, source, &captures, deadline)),
        (Language::Python, Matcher::Fastest) => walk_py::Captures::of(names)
            .and_then(|captures| walk_py::walk(tree, source, &captures, deadline)),
        _ => None,
    };
    let mut walked_matches = None;
    let mut matches = None;
    match &walked {
        Some(walked) => {
            identifiers.extend_from_slice(&walked.identifiers);
            out_of_time.set(walked.out_of_time);
            walked_matches = Some(walked.matches.iter());
        }
        None => {
            matches = Some(cursor.matches_with_options(query, tree.root_node(), source, options));
        }
    }
    loop {
        let captures: &[tree_sitter::QueryCapture] = if let Some(matches) = matches.as_mut() {
            match matches.next() {
                Some(m) => m.captures(),
                None => break,
            }
        } else if let Some(Some(found)) = walked_matches.as_mut().map(Iterator::next) {
            found
        } else {
            break;
        };
        if let [only] = captures {
            if Some(only.index) == use_index {
                identifiers.push(only.node);
                continue;
            }
        }
        let binding = binding_index.iter().find_map(|&(name, class, attribute)| {
            let of = |index: Option<u32>| {
                captures
                    .iter()
                    .find(|c| index.is_some() && Some(c.index) == index)
                    .map(|c| c.node)
            };
            Some((of(name)?, of(class)?, attribute))
        });
        if let Some((name, class, attribute)) = binding {
            bindings.push(Binding {
                name: text(name),
                class: text(class),
                byte: name.start_byte(),
                attribute,
            });
            continue;
        }
        if let Some(statement) = captures
            .iter()
            .find(|c| Some(c.index) == import_index)
            .map(|c| c.node)
        {
            let mut raw = RawImport {
                statement: statement.start_byte(),
                line: statement.start_position().row + 1,
                text: first_line(&source[statement.byte_range()]),
                module: None,
                item: None,
                item_alias: None,
                alias: None,
                submodule: false,
                relative: false,
            };
            for capture in captures {
                match names[capture.index as usize] {
                    "import.module" => raw.module = Some(text(capture.node)),
                    "import.submodule" => {
                        (raw.module, raw.submodule) = (Some(text(capture.node)), true)
                    }
                    "import.relative" => {
                        (raw.module, raw.relative) = (Some(text(capture.node)), true)
                    }
                    "import.item" => raw.item = Some(text(capture.node)),
                    "import.alias" => raw.alias = Some(text(capture.node)),
                    "import.item_alias" => raw.item_alias = Some(text(capture.node)),
                    _ => {}
                }
            }
            raw_imports.push(raw);
            continue;
        }
        let name_node = captures
            .iter()
            .find(|c| Some(c.index) == name_index)
            .map(|c| c.node);
        for capture in captures {
            let capture_name = names[capture.index as usize];
            let node = capture.node;
            let reference = |kind: RefKind, at: tree_sitter::Node| Found {
                kind,
                name: text(at),
                line: at.start_position().row + 1,
                byte: at.start_byte(),
                receiver: None,
                bare: false,
            };
            match (capture_name, name_node) {
                ("inherit", _) => found.push(reference(RefKind::Inherit, node)),
                ("overload", _) => {
                    overloads.insert(line32(node.start_byte()));
                }
                ("package", _) => package.push(text(node).split_whitespace().collect()),
                ("ref", _) if !builtin_attribute(language, node, source) => {
                    found.push(reference(RefKind::Type, node))
                }
                ("ref", _) => {}
                ("local", _) => {
                    locals.insert(source[node.byte_range()].to_vec());
                }
                ("reference.bare", Some(name)) => found.push(Found {
                    bare: true,
                    ..reference(RefKind::Call, name)
                }),
                // C#'s tags name a call on a member `@reference.send`.
                ("reference.call" | "reference.send", Some(name)) => found.push(Found {
                    receiver: receiver(language, node, name, source),
                    ..reference(RefKind::Call, name)
                }),
                (other, Some(name)) if other.starts_with("reference.") => {
                    found.push(reference(RefKind::Type, name))
                }
                (other, Some(name)) => {
                    let Some(kind) = def_kind(other) else {
                        continue;
                    };
                    if typedef_named_alike(language, node, source) {
                        continue;
                    }
                    let start = macros::start_before(node.start_byte(), blanks, source);
                    let def = Definition {
                        kind,
                        name: text(name).into(),
                        signature: first_line(&source[start..node.end_byte()]).into(),
                        line: line32(node.start_position().row + 1),
                        end_line: line32(last_line(node)),
                        start_byte: line32(start),
                        end_byte: line32(node.end_byte()),
                        owner: owner(language, node, source),
                    };
                    match defined.entry((def.start_byte, def.name.clone())) {
                        std::collections::hash_map::Entry::Occupied(seen) => {
                            let seen = &mut definitions[*seen.get()];
                            if seen.kind == DefKind::Variable {
                                *seen = def;
                            }
                        }
                        std::collections::hash_map::Entry::Vacant(slot) => {
                            slot.insert(definitions.len());
                            definitions.push(def);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    drop(matches);
    drop(walked);
    if out_of_time.get() {
        truncated.push(over_budget("the query"));
    }
    definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
    if !overloads.is_empty() {
        definitions = fold_overloads(definitions, &overloads);
    }
    let (imports, cut) = group_imports(language, raw_imports);
    if cut {
        truncated.push(too_deep(format!("{MAX_USE_DEPTH} use-tree")));
    }
    found.retain(|f| !f.bare || !locals.contains(f.name.as_bytes()));
    let mut uses = uses(language, &identifiers, source, &definitions, &imports);
    found.append(&mut uses);
    // The blanked macros are uses as the names they were (see `uses`).
    let mut line = 1;
    let mut counted = 0;
    for range in blanks {
        line += source[counted..range.start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted = range.start;
        found.push(Found {
            kind: RefKind::Use,
            name: String::from_utf8_lossy(&source[range.clone()]).into_owned(),
            line,
            byte: range.start,
            receiver: None,
            bare: false,
        });
    }
    let (references, types, cut) =
        resolve_origins(language, found, &definitions, &imports, &bindings, deadline);
    if cut {
        truncated.push(over_budget("resolving references"));
    }
    let skipped = skipped::skipped(tree, source, deadline);
    FileSymbols {
        language,
        definitions: exact(definitions),
        imports: exact(imports),
        references: exact(references),
        types: exact(types),
        syntax_errors: skipped.is_some(),
        package: (!package.is_empty()).then(|| package.join(".")),
        error_note: skipped.map(|s| s.note()),
        truncated,
    }
}

/// `items` in memory of exactly their size. A build holds every file's symbols
/// from its parse until the graph is linked (the peak of its memory), and vectors
/// grown by pushing keep up to half their capacity unused. A copy, not
/// `shrink_to_fit`: mimalloc's `realloc` keeps a block that the new size fills at
/// least half of, so shrinking such a vector frees nothing.
fn exact<T>(items: Vec<T>) -> Vec<T> {
    if items.capacity() == items.len() {
        return items;
    }
    let mut copy = Vec::with_capacity(items.len());
    copy.extend(items);
    copy
}

/// Python's `@overload` stubs (`overloads`: their start bytes) folded into their
/// implementation: a run of stubs of one name, each the next definition of its
/// scope after the one before, becomes part of the definition that follows it in
/// that scope with the same name and no `@overload` (the implementation keeps its
/// name and signature; its range starts at the first stub). A run with no
/// implementation after it (a `.pyi` stub file) becomes its first stub, its range
/// ending with the last. So an overloaded function is one definition, and calls
/// and context find the implementation. `definitions` are in start order.
fn fold_overloads(definitions: Vec<Definition>, overloads: &HashSet<u32>) -> Vec<Definition> {
    let containers = Definition::containers(&definitions);
    // The next definition of the same scope after each one.
    let mut next: Vec<Option<usize>> = vec![None; definitions.len()];
    let mut last: HashMap<Option<usize>, usize> = HashMap::default();
    for (i, scope) in containers.iter().enumerate() {
        if let Some(before) = last.insert(*scope, i) {
            next[before] = Some(i);
        }
    }
    let stub = |i: usize| {
        definitions[i].kind == DefKind::Function && overloads.contains(&definitions[i].start_byte)
    };
    let mut dropped = vec![false; definitions.len()];
    // (kept definition, its new start byte and line, its new end byte and line).
    let mut grown: Vec<(usize, u32, u32, u32, u32)> = Vec::new();
    for first in 0..definitions.len() {
        if dropped[first] || !stub(first) {
            continue;
        }
        let mut run = vec![first];
        let mut implementation = None;
        while let Some(after) = next[*run.last().expect("not empty")] {
            let same = definitions[after].kind == DefKind::Function
                && definitions[after].name == definitions[first].name;
            if !same {
                break;
            }
            if stub(after) {
                run.push(after);
            } else {
                implementation = Some(after);
                break;
            }
        }
        let kept = implementation.unwrap_or(first);
        let last = implementation.unwrap_or(*run.last().expect("not empty"));
        for &i in &run {
            dropped[i] = i != kept;
        }
        let (start, end) = (&definitions[first], &definitions[last]);
        grown.push((
            kept,
            start.start_byte,
            start.line,
            end.end_byte,
            end.end_line,
        ));
    }
    let mut definitions = definitions;
    for (kept, start_byte, line, end_byte, end_line) in grown {
        let d = &mut definitions[kept];
        (d.start_byte, d.line) = (start_byte, line);
        (d.end_byte, d.end_line) = (end_byte, end_line);
    }
    let mut definitions: Vec<Definition> = definitions
        .into_iter()
        .zip(dropped)
        .filter(|(_, dropped)| !dropped)
        .map(|(d, _)| d)
        .collect();
    definitions.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
    definitions
}

/// Whether `node` is the C or C++ `struct`, `union` or `enum` of a `typedef` that
/// gives it its own name (`typedef struct X {...} X;`): one type, whose definition
/// is the `typedef` (it spans the whole, the name it is used by last).
fn typedef_named_alike(language: Language, node: tree_sitter::Node, source: &[u8]) -> bool {
    if !matches!(language, Language::C | Language::Cpp)
        || !matches!(
            node.kind(),
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier"
        )
    {
        return false;
    }
    let (Some(name), Some(typedef)) = (node.child_by_field_name("name"), node.parent()) else {
        return false;
    };
    if typedef.kind() != "type_definition" {
        return false;
    }
    let mut cursor = typedef.walk();
    let same = typedef
        .children_by_field_name("declarator", &mut cursor)
        .any(|d| source[d.byte_range()] == source[name.byte_range()]);
    same
}

/// The type a method defined by `node` belongs to, when the method is written
/// outside the type's body (see `Definition::owner`): a Go method's receiver type,
/// or for an item directly in a Rust `impl` block, the type it implements for.
fn owner(language: Language, node: tree_sitter::Node, source: &[u8]) -> Option<Box<str>> {
    let text = |n: tree_sitter::Node| String::from_utf8_lossy(&source[n.byte_range()]).into();
    // The named type under pointers, references and type arguments (`*List[T]`,
    // `&'a mut Foo<T>`, `crate::a::Foo`); None for any other type (a tuple, a slice).
    fn named(mut ty: tree_sitter::Node<'_>) -> Option<tree_sitter::Node<'_>> {
        loop {
            ty = match ty.kind() {
                "type_identifier" | "primitive_type" => return Some(ty),
                "pointer_type" | "parenthesized_type" => ty.named_child(0)?,
                "reference_type" | "generic_type" => ty.child_by_field_name("type")?,
                "scoped_type_identifier" => ty.child_by_field_name("name")?,
                _ => return None,
            };
        }
    }
    match language {
        Language::Go if node.kind() == "method_declaration" => {
            let receiver = node.child_by_field_name("receiver")?.named_child(0)?;
            named(receiver.child_by_field_name("type")?).map(text)
        }
        Language::Rust => {
            let body = node.parent()?;
            let block = body.parent()?;
            if body.kind() != "declaration_list" || block.kind() != "impl_item" {
                return None;
            }
            let ty = named(block.child_by_field_name("type")?)?;
            // `impl<T: Bound> Trait for T`: the type is any, the trait names it.
            let parameter =
                block
                    .child_by_field_name("type_parameters")
                    .is_some_and(|parameters| {
                        let mut cursor = parameters.walk();
                        let found = parameters.named_children(&mut cursor).any(|p| {
                            p.child_by_field_name("name").is_some_and(|name| {
                                source[name.byte_range()] == source[ty.byte_range()]
                            })
                        });
                        found
                    });
            if parameter {
                return named(block.child_by_field_name("trait")?).map(text);
            }
            Some(text(ty))
        }
        _ => None,
    }
}

/// The receiver of a call whose name is `name`, when it is a plain word before it:
/// `m` in `m.f()`, `m::f()`, `self.f()`.
fn receiver(
    language: Language,
    call: tree_sitter::Node,
    name: tree_sitter::Node,
    source: &[u8],
) -> Option<String> {
    if matches!(language, Language::Kotlin | Language::Swift) {
        return navigation_receiver(call, name, source);
    }
    // The name's parent, found down from the call (`Node::parent` walks down from
    // the root of the whole file). Java's and JavaScript's tags mark the
    // arguments as the call, beside the name: there the parent is asked for.
    let mut parent = call;
    if call.start_byte() > name.start_byte() {
        parent = name.parent()?;
    } else {
        loop {
            let child = parent.child_with_descendant(name)?;
            if child == name {
                break;
            }
            parent = child;
        }
    }
    // The field holding the object, per grammar (a plain call `f()` tries them all).
    let object = language
        .receiver_fields()
        .iter()
        .find_map(|&field| parent.child_by_field_id(field))?;
    if object.end_byte() > name.start_byte() {
        return None;
    }
    let text = &source[object.byte_range()];
    // PHP's `$this->f()`, `$m->f()`, `$this->x->f()`.
    let text = text.strip_prefix(b"$").unwrap_or(text);
    receiver_text(text)
}

/// A call's receiver as `Receiver` reads it, from its object's text: a plain word
/// (`m`, `self`, `this`), `self.x` or `this.x` (an attribute of the enclosing
/// class; PHP's `this->x` given as `this.x`), or `self.` alone for any longer chain
/// through `self` or `this` (`self.x.y`, `self.x[0]`, `this.x()`).
fn receiver_text(text: &[u8]) -> Option<String> {
    let is_word = |text: &[u8]| {
        !text.is_empty()
            && text.len() <= 64
            && text.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    if is_word(text) {
        return Some(String::from_utf8_lossy(text).into_owned());
    }
    let rest = [&b"self."[..], b"this.", b"this->"]
        .iter()
        .find_map(|p| text.strip_prefix(*p))?;
    Some(if is_word(rest) {
        format!("self.{}", String::from_utf8_lossy(rest))
    } else {
        "self.".to_string()
    })
}

/// The receiver of a Kotlin or Swift call on a member, as `receiver` gives it: the
/// object of the call's `navigation_expression` (Kotlin's first child, Swift's
/// `target`), as `receiver_text` reads it.
fn navigation_receiver(
    call: tree_sitter::Node,
    name: tree_sitter::Node,
    source: &[u8],
) -> Option<String> {
    let navigation = call.named_child(0)?;
    if navigation.kind() != "navigation_expression" || navigation.end_byte() < name.end_byte() {
        return None;
    }
    let object = navigation
        .child_by_field_name("target")
        .or_else(|| navigation.named_child(0))?;
    if object.end_byte() > name.start_byte() {
        return None;
    }
    receiver_text(&source[object.byte_range()])
}

/// Whether a Swift type name is a built-in attribute (`@objc`, `@available`,
/// `@testable`, `@discardableResult`: lower case), not a type. An attribute in upper
/// case names a type: a property wrapper, result builder or global actor
/// (`@Published`, `@MainActor`).
fn builtin_attribute(language: Language, node: tree_sitter::Node, source: &[u8]) -> bool {
    language == Language::Swift
        && source
            .get(node.start_byte())
            .is_some_and(u8::is_ascii_lowercase)
        && node
            .parent()
            .and_then(|user_type| user_type.parent())
            .is_some_and(|parent| parent.kind() == "attribute")
}

/// Whether a C or C++ name is written as a macro or constant is (`LIST_MAX`,
/// `EINVAL`): two or more capitals, digits and `_`, one capital at least.
fn macro_like(name: &[u8]) -> bool {
    name.len() >= 2
        && name.iter().any(u8::is_ascii_uppercase)
        && name
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// Identifiers inside definitions that name one of the file's variables or a name
/// it imports (a variable defined elsewhere): one `Use` per (definition, name). In
/// C and C++, whose `#include` names no items, also every name written as a macro
/// is: linked to a `#define` of the file or of the files it includes.
fn uses(
    language: Language,
    identifiers: &[tree_sitter::Node],
    source: &[u8],
    definitions: &[Definition],
    imports: &[Import],
) -> Vec<Found> {
    let wanted: HashSet<&[u8]> = definitions
        .iter()
        .filter(|d| d.kind == DefKind::Variable)
        .map(|d| d.name.as_bytes())
        .chain(imports.iter().flat_map(|i| {
            i.items
                .iter()
                .chain(i.renamed.iter().map(|(local, _)| local))
                .map(|n| n.as_bytes())
        }))
        .collect();
    identifiers
        .iter()
        .filter(|node| {
            let name = &source[node.byte_range()];
            wanted.contains(name)
                || (matches!(language, Language::C | Language::Cpp) && macro_like(name))
        })
        .map(|node| Found {
            kind: RefKind::Use,
            name: String::from_utf8_lossy(&source[node.byte_range()]).into_owned(),
            line: node.start_position().row + 1,
            byte: node.start_byte(),
            receiver: None,
            bare: false,
        })
        .collect()
}

/// Gives each reference its origin and drops what is not a reference:
/// - a call is made from the innermost enclosing function (else the file);
/// - a base from the innermost enclosing class;
/// - a type reference or a use from the innermost enclosing definition, and a use
///   at file level, or inside the variable's own definition, is no reference;
/// - a type reference where a base was found is the base; repeats of a (kind,
///   origin, name) other than calls are dropped, calls are one per call site.
///
/// Each import's items follow as `Item` references.
fn resolve_origins(
    language: Language,
    mut found: Vec<Found>,
    definitions: &[Definition],
    imports: &[Import],
    bindings: &[Binding],
    deadline: std::time::Instant,
) -> (Vec<Reference>, Vec<String>, bool) {
    let classes = Classes::of(bindings, definitions);
    let mut types: Vec<String> = Vec::new();
    let mut type_index: HashMap<String, u32> = HashMap::default();
    // The import bringing each plain name in, and the item a renamed one stands for.
    let mut named: HashMap<&str, (u32, &str)> = HashMap::default();
    for (i, import) in imports.iter().enumerate().rev() {
        for item in &import.items {
            named.insert(item.as_str(), (i as u32, item.as_str()));
        }
        for (local, item) in &import.renamed {
            named.insert(local.as_str(), (i as u32, item.as_str()));
        }
        // Kotlin's `import a.b.max as maximum` renames what it imports, a function
        // or a class as much as a package: `maximum(...)` calls `max`.
        if let (Language::Kotlin, Some(alias)) = (language, &import.alias) {
            let item = import.module.rsplit('.').next().unwrap_or(&import.module);
            named.insert(alias.as_str(), (i as u32, item));
        }
    }
    // The first import binding each name.
    let mut bound: HashMap<&str, u32> = HashMap::default();
    for (i, import) in imports.iter().enumerate() {
        for name in bound_names(language, import) {
            bound.entry(name).or_insert(i as u32);
        }
    }
    // A receiver as written, where the call is made from (the open definitions,
    // outermost first), to what it pins the call to.
    let mut receiver_of = |text: &Option<String>, open: &[usize], byte: usize| -> Receiver {
        let class = match text.as_deref() {
            None => return Receiver::Unknown,
            Some("self" | "this" | "cls" | "Self") => return Receiver::This,
            Some(attribute) if attribute.contains('.') => {
                let field = attribute.split_once('.').map_or("", |(_, f)| f);
                match classes.attribute(open, byte, field) {
                    Some(class) => Some(class),
                    None => return Receiver::Member,
                }
            }
            Some(word) => match classes.variable(open, byte, word) {
                Some(class) => Some(class),
                None if bound.contains_key(word) => {
                    return Receiver::Import(bound[word]);
                }
                // A Java, C#, Kotlin, Swift or Scala field named without `this`.
                None if matches!(
                    language,
                    Language::Java
                        | Language::CSharp
                        | Language::Kotlin
                        | Language::Swift
                        | Language::Scala
                ) =>
                {
                    classes.attribute(open, byte, word)
                }
                None => None,
            },
        };
        match class {
            Some(class) => {
                let next = types.len() as u32;
                let at = *type_index.entry(class.to_string()).or_insert(next);
                if at == next {
                    types.push(class.to_string());
                }
                Receiver::Type(at)
            }
            None => Receiver::Unknown,
        }
    };
    found.sort_by_key(|f| (f.byte, f.kind as u8));
    let inherit_bytes: HashSet<usize> = found
        .iter()
        .filter(|f| f.kind == RefKind::Inherit)
        .map(|f| f.byte)
        .collect();
    // The definitions open at the current byte, outermost first: `found` is in byte
    // order and `definitions` in start order, so one sweep keeps it up to date and
    // each lookup scans only the nesting (not every definition of the file).
    let mut open: Vec<usize> = Vec::new();
    let mut next_definition = 0;
    let innermost = |open: &[usize], byte: usize, accept: &dyn Fn(&Definition) -> bool| {
        open.iter()
            .rev()
            .copied()
            .find(|&d| accept(&definitions[d]) && definitions[d].contains_byte(byte))
    };
    let mut seen: HashSet<(RefKind, Option<usize>, &str)> = HashSet::default();
    let mut out: Vec<Reference> = Vec::new();
    let mut last_call: Option<(usize, &str)> = None;
    let mut cut = false;
    for (n, f) in found.iter().enumerate() {
        // The clock is read every 1,024 references (a read costs ~20 ns): past
        // `deadline`, the references resolved so far are kept (the first 1,024
        // always: a query that ran out of time still leaves some).
        if n > 0 && n % 1024 == 0 && std::time::Instant::now() >= deadline {
            cut = true;
            break;
        }
        while next_definition < definitions.len()
            && definitions[next_definition].start_byte as usize <= f.byte
        {
            open.push(next_definition);
            next_definition += 1;
        }
        while open
            .last()
            .is_some_and(|&d| definitions[d].end_byte as usize <= f.byte)
        {
            open.pop();
        }
        let innermost = |accept: &dyn Fn(&Definition) -> bool| innermost(&open, f.byte, accept);
        let origin = match f.kind {
            RefKind::Call => {
                if last_call == Some((f.byte, f.name.as_str())) {
                    continue;
                }
                last_call = Some((f.byte, f.name.as_str()));
                innermost(&|d| d.kind == DefKind::Function)
            }
            RefKind::Inherit => match innermost(&|d| d.kind == DefKind::Class) {
                Some(class) => Some(class),
                None => continue,
            },
            RefKind::Type if inherit_bytes.contains(&f.byte) => continue,
            RefKind::Type => innermost(&|d| d.kind != DefKind::Variable),
            RefKind::Use => {
                if innermost(&|d| d.kind == DefKind::Variable && *d.name == *f.name).is_some() {
                    continue;
                }
                match innermost(&|d| d.kind != DefKind::Variable) {
                    Some(def) => Some(def),
                    None => continue,
                }
            }
            RefKind::Item => continue, // items come from the imports, below
        };
        if f.kind != RefKind::Call && !seen.insert((f.kind, origin, f.name.as_str())) {
            continue;
        }
        let origin = origin.map_or(Origin::File, |d| Origin::Definition(d as u32));
        // A renamed import is looked up under its item's name (a class through it
        // is a base or a type as much as a call).
        let (name, receiver) = match (f.kind, &f.receiver, named.get(f.name.as_str())) {
            (RefKind::Call, None, Some(&(i, item))) => (item.into(), Receiver::Named(i)),
            (RefKind::Inherit | RefKind::Type, _, Some(&(i, item))) if item != f.name => {
                (item.into(), Receiver::Named(i))
            }
            (RefKind::Use, _, Some(&(_, item))) => (item.into(), Receiver::Unknown),
            (RefKind::Call, _, _) => (
                f.name.as_str().into(),
                receiver_of(&f.receiver, &open, f.byte),
            ),
            _ => (f.name.as_str().into(), Receiver::Unknown),
        };
        out.push(Reference {
            kind: f.kind,
            name,
            line: line32(f.line),
            origin,
            receiver,
        });
    }
    for (i, import) in imports.iter().enumerate() {
        for item in &import.items {
            let name = item.rsplit(['.', ':']).next().unwrap_or(item).into();
            out.push(Reference {
                kind: RefKind::Item,
                name,
                line: line32(import.line),
                origin: Origin::Import(i as u32),
                receiver: Receiver::Unknown,
            });
        }
    }
    // By name, and within a name calls first in source order, then the other kinds:
    // a file's references to one name are one run, found by binary search.
    out.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then((a.kind != RefKind::Call).cmp(&(b.kind != RefKind::Call)))
    });
    (out, types, cut)
}

/// The classes the file's bindings give names, by scope: a variable's scope is the
/// innermost function around it (or the file), an attribute's the innermost class.
/// A name given two different classes in one scope has none (the code is read
/// without its control flow).
struct Classes<'a> {
    /// (scope: a function's index or None for the file, name) -> class.
    variables: HashMap<(Option<usize>, &'a str), Option<&'a str>>,
    /// (class index, attribute) -> class.
    attributes: HashMap<(usize, &'a str), Option<&'a str>>,
    definitions: &'a [Definition],
}

impl<'a> Classes<'a> {
    fn of(bindings: &'a [Binding], definitions: &'a [Definition]) -> Self {
        let mut variables: HashMap<(Option<usize>, &str), Option<&str>> = HashMap::default();
        let mut attributes: HashMap<(usize, &str), Option<&str>> = HashMap::default();
        let merge = |slot: &mut Option<&'a str>, class: &'a str| {
            if *slot != Some(class) {
                *slot = None;
            }
        };
        // One sweep in byte order, as in `resolve_origins`: the definitions open at
        // each binding, outermost first.
        let mut order: Vec<&Binding> = bindings.iter().collect();
        order.sort_by_key(|b| b.byte);
        let mut open: Vec<usize> = Vec::new();
        let mut next = 0;
        for b in order {
            while next < definitions.len() && definitions[next].start_byte as usize <= b.byte {
                open.push(next);
                next += 1;
            }
            while open
                .last()
                .is_some_and(|&d| definitions[d].end_byte as usize <= b.byte)
            {
                open.pop();
            }
            let innermost = |kind: DefKind| {
                open.iter()
                    .rev()
                    .copied()
                    .find(|&d| definitions[d].kind == kind && definitions[d].contains_byte(b.byte))
            };
            let class = b.class.as_str();
            if b.attribute {
                if let Some(owner) = innermost(DefKind::Class) {
                    attributes
                        .entry((owner, b.name.as_str()))
                        .and_modify(|slot| merge(slot, class))
                        .or_insert(Some(class));
                }
            } else if innermost(DefKind::Class) > innermost(DefKind::Function) {
                // A name bound in a class body (a field) is no variable of the methods.
                continue;
            } else {
                variables
                    .entry((innermost(DefKind::Function), b.name.as_str()))
                    .and_modify(|slot| merge(slot, class))
                    .or_insert(Some(class));
            }
        }
        Classes {
            variables,
            attributes,
            definitions,
        }
    }

    /// The class of a variable seen from `byte` inside `open` (the definitions open
    /// there, outermost first, some perhaps closed already): the innermost function
    /// binding it, else the file.
    fn variable(&self, open: &[usize], byte: usize, name: &str) -> Option<&'a str> {
        if self.variables.is_empty() {
            return None;
        }
        let functions = open
            .iter()
            .rev()
            .filter(|&&d| {
                self.definitions[d].kind == DefKind::Function
                    && self.definitions[d].contains_byte(byte)
            })
            .map(|&d| Some(d));
        for scope in functions.chain([None]) {
            if let Some(class) = self.variables.get(&(scope, name)) {
                return *class;
            }
        }
        None
    }

    /// The class of an attribute of the innermost class around `byte`.
    fn attribute(&self, open: &[usize], byte: usize, name: &str) -> Option<&'a str> {
        if self.attributes.is_empty() {
            return None;
        }
        let class = open.iter().rev().find(|&&d| {
            self.definitions[d].kind == DefKind::Class && self.definitions[d].contains_byte(byte)
        })?;
        self.attributes.get(&(*class, name)).copied().flatten()
    }
}
