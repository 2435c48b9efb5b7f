//! Saving and loading a graph. What is stored is each file's extracted symbols and
//! its links (what its imports resolved to, its edges), so loading neither parses
//! nor links again.
//!
//! Layout: magic `AIRGRAPH`, format version (u32 LE), payload length (u64 LE),
//! foldhash of the payload (u64 LE), then the payload: the length of the `Meta`
//! (u64 LE), the `Meta`, then the files in chunks of `CHUNK`, each encoded on its
//! own (postcard) so that chunks are encoded and decoded in parallel. Written
//! atomically, mode 0600 (`crate::atomic`).

use std::hash::BuildHasher;
use std::path::Path;

use rayon::prelude::*;

use super::model::SavedFile;
use crate::atomic::write_atomic;
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"AIRGRAPH";
pub const FORMAT_VERSION: u32 = 5;
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

fn checksum(payload: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0xA1C4_E7A0).hash_one(payload)
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

/// The payload of a graph file (the meta, then the encoded runs of files in order)
/// and its checksum. Each run is freed once copied in, so that the runs and the
/// payload together hold the encoded files about once.
pub fn payload(
    root: &str,
    skipped: &[(String, String)],
    warnings: &[(String, String)],
    chunks: Vec<Vec<u8>>,
) -> Result<(Vec<u8>, u64)> {
    let meta = MetaOut {
        root,
        skipped,
        warnings,
        chunks: chunks.iter().map(|c| c.len() as u64).collect(),
    };
    let meta = postcard::to_stdvec(&meta).map_err(Error::Encode)?;
    let mut payload =
        Vec::with_capacity(8 + meta.len() + chunks.iter().map(Vec::len).sum::<usize>());
    payload.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    payload.extend_from_slice(&meta);
    for chunk in chunks {
        payload.extend_from_slice(&chunk);
    }
    let sum = checksum(&payload);
    Ok((payload, sum))
}

/// Writes a payload from `payload` (with its checksum) to `path` under the header.
pub fn write_payload(path: &Path, payload: &[u8], sum: u64) -> Result<()> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(&sum.to_le_bytes());
    write_atomic(path, &[&header, payload])
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
    if checksum(payload) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    let decoding = |err: postcard::Error| corrupt(&err.to_string());
    let (head, rest) = payload
        .split_at_checked(8)
        .ok_or_else(|| corrupt("truncated"))?;
    let meta_length = u64::from_le_bytes(head.try_into().expect("8 bytes"));
    let (meta, mut rest) = rest
        .split_at_checked(usize::try_from(meta_length).unwrap_or(usize::MAX))
        .ok_or_else(|| corrupt("truncated"))?;
    let Meta {
        root,
        skipped,
        warnings,
        chunks,
    } = postcard::from_bytes(meta).map_err(decoding)?;
    let mut parts: Vec<&[u8]> = Vec::with_capacity(chunks.len());
    for length in chunks {
        let (part, after) = rest
            .split_at_checked(usize::try_from(length).unwrap_or(usize::MAX))
            .ok_or_else(|| corrupt("truncated"))?;
        parts.push(part);
        rest = after;
    }
    let decoded: Vec<Vec<SavedFile>> = parts
        .into_par_iter()
        .map(postcard::from_bytes)
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
