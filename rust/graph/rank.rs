//! Ranking: personalized PageRank over the graph, and the neighbourhood of nodes.

use super::adjacency::{Direction, NodeIndex};
use super::query::Symbols;
use super::store::KnowledgeGraph;
use crate::error::{invalid, Result};

impl KnowledgeGraph {
    /// Highest score first; equal scores by path, then line.
    fn sort_ranked(&self, ranked: &mut [(NodeIndex, f64)]) {
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| self.tie_order(a.0, b.0)));
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
        let edges: Vec<(usize, usize, f64)> = self
            .graph
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
        self.sort_ranked(&mut ranked);
        ranked
    }

    /// Personalized PageRank by forward push: see [`rank_local`].
    pub fn rank_local(
        &self,
        seeds: &[(NodeIndex, f64)],
        damping: f64,
        epsilon: f64,
        max_pushes: usize,
    ) -> Vec<(NodeIndex, f64)> {
        rank_local(self, seeds, damping, epsilon, max_pushes)
    }

    /// The `limit` best nodes by `rank`, seeded by the definitions each of `names`
    /// names (see `definitions`; a name's weight shared among its definitions: one
    /// defined once says more than one defined in fifty places) and by the files in
    /// `files` (unknown ones are ignored). `damping` must be in [0, 1).
    pub fn rank_named(
        &self,
        names: &[String],
        files: &[String],
        limit: usize,
        damping: f64,
        iterations: usize,
    ) -> Result<Vec<(NodeIndex, f64)>> {
        if !(0.0..1.0).contains(&damping) {
            return Err(invalid(
                "damping",
                format!("must be in [0, 1), got {damping}"),
            ));
        }
        let mut seeds: Vec<(NodeIndex, f64)> = Vec::new();
        for name in names {
            let defs = self.find_symbol(name, false);
            let weight = 1.0 / defs.len().max(1) as f64;
            seeds.extend(defs.into_iter().map(|id| (id, weight)));
        }
        seeds.extend(
            files
                .iter()
                .filter_map(|f| self.file_node(f))
                .map(|id| (id, 1.0)),
        );
        let mut ranked = self.rank(&seeds, damping, iterations);
        ranked.truncate(limit);
        Ok(ranked)
    }
}

/// A graph a local walk runs over: the knowledge graph, or a saved graph read in
/// place (`view::GraphView`). Both list a node's edges in the same order for the
/// same graph, so the walk's sums, and its result, are the same to the bit.
pub trait Walk {
    /// One past the highest node index.
    fn node_bound(&self) -> usize;
    fn contains_node(&self, node: NodeIndex) -> bool;
    /// Each edge of `node` as (the node at its other end, its confidence): its
    /// outgoing edges, most recently added first, then its incoming ones.
    fn for_each_edge(&self, node: NodeIndex, each: impl FnMut(NodeIndex, f32));
    /// The order of equal scores: by path, then line.
    fn tie_order(&self, a: NodeIndex, b: NodeIndex) -> std::cmp::Ordering;
}

impl Walk for KnowledgeGraph {
    fn node_bound(&self) -> usize {
        self.graph.node_bound()
    }

    fn contains_node(&self, node: NodeIndex) -> bool {
        self.graph.contains_node(node)
    }

    fn for_each_edge(&self, node: NodeIndex, mut each: impl FnMut(NodeIndex, f32)) {
        for e in self.graph.edges_directed(node, Direction::Outgoing) {
            each(e.target(), e.weight().confidence);
        }
        for e in self.graph.edges_directed(node, Direction::Incoming) {
            each(e.source(), e.weight().confidence);
        }
    }

    fn tie_order(&self, a: NodeIndex, b: NodeIndex) -> std::cmp::Ordering {
        let (a, b) = (&self.graph[a], &self.graph[b]);
        (&a.path, a.line).cmp(&(&b.path, b.line))
    }
}

/// Personalized PageRank by forward push (Andersen, Chung and Lang, 2006): the
/// same random walk as `KnowledgeGraph::rank`, but only the part of the graph the
/// walk reaches with weight above `epsilon` is visited, so a query costs about
/// `1 / (epsilon * (1 - damping))` edge visits whatever the graph's size, and at
/// most `max_pushes` pushes. A node is pushed while its residual exceeds
/// `epsilon` times its weighted degree. Returns nodes by score, highest first,
/// ties by path and line.
pub fn rank_local(
    graph: &impl Walk,
    seeds: &[(NodeIndex, f64)],
    damping: f64,
    epsilon: f64,
    max_pushes: usize,
) -> Vec<(NodeIndex, f64)> {
    let total: f64 = seeds.iter().filter(|s| s.1 > 0.0).map(|s| s.1).sum();
    if !(total > 0.0 && total.is_finite()) {
        return Vec::new();
    }
    // Dense per-node state (a few vectors of the graph's size: cheaper than
    // hashing on every edge visited).
    let n = graph.node_bound();
    let mut degree = vec![f64::NAN; n];
    let mut residual = vec![0.0f64; n];
    let mut score = vec![0.0f64; n];
    let mut queued = vec![false; n];
    let mut touched: Vec<usize> = Vec::new();
    // Pushed in rounds: every node above the threshold at the start of a round
    // is pushed with the residual it had then, so the result does not depend
    // on the order nodes and edges are numbered in (a graph built fresh and one
    // loaded or updated walk alike).
    let mut frontier: Vec<NodeIndex> = Vec::new();
    for &(node, weight) in seeds {
        if weight > 0.0 && graph.contains_node(node) {
            let i = node.index();
            residual[i] += weight / total;
            if !queued[i] {
                queued[i] = true;
                frontier.push(node);
            }
        }
    }
    let mut pushes = 0;
    let mut round: Vec<(NodeIndex, f64, f64)> = Vec::new();
    while !frontier.is_empty() && pushes < max_pushes {
        round.clear();
        for node in frontier.drain(..) {
            let i = node.index();
            queued[i] = false;
            if degree[i].is_nan() {
                let mut sum = 0.0;
                graph.for_each_edge(node, |_, confidence| sum += f64::from(confidence));
                degree[i] = sum;
            }
            let (r, weight) = (residual[i], degree[i]);
            if r > epsilon * weight.max(1.0) && pushes < max_pushes {
                pushes += 1;
                residual[i] = 0.0;
                round.push((node, r, weight));
            }
        }
        for &(node, r, weight) in &round {
            let i = node.index();
            if score[i] == 0.0 {
                touched.push(i);
            }
            if weight == 0.0 {
                // Nowhere to go: the walk stays (as `rank` restarts, up to scale).
                score[i] += r;
                continue;
            }
            score[i] += (1.0 - damping) * r;
            let spread = damping * r / weight;
            graph.for_each_edge(node, |next, confidence| {
                let j = next.index();
                residual[j] += spread * f64::from(confidence);
                if residual[j] > epsilon && !queued[j] {
                    queued[j] = true;
                    frontier.push(next);
                }
            });
        }
    }
    let mut ranked: Vec<(NodeIndex, f64)> = touched
        .into_iter()
        .filter(|&i| score[i] > 0.0)
        .map(|i| (NodeIndex::new(i), score[i]))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| graph.tie_order(a.0, b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::super::store::tests::graph;
    use crate::graph::Symbols;

    #[test]
    fn rank_favours_the_seed_and_its_neighbours() {
        let g = graph(&[
            ("a.py", "def seed():\n    near()\n\ndef near():\n    pass\n"),
            ("b.py", "def far():\n    pass\n\ndef other():\n    far()\n"),
        ]);
        let seed = g.find_symbol("seed", false)[0];
        let ranked = g.rank(&[(seed, 1.0)], 0.85, 30);
        let names: Vec<_> = ranked.iter().map(|(n, _)| &*g.node(*n).name).collect();
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
            .all(|(n, _)| &*g.node(*n).path == "a.py"));
    }
}
