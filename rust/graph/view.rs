//! A saved graph read in place: what a code search asks of the graph (its files,
//! nodes and edges), written beside the graph file at each save (`graph.view`
//! beside `graph.bin`) in a layout searched where it lies, mapped, so that a
//! process's first search does not wait for the graph's load. The nodes are
//! numbered as a load of the graph file numbers them and each node's edges are
//! listed in the order the loaded graph lists them, so a search of the view and
//! one of the loaded graph give the same hits and scores, to the bit.
//!
//! Layout (little-endian): the header (`Header`: magic `AIRVIEW1`, format
//! version (u32), a reserved u32, the checksum of the graph file it was written
//! with, then the counts and where each section begins, as u64), then the
//! sections: the files by path (`FILE_RECORD` bytes each: the number of the
//! file's node, its number of nodes (the file's, its definitions', its imports',
//! numbered in that order), of definitions, the length of its path (u32 each)
//! and where the path is (u64)), then the paths; the nodes' records (`NODE_FIXED`
//! bytes: the node's file, kind (u8), language (u8), two zeros, line and end
//! line (u32), the lengths of its name, signature and scope and its number of
//! items (u32), then those texts and each item as its length (u32) and text);
//! where each record begins ((nodes + 1) × u64); where each node's outgoing edges
//! begin, counted in edges ((nodes + 1) × u64), the edges (`EDGE` bytes: the
//! other end's number (u32) and the confidence (f32)), then each edge's kind and
//! line in the same order (`EDGE_KIND` bytes); the same for incoming edges; the names of definitions, each once, in order: where each one's entry
//! begins ((names + 1) × u64), then the entries (the name's length and its
//! number of definitions (u32 each), the name, and the numbers of its
//! definitions by path, line and number (u32 each)): what finding a definition
//! by name reads, in order; then the checksum of each `BLOCK` bytes of the
//! sections (u64 each). The header's `check` is the checksum of the header and of those checksums, checked
//! at open; a block is checked the first time a search reads it. Nothing is
//! trusted: every read is checked, a value out of range reads as nothing, and a
//! block that fails its checksum reads as nothing and makes the search that met it
//! an error (`GraphView::check`), never an answer with fewer or other hits.

use std::cmp::Ordering;
use std::path::Path;

use super::adjacency::{Direction, NodeIndex};
use super::documents::{definition_key, file_key, parse_key};
use super::extract::Language;
use super::model::{Edge, EdgeKind, NodeKind};
use super::persist::saved_sum;
use super::project::lexical_path;
use super::query::Symbols;
use super::rank::Walk;
use super::search::Searchable;
use std::sync::atomic::{AtomicBool, Ordering as Atomic};

use super::persist::part_sum;
use crate::error::{Error, Result};
use crate::mapped::Mapped;
use crate::retrieve::{LexicalFile, LexicalIndex};

const MAGIC: &[u8; 8] = b"AIRVIEW1";
pub const FORMAT_VERSION: u32 = 4;
pub(super) const HEADER: usize = 16 + 18 * 8;
/// The bytes of the sections under one checksum: a page, as a search reads a
/// few scattered records and edge lists, each checked when first read.
pub(super) const BLOCK: usize = 4096;
pub(super) const FILE_RECORD: usize = 4 * 4 + 8;
pub(super) const NODE_FIXED: usize = 32;
pub(super) const EDGE: usize = 8;
/// An edge's kind and line, beside it in a section of their own (what a search,
/// which reads only the other end and the confidence, does not page in): the
/// kind's number in the top `32 - LINE_BITS` bits, the line below (a line past
/// `LINE_MAX` reads as `LINE_MAX`).
pub(super) const EDGE_KIND: usize = 4;
const LINE_BITS: u32 = 29;
pub(super) const LINE_MAX: u32 = (1 << LINE_BITS) - 1;

const EDGE_KINDS: [EdgeKind; 6] = [
    EdgeKind::Contains,
    EdgeKind::Calls,
    EdgeKind::Imports,
    EdgeKind::Inherits,
    EdgeKind::References,
    EdgeKind::Uses,
];

/// An edge's kind and line as the view holds them (see `EDGE_KIND`).
pub(super) fn edge_kind_code(kind: EdgeKind, line: u32) -> u32 {
    let kind = EDGE_KINDS
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_default() as u32;
    kind << LINE_BITS | line.min(LINE_MAX)
}

/// The kind and line of `edge_kind_code`'s value; None for a kind there is none of.
fn decode_edge_kind(code: u32) -> Option<(EdgeKind, u32)> {
    let kind = *EDGE_KINDS.get((code >> LINE_BITS) as usize)?;
    Some((kind, code & LINE_MAX))
}

const KINDS: [NodeKind; 5] = [
    NodeKind::File,
    NodeKind::Function,
    NodeKind::Class,
    NodeKind::Variable,
    NodeKind::Import,
];

pub(super) fn kind_code(kind: NodeKind) -> u8 {
    KINDS.iter().position(|k| *k == kind).unwrap_or_default() as u8
}

pub(super) fn language_code(language: Language) -> u8 {
    Language::ALL
        .iter()
        .position(|l| *l == language)
        .unwrap_or_default() as u8
}

/// The header's counts and section offsets (see the module's documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) graph_sum: u64,
    pub(super) nodes: u64,
    pub(super) files: u64,
    /// The names of definitions (each once: the entries of the names section).
    pub(super) names: u64,
    /// The edges (each listed once out of its source and once into its target).
    pub(super) edges: u64,
    pub(super) files_at: u64,
    pub(super) nodes_at: u64,
    pub(super) index_at: u64,
    pub(super) out_index_at: u64,
    pub(super) out_at: u64,
    /// The out-edges' kinds and lines (`EDGE_KIND`), in the same order.
    pub(super) out_kinds_at: u64,
    pub(super) in_index_at: u64,
    pub(super) in_at: u64,
    pub(super) in_kinds_at: u64,
    pub(super) names_at: u64,
    /// Where the blocks' checksums begin (the sections end).
    pub(super) sums_at: u64,
    pub(super) end: u64,
    /// The checksum of the rest of the header and of the blocks' checksums.
    pub(super) check: u64,
}

impl Header {
    fn fields(&self) -> [u64; 18] {
        [
            self.graph_sum,
            self.nodes,
            self.files,
            self.names,
            self.edges,
            self.files_at,
            self.nodes_at,
            self.index_at,
            self.out_index_at,
            self.out_at,
            self.out_kinds_at,
            self.in_index_at,
            self.in_at,
            self.in_kinds_at,
            self.names_at,
            self.sums_at,
            self.end,
            self.check,
        ]
    }

    /// `check` for these fields and the blocks' checksums `sums` (their bytes).
    pub(super) fn checksum(&self, sums: &[u8]) -> u64 {
        let fields = Header { check: 0, ..*self }.fields();
        let mut bytes: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
        bytes.extend(sums);
        part_sum(&bytes)
    }

    /// The fields of a header's bytes (at least `HEADER` of them), unchecked.
    fn read(bytes: &[u8]) -> Header {
        let field = |i: usize| {
            let at = 16 + 8 * i;
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
        };
        Header {
            graph_sum: field(0),
            nodes: field(1),
            files: field(2),
            names: field(3),
            edges: field(4),
            files_at: field(5),
            nodes_at: field(6),
            index_at: field(7),
            out_index_at: field(8),
            out_at: field(9),
            out_kinds_at: field(10),
            in_index_at: field(11),
            in_at: field(12),
            in_kinds_at: field(13),
            names_at: field(14),
            sums_at: field(15),
            end: field(16),
            check: field(17),
        }
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER);
        out.extend(MAGIC);
        out.extend(FORMAT_VERSION.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        for field in self.fields() {
            out.extend(field.to_le_bytes());
        }
        out
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<Header> {
        let corrupt = |why: &str| corrupt(path, why);
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(corrupt("no view header"));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(Error::FormatVersion {
                what: "graph view",
                path: path.display().to_string(),
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        if bytes[12..16] != [0; 4] {
            return Err(corrupt("a header that fails its checksum"));
        }
        let header = Header::read(bytes);
        let Header {
            nodes,
            files,
            names,
            edges,
            files_at,
            nodes_at,
            index_at,
            out_index_at,
            out_at,
            out_kinds_at,
            in_index_at,
            in_at,
            in_kinds_at,
            names_at,
            sums_at,
            end,
            check,
            ..
        } = header;
        // The sections in order, each the size its counts say where it is fixed.
        let index = nodes.checked_add(1).and_then(|n| n.checked_mul(8));
        let after = |at: u64, size: usize| {
            edges
                .checked_mul(size as u64)
                .and_then(|n| n.checked_add(at))
        };
        let fits = end == bytes.len() as u64
            && files_at == HEADER as u64
            && files
                .checked_mul(FILE_RECORD as u64)
                .and_then(|n| n.checked_add(files_at))
                .is_some_and(|n| n <= nodes_at)
            && nodes_at <= index_at
            && index.and_then(|n| n.checked_add(index_at)) == Some(out_index_at)
            && index.and_then(|n| n.checked_add(out_index_at)) == Some(out_at)
            && after(out_at, EDGE) == Some(out_kinds_at)
            && after(out_kinds_at, EDGE_KIND) == Some(in_index_at)
            && index.and_then(|n| n.checked_add(in_index_at)) == Some(in_at)
            && after(in_at, EDGE) == Some(in_kinds_at)
            && after(in_kinds_at, EDGE_KIND) == Some(names_at)
            && names
                .checked_add(1)
                .and_then(|n| n.checked_mul(8))
                .and_then(|n| n.checked_add(names_at))
                .is_some_and(|n| n <= sums_at)
            && blocks(sums_at)
                .checked_mul(8)
                .and_then(|n| n.checked_add(sums_at))
                == Some(end)
            && nodes < u64::from(u32::MAX)
            && files <= nodes
            && names <= nodes;
        if !fits {
            return Err(corrupt("sections that do not fit together"));
        }
        let sums = &bytes[sums_at as usize..end as usize];
        if header.checksum(sums) != check {
            return Err(corrupt("a header that fails its checksum"));
        }
        Ok(header)
    }
}

/// The number of blocks of sections that end at `sums_at`.
pub(super) fn blocks(sums_at: u64) -> u64 {
    sums_at.saturating_sub(HEADER as u64).div_ceil(BLOCK as u64)
}

fn corrupt(path: &Path, why: &str) -> Error {
    Error::Corrupt(format!(
        "{} is not a readable aircher-mem graph view ({why}): index again to rewrite it",
        path.display()
    ))
}

/// The file `path` names, or where the view of the graph file `graph` lives:
/// beside it, with the extension `.view` (`graph.bin` -> `graph.view`).
pub fn view_path(graph: &Path) -> std::path::PathBuf {
    graph.with_extension("view")
}

/// A file of the view: its first node's number, its number of nodes and of
/// definitions, its path.
#[derive(Debug, Clone, Copy)]
struct FileRecord<'a> {
    first: u32,
    nodes: u32,
    defs: u32,
    path: &'a str,
}

/// A node as the view holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewNode<'a> {
    pub kind: NodeKind,
    pub language: Language,
    pub name: &'a str,
    pub path: &'a str,
    pub line: u32,
    pub end_line: u32,
    pub signature: &'a str,
    pub scope: &'a str,
    pub items: Vec<&'a str>,
}

/// A saved graph read in place (see the module's documentation).
#[derive(Debug)]
pub struct GraphView {
    bytes: Mapped,
    header: Header,
    /// Each block: whether it was found to match its checksum.
    checked: Vec<AtomicBool>,
    /// Whether a block failed its checksum.
    damaged: AtomicBool,
}

impl GraphView {
    /// Maps the view at `path` (its pages read as they are used) and checks its
    /// header: a missing file is an I/O error, a damaged one `Error::Corrupt`,
    /// another format's `Error::FormatVersion`.
    pub fn open(path: &Path) -> Result<GraphView> {
        let bytes = Mapped::open_unread(path)?;
        let header = Header::decode(&bytes, path)?;
        let checked = (0..blocks(header.sums_at))
            .map(|_| AtomicBool::new(false))
            .collect();
        Ok(GraphView {
            bytes,
            header,
            checked,
            damaged: AtomicBool::new(false),
        })
    }

    /// An error when a read since the view was opened met a block that fails its
    /// checksum (the read found nothing there): the answer it went into is not to
    /// be trusted. Also an error when the file was written in place since.
    pub fn check(&self) -> Result<()> {
        if let Some(err) = self.bytes.changed() {
            return Err(err);
        }
        if self.damaged.load(Atomic::Relaxed) {
            return Err(corrupt(
                self.bytes.path(),
                "a block that fails its checksum",
            ));
        }
        Ok(())
    }

    /// Whether the blocks under `start..end` match their checksums (each checked
    /// once).
    fn intact(&self, start: u64, end: u64) -> bool {
        let body = HEADER as u64;
        if start < body || end > self.header.sums_at {
            return start >= self.header.sums_at || end <= body;
        }
        let first = (start - body) / BLOCK as u64;
        let last = (end.max(start + 1) - 1 - body) / BLOCK as u64;
        for block in first..=last {
            let Some(seen) = self.checked.get(block as usize) else {
                return false;
            };
            if seen.load(Atomic::Relaxed) {
                continue;
            }
            let from = body + block * BLOCK as u64;
            let to = (from + BLOCK as u64).min(self.header.sums_at);
            let sum_at = (self.header.sums_at + 8 * block) as usize;
            let (Some(bytes), Some(sum)) = (
                self.bytes.get(from as usize..to as usize),
                self.bytes.get(sum_at..sum_at + 8),
            ) else {
                return false;
            };
            if part_sum(bytes).to_le_bytes() != sum {
                self.damaged.store(true, Atomic::Relaxed);
                return false;
            }
            seen.store(true, Atomic::Relaxed);
        }
        true
    }

    /// The checksum of the graph file the view was written with.
    pub fn graph_sum(&self) -> u64 {
        self.header.graph_sum
    }

    pub fn node_count(&self) -> usize {
        self.header.nodes as usize
    }

    fn slice(&self, at: u64, length: u64) -> Option<&[u8]> {
        let end = at.checked_add(length)?;
        if !self.intact(at, end) {
            return None;
        }
        self.bytes
            .get(usize::try_from(at).ok()?..usize::try_from(end).ok()?)
    }

    fn u32_at(&self, at: u64) -> Option<u32> {
        Some(u32::from_le_bytes(self.slice(at, 4)?.try_into().ok()?))
    }

    fn u64_at(&self, at: u64) -> Option<u64> {
        Some(u64::from_le_bytes(self.slice(at, 8)?.try_into().ok()?))
    }

    fn text(&self, at: u64, length: u32) -> Option<&str> {
        std::str::from_utf8(self.slice(at, u64::from(length))?).ok()
    }

    fn file(&self, f: u32) -> Option<FileRecord<'_>> {
        if u64::from(f) >= self.header.files {
            return None;
        }
        let at = self.header.files_at + u64::from(f) * FILE_RECORD as u64;
        let word = |i: u64| self.u32_at(at + 4 * i);
        let path = self.text(self.u64_at(at + 16)?, word(3)?)?;
        Some(FileRecord {
            first: word(0)?,
            nodes: word(1)?,
            defs: word(2)?,
            path,
        })
    }

    /// The number of the file `path`'s record (files are sorted by path).
    fn find_file(&self, path: &str) -> Option<u32> {
        let (mut low, mut high) = (0u32, u32::try_from(self.header.files).ok()?);
        while low < high {
            let middle = low + (high - low) / 2;
            match self.file(middle)?.path.cmp(path) {
                Ordering::Less => low = middle + 1,
                Ordering::Greater => high = middle,
                Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    /// Where a node's record begins, and its fixed part.
    fn fixed(&self, node: NodeIndex) -> Option<(u64, &[u8])> {
        if node.index() as u64 >= self.header.nodes {
            return None;
        }
        let at = self.u64_at(self.header.index_at + 8 * node.index() as u64)?;
        Some((at, self.slice(at, NODE_FIXED as u64)?))
    }

    fn file_of(&self, node: NodeIndex) -> Option<FileRecord<'_>> {
        let (_, fixed) = self.fixed(node)?;
        self.file(u32::from_le_bytes(fixed[..4].try_into().ok()?))
    }

    fn line(&self, node: NodeIndex) -> Option<u32> {
        let (_, fixed) = self.fixed(node)?;
        Some(u32::from_le_bytes(fixed[8..12].try_into().ok()?))
    }

    /// The node numbered `node`; None when there is none (or its record is damaged).
    pub fn node(&self, node: NodeIndex) -> Option<ViewNode<'_>> {
        let (at, fixed) = self.fixed(node)?;
        let word = |i: usize| u32::from_le_bytes(fixed[i..i + 4].try_into().expect("4 bytes"));
        let kind = *KINDS.get(usize::from(fixed[4]))?;
        let language = *Language::ALL.get(usize::from(fixed[5]))?;
        let path = self.file(word(0))?.path;
        let mut cursor = at + NODE_FIXED as u64;
        let mut next = |length: u32| {
            let text = self.text(cursor, length);
            cursor += u64::from(length);
            text
        };
        let (name, signature, scope) = (next(word(16))?, next(word(20))?, next(word(24))?);
        let mut items = Vec::new();
        for _ in 0..word(28) {
            let length = self.u32_at(cursor)?;
            cursor += 4;
            items.push(self.text(cursor, length)?);
            cursor += u64::from(length);
        }
        Some(ViewNode {
            kind,
            language,
            name,
            path,
            line: word(8),
            end_line: word(12),
            signature,
            scope,
            items,
        })
    }

    /// Where `node`'s edges of a section (`index_at`: outgoing or incoming) begin
    /// and end, counted in edges.
    fn edge_range(&self, index_at: u64, node: NodeIndex) -> Option<(u64, u64)> {
        let i = node.index() as u64;
        let start = self.u64_at(index_at + 8 * i)?;
        let end = self.u64_at(index_at + 8 * (i + 1))?;
        (start <= end && end <= self.header.edges).then_some((start, end))
    }

    /// Each edge out of (`Outgoing`) or into `node` whole: the node at its other
    /// end and the edge (its kind, line and confidence), in the loaded graph's order.
    pub(super) fn typed_edges(
        &self,
        node: NodeIndex,
        direction: Direction,
        each: &mut dyn FnMut(NodeIndex, Edge),
    ) {
        let h = &self.header;
        let (index_at, at, kinds_at) = match direction {
            Direction::Outgoing => (h.out_index_at, h.out_at, h.out_kinds_at),
            Direction::Incoming => (h.in_index_at, h.in_at, h.in_kinds_at),
        };
        let Some((start, end)) = self.edge_range(index_at, node) else {
            return;
        };
        let count = end - start;
        let (Some(edges), Some(kinds)) = (
            self.slice(at + start * EDGE as u64, count * EDGE as u64),
            self.slice(
                kinds_at + start * EDGE_KIND as u64,
                count * EDGE_KIND as u64,
            ),
        ) else {
            return;
        };
        for (edge, kind) in edges.chunks_exact(EDGE).zip(kinds.chunks_exact(EDGE_KIND)) {
            let other = u32::from_le_bytes(edge[..4].try_into().expect("4 bytes"));
            let confidence =
                f32::from_bits(u32::from_le_bytes(edge[4..].try_into().expect("4 bytes")));
            let code = u32::from_le_bytes(kind.try_into().expect("4 bytes"));
            let Some((kind, line)) = decode_edge_kind(code) else {
                continue;
            };
            if u64::from(other) < h.nodes {
                let edge = Edge {
                    kind,
                    confidence,
                    line,
                    reference: u32::MAX,
                };
                each(NodeIndex::new(other as usize), edge);
            }
        }
    }

    /// Each edge of a section (`index_at`, `at`: outgoing or incoming) of `node`.
    fn edges(
        &self,
        index_at: u64,
        at: u64,
        node: NodeIndex,
        each: &mut impl FnMut(NodeIndex, f32),
    ) {
        let Some(edges) = self.edge_range(index_at, node).and_then(|(start, end)| {
            self.slice(at + start * EDGE as u64, (end - start) * EDGE as u64)
        }) else {
            return;
        };
        for edge in edges.chunks_exact(EDGE) {
            let other = u32::from_le_bytes(edge[..4].try_into().expect("4 bytes"));
            let confidence =
                f32::from_bits(u32::from_le_bytes(edge[4..].try_into().expect("4 bytes")));
            if u64::from(other) < self.header.nodes {
                each(NodeIndex::new(other as usize), confidence);
            }
        }
    }
}

impl GraphView {
    /// The name of entry `i` of the names section, and the numbers of its
    /// definitions' nodes (None when the entry cannot be read).
    fn named_at(&self, i: u64) -> Option<(&str, Vec<NodeIndex>)> {
        if i >= self.header.names {
            return None;
        }
        let (at, end) = (
            self.u64_at(self.header.names_at + 8 * i)?,
            self.u64_at(self.header.names_at + 8 * (i + 1))?,
        );
        let (length, count) = (self.u32_at(at)?, self.u32_at(at.checked_add(4)?)?);
        let name = self.text(at.checked_add(8)?, length)?;
        let numbers_at = at + 8 + u64::from(length);
        if numbers_at.checked_add(4 * u64::from(count)) != Some(end) {
            return None;
        }
        let numbers = self.slice(numbers_at, 4 * u64::from(count))?;
        let ids = numbers
            .chunks_exact(4)
            .map(|n| u32::from_le_bytes(n.try_into().expect("4 bytes")))
            .filter(|&n| u64::from(n) < self.header.nodes)
            .map(|n| NodeIndex::new(n as usize))
            .collect();
        Some((name, ids))
    }

    /// The name of entry `i` of the names section.
    fn name_at(&self, i: u64) -> Option<&str> {
        let at = self.u64_at(self.header.names_at + 8 * i)?;
        self.text(at.checked_add(8)?, self.u32_at(at)?)
    }

    /// A node's name, and where its scope's text begins and how long it is.
    fn name_and_scope_at(&self, node: NodeIndex) -> Option<(&str, u64, u32)> {
        let (at, fixed) = self.fixed(node)?;
        let word = |i: usize| u32::from_le_bytes(fixed[i..i + 4].try_into().expect("4 bytes"));
        let name_at = at + NODE_FIXED as u64;
        let scope_at = name_at + u64::from(word(16)) + u64::from(word(20));
        Some((self.text(name_at, word(16))?, scope_at, word(24)))
    }

    /// The first entry of the names section whose name is not less than `name`
    /// (an unreadable one counts as less).
    fn first_named(&self, name: &str) -> u64 {
        let (mut low, mut high) = (0u64, self.header.names);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.name_at(middle).is_none_or(|found| found < name) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }
}

impl Symbols for GraphView {
    fn named_exactly(&self, name: &str) -> Vec<NodeIndex> {
        match self.named_at(self.first_named(name)) {
            Some((found, ids)) if found == name => ids,
            _ => Vec::new(),
        }
    }

    fn each_named(&self, prefix: &str, each: &mut dyn FnMut(&str, &[NodeIndex])) {
        for i in self.first_named(prefix)..self.header.names {
            let Some((name, ids)) = self.named_at(i) else {
                continue;
            };
            if !name.starts_with(prefix) {
                break;
            }
            each(name, &ids);
        }
    }

    fn each_name(&self, each: &mut dyn FnMut(&str)) {
        for i in 0..self.header.names {
            if let Some(name) = self.name_at(i) {
                each(name);
            }
        }
    }

    fn place(&self, id: NodeIndex) -> Option<(&str, u32, &str)> {
        let (name, _, _) = self.name_and_scope_at(id)?;
        Some((self.file_of(id)?.path, self.line(id)?, name))
    }

    fn scope_of(&self, id: NodeIndex) -> Option<&str> {
        let (_, at, length) = self.name_and_scope_at(id)?;
        self.text(at, length).filter(|scope| !scope.is_empty())
    }

    fn file_nodes(&self, path: &str) -> Option<Vec<NodeIndex>> {
        let file = self.file(self.find_file(path)?)?;
        let (first, end) = (
            u64::from(file.first),
            u64::from(file.first) + u64::from(file.nodes),
        );
        if end > self.header.nodes {
            return None; // a damaged record
        }
        Some(
            (first + 1..end)
                .map(|n| NodeIndex::new(n as usize))
                .collect(),
        )
    }

    fn lines(&self, id: NodeIndex) -> Option<(u32, u32, bool)> {
        let (_, fixed) = self.fixed(id)?;
        let word = |i: usize| u32::from_le_bytes(fixed[i..i + 4].try_into().expect("4 bytes"));
        let import = KINDS.get(usize::from(fixed[4])) == Some(&NodeKind::Import);
        Some((word(8), word(12), import))
    }

    fn each_edge(
        &self,
        id: NodeIndex,
        direction: Direction,
        each: &mut dyn FnMut(NodeIndex, Edge),
    ) {
        self.typed_edges(id, direction, each);
    }
}

impl Walk for GraphView {
    fn node_bound(&self) -> usize {
        self.header.nodes as usize
    }

    fn contains_node(&self, node: NodeIndex) -> bool {
        (node.index() as u64) < self.header.nodes
    }

    fn for_each_edge(&self, node: NodeIndex, mut each: impl FnMut(NodeIndex, f32)) {
        let h = &self.header;
        self.edges(h.out_index_at, h.out_at, node, &mut each);
        self.edges(h.in_index_at, h.in_at, node, &mut each);
    }

    fn tie_order(&self, a: NodeIndex, b: NodeIndex) -> Ordering {
        let key = |n: NodeIndex| (self.file_of(n).map(|f| f.path), self.line(n));
        key(a).cmp(&key(b))
    }
}

impl Searchable for GraphView {
    fn node_of_key(&self, key: &str) -> Option<NodeIndex> {
        let (path, index) = parse_key(key)?;
        let file = self.file(self.find_file(path)?)?;
        let local = match index {
            None => 0,
            Some(i) if i < file.defs as usize => 1 + i,
            Some(_) => return None,
        };
        Some(NodeIndex::new(file.first as usize + local))
    }

    fn key_of_node(&self, node: NodeIndex) -> Option<String> {
        let file = self.file_of(node)?;
        let local = node
            .index()
            .checked_sub(file.first as usize)
            .filter(|l| *l < file.nodes as usize)?;
        match local {
            0 => Some(file_key(file.path)),
            l if l <= file.defs as usize => Some(definition_key(file.path, l - 1)),
            _ => None,
        }
    }

    fn file_node(&self, path: &str) -> Option<NodeIndex> {
        let file = self.file(self.find_file(path)?)?;
        Some(NodeIndex::new(file.first as usize))
    }

    fn paths(&self) -> impl Iterator<Item = &str> {
        (0..self.header.files as u32).filter_map(|f| self.file(f).map(|file| file.path))
    }

    fn file_count(&self) -> usize {
        self.header.files as usize
    }
}

/// What a search of a saved graph reads, in place: the view and the lexical
/// index saved beside a graph file, both checked to be the ones written with it.
#[derive(Debug)]
pub struct SavedSearch {
    pub view: GraphView,
    pub lexical: LexicalIndex,
}

impl SavedSearch {
    /// The view and lexical index of the graph file at `graph`. Either missing is
    /// an I/O error; either damaged, or written with another version of the graph
    /// file (a save cut short), `Error::Corrupt`.
    pub fn open(graph: &Path) -> Result<SavedSearch> {
        let sum = saved_sum(graph)?;
        let tied = |path: &Path, written_with: u64| {
            if written_with == sum {
                Ok(())
            } else {
                Err(corrupt(
                    path,
                    "written with another version of the graph file",
                ))
            }
        };
        let path = view_path(graph);
        let view = GraphView::open(&path)?;
        tied(&path, view.graph_sum())?;
        let path = lexical_path(graph);
        let file = LexicalFile::open(&path)?;
        tied(&path, file.generation())?;
        Ok(SavedSearch {
            view,
            lexical: file.read()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{search, Level, Progress, Project, ReadIndex, SearchParams};
    use crate::retrieve::{Bm25Params, Normalization, QueryTerms};
    use proptest::prelude::*;

    const WORDS: [&str; 10] = [
        "parse", "header", "email", "retry", "request", "token", "cache", "route", "tree", "zip",
    ];

    /// A module of classes with methods and functions calling each other and the
    /// other modules' (imported), so nodes nest and edges cross files.
    fn source(file: usize, words: &[usize]) -> String {
        let mut out = String::new();
        for other in 0..4 {
            if other != file {
                out.push_str(&format!("from m{other} import *\nimport m{other}\n"));
            }
        }
        for (i, w) in words.iter().enumerate() {
            let a = WORDS[w % WORDS.len()];
            let b = WORDS[(w / 2) % WORDS.len()];
            if w % 3 == 0 {
                out.push_str(&format!(
                    "class {a}_{i}:\n    \"\"\"The {a} of a {b}.\"\"\"\n    def {b}(self, x):\n        return {a}_{b}(x)\n    def run(self):\n        return self.{b}(1)\n\n"
                ));
            } else {
                out.push_str(&format!(
                    "def {a}_{b}(x):\n    \"\"\"Do the {a} of a {b}.\"\"\"\n    return m{}.{b}_{a}(x)\n\n",
                    w % 4
                ));
            }
        }
        out
    }

    fn params() -> SearchParams {
        SearchParams {
            bm25: Bm25Params {
                k1: 1.2,
                b: 0.75,
                field_weights: vec![("name".into(), 3.0)],
            },
            normalization: Normalization::MinMax,
            lexical_weight: 1.0,
            graph_weight: 0.5,
            dense_weight: 0.0,
            candidates: 50,
            graph_seeds: 10,
            path_weight: 0.5,
            focus_weight: 0.5,
            damping: 0.85,
            epsilon: 1e-6,
            max_pushes: 10_000,
            terms: QueryTerms::default(),
            test_factor: 0.5,
            bench_factor: 0.5,
            example_factor: 0.5,
            docs_factor: 0.5,
            vendor_factor: 0.5,
            file_spread: 0.2,
            name_only_factor: 0.5,
        }
    }

    /// A hit as (key, score's bits, each channel's normalized score's bits).
    type Bits = (String, u64, Vec<(String, u64)>);

    /// A search's hits, to compare to the bit.
    fn bits(found: &crate::graph::Found) -> Vec<Bits> {
        found
            .hits
            .iter()
            .map(|h| {
                let channels = h
                    .channels
                    .iter()
                    .map(|c| (c.name.clone(), c.normalized.to_bits()))
                    .collect();
                (h.key.clone(), h.score.to_bits(), channels)
            })
            .collect()
    }

    /// A node's edges as (other end, confidence's bits), in order.
    fn edges(graph: &impl Walk, node: NodeIndex) -> Vec<(NodeIndex, u32)> {
        let mut out = Vec::new();
        graph.for_each_edge(node, |other, confidence| {
            out.push((other, confidence.to_bits()))
        });
        out
    }

    /// Edges found as (the other end, kind, line, confidence's bits).
    fn typed(found: Vec<(NodeIndex, crate::graph::Edge)>) -> Vec<(NodeIndex, EdgeKind, u32, u32)> {
        found
            .into_iter()
            .map(|(n, e)| (n, e.kind, e.line, e.confidence.to_bits()))
            .collect()
    }

    /// A node's whole edges each way (see `typed`).
    fn edges_of(
        graph: &impl Symbols,
        node: NodeIndex,
    ) -> [Vec<(NodeIndex, EdgeKind, u32, u32)>; 2] {
        [Direction::Outgoing, Direction::Incoming].map(|direction| {
            let mut found = Vec::new();
            graph.each_edge(node, direction, &mut |other, edge| {
                found.push((other, edge))
            });
            typed(found)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

        /// After builds and updates in any order, the view of the saved graph is the
        /// graph a load makes of it: the same nodes by the same numbers, each one's
        /// edges in the same order, and searches with the same hits and scores, to
        /// the bit.
        #[test]
        fn a_view_is_the_loaded_graph(
            edits in prop::collection::vec((0..4usize, prop::option::of(prop::collection::vec(0..30usize, 0..6))), 1..10),
            queries in prop::collection::vec(prop::collection::vec(0..10usize, 1..4), 1..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            std::fs::write(root.join("m0.py"), source(0, &[1, 3])).unwrap();
            let project = Project::build(root, 1_000_000, &Progress::default()).unwrap();
            for (file, content) in edits {
                let path = root.join(format!("m{file}.py"));
                match content {
                    Some(words) => std::fs::write(&path, source(file, &words)).unwrap(),
                    None => { let _ = std::fs::remove_file(&path); }
                }
                project.update_file(&path).unwrap();
            }
            let saved = root.join(".store/graph.bin");
            project.save(&saved).unwrap();
            let loaded = Project::load(&saved, None, 1_000_000, ReadIndex::WithGraph).unwrap();
            let opened = SavedSearch::open(&saved).unwrap();
            let state = loaded.state();
            let (graph, view) = (state.graph(), &opened.view);
            prop_assert_eq!(view.node_count(), graph.graph.node_bound());
            prop_assert_eq!(view.file_count(), graph.file_count());
            for i in 0..view.node_count() {
                let id = NodeIndex::new(i);
                let n = graph.node(id);
                let v = view.node(id).unwrap();
                let scope = graph.scope(id).unwrap_or_default();
                let items: Vec<&str> = n.items.iter().map(|s| &**s).collect();
                prop_assert_eq!(
                    (v.kind, v.language, v.name, v.path, v.line, v.end_line, v.signature, v.scope, &v.items),
                    (n.kind, n.language, &*n.name, &*n.path, n.line, n.end_line, &*n.signature, scope, &items)
                );
                prop_assert_eq!(edges(view, id), edges(graph, id));
                prop_assert_eq!(edges_of(view, id), edges_of(graph, id));
                prop_assert_eq!(view.key_of_node(id), graph.key_of_node(id));
                // Finding definitions by name: every way of asking, the same answers.
                let module = n.path.trim_end_matches(".py");
                let asked = [
                    n.name.to_string(),
                    format!("{scope}.{}", n.name),
                    format!("{module}.{}", n.name),
                    format!("{module}::{scope}::{}", n.name),
                    n.name.chars().take(3).collect(),
                ];
                for name in &asked {
                    for prefix in [false, true] {
                        prop_assert_eq!(view.find_symbol(name, prefix), graph.find_symbol(name, prefix), "{}", name);
                    }
                    prop_assert_eq!(view.find_fuzzy(name), graph.find_fuzzy(name), "{}", name);
                    // What refers to it, and what is near it.
                    prop_assert_eq!(typed(view.callers(name)), typed(graph.callers(name)), "{}", name);
                    prop_assert_eq!(typed(view.callees(name)), typed(graph.callees(name)), "{}", name);
                    let kinds = crate::graph::REFERENCE_KINDS;
                    prop_assert_eq!(typed(view.references(name, &kinds)), typed(graph.references(name, &kinds)));
                    prop_assert_eq!(view.neighbourhood_of(name, 2), graph.neighbourhood_of(name, 2), "{}", name);
                }
            }
            for path in graph.paths() {
                prop_assert_eq!(view.file_contents(&path), graph.file_contents(&path));
                for direction in [Direction::Outgoing, Direction::Incoming] {
                    prop_assert_eq!(view.dependencies(&path, direction), graph.dependencies(&path, direction));
                }
                prop_assert_eq!(view.neighbourhood_of(&path, 1), graph.neighbourhood_of(&path, 1));
            }
            prop_assert_eq!(view.dependencies("nope.py", Direction::Outgoing), None);
            prop_assert_eq!(view.find_symbol("", true), graph.find_symbol("", true));
            prop_assert_eq!(view.file_contents("nope.py"), None);
            for words in queries {
                let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                let text = format!("{} in m1.py", text.join(" "));
                for level in [Level::Definition, Level::File] {
                    let a = search(graph, state.lexical(), &text, &[], &[], level, 20, &params(), &[]);
                    let b = search(view, &opened.lexical, &text, &[], &[], level, 20, &params(), &[]);
                    prop_assert_eq!(bits(&a), bits(&b), "{}", text);
                    prop_assert_eq!(&a.mentioned, &b.mentioned);
                }
            }
        }
    }

    /// Reads every node of `view` (and two past the end) each way a search does:
    /// damaged bytes must give nothing or a wrong answer, never a panic.
    fn read_every_node(view: &GraphView) {
        for i in 0..view.node_count() + 2 {
            let id = NodeIndex::new(i);
            let _ = view.node(id);
            let _ = view.key_of_node(id);
            view.for_each_edge(id, |_, _| {});
            let _ = view.tie_order(id, NodeIndex::new(0));
            let _ = edges_of(view, id);
        }
        for path in ["m0.py", "m1.py", "m2.py"] {
            let _ = view.file_contents(path);
            let _ = view.dependencies(path, Direction::Outgoing);
            let _ = view.dependencies(path, Direction::Incoming);
        }
        for name in ["run", "r", "", "m1.run", "tree_0.run"] {
            let _ = view.find_symbol(name, false);
            let _ = view.find_symbol(name, true);
            let _ = view.find_fuzzy(name);
            let _ = view.references(name, &crate::graph::REFERENCE_KINDS);
            let _ = view.callees(name);
            let _ = view.neighbourhood_of(name, 3);
        }
    }

    /// `bytes` (a view) with its blocks' checksums and its header's check made
    /// again: a damaged file that passes every checksum, as an adversary writes it.
    fn reseal(bytes: &mut [u8]) {
        let header = Header::read(bytes);
        let (sums_at, end) = (header.sums_at as usize, header.end as usize);
        for (block, at) in (HEADER..sums_at).step_by(BLOCK).enumerate() {
            let sum = part_sum(&bytes[at..(at + BLOCK).min(sums_at)]);
            bytes[sums_at + 8 * block..sums_at + 8 * block + 8].copy_from_slice(&sum.to_le_bytes());
        }
        let check = header.checksum(&bytes[sums_at..end]);
        bytes[HEADER - 8..HEADER].copy_from_slice(&check.to_le_bytes());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// A view damaged anywhere in its sections, every checksum made to match:
        /// opened or refused, and every read and search of it ends, without a panic.
        #[test]
        fn a_damaged_view_that_passes_its_checksums_never_panics(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..24),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            for file in 0..3 {
                std::fs::write(root.join(format!("m{file}.py")), source(file, &[1, 3, 4, 6, 9])).unwrap();
            }
            let project = Project::build(root, 1_000_000, &Progress::default()).unwrap();
            let saved = root.join(".store/graph.bin");
            project.save(&saved).unwrap();
            let path = view_path(&saved);
            let mut bytes = std::fs::read(&path).unwrap();
            let sums_at = GraphView::open(&path).unwrap().header.sums_at as usize;
            for (at, byte) in edits {
                let at = HEADER + at.index(sums_at - HEADER);
                bytes[at] = byte;
            }
            reseal(&mut bytes);
            std::fs::write(&path, &bytes).unwrap();
            let Ok(opened) = SavedSearch::open(&saved) else {
                return Ok(());
            };
            let view = &opened.view;
            prop_assert!(view.check().is_ok());
            read_every_node(view);
            let paths: Vec<String> = view.paths().map(str::to_string).collect();
            for path in &paths {
                let _ = view.file_node(path);
                let _ = view.node_of_key(&format!("{path}#0"));
            }
            for level in [Level::Definition, Level::File] {
                let _ = search(view, &opened.lexical, "parse the header of m1.py", &[], &[], level, 20, &params(), &[]);
            }
        }
    }

    #[test]
    fn a_view_that_does_not_fit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("m0.py"), source(0, &[1, 3, 4])).unwrap();
        let project = Project::build(root, 1_000_000, &Progress::default()).unwrap();
        let saved = root.join(".store/graph.bin");
        project.save(&saved).unwrap();
        let view = view_path(&saved);
        let bytes = std::fs::read(&view).unwrap();
        assert!(SavedSearch::open(&saved).is_ok());
        // Every cut is refused, each by its header.
        for cut in [0, 7, HEADER - 1, HEADER, bytes.len() - 1] {
            std::fs::write(&view, &bytes[..cut]).unwrap();
            assert!(
                matches!(GraphView::open(&view), Err(Error::Corrupt(_))),
                "cut at {cut}"
            );
        }
        // Another version of the format.
        let mut other = bytes.clone();
        other[8] = 99;
        std::fs::write(&view, &other).unwrap();
        assert!(matches!(
            GraphView::open(&view),
            Err(Error::FormatVersion { .. })
        ));
        // The view of an older graph file: refused beside the graph saved since.
        std::fs::write(&view, &bytes).unwrap();
        std::fs::write(root.join("m1.py"), source(1, &[2])).unwrap();
        project.update_file(&root.join("m1.py")).unwrap();
        let newer = root.join(".store/newer.bin");
        project.save(&newer).unwrap();
        std::fs::copy(&view, view_path(&newer)).unwrap();
        assert!(matches!(SavedSearch::open(&newer), Err(Error::Corrupt(_))));
        // Any byte of the header or of the blocks' checksums: refused at open.
        let sums_at = GraphView::open(&view).unwrap().header.sums_at as usize;
        for at in (0..HEADER).chain(sums_at..bytes.len()) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            std::fs::write(&view, &flipped).unwrap();
            assert!(GraphView::open(&view).is_err(), "byte {at}");
        }
        // Any byte of the sections: what a read meets there is nothing, and the
        // view says so (`check`), never a panic.
        for at in (HEADER..sums_at).step_by(3) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            std::fs::write(&view, &flipped).unwrap();
            let damaged = GraphView::open(&view).unwrap();
            assert!(damaged.check().is_ok());
            read_every_node(&damaged);
            let _ = damaged.paths().count();
            assert!(
                matches!(damaged.check(), Err(Error::Corrupt(_))),
                "byte {at}"
            );
        }
    }
}
