//! The file discipline of the retrieval indexes, the graph file's (see
//! `graph::persist`): magic (8 bytes), format version (u32 LE), generation (u64 LE),
//! payload length (u64 LE), checksum (u64 LE), then the payload. Written
//! atomically, mode 0600 (`crate::atomic`).
//!
//! The checksum is a foldhash of version, generation and either the payload whole
//! (`write`) or the foldhashes of its blocks of `BLOCK` bytes (a `Writer`, which
//! streams a payload to the file a part at a time, never holding it whole (a lexical index is the largest file of a
//! store); a reader hashes the blocks in parallel). A file of another format
//! version is `Error::FormatVersion`: the caller rebuilds it.
//!
//! The generation is opaque here: the caller stores a number that ties an index file
//! to the graph file it was saved with.

use std::hash::BuildHasher;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::postings::{Backing, Shared};
use crate::atomic::{write_atomic, AtomicFile};
use crate::error::{Error, Result};
use crate::mapped::Mapped;

const HEADER: usize = 8 + 4 + 8 + 8 + 8;

/// Bytes of a block of a blocked checksum.
const BLOCK: usize = 4 << 20;
/// Bytes of a block of a paged file (`Writer::create_paged`), each checked when
/// it is first read (`Paged::get`).
pub const PAGE: usize = 64 << 10;

fn hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0xA1C4_E7A1)
}

fn checksum(version: u32, generation: u64, payload: &[u8]) -> u64 {
    hasher().hash_one((version, generation, payload))
}

fn blocked_checksum(version: u32, generation: u64, payload: &[u8]) -> u64 {
    let sums: Vec<u64> = payload
        .par_chunks(BLOCK)
        .map(|block| hasher().hash_one(block))
        .collect();
    of_blocks(version, generation, &sums)
}

fn of_blocks(version: u32, generation: u64, sums: &[u64]) -> u64 {
    hasher().hash_one((version, generation, sums))
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
    let sum = checksum(version, generation, payload);
    let rest = after_magic(version, generation, payload.len() as u64, sum);
    write_atomic(path, &[magic, &rest, payload])
}

/// The header after the magic.
fn after_magic(version: u32, generation: u64, length: u64, sum: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER - 8);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&generation.to_le_bytes());
    header.extend_from_slice(&length.to_le_bytes());
    header.extend_from_slice(&sum.to_le_bytes());
    header
}

/// A file with a blocked checksum being written: the payload as it comes
/// (`write_all`), then `finish` with the generation (which may be known only
/// then).
pub struct Writer {
    file: AtomicFile,
    version: u32,
    block: Vec<u8>,
    sums: Vec<u64>,
    length: u64,
    /// `BLOCK`, or `PAGE` for a paged file, whose block sums follow the payload.
    block_size: usize,
}

impl Writer {
    /// Starts the file at `path` (in a temporary file, see `crate::atomic`).
    pub fn create(path: &Path, magic: &[u8; 8], version: u32) -> Result<Writer> {
        let mut file = AtomicFile::create(path)?;
        file.write_all(magic)?;
        file.write_all(&[0; HEADER - 8])?;
        Ok(Writer {
            file,
            version,
            block: Vec::with_capacity(BLOCK),
            sums: Vec::new(),
            length: 0,
            block_size: BLOCK,
        })
    }

    /// A paged file at `path`: the sum of each block of `PAGE` bytes is written
    /// after the payload, and the header's checksum is over those sums, so that a
    /// reader checks a block only when it first reads it (`Opened::paged`).
    pub fn create_paged(path: &Path, magic: &[u8; 8], version: u32) -> Result<Writer> {
        let mut writer = Writer::create(path, magic, version)?;
        writer.block = Vec::with_capacity(PAGE);
        writer.block_size = PAGE;
        Ok(writer)
    }

    /// Appends `bytes` to the payload.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.length += bytes.len() as u64;
        while !bytes.is_empty() {
            let room = self.block_size - self.block.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.block.extend_from_slice(now);
            bytes = later;
            if self.block.len() == self.block_size {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        self.sums.push(hasher().hash_one(&self.block[..]));
        self.file.write_all(&self.block)?;
        self.block.clear();
        Ok(())
    }

    /// Writes the rest of the payload and the header: the file, to `commit`.
    pub fn finish(mut self, generation: u64) -> Result<AtomicFile> {
        if !self.block.is_empty() {
            self.flush_block()?;
        }
        if self.block_size == PAGE {
            let sums: Vec<u8> = self.sums.iter().flat_map(|s| s.to_le_bytes()).collect();
            self.file.write_all(&sums)?;
        }
        let sum = of_blocks(self.version, generation, &self.sums);
        let header = after_magic(self.version, generation, self.length, sum);
        self.file.write_at(8, &header)?;
        Ok(self.file)
    }
}

/// [`write`] with a blocked checksum, for tests: what a `Writer` writes.
#[cfg(test)]
pub(crate) fn write_blocked(path: &Path, file: (&[u8; 8], u32, u64), payload: &[u8]) -> Result<()> {
    let (magic, version, generation) = file;
    let mut writer = Writer::create(path, magic, version)?;
    writer.write_all(payload)?;
    writer.finish(generation)?.commit()
}

/// Reads a file written by [`write`] with the same `magic` and `version`: its
/// payload (mapped, see `crate::mapped`) and generation. `what` names the kind
/// of file in errors ("vector index").
pub fn read(
    path: &Path,
    magic: &[u8; 8],
    version: u32,
    what: &'static str,
) -> Result<(Mapped, u64)> {
    let opened = Opened::open(path, magic, version, what)?;
    opened.populate();
    opened.checked(what, false)
}

/// A file written by [`write`] or a `Writer`, mapped (its pages not read in) and
/// its header read, its payload not checked yet (`checked`): what a caller that
/// reads the payload later holds (`retrieve::lexical::LexicalFile`).
#[derive(Debug)]
pub struct Opened {
    bytes: Mapped,
    version: u32,
    generation: u64,
    sum: u64,
}

impl Opened {
    /// Maps the file at `path` and reads its header: an error unless it has
    /// `magic`, `version` (`Error::FormatVersion` for another) and the length its
    /// header says.
    pub fn open(path: &Path, magic: &[u8; 8], version: u32, what: &'static str) -> Result<Opened> {
        Opened::open_with(path, (magic, version, what), false)
    }

    /// `open` of a paged file (`Writer::create_paged`): its block sums follow
    /// the payload.
    pub fn open_paged(
        path: &Path,
        magic: &[u8; 8],
        version: u32,
        what: &'static str,
    ) -> Result<Opened> {
        Opened::open_with(path, (magic, version, what), true)
    }

    fn open_with(
        path: &Path,
        (magic, version, what): (&[u8; 8], u32, &'static str),
        paged: bool,
    ) -> Result<Opened> {
        let bytes = Mapped::open_unread(path)?;
        let corrupt = |why: &str| corrupt(path, what, why);
        if bytes.len() < HEADER || &bytes[..8] != magic {
            return Err(corrupt("no header"));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let found = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if found != version {
            return Err(Error::FormatVersion {
                what,
                path: path.display().to_string(),
                found,
                expected: version,
            });
        }
        let (generation, length, sum) = (word(12), word(20), word(28));
        let trailer = match paged {
            true => length.div_ceil(PAGE as u64).checked_mul(8),
            false => Some(0),
        };
        if trailer.and_then(|t| t.checked_add(length)) != Some((bytes.len() - HEADER) as u64) {
            return Err(corrupt("truncated"));
        }
        Ok(Opened {
            bytes,
            version,
            generation,
            sum,
        })
    }

    /// The generation the header names (not checked yet: see `checked`).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Why the file can no longer be read as it was opened (`Mapped::changed`).
    pub fn changed(&self) -> Option<Error> {
        self.bytes.changed()
    }

    /// Reads the pages in (`Mapped::populate`).
    pub fn populate(&self) {
        self.bytes.populate();
    }

    /// The payload and generation, once the payload is checked against the
    /// header's checksum (a blocked one if `blocked`: a file a `Writer` wrote).
    pub fn checked(self, what: &str, blocked: bool) -> Result<(Mapped, u64)> {
        let Opened {
            bytes,
            version,
            generation,
            sum,
        } = self;
        let payload = &bytes[HEADER..];
        let found = if blocked {
            blocked_checksum(version, generation, payload)
        } else {
            checksum(version, generation, payload)
        };
        if found != sum {
            return Err(corrupt(bytes.path(), what, "checksum mismatch"));
        }
        Ok((bytes.skip(HEADER), generation))
    }
}

impl Opened {
    /// The payload of a paged file, once the header's checksum of its block sums
    /// checks out: each block is checked against its sum when first read.
    pub fn paged(self, what: &'static str) -> Result<Paged> {
        let Opened {
            bytes,
            version,
            generation,
            sum,
        } = self;
        let path = bytes.path().to_path_buf();
        let all = &bytes[HEADER..];
        let length = all.len() / (PAGE + 8) * PAGE + (all.len() % (PAGE + 8)).saturating_sub(8);
        let sums: Vec<u64> = all[length..]
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        if sums.len() != length.div_ceil(PAGE) || of_blocks(version, generation, &sums) != sum {
            return Err(corrupt(&path, what, "checksum mismatch"));
        }
        let payload = bytes.skip(HEADER);
        Ok(Paged::new(
            Backing::File(payload),
            length,
            Some(sums),
            (path, what),
        ))
    }
}

/// A payload whose blocks of `PAGE` bytes are checked against their sums when
/// first read (`get`), or one in memory that is trusted as it is.
#[derive(Debug)]
pub struct Paged {
    shared: Shared,
    sums: Option<Vec<u64>>,
    /// A bit per block: checked already.
    checked: Box<[AtomicU64]>,
    path: PathBuf,
    what: &'static str,
}

impl Paged {
    /// The first `length` bytes of `backing`, checked against `sums` (or
    /// trusted: `None`).
    pub(super) fn new(
        backing: Backing,
        length: usize,
        sums: Option<Vec<u64>>,
        (path, what): (PathBuf, &'static str),
    ) -> Paged {
        let words = sums.as_ref().map_or(0, |s| s.len().div_ceil(64));
        Paged {
            shared: Shared::whole(backing).part(0..length),
            sums,
            checked: (0..words).map(|_| AtomicU64::new(0)).collect(),
            path,
            what,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.shared.bytes().len()
    }

    /// The whole payload, unchecked (for a caller that checked what it reads).
    pub(super) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The error for a payload that is not what it should be.
    pub fn corrupt(&self, why: &str) -> Error {
        corrupt(&self.path, self.what, why)
    }

    /// The bytes at `range`, once every block they are in checks out against its
    /// sum; a `Corrupt` error if it does not, or if `range` is not in the payload.
    pub fn get(&self, range: Range<usize>) -> Result<&[u8]> {
        let bytes = self.shared.bytes();
        let Some(part) = bytes.get(range.clone()) else {
            return Err(self.corrupt("an offset past the end"));
        };
        let Some(sums) = &self.sums else {
            return Ok(part);
        };
        if range.is_empty() {
            return Ok(part);
        }
        let blocks = range.start / PAGE..(range.end - 1) / PAGE + 1;
        let is_checked = |block: usize| {
            self.checked[block / 64].load(Ordering::Relaxed) & (1 << (block % 64)) != 0
        };
        if blocks.clone().all(is_checked) {
            return Ok(part);
        }
        let check = |block: usize| -> bool {
            if is_checked(block) {
                return true;
            }
            let data = &bytes[block * PAGE..((block + 1) * PAGE).min(bytes.len())];
            let good = hasher().hash_one(data) == sums[block];
            if good {
                self.checked[block / 64].fetch_or(1 << (block % 64), Ordering::Relaxed);
            }
            good
        };
        let good = if blocks.len() > 64 {
            blocks.into_par_iter().all(check)
        } else {
            blocks.into_iter().all(check)
        };
        match good {
            true => Ok(part),
            false => Err(self.corrupt("checksum mismatch")),
        }
    }
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
            read(&path, MAGIC, 1, "test")
                .map(|(p, g)| (p.to_vec(), g))
                .unwrap(),
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
        std::fs::write(&path, &version).unwrap();
        match read(&path, MAGIC, 2, "test index") {
            Err(err @ Error::FormatVersion { .. }) => assert_eq!(
                err.to_string(),
                format!(
                    "{} has test index format version 9; this aircher-mem reads version 2: \
                     rebuild the test index",
                    path.display()
                )
            ),
            other => panic!("expected FormatVersion, got {other:?}"),
        }
        assert!(matches!(
            read(&dir.path().join("absent"), MAGIC, 2, "test"),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(
            read(dir.path(), MAGIC, 2, "test"),
            Err(Error::Io { .. })
        ));
    }

    /// A payload streamed in pieces of any size, across block boundaries, reads
    /// back whole; damage anywhere after the magic is refused; the blocked
    /// checksum is not the whole one.
    #[test]
    fn blocked_round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        let payload: Vec<u8> = (0..2 * BLOCK + 12_345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut writer = Writer::create(&path, MAGIC, 3).unwrap();
        for piece in payload.chunks(BLOCK / 3 + 17) {
            writer.write_all(piece).unwrap();
        }
        writer.finish(41).unwrap().commit().unwrap();
        let read = |path: &Path| {
            Opened::open(path, MAGIC, 3, "test")
                .and_then(|opened| opened.checked("test", true))
                .map(|(p, g)| (p.to_vec(), g))
        };
        assert_eq!(read(&path).unwrap(), (payload.clone(), 41));
        let good = std::fs::read(&path).unwrap();
        write_blocked(&path, (MAGIC, 3, 41), &payload).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), good);
        for at in [12, 20, 28, 36, HEADER + BLOCK + 5, good.len() - 1] {
            let mut damaged = good.clone();
            damaged[at] ^= 0x10;
            std::fs::write(&path, &damaged).unwrap();
            assert!(matches!(read(&path), Err(Error::Corrupt(_))), "byte {at}");
        }
        // Read as a file with the whole checksum, it does not check out.
        std::fs::write(&path, &good).unwrap();
        assert!(matches!(
            super::read(&path, MAGIC, 3, "test"),
            Err(Error::Corrupt(m)) if m.contains("checksum")
        ));
        // Nor does a file written whole, read as blocked.
        write(&path, MAGIC, 3, 41, &payload).unwrap();
        assert!(matches!(read(&path), Err(Error::Corrupt(m)) if m.contains("checksum")));
        // An empty payload.
        write_blocked(&path, (MAGIC, 3, 2), b"").unwrap();
        assert_eq!(read(&path).unwrap(), (vec![], 2));
    }

    /// Only the version asked for is read: another, older or newer, is
    /// `FormatVersion` (whatever the rest of the file holds), not corrupt.
    #[test]
    fn another_version_is_a_format_version_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        for found in [1, 3, u32::MAX] {
            write(&path, MAGIC, found, 3, b"payload").unwrap();
            match read(&path, MAGIC, 2, "test") {
                Err(Error::FormatVersion {
                    what: "test",
                    found: f,
                    expected: 2,
                    ..
                }) => assert_eq!(f, found),
                other => panic!("{other:?}"),
            }
        }
        write(&path, MAGIC, 2, 3, b"payload").unwrap();
        assert_eq!(
            read(&path, MAGIC, 2, "test")
                .map(|(p, g)| (p.to_vec(), g))
                .unwrap(),
            (b"payload".to_vec(), 3)
        );
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
