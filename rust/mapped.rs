//! Store files read by mapping them into memory rather than copying them onto the
//! heap. A load decodes a file's bytes into its own structures and then lets the
//! bytes go: mapped, they are the page cache's pages (already there when the file
//! was just written or read), where a copy took as much fresh memory again, every
//! page of it zeroed by the kernel first. The Linux kernel's two store files are
//! 1.47 GB; `graph_memory load-child` on them: see benches/README.md.

use std::fs::{File, Metadata, OpenOptions};
use std::ops::Deref;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::error::{Error, Result};

/// A file's bytes, mapped read-only, from `start` on. The file stays open, so
/// that whether it was written in place since can be asked (`changed`).
#[derive(Debug)]
pub struct Mapped {
    map: Mmap,
    start: usize,
    file: File,
    path: PathBuf,
    /// The file's size and modification time when it was mapped.
    written: Written,
}

/// A file's size and modification time (seconds, nanoseconds): what a write in
/// place changes (a rename over its name, as a save does, changes neither).
type Written = (u64, i64, i64);

fn written(meta: &Metadata) -> Written {
    (meta.size(), meta.mtime(), meta.mtime_nsec())
}

impl Mapped {
    /// Maps the regular file at `path`, its pages read in. Anything else (a FIFO,
    /// a device, a folder) is an I/O error, found without blocking on it.
    pub fn open(path: &Path) -> Result<Mapped> {
        let mapped = Mapped::open_unread(path)?;
        mapped.populate();
        Ok(mapped)
    }

    /// `open`, its pages not read in yet: for a file that may be read much later,
    /// or never (`populate` reads them in at once, as `open` does). Holding the
    /// mapping holds the bytes the file had: a save that renames a new file over
    /// its name leaves them as they were.
    pub fn open_unread(path: &Path) -> Result<Mapped> {
        let file = OpenOptions::new()
            .read(true)
            // A FIFO opened for reading would wait for a writer; a regular file
            // ignores the flag.
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|err| Error::io("read", path, err))?;
        let meta = file
            .metadata()
            .map_err(|err| Error::io("read", path, err))?;
        if !meta.is_file() {
            let not_regular = std::io::Error::other("not a regular file");
            return Err(Error::io("read", path, not_regular));
        }
        Ok(Mapped {
            map: map(&file).map_err(|err| Error::io("read", path, err))?,
            start: 0,
            file,
            path: path.to_path_buf(),
            written: written(&meta),
        })
    }

    /// Reads the mapped pages in, in one call rather than one fault a page
    /// (`MADV_POPULATE_READ`; a kernel older than 5.14 refuses it, and the pages
    /// are read as they are touched).
    pub fn populate(&self) {
        let _ = self.map.advise(memmap2::Advice::PopulateRead);
    }

    /// Why these bytes can no longer be read as the file they were mapped from:
    /// another program wrote it in place since (its size or modification time is
    /// not what they were; aircher-mem never writes a store file in place, it
    /// renames a new one over it), or it cannot be looked at any more. `None` while
    /// it is as it was. One `fstat`.
    pub fn changed(&self) -> Option<Error> {
        match self.file.metadata() {
            Ok(meta) if written(&meta) == self.written => None,
            Ok(_) => Some(Error::Corrupt(format!(
                "{} was written in place by another program since it was loaded \
                 (aircher-mem only ever replaces it whole): load the store again",
                self.path.display()
            ))),
            Err(err) => Some(Error::io("read", &self.path, err)),
        }
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes from `by` on, or all of them if `by` is past the end.
    pub fn skip(mut self, by: usize) -> Mapped {
        self.start = self.start.saturating_add(by).min(self.map.len());
        self
    }

    /// Lets the whole pages of `range` (of these bytes; the pages of the file
    /// before these bytes too when it starts at 0) go from the process's memory,
    /// for a caller that reads only the rest: they stay in the page cache, and a
    /// read of them maps them again.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let clamp = |at: usize| self.start + at.min(self.len());
        let start = if range.start == 0 {
            0
        } else {
            clamp(range.start)
        };
        let end = clamp(range.end);
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let page = page.max(1);
        // Whole pages only: a page that also holds bytes outside `range` stays.
        let (first, last) = (start.next_multiple_of(page), end - end % page);
        if last > first {
            // SAFETY: the mapping is read-only and of a file (see `map`): a page
            // dropped from it was never written, and is read from the file again
            // if touched. Failing, it keeps the pages: nothing to report.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    first,
                    last - first,
                )
            };
        }
    }
}

fn map(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: the mapping is read-only and private to this process. The stores
    // write their files whole under a temporary name and rename them into place
    // (`crate::atomic`), so a file is never changed in place while it is mapped: a
    // later save replaces the name, not the inode this maps. A file changed in
    // place by something else while a load reads it gives bytes the checksum and
    // the decoders' checks refuse (or, truncated, a SIGBUS), as it would corrupt a
    // read of it into the heap. A loaded lexical index keeps reading its posting
    // lists from the mapping (`retrieve::postings::Shared`) and asks `changed`
    // before it reads them; a store file truncated in place by another program in
    // the middle of such a read gives a SIGBUS, as it would to any reader of
    // mapped index files (tantivy's, Lucene's); the store's folder is the user's
    // alone (mode 0700).
    unsafe { memmap2::MmapOptions::new().map(file) }
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map[self.start..]
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_file_and_skips_a_prefix() {
        let dir = std::env::temp_dir().join(format!("aircher-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes");
        std::fs::write(&path, b"headerpayload").unwrap();
        let mapped = Mapped::open(&path).unwrap();
        assert_eq!(&*mapped, b"headerpayload");
        assert_eq!(&*mapped.skip(6), b"payload");
        // Pages let go read the file again when touched.
        let long: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &long).unwrap();
        let mapped = Mapped::open(&path).unwrap().skip(5);
        for end in [0, 3, 4096, 20_000, 39_995, 1 << 20] {
            mapped.release(0..end);
            assert_eq!(&*mapped, &long[5..]);
        }
        for (start, end) in [(3, 9000), (4091, 12_288), (20_000, 1 << 20), (7, 7)] {
            mapped.release(start..end);
            assert_eq!(&*mapped, &long[5..]);
        }
        std::fs::write(&path, b"").unwrap();
        assert!(Mapped::open(&path).unwrap().is_empty());
        assert!(Mapped::open(&path).unwrap().skip(3).is_empty());
        assert!(matches!(
            Mapped::open(&dir.join("absent")),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(Mapped::open(&dir), Err(Error::Io { .. })));
        let fifo = dir.join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(matches!(Mapped::open(&fifo), Err(Error::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
