//! The knowledge graph: files, functions, classes and variables as nodes; Contains and
//! Calls edges, in a petgraph StableGraph with name and path indexes.

use std::collections::HashMap;

use petgraph::stable_graph::{NodeIndex, StableGraph};
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
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
}

/// The most definitions one call is linked to (see `KnowledgeGraph::from_files`).
pub const MAX_CANDIDATES: usize = 5;

#[derive(Debug, Default, Clone)]
pub struct KnowledgeGraph {
    graph: StableGraph<Node, Edge>,
    files: HashMap<String, NodeIndex>,
    names: HashMap<String, Vec<NodeIndex>>,
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
        let mut per_file = Vec::with_capacity(files.len());
        for (path, symbols) in files {
            let file = g.graph.add_node(Node {
                kind: NodeKind::File,
                name: path.clone(),
                path: path.clone(),
                language: symbols.language,
                line: 1,
                end_line: symbols.definitions.iter().map(|d| d.end_line).max().unwrap_or(1),
                signature: String::new(),
            });
            g.files.insert(path.clone(), file);
            let mut ids: Vec<NodeIndex> = Vec::with_capacity(symbols.definitions.len());
            for (i, def) in symbols.definitions.iter().enumerate() {
                let kind = match def.kind {
                    DefKind::Function => NodeKind::Function,
                    DefKind::Class => NodeKind::Class,
                    DefKind::Variable => NodeKind::Variable,
                };
                let id = g.graph.add_node(Node {
                    kind,
                    name: def.name.clone(),
                    path: path.clone(),
                    language: symbols.language,
                    line: def.line,
                    end_line: def.end_line,
                    signature: def.signature.clone(),
                });
                // Contained by the innermost enclosing class or function, else the file.
                let parent = (0..i).rev().find(|&j| symbols.definitions[j].contains(def)).map_or(file, |j| ids[j]);
                g.graph.add_edge(parent, id, Edge { kind: EdgeKind::Contains, confidence: 1.0, line: def.line });
                g.names.entry(def.name.clone()).or_default().push(id);
                ids.push(id);
            }
            per_file.push((file, ids, symbols.calls));
        }
        for (file, ids, calls) in per_file {
            for call in calls {
                let caller = call.caller.map_or(file, |i| ids[i]);
                let Some(candidates) = g.names.get(&call.name) else { continue };
                let callable: Vec<NodeIndex> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| matches!(g.graph[c].kind, NodeKind::Function | NodeKind::Class))
                    .collect();
                let same_file: Vec<NodeIndex> = callable.iter().copied().filter(|&c| g.graph[c].path == g.graph[caller].path).collect();
                let targets = if same_file.is_empty() { callable } else { same_file };
                if targets.len() > MAX_CANDIDATES {
                    continue;
                }
                let confidence = 1.0 / targets.len().max(1) as f32;
                for target in targets {
                    g.graph.add_edge(caller, target, Edge { kind: EdgeKind::Calls, confidence, line: call.line });
                }
            }
        }
        g
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
        let file = *self.files.get(path)?;
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

    /// (source, kind, target) of every edge, as text, sorted: for exact tests.
    pub fn edge_list(&self) -> Vec<(String, EdgeKind, String)> {
        let label = |n: NodeIndex| {
            let node = &self.graph[n];
            if node.kind == NodeKind::File { node.path.clone() } else { format!("{}:{}", node.path, node.name) }
        };
        let mut out: Vec<_> = (&self.graph).edge_references().map(|e| (label(e.source()), e.weight().kind, label(e.target()))).collect();
        out.sort_by(|a, b| (&a.0, a.1 as u8, &a.2).cmp(&(&b.0, b.1 as u8, &b.2)));
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
        assert_eq!(
            g.edge_list(),
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
    fn names_with_too_many_definitions_are_not_linked() {
        let mut files: Vec<(String, String)> = (0..=MAX_CANDIDATES).map(|i| (format!("m{i}.py"), "def get():\n    pass\n".to_string())).collect();
        files.push(("main.py".into(), "def main():\n    get()\n".into()));
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let g = graph(&refs);
        assert!(g.callees("main").is_empty());
        assert_eq!(g.find_symbol("get", false).len(), MAX_CANDIDATES + 1);
    }
}
