//! Semantic memory (seed 002): the codebase as a graph. Plain Rust, no Python.

mod extract;
mod scan;
mod store;

pub use extract::{extract, CallSite, DefKind, Definition, FileSymbols, Language};
pub use scan::{discover, parse, Source, VENDORED};
pub use store::{Edge, EdgeKind, KnowledgeGraph, Node, NodeKind};
pub use petgraph::stable_graph::NodeIndex;
