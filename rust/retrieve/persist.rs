//! The file discipline of the retrieval indexes, the graph file's (see
//! `graph::persist`): magic (8 bytes), format version (u32 LE), generation (u64 LE),
//! payload length (u64 LE), foldhash of version, generation and payload (u64 LE),
//! then the payload. Written atomically, mode 0600 (`crate::atomic`).
//!
//! The generation is opaque here: the caller stores a number that ties an index file
//! to the graph file it was saved with.

use std::hash::BuildHasher;
use std::ops::RangeInclusive;
use std::path::Path;

use crate::atomic::write_atomic;
use crate::error::{Error, Result};

const HEADER: usize = 8 + 4 + 8 + 8 + 8;

fn checksum(version: u32, generation: u64, payload: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0xA1C4_E7A1).hash_one((version, generation, payload))
}

/// The error for an index file that cannot be read back, saying why.
pub fn corrupt(path: &Path, what: &str, why: &str) -> Error {
    Error::Corrupt(format!(
        "{} is not a readable aircher-mem {what} ({why}): rebuild it",
        path.display()
    ))
}

/// Writes `payload` to `path` under the header described above (see
/// `crate::atomic`).
pub fn write(
    path: &Path,
    magic: &[u8; 8],
    version: u32,
    generation: u64,
    payload: &[u8],
) -> Result<()> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(magic);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&generation.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(&checksum(version, generation, payload).to_le_bytes());
    write_atomic(path, &[&header, payload])
}

/// Reads a file written by [`write`] with the same `magic` and `version`: its
/// payload and generation. `what` names the kind of file in errors ("lexical
/// index").
pub fn read(path: &Path, magic: &[u8; 8], version: u32, what: &str) -> Result<(Vec<u8>, u64)> {
    let (payload, generation, _) = read_versions(path, magic, version..=version, what)?;
    Ok((payload, generation))
}

/// Reads a file written by [`write`] with the same `magic` and a version in
/// `versions` (the ones this build still reads): its payload, generation and
/// version.
pub fn read_versions(
    path: &Path,
    magic: &[u8; 8],
    versions: RangeInclusive<u32>,
    what: &str,
) -> Result<(Vec<u8>, u64, u32)> {
    let mut bytes = std::fs::read(path).map_err(|err| Error::io("read", path, err))?;
    let corrupt = |why: &str| corrupt(path, what, why);
    if bytes.len() < HEADER || &bytes[..8] != magic {
        return Err(corrupt("no header"));
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !versions.contains(&version) {
        let reads = match (versions.start(), versions.end()) {
            (first, last) if first == last => format!("version {first}"),
            (first, last) => format!("versions {first} to {last}"),
        };
        return Err(corrupt(&format!(
            "format version {version}, this aircher-mem reads {reads}"
        )));
    }
    let generation = word(12);
    let length = word(20);
    let sum = word(28);
    if (bytes.len() - HEADER) as u64 != length {
        return Err(corrupt("truncated"));
    }
    if checksum(version, generation, &bytes[HEADER..]) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    bytes.drain(..HEADER);
    Ok((bytes, generation, version))
}

/// Reads a little-endian length-prefixed section: the `u64` length, then that many
/// bytes. `None` if `bytes` is too short.
pub fn split_section(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (head, rest) = bytes.split_at_checked(8)?;
    let length = u64::from_le_bytes(head.try_into().expect("8 bytes"));
    rest.split_at_checked(usize::try_from(length).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: &[u8; 8] = b"AIRTESTS";

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        write(&path, MAGIC, 1, 7, b"payload").unwrap();
        assert_eq!(
            read(&path, MAGIC, 1, "test").unwrap(),
            (b"payload".to_vec(), 7)
        );
    }

    #[test]
    fn damage_is_corrupt_and_says_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        write(&path, MAGIC, 2, 99, b"some payload bytes").unwrap();
        let good = std::fs::read(&path).unwrap();
        let expect = |bytes: &[u8], why: &str| {
            std::fs::write(&path, bytes).unwrap();
            match read(&path, MAGIC, 2, "test index") {
                Err(Error::Corrupt(m)) => {
                    assert!(m.contains(why) && m.contains("rebuild it"), "{m}");
                    assert!(m.contains("test index"), "{m}");
                }
                other => panic!("expected Corrupt({why}), got {other:?}"),
            }
        };
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        expect(&flipped, "checksum");
        let mut generation = good.clone();
        generation[12] ^= 1;
        expect(&generation, "checksum");
        expect(&good[..good.len() - 1], "truncated");
        expect(&good[..10], "no header");
        expect(b"AIRGRAPH and more bytes than a header has", "no header");
        let mut version = good.clone();
        version[8] = 9;
        expect(&version, "format version 9");
        assert!(matches!(
            read(&dir.path().join("absent"), MAGIC, 2, "test"),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(
            read(dir.path(), MAGIC, 2, "test"),
            Err(Error::Io { .. })
        ));
    }

    #[test]
    fn a_range_of_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        for version in [1, 2] {
            write(&path, MAGIC, version, 3, b"payload").unwrap();
            assert_eq!(
                read_versions(&path, MAGIC, 1..=2, "test").unwrap(),
                (b"payload".to_vec(), 3, version)
            );
        }
        write(&path, MAGIC, 3, 3, b"payload").unwrap();
        match read_versions(&path, MAGIC, 1..=2, "test") {
            Err(Error::Corrupt(m)) => assert!(
                m.contains("format version 3, this aircher-mem reads versions 1 to 2"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        match read(&path, MAGIC, 2, "test") {
            Err(Error::Corrupt(m)) => assert!(m.contains("reads version 2)"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sections() {
        let mut bytes = 3u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"abcde");
        assert_eq!(split_section(&bytes), Some((&b"abc"[..], &b"de"[..])));
        assert_eq!(split_section(&bytes[..9]), None);
        assert_eq!(split_section(b"1234"), None);
    }
}
