//! The knowledge graph: files, functions, classes, variables and imports as nodes;
//! Contains, Calls, Imports, Inherits, References and Uses edges, in a `Graph`
//! (`adjacency`) with name, path and module indexes. Building and adding and
//! removing a file's nodes here; saving and loading in `saved`, updating and
//! removing files in `update`; linking in `link`, queries in `query`, ranking in
//! `rank`.

mod saved;
#[cfg(test)]
pub(super) mod tests;
mod update;
mod view;

pub use view::ViewFile;

use std::collections::BTreeSet;
use std::sync::Arc;

use foldhash::HashMap;

use super::adjacency::{Direction, EdgeId, Graph, NodeIndex};
use super::extract::{
    Definition, FileSymbols, Import, Language, Origin, Receiver, RefKind, Reference, Span,
};
use super::link::{Pass, Relink, Resolution};
use super::model::{line32, Edge, EdgeKind, Node, NodeKind, CONTAINS_CONFIDENCE, NO_OWNER};
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
/// allocation of its own, where a `Reference` is 56 and one (a file has more
/// references than nodes).
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
    error_note: Option<String>,
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
/// (a saved file's): its definitions' names and owners (`NO_OWNER`: none), in
/// order, and its references.
pub(super) struct Named {
    definitions: Vec<u32>,
    owners: Vec<u32>,
    references: Vec<Ref>,
}

/// A file ready to add: its path, symbols, names if known, and what `Prepared::of` made.
type Ready = (String, FileSymbols, Option<Named>, Prepared);

#[derive(Debug, Default, Clone)]
pub struct KnowledgeGraph {
    pub(super) graph: Graph<Node, Edge>,
    pub(super) files: HashMap<String, FileEntry>,
    /// Definitions by name (indexed by its id in `interned`), sorted by (file node,
    /// node): a file's are a contiguous run. Indexed by the id rather than keyed by
    /// the name: the linker looks candidates up by the reference's id, and a key
    /// would be a string and a table slot more for each name.
    pub(super) names: Vec<Vec<NodeIndex>>,
    /// The file node of every node, by node index.
    pub(super) owner: Vec<NodeIndex>,
    /// The node containing every node (`NodeIndex::end()` for files), by node index.
    pub(super) parents: Vec<NodeIndex>,
    /// Referenced name (by its id in `interned`) -> files referring to it, sorted,
    /// so an update re-resolves only the references it can change. Indexed by the
    /// id rather than keyed by the name, which would be a string and a table slot
    /// more for each name.
    pub(super) wanted: Vec<Vec<NodeIndex>>,
    /// Module key -> files (their nodes) answering to it.
    pub(super) modules: HashMap<String, Vec<NodeIndex>>,
    /// Module key -> files looking it up.
    pub(super) lookups: HashMap<String, Vec<NodeIndex>>,
    /// The names of the references and definitions of every file, each held once
    /// for the whole graph. Names are never dropped: a name no file refers to or
    /// defines any more stays (the names a project ever used are few beside its
    /// references).
    pub(super) interned: Interner,
    /// Whether `modules`, `lookups` and each file's `keys` and `import_keys` are
    /// still to be made (`make_modules`): a loaded graph makes them when it is
    /// first changed, since only linking reads them (a query never does).
    pub(super) modules_pending: bool,
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
    /// as `Span`s and their names as the nodes'), rather than copied: a load
    /// allocates each string once.
    /// Without `modules`, the module keys are left empty (`Modules::of` makes
    /// them when the graph is first changed: see `KnowledgeGraph::modules_pending`).
    pub(super) fn of(path: &str, symbols: &mut FileSymbols, modules: bool) -> Prepared {
        let language = symbols.language;
        let Modules {
            keys,
            import_keys,
            lookups,
        } = if modules {
            Modules::of(path, language, symbols.package.as_deref(), &symbols.imports)
        } else {
            Modules::default()
        };
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
                owner: NO_OWNER,
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
            keys,
            import_keys,
            lookups,
            defs,
            imports,
            path: shared,
        }
    }
}

/// A file's module keys: those it answers to, those each import looks up, and
/// every key it looks up (`lookups`).
#[derive(Default)]
pub(super) struct Modules {
    keys: Vec<String>,
    import_keys: Vec<(Vec<String>, Match)>,
    lookups: BTreeSet<String>,
}

impl Modules {
    /// The module keys of the file at `path` in `language`, declaring `package`,
    /// with `imports`.
    pub(super) fn of(
        path: &str,
        language: Language,
        package: Option<&str>,
        imports: &[Import],
    ) -> Modules {
        let import_keys: Vec<_> = imports
            .iter()
            .map(|import| modules::lookups(language, path, import))
            .collect();
        let lookups = lookups(path, language, package, &import_keys);
        let mut keys = modules::keys(language, path);
        for k in modules::declared_keys(language, path, package) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        Modules {
            keys,
            import_keys,
            lookups,
        }
    }
}

impl KnowledgeGraph {
    /// Makes the module tables (`modules`, `lookups`, each file's `keys` and
    /// `import_keys`) if they are still to be made (`modules_pending`): each file's
    /// on the thread pool, then added in file-node order, as adding the files one
    /// by one adds them. Whatever changes the graph calls it first.
    pub(super) fn make_modules(&mut self) {
        use rayon::prelude::*;
        if !std::mem::take(&mut self.modules_pending) {
            return;
        }
        let mut made: Vec<(NodeIndex, Modules)> = self
            .files
            .par_iter()
            .map(|(path, entry)| {
                let s = &entry.symbols;
                let made = Modules::of(path, s.language, s.package.as_deref(), &s.imports);
                (entry.node, made)
            })
            .collect();
        made.sort_unstable_by_key(|(node, _)| *node);
        for (file, made) in made {
            self.index_modules(file, &made.keys, &made.lookups);
            let path = self.graph[file].path.clone();
            let entry = self.files.get_mut(&*path).expect("a file of the graph");
            (entry.keys, entry.import_keys) = (made.keys, made.import_keys);
        }
    }

    /// Adds `file` to the files answering to each of `keys` and looking up each
    /// of `lookups`.
    fn index_modules(&mut self, file: NodeIndex, keys: &[String], lookups: &BTreeSet<String>) {
        for key in keys {
            // The key copied only when new (most files share theirs).
            match self.modules.get_mut(key.as_str()) {
                Some(files) if files.contains(&file) => {}
                Some(files) => files.push(file),
                None => {
                    self.modules.insert(key.clone(), vec![file]);
                }
            }
        }
        for key in lookups {
            insert_sorted(&mut self.lookups, key, file);
        }
    }

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
    /// `MAX_CANDIDATES` candidates (`join`, `get`, `run`...): linked to them all,
    /// they would make most of the graph's edges, nearly all wrong. Uses and
    /// imported names resolve only in the file and what it imports.
    pub fn from_files(files: Vec<(String, FileSymbols)>) -> Self {
        use rayon::prelude::*;
        // The imports and types are kept for the graph's life, and were allocated
        // while parsing, among the syntax trees, sources and documents that parsing
        // frees: a copy (exact capacities, allocated together) frees those pages
        // whole, where the originals would hold them (see
        // `examples/graph_memory.rs`). Definitions are kept as `Span`s, made anew.
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
        // the rest never adds, so the rest is linked a run of files at a time,
        // never holding all of its edges at once).
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
    /// every file's nodes prepared at once would hold them twice over until added.
    fn prepared_runs(
        files: Vec<(String, FileSymbols)>,
    ) -> impl Iterator<Item = Result<Vec<Ready>, std::convert::Infallible>> {
        use rayon::prelude::*;
        in_runs(files).map(|run| {
            Ok(run
                .into_par_iter()
                .map(|(path, mut symbols)| {
                    let prepared = Prepared::of(&path, &mut symbols, true);
                    (path, symbols, None, prepared)
                })
                .collect())
        })
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
            owners,
            references,
        } = named.unwrap_or_else(|| Named {
            definitions: def_nodes
                .iter()
                .map(|(node, _)| self.interned.intern(&node.name))
                .collect(),
            owners: symbols
                .definitions
                .iter()
                .map(|d| {
                    d.owner
                        .as_deref()
                        .map_or(NO_OWNER, |o| self.interned.intern(o))
                })
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
            owner: NO_OWNER,
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
        for (((def, (mut node, container)), name), owner) in symbols
            .definitions
            .iter()
            .zip(def_nodes)
            .zip(def_names)
            .zip(owners)
        {
            node.owner = owner;
            let id = self.graph.add_node(node);
            let parent = container.map_or(file, |j| defs[j]);
            self.graph.add_edge(
                parent,
                id,
                Edge {
                    kind: EdgeKind::Contains,
                    confidence: CONTAINS_CONFIDENCE,
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
                    confidence: CONTAINS_CONFIDENCE,
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
        self.index_modules(file, &keys, &lookups);
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
                    let owner =
                        (node.owner != NO_OWNER).then(|| self.interned.get(node.owner).into());
                    Definition::with_span(span, name, node.signature.clone(), owner)
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
            error_note: symbols.error_note.clone(),
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

    /// The language a file of the graph was parsed as.
    pub fn file_language(&self, path: &str) -> Option<Language> {
        self.files.get(path).map(|e| e.symbols.language)
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

/// Files prepared at a time (`prepared_runs`, `from_saved`), and files
/// `from_files` links at a time after their bases (small in tests, so that they
/// cross runs).
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
        error_note,
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
        error_note,
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
