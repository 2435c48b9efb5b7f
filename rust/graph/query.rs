//! Queries: what a file contains, definitions by name (exact, prefix, fuzzy), the
//! edges into and out of them, and the files a file depends on.

use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;

use super::model::{Edge, EdgeKind, NodeKind};
use super::store::KnowledgeGraph;

impl KnowledgeGraph {
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
}
