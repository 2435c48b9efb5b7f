//! Semantic memory: the codebase as a graph. Plain Rust, no Python.

mod adjacency;
mod documents;
mod extract;
mod link;
mod look;
mod model;
mod modules;
mod outline;
mod persist;
mod project;
mod query;
mod rank;
mod read;
mod scan;
mod search;
mod store;
mod view;

pub use adjacency::{Direction, NodeIndex};
pub use documents::{definition_key, documents, file_key, parse_key, DEFINITION, EMBED, FILE};
pub use extract::{
    extract, extract_by_query, parse_tree, DefKind, Definition, FileSymbols, Import, Language,
    Origin, Receiver, RefKind, Reference,
};
pub use link::MAX_CANDIDATES;
pub use look::Tracked;
pub use model::{Edge, EdgeKind, Links, Node, NodeKind, SavedFile};
pub use outline::{language_of, outline, Outlined};
pub use persist::{
    corrupt, encode_chunk, load, load_with_sum, save, Saved, Writer, CHUNK, FORMAT_VERSION,
};
pub use project::{
    canonical_root, lexical_of, lexical_path, relative_to, Built, Project, ReadIndex, Remark, Scan,
    State, Updated, PARTIAL,
};
pub use query::{reference_kinds, split_qualified, Symbols, REFERENCE_KINDS};
pub use read::{read_project_file, reason as unread_reason};
pub use scan::{
    discover, parse, parse_file, parse_indexed, script_language, shebang_language,
    unsupported_language, Discovered, Parsed, ParsedFile, Phase, Progress, Source, INTERPRETERS,
    SHEBANG_BYTES, UNSUPPORTED, VENDORED,
};
pub use search::{
    is_test_path, mentioned_files, path_kind, search, Found, Hit, Level, PathKind, SearchParams,
    Searchable,
};
pub use store::{KnowledgeGraph, ViewFile};
pub use view::{view_path, GraphView, SavedSearch, ViewNode};
