//! The graph's data: node and edge kinds, nodes, edges, and a file's links as saved.

use std::sync::Arc;

use super::extract::{DefKind, FileSymbols, Language, RefKind};
use super::store::Ref;
use crate::intern::Interner;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    File,
    Function,
    Class,
    Variable,
    Import,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Function => "function",
            NodeKind::Class => "class",
            NodeKind::Variable => "variable",
            NodeKind::Import => "import",
        }
    }

    pub(super) fn of(kind: DefKind) -> NodeKind {
        match kind {
            DefKind::Function => NodeKind::Function,
            DefKind::Class => NodeKind::Class,
            DefKind::Variable => NodeKind::Variable,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The symbol's name; a file's is its path, an import's its module as written.
    pub name: Box<str>,
    /// Shared by every node of the file (one allocation a file, not a node).
    pub path: Arc<str>,
    pub language: Language,
    /// 1-based (u32, as tree-sitter counts rows).
    pub line: u32,
    pub end_line: u32,
    /// A definition's first line; an import's statement.
    pub signature: Box<str>,
    /// An import's names (empty for other nodes).
    pub items: Box<[Box<str>]>,
    /// A definition's `Definition::owner`, by its id in the graph's names
    /// (`NO_OWNER`: none). An id, not a string: it fits in the node's padding.
    pub(super) owner: u32,
}

/// `Node::owner` of a node without one.
pub(super) const NO_OWNER: u32 = u32::MAX;

/// The confidence of every contains edge.
pub(super) const CONTAINS_CONFIDENCE: f32 = 1.0;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum EdgeKind {
    /// File or class -> definition; file -> import.
    Contains,
    /// Function (or file, at top level) -> function or class called.
    Calls,
    /// Import -> file it resolves to.
    Imports,
    /// Class -> base class, interface, embedded struct, supertrait.
    Inherits,
    /// Definition -> class named in a type; import -> definition it imports.
    References,
    /// Definition -> variable it reads or writes.
    Uses,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Calls => "calls",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::References => "references",
            EdgeKind::Uses => "uses",
        }
    }

    pub(super) fn of(kind: RefKind) -> EdgeKind {
        match kind {
            RefKind::Call => EdgeKind::Calls,
            RefKind::Inherit => EdgeKind::Inherits,
            RefKind::Type | RefKind::Item => EdgeKind::References,
            RefKind::Use => EdgeKind::Uses,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub kind: EdgeKind,
    /// 1 for a unique target; 1/n when a reference's name matches n definitions.
    pub confidence: f32,
    /// Line of the reference, import or contained definition (u32: an edge is
    /// 16 bytes, not 24).
    pub line: u32,
    /// Index of the reference in its file's `references`; `u32::MAX` for Contains and Imports.
    pub(super) reference: u32,
}

/// A line number as an edge holds it (saturating: no file the graph reads has
/// 4 billion lines).
pub(super) fn line32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// A file's linking as saved, so loading does not resolve and link again. Nodes are
/// named so that they survive renumbering: a file by its position in
/// `KnowledgeGraph::files`, a node by its position in its file (0 the file, then
/// its definitions, then its imports).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Links {
    /// The files each import resolves to.
    pub(super) resolved: Vec<Vec<u32>>,
    /// The files in scope.
    pub(super) scope: Vec<u32>,
    /// The edges out of the file's nodes other than Contains.
    pub(super) edges: Vec<LinkedEdge>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct LinkedEdge {
    pub(super) from: u32,
    pub(super) to_file: u32,
    pub(super) to: u32,
    pub(super) kind: EdgeKind,
    pub(super) confidence: f32,
    pub(super) line: u32,
    pub(super) reference: u32,
}

/// A file as saved: its path, symbols and links, the names its definitions and
/// references use given by their ids in the graph's names (`SavedGraph::names`):
/// read back, reference names are neither allocated one by one nor looked up
/// again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedFile {
    pub path: String,
    /// Its symbols but for the names: its definitions' are empty (`definitions`
    /// names them) and its references are in `references`.
    pub symbols: FileSymbols,
    /// The name of each definition, by id.
    pub(super) definitions: Vec<u32>,
    /// As `FileSymbols::references` (sorted by name), each name by id.
    pub(super) references: Vec<Ref>,
    pub links: Links,
}

/// A graph as saved: every name its files use, each once, and the files.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedGraph {
    pub names: Interner,
    pub files: Vec<SavedFile>,
}
