//! Saving and loading a graph. What is stored is each file's extracted symbols and
//! its links (what its imports resolved to, its edges), so loading neither parses
//! nor links again, and the graph's names, which the files name by id.
//!
//! Layout: magic `AIRGRAPH`, format version (u32 LE), payload length (u64 LE),
//! checksum of the payload (u64 LE), then the payload: the files in chunks of
//! `CHUNK`, each encoded on its own (postcard) so that chunks are encoded and
//! decoded in parallel, then the names (postcard: their text and where each
//! ends), then the `Meta` (which names the length of each chunk and of the
//! names), then the length of the `Meta` (u64 LE). The checksum is a foldhash of
//! the parts' foldhashes (each chunk one part, the names one, the `Meta` and its
//! length one). So a save writes each chunk as soon as it is encoded and drops
//! it, then the names and the `Meta`, then the header over the zeros it began
//! with: no more than a few chunks are held at a time. A file names each name by
//! its id in the one table of names, so a load neither allocates them one by one
//! nor looks them up again. Since version 9 package imports link only the files
//! used (`link::package_imports`), so an older file's edges are not what a build
//! makes now; since version 10 calls have `Receiver::Member` and Python's generic
//! bases and `@overload` stubs are read anew, so an older file's symbols are not
//! what a build extracts now; since version 11 a definition saves its owner (a Go
//! method's receiver type, a Rust `impl`'s type). Written atomically, mode 0600
//! (`crate::atomic`).

use std::hash::BuildHasher;
use std::path::Path;

use rayon::prelude::*;

use super::model::{SavedFile, SavedGraph};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::intern::Interner;
use crate::mapped::Mapped;

const MAGIC: &[u8; 8] = b"AIRGRAPH";
pub const FORMAT_VERSION: u32 = 11;
const HEADER: usize = 8 + 4 + 8 + 8;
/// Files per chunk.
pub const CHUNK: usize = 64;

/// The payload's tail: everything but the files and names, the byte length of
/// each chunk and of the names.
#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    root: String,
    skipped: Vec<(String, String)>,
    warnings: Vec<(String, String)>,
    chunks: Vec<u64>,
    names: u64,
}

/// What a graph file holds besides the symbols: the project root and what was not
/// (fully) indexed.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub root: String,
    pub graph: SavedGraph,
    pub skipped: Vec<(String, String)>,
    pub warnings: Vec<(String, String)>,
}

/// The hasher of the checksum (see the module documentation).
fn hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0xA1C4_E7A0)
}

/// One part's hash.
pub(super) fn part_sum(part: &[u8]) -> u64 {
    hasher().hash_one(part)
}

/// The checksum of a payload whose parts hash to `sums`, in order.
fn combined(sums: &[u64]) -> u64 {
    hasher().hash_one(sums)
}

/// The checksum of a payload made of `parts`, one after the other: each part
/// hashed on the thread pool.
fn checksum(parts: &[&[u8]]) -> u64 {
    let sums: Vec<u64> = parts.par_iter().map(|part| part_sum(part)).collect();
    combined(&sums)
}

/// The error for a graph file that cannot be read back, saying why.
pub fn corrupt(path: &Path, why: &str) -> Error {
    Error::Corrupt(format!(
        "{} is not a readable aircher-mem graph ({why}): rebuild it",
        path.display()
    ))
}

/// `Meta` as written: borrowed (serde encodes it exactly as `Meta`).
#[derive(serde::Serialize)]
struct MetaOut<'a> {
    root: &'a str,
    skipped: &'a [(String, String)],
    warnings: &'a [(String, String)],
    chunks: &'a [u64],
    names: u64,
}

/// Writes `saved` to `path`; returns the payload's checksum, which names this
/// version of the file (files saved beside it record it, see `load_with_sum`).
pub fn save(path: &Path, saved: &Saved) -> Result<u64> {
    let mut writer = Writer::create(path)?;
    for files in saved.graph.files.chunks(CHUNK) {
        writer.chunk(&encode_chunk(files)?)?;
    }
    let (file, sum) = writer.finish(
        &saved.graph.names,
        &saved.root,
        &saved.skipped,
        &saved.warnings,
    )?;
    file.commit()?;
    Ok(sum)
}

/// One run of `CHUNK` files (or fewer, the last) as `save` encodes it: a caller
/// that makes the saved files a run at a time (`KnowledgeGraph::saved_chunks`)
/// encodes them with this and hands them to a `Writer`, in order, byte for byte
/// as `save`.
pub fn encode_chunk(files: &[SavedFile]) -> Result<Vec<u8>> {
    postcard::to_stdvec(files).map_err(Error::Encode)
}

/// A graph file being written (see the module documentation): the chunks as they
/// come, then `finish`.
pub struct Writer {
    file: AtomicFile,
    chunks: Vec<u64>,
    sums: Vec<u64>,
}

impl Writer {
    /// Starts the file at `path` (in a temporary file, see `crate::atomic`).
    pub fn create(path: &Path) -> Result<Writer> {
        let mut file = AtomicFile::create(path)?;
        file.write_all(&[0; HEADER])?;
        Ok(Writer {
            file,
            chunks: Vec::new(),
            sums: Vec::new(),
        })
    }

    /// Appends the next encoded chunk (`encode_chunk`).
    pub fn chunk(&mut self, encoded: &[u8]) -> Result<()> {
        self.file.write_all(encoded)?;
        self.chunks.push(encoded.len() as u64);
        self.sums.push(part_sum(encoded));
        Ok(())
    }

    /// Writes the `names` the chunks' files use, the `Meta` and the header: the
    /// file, to `commit` (the caller may write a file tied to this one first),
    /// and its checksum.
    pub fn finish(
        mut self,
        names: &Interner,
        root: &str,
        skipped: &[(String, String)],
        warnings: &[(String, String)],
    ) -> Result<(AtomicFile, u64)> {
        let names = postcard::to_stdvec(&names.parts()).map_err(Error::Encode)?;
        self.file.write_all(&names)?;
        self.sums.push(part_sum(&names));
        let meta = MetaOut {
            root,
            skipped,
            warnings,
            chunks: &self.chunks,
            names: names.len() as u64,
        };
        let mut tail = postcard::to_stdvec(&meta).map_err(Error::Encode)?;
        let meta_length = tail.len() as u64;
        tail.extend_from_slice(&meta_length.to_le_bytes());
        self.file.write_all(&tail)?;
        self.sums.push(part_sum(&tail));
        let sum = combined(&self.sums);
        let length = self.chunks.iter().sum::<u64>() + names.len() as u64 + tail.len() as u64;
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        header.extend_from_slice(&length.to_le_bytes());
        header.extend_from_slice(&sum.to_le_bytes());
        self.file.write_at(0, &header)?;
        Ok((self.file, sum))
    }
}

pub fn load(path: &Path) -> Result<Saved> {
    load_with_sum(path).map(|(saved, _)| saved)
}

/// `load`, and the checksum `save` returned for the file.
/// The checksum a graph file's header names (what the files tied to it name),
/// its version checked; the payload is not read.
pub fn saved_sum(path: &Path) -> Result<u64> {
    let bytes = Mapped::open_unread(path)?;
    header_sum(&bytes, path)
}

/// The checksum in the header of a graph file's `bytes`, its magic and version checked.
fn header_sum(bytes: &[u8], path: &Path) -> Result<u64> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt(path, "no graph header"));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(Error::FormatVersion {
            what: "graph",
            path: path.display().to_string(),
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    Ok(u64::from_le_bytes(
        bytes[20..28].try_into().expect("8 bytes"),
    ))
}

pub fn load_with_sum(path: &Path) -> Result<(Saved, u64)> {
    let bytes = Mapped::open(path)?;
    let corrupt = |why: &str| corrupt(path, why);
    let sum = header_sum(&bytes, path)?;
    let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != length {
        return Err(corrupt("truncated"));
    }
    let decoding = |err: postcard::Error| corrupt(&err.to_string());
    // The meta, last, says where the chunks end: read before the checksum is
    // checked (a damaged meta fails to decode, or names chunks the checksum
    // refutes).
    let (front, word) = payload
        .split_at_checked(payload.len().saturating_sub(8))
        .filter(|(_, word)| word.len() == 8)
        .ok_or_else(|| corrupt("truncated"))?;
    let meta_length = u64::from_le_bytes(word.try_into().expect("8 bytes"));
    let chunks_end = usize::try_from(meta_length)
        .ok()
        .and_then(|meta| front.len().checked_sub(meta))
        .ok_or_else(|| corrupt("truncated"))?;
    let (mut rest, meta) = front.split_at(chunks_end);
    let Meta {
        root,
        skipped,
        warnings,
        chunks,
        names,
    } = postcard::from_bytes(meta).map_err(decoding)?;
    let mut parts: Vec<&[u8]> = Vec::with_capacity(chunks.len() + 2);
    for length in chunks.into_iter().chain([names]) {
        let (part, after) = rest
            .split_at_checked(usize::try_from(length).unwrap_or(usize::MAX))
            .ok_or_else(|| corrupt("chunks longer than the file"))?;
        parts.push(part);
        rest = after;
    }
    if !rest.is_empty() {
        return Err(corrupt("bytes between the names and the meta"));
    }
    parts.push(&payload[chunks_end..]);
    if checksum(&parts) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    let (chunks, names) = parts[..parts.len() - 1].split_at(parts.len() - 2);
    // The names (a hash table as large as the project's vocabulary) beside the files.
    let (names, decoded) = rayon::join(
        || -> Result<Interner> {
            let (text, ends): (String, Vec<usize>) =
                postcard::from_bytes(names[0]).map_err(decoding)?;
            Interner::from_parts(text, ends).ok_or_else(|| corrupt("names that do not fit"))
        },
        || -> Result<Vec<Vec<SavedFile>>> {
            chunks
                .par_iter()
                .map(|part| postcard::from_bytes(part))
                .collect::<std::result::Result<_, _>>()
                .map_err(decoding)
        },
    );
    let saved = Saved {
        root,
        graph: SavedGraph {
            names: names?,
            files: decoded?.into_iter().flatten().collect(),
        },
        skipped,
        warnings,
    };
    Ok((saved, sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{extract, KnowledgeGraph, Language};

    fn saved() -> Saved {
        let source = b"class A:\n    def f(self):\n        g()\n\ndef g():\n    pass\n";
        let graph =
            KnowledgeGraph::from_files(vec![("a.py".into(), extract(Language::Python, source))]);
        Saved {
            root: "/repo".into(),
            graph: graph.saved(),
            skipped: vec![("blob.py".into(), "binary (NUL byte)".into())],
            warnings: vec![],
        }
    }

    #[test]
    fn round_trip_and_damage() {
        let dir = std::env::temp_dir().join(format!("aircher-persist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("graph.bin");
        save(&path, &saved()).unwrap();
        assert_eq!(load(&path).unwrap(), saved());
        let good = std::fs::read(&path).unwrap();

        // A chunk's byte (the meta, last, names the chunks' lengths).
        let mut flipped = good.clone();
        flipped[HEADER + 1] ^= 0xFF;
        std::fs::write(&path, &flipped).unwrap();
        assert!(matches!(load(&path), Err(Error::Corrupt(m)) if m.contains("checksum")));

        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        assert!(matches!(load(&path), Err(Error::Corrupt(m)) if m.contains("truncated")));

        // Any one byte damaged after the version (length, checksum, meta, chunks).
        for at in 12..good.len() {
            let mut damaged = good.clone();
            damaged[at] ^= 0x41;
            std::fs::write(&path, &damaged).unwrap();
            assert!(matches!(load(&path), Err(Error::Corrupt(_))), "byte {at}");
        }

        let mut old = good.clone();
        old[8..12].copy_from_slice(&0u32.to_le_bytes());
        std::fs::write(&path, &old).unwrap();
        assert!(matches!(
            load(&path),
            Err(Error::FormatVersion {
                found: 0,
                expected: FORMAT_VERSION,
                ..
            })
        ));

        std::fs::write(&path, b"not a graph").unwrap();
        assert!(matches!(load(&path), Err(Error::Corrupt(_))));
        let absent = dir.join("absent.bin");
        match load(&absent) {
            Err(err @ Error::Missing { .. }) => {
                assert!(err.to_string().contains(&absent.display().to_string()))
            }
            other => panic!("expected Missing, got {other:?}"),
        }
        // A folder is there but cannot be read as a file: an Io error with its cause.
        match load(&dir) {
            Err(err @ Error::Io { .. }) => {
                assert!(std::error::Error::source(&err).is_some());
                assert!(err.to_string().contains(&dir.display().to_string()));
            }
            other => panic!("expected Io, got {other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
