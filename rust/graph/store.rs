//! The knowledge graph: files, functions, classes, variables and imports as nodes;
//! Contains, Calls, Imports, Inherits, References and Uses edges, in a petgraph
//! StableGraph with name, path and module indexes.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashSet};

use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableGraph};
use petgraph::visit::{EdgeRef, IntoEdgeReferences, NodeIndexable};
use petgraph::Direction;

use super::extract::{DefKind, FileSymbols, Language, Origin, Receiver, RefKind};
use super::modules::{self, Match};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    File,
    Function,
    Class,
    Variable,
    Import,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Function => "function",
            NodeKind::Class => "class",
            NodeKind::Variable => "variable",
            NodeKind::Import => "import",
        }
    }

    fn of(kind: DefKind) -> NodeKind {
        match kind {
            DefKind::Function => NodeKind::Function,
            DefKind::Class => NodeKind::Class,
            DefKind::Variable => NodeKind::Variable,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The symbol's name; a file's is its path, an import's its module as written.
    pub name: String,
    pub path: String,
    pub language: Language,
    pub line: usize,
    pub end_line: usize,
    /// A definition's first line; an import's statement.
    pub signature: String,
    /// An import's names (empty for other nodes).
    pub items: Vec<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum EdgeKind {
    /// File or class -> definition; file -> import.
    Contains,
    /// Function (or file, at top level) -> function or class called.
    Calls,
    /// Import -> file it resolves to.
    Imports,
    /// Class -> base class, interface, embedded struct, supertrait.
    Inherits,
    /// Definition -> class named in a type; import -> definition it imports.
    References,
    /// Definition -> variable it reads or writes.
    Uses,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Calls => "calls",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::References => "references",
            EdgeKind::Uses => "uses",
        }
    }

    fn of(kind: RefKind) -> EdgeKind {
        match kind {
            RefKind::Call => EdgeKind::Calls,
            RefKind::Inherit => EdgeKind::Inherits,
            RefKind::Type | RefKind::Item => EdgeKind::References,
            RefKind::Use => EdgeKind::Uses,
        }
    }
}

/// What a reference of each kind can point at.
fn targets(kind: RefKind, node: NodeKind) -> bool {
    match kind {
        RefKind::Call => matches!(node, NodeKind::Function | NodeKind::Class),
        RefKind::Inherit | RefKind::Type => node == NodeKind::Class,
        RefKind::Use => node == NodeKind::Variable,
        RefKind::Item => matches!(
            node,
            NodeKind::Function | NodeKind::Class | NodeKind::Variable
        ),
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub kind: EdgeKind,
    /// 1 for a unique target; 1/n when a reference's name matches n definitions.
    pub confidence: f32,
    /// Line of the reference, import or contained definition.
    pub line: usize,
    /// Index of the reference in its file's `references`; `u32::MAX` for Contains and Imports.
    reference: u32,
}

/// A file's linking as saved, so loading does not resolve and link again. Nodes are
/// named so that they survive renumbering: a file by its position in
/// `KnowledgeGraph::files`, a node by its position in its file (0 the file, then
/// its definitions, then its imports).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Links {
    /// The files each import resolves to.
    resolved: Vec<Vec<u32>>,
    /// The files in scope.
    scope: Vec<u32>,
    /// The edges out of the file's nodes other than Contains.
    edges: Vec<LinkedEdge>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct LinkedEdge {
    from: u32,
    to_file: u32,
    to: u32,
    kind: EdgeKind,
    confidence: f32,
    line: u32,
    reference: u32,
}

/// A file as saved: its path, symbols and links.
pub type SavedFile = (String, FileSymbols, Links);

/// The most definitions one reference is linked to (see `KnowledgeGraph::from_files`).
pub const MAX_CANDIDATES: usize = 5;

#[derive(Debug, Clone)]
struct FileEntry {
    node: NodeIndex,
    /// Node of each definition, in `FileSymbols::definitions` order.
    defs: Vec<NodeIndex>,
    /// Node of each import, in `FileSymbols::imports` order.
    imports: Vec<NodeIndex>,
    symbols: FileSymbols,
    /// Module keys this file answers to.
    keys: Vec<String>,
    /// The module keys each import looks up, and how their matches combine.
    import_keys: Vec<(Vec<String>, Match)>,
    /// The file nodes each import resolves to (set when the file's imports are linked).
    resolved: Vec<Vec<NodeIndex>>,
    /// The file nodes in scope: what it imports and its package, sorted.
    scope: Vec<NodeIndex>,
}

impl FileEntry {
    /// The file's node, then its definitions', then its imports'.
    fn nodes(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        std::iter::once(self.node)
            .chain(self.defs.iter().copied())
            .chain(self.imports.iter().copied())
    }

    /// The node at a position in `nodes`.
    fn node_at(&self, position: u32) -> Option<NodeIndex> {
        match (position as usize).checked_sub(1) {
            None => Some(self.node),
            Some(i) if i < self.defs.len() => Some(self.defs[i]),
            Some(i) => self.imports.get(i - self.defs.len()).copied(),
        }
    }
}

#[derive(Debug, Default, Clone)]
pub struct KnowledgeGraph {
    graph: StableGraph<Node, Edge>,
    files: HashMap<String, FileEntry>,
    /// Definitions by name, sorted by (file node, node): a file's are a contiguous run.
    names: HashMap<String, Vec<NodeIndex>>,
    /// The file node of every node, by node index.
    owner: Vec<NodeIndex>,
    /// The node containing every node (`NodeIndex::end()` for files), by node index.
    parents: Vec<NodeIndex>,
    /// Referenced name -> files referring to it, so an update re-resolves only the
    /// references it can change.
    wanted: HashMap<String, Vec<NodeIndex>>,
    /// Module key -> files (their nodes) answering to it.
    modules: HashMap<String, Vec<NodeIndex>>,
    /// Module key -> files looking it up.
    lookups: HashMap<String, Vec<NodeIndex>>,
}

/// What a file's entry needs that depends on the file alone (computed in parallel
/// on a build).
struct Prepared {
    keys: Vec<String>,
    import_keys: Vec<(Vec<String>, Match)>,
    /// The node of each definition, with the index of the innermost definition
    /// containing it (None: the file).
    defs: Vec<(Node, Option<usize>)>,
    /// The node of each import.
    imports: Vec<Node>,
}

impl Prepared {
    fn of(path: &str, symbols: &FileSymbols) -> Prepared {
        let language = symbols.language;
        let import_keys = symbols
            .imports
            .iter()
            .map(|import| modules::lookups(language, path, import))
            .collect();
        let node = |kind, name: &str, line, end_line, signature: &str, items: &[String]| Node {
            kind,
            name: name.to_string(),
            path: path.to_string(),
            language,
            line,
            end_line,
            signature: signature.to_string(),
            items: items.to_vec(),
        };
        let found = &symbols.definitions;
        let defs = found
            .iter()
            .enumerate()
            .map(|(i, d)| {
                // Contained by the innermost enclosing class or function.
                let container = (0..i).rev().find(|&j| found[j].contains(d));
                (
                    node(
                        NodeKind::of(d.kind),
                        &d.name,
                        d.line,
                        d.end_line,
                        &d.signature,
                        &[],
                    ),
                    container,
                )
            })
            .collect();
        let imports = symbols
            .imports
            .iter()
            .map(|i| {
                node(
                    NodeKind::Import,
                    &i.module,
                    i.line,
                    i.line,
                    &i.statement,
                    &i.items,
                )
            })
            .collect();
        Prepared {
            keys: modules::keys(language, path),
            import_keys,
            defs,
            imports,
        }
    }
}

/// The file nodes each import of a file resolves to, and the file's scope.
type Resolution = (Vec<Vec<NodeIndex>>, Vec<NodeIndex>);

/// Per name, its candidate counts (see `candidate_counts`) before a change.
struct Counts {
    family: &'static str,
    before: Vec<(String, [usize; 2])>,
}

/// How the edges of a file are re-linked.
enum Relink<'a> {
    /// Imports and every reference.
    All,
    /// The references to these names.
    Names(&'a HashSet<String>),
}

impl KnowledgeGraph {
    /// Builds the graph from parsed files (path relative to the root, symbols).
    ///
    /// An import links to the files its module resolves to (see `modules`). A
    /// reference resolves, by name, to definitions of the kind it can name, in its own
    /// language (JavaScript and TypeScript count as one): in the
    /// same file if there are any; else in the files the file imports (and, for Go
    /// and Java, its package); else, for calls, bases and types, anywhere. n
    /// candidates share confidence 1/n. Names defined nowhere in the repository
    /// (library calls) get no edge, and neither do names with more than
    /// `MAX_CANDIDATES` candidates (`join`, `get`, `run`...): on CPython's standard
    /// library linking them all made 2.9 million edges out of 79 thousand nodes,
    /// nearly all wrong. Uses and imported names resolve only in the file and what
    /// it imports.
    pub fn from_files(files: Vec<(String, FileSymbols)>) -> Self {
        let (mut g, _) = Self::with_nodes(files);
        // Resolving and linking only read the graph: both run in parallel.
        use rayon::prelude::*;
        let resolutions: Vec<(String, Resolution)> = g
            .files
            .par_iter()
            .map(|(path, entry)| (path.clone(), g.resolution(entry)))
            .collect();
        for (path, (resolved, scope)) in resolutions {
            if let Some(entry) = g.files.get_mut(&path) {
                (entry.resolved, entry.scope) = (resolved, scope);
            }
        }
        let mut entries: Vec<&FileEntry> = g.files.values().collect();
        entries.sort_by_key(|e| e.node);
        let edges: Vec<Vec<(NodeIndex, NodeIndex, Edge)>> = entries
            .par_iter()
            .map(|e| g.edges_of(e, &Relink::All))
            .collect();
        for (a, b, e) in edges.into_iter().flatten() {
            g.graph.add_edge(a, b, e);
        }
        g
    }

    /// The nodes and indexes of `files` (no links yet), and each file's node in order.
    fn with_nodes(files: Vec<(String, FileSymbols)>) -> (Self, Vec<NodeIndex>) {
        use rayon::prelude::*;
        let mut g = KnowledgeGraph::default();
        let nodes = files
            .iter()
            .map(|(_, s)| 1 + s.definitions.len() + s.imports.len())
            .sum();
        let references: usize = files.iter().map(|(_, s)| s.references.len()).sum();
        g.graph.reserve_nodes(nodes);
        g.graph.reserve_edges(nodes + references);
        let prepared: Vec<(String, FileSymbols, Prepared)> = files
            .into_par_iter()
            .map(|(path, symbols)| {
                let prepared = Prepared::of(&path, &symbols);
                (path, symbols, prepared)
            })
            .collect();
        let order = prepared
            .into_iter()
            .map(|(path, symbols, prepared)| g.add_file_at(path, symbols, prepared, None))
            .collect();
        (g, order)
    }

    /// Each file's symbols and links, by path: what `from_saved` rebuilds the graph from.
    pub fn saved(&self) -> Vec<SavedFile> {
        let files = self.files();
        let entries: Vec<&FileEntry> = files.iter().map(|(path, _)| &self.files[path]).collect();
        // Every node's (file position, position in the file).
        let mut at = vec![(u32::MAX, u32::MAX); self.graph.node_bound()];
        for (p, entry) in entries.iter().enumerate() {
            for (local, node) in entry.nodes().enumerate() {
                at[node.index()] = (p as u32, local as u32);
            }
        }
        let links = entries.iter().map(|entry| {
            let position = |f: &NodeIndex| at[f.index()].0;
            let edges = entry
                .nodes()
                .enumerate()
                .flat_map(|(local, node)| {
                    self.graph
                        .edges_directed(node, Direction::Outgoing)
                        .map(move |e| (local, e))
                })
                .filter(|(_, e)| e.weight().kind != EdgeKind::Contains)
                .map(|(local, e)| {
                    let (to_file, to) = at[e.target().index()];
                    let w = e.weight();
                    LinkedEdge {
                        from: local as u32,
                        to_file,
                        to,
                        kind: w.kind,
                        confidence: w.confidence,
                        line: w.line as u32,
                        reference: w.reference,
                    }
                })
                .collect();
            Links {
                resolved: entry
                    .resolved
                    .iter()
                    .map(|files| files.iter().map(position).collect())
                    .collect(),
                scope: entry.scope.iter().map(position).collect(),
                edges,
            }
        });
        files
            .into_iter()
            .zip(links)
            .map(|((path, symbols), links)| (path, symbols, links))
            .collect()
    }

    /// The graph `saved` described (its edges are not computed again). An error says
    /// what does not fit together (a file written by a broken build, say).
    pub fn from_saved(saved: Vec<SavedFile>) -> Result<Self, String> {
        let (files, links): (Vec<_>, Vec<_>) = saved
            .into_iter()
            .map(|(path, symbols, links)| ((path, symbols), links))
            .unzip();
        if let Some((path, _)) = files
            .iter()
            .find(|(_, s)| !s.references.is_sorted_by(|a, b| a.name <= b.name))
        {
            return Err(format!("{path}: references out of order"));
        }
        let (mut g, order) = Self::with_nodes(files);
        let entries: Vec<&FileEntry> = order.iter().map(|&f| &g.files[&g.graph[f].path]).collect();
        let file = |p: u32| {
            order
                .get(p as usize)
                .copied()
                .ok_or_else(|| format!("no file at position {p}"))
        };
        let files = |ps: Vec<u32>| {
            ps.into_iter()
                .map(file)
                .collect::<Result<Vec<NodeIndex>, String>>()
        };
        let mut resolutions: Vec<Resolution> = Vec::with_capacity(entries.len());
        let mut edges = Vec::with_capacity(links.iter().map(|l| l.edges.len()).sum());
        for (entry, links) in entries.iter().zip(links) {
            let path = &g.graph[entry.node].path;
            let damaged = |why: String| format!("{path}: {why}");
            if links.resolved.len() != entry.imports.len() {
                return Err(damaged(format!(
                    "{} imports but {} resolved",
                    entry.imports.len(),
                    links.resolved.len()
                )));
            }
            let resolved = links
                .resolved
                .into_iter()
                .map(files)
                .collect::<Result<Vec<_>, _>>()
                .map_err(damaged)?;
            resolutions.push((resolved, files(links.scope).map_err(damaged)?));
            for e in links.edges {
                let to_file = entries
                    .get(e.to_file as usize)
                    .ok_or_else(|| damaged(format!("no file at position {}", e.to_file)))?;
                let (Some(from), Some(to)) = (entry.node_at(e.from), to_file.node_at(e.to)) else {
                    return Err(damaged(format!(
                        "no node at position {} or {}",
                        e.from, e.to
                    )));
                };
                if e.reference != u32::MAX && e.reference as usize >= entry.symbols.references.len()
                {
                    return Err(damaged(format!("no reference {}", e.reference)));
                }
                edges.push((
                    from,
                    to,
                    Edge {
                        kind: e.kind,
                        confidence: e.confidence,
                        line: e.line as usize,
                        reference: e.reference,
                    },
                ));
            }
        }
        let paths: Vec<String> = entries
            .iter()
            .map(|e| g.graph[e.node].path.clone())
            .collect();
        for (path, (resolved, scope)) in paths.iter().zip(resolutions) {
            let entry = g.files.get_mut(path).expect("added above");
            (entry.resolved, entry.scope) = (resolved, scope);
        }
        for (a, b, e) in edges {
            g.graph.add_edge(a, b, e);
        }
        Ok(g)
    }

    /// Replaces one file's symbols (adds the file if new) and repairs the edges into
    /// and out of it: its own, the references elsewhere to names it defined or now
    /// defines, and the imports elsewhere that resolve to it. Nothing else is re-linked.
    pub fn update_file(&mut self, path: &str, symbols: FileSymbols) {
        let existed = self.files.contains_key(path);
        let mut names: HashSet<String> =
            symbols.definitions.iter().map(|d| d.name.clone()).collect();
        names.extend(
            self.files
                .get(path)
                .into_iter()
                .flat_map(|e| e.symbols.definitions.iter().map(|d| d.name.clone())),
        );
        let before = self.counts_before(&names, modules::family(symbols.language));
        let file = self.remove_nodes(path, !existed);
        let prepared = Prepared::of(path, &symbols);
        self.add_file_at(path.to_string(), symbols, prepared, file);
        self.link(path, &Relink::All);
        let changed = self.changed(before);
        // The file set changed only if the file is new: then imports elsewhere may
        // now resolve to it. Otherwise they still do, and only the names they refer
        // to that this file defined or defines need repair.
        let importers = self.importers(path);
        if existed {
            for (file, names) in self.referring(&names, |f| !importers.contains(f)) {
                self.relink(file, Relink::Names(&names));
            }
        } else {
            for &file in &importers {
                self.relink(file, Relink::All);
            }
        }
        self.relink_others(path, &changed, &importers);
    }

    /// Removes a file and repairs the references elsewhere to names it defined and
    /// the imports that resolved to it; false if it was not in the graph.
    pub fn remove_file(&mut self, path: &str) -> bool {
        let Some(entry) = self.files.get(path) else {
            return false;
        };
        let names: HashSet<String> = entry
            .symbols
            .definitions
            .iter()
            .map(|d| d.name.clone())
            .collect();
        let before = self.counts_before(&names, modules::family(entry.symbols.language));
        let importers = self.importers(path);
        self.remove_nodes(path, true);
        let changed = self.changed(before);
        for &file in &importers {
            self.relink(file, Relink::All);
        }
        self.relink_others(path, &changed, &importers);
        true
    }

    /// Files (other than `path`) that look up a module key `path` answers to.
    fn importers(&self, path: &str) -> BTreeSet<NodeIndex> {
        let Some(entry) = self.files.get(path) else {
            return BTreeSet::new();
        };
        entry
            .keys
            .iter()
            .flat_map(|k| self.lookups.get(k).into_iter().flatten())
            .filter(|&&f| f != entry.node)
            .copied()
            .collect()
    }

    /// Definitions of a name in a language family that references from anywhere can
    /// link to: callables (for calls) and classes (for bases and types).
    fn candidate_counts(&self, name: &str, family: &str) -> [usize; 2] {
        let ids = self.names.get(name).map_or(&[][..], |ids| ids.as_slice());
        let count = |kind: RefKind| {
            ids.iter()
                .filter(|&&c| {
                    targets(kind, self.graph[c].kind)
                        && modules::family(self.graph[c].language) == family
                })
                .count()
        };
        [count(RefKind::Call), count(RefKind::Inherit)]
    }

    fn counts_before(&self, names: &HashSet<String>, family: &'static str) -> Counts {
        Counts {
            family,
            before: names
                .iter()
                .map(|n| (n.clone(), self.candidate_counts(n, family)))
                .collect(),
        }
    }

    /// The names whose references elsewhere can resolve differently now. A name with
    /// more than `MAX_CANDIDATES` candidates of a kind both before and after links
    /// nowhere through that kind outside the files defining it and those importing
    /// them (re-linked anyway), so `__init__`, `get` and friends are skipped: that is
    /// what keeps an update cheap.
    fn changed(&self, counts: Counts) -> HashSet<String> {
        counts
            .before
            .into_iter()
            .filter(|(name, b)| {
                let after = self.candidate_counts(name, counts.family);
                // A reference never links its own source: one candidate more can link.
                (0..2).any(|k| {
                    (b[k] <= MAX_CANDIDATES + 1 || after[k] <= MAX_CANDIDATES + 1)
                        && b[k] + after[k] > 0
                })
            })
            .map(|(n, _)| n)
            .collect()
    }

    fn place(&mut self, node: NodeIndex, file: NodeIndex, parent: NodeIndex) {
        if self.owner.len() <= node.index() {
            self.owner.resize(node.index() + 1, NodeIndex::end());
            self.parents.resize(node.index() + 1, NodeIndex::end());
        }
        self.owner[node.index()] = file;
        self.parents[node.index()] = parent;
    }

    /// Adds a file's nodes and index entries, reusing its file node if given.
    fn add_file_at(
        &mut self,
        path: String,
        symbols: FileSymbols,
        prepared: Prepared,
        file: Option<NodeIndex>,
    ) -> NodeIndex {
        let Prepared {
            keys,
            import_keys,
            defs: def_nodes,
            imports: import_nodes,
        } = prepared;
        let node = Node {
            kind: NodeKind::File,
            name: path.clone(),
            path: path.clone(),
            language: symbols.language,
            line: 1,
            end_line: symbols
                .definitions
                .iter()
                .map(|d| d.end_line)
                .max()
                .unwrap_or(1),
            signature: String::new(),
            items: vec![],
        };
        let file = match file {
            Some(id) => {
                self.graph[id] = node;
                id
            }
            None => self.graph.add_node(node),
        };
        self.place(file, file, NodeIndex::end());
        let mut defs: Vec<NodeIndex> = Vec::with_capacity(symbols.definitions.len());
        for (def, (node, container)) in symbols.definitions.iter().zip(def_nodes) {
            let id = self.graph.add_node(node);
            let parent = container.map_or(file, |j| defs[j]);
            self.graph.add_edge(
                parent,
                id,
                Edge {
                    kind: EdgeKind::Contains,
                    confidence: 1.0,
                    line: def.line,
                    reference: u32::MAX,
                },
            );
            self.place(id, file, parent);
            let owner = &self.owner;
            match self.names.get_mut(&def.name) {
                Some(ids) => {
                    let at = ids.partition_point(|&x| (owner[x.index()], x) < (file, id));
                    ids.insert(at, id);
                }
                None => {
                    self.names.insert(def.name.clone(), vec![id]);
                }
            }
            defs.push(id);
        }
        let mut imports = Vec::with_capacity(symbols.imports.len());
        for (import, node) in symbols.imports.iter().zip(import_nodes) {
            let id = self.graph.add_node(node);
            self.graph.add_edge(
                file,
                id,
                Edge {
                    kind: EdgeKind::Contains,
                    confidence: 1.0,
                    line: import.line,
                    reference: u32::MAX,
                },
            );
            self.place(id, file, file);
            imports.push(id);
        }
        let mut previous: Option<&str> = None;
        for reference in &symbols.references {
            let name = reference.name.as_str();
            if previous != Some(name) {
                insert_sorted(&mut self.wanted, name, file);
                previous = Some(name);
            }
        }
        for key in &keys {
            let files = self.modules.entry(key.clone()).or_default();
            if !files.contains(&file) {
                files.push(file);
            }
        }
        for key in lookups(&path, symbols.language, &import_keys) {
            insert_sorted(&mut self.lookups, &key, file);
        }
        self.files.insert(
            path,
            FileEntry {
                node: file,
                defs,
                imports,
                symbols,
                keys,
                import_keys,
                resolved: vec![],
                scope: vec![],
            },
        );
        file
    }

    /// Removes a file's nodes (their edges go with them) and index entries; the file
    /// node itself only if `whole` (else it is returned for reuse).
    fn remove_nodes(&mut self, path: &str, whole: bool) -> Option<NodeIndex> {
        let entry = self.files.remove(path)?;
        for (def, id) in entry.symbols.definitions.iter().zip(&entry.defs) {
            remove_from(&mut self.names, &def.name, |x| x == id);
            self.graph.remove_node(*id);
        }
        for id in &entry.imports {
            self.graph.remove_node(*id);
        }
        for reference in &entry.symbols.references {
            remove_from(&mut self.wanted, &reference.name, |&f| f == entry.node);
        }
        for key in lookups(path, entry.symbols.language, &entry.import_keys) {
            remove_from(&mut self.lookups, &key, |&f| f == entry.node);
        }
        if whole {
            for key in &entry.keys {
                remove_from(&mut self.modules, key, |&f| f == entry.node);
            }
            self.graph.remove_node(entry.node);
            None
        } else {
            // Outgoing edges of the kept file node are its top-level references.
            let out: Vec<EdgeIndex> = self
                .graph
                .edges_directed(entry.node, Direction::Outgoing)
                .filter(|e| e.weight().kind != EdgeKind::Contains)
                .map(|e| e.id())
                .collect();
            for e in out {
                self.graph.remove_edge(e);
            }
            Some(entry.node)
        }
    }

    /// Re-resolves, in the files other than `path` (and those already re-linked), the
    /// references to `names`: each file only for the names it refers to.
    fn relink_others(&mut self, path: &str, names: &HashSet<String>, done: &BTreeSet<NodeIndex>) {
        let own = self.files.get(path).map(|e| e.node);
        let skip = |f: &NodeIndex| Some(*f) == own || done.contains(f);
        for (file, names) in self.referring(names, skip) {
            self.relink(file, Relink::Names(&names));
        }
    }

    /// The files referring to some of `names` (but not those `skip` says), each with
    /// the names it refers to.
    fn referring(
        &self,
        names: &HashSet<String>,
        skip: impl Fn(&NodeIndex) -> bool,
    ) -> Vec<(NodeIndex, HashSet<String>)> {
        let mut subsets: HashMap<NodeIndex, HashSet<String>> = HashMap::default();
        for name in names {
            for file in self
                .wanted
                .get(name)
                .into_iter()
                .flatten()
                .filter(|f| !skip(f))
            {
                subsets.entry(*file).or_default().insert(name.clone());
            }
        }
        let mut out: Vec<_> = subsets.into_iter().collect();
        out.sort_by_key(|(file, _)| *file);
        out
    }

    /// The indexes of a file's references, all or those to `names`.
    fn selected(entry: &FileEntry, how: &Relink<'_>) -> Vec<u32> {
        match how {
            Relink::All => (0..entry.symbols.references.len() as u32).collect(),
            Relink::Names(names) => {
                let references = &entry.symbols.references;
                let mut out = Vec::new();
                for name in names.iter() {
                    let lo = references.partition_point(|r| r.name < *name);
                    let hi = lo + references[lo..].partition_point(|r| r.name == *name);
                    out.extend(lo as u32..hi as u32);
                }
                out
            }
        }
    }

    fn source(entry: &FileEntry, origin: Origin) -> NodeIndex {
        match origin {
            Origin::File => entry.node,
            Origin::Definition(d) => entry.defs[d as usize],
            Origin::Import(i) => entry.imports[i as usize],
        }
    }

    /// Removes the edges a file's references (all, or those to `names`) and, for
    /// `All`, its imports made, then links them again.
    fn relink(&mut self, file: NodeIndex, how: Relink<'_>) {
        let path = self.graph[file].path.clone();
        let Some(entry) = self.files.get(&path) else {
            return;
        };
        let doomed: Vec<EdgeIndex> = match how {
            Relink::All => entry
                .nodes()
                .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                .filter(|e| e.weight().kind != EdgeKind::Contains)
                .map(|e| e.id())
                .collect(),
            Relink::Names(_) => {
                let mut selected = Self::selected(entry, &how);
                selected.sort_unstable();
                let mut sources: Vec<NodeIndex> = selected
                    .iter()
                    .map(|&r| Self::source(entry, entry.symbols.references[r as usize].origin))
                    .collect();
                sources.sort_unstable();
                sources.dedup();
                sources
                    .into_iter()
                    .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing))
                    .filter(|e| {
                        !matches!(e.weight().kind, EdgeKind::Contains | EdgeKind::Imports)
                            && selected.binary_search(&e.weight().reference).is_ok()
                    })
                    .map(|e| e.id())
                    .collect()
            }
        };
        for edge in doomed {
            self.graph.remove_edge(edge);
        }
        self.link(&path, &how);
    }

    /// The files a module lookup resolves to; several matches in the importer's own
    /// folder win over matches elsewhere.
    fn resolve(&self, importer: NodeIndex, keys: &[String], how: Match) -> Vec<NodeIndex> {
        let mut found: Vec<NodeIndex> = Vec::new();
        for key in keys {
            let Some(files) = self.modules.get(key) else {
                continue;
            };
            found.extend(files.iter().filter(|&&f| f != importer));
            if how == Match::First && !found.is_empty() {
                break;
            }
        }
        found.sort();
        found.dedup();
        let folder = |f: NodeIndex| {
            let path = &self.graph[f].path;
            path.rsplit_once('/').map_or("", |(d, _)| d)
        };
        let here = folder(importer);
        if found.len() > 1 && found.iter().any(|&f| folder(f) == here) {
            found.retain(|&f| folder(f) == here);
        }
        found
    }

    /// The file nodes each of a file's imports resolves to, and its scope: those and
    /// its package, sorted.
    fn resolution(&self, entry: &FileEntry) -> Resolution {
        let language = entry.symbols.language;
        let path = &self.graph[entry.node].path;
        let resolved: Vec<Vec<NodeIndex>> = entry
            .import_keys
            .iter()
            .map(|(keys, how)| self.resolve(entry.node, keys, *how))
            .collect();
        let mut scope: Vec<NodeIndex> = resolved.iter().flatten().copied().collect();
        if let Some(files) = modules::package(language, path).and_then(|p| self.modules.get(&p)) {
            scope.extend(files.iter().filter(|&&f| f != entry.node));
        }
        scope.sort();
        scope.dedup();
        (resolved, scope)
    }

    /// The run of `candidates` (sorted by owner) defined in `file`.
    fn defined_in<'c>(&self, candidates: &'c [NodeIndex], file: NodeIndex) -> &'c [NodeIndex] {
        let lo = candidates.partition_point(|c| self.owner[c.index()] < file);
        let hi = lo + candidates[lo..].partition_point(|c| self.owner[c.index()] <= file);
        &candidates[lo..hi]
    }

    /// Adds a file's import edges (for `All`, after resolving its imports again) and
    /// the edges of its references (all, or those named in `Names`).
    fn link(&mut self, path: &str, how: &Relink<'_>) {
        let Some(entry) = self.files.get(path) else {
            return;
        };
        if matches!(how, Relink::All) {
            let (resolved, scope) = self.resolution(entry);
            let entry = self.files.get_mut(path).expect("looked up above");
            (entry.resolved, entry.scope) = (resolved, scope);
        }
        let Some(entry) = self.files.get(path) else {
            return;
        };
        for (a, b, e) in self.edges_of(entry, how) {
            self.graph.add_edge(a, b, e);
        }
    }

    /// The edges a file's imports (for `All`) and references (all, or those named in
    /// `Names`) make, its imports being resolved already.
    fn edges_of(&self, entry: &FileEntry, how: &Relink<'_>) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        let family = modules::family(entry.symbols.language);
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = Vec::new();
        if matches!(how, Relink::All) {
            for ((files, import), &node) in entry
                .resolved
                .iter()
                .zip(&entry.symbols.imports)
                .zip(&entry.imports)
            {
                let confidence = 1.0 / files.len().max(1) as f32;
                for &f in files {
                    edges.push((
                        node,
                        f,
                        Edge {
                            kind: EdgeKind::Imports,
                            confidence,
                            line: import.line,
                            reference: u32::MAX,
                        },
                    ));
                }
            }
        }
        // Reused for every reference: candidates here, in scope, anywhere.
        let (mut here, mut near, mut anywhere) = (Vec::new(), Vec::new(), Vec::new());
        for index in Self::selected(entry, how) {
            let r = &entry.symbols.references[index as usize];
            let Some(candidates) = self.names.get(&r.name) else {
                continue;
            };
            let source = Self::source(entry, r.origin);
            let accept = |c: NodeIndex| {
                let node = &self.graph[c];
                targets(r.kind, node.kind)
                    && (c != source || r.kind == RefKind::Call)
                    && modules::family(node.language) == family
            };
            // The acceptable candidates defined in any of `files`.
            let defined_in = |files: &[NodeIndex], out: &mut Vec<NodeIndex>| {
                for &f in files {
                    out.extend(
                        self.defined_in(candidates, f)
                            .iter()
                            .copied()
                            .filter(|&c| accept(c)),
                    );
                }
            };
            here.clear();
            near.clear();
            anywhere.clear();
            // A receiver that names the class or an imported module decides first.
            match r.receiver {
                Receiver::This => {
                    let class = std::iter::successors(self.parent(source), |&p| self.parent(p))
                        .find(|&p| self.graph[p].kind == NodeKind::Class);
                    if let Some(class) = class {
                        defined_in(&[entry.node], &mut here);
                        here.retain(|c| self.parents[c.index()] == class);
                    }
                }
                Receiver::Import(i) => defined_in(&entry.resolved[i as usize], &mut near),
                Receiver::Named(_) | Receiver::Unknown => {}
            }
            let pinned = !here.is_empty() || !near.is_empty();
            if !pinned && r.kind != RefKind::Item {
                defined_in(&[entry.node], &mut here);
            }
            if !pinned && here.is_empty() {
                // A name an import brings in is looked up there before the rest in scope.
                if let Receiver::Named(i) = r.receiver {
                    defined_in(&entry.resolved[i as usize], &mut near);
                }
                if near.is_empty() {
                    let files: &[NodeIndex] = match r.origin {
                        Origin::Import(i) => &entry.resolved[i as usize],
                        _ => &entry.scope,
                    };
                    defined_in(files, &mut near);
                }
            }
            let repo_wide = matches!(r.kind, RefKind::Call | RefKind::Inherit | RefKind::Type);
            let chosen = if !here.is_empty() {
                &here
            } else if !near.is_empty() {
                &near
            } else if repo_wide {
                // Past MAX_CANDIDATES nothing is linked: stop counting there.
                anywhere.extend(
                    candidates
                        .iter()
                        .copied()
                        .filter(|&c| accept(c))
                        .take(MAX_CANDIDATES + 1),
                );
                &anywhere
            } else {
                continue;
            };
            if chosen.is_empty() || chosen.len() > MAX_CANDIDATES {
                continue;
            }
            let confidence = 1.0 / chosen.len() as f32;
            for &target in chosen.iter() {
                edges.push((
                    source,
                    target,
                    Edge {
                        kind: EdgeKind::of(r.kind),
                        confidence,
                        line: r.line,
                        reference: index,
                    },
                ));
            }
        }
        edges
    }

    /// Each file's symbols, by path: everything the graph is built from.
    pub fn files(&self) -> Vec<(String, FileSymbols)> {
        let mut out: Vec<_> = self
            .files
            .iter()
            .map(|(p, e)| (p.clone(), e.symbols.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The paths of the files in the graph, sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out: Vec<String> = self.files.keys().cloned().collect();
        out.sort();
        out
    }

    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    pub fn node(&self, id: NodeIndex) -> &Node {
        &self.graph[id]
    }

    /// Every definition and import in a file, in line order.
    pub fn file_contents(&self, path: &str) -> Option<Vec<NodeIndex>> {
        let file = self.files.get(path)?.node;
        let mut out = Vec::new();
        let mut stack = vec![file];
        while let Some(n) = stack.pop() {
            for e in self
                .graph
                .edges_directed(n, Direction::Outgoing)
                .filter(|e| e.weight().kind == EdgeKind::Contains)
            {
                out.push(e.target());
                stack.push(e.target());
            }
        }
        out.sort_by_key(|&n| {
            (
                self.graph[n].line,
                self.graph[n].end_line,
                self.graph[n].kind == NodeKind::Import,
            )
        });
        Some(out)
    }

    /// The class, function or file that contains a node directly.
    pub fn parent(&self, id: NodeIndex) -> Option<NodeIndex> {
        self.parents
            .get(id.index())
            .copied()
            .filter(|&p| p != NodeIndex::end())
    }

    /// Definitions named `name` (or starting with it), sorted by path then line.
    pub fn find_symbol(&self, name: &str, prefix: bool) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = if prefix {
            self.names
                .iter()
                .filter(|(n, _)| n.starts_with(name))
                .flat_map(|(_, ids)| ids.iter().copied())
                .collect()
        } else {
            self.names.get(name).cloned().unwrap_or_default()
        };
        out.sort_by(|&a, &b| {
            (&self.graph[a].path, self.graph[a].line, &self.graph[a].name).cmp(&(
                &self.graph[b].path,
                self.graph[b].line,
                &self.graph[b].name,
            ))
        });
        out
    }

    /// Definitions whose name contains the letters of `query` in order, ignoring case
    /// (`gfc` finds `get_file_contents`), best first: the name itself, then names
    /// containing the query (earlier is better), then the tightest spread of letters;
    /// ties by name length, path, line.
    pub fn find_fuzzy(&self, query: &str) -> Vec<NodeIndex> {
        let query: Vec<char> = query.to_lowercase().chars().collect();
        if query.is_empty() {
            return Vec::new();
        }
        let text: String = query.iter().collect();
        let mut scored: Vec<((usize, usize), NodeIndex)> = Vec::new();
        for (name, ids) in &self.names {
            let lower = name.to_lowercase();
            let score = if lower == text {
                Some((0, 0))
            } else if let Some(at) = lower.find(&text) {
                Some((1, at))
            } else {
                subsequence_span(&lower, &query).map(|span| (2, span))
            };
            if let Some(score) = score {
                scored.extend(ids.iter().map(|&id| (score, id)));
            }
        }
        scored.sort_by(|a, b| {
            let (x, y) = (&self.graph[a.1], &self.graph[b.1]);
            (a.0, x.name.len(), &x.path, x.line).cmp(&(b.0, y.name.len(), &y.path, y.line))
        });
        scored.into_iter().map(|(_, id)| id).collect()
    }

    /// Edges of `kind` into (`Incoming`) or out of the definitions named `name`, as
    /// (the node at the other end, the edge), by path and line.
    pub fn related(
        &self,
        name: &str,
        kind: EdgeKind,
        direction: Direction,
    ) -> Vec<(NodeIndex, Edge)> {
        let mut out: Vec<(NodeIndex, Edge)> = self
            .names
            .get(name)
            .into_iter()
            .flatten()
            .flat_map(|&def| {
                self.graph
                    .edges_directed(def, direction)
                    .filter(move |e| e.weight().kind == kind)
                    .map(move |e| {
                        (
                            if direction == Direction::Incoming {
                                e.source()
                            } else {
                                e.target()
                            },
                            *e.weight(),
                        )
                    })
            })
            .collect();
        out.sort_by(|a, b| {
            (&self.graph[a.0].path, a.1.line, self.graph[a.0].line).cmp(&(
                &self.graph[b.0].path,
                b.1.line,
                self.graph[b.0].line,
            ))
        });
        out.dedup_by_key(|(n, e)| (*n, e.line));
        out
    }

    /// What calls a symbol: (caller, the call edge), by path and call line.
    pub fn callers(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.related(name, EdgeKind::Calls, Direction::Incoming)
    }

    /// What a symbol calls: (callee, the call edge).
    pub fn callees(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.related(name, EdgeKind::Calls, Direction::Outgoing)
    }

    /// The files a file imports (`Outgoing`) or that import it (`Incoming`), sorted;
    /// None for a file not in the graph.
    pub fn dependencies(&self, path: &str, direction: Direction) -> Option<Vec<String>> {
        let entry = self.files.get(path)?;
        let mut out: Vec<String> = match direction {
            Direction::Outgoing => entry
                .imports
                .iter()
                .flat_map(|&i| self.graph.edges_directed(i, Direction::Outgoing))
                .filter(|e| e.weight().kind == EdgeKind::Imports)
                .map(|e| self.graph[e.target()].path.clone())
                .collect(),
            Direction::Incoming => self
                .graph
                .edges_directed(entry.node, Direction::Incoming)
                .filter(|e| e.weight().kind == EdgeKind::Imports)
                .map(|e| self.graph[e.source()].path.clone())
                .collect(),
        };
        out.sort();
        out.dedup();
        Some(out)
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

    /// Personalized PageRank (the repo-map idea): a random walk over the graph, edges
    /// followed both ways in proportion to their confidence, that restarts at the
    /// seeds with probability `1 - damping`. Returns nodes by score, highest first.
    pub fn rank(
        &self,
        seeds: &[(NodeIndex, f64)],
        damping: f64,
        iterations: usize,
    ) -> Vec<(NodeIndex, f64)> {
        let n = self.graph.node_bound();
        let total: f64 = seeds.iter().map(|s| s.1).sum();
        if seeds.is_empty() || total <= 0.0 {
            return Vec::new();
        }
        let mut restart = vec![0.0; n];
        for &(node, weight) in seeds {
            restart[node.index()] += weight / total;
        }
        let mut out_weight = vec![0.0f64; n];
        let edges: Vec<(usize, usize, f64)> = (&self.graph)
            .edge_references()
            .map(|e| {
                (
                    e.source().index(),
                    e.target().index(),
                    f64::from(e.weight().confidence),
                )
            })
            .collect();
        for &(a, b, w) in &edges {
            out_weight[a] += w;
            out_weight[b] += w;
        }
        let mut score = restart.clone();
        for _ in 0..iterations {
            let mut next: Vec<f64> = restart.iter().map(|r| (1.0 - damping) * r).collect();
            let mut dangling = 0.0;
            for (i, s) in score.iter().enumerate() {
                if out_weight[i] == 0.0 {
                    dangling += s;
                }
            }
            for (i, r) in restart.iter().enumerate() {
                next[i] += damping * dangling * r;
            }
            for &(a, b, w) in &edges {
                next[b] += damping * score[a] * w / out_weight[a];
                next[a] += damping * score[b] * w / out_weight[b];
            }
            score = next;
        }
        let mut ranked: Vec<(NodeIndex, f64)> = self
            .graph
            .node_indices()
            .map(|i| (i, score[i.index()]))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1).then_with(|| {
                (&self.graph[a.0].path, self.graph[a.0].line)
                    .cmp(&(&self.graph[b.0].path, self.graph[b.0].line))
            })
        });
        ranked
    }

    /// Nodes within `hops` edges of the starts (edges followed both ways), with their
    /// distance, nearest first; the starts themselves are at distance 0.
    pub fn neighbourhood(&self, starts: &[NodeIndex], hops: usize) -> Vec<(NodeIndex, usize)> {
        let mut distance: HashMap<NodeIndex, usize> = starts.iter().map(|&s| (s, 0)).collect();
        let mut frontier: Vec<NodeIndex> = starts.to_vec();
        for depth in 1..=hops {
            let mut next = Vec::new();
            for &node in &frontier {
                for neighbour in self.graph.neighbors_undirected(node) {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        distance.entry(neighbour)
                    {
                        slot.insert(depth);
                        next.push(neighbour);
                    }
                }
            }
            frontier = next;
        }
        let mut out: Vec<_> = distance.into_iter().collect();
        out.sort_by(|a, b| {
            (a.1, &self.graph[a.0].path, self.graph[a.0].line).cmp(&(
                b.1,
                &self.graph[b.0].path,
                self.graph[b.0].line,
            ))
        });
        out
    }

    pub fn file_node(&self, path: &str) -> Option<NodeIndex> {
        self.files.get(path).map(|e| e.node)
    }

    /// A node as text: a file is its path, an import "path:import module", a symbol
    /// "path:name".
    pub fn label(&self, id: NodeIndex) -> String {
        let node = &self.graph[id];
        match node.kind {
            NodeKind::File => node.path.clone(),
            NodeKind::Import => format!("{}:import {}", node.path, node.name),
            _ => format!("{}:{}", node.path, node.name),
        }
    }

    /// (source, kind, target, line, confidence) of every edge, as text, sorted: for
    /// exact tests.
    pub fn edge_list(&self) -> Vec<(String, EdgeKind, String, usize, f32)> {
        let mut out: Vec<_> = (&self.graph)
            .edge_references()
            .map(|e| {
                (
                    self.label(e.source()),
                    e.weight().kind,
                    self.label(e.target()),
                    e.weight().line,
                    e.weight().confidence,
                )
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.0, a.1, &a.2, a.3)
                .cmp(&(&b.0, b.1, &b.2, b.3))
                .then(a.4.total_cmp(&b.4))
        });
        out
    }
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

/// Every module key a file looks up: its imports' and its package's.
fn lookups(
    path: &str,
    language: Language,
    import_keys: &[(Vec<String>, Match)],
) -> BTreeSet<String> {
    modules::package(language, path)
        .into_iter()
        .chain(
            import_keys
                .iter()
                .flat_map(|(keys, _)| keys.iter().cloned()),
        )
        .collect()
}

/// Removes the entries of `map[key]` matching `doomed`, and the key once empty.
fn remove_from<T>(map: &mut HashMap<String, Vec<T>>, key: &str, doomed: impl Fn(&T) -> bool) {
    if let Some(values) = map.get_mut(key) {
        values.retain(|v| !doomed(v));
        if values.is_empty() {
            map.remove(key);
        }
    }
}

/// Adds `value` to the sorted values of `key` (once).
fn insert_sorted(map: &mut HashMap<String, Vec<NodeIndex>>, key: &str, value: NodeIndex) {
    match map.get_mut(key) {
        Some(values) => {
            if let Err(at) = values.binary_search(&value) {
                values.insert(at, value);
            }
        }
        None => {
            map.insert(key.to_string(), vec![value]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::extract::extract;
    use petgraph::Direction;
    use EdgeKind::*;

    fn graph(files: &[(&str, &str)]) -> KnowledgeGraph {
        KnowledgeGraph::from_files(
            files
                .iter()
                .map(|(p, src)| (p.to_string(), extract(Language::Python, src.as_bytes())))
                .collect(),
        )
    }

    /// What the definitions named `name` call: (callee label, call line, confidence).
    fn callees(g: &KnowledgeGraph, name: &str) -> Vec<(String, usize, f32)> {
        g.callees(name)
            .iter()
            .map(|(n, e)| (g.label(*n), e.line, e.confidence))
            .collect()
    }

    fn e(a: &str, k: EdgeKind, b: &str) -> (String, EdgeKind, String) {
        (a.to_string(), k, b.to_string())
    }

    #[test]
    fn exact_graph_of_a_small_repo() {
        let g = graph(&[
            (
                "app.py",
                "from util import slug\nfrom models import Base, LIMIT\n\nclass Page(Base):\n    def title(self) -> str:\n        return slug(self.name)[:LIMIT]\n\ndef render(p):\n    return p.title()\n",
            ),
            ("util.py", "def slug(s):\n    return s.lower()\n\ndef title():\n    pass\n"),
            ("models.py", "LIMIT = 10\n\nclass Base:\n    pass\n"),
        ]);
        assert_eq!((g.file_count(), g.node_count()), (3, 12));
        let edges: Vec<_> = g
            .edge_list()
            .into_iter()
            .map(|(a, k, b, _, _)| (a, k, b))
            .collect();
        assert_eq!(
            edges,
            vec![
                e("app.py", Contains, "app.py:Page"),
                e("app.py", Contains, "app.py:import models"),
                e("app.py", Contains, "app.py:import util"),
                e("app.py", Contains, "app.py:render"),
                e("app.py:Page", Contains, "app.py:title"),
                e("app.py:Page", Inherits, "models.py:Base"),
                e("app.py:import models", Imports, "models.py"),
                e("app.py:import models", References, "models.py:Base"),
                e("app.py:import models", References, "models.py:LIMIT"),
                e("app.py:import util", Imports, "util.py"),
                e("app.py:import util", References, "util.py:slug"),
                e("app.py:render", Calls, "app.py:title"), // same file wins over util.py's title
                e("app.py:title", Calls, "util.py:slug"),
                e("app.py:title", Uses, "models.py:LIMIT"),
                e("models.py", Contains, "models.py:Base"),
                e("models.py", Contains, "models.py:LIMIT"),
                e("util.py", Contains, "util.py:slug"),
                e("util.py", Contains, "util.py:title"),
            ]
        );
        let callers: Vec<_> = g
            .callers("slug")
            .iter()
            .map(|(n, e)| (g.node(*n).name.clone(), e.line, e.confidence))
            .collect();
        assert_eq!(callers, vec![("title".to_string(), 6, 1.0)]);
        let contents: Vec<_> = g
            .file_contents("app.py")
            .unwrap()
            .iter()
            .map(|&n| g.node(n).name.clone())
            .collect();
        assert_eq!(contents, ["util", "models", "Page", "title", "render"]);
        assert_eq!(
            g.dependencies("app.py", Direction::Outgoing).unwrap(),
            ["models.py", "util.py"]
        );
        assert_eq!(
            g.dependencies("util.py", Direction::Incoming).unwrap(),
            ["app.py"]
        );
        assert!(g
            .dependencies("util.py", Direction::Outgoing)
            .unwrap()
            .is_empty());
        assert!(g.dependencies("nope.py", Direction::Outgoing).is_none());
        assert_eq!(g.find_symbol("title", false).len(), 2);
        assert_eq!(g.find_symbol("ti", true).len(), 2);
        assert!(g.file_contents("nope.py").is_none());
        let import = g.file_contents("app.py").unwrap()[1];
        assert_eq!(
            (g.node(import).kind, g.node(import).items.clone()),
            (
                NodeKind::Import,
                vec!["Base".to_string(), "LIMIT".to_string()]
            )
        );
        assert_eq!(g.node(g.parent(import).unwrap()).name, "app.py");
    }

    #[test]
    fn fuzzy_symbol_search() {
        let g = graph(&[("a.py", "def get_file_contents():\n    pass\n\ndef gcf():\n    pass\n\ndef configure():\n    pass\n\nclass FileContents:\n    pass\n")]);
        let names = |q: &str| {
            g.find_fuzzy(q)
                .into_iter()
                .map(|n| g.node(n).name.clone())
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
    }

    #[test]
    fn imports_decide_between_definitions_of_one_name() {
        // Two `load`s: the call goes to the one the file imports, with confidence 1.
        let g = graph(&[
            ("a/store.py", "def load():\n    pass\n"),
            ("b/store.py", "def load():\n    pass\n"),
            (
                "main.py",
                "from b.store import load\n\ndef main():\n    load()\n",
            ),
            ("other.py", "def run():\n    load()\n"),
        ]);
        assert_eq!(
            callees(&g, "main"),
            [("b/store.py:load".to_string(), 4, 1.0)]
        );
        assert_eq!(
            callees(&g, "run"),
            [
                ("a/store.py:load".to_string(), 2, 0.5),
                ("b/store.py:load".to_string(), 2, 0.5)
            ]
        );
    }

    #[test]
    fn receivers_pin_calls_down() {
        let g = graph(&[
            ("db.py", "def connect():\n    pass\n"),
            ("net.py", "def connect():\n    pass\n"),
            (
                "app.py",
                "import db\nimport net as n\n\ndef connect():\n    pass\n\nclass A:\n    def run(self):\n        db.connect()\n        n.connect()\n        self.stop()\n    def stop(self):\n        pass\n\nclass B:\n    def stop(self):\n        pass\n",
            ),
        ]);
        // Without receivers all three would resolve in app.py itself (same file first).
        assert_eq!(
            callees(&g, "run"),
            [
                ("app.py:stop".to_string(), 11, 1.0),
                ("db.py:connect".to_string(), 9, 1.0),
                ("net.py:connect".to_string(), 10, 1.0)
            ]
        );
        let stop = g.find_symbol("stop", false)[0];
        assert_eq!(
            g.node(g.parent(stop).unwrap()).name,
            "A",
            "self.stop() is A's, not B's"
        );
        assert_eq!(g.callers("stop").len(), 1);
    }

    #[test]
    fn imported_names_resolve_in_their_module_even_renamed() {
        let g = graph(&[
            ("a/store.py", "def load():\n    pass\n\ndef save():\n    pass\n"),
            ("b/store.py", "def load():\n    pass\n\ndef save():\n    pass\n"),
            ("main.py", "from a.store import load, save as keep\nfrom b import store\n\ndef main():\n    load()\n    keep()\n    store.save()\n"),
        ]);
        // b/store.py is in scope too; each name goes to the import that brings it in.
        assert_eq!(
            callees(&g, "main"),
            [
                ("a/store.py:load".to_string(), 5, 1.0),
                ("a/store.py:save".to_string(), 6, 1.0),
                ("b/store.py:save".to_string(), 7, 1.0)
            ]
        );
    }

    #[test]
    fn ambiguous_calls_link_every_candidate_with_lower_confidence() {
        let g = graph(&[
            ("a.py", "def run():\n    pass\n"),
            ("b.py", "def run():\n    pass\n"),
            ("c.py", "def main():\n    run()\n"),
        ]);
        assert_eq!(
            callees(&g, "main"),
            [
                ("a.py:run".to_string(), 2, 0.5),
                ("b.py:run".to_string(), 2, 0.5)
            ]
        );
    }

    #[test]
    fn rank_favours_the_seed_and_its_neighbours() {
        let g = graph(&[
            ("a.py", "def seed():\n    near()\n\ndef near():\n    pass\n"),
            ("b.py", "def far():\n    pass\n\ndef other():\n    far()\n"),
        ]);
        let seed = g.find_symbol("seed", false)[0];
        let ranked = g.rank(&[(seed, 1.0)], 0.85, 30);
        let names: Vec<_> = ranked
            .iter()
            .map(|(n, _)| g.node(*n).name.as_str())
            .collect();
        assert_eq!(&names[..3], &["seed", "a.py", "near"][..]);
        assert!(!names.contains(&"far"), "b.py is not connected to the seed");
        let total: f64 = ranked.iter().map(|r| r.1).sum();
        assert!(
            (total - 1.0).abs() < 1e-9,
            "scores are a probability distribution: {total}"
        );
        assert!(g.rank(&[], 0.85, 30).is_empty());
        let near: Vec<_> = g
            .neighbourhood(&[seed], 1)
            .into_iter()
            .map(|(n, d)| (g.node(n).name.clone(), d))
            .collect();
        assert_eq!(
            near,
            vec![("seed".into(), 0), ("a.py".into(), 1), ("near".into(), 1)]
        );
        assert_eq!(g.neighbourhood(&[seed], 0).len(), 1);
        assert!(g
            .neighbourhood(&[seed], 5)
            .iter()
            .all(|(n, _)| g.node(*n).path == "a.py"));
    }

    #[test]
    fn names_with_too_many_definitions_are_not_linked() {
        let mut files: Vec<(String, String)> = (0..=MAX_CANDIDATES)
            .map(|i| (format!("m{i}.py"), "def get():\n    pass\n".to_string()))
            .collect();
        files.push(("main.py".into(), "def main():\n    get()\n".into()));
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let g = graph(&refs);
        assert!(g.callees("main").is_empty());
        assert_eq!(g.find_symbol("get", false).len(), MAX_CANDIDATES + 1);
    }

    #[test]
    fn links_that_do_not_fit_the_files_are_an_error() {
        let g = graph(&[
            ("a.py", "import b\n\ndef f():\n    b.g()\n"),
            ("b.py", "def g():\n    pass\n"),
        ]);
        let saved = g.saved();
        let loaded = KnowledgeGraph::from_saved(saved.clone()).unwrap();
        assert_eq!(loaded.edge_list(), g.edge_list());
        let damaged = |damage: fn(&mut Links)| {
            let mut bad = saved.clone();
            damage(&mut bad[0].2);
            KnowledgeGraph::from_saved(bad).unwrap_err()
        };
        assert!(damaged(|l| l.edges[0].to_file = 7).contains("a.py: no file at position 7"));
        assert!(damaged(|l| l.edges[0].to = 99).contains("no node at position"));
        assert!(damaged(|l| l.resolved.clear()).contains("1 imports but 0 resolved"));
    }

    #[test]
    fn incremental_updates_equal_a_fresh_build() {
        use std::collections::BTreeMap;
        const NAMES: [&str; 7] = ["load", "save", "run", "fetch", "Repo", "Base", "LIMIT"];
        for seed in 1..=60u64 {
            let mut next = crate::context::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let path_of = |next: &mut dyn FnMut(u64) -> u64| {
                let i = next(10); // f8, f9 are new files
                if next(3) == 0 {
                    format!("pkg/f{i}.py")
                } else {
                    format!("f{i}.py")
                }
            };
            let source = |next: &mut dyn FnMut(u64) -> u64| {
                let mut text = String::new();
                let name = |next: &mut dyn FnMut(u64) -> u64| NAMES[next(7) as usize];
                for _ in 0..next(5) {
                    match next(6) {
                        0 => text.push_str(&format!(
                            "from f{} import {}, {} as other\nother()\n",
                            next(10),
                            name(next),
                            name(next)
                        )),
                        1 => text.push_str(&format!("from .f{} import {}\n", next(10), name(next))),
                        2 => text.push_str("LIMIT = 1\n"),
                        3 => {
                            let class = if next(2) == 0 { "Repo" } else { "Base" };
                            let (base, method, callee) =
                                (name(next), NAMES[next(4) as usize], name(next));
                            text.push_str(&format!("class {class}({base}):\n    def {method}(self):\n        self.{callee}() + LIMIT\n"));
                        }
                        4 => {
                            let (module, def, callee) =
                                (next(10), NAMES[next(4) as usize], name(next));
                            text.push_str(&format!(
                                "import f{module} as m\ndef {def}():\n    m.{callee}()\n"
                            ));
                        }
                        _ => {
                            let (def, a, b) = (NAMES[next(4) as usize], name(next), name(next));
                            text.push_str(&format!("def {def}():\n    {a}()\n    return {b}\n"));
                        }
                    }
                }
                text.push_str(&format!("{}()\n", name(next)));
                text
            };
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            for _ in 0..10 {
                let path = path_of(&mut next);
                files.insert(path, source(&mut next));
            }
            let parse = |files: &BTreeMap<String, String>| -> Vec<(String, FileSymbols)> {
                files
                    .iter()
                    .map(|(p, s)| (p.clone(), extract(Language::Python, s.as_bytes())))
                    .collect()
            };
            let mut g = KnowledgeGraph::from_files(parse(&files));
            for step in 0..12 {
                let path = path_of(&mut next);
                if next(4) == 0 {
                    files.remove(&path);
                    g.remove_file(&path);
                } else {
                    let text = source(&mut next);
                    g.update_file(&path, extract(Language::Python, text.as_bytes()));
                    files.insert(path.clone(), text);
                }
                if step % 4 == 3 {
                    // Saved and loaded (renumbered): equal, and it goes on updating.
                    g = KnowledgeGraph::from_saved(g.saved()).expect("a graph's own links fit it");
                }
                let fresh = KnowledgeGraph::from_files(parse(&files));
                assert_eq!(
                    g.edge_list(),
                    fresh.edge_list(),
                    "seed {seed}, step {step}, after changing {path}"
                );
                assert_eq!(
                    (g.node_count(), g.file_count()),
                    (fresh.node_count(), fresh.file_count())
                );
                let mut a = g
                    .find_symbol("", true)
                    .into_iter()
                    .map(|n| g.node(n).clone())
                    .collect::<Vec<_>>();
                let mut b = fresh
                    .find_symbol("", true)
                    .into_iter()
                    .map(|n| fresh.node(n).clone())
                    .collect::<Vec<_>>();
                a.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
                b.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
                assert_eq!(a, b);
            }
        }
    }
}
