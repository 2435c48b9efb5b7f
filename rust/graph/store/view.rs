//! The graph written as `view::GraphView` reads it: numbered as a load numbers it,
//! each node's edges in the order a loaded graph lists them (see `view`).

use std::path::Path;

use super::{FileEntry, KnowledgeGraph};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::graph::adjacency::{Direction, NodeIndex};
use crate::graph::model::{EdgeKind, CONTAINS_CONFIDENCE};
use crate::graph::persist::part_sum;
use crate::graph::view::{self, Header};

/// A view written but for its header, which names the graph file it goes with.
pub struct ViewFile {
    file: AtomicFile,
    header: Header,
    /// The blocks' checksums, as written.
    sums: Vec<u8>,
}

impl ViewFile {
    /// The header written (naming the graph file by its checksum `sum`): the file,
    /// to commit beside the graph's.
    pub fn finish(mut self, sum: u64) -> Result<AtomicFile> {
        self.header.graph_sum = sum;
        self.header.check = self.header.checksum(&self.sums);
        self.file.write_at(0, &self.header.encode())?;
        Ok(self.file)
    }
}

/// A section's offset in the file as a u32 where the format says so: a graph
/// too large for one is refused (the view is optional; the graph file is not).
fn narrow(value: usize, what: &'static str, path: &Path) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::InvalidValue {
        field: what,
        reason: format!("{}: too many for a graph view ({value})", path.display()),
    })
}

/// The file being written, where its end is, and the checksums of its blocks
/// (see `view`) past the header: those written and the one being written.
struct Out {
    file: AtomicFile,
    at: u64,
    sums: Vec<u8>,
    block: Vec<u8>,
}

impl Out {
    fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.at += bytes.len() as u64;
        self.file.write_all(bytes)?;
        if self.at <= view::HEADER as u64 {
            return Ok(()); // the header's zeros
        }
        while !bytes.is_empty() {
            let take = (view::BLOCK - self.block.len()).min(bytes.len());
            self.block.extend(&bytes[..take]);
            bytes = &bytes[take..];
            if self.block.len() == view::BLOCK {
                self.seal();
            }
        }
        Ok(())
    }

    /// The block being written ended: its checksum.
    fn seal(&mut self) {
        self.sums.extend(part_sum(&self.block).to_le_bytes());
        self.block.clear();
    }
}

impl KnowledgeGraph {
    /// Writes the graph's view to a temporary file beside `path` (see `view`);
    /// `ViewFile::finish` completes it once the graph file's checksum is known.
    pub fn write_view(&self, path: &Path) -> Result<ViewFile> {
        let mut paths: Vec<&String> = self.files.keys().collect();
        paths.sort_unstable();
        let entries: Vec<&FileEntry> = paths.iter().map(|p| &self.files[*p]).collect();
        // Every node's number in the view: its file's first, plus its place in
        // `FileEntry::nodes`, files in path order (as `from_saved` adds them).
        let mut number = vec![u32::MAX; self.graph.node_bound()];
        let mut firsts = Vec::with_capacity(entries.len());
        let mut next = 0usize;
        for entry in &entries {
            firsts.push(next);
            for node in entry.nodes() {
                number[node.index()] = narrow(next, "nodes", path)?;
                next += 1;
            }
        }
        let nodes = next;
        let mut out = Out {
            file: AtomicFile::create(path)?,
            at: 0,
            sums: Vec::new(),
            block: Vec::with_capacity(view::BLOCK),
        };
        let mut header = Header {
            nodes: nodes as u64,
            files: entries.len() as u64,
            ..Header::default()
        };
        out.put(&[0; view::HEADER])?;
        // The files, then their paths.
        header.files_at = out.at;
        let paths_at = out.at + (entries.len() * view::FILE_RECORD) as u64;
        let mut offset = paths_at;
        let mut table = Vec::with_capacity(entries.len() * view::FILE_RECORD);
        for ((p, entry), first) in paths.iter().zip(&entries).zip(&firsts) {
            let count = 1 + entry.defs.len() + entry.imports.len();
            for value in [*first, count, entry.defs.len(), p.len()] {
                table.extend(narrow(value, "nodes", path)?.to_le_bytes());
            }
            table.extend(offset.to_le_bytes());
            offset += p.len() as u64;
        }
        out.put(&table)?;
        for p in &paths {
            out.put(p.as_bytes())?;
        }
        // The nodes; then each one's edges, the other end by its number: a loaded
        // graph's list, the links (added after every node, in this order), then
        // what the node contains, most recent first.
        // (An edge as the other end's number, its confidence, its kind and line.)
        let each_out = |entry: &FileEntry, each: &mut dyn FnMut(u32, f32, u32)| {
            let children = self.children(entry);
            for (local, node) in entry.nodes().enumerate() {
                let links: Vec<(u32, f32, u32)> = self
                    .graph
                    .edges_directed(node, Direction::Outgoing)
                    .filter(|e| e.weight().kind != EdgeKind::Contains)
                    .map(|e| {
                        let w = e.weight();
                        let kind = view::edge_kind_code(w.kind, w.line);
                        (number[e.target().index()], w.confidence, kind)
                    })
                    .collect();
                let contained = children[local].iter().map(|&child| {
                    let kind = view::edge_kind_code(EdgeKind::Contains, self.graph[child].line);
                    (number[child.index()], CONTAINS_CONFIDENCE, kind)
                });
                for (other, confidence, kind) in links.into_iter().rev().chain(contained.rev()) {
                    each(other, confidence, kind);
                }
                each(u32::MAX, 0.0, 0); // the node's end
            }
        };
        header.nodes_at = out.at;
        let mut starts: Vec<u64> = Vec::with_capacity(nodes + 1);
        let mut record = Vec::new();
        for (f, entry) in entries.iter().enumerate() {
            for node in entry.nodes() {
                starts.push(out.at);
                record.clear();
                self.encode_node(node, f as u32, &mut record);
                out.put(&record)?;
            }
        }
        starts.push(out.at);
        header.index_at = out.at;
        out.put(&le_u64s(&starts))?;
        drop(starts);
        let mut out_starts: Vec<u64> = Vec::with_capacity(nodes + 1);
        let mut incoming = vec![0u32; nodes];
        let mut edges = 0u64;
        out_starts.push(0);
        for entry in &entries {
            each_out(entry, &mut |other, _, _| {
                if other == u32::MAX {
                    out_starts.push(edges);
                } else {
                    incoming[other as usize] += 1;
                    edges += 1;
                }
            });
        }
        header.out_index_at = out.at;
        out.put(&le_u64s(&out_starts))?;
        drop(out_starts);
        header.edges = edges;
        header.out_at = out.at;
        let mut written = Ok(());
        let mut edge = [0u8; view::EDGE];
        for entry in &entries {
            each_out(entry, &mut |other, confidence, _| {
                if other != u32::MAX && written.is_ok() {
                    edge[..4].copy_from_slice(&other.to_le_bytes());
                    edge[4..].copy_from_slice(&confidence.to_bits().to_le_bytes());
                    written = out.put(&edge);
                }
            });
        }
        std::mem::replace(&mut written, Ok(()))?;
        header.out_kinds_at = out.at;
        for entry in &entries {
            each_out(entry, &mut |other, _, kind| {
                if other != u32::MAX && written.is_ok() {
                    written = out.put(&kind.to_le_bytes());
                }
            });
        }
        written?;
        // Into each node: the links, most recently added first (files in order,
        // each file's links in its nodes' order), then the edge from what
        // contains it, added before any link.
        let mut in_starts: Vec<u64> = Vec::with_capacity(nodes + 1);
        let mut total = 0u64;
        for count in &incoming {
            in_starts.push(total);
            total += u64::from(*count);
        }
        in_starts.push(total);
        let mut cursor: Vec<u64> = in_starts[1..].to_vec();
        let mut into = vec![0u8; total as usize * view::EDGE];
        let mut into_kinds = vec![0u8; total as usize * view::EDGE_KIND];
        let mut place = |to: u32, from: u32, confidence: f32, kind: u32| {
            let slot = &mut cursor[to as usize];
            *slot -= 1;
            let at = *slot as usize * view::EDGE;
            into[at..at + 4].copy_from_slice(&from.to_le_bytes());
            into[at + 4..at + 8].copy_from_slice(&confidence.to_bits().to_le_bytes());
            let at = *slot as usize * view::EDGE_KIND;
            into_kinds[at..at + 4].copy_from_slice(&kind.to_le_bytes());
        };
        for entry in &entries {
            for (node, children) in entry.nodes().zip(self.children(entry)) {
                for child in children {
                    place(
                        number[child.index()],
                        number[node.index()],
                        CONTAINS_CONFIDENCE,
                        view::edge_kind_code(EdgeKind::Contains, self.graph[child].line),
                    );
                }
            }
        }
        for entry in &entries {
            for node in entry.nodes() {
                for e in self.graph.edges_directed(node, Direction::Outgoing) {
                    let w = e.weight();
                    if w.kind != EdgeKind::Contains {
                        let (from, to) = (number[node.index()], number[e.target().index()]);
                        place(to, from, w.confidence, view::edge_kind_code(w.kind, w.line));
                    }
                }
            }
        }
        header.in_index_at = out.at;
        out.put(&le_u64s(&in_starts))?;
        header.in_at = out.at;
        out.put(&into)?;
        drop(into);
        header.in_kinds_at = out.at;
        out.put(&into_kinds)?;
        drop(into_kinds);
        // The names of definitions in order, each with its definitions by path,
        // line and number (as `find_symbol` orders those of one name).
        let mut distinct: Vec<(&str, &[NodeIndex])> = self.all_named().collect();
        distinct.sort_unstable_by_key(|(name, _)| *name);
        header.names_at = out.at;
        header.names = distinct.len() as u64;
        let mut at = out.at + 8 * (distinct.len() as u64 + 1);
        let mut starts: Vec<u64> = Vec::with_capacity(distinct.len() + 1);
        for (name, ids) in &distinct {
            starts.push(at);
            at += 8 + name.len() as u64 + 4 * ids.len() as u64;
        }
        starts.push(at);
        out.put(&le_u64s(&starts))?;
        drop(starts);
        let mut entry: Vec<u8> = Vec::new();
        let mut group: Vec<(&str, u32, u32)> = Vec::new();
        for (name, ids) in distinct {
            group.clear();
            group.extend(ids.iter().map(|&d| {
                let n = &self.graph[d];
                (&*n.path, n.line, number[d.index()])
            }));
            group.sort_unstable();
            entry.clear();
            entry.extend(narrow(name.len(), "name bytes", path)?.to_le_bytes());
            entry.extend(narrow(ids.len(), "nodes", path)?.to_le_bytes());
            entry.extend(name.as_bytes());
            entry.extend(group.iter().flat_map(|d| d.2.to_le_bytes()));
            out.put(&entry)?;
        }
        if !out.block.is_empty() {
            out.seal();
        }
        header.sums_at = out.at;
        let sums = std::mem::take(&mut out.sums);
        out.file.write_all(&sums)?;
        header.end = out.at + sums.len() as u64;
        Ok(ViewFile {
            file: out.file,
            header,
            sums,
        })
    }

    /// What each of a file's nodes contains, in `FileEntry::nodes` order: its
    /// definitions in order (a file's, those at top level; then its imports), as
    /// `add_file_at` adds their edges.
    fn children(&self, entry: &FileEntry) -> Vec<Vec<NodeIndex>> {
        let local: foldhash::HashMap<NodeIndex, usize> = entry
            .defs
            .iter()
            .enumerate()
            .map(|(i, &d)| (d, 1 + i))
            .collect();
        let mut children = vec![Vec::new(); 1 + entry.defs.len() + entry.imports.len()];
        for &def in &entry.defs {
            let parent = self.parents[def.index()];
            children[local.get(&parent).copied().unwrap_or_default()].push(def);
        }
        children[0].extend(entry.imports.iter().copied());
        children
    }

    /// A node's record (see `view`).
    fn encode_node(&self, node: NodeIndex, file: u32, out: &mut Vec<u8>) {
        let n = &self.graph[node];
        let scope = self.scope(node).unwrap_or_default();
        out.extend(file.to_le_bytes());
        out.push(view::kind_code(n.kind));
        out.push(view::language_code(n.language));
        out.extend([0, 0]);
        for value in [n.line, n.end_line] {
            out.extend(value.to_le_bytes());
        }
        let texts = [n.name.as_bytes(), n.signature.as_bytes(), scope.as_bytes()];
        for text in texts {
            out.extend((text.len() as u32).to_le_bytes());
        }
        out.extend((n.items.len() as u32).to_le_bytes());
        for text in texts {
            out.extend(text);
        }
        for item in &n.items {
            out.extend((item.len() as u32).to_le_bytes());
            out.extend(item.as_bytes());
        }
    }
}

fn le_u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
