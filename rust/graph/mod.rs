//! Semantic memory (seed 002): the codebase as a graph. Plain Rust, no Python.

mod extract;
mod link;
mod model;
mod modules;
mod persist;
mod project;
mod query;
mod rank;
mod read;
mod scan;
mod store;

pub use extract::{
    extract, parse_tree, DefKind, Definition, FileSymbols, Import, Language, Origin, Receiver,
    RefKind, Reference,
};
pub use link::MAX_CANDIDATES;
pub use model::{Edge, EdgeKind, Links, Node, NodeKind, SavedFile};
pub use persist::{corrupt, load, save, Saved, FORMAT_VERSION};
pub use petgraph::stable_graph::NodeIndex;
pub use petgraph::Direction;
pub use project::{canonical_root, relative_to, Project, Remark, Scan, State, Updated, PARTIAL};
pub use query::{reference_kinds, split_qualified, REFERENCE_KINDS};
pub use read::{read_project_file, reason as unread_reason};
pub use scan::{
    discover, parse, unsupported_language, Discovered, Progress, Source, UNSUPPORTED, VENDORED,
};
pub use store::KnowledgeGraph;
