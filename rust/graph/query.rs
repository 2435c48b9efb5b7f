//! Queries: what a file contains, definitions by name (exact, prefix, fuzzy), the
//! edges into and out of them, and the files a file depends on.

use super::adjacency::{Direction, NodeIndex};
use super::model::{Edge, EdgeKind, NodeKind, NO_OWNER};
use super::search::Searchable;
use super::store::KnowledgeGraph;
use crate::error::{invalid, Result};

/// The edge kinds by which something refers to a definition (what `references`
/// follows when no kind is asked for).
pub const REFERENCE_KINDS: [EdgeKind; 4] = [
    EdgeKind::Calls,
    EdgeKind::Inherits,
    EdgeKind::References,
    EdgeKind::Uses,
];

/// The reference kinds a kind name asks for: all of `REFERENCE_KINDS` for None,
/// else the one of that name; another name is an error.
pub fn reference_kinds(kind: Option<&str>) -> Result<Vec<EdgeKind>> {
    let Some(kind) = kind else {
        return Ok(REFERENCE_KINDS.to_vec());
    };
    match REFERENCE_KINDS.iter().find(|e| e.name() == kind) {
        Some(&e) => Ok(vec![e]),
        None => {
            let known: Vec<_> = REFERENCE_KINDS.iter().map(|e| e.name()).collect();
            Err(invalid("kind", format!("{kind:?} is not one of {known:?}")))
        }
    }
}

/// A name as queries take it: `method`, or `Class.method` or `Class::method` split
/// at the last `.` or `::` into (Some(Class), method). A name with nothing before
/// the separator is plain.
pub fn split_qualified(name: &str) -> (Option<&str>, &str) {
    let dot = name.rfind('.').map(|i| (i, i + 1));
    let colons = name.rfind("::").map(|i| (i, i + 2));
    match dot.max(colons) {
        Some((at, after)) if at > 0 => (Some(&name[..at]), &name[after..]),
        _ => (None, name),
    }
}

/// A file's module path as components: `pkg/mod.py` is `pkg, mod`; a package file
/// (`__init__.py`, `mod.rs`, `lib.rs`, `index.js`...) is its folder's.
fn module_parts(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    if let Some(file) = parts.pop() {
        let stem = file.split('.').next().unwrap_or(file);
        if !matches!(stem, "__init__" | "mod" | "lib" | "index") {
            parts.push(stem);
        }
    }
    parts
}

/// What finding definitions by name, and following the edges into and out of
/// them, reads of a graph: the loaded graph (`KnowledgeGraph`) or a saved one read
/// in place (`GraphView`), which answer alike.
pub trait Symbols: Searchable {
    /// The definitions called `name`.
    fn named_exactly(&self, name: &str) -> Vec<NodeIndex>;
    /// Calls `each` with every name some definition has that starts with `prefix`
    /// (every name for ""), and its definitions.
    fn each_named(&self, prefix: &str, each: &mut dyn FnMut(&str, &[NodeIndex]));
    /// Calls `each` with every name some definition has (without its definitions:
    /// what a scan of every name reads).
    fn each_name(&self, each: &mut dyn FnMut(&str));
    /// A definition's path, line and name (None for a node the graph cannot read).
    fn place(&self, id: NodeIndex) -> Option<(&str, u32, &str)>;
    /// The type or function a definition is in (see `KnowledgeGraph::scope`).
    fn scope_of(&self, id: NodeIndex) -> Option<&str>;
    /// A file's definitions then its imports, each in the order extraction found
    /// them; None for a file not in the graph.
    fn file_nodes(&self, path: &str) -> Option<Vec<NodeIndex>>;
    /// A node's first and last line, and whether it is an import.
    fn lines(&self, id: NodeIndex) -> Option<(u32, u32, bool)>;
    /// Each edge out of (`Outgoing`) or into a node, as (the node at its other
    /// end, the edge), most recently added first.
    fn each_edge(&self, id: NodeIndex, direction: Direction, each: &mut dyn FnMut(NodeIndex, Edge));

    /// Every definition and import in a file, in line order (an import after a
    /// definition on the same lines).
    fn file_contents(&self, path: &str) -> Option<Vec<NodeIndex>> {
        let mut out = self.file_nodes(path)?;
        out.sort_by_cached_key(|&n| self.lines(n));
        Some(out)
    }

    /// Whether a node is defined in `scope` (any node when `scope` is None): its
    /// class (`Class`), its module (`pkg.module`, `pkg::module`, `pkg/module`: the
    /// end of its file's module path), or both (`pkg.module.Class`).
    fn in_scope(&self, id: NodeIndex, scope: Option<&str>) -> bool {
        let Some(qualifier) = scope else {
            return true;
        };
        let own = self.scope_of(id);
        if own == Some(qualifier) {
            return true;
        }
        let mut parts: Vec<&str> = qualifier
            .split(['.', ':', '/'])
            .filter(|p| !p.is_empty())
            .collect();
        if let Some(class) = own {
            if parts.last() != Some(&class) {
                return false;
            }
            parts.pop();
        }
        let Some((path, _, _)) = self.place(id) else {
            return false;
        };
        !parts.is_empty() && module_parts(path).ends_with(&parts)
    }

    /// The definitions `name` names: those called `name`, or for a qualified name
    /// (`Class.method`, `Class::method`, `pkg.module.func`, `pkg.module.Class.method`)
    /// those called by its last part defined in that scope (see `in_scope`).
    fn definitions(&self, name: &str) -> Vec<NodeIndex> {
        let (scope, name) = split_qualified(name);
        let mut found = self.named_exactly(name);
        found.retain(|&id| self.in_scope(id, scope));
        found
    }

    /// Definitions named `name` (or starting with it), sorted by path then line.
    /// `Class.method` (`Class::method`) matches `method` (or the names starting
    /// with it) in the scope `Class` only.
    fn find_symbol(&self, name: &str, prefix: bool) -> Vec<NodeIndex> {
        let out: Vec<NodeIndex> = if prefix {
            let (scope, name) = split_qualified(name);
            let mut found = Vec::new();
            self.each_named(name, &mut |_, ids| found.extend_from_slice(ids));
            found.retain(|&id| self.in_scope(id, scope));
            found
        } else {
            self.definitions(name)
        };
        let mut placed: Vec<_> = out.into_iter().map(|id| (self.place(id), id)).collect();
        placed.sort_by(|a, b| a.0.cmp(&b.0));
        placed.into_iter().map(|(_, id)| id).collect()
    }

    /// Definitions whose name contains the letters of `query` in order, ignoring case
    /// (`gfc` finds `get_file_contents`), best first: the name itself, then names
    /// containing the query (earlier is better), then the tightest spread of letters;
    /// ties by name length, path, line, name. `Class.query` (`Class::query`) matches the
    /// method part so, in the scope `Class` (exactly) only.
    fn find_fuzzy(&self, query: &str) -> Vec<NodeIndex> {
        let (scope, query) = split_qualified(query);
        let query: Vec<char> = query.to_lowercase().chars().collect();
        if query.is_empty() {
            return Vec::new();
        }
        let text: String = query.iter().collect();
        let mut matched: Vec<((usize, usize), String)> = Vec::new();
        self.each_name(&mut |name| {
            // Most names lack the letters in order: told apart without an allocation.
            if name.is_ascii() && !ascii_subsequence(name.as_bytes(), &query) {
                return;
            }
            let lower = name.to_lowercase();
            let score = if lower == text {
                Some((0, 0))
            } else if let Some(at) = lower.find(&text) {
                Some((1, at))
            } else {
                subsequence_span(&lower, &query).map(|span| (2, span))
            };
            if let Some(score) = score {
                matched.push((score, name.to_string()));
            }
        });
        let mut scored: Vec<((usize, usize), NodeIndex)> = Vec::new();
        for (score, name) in matched {
            scored.extend(
                self.named_exactly(&name)
                    .into_iter()
                    .filter(|&id| self.in_scope(id, scope))
                    .map(|id| (score, id)),
            );
        }
        let key = |(score, id): &((usize, usize), NodeIndex)| {
            let (path, line, name) = self.place(*id).unwrap_or_default();
            (*score, name.len(), path, line, name)
        };
        let mut keyed: Vec<_> = scored.iter().map(|s| (key(s), s.1)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, id)| id).collect()
    }

    /// `find_symbol` (exact or `prefix`) or `find_fuzzy`; asking for both is an error.
    fn find(&self, name: &str, prefix: bool, fuzzy: bool) -> Result<Vec<NodeIndex>> {
        match (prefix, fuzzy) {
            (true, true) => Err(invalid("fuzzy", "prefix and fuzzy are exclusive")),
            (_, true) => Ok(self.find_fuzzy(name)),
            _ => Ok(self.find_symbol(name, prefix)),
        }
    }

    /// Edges of `kind` into (`Incoming`) or out of the definitions `name` names
    /// (see `definitions`), as (the node at the other end, the edge), by path and line.
    fn related(&self, name: &str, kind: EdgeKind, direction: Direction) -> Vec<(NodeIndex, Edge)> {
        let mut out: Vec<(NodeIndex, Edge)> = Vec::new();
        for def in self.definitions(name) {
            self.each_edge(def, direction, &mut |other, edge| {
                if edge.kind == kind {
                    out.push((other, edge));
                }
            });
        }
        let mut placed: Vec<_> = out
            .into_iter()
            .map(|(id, edge)| {
                let (path, line, _) = self.place(id).unwrap_or_default();
                ((path, edge.line, line), (id, edge))
            })
            .collect();
        placed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(NodeIndex, Edge)> = placed.into_iter().map(|(_, found)| found).collect();
        out.dedup_by_key(|(n, e)| (*n, e.line));
        out
    }

    /// What refers to the definitions `name` names through edges of `kinds` (see
    /// `REFERENCE_KINDS`), by path, line and kind.
    fn references(&self, name: &str, kinds: &[EdgeKind]) -> Vec<(NodeIndex, Edge)> {
        let found = kinds
            .iter()
            .flat_map(|&k| self.related(name, k, Direction::Incoming));
        let mut placed: Vec<_> = found
            .map(|(id, edge)| {
                let path = self.place(id).unwrap_or_default().0;
                ((path, edge.line, edge.kind), (id, edge))
            })
            .collect();
        placed.sort_by(|a, b| a.0.cmp(&b.0));
        placed.into_iter().map(|(_, found)| found).collect()
    }

    /// What calls a symbol: (caller, the call edge), by path and call line.
    fn callers(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.related(name, EdgeKind::Calls, Direction::Incoming)
    }

    /// What a symbol calls: (callee, the call edge).
    fn callees(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.related(name, EdgeKind::Calls, Direction::Outgoing)
    }

    /// The files a file imports (`Outgoing`) or that import it (`Incoming`), sorted;
    /// None for a file not in the graph.
    fn dependencies(&self, path: &str, direction: Direction) -> Option<Vec<String>> {
        let from: Vec<NodeIndex> = match direction {
            Direction::Outgoing => {
                let mut nodes = self.file_nodes(path)?;
                nodes.retain(|&n| self.lines(n).is_some_and(|(_, _, import)| import));
                nodes
            }
            Direction::Incoming => vec![self.file_node(path)?],
        };
        let mut out: Vec<String> = Vec::new();
        for node in from {
            self.each_edge(node, direction, &mut |other, edge| {
                if edge.kind == EdgeKind::Imports {
                    if let Some((path, _, _)) = self.place(other) {
                        out.push(path.to_string());
                    }
                }
            });
        }
        out.sort();
        out.dedup();
        Some(out)
    }

    /// `neighbourhood` of the definitions `name` names (see `definitions`) and of
    /// the file `name`.
    fn neighbourhood_of(&self, name: &str, hops: usize) -> Vec<(NodeIndex, usize)> {
        let mut starts = self.find_symbol(name, false);
        starts.extend(self.file_node(name));
        self.neighbourhood(&starts, hops)
    }

    /// Nodes within `hops` edges of the starts (edges followed both ways), with their
    /// distance, nearest first, then by path, line, name and number; the starts
    /// themselves are at distance 0.
    fn neighbourhood(&self, starts: &[NodeIndex], hops: usize) -> Vec<(NodeIndex, usize)> {
        let mut distance: foldhash::HashMap<NodeIndex, usize> =
            starts.iter().map(|&s| (s, 0)).collect();
        let mut frontier: Vec<NodeIndex> = starts.to_vec();
        for depth in 1..=hops {
            if frontier.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for &node in &frontier {
                for direction in [Direction::Outgoing, Direction::Incoming] {
                    self.each_edge(node, direction, &mut |neighbour, _| {
                        if let std::collections::hash_map::Entry::Vacant(slot) =
                            distance.entry(neighbour)
                        {
                            slot.insert(depth);
                            next.push(neighbour);
                        }
                    });
                }
            }
            frontier = next;
        }
        let mut out: Vec<_> = distance
            .into_iter()
            .map(|(id, d)| {
                let (path, line, name) = self.place(id).unwrap_or_default();
                ((d, path, line, name, id.index()), (id, d))
            })
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, found)| found).collect()
    }
}

impl Symbols for KnowledgeGraph {
    fn named_exactly(&self, name: &str) -> Vec<NodeIndex> {
        self.named(name).to_vec()
    }

    fn each_named(&self, prefix: &str, each: &mut dyn FnMut(&str, &[NodeIndex])) {
        for (name, ids) in self.all_named() {
            if name.starts_with(prefix) {
                each(name, ids);
            }
        }
    }

    fn each_name(&self, each: &mut dyn FnMut(&str)) {
        for (name, _) in self.all_named() {
            each(name);
        }
    }

    fn place(&self, id: NodeIndex) -> Option<(&str, u32, &str)> {
        let n = &self.graph[id];
        Some((&n.path, n.line, &n.name))
    }

    fn scope_of(&self, id: NodeIndex) -> Option<&str> {
        self.scope(id)
    }

    fn file_nodes(&self, path: &str) -> Option<Vec<NodeIndex>> {
        Some(self.files.get(path)?.nodes().skip(1).collect())
    }

    fn lines(&self, id: NodeIndex) -> Option<(u32, u32, bool)> {
        let n = &self.graph[id];
        Some((n.line, n.end_line, n.kind == NodeKind::Import))
    }

    fn each_edge(
        &self,
        id: NodeIndex,
        direction: Direction,
        each: &mut dyn FnMut(NodeIndex, Edge),
    ) {
        for e in self.graph.edges_directed(id, direction) {
            let other = match direction {
                Direction::Outgoing => e.target(),
                Direction::Incoming => e.source(),
            };
            each(other, *e.weight());
        }
    }
}

impl KnowledgeGraph {
    /// The type or function a node is defined in: the type a method written outside
    /// its type's body belongs to (`Definition::owner`: a Go receiver, a Rust
    /// `impl`), else its parent's name, unless the parent is the file (None then,
    /// and for files).
    pub fn scope(&self, id: NodeIndex) -> Option<&str> {
        let owner = self.graph[id].owner;
        if owner != NO_OWNER {
            return Some(self.interned.get(owner));
        }
        self.parent(id)
            .map(|p| &self.graph[p])
            .filter(|p| p.kind != NodeKind::File)
            .map(|p| &*p.name)
    }

    /// The edges a file's nodes make other than containment: (source, target, edge),
    /// by line; None for a file not in the graph.
    pub fn references_from(&self, path: &str) -> Option<Vec<(NodeIndex, NodeIndex, Edge)>> {
        let entry = self.files.get(path)?;
        let mut out: Vec<(NodeIndex, NodeIndex, Edge)> = entry
            .nodes()
            .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
            .filter(|e| e.weight().kind != EdgeKind::Contains)
            .map(|e| (e.source(), e.target(), *e.weight()))
            .collect();
        out.sort_by_cached_key(|e| (e.2.line, e.2.kind, self.label(e.1)));
        Some(out)
    }
}

/// Whether the ASCII `name`, lowercased, holds `query`'s (lowercase) characters in
/// order: what every fuzzy match needs.
fn ascii_subsequence(name: &[u8], query: &[char]) -> bool {
    let mut wanted = query.iter();
    let mut next = wanted.next();
    for &byte in name {
        match next {
            None => break,
            Some(&c) if c == char::from(byte.to_ascii_lowercase()) => next = wanted.next(),
            Some(_) => {}
        }
    }
    next.is_none()
}

/// The length of the shortest stretch of `text` holding `query`'s characters in
/// order (None if it does not).
fn subsequence_span(text: &str, query: &[char]) -> Option<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut best: Option<usize> = None;
    for start in (0..chars.len()).filter(|&i| chars[i] == query[0]) {
        let mut q = 1;
        let mut end = start;
        for (i, &c) in chars.iter().enumerate().skip(start + 1) {
            if q == query.len() {
                break;
            }
            if c == query[q] {
                q += 1;
                end = i;
            }
        }
        if q == query.len() {
            let span = end - start + 1;
            best = Some(best.map_or(span, |b: usize| b.min(span)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::super::store::tests::graph;
    use super::*;

    #[test]
    fn fuzzy_symbol_search() {
        let g = graph(&[("a.py", "def get_file_contents():\n    pass\n\ndef gcf():\n    pass\n\ndef configure():\n    pass\n\nclass FileContents:\n    pass\n")]);
        let names = |q: &str| {
            g.find_fuzzy(q)
                .into_iter()
                .map(|n| g.node(n).name.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("gcf"), ["gcf"]);
        assert_eq!(names("gfc"), ["get_file_contents"]);
        assert_eq!(names("filecontents"), ["FileContents", "get_file_contents"]);
        assert_eq!(names("file_c"), ["get_file_contents"]);
        assert_eq!(names("conf"), ["configure"]);
        assert_eq!(
            names("co"),
            ["configure", "FileContents", "get_file_contents"]
        );
        assert!(names("").is_empty() && names("zzz").is_empty());
        assert_eq!(subsequence_span("abxxcab", &['a', 'b', 'c']), Some(5));
        assert!(ascii_subsequence(b"Get_File", &['g', 'f']));
        assert!(ascii_subsequence(b"abc", &[]));
        assert!(!ascii_subsequence(b"Get_File", &['f', 'g']));
        assert!(!ascii_subsequence(b"kelvin", &['\u{212a}']));
    }

    const TWO_RUNS: &str = "class A:\n    def run(self):\n        helper()\n    def go(self):\n        self.run()\n\nclass B:\n    def run(self):\n        pass\n    def go(self):\n        self.run()\n\ndef run():\n    pass\n\ndef helper():\n    pass\n";

    /// "scope.name:line" of each node.
    fn named(g: &KnowledgeGraph, ids: &[NodeIndex]) -> Vec<String> {
        ids.iter()
            .map(|&id| {
                let scope = g.scope(id).unwrap_or("");
                format!("{scope}.{}:{}", g.node(id).name, g.node(id).line)
            })
            .collect()
    }

    fn ends(g: &KnowledgeGraph, found: Vec<(NodeIndex, Edge)>) -> Vec<String> {
        let ids: Vec<NodeIndex> = found.into_iter().map(|(id, _)| id).collect();
        named(g, &ids)
    }

    #[test]
    fn split_qualified_names() {
        assert_eq!(split_qualified("run"), (None, "run"));
        assert_eq!(split_qualified("A.run"), (Some("A"), "run"));
        assert_eq!(split_qualified("A::run"), (Some("A"), "run"));
        assert_eq!(split_qualified("a.b::c"), (Some("a.b"), "c"));
        assert_eq!(split_qualified("A::b.c"), (Some("A::b"), "c"));
        assert_eq!(split_qualified("A."), (Some("A"), ""));
        assert_eq!(split_qualified(".run"), (None, ".run"));
        assert_eq!(split_qualified("::run"), (None, "::run"));
        assert_eq!(split_qualified(""), (None, ""));
    }

    #[test]
    fn qualified_names_pick_the_method_of_one_class() {
        let g = graph(&[("m.py", TWO_RUNS)]);
        let find = |name: &str| named(&g, &g.find_symbol(name, false));
        assert_eq!(find("run"), ["A.run:2", "B.run:8", ".run:13"]);
        assert_eq!(find("A.run"), ["A.run:2"]);
        assert_eq!(find("A::run"), ["A.run:2"]);
        assert_eq!(find("B.run"), ["B.run:8"]);
        assert!(find("C.run").is_empty());
        assert!(find("A.helper").is_empty(), "helper is not A's");
        assert!(find("A.").is_empty());
        assert_eq!(g.definitions("A.go").len(), 1);

        // Callers and callees of one class's method only.
        assert_eq!(ends(&g, g.callers("A.run")), ["A.go:4"]);
        assert_eq!(ends(&g, g.callers("B.run")), ["B.go:10"]);
        assert_eq!(ends(&g, g.callers("run")), ["A.go:4", "B.go:10"]);
        assert_eq!(ends(&g, g.callees("A.run")), [".helper:16"]);
        assert!(g.callees("B.run").is_empty());
        assert_eq!(
            ends(&g, g.references("A.run", &REFERENCE_KINDS)),
            ["A.go:4"]
        );

        // Prefix and fuzzy apply to the method part; the class must match exactly.
        let prefix = |name: &str| named(&g, &g.find_symbol(name, true));
        assert_eq!(prefix("A.r"), ["A.run:2"]);
        assert_eq!(prefix("A."), ["A.run:2", "A.go:4"]);
        assert!(prefix("a.r").is_empty());
        assert_eq!(prefix("r").len(), 3);
        let fuzzy = |name: &str| named(&g, &g.find_fuzzy(name));
        assert_eq!(fuzzy("B.rn"), ["B.run:8"]);
        assert_eq!(fuzzy("A.g"), ["A.go:4"]);
        assert!(fuzzy("A.").is_empty());
        assert!(fuzzy("Ab.run").is_empty());
        assert_eq!(fuzzy("rn").len(), 3);
        assert!(g.find("A.run", true, true).is_err());
        assert_eq!(g.find("A.ru", true, false).unwrap().len(), 1);

        // The neighbourhood of A.run: A.run, what contains it, calls it, it calls.
        let near: Vec<String> = g
            .neighbourhood_of("A.run", 1)
            .into_iter()
            .map(|(id, d)| format!("{}:{d}", named(&g, &[id])[0]))
            .collect();
        assert_eq!(near, ["A.run:2:0", ".A:1:1", "A.go:4:1", ".helper:16:1"]);
        assert_eq!(g.neighbourhood_of("run", 0).len(), 3);
        assert_eq!(g.neighbourhood_of("m.py", 0).len(), 1, "a file is no class");
    }

    /// In Rust a method's scope is the trait it is declared in, or the type of the
    /// `impl` block it is in (`impl<T> Foo<T>` and `impl Trait for Foo`: `Foo`; a
    /// blanket `impl<T> Trait for T`: the trait).
    #[test]
    fn qualified_names_in_rust_name_the_trait_or_the_impl_type() {
        let source = "trait Shape {\n    fn area(&self) -> f64 { 0.0 }\n}\n\
            struct Gitignore;\n\
            struct Foo<T>(T);\n\
            impl Gitignore {\n    pub fn new() -> Gitignore { Gitignore }\n    fn matched(&self) -> bool { true }\n    const MAX: u8 = 1;\n}\n\
            impl<T> Foo<T> {\n    fn new() -> Self { todo!() }\n}\n\
            impl Shape for crate::shapes::Foo<u8> {\n    fn area(&self) -> f64 { 1.0 }\n}\n\
            impl<T: Clone> Shape for T {\n    fn area(&self) -> f64 { 2.0 }\n}\n\
            impl Shape for &'static str {\n    fn area(&self) -> f64 { 3.0 }\n}\n\
            fn area() {\n    fn inner() {}\n}\n\
            mod tests {\n    fn matched() {}\n}\n";
        let g = crate::graph::KnowledgeGraph::from_files(vec![(
            "src/gitignore.rs".to_string(),
            crate::graph::extract(crate::graph::Language::Rust, source.as_bytes()),
        )]);
        let find = |name: &str| named(&g, &g.find_symbol(name, false));
        assert_eq!(
            find("area"),
            [
                "Shape.area:2",
                "Foo.area:15",
                "Shape.area:18",
                "str.area:21",
                ".area:23"
            ]
        );
        assert_eq!(find("Gitignore.matched"), ["Gitignore.matched:8"]);
        assert_eq!(find("Gitignore::new"), ["Gitignore.new:7"]);
        assert_eq!(find("Gitignore::MAX"), ["Gitignore.MAX:9"]);
        assert_eq!(find("Foo::new"), ["Foo.new:12"]);
        assert_eq!(find("Foo.area"), ["Foo.area:15"]);
        assert_eq!(find("Shape::area"), ["Shape.area:2", "Shape.area:18"]);
        assert_eq!(find("area.inner"), ["area.inner:24"]);
        assert_eq!(find("matched"), ["Gitignore.matched:8", ".matched:27"]);
        assert!(find("Foo.matched").is_empty());
        assert!(find("tests.matched").is_empty(), "a module is no scope");
        assert_eq!(find("gitignore.Gitignore.matched"), ["Gitignore.matched:8"]);
        // The owners outlive a save and a load, and a file naming one the graph's
        // names lack is refused.
        let saved = g.saved();
        let loaded = KnowledgeGraph::from_saved(saved.clone()).unwrap();
        assert_eq!(loaded.files(), g.files());
        assert_eq!(
            named(&loaded, &loaded.find_symbol("Foo::new", false)),
            ["Foo.new:12"]
        );
        let mut bad = saved;
        let method = bad.files[0]
            .symbols
            .definitions
            .iter_mut()
            .find(|d| d.owner.is_some())
            .unwrap();
        method.owner = Some("Nowhere".into());
        assert_eq!(
            KnowledgeGraph::from_saved(bad).unwrap_err(),
            "src/gitignore.rs: an owner the graph does not have"
        );
    }

    /// A Go method's scope is its receiver's type: pointer or value, generic or not.
    #[test]
    fn qualified_names_in_go_name_the_receiver_type() {
        let source = "package gin\n\n\
            type Engine struct{}\n\n\
            type List[T any] struct{}\n\n\
            func (engine *Engine) addRoute(method, path string) {}\n\n\
            func (Engine) Handler() {}\n\n\
            func (l *List[T]) Push(v T) {}\n\n\
            func (l List[T]) Len() int { return 0 }\n\n\
            func addRoute() {}\n";
        let g = crate::graph::KnowledgeGraph::from_files(vec![(
            "gin/gin.go".to_string(),
            crate::graph::extract(crate::graph::Language::Go, source.as_bytes()),
        )]);
        let find = |name: &str| named(&g, &g.find_symbol(name, false));
        assert_eq!(find("addRoute"), ["Engine.addRoute:7", ".addRoute:15"]);
        assert_eq!(find("Engine.addRoute"), ["Engine.addRoute:7"]);
        assert_eq!(find("Engine.Handler"), ["Engine.Handler:9"]);
        assert_eq!(find("List.Push"), ["List.Push:11"]);
        assert_eq!(find("List.Len"), ["List.Len:13"]);
        assert_eq!(find("gin.Engine.addRoute"), ["Engine.addRoute:7"]);
        assert!(find("List.addRoute").is_empty());
        assert_eq!(
            named(&g, &g.find_symbol("Engine.", true)),
            ["Engine.addRoute:7", "Engine.Handler:9"]
        );
    }
}
