//! Saving and loading a graph. What is stored is each file's extracted symbols and
//! its links (what its imports resolved to, its edges), so loading neither parses
//! nor links again.
//!
//! Layout: magic `AIRGRAPH`, format version (u32 LE), payload length (u64 LE),
//! checksum of the payload (u64 LE), then the payload: the length of the `Meta`
//! (u64 LE), the `Meta`, then the files in chunks of `CHUNK`, each encoded on its
//! own (postcard) so that chunks are encoded and decoded in parallel. The checksum
//! is a foldhash of the parts' foldhashes (the length and `Meta` one part, each
//! chunk one), so that the parts are written as they are, never copied into one
//! buffer (version 5 hashed the payload whole: on the Linux kernel a save held a
//! 611 MB copy of it). Written atomically, mode 0600 (`crate::atomic`).

use std::hash::BuildHasher;
use std::path::Path;

use rayon::prelude::*;

use super::model::SavedFile;
use crate::atomic::write_atomic;
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"AIRGRAPH";
pub const FORMAT_VERSION: u32 = 6;
const HEADER: usize = 8 + 4 + 8 + 8;
/// Files per chunk.
pub const CHUNK: usize = 64;

/// The payload's head: everything but the files, and the byte length of each chunk.
#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    root: String,
    skipped: Vec<(String, String)>,
    warnings: Vec<(String, String)>,
    chunks: Vec<u64>,
}

/// What a graph file holds besides the symbols: the project root and what was not
/// (fully) indexed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    pub root: String,
    pub files: Vec<SavedFile>,
    pub skipped: Vec<(String, String)>,
    pub warnings: Vec<(String, String)>,
}

/// The checksum of a payload made of `parts`, one after the other (see the
/// module documentation): each part hashed on the thread pool.
fn checksum(parts: &[&[u8]]) -> u64 {
    let hash = foldhash::fast::FixedState::with_seed(0xA1C4_E7A0);
    let each: Vec<u64> = parts.par_iter().map(|part| hash.hash_one(part)).collect();
    hash.hash_one(each)
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
    chunks: Vec<u64>,
}

/// Writes `saved` to `path`; returns the payload's checksum, which names this
/// version of the file (files saved beside it record it, see `load_with_sum`).
pub fn save(path: &Path, saved: &Saved) -> Result<u64> {
    let chunks: Vec<Vec<u8>> = saved
        .files
        .par_chunks(CHUNK)
        .map(encode_chunk)
        .collect::<Result<_>>()?;
    let (payload, sum) = payload(&saved.root, &saved.skipped, &saved.warnings, chunks)?;
    write_payload(path, &payload, sum)?;
    Ok(sum)
}

/// One run of `CHUNK` files (or fewer, the last) as `save` encodes it: a caller
/// that makes the saved files a run at a time (`KnowledgeGraph::saved_chunks`)
/// encodes them with this and `payload`, and writes them with `write_payload`, byte for
/// byte as `save`.
pub fn encode_chunk(files: &[SavedFile]) -> Result<Vec<u8>> {
    postcard::to_stdvec(files).map_err(Error::Encode)
}

/// The payload of a graph file, in its parts: the meta with its length before it,
/// then the encoded runs of files in order (written as they are, not copied).
pub struct Payload {
    head: Vec<u8>,
    chunks: Vec<Vec<u8>>,
}

impl Payload {
    fn parts(&self) -> Vec<&[u8]> {
        std::iter::once(&self.head)
            .chain(&self.chunks)
            .map(Vec::as_slice)
            .collect()
    }
}

/// The payload of a graph file (the meta, then the encoded runs of files in order)
/// and its checksum.
pub fn payload(
    root: &str,
    skipped: &[(String, String)],
    warnings: &[(String, String)],
    chunks: Vec<Vec<u8>>,
) -> Result<(Payload, u64)> {
    let meta = MetaOut {
        root,
        skipped,
        warnings,
        chunks: chunks.iter().map(|c| c.len() as u64).collect(),
    };
    let meta = postcard::to_stdvec(&meta).map_err(Error::Encode)?;
    let mut head = Vec::with_capacity(8 + meta.len());
    head.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    head.extend_from_slice(&meta);
    let payload = Payload { head, chunks };
    let sum = checksum(&payload.parts());
    Ok((payload, sum))
}

/// Writes a payload from `payload` (with its checksum) to `path` under the header.
pub fn write_payload(path: &Path, payload: &Payload, sum: u64) -> Result<()> {
    let mut parts = payload.parts();
    let length: usize = parts.iter().map(|part| part.len()).sum();
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&(length as u64).to_le_bytes());
    header.extend_from_slice(&sum.to_le_bytes());
    parts.insert(0, &header);
    write_atomic(path, &parts)
}

pub fn load(path: &Path) -> Result<Saved> {
    load_with_sum(path).map(|(saved, _)| saved)
}

/// `load`, and the checksum `save` returned for the file.
pub fn load_with_sum(path: &Path) -> Result<(Saved, u64)> {
    let bytes = std::fs::read(path).map_err(|err| Error::io("read", path, err))?;
    let corrupt = |why: &str| corrupt(path, why);
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt("no graph header"));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(Error::FormatVersion {
            path: path.display().to_string(),
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let sum = u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != length {
        return Err(corrupt("truncated"));
    }
    let decoding = |err: postcard::Error| corrupt(&err.to_string());
    let meta_length = payload
        .get(..8)
        .map(|word| u64::from_le_bytes(word.try_into().expect("8 bytes")))
        .ok_or_else(|| corrupt("truncated"))?;
    let (head, mut rest) = payload
        .split_at_checked(
            usize::try_from(meta_length)
                .unwrap_or(usize::MAX)
                .saturating_add(8),
        )
        .ok_or_else(|| corrupt("truncated"))?;
    // The meta says where the chunks end: read before the checksum is checked
    // (a damaged meta fails to decode, or names chunks the checksum refutes).
    let Meta {
        root,
        skipped,
        warnings,
        chunks,
    } = postcard::from_bytes(&head[8..]).map_err(decoding)?;
    let mut parts: Vec<&[u8]> = Vec::with_capacity(chunks.len() + 1);
    parts.push(head);
    for length in chunks {
        let (part, after) = rest
            .split_at_checked(usize::try_from(length).unwrap_or(usize::MAX))
            .ok_or_else(|| corrupt("truncated"))?;
        parts.push(part);
        rest = after;
    }
    if !rest.is_empty() {
        return Err(corrupt("bytes after the last chunk"));
    }
    if checksum(&parts) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    let decoded: Vec<Vec<SavedFile>> = parts[1..]
        .par_iter()
        .map(|part| postcard::from_bytes(part))
        .collect::<std::result::Result<_, _>>()
        .map_err(decoding)?;
    let saved = Saved {
        root,
        files: decoded.into_iter().flatten().collect(),
        skipped,
        warnings,
    };
    Ok((saved, sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{extract, Language, Links};

    fn saved() -> Saved {
        Saved {
            root: "/repo".into(),
            files: vec![(
                "a.py".into(),
                extract(
                    Language::Python,
                    b"class A:\n    def f(self):\n        g()\n\ndef g():\n    pass\n",
                ),
                Links::default(),
            )],
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

        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xFF;
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
