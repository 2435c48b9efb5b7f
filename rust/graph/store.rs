//! The knowledge graph: files, functions, classes, variables and imports as nodes;
//! Contains, Calls, Imports, Inherits, References and Uses edges, in a `Graph`
//! (`adjacency`) with name, path and module indexes. Building, updating and removing
//! files here; linking in `link`, queries in `query`, ranking in `rank`.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::{HashMap, HashSet};

use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;

use std::sync::Arc;

use super::adjacency::{EdgeId, Graph};
use super::extract::{
    DefKind, Definition, FileSymbols, Import, Language, Origin, Receiver, RefKind, Reference, Span,
};
use super::link::{go_receiver, targets, typed, Pass, Relink, Resolution, MAX_CANDIDATES};
use super::model::{
    line32, Edge, EdgeKind, LinkedEdge, Links, Node, NodeKind, SavedFile, SavedGraph,
};
use super::modules::{self, Match};
use crate::intern::Interner;
use crate::with_spare;

#[derive(Debug, Clone)]
pub(super) struct FileEntry {
    pub(super) node: NodeIndex,
    /// Node of each definition, in `FileSymbols::definitions` order.
    pub(super) defs: Vec<NodeIndex>,
    /// Node of each import, in `FileSymbols::imports` order.
    pub(super) imports: Vec<NodeIndex>,
    pub(super) symbols: Stored,
    /// Module keys this file answers to.
    pub(super) keys: Vec<String>,
    /// The module keys each import looks up, and how their matches combine.
    pub(super) import_keys: Vec<(Vec<String>, Match)>,
    /// The file nodes each import resolves to (set when the file's imports are linked).
    pub(super) resolved: Vec<Vec<NodeIndex>>,
    /// The file nodes in scope: what it imports and its package, sorted.
    pub(super) scope: Vec<NodeIndex>,
}

impl FileEntry {
    /// The file's node, then its definitions', then its imports'.
    pub(super) fn nodes(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        std::iter::once(self.node)
            .chain(self.defs.iter().copied())
            .chain(self.imports.iter().copied())
    }
}

/// A file's symbols as the graph keeps them: `FileSymbols` with each reference's
/// name interned in the graph's `Interner`. A reference is 28 bytes and no
/// allocation of its own, where a `Reference` is 56 and one (CPython's stdlib has
/// 380K references, more than four per node).
#[derive(Debug, Clone)]
pub(super) struct Stored {
    pub(super) language: Language,
    /// In `FileSymbols::definitions` order; names and signatures are the nodes'.
    pub(super) definitions: Vec<Span>,
    pub(super) imports: Vec<Import>,
    /// As `FileSymbols::references`: sorted by name.
    pub(super) references: Vec<Ref>,
    pub(super) types: Vec<String>,
    pub(super) package: Option<String>,
    syntax_errors: bool,
    error_line: Option<usize>,
    truncated: Vec<String>,
}

/// A `Reference` with its name interned and its line a u32 (an edge's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Ref {
    pub(super) kind: RefKind,
    /// In the graph's `Interner`.
    pub(super) name: u32,
    pub(super) line: u32,
    pub(super) origin: Origin,
    pub(super) receiver: Receiver,
}

/// A file's names as ids in the graph's `Interner`, when they are known already
/// (a saved file's): its definitions' names, in order, and its references.
pub(super) struct Named {
    definitions: Vec<u32>,
    references: Vec<Ref>,
}

/// A saved file's links made nodes of: what each import resolves to, its scope,
/// its edges.
type Resolved = (
    Vec<Vec<NodeIndex>>,
    Vec<NodeIndex>,
    Vec<(NodeIndex, NodeIndex, Edge)>,
);

/// A file ready to add: its path, symbols, names if known, and what `Prepared::of` made.
type Ready = (String, FileSymbols, Option<Named>, Prepared);

#[derive(Debug, Default, Clone)]
pub struct KnowledgeGraph {
    pub(super) graph: Graph<Node, Edge>,
    pub(super) files: HashMap<String, FileEntry>,
    /// Definitions by name (indexed by its id in `interned`), sorted by (file node,
    /// node): a file's are a contiguous run. Indexed by the id rather than keyed by
    /// the name: the linker looks candidates up by the reference's id, and the
    /// Linux kernel has 1.5 M names, each a string key and a table slot more.
    pub(super) names: Vec<Vec<NodeIndex>>,
    /// The file node of every node, by node index.
    pub(super) owner: Vec<NodeIndex>,
    /// The node containing every node (`NodeIndex::end()` for files), by node index.
    pub(super) parents: Vec<NodeIndex>,
    /// Referenced name (by its id in `interned`) -> files referring to it, sorted,
    /// so an update re-resolves only the references it can change. Indexed by the
    /// id rather than keyed by the name: 1.9 M names on the Linux kernel, each a
    /// string key and a table slot more.
    pub(super) wanted: Vec<Vec<NodeIndex>>,
    /// Module key -> files (their nodes) answering to it.
    pub(super) modules: HashMap<String, Vec<NodeIndex>>,
    /// Module key -> files looking it up.
    pub(super) lookups: HashMap<String, Vec<NodeIndex>>,
    /// The names of the references and definitions of every file, each held once
    /// for the whole graph. Names are never dropped: a name no file refers to or
    /// defines any more stays (the names a project ever used are few, ~60K on
    /// CPython's stdlib).
    pub(super) interned: Interner,
}

/// What a file's entry needs that depends on the file alone (computed in parallel
/// on a build).
pub(super) struct Prepared {
    keys: Vec<String>,
    import_keys: Vec<(Vec<String>, Match)>,
    /// The module keys the file looks up (`lookups`).
    lookups: BTreeSet<String>,
    /// The node of each definition, with the index of the innermost definition
    /// containing it (None: the file).
    defs: Vec<(Node, Option<usize>)>,
    /// The node of each import.
    imports: Vec<Node>,
    /// The file's path as its nodes share it.
    path: Arc<str>,
}

impl Prepared {
    /// What `symbols` make of the file at `path`. The definitions' names and
    /// signatures move into their nodes (left empty: the graph keeps definitions
    /// as `Span`s and their names as the nodes'), rather than copied: on the
    /// Linux kernel 6 M strings a load allocated twice.
    pub(super) fn of(path: &str, symbols: &mut FileSymbols) -> Prepared {
        let language = symbols.language;
        let import_keys: Vec<_> = symbols
            .imports
            .iter()
            .map(|import| modules::lookups(language, path, import))
            .collect();
        let lookups = lookups(path, language, symbols.package.as_deref(), &import_keys);
        let shared: Arc<str> = Arc::from(path);
        let node =
            |kind, name: Box<str>, line, end_line, signature: Box<str>, items: &[String]| Node {
                kind,
                name,
                path: shared.clone(),
                language,
                line,
                end_line,
                signature,
                items: items.iter().map(|item| item.as_str().into()).collect(),
            };
        // Contained by the innermost enclosing class or function.
        let containers = Definition::containers(&symbols.definitions);
        let defs = symbols
            .definitions
            .iter_mut()
            .zip(containers)
            .map(|(d, container)| {
                let (name, signature) = (
                    std::mem::take(&mut d.name),
                    std::mem::take(&mut d.signature),
                );
                (
                    node(
                        NodeKind::of(d.kind),
                        name,
                        d.line,
                        d.end_line,
                        signature,
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
                    i.module.as_str().into(),
                    line32(i.line),
                    line32(i.line),
                    i.statement.as_str().into(),
                    &i.items,
                )
            })
            .collect();
        Prepared {
            keys: {
                let mut keys = modules::keys(language, path);
                for k in modules::declared_keys(language, path, symbols.package.as_deref()) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
                keys
            },
            import_keys,
            lookups,
            defs,
            imports,
            path: shared,
        }
    }
}

/// What of a file decides method resolution in other files: each class's name with
/// its bases as written and, when it names bases, the imports that resolve them.
/// Method names are not in it: the calls to them are linked again by name.
#[derive(Default, PartialEq)]
pub(super) struct Shape {
    classes: Vec<(String, Vec<String>)>,
    imports: Vec<ImportShape>,
}

/// An import's module, items, renamed items and alias.
type ImportShape = (String, Vec<String>, Vec<(String, String)>, Option<String>);

pub(super) fn class_shape(symbols: &FileSymbols) -> Shape {
    let mut bases: HashMap<u32, Vec<String>> = HashMap::default();
    for r in &symbols.references {
        if let (RefKind::Inherit, Origin::Definition(d)) = (r.kind, r.origin) {
            bases.entry(d).or_default().push(r.name.to_string());
        }
    }
    let mut classes: Vec<(String, Vec<String>)> = symbols
        .definitions
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == DefKind::Class)
        .map(|(i, d)| {
            let mut bases = bases.remove(&(i as u32)).unwrap_or_default();
            bases.sort();
            (d.name.to_string(), bases)
        })
        .collect();
    classes.sort();
    let imports = if classes.iter().any(|(_, bases)| !bases.is_empty()) {
        symbols
            .imports
            .iter()
            .map(|i| {
                let renamed = i.renamed.clone();
                (i.module.clone(), i.items.clone(), renamed, i.alias.clone())
            })
            .collect()
    } else {
        vec![]
    };
    Shape { classes, imports }
}

/// The names of the classes of one or two versions of a file.
fn class_names(a: Option<&FileSymbols>, b: Option<&FileSymbols>) -> HashSet<String> {
    a.into_iter()
        .chain(b)
        .flat_map(|s| s.definitions.iter())
        .filter(|d| d.kind == DefKind::Class)
        .map(|d| d.name.to_string())
        .collect()
}

/// (class, method) of every method a file defines: a function directly in a class,
/// or a Go function whose receiver names a type.
fn methods(symbols: &FileSymbols) -> HashSet<(String, String)> {
    let mut out = HashSet::default();
    // The definitions open at each one (they are in start order), innermost last.
    let mut open: Vec<&Definition> = Vec::new();
    for d in &symbols.definitions {
        while open.last().is_some_and(|c| !c.contains(d)) {
            open.pop();
        }
        let container = open.last().copied();
        open.push(d);
        if d.kind != DefKind::Function {
            continue;
        }
        match container {
            Some(c) if c.kind == DefKind::Class => {
                out.insert((c.name.to_string(), d.name.to_string()));
            }
            None if symbols.language == Language::Go => {
                if let Some(t) = go_receiver(&d.signature) {
                    out.insert((t.to_string(), d.name.to_string()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The names of the methods one version of a file has and the other has not (in
/// that class).
fn moved_methods(a: Option<&FileSymbols>, b: Option<&FileSymbols>) -> HashSet<String> {
    let (a, b) = (
        a.map(methods).unwrap_or_default(),
        b.map(methods).unwrap_or_default(),
    );
    a.symmetric_difference(&b).map(|(_, m)| m.clone()).collect()
}

/// Per name, its candidate counts (see `candidate_counts`) before a change.
pub(super) struct Counts {
    pub(super) family: &'static str,
    pub(super) before: Vec<(String, [usize; 2])>,
}

impl KnowledgeGraph {
    /// The definitions called `name`, sorted by (file node, node).
    pub(super) fn named(&self, name: &str) -> &[NodeIndex] {
        self.interned.id(name).map_or(&[], |id| self.named_id(id))
    }

    /// The definitions called the interned name `id`, as `named`.
    pub(super) fn named_id(&self, id: u32) -> &[NodeIndex] {
        self.names.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// Every name some definition has, with its definitions (as `named`).
    pub(super) fn all_named(&self) -> impl Iterator<Item = (&str, &[NodeIndex])> {
        self.interned
            .iter()
            .map(|(id, name)| (name, self.named_id(id)))
            .filter(|(_, ids)| !ids.is_empty())
    }

    /// Approximate heap bytes of the graph's parts (capacities times element
    /// sizes plus string bytes; allocator rounding and hash-table control bytes
    /// left out): where its memory goes, for `examples/graph_memory.rs`.
    #[doc(hidden)]
    pub fn heap_parts(&self) -> Vec<(&'static str, usize)> {
        use std::mem::size_of;
        let strings = |v: &Vec<String>| -> usize {
            v.capacity() * size_of::<String>() + v.iter().map(String::capacity).sum::<usize>()
        };
        let [node_slots, edge_slots, prev] = self.graph.slot_bytes();
        let (mut node_names, mut node_signatures, mut node_items) = (0, 0, 0);
        for id in self.graph.node_indices() {
            let n = &self.graph[id];
            node_names += n.name.len();
            node_signatures += n.signature.len();
            node_items += n.items.len() * size_of::<Box<str>>()
                + n.items.iter().map(|item| item.len()).sum::<usize>();
        }
        let (mut defs, mut imports, mut refs, mut other) = (0, 0, 0, 0);
        for entry in self.files.values() {
            let s = &entry.symbols;
            defs += s.definitions.capacity() * size_of::<Span>();
            imports += s.imports.capacity() * size_of::<Import>()
                + s.imports
                    .iter()
                    .map(|i| {
                        i.module.capacity()
                            + i.statement.capacity()
                            + strings(&i.items)
                            + i.alias.as_ref().map_or(0, String::capacity)
                            + i.renamed.capacity() * size_of::<(String, String)>()
                            + i.renamed
                                .iter()
                                .map(|(a, b)| a.capacity() + b.capacity())
                                .sum::<usize>()
                    })
                    .sum::<usize>();
            refs += s.references.capacity() * size_of::<Ref>();
            other += (entry.defs.capacity() + entry.imports.capacity() + entry.scope.capacity())
                * 4
                + strings(&entry.keys)
                + entry
                    .import_keys
                    .iter()
                    .map(|(k, _)| strings(k) + size_of::<(Vec<String>, Match)>())
                    .sum::<usize>()
                + entry
                    .resolved
                    .iter()
                    .map(|r| r.capacity() * 4 + size_of::<Vec<NodeIndex>>())
                    .sum::<usize>()
                + strings(&s.types);
        }
        let map = |m: &HashMap<String, Vec<NodeIndex>>| -> usize {
            m.capacity() * (size_of::<String>() + size_of::<Vec<NodeIndex>>())
                + m.iter()
                    .map(|(k, v)| k.capacity() + v.capacity() * 4)
                    .sum::<usize>()
        };
        vec![
            ("node slots", node_slots),
            ("node names", node_names),
            ("node signatures", node_signatures),
            ("node items", node_items),
            ("edge slots", edge_slots),
            ("edge back links", prev),
            (
                "files table",
                self.files.capacity() * (size_of::<String>() + size_of::<FileEntry>())
                    + self.files.keys().map(String::capacity).sum::<usize>(),
            ),
            ("file definitions", defs),
            ("file imports", imports),
            ("file references", refs),
            ("file keys, scope, other", other),
            (
                "names",
                self.names.capacity() * size_of::<Vec<NodeIndex>>()
                    + self.names.iter().map(|f| f.capacity() * 4).sum::<usize>(),
            ),
            (
                "owner + parents",
                (self.owner.capacity() + self.parents.capacity()) * 4,
            ),
            (
                "wanted",
                self.wanted.capacity() * size_of::<Vec<NodeIndex>>()
                    + self.wanted.iter().map(|f| f.capacity() * 4).sum::<usize>(),
            ),
            ("modules", map(&self.modules)),
            ("lookups", map(&self.lookups)),
            ("interned", self.interned.heap_bytes()),
        ]
    }

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
        use rayon::prelude::*;
        // The imports and types are kept for the graph's life, and were allocated
        // while parsing, among the syntax trees, sources and documents that parsing
        // frees: a copy (exact capacities, allocated together) frees those pages
        // whole, where the originals would hold them: on CPython's stdlib ~50 MB of
        // RSS (see `examples/graph_memory.rs`). Definitions are kept as `Span`s,
        // made anew.
        let files = files
            .into_par_iter()
            .map(|(path, symbols)| {
                let copy = FileSymbols {
                    imports: symbols.imports.clone(),
                    types: symbols.types.clone(),
                    ..symbols
                };
                (path, copy)
            })
            .collect::<Vec<(String, FileSymbols)>>();
        let nodes = files.iter().map(|(_, s)| node_count(s)).sum();
        let Ok((mut g, _)) = Self::with_nodes(nodes, Self::prepared_runs(files));
        // Resolving and linking only read the graph: both run in parallel.
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
        // Bases first: method resolution walks their edges (Inherits only, which
        // the rest never adds, so the rest is linked a run of files at a time:
        // all of its edges at once held 300 MB more on the Linux kernel).
        let mut paths: Vec<(NodeIndex, &str)> = g
            .files
            .iter()
            .map(|(path, e)| (e.node, path.as_str()))
            .collect();
        paths.sort_unstable();
        let paths: Vec<String> = paths.into_iter().map(|(_, p)| p.to_owned()).collect();
        let bases = g.edges_of_files(&paths, Pass::Bases);
        let count = g.graph.edge_count();
        // Room for the bases' edges and about one a reference or import makes;
        // room never used is never touched.
        let expected: usize = g
            .files
            .values()
            .map(|e| e.symbols.references.len() + e.symbols.imports.len())
            .sum();
        g.graph
            .reserve_exact_edges(with_spare(count + bases.len() + expected) - count);
        for (a, b, e) in bases {
            g.graph.add_edge(a, b, e);
        }
        for run in paths.chunks(LINK_RUN) {
            for (a, b, e) in g.edges_of_files(run, Pass::Rest) {
                g.graph.add_edge(a, b, e);
            }
        }
        let count = g.graph.edge_count();
        g.graph.reserve_exact_edges(with_spare(count) - count);
        g
    }

    /// The edges `pass` makes for the files at `paths`, in order (in parallel).
    fn edges_of_files(&self, paths: &[String], pass: Pass) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        use rayon::prelude::*;
        let edges: Vec<Vec<(NodeIndex, NodeIndex, Edge)>> = paths
            .par_iter()
            .map(|path| self.edges_of(&self.files[path], &Relink::All, pass))
            .collect();
        edges.into_iter().flatten().collect()
    }

    /// The nodes and indexes of files prepared a run at a time (no links yet), and
    /// each file's node in order; `nodes` (about the number the files make) sizes
    /// the tables. Stops at a run's error.
    pub(super) fn with_nodes<E: Send>(
        nodes: usize,
        runs: impl Iterator<Item = Result<Vec<Ready>, E>> + Send,
    ) -> Result<(Self, Vec<NodeIndex>), E> {
        let mut g = KnowledgeGraph::default();
        // Exactly: the edges of links are reserved when they are known (`from_files`,
        // `from_saved`), so the edge list is not left at twice its length by doubling.
        g.graph.reserve_exact_nodes(with_spare(nodes));
        g.owner.reserve_exact(with_spare(nodes));
        g.parents.reserve_exact(with_spare(nodes));
        g.graph.reserve_exact_edges(nodes);
        let mut order = Vec::new();
        // Each run added (one file at a time, in order) while the next is prepared.
        overlapped(runs, |run: Vec<Ready>| {
            order.extend(run.into_iter().map(|(path, symbols, named, prepared)| {
                g.add_file_at(path, symbols, named, prepared, None)
            }))
        })?;
        Ok((g, order))
    }

    /// Files prepared (`Prepared::of`) a run of `LINK_RUN` at a time, in parallel:
    /// every file's nodes prepared at once held them twice over until added (on the
    /// Linux kernel, 3.4 M nodes of 112 bytes and their strings).
    fn prepared_runs(
        files: Vec<(String, FileSymbols)>,
    ) -> impl Iterator<Item = Result<Vec<Ready>, std::convert::Infallible>> {
        use rayon::prelude::*;
        in_runs(files).map(|run| {
            Ok(run
                .into_par_iter()
                .map(|(path, mut symbols)| {
                    let prepared = Prepared::of(&path, &mut symbols);
                    (path, symbols, None, prepared)
                })
                .collect())
        })
    }

    /// Its names and each file's symbols and links, by path: what `from_saved`
    /// rebuilds the graph from.
    pub fn saved(&self) -> SavedGraph {
        let mut files = Vec::new();
        self.saved_chunks(
            usize::MAX,
            |saved| saved,
            |saved| {
                files = saved;
                Ok::<_, std::convert::Infallible>(())
            },
        )
        .unwrap_or_else(|never| match never {});
        SavedGraph {
            names: self.interned.clone(),
            files,
        }
    }

    /// The names `saved_chunks` gives their ids in (`SavedFile`).
    pub fn names(&self) -> &Interner {
        &self.interned
    }

    /// `saved`'s files in runs of `chunk` files (the last may be shorter), each run
    /// made and handed to `each` on the thread pool, and what `each` makes of it
    /// handed to `sink` in order (a few runs per thread at a time): a saved file
    /// holds a copy of its symbols (its imports, signatures, references), so a run
    /// is copied out only when it is needed and dropped by `each` (the save
    /// encodes it), and what `each` makes is dropped by `sink` (the save writes
    /// it), rather than the whole graph at once (on the Linux kernel: 9 million
    /// references, 514 MB encoded). Stops at `sink`'s first error.
    pub fn saved_chunks<T: Send, E>(
        &self,
        chunk: usize,
        each: impl Fn(Vec<SavedFile>) -> T + Sync + Send,
        mut sink: impl FnMut(T) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        use rayon::prelude::*;
        let mut paths: Vec<&String> = self.files.keys().collect();
        paths.par_sort_unstable();
        let entries: Vec<&FileEntry> = paths.iter().map(|path| &self.files[*path]).collect();
        // Every node's (file position, position in the file).
        let mut at = vec![(u32::MAX, u32::MAX); self.graph.node_bound()];
        for (p, entry) in entries.iter().enumerate() {
            for (local, node) in entry.nodes().enumerate() {
                at[node.index()] = (p as u32, local as u32);
            }
        }
        let at = &at;
        let one = |path: &String, entry: &FileEntry| SavedFile {
            path: path.clone(),
            symbols: self.symbols_of(entry, false),
            definitions: entry
                .defs
                .iter()
                .map(|&id| {
                    self.interned
                        .id(&self.graph[id].name)
                        .expect("a definition's name is interned when added")
                })
                .collect(),
            references: entry.symbols.references.clone(),
            links: self.links(entry, at),
        };
        let chunk = chunk.max(1);
        let batch = chunk.saturating_mul(4 * rayon::current_num_threads());
        for (paths, entries) in paths.chunks(batch).zip(entries.chunks(batch)) {
            let made: Vec<T> = paths
                .par_chunks(chunk)
                .zip(entries.par_chunks(chunk))
                .map(|(paths, entries)| {
                    each(
                        paths
                            .iter()
                            .zip(entries)
                            .map(|(path, entry)| one(path, entry))
                            .collect(),
                    )
                })
                .collect();
            made.into_iter().try_for_each(&mut sink)?;
        }
        Ok(())
    }

    /// A file's links as saved; `at` is every node's (file position, position in
    /// the file).
    fn links(&self, entry: &FileEntry, at: &[(u32, u32)]) -> Links {
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
                    line: w.line,
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
    }

    /// The graph `saved` described (its edges are not computed again). An error says
    /// what does not fit together (a file written by a broken build, say).
    pub fn from_saved(saved: SavedGraph) -> Result<Self, String> {
        use rayon::prelude::*;
        let SavedGraph {
            names,
            files: saved,
        } = saved;
        let nodes = saved.iter().map(|f| node_count(&f.symbols)).sum();
        // A run of files checked and prepared at a time, in parallel (their links
        // kept aside for when every node is there).
        let mut links = Vec::with_capacity(saved.len());
        let runs = in_runs(saved).map(|run| -> Result<Vec<_>, String> {
            let run: Vec<_> = run
                .into_par_iter()
                .map(|file| Self::loaded(file, &names))
                .collect::<Result<_, _>>()?;
            Ok(run
                .into_iter()
                .map(|(ready, saved)| {
                    links.push(saved);
                    ready
                })
                .collect())
        });
        let (mut g, order) = Self::with_nodes(nodes, runs)?;
        // The files' names are the saved ones, by the same ids (none was interned
        // while they were added).
        g.interned = names;
        // Every file's nodes by its position, in `FileEntry::nodes` order: what the
        // links name. Their edges are added file by file (gathered first, they held
        // 300 MB more on the Linux kernel).
        let mut starts = Vec::with_capacity(order.len() + 1);
        let mut at = Vec::with_capacity(g.graph.node_count());
        for &f in &order {
            starts.push(at.len());
            at.extend(g.files[&*g.graph[f].path].nodes());
        }
        starts.push(at.len());
        let node_at = |file: u32, position: u32| {
            let file = file as usize;
            let (start, end) = (starts[file], starts[file + 1]);
            at.get(start + position as usize)
                .copied()
                .filter(|_| (position as usize) < end - start)
        };
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
        // Each file's path and numbers of imports and references, by position.
        let shapes: Vec<(Arc<str>, usize, usize)> = order
            .iter()
            .map(|&f| {
                let path = g.graph[f].path.clone();
                let entry = &g.files[&*path];
                let counts = (entry.imports.len(), entry.symbols.references.len());
                (path, counts.0, counts.1)
            })
            .collect();
        // A file's links checked and made nodes of: what its imports resolve to,
        // its scope and its edges.
        let resolve = |p: usize, links: Links| -> Result<Resolved, String> {
            let (path, imports, references) = &shapes[p];
            let damaged = |why: String| format!("{path}: {why}");
            if links.resolved.len() != *imports {
                return Err(damaged(format!(
                    "{imports} imports but {} resolved",
                    links.resolved.len()
                )));
            }
            let resolved = links
                .resolved
                .into_iter()
                .map(files)
                .collect::<Result<Vec<_>, _>>()
                .map_err(damaged)?;
            let scope = files(links.scope).map_err(damaged)?;
            let mut edges = Vec::with_capacity(links.edges.len());
            for e in links.edges {
                if e.to_file as usize >= order.len() {
                    return Err(damaged(format!("no file at position {}", e.to_file)));
                }
                let (Some(from), Some(to)) = (node_at(p as u32, e.from), node_at(e.to_file, e.to))
                else {
                    return Err(damaged(format!(
                        "no node at position {} or {}",
                        e.from, e.to
                    )));
                };
                if e.reference != u32::MAX && e.reference as usize >= *references {
                    return Err(damaged(format!("no reference {}", e.reference)));
                }
                let edge = Edge {
                    kind: e.kind,
                    confidence: e.confidence,
                    line: e.line,
                    reference: e.reference,
                };
                edges.push((from, to, edge));
            }
            Ok((resolved, scope, edges))
        };
        let count = g.graph.edge_count();
        let linked: usize = links.iter().map(|l| l.edges.len()).sum();
        g.graph
            .reserve_exact_edges(with_spare(count + linked) - count);
        // A run of files resolved at a time, in parallel, while the run before has
        // its edges added (in order): adding is one at a time, the lists being
        // the whole graph's. The first file (in order) that does not fit is the
        // error.
        let runs = in_runs(links.into_iter().enumerate().collect()).map(|run| {
            let resolved: Vec<_> = run
                .into_par_iter()
                .map(|(p, links)| resolve(p, links).map(|r| (p, r)))
                .collect();
            resolved.into_iter().collect::<Result<Vec<_>, String>>()
        });
        let (graph, entries) = (&mut g.graph, &mut g.files);
        overlapped(runs, |run: Vec<(usize, Resolved)>| {
            for (p, (resolved, scope, edges)) in run {
                for (from, to, edge) in edges {
                    graph.add_edge(from, to, edge);
                }
                let entry = entries.get_mut(&*shapes[p].0).expect("added above");
                (entry.resolved, entry.scope) = (resolved, scope);
            }
        })?;
        Ok(g)
    }

    /// A saved file checked (its names among `names`, its references in order,
    /// where they are made and their receivers in range), its definitions named
    /// and prepared (`Prepared::of`): each on its own, so on the thread pool.
    fn loaded(file: SavedFile, names: &Interner) -> Result<(Ready, Links), String> {
        let SavedFile {
            path,
            mut symbols,
            definitions,
            references,
            links,
        } = file;
        let damaged = |why: &str| Err(format!("{path}: {why}"));
        if definitions.len() != symbols.definitions.len() || !symbols.references.is_empty() {
            return damaged("names that do not fit its symbols");
        }
        let known = |id: u32| (id as usize) < names.len();
        if !definitions.iter().all(|&id| known(id)) || !references.iter().all(|r| known(r.name)) {
            return damaged("a name the graph does not have");
        }
        if !references.is_sorted_by(|a, b| names.get(a.name) <= names.get(b.name)) {
            return damaged("references out of order");
        }
        let (defs, imports, types) = (
            symbols.definitions.len(),
            symbols.imports.len(),
            symbols.types.len(),
        );
        if references.iter().any(|r| {
            let origin = match r.origin {
                Origin::Definition(d) => d as usize >= defs,
                Origin::Import(i) => i as usize >= imports,
                Origin::File => false,
            };
            origin
                || match r.receiver {
                    Receiver::Type(t) => t as usize >= types,
                    Receiver::Import(i) | Receiver::Named(i) => i as usize >= imports,
                    Receiver::This | Receiver::Unknown => false,
                }
        }) {
            return damaged("a reference's origin or receiver out of range");
        }
        for (d, &id) in symbols.definitions.iter_mut().zip(&definitions) {
            d.name = names.get(id).into();
        }
        let prepared = Prepared::of(&path, &mut symbols);
        let named = Named {
            definitions,
            references,
        };
        Ok(((path, symbols, Some(named), prepared), links))
    }

    /// Replaces one file's symbols (adds the file if new) and repairs the edges into
    /// and out of it: its own, the references elsewhere to names it defined or now
    /// defines, and the imports elsewhere that resolve to it. Nothing else is re-linked.
    pub fn update_file(&mut self, path: &str, symbols: FileSymbols) {
        // A Kotlin or Scala file whose `package` line changed answers to other module
        // keys (`modules::declared_keys`): out as a removed file, in as a new one.
        if self
            .files
            .get(path)
            .is_some_and(|e| e.symbols.package != symbols.package)
        {
            self.remove_file(path);
        }
        let existed = self.files.contains_key(path);
        let old = self.files.get(path).map(|e| self.unstored(e));
        let old = old.as_ref();
        let reshaped = old.map(class_shape).unwrap_or_default() != class_shape(&symbols);
        let moved = moved_methods(old, Some(&symbols));
        let classes = class_names(old, Some(&symbols));
        let mut names: HashSet<String> = symbols
            .definitions
            .iter()
            .map(|d| d.name.to_string())
            .collect();
        names.extend(
            self.files
                .get(path)
                .into_iter()
                .flat_map(|e| e.defs.iter().map(|&id| self.graph[id].name.to_string())),
        );
        let before = self.counts_before(&names, modules::family(symbols.language));
        let typed_in = self.typed_calls_into(path);
        let file = self.remove_nodes(path, !existed);
        let mut symbols = symbols;
        let prepared = Prepared::of(path, &mut symbols);
        self.add_file_at(path.to_string(), symbols, None, prepared, file);
        self.link(path, &Relink::All);
        // The base edges into the file's classes first: resolving a method walks them.
        self.relink_bases(path, &classes);
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
        self.relink_typed(path, typed_in, &moved, reshaped);
    }

    /// The calls elsewhere made on a receiver of a known class or `self` that are
    /// linked into `path`'s definitions: (file, names).
    fn typed_calls_into(&self, path: &str) -> HashMap<NodeIndex, HashSet<String>> {
        let mut out: HashMap<NodeIndex, HashSet<String>> = HashMap::default();
        let Some(entry) = self.files.get(path) else {
            return out;
        };
        // Method resolution links only to methods (children of classes, Go
        // functions with a receiver); a typed call it could not pin down is linked
        // by name like any other, and repaired like any other.
        let method = |def: NodeIndex| {
            let node = &self.graph[def];
            node.kind == NodeKind::Function
                && (self
                    .parent(def)
                    .is_some_and(|p| self.graph[p].kind == NodeKind::Class)
                    || node.language == Language::Go && go_receiver(&node.signature).is_some())
        };
        for &def in entry.defs.iter().filter(|&&d| method(d)) {
            for e in self.graph.edges_directed(def, Direction::Incoming) {
                if e.weight().kind != EdgeKind::Calls {
                    continue;
                }
                let file = self.owner[e.source().index()];
                if file == entry.node {
                    continue;
                }
                let caller = &self.files[&*self.graph[file].path];
                if let Some(r) = caller.symbols.references.get(e.weight().reference as usize) {
                    if typed(r.receiver) {
                        let name = self.interned.get(r.name).to_string();
                        out.entry(file).or_default().insert(name);
                    }
                }
            }
        }
        out
    }

    /// Re-links, in the files other than `path`, the base classes named in `names`.
    fn relink_bases(&mut self, path: &str, names: &HashSet<String>) {
        let own = self.files.get(path).map(|e| e.node);
        for (file, names) in self.referring(names, |f| Some(*f) == own) {
            self.relink(file, Relink::Bases(&names));
        }
    }

    /// Last step of an update: the calls method resolution links (on a receiver of
    /// a known class or `self`) that can go elsewhere now. With the file's classes
    /// and bases the same (`class_shape`), those are the calls that were linked
    /// into the file (its nodes were replaced), the calls to methods it added,
    /// removed or moved between classes, and the file's own (made while the base
    /// edges into it were missing); when its classes changed, every such call.
    fn relink_typed(
        &mut self,
        path: &str,
        typed_in: HashMap<NodeIndex, HashSet<String>>,
        moved: &HashSet<String>,
        reshaped: bool,
    ) {
        let own = self.files.get(path).map(|e| e.node);
        if reshaped {
            let mut files: Vec<NodeIndex> = self
                .files
                .values()
                .filter(|e| e.symbols.references.iter().any(|r| typed(r.receiver)))
                .map(|e| e.node)
                .collect();
            files.sort();
            for file in files {
                self.relink(file, Relink::Typed(None));
            }
            return;
        }
        let mut files: BTreeMap<NodeIndex, HashSet<String>> = typed_in
            .into_iter()
            .filter(|(f, _)| self.graph.contains_node(*f) && Some(*f) != own)
            .collect();
        for (file, names) in self.referring(moved, |f| Some(*f) == own) {
            files.entry(file).or_default().extend(names);
        }
        for (file, names) in files {
            self.relink(file, Relink::Typed(Some(&names)));
        }
        if let Some(file) = own {
            self.relink(file, Relink::Typed(None));
        }
    }

    /// Removes a file and repairs the references elsewhere to names it defined and
    /// the imports that resolved to it; false if it was not in the graph.
    pub fn remove_file(&mut self, path: &str) -> bool {
        let Some(entry) = self.files.get(path) else {
            return false;
        };
        let names: HashSet<String> = entry
            .defs
            .iter()
            .map(|&id| self.graph[id].name.to_string())
            .collect();
        let before = self.counts_before(&names, modules::family(entry.symbols.language));
        let symbols = self.unstored(entry);
        let reshaped = class_shape(&symbols) != Shape::default();
        let moved = moved_methods(Some(&symbols), None);
        let classes = class_names(Some(&symbols), None);
        let typed_in = self.typed_calls_into(path);
        let importers = self.importers(path);
        self.remove_nodes(path, true);
        self.relink_bases(path, &classes);
        let changed = self.changed(before);
        for &file in &importers {
            self.relink(file, Relink::All);
        }
        self.relink_others(path, &changed, &importers);
        self.relink_typed(path, typed_in, &moved, reshaped);
        true
    }

    /// Files (other than `path`) that look up a module key `path` answers to.
    pub(super) fn importers(&self, path: &str) -> BTreeSet<NodeIndex> {
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
    pub(super) fn candidate_counts(&self, name: &str, family: &str) -> [usize; 2] {
        let ids = self.named(name);
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

    pub(super) fn counts_before(&self, names: &HashSet<String>, family: &'static str) -> Counts {
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
    pub(super) fn changed(&self, counts: Counts) -> HashSet<String> {
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

    pub(super) fn place(&mut self, node: NodeIndex, file: NodeIndex, parent: NodeIndex) {
        if self.owner.len() <= node.index() {
            self.owner.resize(node.index() + 1, NodeIndex::end());
            self.parents.resize(node.index() + 1, NodeIndex::end());
        }
        self.owner[node.index()] = file;
        self.parents[node.index()] = parent;
    }

    /// Adds a file's nodes and index entries, reusing its file node if given; its
    /// names are interned unless `named` gives their ids.
    pub(super) fn add_file_at(
        &mut self,
        path: String,
        symbols: FileSymbols,
        named: Option<Named>,
        prepared: Prepared,
        file: Option<NodeIndex>,
    ) -> NodeIndex {
        let Prepared {
            keys,
            import_keys,
            lookups,
            defs: def_nodes,
            imports: import_nodes,
            path: shared,
        } = prepared;
        // Definitions first, then references, as they come: a build interns its
        // names in the order a load finds them.
        let Named {
            definitions: def_names,
            references,
        } = named.unwrap_or_else(|| Named {
            definitions: def_nodes
                .iter()
                .map(|(node, _)| self.interned.intern(&node.name))
                .collect(),
            references: self.interned_references(&symbols.references),
        });
        let node = Node {
            kind: NodeKind::File,
            name: path.as_str().into(),
            path: shared,
            language: symbols.language,
            line: 1,
            end_line: symbols
                .definitions
                .iter()
                .map(|d| d.end_line)
                .max()
                .unwrap_or(1),
            signature: "".into(),
            items: Box::default(),
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
        for ((def, (node, container)), name) in
            symbols.definitions.iter().zip(def_nodes).zip(def_names)
        {
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
            let ids = by_id(&mut self.names, name);
            let before = |&x: &NodeIndex| (owner[x.index()], x) < (file, id);
            // Last, as a build or a load adds every file.
            if ids.last().is_none_or(before) {
                ids.push(id);
            } else {
                let at = ids.partition_point(before);
                ids.insert(at, id);
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
                    line: line32(import.line),
                    reference: u32::MAX,
                },
            );
            self.place(id, file, file);
            imports.push(id);
        }
        let symbols = stored(symbols, references);
        let mut previous = None;
        for reference in &symbols.references {
            if previous != Some(reference.name) {
                insert_once(by_id(&mut self.wanted, reference.name), file);
                previous = Some(reference.name);
            }
        }
        for key in &keys {
            // The key copied only when new (most files share theirs).
            match self.modules.get_mut(key.as_str()) {
                Some(files) if files.contains(&file) => {}
                Some(files) => files.push(file),
                None => {
                    self.modules.insert(key.clone(), vec![file]);
                }
            }
        }
        for key in &lookups {
            insert_sorted(&mut self.lookups, key, file);
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
    pub(super) fn remove_nodes(&mut self, path: &str, whole: bool) -> Option<NodeIndex> {
        let entry = self.files.remove(path)?;
        for id in &entry.defs {
            if let Some(name) = self.interned.id(&self.graph[*id].name) {
                remove_node(&mut self.names[name as usize], *id);
            }
            self.graph.remove_node(*id);
        }
        for id in &entry.imports {
            self.graph.remove_node(*id);
        }
        let mut previous = None;
        for reference in &entry.symbols.references {
            if previous != Some(reference.name) {
                remove_node(&mut self.wanted[reference.name as usize], entry.node);
                previous = Some(reference.name);
            }
        }
        let (language, package) = (entry.symbols.language, entry.symbols.package.as_deref());
        for key in lookups(path, language, package, &entry.import_keys) {
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
            let out: Vec<EdgeId> = self
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

    /// The class, function or file that contains a node directly.
    pub fn parent(&self, id: NodeIndex) -> Option<NodeIndex> {
        self.parents
            .get(id.index())
            .copied()
            .filter(|&p| p != NodeIndex::end())
    }

    /// Each file's symbols, by path: everything the graph is built from.
    pub fn files(&self) -> Vec<(String, FileSymbols)> {
        let mut out: Vec<_> = self
            .files
            .iter()
            .map(|(p, e)| (p.clone(), self.unstored(e)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// `references` with their names interned.
    fn interned_references(&mut self, references: &[Reference]) -> Vec<Ref> {
        let mut last: Option<u32> = None;
        references
            .iter()
            .map(|r| {
                // Sorted by name: one look-up a run of the same name.
                let name = match last {
                    Some(id) if self.interned.get(id) == &*r.name => id,
                    _ => self.interned.intern(&r.name),
                };
                last = Some(name);
                Ref {
                    kind: r.kind,
                    name,
                    line: r.line,
                    origin: r.origin,
                    receiver: r.receiver,
                }
            })
            .collect()
    }

    /// The `FileSymbols` a file's `Stored` symbols were made from.
    pub(super) fn unstored(&self, entry: &FileEntry) -> FileSymbols {
        self.symbols_of(entry, true)
    }

    /// A file's symbols as given (`unstored`), or without the names of its
    /// definitions and its references unless `named` (as `SavedFile` holds them).
    fn symbols_of(&self, entry: &FileEntry, named: bool) -> FileSymbols {
        let symbols = &entry.symbols;
        FileSymbols {
            language: symbols.language,
            definitions: symbols
                .definitions
                .iter()
                .zip(&entry.defs)
                .map(|(&span, &id)| {
                    let node = &self.graph[id];
                    let name = if named {
                        node.name.clone()
                    } else {
                        Box::default()
                    };
                    Definition::with_span(span, name, node.signature.clone())
                })
                .collect(),
            imports: symbols.imports.clone(),
            references: if named {
                symbols
                    .references
                    .iter()
                    .map(|r| Reference {
                        kind: r.kind,
                        name: self.interned.get(r.name).into(),
                        line: r.line,
                        origin: r.origin,
                        receiver: r.receiver,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            types: symbols.types.clone(),
            package: symbols.package.clone(),
            syntax_errors: symbols.syntax_errors,
            error_line: symbols.error_line,
            truncated: symbols.truncated.clone(),
        }
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

    pub fn file_node(&self, path: &str) -> Option<NodeIndex> {
        self.files.get(path).map(|e| e.node)
    }

    /// A node as text: a file is its path, an import "path:import module", a symbol
    /// "path:name".
    pub fn label(&self, id: NodeIndex) -> String {
        let node = &self.graph[id];
        match node.kind {
            NodeKind::File => node.path.to_string(),
            NodeKind::Import => format!("{}:import {}", node.path, node.name),
            _ => format!("{}:{}", node.path, node.name),
        }
    }

    /// (source, kind, target, line, confidence) of every edge, as text, sorted: for
    /// exact tests.
    pub fn edge_list(&self) -> Vec<(String, EdgeKind, String, usize, f32)> {
        let mut out: Vec<_> = self
            .graph
            .edge_references()
            .map(|e| {
                (
                    self.label(e.source()),
                    e.weight().kind,
                    self.label(e.target()),
                    e.weight().line as usize,
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

/// `n` and a 16th more: the room a built or loaded graph reserves for its nodes and
/// edges. Without it the first update that adds a node or an edge copies the whole
/// vector into fresh pages: on the Linux kernel (3.4 M nodes, 12.7 M edges, ~1 GB
/// of vectors) the first update after load that added a function took 304 ms
/// (61 % of it growing the node and edge vectors, by perf), 138 ms with the room.
/// Room never used is never touched and takes no memory.
/// Files prepared at a time (`prepared_runs`, `from_saved`), and files
/// `from_files` links at a time after their bases.
#[cfg(not(test))]
const LINK_RUN: usize = 2048;
#[cfg(test)]
const LINK_RUN: usize = 3;

/// A file's symbols as kept, given its references with their names interned.
fn stored(symbols: FileSymbols, references: Vec<Ref>) -> Stored {
    let FileSymbols {
        language,
        definitions,
        imports,
        references: _,
        types,
        package,
        syntax_errors,
        error_line,
        truncated,
    } = symbols;
    Stored {
        language,
        definitions: definitions.iter().map(Definition::span).collect(),
        imports,
        references,
        types,
        package,
        syntax_errors,
        error_line,
        truncated,
    }
}

/// Hands each of `runs` to `each`, in order, while the next is made beside it
/// (`runs` makes a run when asked for it; on the thread pool here). Stops at the
/// first run that is an error.
fn overlapped<T: Send, E: Send>(
    mut runs: impl Iterator<Item = Result<T, E>> + Send,
    mut each: impl FnMut(T) + Send,
) -> Result<(), E> {
    let mut next = runs.next();
    while let Some(run) = next {
        let run = run?;
        let ((), following) = rayon::join(|| each(run), || runs.next());
        next = following;
    }
    Ok(())
}

/// `items` in runs of `LINK_RUN` (the last may be shorter), in order.
fn in_runs<T>(items: Vec<T>) -> impl Iterator<Item = Vec<T>> {
    let mut items = items.into_iter();
    std::iter::from_fn(move || {
        let run: Vec<T> = items.by_ref().take(LINK_RUN).collect();
        (!run.is_empty()).then_some(run)
    })
}

/// The nodes a file's symbols make: its own, and one a definition or import.
fn node_count(symbols: &FileSymbols) -> usize {
    1 + symbols.definitions.len() + symbols.imports.len()
}

/// Every module key a file looks up: its imports' and its package's.
pub(super) fn lookups(
    path: &str,
    language: Language,
    package: Option<&str>,
    import_keys: &[(Vec<String>, Match)],
) -> BTreeSet<String> {
    modules::package_of(language, path, package)
        .into_iter()
        .chain(
            import_keys
                .iter()
                .flat_map(|(keys, _)| keys.iter().cloned()),
        )
        .collect()
}

/// Removes the entries of `map[key]` matching `doomed`, and the key once empty.
pub(super) fn remove_from<T>(
    map: &mut HashMap<String, Vec<T>>,
    key: &str,
    doomed: impl Fn(&T) -> bool,
) {
    if let Some(values) = map.get_mut(key) {
        values.retain(|v| !doomed(v));
        if values.is_empty() {
            map.remove(key);
        }
    }
}

/// Adds `value` to sorted `values` (once).
fn insert_once(values: &mut Vec<NodeIndex>, value: NodeIndex) {
    // Last, as a build or a load adds every file.
    if values.last().is_none_or(|&last| last < value) {
        values.push(value);
    } else if let Err(at) = values.binary_search(&value) {
        values.insert(at, value);
    }
}

/// Removes `node` from `values`, freeing them once empty.
fn remove_node(values: &mut Vec<NodeIndex>, node: NodeIndex) {
    values.retain(|&x| x != node);
    if values.is_empty() {
        *values = Vec::new();
    }
}

/// The nodes of an interned name `id` in a vector indexed by id, grown to hold it.
fn by_id(lists: &mut Vec<Vec<NodeIndex>>, id: u32) -> &mut Vec<NodeIndex> {
    let id = id as usize;
    if lists.len() <= id {
        lists.resize_with(id + 1, Vec::new);
    }
    &mut lists[id]
}

/// Adds `value` to the sorted values of `key` (once).
pub(super) fn insert_sorted(
    map: &mut HashMap<String, Vec<NodeIndex>>,
    key: &str,
    value: NodeIndex,
) {
    match map.get_mut(key) {
        Some(values) => insert_once(values, value),
        None => {
            map.insert(key.to_string(), vec![value]);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::graph::extract::extract;
    use petgraph::Direction;
    use EdgeKind::*;

    pub(crate) fn graph(files: &[(&str, &str)]) -> KnowledgeGraph {
        KnowledgeGraph::from_files(
            files
                .iter()
                .map(|(p, src)| {
                    let language =
                        Language::from_path(std::path::Path::new(p)).unwrap_or(Language::Python);
                    (p.to_string(), extract(language, src.as_bytes()))
                })
                .collect(),
        )
    }

    /// `files()` gives back the symbols the graph was built from, exactly: the
    /// definitions' names and signatures come from their nodes, the rest from what
    /// the graph keeps, and an update replaces one file's alone.
    #[test]
    fn files_are_the_symbols_built_from() {
        let sources = [
            (
                "a.py",
                "import b\n\nclass A(b.B):\n    def run(self, x):\n        return helper(x)\n\n\ndef helper(y):\n    \"\"\"Doc.\"\"\"\n    return b.go(y)\n",
            ),
            ("b.py", "class B:\n    pass\n\ndef go(z):\n    return z\n"),
            ("c.go", "package c\n\nfunc Run() int { return 1 }\n"),
        ];
        let symbols = |(p, src): (&str, &str)| {
            let language = Language::from_path(std::path::Path::new(p)).expect("known");
            (p.to_string(), extract(language, src.as_bytes()))
        };
        let files: Vec<(String, FileSymbols)> = sources.into_iter().map(symbols).collect();
        let mut g = graph(&sources);
        assert_eq!(g.files(), files);
        assert!(files.iter().all(|(_, s)| !s.definitions.is_empty()));
        let (_, changed) = symbols((
            "b.py",
            "def go(z, w):\n    return z\n\nclass C:\n    x = 1\n",
        ));
        g.update_file("b.py", changed.clone());
        let mut expected = files;
        expected[1].1 = changed;
        assert_eq!(g.files(), expected);
    }

    /// What the definitions named `name` call: (callee label, call line, confidence).
    pub(crate) fn callees(g: &KnowledgeGraph, name: &str) -> Vec<(String, usize, f32)> {
        g.callees(name)
            .iter()
            .map(|(n, e)| (g.label(*n), e.line as usize, e.confidence))
            .collect()
    }

    pub(crate) fn e(a: &str, k: EdgeKind, b: &str) -> (String, EdgeKind, String) {
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
            .map(|(n, e)| (g.node(*n).name.to_string(), e.line as usize, e.confidence))
            .collect();
        assert_eq!(callers, vec![("title".to_string(), 6, 1.0)]);
        let contents: Vec<_> = g
            .file_contents("app.py")
            .unwrap()
            .iter()
            .map(|&n| g.node(n).name.to_string())
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
            (NodeKind::Import, ["Base".into(), "LIMIT".into()].into())
        );
        assert_eq!(&*g.node(g.parent(import).unwrap()).name, "app.py");
    }

    /// A built or loaded graph has room for a 16th more nodes and edges, so the
    /// first updates that add some do not copy the whole vectors.
    #[test]
    fn built_and_loaded_graphs_have_room_to_grow() {
        let files: Vec<(String, String)> = (0..40)
            .map(|i| {
                let source = format!(
                    "import f{}\n\ndef g{i}():\n    g{}()\n    h()\n\ndef h():\n    pass\n",
                    (i + 1) % 40,
                    (i + 1) % 40
                );
                (format!("f{i}.py"), source)
            })
            .collect();
        let built = graph_of(&files);
        let loaded = KnowledgeGraph::from_saved(built.saved()).unwrap();
        for g in [&built, &loaded] {
            let (nodes, edges) = (g.node_count(), g.edge_count());
            assert_eq!((nodes, edges), (160, 240));
            assert!(g.graph.room().0 >= nodes / 16, "{:?}", g.graph.room());
            assert!(g.graph.room().1 >= edges / 16, "{:?}", g.graph.room());
            assert!(g.owner.capacity() - g.owner.len() >= nodes / 16);
            assert!(g.parents.capacity() - g.parents.len() >= nodes / 16);
        }
    }

    /// The graph of (path, source) pairs held as strings.
    fn graph_of(files: &[(String, String)]) -> KnowledgeGraph {
        let pairs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, s)| (p.as_str(), s.as_str()))
            .collect();
        graph(&pairs)
    }

    /// Eleven files loaded in runs of `LINK_RUN` (3 in tests): the graph saved, and
    /// a file refused in the last run is an error naming it.
    #[test]
    fn a_graph_loaded_in_runs_is_the_graph_saved() {
        let files: Vec<(String, String)> = (0..11)
            .map(|i| {
                let next = (i + 1) % 11;
                let source = format!(
                    "import f{next}\n\nclass C{i}:\n    def m(self):\n        f{next}.g{next}()\n\ndef g{i}():\n    pass\n"
                );
                (format!("f{i}.py"), source)
            })
            .collect();
        let built = graph_of(&files);
        let saved = built.saved();
        let loaded = KnowledgeGraph::from_saved(saved.clone()).unwrap();
        assert_eq!(loaded.edge_list(), built.edge_list());
        assert_eq!(loaded.files(), built.files());
        assert_eq!(loaded.saved(), saved);
        // Sorted by path, the tenth file (in the last run) is f8.py.
        let mut bad = saved;
        let last = bad.names.intern("zz");
        let refs = &mut bad.files[9].references;
        let mut first = refs[0];
        first.name = last;
        refs.insert(0, first);
        let why = KnowledgeGraph::from_saved(bad).unwrap_err();
        assert_eq!(why, "f8.py: references out of order");
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
            damage(&mut bad.files[0].links);
            KnowledgeGraph::from_saved(bad).unwrap_err()
        };
        assert!(damaged(|l| l.edges[0].to_file = 7).contains("a.py: no file at position 7"));
        assert!(damaged(|l| l.edges[0].to = 99).contains("no node at position"));
        assert!(damaged(|l| l.resolved.clear()).contains("1 imports but 0 resolved"));
        // Names and references that do not fit the file (a file decodes into any
        // of these).
        let named = |damage: fn(&mut SavedFile)| {
            let mut bad = saved.clone();
            damage(&mut bad.files[0]);
            KnowledgeGraph::from_saved(bad).unwrap_err()
        };
        let unfit = "a.py: names that do not fit its symbols";
        assert_eq!(named(|f| f.definitions.clear()), unfit);
        assert_eq!(
            named(|f| f.symbols.references = vec![Reference {
                kind: RefKind::Call,
                name: "g".into(),
                line: 1,
                origin: Origin::File,
                receiver: Receiver::Unknown,
            }]),
            unfit
        );
        let unknown = "a.py: a name the graph does not have";
        assert_eq!(named(|f| f.definitions[0] = 99), unknown);
        assert_eq!(named(|f| f.references[0].name = u32::MAX), unknown);
        let range = "a.py: a reference's origin or receiver out of range";
        assert_eq!(
            named(|f| f.references[0].origin = Origin::Definition(1)),
            range
        );
        assert_eq!(named(|f| f.references[0].origin = Origin::Import(1)), range);
        assert_eq!(
            named(|f| f.references[0].receiver = Receiver::Type(0)),
            range
        );
        assert_eq!(
            named(|f| f.references[0].receiver = Receiver::Named(1)),
            range
        );
    }

    /// `files` (path -> text) parsed as `language`, in path order.
    fn parsed(language: Language, files: &BTreeMap<String, String>) -> Vec<(String, FileSymbols)> {
        files
            .iter()
            .map(|(p, s)| (p.clone(), extract(language, s.as_bytes())))
            .collect()
    }

    /// Gives the file `path` in `g` and in `files` its new `text` (in `language`),
    /// or removes it (`None`).
    fn change(
        g: &mut KnowledgeGraph,
        files: &mut BTreeMap<String, String>,
        language: Language,
        path: &str,
        text: Option<String>,
    ) {
        match text {
            Some(text) => {
                g.update_file(path, extract(language, text.as_bytes()));
                files.insert(path.to_string(), text);
            }
            None => {
                g.remove_file(path);
                files.remove(path);
            }
        }
    }

    /// A package import (`import p.*`) links only the files of the package the
    /// importer uses (through a call, a type or a base), at the confidence of the
    /// best such link; a class import links its class's file, used or not; a C#
    /// `using` is a package import; a Go import still links its whole package.
    #[test]
    fn package_imports_link_the_files_used() {
        let g = graph(&[
            ("src/com/acme/util/Strings.java", "package com.acme.util;\npublic class Strings { public static String trim(String s) { return s; } }\n"),
            ("src/com/acme/util/Numbers.java", "package com.acme.util;\npublic class Numbers { public static int parse(String s) { return 0; } }\n"),
            ("src/com/acme/util/Dates.java", "package com.acme.util;\npublic class Dates { }\n"),
            ("src/com/acme/util/Base.java", "package com.acme.util;\npublic class Base { }\n"),
            ("src/com/acme/app/Main.java", "package com.acme.app;\nimport com.acme.util.*;\nimport com.acme.util.Dates;\npublic class Main extends Base { void run(String a) { Strings.trim(a); } }\n"),
            ("Util/Strings.cs", "namespace Util { public class Strings { public static string Trim(string s) { return s; } } }\n"),
            ("Util/Dates.cs", "namespace Util { public class Dates { } }\n"),
            ("App/Main.cs", "using Util;\nnamespace App { public class Main { public static void Run() { Strings.Trim(\"x\"); } } }\n"),
            ("go.mod", ""),
            ("util/a.go", "package util\n\nfunc A() {}\n"),
            ("util/b.go", "package util\n\nfunc B() {}\n"),
            ("main.go", "package main\n\nimport \"x/util\"\n\nfunc main() { util.A() }\n"),
        ]);
        let imports: Vec<(String, String, f32)> = g
            .edge_list()
            .into_iter()
            .filter(|(_, kind, _, _, _)| *kind == Imports)
            .map(|(a, _, b, _, confidence)| (a, b, confidence))
            .collect();
        let import = |a: &str, b: &str| (a.to_string(), b.to_string(), 1.0);
        assert_eq!(
            imports,
            [
                import("App/Main.cs:import Util", "Util/Strings.cs"),
                (
                    "main.go:import x/util".to_string(),
                    "util/a.go".to_string(),
                    0.5
                ),
                (
                    "main.go:import x/util".to_string(),
                    "util/b.go".to_string(),
                    0.5
                ),
                import(
                    "src/com/acme/app/Main.java:import com.acme.util",
                    "src/com/acme/util/Base.java"
                ),
                import(
                    "src/com/acme/app/Main.java:import com.acme.util",
                    "src/com/acme/util/Strings.java"
                ),
                import(
                    "src/com/acme/app/Main.java:import com.acme.util.Dates",
                    "src/com/acme/util/Dates.java"
                ),
            ]
        );
    }

    /// Java files with package imports, class imports and bases across two
    /// packages, updated, removed and added at random: after each step, the same
    /// graph as a fresh build (the package imports' edges follow the links the
    /// importers have: repaired when those change).
    #[test]
    fn package_import_updates_equal_a_fresh_build() {
        use std::collections::BTreeMap;
        const PACKAGES: [&str; 2] = ["a", "b"];
        for seed in 1..=40u64 {
            let mut next = crate::context::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let path_of = |next: &mut dyn FnMut(u64) -> u64| {
                let (package, i) = (PACKAGES[next(2) as usize], next(4));
                format!("src/{package}/C{i}.java")
            };
            let source = |next: &mut dyn FnMut(u64) -> u64, path: &str| {
                let package = &path[4..5];
                let other = PACKAGES[next(2) as usize];
                let class = path.rsplit_once('/').unwrap().1.trim_end_matches(".java");
                // Sometimes the file defines another class than its name says.
                let class = if next(4) == 0 {
                    format!("D{}", next(4))
                } else {
                    class.to_string()
                };
                let mut text = format!("package {package};\n");
                if next(3) != 0 {
                    text.push_str(&format!("import {other}.*;\n"));
                }
                if next(3) == 0 {
                    text.push_str(&format!("import {other}.C{};\n", next(4)));
                }
                let base = if next(2) == 0 {
                    format!(" extends C{}", next(4))
                } else {
                    String::new()
                };
                let (callee, made) = (next(4), next(4));
                text.push_str(&format!(
                    "public class {class}{base} {{\n  static void m{}() {{ C{callee}.m{callee}(); new C{made}(); }}\n}}\n",
                    next(4)
                ));
                text
            };
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            for _ in 0..6 {
                let path = path_of(&mut next);
                let text = source(&mut next, &path);
                files.insert(path, text);
            }
            let mut g = KnowledgeGraph::from_files(parsed(Language::Java, &files));
            for step in 0..12 {
                let path = path_of(&mut next);
                let text = (next(4) != 0).then(|| source(&mut next, &path));
                change(&mut g, &mut files, Language::Java, &path, text);
                let fresh = KnowledgeGraph::from_files(parsed(Language::Java, &files));
                assert_eq!(
                    g.edge_list(),
                    fresh.edge_list(),
                    "seed {seed}, step {step}, after changing {path}"
                );
            }
        }
    }

    /// Kotlin files whose `package` lines change (the module keys they answer to
    /// change with them): after each update, the same graph as a fresh build.
    #[test]
    fn package_changes_equal_a_fresh_build() {
        use std::collections::BTreeMap;
        const PACKAGES: [&str; 3] = ["a.b", "c", "a.b.k"];
        for seed in 1..=20u64 {
            let mut next = crate::context::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let source = |next: &mut dyn FnMut(u64) -> u64, i: u64| {
                let package = PACKAGES[next(3) as usize];
                let import = PACKAGES[next(3) as usize];
                let other = next(4);
                format!(
                    "package {package}\n\nimport {import}.f{other}\nimport {import}.K{other}\n\nclass K{i}\nfun f{i}() {{ f{other}(); K{other}() }}\n"
                )
            };
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            for i in 0..4 {
                files.insert(format!("d{i}/F{i}.kt"), source(&mut next, i));
            }
            let mut g = KnowledgeGraph::from_files(parsed(Language::Kotlin, &files));
            for step in 0..10 {
                let i = next(4);
                let path = format!("d{i}/F{i}.kt");
                let text = source(&mut next, i);
                change(&mut g, &mut files, Language::Kotlin, &path, Some(text));
                let fresh = KnowledgeGraph::from_files(parsed(Language::Kotlin, &files));
                assert_eq!(
                    g.edge_list(),
                    fresh.edge_list(),
                    "seed {seed}, step {step}, after changing {path}"
                );
                assert_eq!(g.node_count(), fresh.node_count());
            }
        }
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
                    match next(8) {
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
                        6 => {
                            // A call on a variable of a known class.
                            let class = if next(2) == 0 { "Repo" } else { "Base" };
                            let (def, callee) = (NAMES[next(4) as usize], name(next));
                            text.push_str(&format!(
                                "def {def}():\n    x = {class}()\n    x.{callee}()\n"
                            ));
                        }
                        7 => {
                            // A call on an annotated parameter and on an attribute.
                            let class = if next(2) == 0 { "Repo" } else { "Base" };
                            let (method, callee) = (NAMES[next(4) as usize], name(next));
                            text.push_str(&format!(
                                "class Repo:\n    def __init__(self):\n        self.y = {class}()\n    def {method}(self, p: {class}):\n        p.{callee}()\n        self.y.{callee}()\n"
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
            let mut g = KnowledgeGraph::from_files(parsed(Language::Python, &files));
            for step in 0..12 {
                let path = path_of(&mut next);
                let text = (next(4) != 0).then(|| source(&mut next));
                change(&mut g, &mut files, Language::Python, &path, text);
                if step % 4 == 3 {
                    // Saved and loaded (renumbered): equal, and it goes on updating.
                    g = KnowledgeGraph::from_saved(g.saved()).expect("a graph's own links fit it");
                }
                let fresh = KnowledgeGraph::from_files(parsed(Language::Python, &files));
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
