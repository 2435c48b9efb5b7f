//! The file discipline of the retrieval indexes, the graph file's (see
//! `graph::persist`): magic (8 bytes), format version (u32 LE), generation (u64 LE),
//! payload length (u64 LE), checksum (u64 LE), then the payload, then the foldhash
//! of each block of `PAGE` bytes of the payload (u64 LE each). The header's checksum
//! is a foldhash of version, generation and those block sums, so a reader checks
//! the header and the sums when it opens the file and each block only when it first
//! reads it (`Paged::get`): an index is searched in its file without reading it
//! whole first. A `Writer` streams a payload to the file a part at a time, never
//! holding it whole (a lexical index is the largest file of a store). Written
//! atomically, mode 0600 (`crate::atomic`). A file of another format version is
//! `Error::FormatVersion`: the caller rebuilds it.
//!
//! The generation is opaque here: the caller stores a number that ties an index file
//! to the graph file it was saved with.

use std::hash::BuildHasher;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::postings::{Backing, Shared};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::mapped::Mapped;

const HEADER: usize = 8 + 4 + 8 + 8 + 8;

/// Bytes of a block of the payload, each checked when it is first read
/// (`Paged::get`).
pub const PAGE: usize = 64 << 10;

fn hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0xA1C4_E7A1)
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

/// The header after the magic.
fn after_magic(version: u32, generation: u64, length: u64, sum: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER - 8);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&generation.to_le_bytes());
    header.extend_from_slice(&length.to_le_bytes());
    header.extend_from_slice(&sum.to_le_bytes());
    header
}

/// A file being written: the payload as it comes (`write_all`), then `finish`
/// with the generation (which may be known only then).
pub struct Writer {
    file: AtomicFile,
    version: u32,
    block: Vec<u8>,
    sums: Vec<u64>,
    length: u64,
}

impl Writer {
    /// Starts the file at `path` (in a temporary file, see `crate::atomic`).
    pub fn create_paged(path: &Path, magic: &[u8; 8], version: u32) -> Result<Writer> {
        let mut file = AtomicFile::create(path)?;
        file.write_all(magic)?;
        file.write_all(&[0; HEADER - 8])?;
        Ok(Writer {
            file,
            version,
            block: Vec::with_capacity(PAGE),
            sums: Vec::new(),
            length: 0,
        })
    }

    /// Appends `bytes` to the payload.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.length += bytes.len() as u64;
        while !bytes.is_empty() {
            let room = PAGE - self.block.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.block.extend_from_slice(now);
            bytes = later;
            if self.block.len() == PAGE {
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

    /// Writes the rest of the payload, the block sums and the header: the file,
    /// to `commit`.
    pub fn finish(mut self, generation: u64) -> Result<AtomicFile> {
        if !self.block.is_empty() {
            self.flush_block()?;
        }
        let sums: Vec<u8> = self.sums.iter().flat_map(|s| s.to_le_bytes()).collect();
        self.file.write_all(&sums)?;
        let sum = of_blocks(self.version, generation, &self.sums);
        let header = after_magic(self.version, generation, self.length, sum);
        self.file.write_at(8, &header)?;
        Ok(self.file)
    }
}

/// A file a `Writer` wrote, mapped (its pages not read in) and its header read,
/// its block sums not checked yet (`paged`): what a caller that reads the payload
/// later holds (`retrieve::lexical::LexicalFile`).
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
    /// header says, its block sums after the payload.
    pub fn open_paged(
        path: &Path,
        magic: &[u8; 8],
        version: u32,
        what: &'static str,
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
        let trailer = length.div_ceil(PAGE as u64).checked_mul(8);
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

    /// The generation the header names (not checked yet: see `paged`).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Why the file can no longer be read as it was opened (`Mapped::changed`).
    pub fn changed(&self) -> Option<Error> {
        self.bytes.changed()
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

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: &[u8; 8] = b"AIRTESTS";

    fn write(path: &Path, version: u32, generation: u64, payload: &[u8], piece: usize) {
        let mut writer = Writer::create_paged(path, MAGIC, version).unwrap();
        for part in payload.chunks(piece.max(1)) {
            writer.write_all(part).unwrap();
        }
        writer.finish(generation).unwrap().commit().unwrap();
    }

    fn read(path: &Path, version: u32) -> Result<(Vec<u8>, u64)> {
        let opened = Opened::open_paged(path, MAGIC, version, "test index")?;
        let generation = opened.generation();
        let paged = opened.paged("test index")?;
        Ok((paged.get(0..paged.len())?.to_vec(), generation))
    }

    /// A payload streamed in pieces of any size, across block boundaries, reads
    /// back whole; an empty one too.
    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        let payload: Vec<u8> = (0..2 * PAGE + 12_345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        for piece in [1, PAGE / 3 + 17, 4 * PAGE] {
            write(&path, 3, 41, &payload, piece);
            assert_eq!(read(&path, 3).unwrap(), (payload.clone(), 41));
        }
        write(&path, 3, 2, b"", 1);
        assert_eq!(read(&path, 3).unwrap(), (vec![], 2));
    }

    #[test]
    fn damage_is_corrupt_and_says_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        let payload: Vec<u8> = (0..PAGE + 500).map(|i| (i % 13) as u8).collect();
        write(&path, 2, 99, &payload, PAGE);
        let good = std::fs::read(&path).unwrap();
        let expect = |bytes: &[u8], why: &str| {
            std::fs::write(&path, bytes).unwrap();
            match read(&path, 2) {
                Err(Error::Corrupt(m)) => {
                    assert!(m.contains(why) && m.contains("rebuild it"), "{m}");
                    assert!(m.contains("test index"), "{m}");
                }
                other => panic!("expected Corrupt({why}), got {other:?}"),
            }
        };
        // The generation, the checksum, a block, a block's sum.
        for at in [12, 28, HEADER + 5, HEADER + PAGE + 7, good.len() - 1] {
            let mut damaged = good.clone();
            damaged[at] ^= 0x10;
            expect(&damaged, "checksum");
        }
        expect(&good[..good.len() - 1], "truncated");
        let mut longer = good.clone();
        longer[20] ^= 1;
        expect(&longer, "truncated");
        expect(&good[..10], "no header");
        expect(b"AIRGRAPH and more bytes than a header has", "no header");
        // A damaged block is found when it is read, not before: the others read.
        let mut damaged = good.clone();
        damaged[HEADER + PAGE + 7] ^= 0x10;
        std::fs::write(&path, &damaged).unwrap();
        let paged = Opened::open_paged(&path, MAGIC, 2, "test index")
            .unwrap()
            .paged("test index")
            .unwrap();
        assert_eq!(paged.get(0..PAGE).unwrap(), &payload[..PAGE]);
        assert!(
            matches!(paged.get(PAGE..PAGE + 1), Err(Error::Corrupt(m)) if m.contains("checksum"))
        );
        assert!(
            matches!(paged.get(0..PAGE + 600), Err(Error::Corrupt(m)) if m.contains("past the end"))
        );
        assert!(matches!(
            read(&dir.path().join("absent"), 2),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(read(dir.path(), 2), Err(Error::Io { .. })));
    }

    /// Only the version asked for is read: another, older or newer, is
    /// `FormatVersion` (whatever the rest of the file holds), not corrupt.
    #[test]
    fn another_version_is_a_format_version_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        for found in [1, 3, u32::MAX] {
            write(&path, found, 3, b"payload", 7);
            match read(&path, 2) {
                Err(
                    err @ Error::FormatVersion {
                        found: f,
                        expected: 2,
                        ..
                    },
                ) => {
                    assert_eq!(f, found);
                    assert_eq!(
                        err.to_string(),
                        format!(
                            "{} has test index format version {found}; this aircher-mem reads version 2: \
                             rebuild the test index",
                            path.display()
                        )
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        write(&path, 2, 3, b"payload", 7);
        assert_eq!(read(&path, 2).unwrap(), (b"payload".to_vec(), 3));
    }
}
