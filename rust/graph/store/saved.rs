//! The graph as saved and loaded: each file's symbols, names and links
//! (`SavedGraph`), and the graph rebuilt from them without linking again.

use std::sync::Arc;

use super::{in_runs, node_count, overlapped, FileEntry, KnowledgeGraph, Named, Prepared, Ready};
use crate::graph::adjacency::{Direction, NodeIndex};
use crate::graph::extract::{Origin, Receiver};
use crate::graph::model::{Edge, EdgeKind, LinkedEdge, Links, SavedFile, SavedGraph, NO_OWNER};
use crate::intern::Interner;
use crate::with_spare;

/// A saved file's links made nodes of: what each import resolves to, its scope,
/// its edges.
type Resolved = (
    Vec<Vec<NodeIndex>>,
    Vec<NodeIndex>,
    Vec<(NodeIndex, NodeIndex, Edge)>,
);

impl KnowledgeGraph {
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
    /// it), rather than the whole graph at once. Stops at `sink`'s first error.
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
        // The module tables wait for the first change (the links are saved).
        g.modules_pending = true;
        // Every file's nodes by its position, in `FileEntry::nodes` order: what the
        // links name. Their edges are added file by file, never all gathered first.
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
                    Receiver::This | Receiver::Unknown | Receiver::Member => false,
                }
        }) {
            return damaged("a reference's origin or receiver out of range");
        }
        for (d, &id) in symbols.definitions.iter_mut().zip(&definitions) {
            d.name = names.get(id).into();
        }
        let owners = symbols
            .definitions
            .iter()
            .map(|d| d.owner.as_deref().map_or(Some(NO_OWNER), |o| names.id(o)))
            .collect::<Option<Vec<u32>>>();
        let Some(owners) = owners else {
            return damaged("an owner the graph does not have");
        };
        let prepared = Prepared::of(&path, &mut symbols, false);
        let named = Named {
            definitions,
            owners,
            references,
        };
        Ok(((path, symbols, Some(named), prepared), links))
    }
}
