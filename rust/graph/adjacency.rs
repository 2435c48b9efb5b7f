//! The graph's storage: nodes and directed edges in numbered slots, each edge linked
//! into its source's outgoing and its target's incoming list both ways. Removing an
//! edge costs O(1), and removing a node O(its own edges), whatever the in-degree of
//! what it points at: with singly linked lists, removing an edge walks its target's
//! incoming list to find the edge before it, and a function that half the project
//! calls holds a list as long as its callers.
//!
//! Indexes stay valid until their node or edge is removed; a freed slot is reused
//! last-freed first; every list is most recent first, and a node's removal takes its
//! outgoing edges, then its incoming, each most recent first. What iterates edges
//! (saving a file's links, the float sums of PageRank over `edge_references`,
//! queries) follows these orders, so they are part of what the graph gives; a test
//! holds them to a naive model.

use std::ops::{Index, IndexMut};

/// A node's slot. Valid until the node is removed (then reused by a later node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIndex(u32);

impl NodeIndex {
    #[inline]
    pub fn new(index: usize) -> Self {
        debug_assert!(index <= u32::MAX as usize, "node index {index} over u32");
        NodeIndex(index as u32)
    }

    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// No node: a file's parent, a vacant edge slot's ends.
    #[inline]
    pub const fn end() -> Self {
        NodeIndex(END)
    }
}

/// Which of a node's edges: those out of it or those into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    Outgoing,
    Incoming,
}

/// No edge, no node (the end of a list).
const END: u32 = u32::MAX;

/// In `first[1]` of a vacant node slot (no edge has this index).
const VACANT: u32 = u32::MAX - 1;

/// An edge's slot. Valid until the edge is removed (then reused by a later edge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeId(u32);

impl EdgeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Debug, Clone)]
struct EdgeSlot<E> {
    /// None: a vacant slot.
    weight: Option<E>,
    /// Source and target.
    ends: [NodeIndex; 2],
    /// The next edge in the source's outgoing list and in the target's incoming
    /// list; in a vacant slot, `next[0]` is the next vacant slot.
    next: [u32; 2],
}

/// A directed multigraph (parallel edges and self-loops allowed) whose node and
/// edge indexes stay valid until removed. See the module's comment.
#[derive(Debug, Clone)]
pub struct Graph<N, E> {
    /// The node slots' weights (None: a vacant slot).
    nodes: Vec<Option<N>>,
    /// The first (most recently added) edge out of each node and into it; in a
    /// vacant slot, the next vacant slot and `VACANT`. Apart from the weights, so
    /// that adding and walking edges reads 8 bytes a node, not a whole slot.
    first: Vec<[u32; 2]>,
    edges: Vec<EdgeSlot<E>>,
    /// The previous edge in each of an edge's two lists (END at a list's head), by
    /// edge index: apart from the slots, which walking a list reads alone.
    prev: Vec<[u32; 2]>,
    /// The last node slot vacated (reused first).
    free_node: u32,
    /// The last edge slot vacated (reused first).
    free_edge: u32,
    node_count: usize,
    edge_count: usize,
}

impl<N, E> Default for Graph<N, E> {
    fn default() -> Self {
        Graph {
            nodes: Vec::new(),
            first: Vec::new(),
            edges: Vec::new(),
            prev: Vec::new(),
            free_node: END,
            free_edge: END,
            node_count: 0,
            edge_count: 0,
        }
    }
}

/// An index that fits below `VACANT` and `END`.
fn slot_index(len: usize, what: &str) -> u32 {
    u32::try_from(len)
        .ok()
        .filter(|&i| i < VACANT)
        .unwrap_or_else(|| panic!("more than 2^32 - 3 {what}"))
}

fn side(direction: Direction) -> usize {
    match direction {
        Direction::Outgoing => 0,
        Direction::Incoming => 1,
    }
}

impl<N, E> Graph<N, E> {
    /// Heap bytes of the node slots (weights and list heads), the edge slots and
    /// the back links (the weights' own allocations left out), for
    /// `KnowledgeGraph::heap_parts`.
    pub(super) fn slot_bytes(&self) -> [usize; 3] {
        use std::mem::size_of;
        [
            self.nodes.capacity() * size_of::<Option<N>>()
                + self.first.capacity() * size_of::<[u32; 2]>(),
            self.edges.capacity() * size_of::<EdgeSlot<E>>(),
            self.prev.capacity() * size_of::<[u32; 2]>(),
        ]
    }

    pub fn node_count(&self) -> usize {
        self.node_count
    }

    pub fn edge_count(&self) -> usize {
        self.edge_count
    }

    pub fn reserve_exact_nodes(&mut self, additional: usize) {
        self.nodes.reserve_exact(additional);
        self.first.reserve_exact(additional);
    }

    pub fn reserve_exact_edges(&mut self, additional: usize) {
        self.edges.reserve_exact(additional);
        self.prev.reserve_exact(additional);
    }

    /// How many nodes and edges can be added in new slots before a vector grows.
    #[cfg(test)]
    pub fn room(&self) -> (usize, usize) {
        (
            (self.nodes.capacity() - self.nodes.len())
                .min(self.first.capacity() - self.first.len()),
            (self.edges.capacity() - self.edges.len()).min(self.prev.capacity() - self.prev.len()),
        )
    }

    /// Adds a node in the last slot vacated, else a new one at the end.
    pub fn add_node(&mut self, weight: N) -> NodeIndex {
        self.node_count += 1;
        if self.free_node != END {
            let at = self.free_node as usize;
            self.free_node = self.first[at][0];
            self.nodes[at] = Some(weight);
            self.first[at] = [END; 2];
            return NodeIndex::new(at);
        }
        let at = slot_index(self.nodes.len(), "nodes");
        self.nodes.push(Some(weight));
        self.first.push([END; 2]);
        NodeIndex::new(at as usize)
    }

    /// Removes a node and its edges (outgoing, then incoming, each most recent
    /// first); None if there is no such node.
    pub fn remove_node(&mut self, node: NodeIndex) -> Option<N> {
        let weight = self.nodes.get_mut(node.index())?.take()?;
        for k in 0..2 {
            loop {
                let e = self.first[node.index()][k];
                if e == END {
                    break;
                }
                self.remove_edge(EdgeId(e));
            }
        }
        self.first[node.index()] = [self.free_node, VACANT];
        self.free_node = node.index() as u32;
        self.node_count -= 1;
        Some(weight)
    }

    pub fn contains_node(&self, node: NodeIndex) -> bool {
        self.first
            .get(node.index())
            .is_some_and(|first| first[1] != VACANT)
    }

    pub fn node_weight(&self, node: NodeIndex) -> Option<&N> {
        self.nodes.get(node.index())?.as_ref()
    }

    /// The nodes in index order.
    pub fn node_indices(&self) -> impl DoubleEndedIterator<Item = NodeIndex> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_some())
            .map(|(i, _)| NodeIndex::new(i))
    }

    /// One past the highest node index (what per-node vectors are sized by).
    pub fn node_bound(&self) -> usize {
        self.node_indices().next_back().map_or(0, |i| i.index() + 1)
    }

    /// Adds an edge from `a` to `b` in the last edge slot vacated, else a new one;
    /// it comes first in `a`'s outgoing and `b`'s incoming list. Panics if either
    /// node is missing (a bug of the caller's).
    pub fn add_edge(&mut self, a: NodeIndex, b: NodeIndex, weight: E) -> EdgeId {
        assert!(
            self.contains_node(a) && self.contains_node(b),
            "add_edge: no node {} or {}",
            a.index(),
            b.index()
        );
        let next = [self.first[a.index()][0], self.first[b.index()][1]];
        let slot = EdgeSlot {
            weight: Some(weight),
            ends: [a, b],
            next,
        };
        let at = if self.free_edge != END {
            let at = self.free_edge;
            self.free_edge = self.edges[at as usize].next[0];
            self.edges[at as usize] = slot;
            self.prev[at as usize] = [END; 2];
            at
        } else {
            let at = slot_index(self.edges.len(), "edges");
            self.edges.push(slot);
            self.prev.push([END; 2]);
            at
        };
        for (k, &n) in next.iter().enumerate() {
            if n != END {
                self.prev[n as usize][k] = at;
            }
        }
        self.first[a.index()][0] = at;
        self.first[b.index()][1] = at;
        self.edge_count += 1;
        EdgeId(at)
    }

    /// Removes an edge in O(1); None if there is no such edge.
    pub fn remove_edge(&mut self, edge: EdgeId) -> Option<E> {
        let at = edge.index();
        let slot = self.edges.get_mut(at)?;
        let weight = slot.weight.take()?;
        let (ends, next) = (slot.ends, slot.next);
        *slot = EdgeSlot {
            weight: None,
            ends: [NodeIndex::end(); 2],
            next: [self.free_edge, END],
        };
        self.free_edge = edge.0;
        let prev = std::mem::replace(&mut self.prev[at], [END; 2]);
        for k in 0..2 {
            match prev[k] {
                END => self.first[ends[k].index()][k] = next[k],
                p => self.edges[p as usize].next[k] = next[k],
            }
            if next[k] != END {
                self.prev[next[k] as usize][k] = prev[k];
            }
        }
        self.edge_count -= 1;
        Some(weight)
    }

    /// The edges out of (`Outgoing`) or into (`Incoming`) a node, most recently
    /// added first; none for a missing node.
    pub fn edges_directed(&self, node: NodeIndex, direction: Direction) -> Edges<'_, N, E> {
        let k = side(direction);
        let next = match self.first.get(node.index()) {
            Some(first) if first[1] != VACANT => first[k],
            _ => END,
        };
        Edges {
            graph: self,
            next,
            k,
        }
    }

    /// Every edge, in index order.
    pub fn edge_references(&self) -> impl Iterator<Item = EdgeRef<'_, E>> + '_ {
        self.edges.iter().enumerate().filter_map(|(i, slot)| {
            slot.weight.as_ref().map(|weight| EdgeRef {
                id: EdgeId(i as u32),
                ends: slot.ends,
                weight,
            })
        })
    }
}

impl<N, E> Index<NodeIndex> for Graph<N, E> {
    type Output = N;

    fn index(&self, node: NodeIndex) -> &N {
        self.node_weight(node)
            .unwrap_or_else(|| panic!("no node {}", node.index()))
    }
}

impl<N, E> IndexMut<NodeIndex> for Graph<N, E> {
    fn index_mut(&mut self, node: NodeIndex) -> &mut N {
        self.nodes
            .get_mut(node.index())
            .and_then(Option::as_mut)
            .unwrap_or_else(|| panic!("no node {}", node.index()))
    }
}

/// An edge: its slot, ends and weight.
#[derive(Debug, Clone, Copy)]
pub struct EdgeRef<'a, E> {
    id: EdgeId,
    ends: [NodeIndex; 2],
    weight: &'a E,
}

impl<'a, E> EdgeRef<'a, E> {
    pub fn id(&self) -> EdgeId {
        self.id
    }
    pub fn source(&self) -> NodeIndex {
        self.ends[0]
    }
    pub fn target(&self) -> NodeIndex {
        self.ends[1]
    }
    pub fn weight(&self) -> &'a E {
        self.weight
    }
}

/// A walk down one of a node's two lists.
pub struct Edges<'a, N, E> {
    graph: &'a Graph<N, E>,
    next: u32,
    /// 0: outgoing, 1: incoming.
    k: usize,
}

impl<'a, N, E> Iterator for Edges<'a, N, E> {
    type Item = EdgeRef<'a, E>;

    fn next(&mut self) -> Option<EdgeRef<'a, E>> {
        if self.next == END {
            return None;
        }
        let id = self.next;
        let slot = &self.graph.edges[id as usize];
        self.next = slot.next[self.k];
        Some(EdgeRef {
            id: EdgeId(id),
            ends: slot.ends,
            weight: slot.weight.as_ref().expect("a listed edge is there"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Direction::{Incoming, Outgoing};

    type G = Graph<char, u32>;

    /// (edge weight, source, target) of a node's list, in order.
    fn list(g: &G, n: usize, d: Direction) -> Vec<(u32, usize, usize)> {
        g.edges_directed(NodeIndex::new(n), d)
            .map(|e| (*e.weight(), e.source().index(), e.target().index()))
            .collect()
    }

    fn n(i: usize) -> NodeIndex {
        NodeIndex::new(i)
    }

    #[test]
    fn lists_are_newest_first_and_removal_keeps_the_rest_in_order() {
        let mut g = G::default();
        let (a, b, c) = (g.add_node('a'), g.add_node('b'), g.add_node('c'));
        assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
        let e1 = g.add_edge(a, c, 1);
        let e2 = g.add_edge(b, c, 2);
        let e3 = g.add_edge(a, c, 3); // parallel to e1
        let e4 = g.add_edge(c, c, 4); // self-loop
        assert_eq!(
            [e1, e2, e3, e4].map(EdgeId::index),
            [0, 1, 2, 3],
            "new slots at the end"
        );
        assert_eq!(list(&g, 0, Outgoing), [(3, 0, 2), (1, 0, 2)]);
        assert_eq!(
            list(&g, 2, Incoming),
            [(4, 2, 2), (3, 0, 2), (2, 1, 2), (1, 0, 2)]
        );
        assert_eq!(list(&g, 2, Outgoing), [(4, 2, 2)]);
        // From the middle of c's incoming list: the rest keep their order.
        assert_eq!(g.remove_edge(e2), Some(2));
        assert_eq!(g.remove_edge(e2), None);
        assert_eq!(list(&g, 2, Incoming), [(4, 2, 2), (3, 0, 2), (1, 0, 2)]);
        assert_eq!(list(&g, 1, Outgoing), []);
        // The head and the tail.
        assert_eq!(g.remove_edge(e4), Some(4));
        assert_eq!(g.remove_edge(e1), Some(1));
        assert_eq!(list(&g, 2, Incoming), [(3, 0, 2)]);
        assert_eq!(list(&g, 2, Outgoing), []);
        assert_eq!(list(&g, 0, Outgoing), [(3, 0, 2)]);
        assert_eq!(g.edge_count(), 1);
        // Freed slots are reused last-freed first: e1's, then e4's, then e2's.
        assert_eq!(g.add_edge(b, a, 5).index(), 0);
        assert_eq!(g.add_edge(b, a, 6).index(), 3);
        assert_eq!(g.add_edge(b, a, 7).index(), 1);
        assert_eq!(g.add_edge(b, a, 8).index(), 4);
        assert_eq!(
            list(&g, 0, Incoming),
            [(8, 1, 0), (7, 1, 0), (6, 1, 0), (5, 1, 0)]
        );
        let all: Vec<_> = g
            .edge_references()
            .map(|e| (e.id().index(), *e.weight()))
            .collect();
        assert_eq!(all, [(0, 5), (1, 7), (2, 3), (3, 6), (4, 8)]);
    }

    #[test]
    fn removing_a_node_takes_its_edges_and_frees_its_slot() {
        let mut g = G::default();
        let (a, b, c) = (g.add_node('a'), g.add_node('b'), g.add_node('c'));
        g.add_edge(a, b, 1);
        g.add_edge(b, c, 2);
        g.add_edge(c, b, 3);
        g.add_edge(b, b, 4);
        g.add_edge(a, c, 5);
        assert_eq!(g.remove_node(b), Some('b'));
        assert_eq!(g.remove_node(b), None);
        assert!(!g.contains_node(b));
        assert_eq!((g.node_count(), g.edge_count()), (2, 1));
        assert_eq!(list(&g, 0, Outgoing), [(5, 0, 2)]);
        assert_eq!(list(&g, 2, Incoming), [(5, 0, 2)]);
        assert_eq!(list(&g, 2, Outgoing), []);
        assert_eq!(list(&g, 1, Outgoing), [], "a removed node has no lists");
        assert_eq!(g.node_indices().collect::<Vec<_>>(), [a, c]);
        assert_eq!(g.node_bound(), 3);
        // Its outgoing edges went first (b->b, b->c), then its incoming (c->b,
        // a->b), each most recent first: the slots come back in reverse.
        let reused: Vec<usize> = (0..4).map(|w| g.add_edge(a, a, w).index()).collect();
        assert_eq!(reused, [0, 2, 1, 3]);
        assert_eq!(g.add_node('d'), b, "the vacated node slot is reused");
        assert_eq!(g[b], 'd');
        g.remove_node(c);
        assert_eq!(g.node_bound(), 2);
        g.remove_node(b);
        g.remove_node(a);
        assert_eq!((g.node_bound(), g.node_count(), g.edge_count()), (0, 0, 0));
        assert_eq!(g.add_node('e'), a, "last vacated first");
    }

    /// What a graph does, one step.
    #[derive(Debug, Clone)]
    enum Op {
        AddNode,
        /// Of the live nodes, by position (modulo their number).
        RemoveNode(usize),
        AddEdge(usize, usize),
        /// Of the live edges, by position.
        RemoveEdge(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => Just(Op::AddNode),
            1 => any::<usize>().prop_map(Op::RemoveNode),
            6 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::AddEdge(a, b)),
            3 => any::<usize>().prop_map(Op::RemoveEdge),
        ]
    }

    /// The naive model: slots that are Some or None, freed slots on a stack, and a
    /// list is the edges with that end, latest added first.
    #[derive(Default)]
    struct Model {
        nodes: Vec<Option<char>>,
        free_nodes: Vec<usize>,
        /// (source, target, weight, when added).
        edges: Vec<Option<(usize, usize, u32, usize)>>,
        free_edges: Vec<usize>,
        clock: usize,
    }

    impl Model {
        fn add_node(&mut self, w: char) -> usize {
            match self.free_nodes.pop() {
                Some(i) => {
                    self.nodes[i] = Some(w);
                    i
                }
                None => {
                    self.nodes.push(Some(w));
                    self.nodes.len() - 1
                }
            }
        }
        fn list(&self, n: usize, k: usize) -> Vec<(u32, usize, usize)> {
            let mut out: Vec<_> = self
                .edges
                .iter()
                .flatten()
                .filter(|e| if k == 0 { e.0 == n } else { e.1 == n })
                .collect();
            out.sort_by_key(|e| std::cmp::Reverse(e.3));
            out.iter().map(|e| (e.2, e.0, e.1)).collect()
        }
        fn add_edge(&mut self, a: usize, b: usize, w: u32) -> usize {
            self.clock += 1;
            let e = Some((a, b, w, self.clock));
            match self.free_edges.pop() {
                Some(i) => {
                    self.edges[i] = e;
                    i
                }
                None => {
                    self.edges.push(e);
                    self.edges.len() - 1
                }
            }
        }
        fn remove_edge(&mut self, i: usize) {
            self.edges[i] = None;
            self.free_edges.push(i);
        }
        fn remove_node(&mut self, n: usize) {
            // Outgoing then incoming, each latest first.
            for k in 0..2 {
                let mut doomed: Vec<(usize, usize)> = self
                    .edges
                    .iter()
                    .enumerate()
                    .filter_map(|(i, e)| e.map(|e| (i, e)))
                    .filter(|(_, e)| if k == 0 { e.0 == n } else { e.1 == n })
                    .map(|(i, e)| (i, e.3))
                    .collect();
                doomed.sort_by_key(|d| std::cmp::Reverse(d.1));
                for (i, _) in doomed {
                    self.remove_edge(i);
                }
            }
            self.nodes[n] = None;
            self.free_nodes.push(n);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// After any sequence of additions and removals: the same indexes handed
        /// out, the same lists in the same order, the same edges in index order as
        /// the naive model.
        #[test]
        fn equals_a_naive_model(ops in prop::collection::vec(op(), 1..120)) {
            let mut g = G::default();
            let mut m = Model::default();
            let mut weight = 0u32;
            for op in ops {
                let live_nodes: Vec<usize> = (0..m.nodes.len()).filter(|&i| m.nodes[i].is_some()).collect();
                let live_edges: Vec<usize> = (0..m.edges.len()).filter(|&i| m.edges[i].is_some()).collect();
                match op {
                    Op::AddNode => {
                        let w = char::from(b'a' + (weight % 26) as u8);
                        weight += 1;
                        let i = m.add_node(w);
                        prop_assert_eq!(g.add_node(w).index(), i);
                    }
                    Op::RemoveNode(x) if !live_nodes.is_empty() => {
                        let i = live_nodes[x % live_nodes.len()];
                        let w = m.nodes[i];
                        m.remove_node(i);
                        prop_assert_eq!(g.remove_node(n(i)), w);
                    }
                    Op::AddEdge(a, b) if !live_nodes.is_empty() => {
                        let (a, b) = (live_nodes[a % live_nodes.len()], live_nodes[b % live_nodes.len()]);
                        weight += 1;
                        let i = m.add_edge(a, b, weight);
                        prop_assert_eq!(g.add_edge(n(a), n(b), weight).index(), i);
                    }
                    Op::RemoveEdge(x) if !live_edges.is_empty() => {
                        let i = live_edges[x % live_edges.len()];
                        let w = m.edges[i].map(|e| e.2);
                        m.remove_edge(i);
                        prop_assert_eq!(g.remove_edge(EdgeId(i as u32)), w);
                    }
                    _ => {}
                }
                let live: Vec<NodeIndex> = (0..m.nodes.len()).filter(|&i| m.nodes[i].is_some()).map(n).collect();
                prop_assert_eq!(g.node_count(), live.len());
                prop_assert_eq!(g.edge_count(), m.edges.iter().flatten().count());
                prop_assert_eq!(g.node_bound(), live.last().map_or(0, |i| i.index() + 1));
                prop_assert_eq!(g.node_indices().collect::<Vec<_>>(), live);
                for i in 0..m.nodes.len() {
                    prop_assert_eq!(g.node_weight(n(i)), m.nodes[i].as_ref());
                    for (k, d) in [Outgoing, Incoming].into_iter().enumerate() {
                        let expected = if m.nodes[i].is_some() { m.list(i, k) } else { vec![] };
                        prop_assert_eq!(list(&g, i, d), expected);
                    }
                }
                let ours: Vec<_> = g
                    .edge_references()
                    .map(|e| (e.id().index(), e.source().index(), e.target().index(), *e.weight()))
                    .collect();
                let model: Vec<_> = m
                    .edges
                    .iter()
                    .enumerate()
                    .filter_map(|(i, e)| e.map(|e| (i, e.0, e.1, e.2)))
                    .collect();
                prop_assert_eq!(ours, model);
            }
        }
    }
}
