//! The knowledge graph: files, functions, classes and variables as nodes; Contains and
//! Calls edges, in a petgraph StableGraph with name and path indexes.

use std::collections::{BTreeSet, HashMap, HashSet};

use petgraph::stable_graph::{NodeIndex, StableGraph};
use petgraph::visit::{EdgeRef, IntoEdgeReferences, NodeIndexable};
use petgraph::Direction;

use super::extract::{DefKind, FileSymbols, Language};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    File,
    Function,
    Class,
    Variable,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Function => "function",
            NodeKind::Class => "class",
            NodeKind::Variable => "variable",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The symbol's name; a file's is its path.
    pub name: String,
    pub path: String,
    pub language: Language,
    pub line: usize,
    pub end_line: usize,
    pub signature: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    Contains,
    Calls,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub kind: EdgeKind,
    /// 1 for a unique target; 1/n when a call's name matches n definitions.
    pub confidence: f32,
    /// Line of the call site (Calls), or of the contained definition.
    pub line: usize,
    /// Calls: index of the call site in its file's `calls`; Contains: `u32::MAX`.
    call: u32,
}

/// The most definitions one call is linked to (see `KnowledgeGraph::from_files`).
pub const MAX_CANDIDATES: usize = 5;

#[derive(Debug, Clone)]
struct FileEntry {
    node: NodeIndex,
    /// Node of each definition, in `FileSymbols::definitions` order.
    defs: Vec<NodeIndex>,
    symbols: FileSymbols,
}

#[derive(Debug, Default, Clone)]
pub struct KnowledgeGraph {
    graph: StableGraph<Node, Edge>,
    files: HashMap<String, FileEntry>,
    names: HashMap<String, Vec<NodeIndex>>,
    /// Call name -> files with call sites of that name, so an update re-resolves
    /// only the calls it can change.
    called: HashMap<String, BTreeSet<String>>,
}

impl KnowledgeGraph {
    /// Builds the graph from parsed files (path relative to the root, symbols).
    ///
    /// A call resolves to definitions of that name (functions and classes) in the
    /// same file if there are any, else anywhere; n candidates share confidence 1/n.
    /// Names defined nowhere in the repository (library calls) get no edge, and
    /// neither do names with more than `MAX_CANDIDATES` definitions (`join`, `get`,
    /// `run`...): on CPython's standard library linking them all made 2.9 million
    /// edges out of 79 thousand nodes, nearly all wrong.
    pub fn from_files(files: Vec<(String, FileSymbols)>) -> Self {
        let mut g = KnowledgeGraph::default();
        let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        for (path, symbols) in files {
            g.add_file(path, symbols);
        }
        for path in &paths {
            g.link_calls(path, None);
        }
        g
    }

    /// Replaces one file's symbols (adds the file if new) and repairs the edges into
    /// and out of it: its own calls, and the calls elsewhere to names it defined or
    /// now defines. Nothing else is re-linked.
    pub fn update_file(&mut self, path: &str, symbols: FileSymbols) {
        let mut names: HashSet<String> = symbols.definitions.iter().map(|d| d.name.clone()).collect();
        names.extend(self.files.get(path).into_iter().flat_map(|e| e.symbols.definitions.iter().map(|d| d.name.clone())));
        let before = self.callable_counts(names);
        self.remove_nodes(path);
        self.add_file(path.to_string(), symbols);
        let changed = self.changed(before);
        self.relink_others(path, &changed);
        self.link_calls(path, None);
    }

    /// Removes a file and repairs the calls elsewhere to names it defined; false if
    /// it was not in the graph.
    pub fn remove_file(&mut self, path: &str) -> bool {
        let Some(entry) = self.files.get(path) else { return false };
        let names: HashSet<String> = entry.symbols.definitions.iter().map(|d| d.name.clone()).collect();
        let before = self.callable_counts(names);
        self.remove_nodes(path);
        let changed = self.changed(before);
        self.relink_others(path, &changed);
        true
    }

    fn callable_count(&self, name: &str) -> usize {
        self.names.get(name).map_or(0, |ids| ids.iter().filter(|&&c| matches!(self.graph[c].kind, NodeKind::Function | NodeKind::Class)).count())
    }

    fn callable_counts(&self, names: HashSet<String>) -> Vec<(String, usize)> {
        names.into_iter().map(|n| (self.callable_count(&n), n)).map(|(c, n)| (n, c)).collect()
    }

    /// The names whose calls elsewhere can resolve differently now. A name with more
    /// than `MAX_CANDIDATES` definitions both before and after links nowhere outside
    /// the files defining it, so `__init__`, `get` and friends are skipped: that is
    /// what keeps an update cheap.
    fn changed(&self, before: Vec<(String, usize)>) -> HashSet<String> {
        before.into_iter().filter(|(n, b)| *b <= MAX_CANDIDATES || self.callable_count(n) <= MAX_CANDIDATES).map(|(n, _)| n).collect()
    }

    fn add_file(&mut self, path: String, symbols: FileSymbols) {
        let file = self.graph.add_node(Node {
            kind: NodeKind::File,
            name: path.clone(),
            path: path.clone(),
            language: symbols.language,
            line: 1,
            end_line: symbols.definitions.iter().map(|d| d.end_line).max().unwrap_or(1),
            signature: String::new(),
        });
        let mut defs: Vec<NodeIndex> = Vec::with_capacity(symbols.definitions.len());
        for (i, def) in symbols.definitions.iter().enumerate() {
            let kind = match def.kind {
                DefKind::Function => NodeKind::Function,
                DefKind::Class => NodeKind::Class,
                DefKind::Variable => NodeKind::Variable,
            };
            let id = self.graph.add_node(Node {
                kind,
                name: def.name.clone(),
                path: path.clone(),
                language: symbols.language,
                line: def.line,
                end_line: def.end_line,
                signature: def.signature.clone(),
            });
            // Contained by the innermost enclosing class or function, else the file.
            let parent = (0..i).rev().find(|&j| symbols.definitions[j].contains(def)).map_or(file, |j| defs[j]);
            self.graph.add_edge(parent, id, Edge { kind: EdgeKind::Contains, confidence: 1.0, line: def.line, call: u32::MAX });
            self.names.entry(def.name.clone()).or_default().push(id);
            defs.push(id);
        }
        let called: HashSet<&str> = symbols.calls.iter().map(|c| c.name.as_str()).collect();
        for name in called {
            self.called.entry(name.to_string()).or_default().insert(path.clone());
        }
        self.files.insert(path, FileEntry { node: file, defs, symbols });
    }

    /// Removes a file's nodes (their edges go with them) and index entries.
    fn remove_nodes(&mut self, path: &str) -> Option<FileEntry> {
        let entry = self.files.remove(path)?;
        for (def, id) in entry.symbols.definitions.iter().zip(&entry.defs) {
            if let Some(ids) = self.names.get_mut(&def.name) {
                ids.retain(|x| x != id);
                if ids.is_empty() {
                    self.names.remove(&def.name);
                }
            }
            self.graph.remove_node(*id);
        }
        self.graph.remove_node(entry.node);
        for call in &entry.symbols.calls {
            if let Some(paths) = self.called.get_mut(&call.name) {
                paths.remove(path);
                if paths.is_empty() {
                    self.called.remove(&call.name);
                }
            }
        }
        Some(entry)
    }

    /// Re-resolves, in every file but `path`, the calls to `names`.
    fn relink_others(&mut self, path: &str, names: &HashSet<String>) {
        let mut others: BTreeSet<String> = BTreeSet::new();
        for name in names {
            others.extend(self.called.get(name).into_iter().flatten().filter(|p| *p != path).cloned());
        }
        for other in &others {
            self.unlink_calls(other, names);
            self.link_calls(other, Some(names));
        }
    }

    fn callers_of_file(&self, entry: &FileEntry) -> Vec<NodeIndex> {
        std::iter::once(entry.node).chain(entry.defs.iter().copied()).collect()
    }

    fn unlink_calls(&mut self, path: &str, names: &HashSet<String>) {
        let Some(entry) = self.files.get(path) else { return };
        let doomed: Vec<_> = self
            .callers_of_file(entry)
            .into_iter()
            .flat_map(|n| self.graph.edges_directed(n, Direction::Outgoing).collect::<Vec<_>>())
            .filter(|e| e.weight().kind == EdgeKind::Calls && names.contains(&entry.symbols.calls[e.weight().call as usize].name))
            .map(|e| e.id())
            .collect();
        for edge in doomed {
            self.graph.remove_edge(edge);
        }
    }

    /// Adds the Calls edges of a file's call sites (only those named in `only`, if given).
    fn link_calls(&mut self, path: &str, only: Option<&HashSet<String>>) {
        let Some(entry) = self.files.get(path) else { return };
        let mut edges = Vec::new();
        // Reused for every call: (callable anywhere, callable in this file).
        let (mut anywhere, mut here) = (Vec::new(), Vec::new());
        for (index, call) in entry.symbols.calls.iter().enumerate() {
            if only.is_some_and(|names| !names.contains(&call.name)) {
                continue;
            }
            let Some(candidates) = self.names.get(&call.name) else { continue };
            anywhere.clear();
            here.clear();
            for &c in candidates {
                let node = &self.graph[c];
                if matches!(node.kind, NodeKind::Function | NodeKind::Class) {
                    anywhere.push(c);
                    if node.path == path {
                        here.push(c);
                    }
                }
            }
            let targets = if here.is_empty() { &anywhere } else { &here };
            if targets.len() > MAX_CANDIDATES {
                continue;
            }
            let caller = call.caller.map_or(entry.node, |i| entry.defs[i]);
            let confidence = 1.0 / targets.len().max(1) as f32;
            for &target in targets {
                edges.push((caller, target, Edge { kind: EdgeKind::Calls, confidence, line: call.line, call: index as u32 }));
            }
        }
        for (a, b, e) in edges {
            self.graph.add_edge(a, b, e);
        }
    }

    /// Each file's symbols, by path: everything the graph is built from.
    pub fn files(&self) -> Vec<(String, FileSymbols)> {
        let mut out: Vec<_> = self.files.iter().map(|(p, e)| (p.clone(), e.symbols.clone())).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
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

    /// Every definition in a file, in line order.
    pub fn file_contents(&self, path: &str) -> Option<Vec<NodeIndex>> {
        let file = self.files.get(path)?.node;
        let mut out = Vec::new();
        let mut stack = vec![file];
        while let Some(n) = stack.pop() {
            for e in self.graph.edges_directed(n, Direction::Outgoing).filter(|e| e.weight().kind == EdgeKind::Contains) {
                out.push(e.target());
                stack.push(e.target());
            }
        }
        out.sort_by_key(|&n| (self.graph[n].line, self.graph[n].end_line));
        Some(out)
    }

    /// Definitions named `name` (or starting with it), sorted by path then line.
    pub fn find_symbol(&self, name: &str, prefix: bool) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = if prefix {
            self.names.iter().filter(|(n, _)| n.starts_with(name)).flat_map(|(_, ids)| ids.iter().copied()).collect()
        } else {
            self.names.get(name).cloned().unwrap_or_default()
        };
        out.sort_by(|&a, &b| (&self.graph[a].path, self.graph[a].line, &self.graph[a].name).cmp(&(&self.graph[b].path, self.graph[b].line, &self.graph[b].name)));
        out
    }

    fn calls(&self, name: &str, direction: Direction) -> Vec<(NodeIndex, Edge)> {
        let mut out: Vec<(NodeIndex, Edge)> = self
            .names
            .get(name)
            .into_iter()
            .flatten()
            .flat_map(|&def| {
                self.graph
                    .edges_directed(def, direction)
                    .filter(|e| e.weight().kind == EdgeKind::Calls)
                    .map(move |e| (if direction == Direction::Incoming { e.source() } else { e.target() }, *e.weight()))
            })
            .collect();
        out.sort_by(|a, b| (&self.graph[a.0].path, a.1.line, self.graph[a.0].line).cmp(&(&self.graph[b.0].path, b.1.line, self.graph[b.0].line)));
        out.dedup_by_key(|(n, e)| (*n, e.line));
        out
    }

    /// What calls a symbol: (caller, the call edge), by path and call line.
    pub fn callers(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.calls(name, Direction::Incoming)
    }

    /// What a symbol calls: (callee, the call edge).
    pub fn callees(&self, name: &str) -> Vec<(NodeIndex, Edge)> {
        self.calls(name, Direction::Outgoing)
    }

    /// Personalized PageRank (the repo-map idea): a random walk over the graph, edges
    /// followed both ways in proportion to their confidence, that restarts at the
    /// seeds with probability `1 - damping`. Returns nodes by score, highest first.
    pub fn rank(&self, seeds: &[(NodeIndex, f64)], damping: f64, iterations: usize) -> Vec<(NodeIndex, f64)> {
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
            .map(|e| (e.source().index(), e.target().index(), f64::from(e.weight().confidence)))
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
        let mut ranked: Vec<(NodeIndex, f64)> = self.graph.node_indices().map(|i| (i, score[i.index()])).filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| (&self.graph[a.0].path, self.graph[a.0].line).cmp(&(&self.graph[b.0].path, self.graph[b.0].line))));
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
                    if let std::collections::hash_map::Entry::Vacant(slot) = distance.entry(neighbour) {
                        slot.insert(depth);
                        next.push(neighbour);
                    }
                }
            }
            frontier = next;
        }
        let mut out: Vec<_> = distance.into_iter().collect();
        out.sort_by(|a, b| (a.1, &self.graph[a.0].path, self.graph[a.0].line).cmp(&(b.1, &self.graph[b.0].path, self.graph[b.0].line)));
        out
    }

    pub fn file_node(&self, path: &str) -> Option<NodeIndex> {
        self.files.get(path).map(|e| e.node)
    }

    /// (source, kind, target, line, confidence) of every edge, as text, sorted: for
    /// exact tests.
    pub fn edge_list(&self) -> Vec<(String, EdgeKind, String, usize, f32)> {
        let label = |n: NodeIndex| {
            let node = &self.graph[n];
            if node.kind == NodeKind::File { node.path.clone() } else { format!("{}:{}", node.path, node.name) }
        };
        let mut out: Vec<_> = (&self.graph)
            .edge_references()
            .map(|e| (label(e.source()), e.weight().kind, label(e.target()), e.weight().line, e.weight().confidence))
            .collect();
        out.sort_by(|a, b| (&a.0, a.1 as u8, &a.2, a.3).cmp(&(&b.0, b.1 as u8, &b.2, b.3)).then(a.4.total_cmp(&b.4)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::extract::extract;
    use EdgeKind::*;

    fn graph(files: &[(&str, &str)]) -> KnowledgeGraph {
        KnowledgeGraph::from_files(files.iter().map(|(p, src)| (p.to_string(), extract(Language::Python, src.as_bytes()))).collect())
    }

    fn e(a: &str, k: EdgeKind, b: &str) -> (String, EdgeKind, String) {
        (a.to_string(), k, b.to_string())
    }

    #[test]
    fn exact_graph_of_a_small_repo() {
        let g = graph(&[
            ("app.py", "from util import slug\n\nclass Page:\n    def title(self):\n        return slug(self.name)\n\ndef render(p):\n    return p.title()\n"),
            ("util.py", "def slug(s):\n    return s.lower()\n\ndef title():\n    pass\n"),
        ]);
        assert_eq!((g.file_count(), g.node_count()), (2, 7));
        let edges: Vec<_> = g.edge_list().into_iter().map(|(a, k, b, _, _)| (a, k, b)).collect();
        assert_eq!(
            edges,
            vec![
                e("app.py", Contains, "app.py:Page"),
                e("app.py", Contains, "app.py:render"),
                e("app.py:Page", Contains, "app.py:title"),
                e("app.py:render", Calls, "app.py:title"), // same file wins over util.py's title
                e("app.py:title", Calls, "util.py:slug"),
                e("util.py", Contains, "util.py:slug"),
                e("util.py", Contains, "util.py:title"),
            ]
        );
        let callers: Vec<_> = g.callers("slug").iter().map(|(n, e)| (g.node(*n).name.clone(), e.line, e.confidence)).collect();
        assert_eq!(callers, vec![("title".to_string(), 5, 1.0)]);
        let contents: Vec<_> = g.file_contents("app.py").unwrap().iter().map(|&n| g.node(n).name.clone()).collect();
        assert_eq!(contents, ["Page", "title", "render"]);
        assert_eq!(g.find_symbol("title", false).len(), 2);
        assert_eq!(g.find_symbol("ti", true).len(), 2);
        assert!(g.file_contents("nope.py").is_none());
    }

    #[test]
    fn ambiguous_calls_link_every_candidate_with_lower_confidence() {
        let g = graph(&[("a.py", "def run():\n    pass\n"), ("b.py", "def run():\n    pass\n"), ("c.py", "def main():\n    run()\n")]);
        let callees: Vec<_> = g.callees("main").iter().map(|(n, e)| (g.node(*n).path.clone(), e.confidence)).collect();
        assert_eq!(callees, vec![("a.py".to_string(), 0.5), ("b.py".to_string(), 0.5)]);
    }

    #[test]
    fn rank_favours_the_seed_and_its_neighbours() {
        let g = graph(&[
            ("a.py", "def seed():\n    near()\n\ndef near():\n    pass\n"),
            ("b.py", "def far():\n    pass\n\ndef other():\n    far()\n"),
        ]);
        let seed = g.find_symbol("seed", false)[0];
        let ranked = g.rank(&[(seed, 1.0)], 0.85, 30);
        let names: Vec<_> = ranked.iter().map(|(n, _)| g.node(*n).name.as_str()).collect();
        assert_eq!(&names[..3], &["seed", "a.py", "near"][..]);
        assert!(!names.contains(&"far"), "b.py is not connected to the seed");
        let total: f64 = ranked.iter().map(|r| r.1).sum();
        assert!((total - 1.0).abs() < 1e-9, "scores are a probability distribution: {total}");
        assert!(g.rank(&[], 0.85, 30).is_empty());
        let near: Vec<_> = g.neighbourhood(&[seed], 1).into_iter().map(|(n, d)| (g.node(n).name.clone(), d)).collect();
        assert_eq!(near, vec![("seed".into(), 0), ("a.py".into(), 1), ("near".into(), 1)]);
        assert_eq!(g.neighbourhood(&[seed], 0).len(), 1);
        assert!(g.neighbourhood(&[seed], 5).iter().all(|(n, _)| g.node(*n).path == "a.py"));
    }

    #[test]
    fn names_with_too_many_definitions_are_not_linked() {
        let mut files: Vec<(String, String)> = (0..=MAX_CANDIDATES).map(|i| (format!("m{i}.py"), "def get():\n    pass\n".to_string())).collect();
        files.push(("main.py".into(), "def main():\n    get()\n".into()));
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let g = graph(&refs);
        assert!(g.callees("main").is_empty());
        assert_eq!(g.find_symbol("get", false).len(), MAX_CANDIDATES + 1);
    }

    #[test]
    fn incremental_updates_equal_a_fresh_build() {
        use std::collections::BTreeMap;
        const NAMES: [&str; 5] = ["load", "save", "run", "fetch", "Repo"];
        for seed in 1..=60u64 {
            let mut next = crate::context::test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let source = |next: &mut dyn FnMut(u64) -> u64| {
                let mut text = String::new();
                for _ in 0..next(4) {
                    let name = NAMES[next(5) as usize];
                    if name == "Repo" {
                        text.push_str(&format!("class Repo:\n    def {}(self):\n        {}()\n", NAMES[next(4) as usize], NAMES[next(5) as usize]));
                    } else {
                        text.push_str(&format!("def {name}():\n    {}()\n    {}()\n", NAMES[next(5) as usize], NAMES[next(5) as usize]));
                    }
                }
                text.push_str(&format!("{}()\n", NAMES[next(5) as usize]));
                text
            };
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            for i in 0..8 {
                files.insert(format!("f{i}.py"), source(&mut next));
            }
            let parse = |files: &BTreeMap<String, String>| -> Vec<(String, FileSymbols)> {
                files.iter().map(|(p, s)| (p.clone(), extract(Language::Python, s.as_bytes()))).collect()
            };
            let mut g = KnowledgeGraph::from_files(parse(&files));
            for step in 0..12 {
                let path = format!("f{}.py", next(10)); // f8, f9 are new files
                if next(4) == 0 {
                    files.remove(&path);
                    g.remove_file(&path);
                } else {
                    let text = source(&mut next);
                    g.update_file(&path, extract(Language::Python, text.as_bytes()));
                    files.insert(path.clone(), text);
                }
                let fresh = KnowledgeGraph::from_files(parse(&files));
                assert_eq!(g.edge_list(), fresh.edge_list(), "seed {seed}, step {step}, after changing {path}");
                assert_eq!((g.node_count(), g.file_count()), (fresh.node_count(), fresh.file_count()));
                let mut a = g.find_symbol("", true).into_iter().map(|n| g.node(n).clone()).collect::<Vec<_>>();
                let mut b = fresh.find_symbol("", true).into_iter().map(|n| fresh.node(n).clone()).collect::<Vec<_>>();
                a.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
                b.sort_by(|x, y| (&x.path, x.line, &x.name).cmp(&(&y.path, y.line, &y.name)));
                assert_eq!(a, b);
            }
        }
    }
}
