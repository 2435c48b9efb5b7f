//! Writing a file so that a crash leaves the old file or the new one, never half of
//! one: the bytes go to a temporary file beside the target (`<name>.tmp<pid>`, mode
//! 0600: the engine's files hold the names and words of a private project), are
//! synced, and the temporary file is renamed over the target. The next write removes
//! the leftovers of a crashed one.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file written as described above, a part at a time: its bytes go to the
/// temporary file until `commit` syncs it and renames it over the target. Dropped
/// without a commit (an error on the way), the temporary file is removed and the
/// target left as it was.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Opens the temporary file beside `path` (missing folders are created, the
    /// leftovers of a crashed write removed).
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let io = |err: std::io::Error| Error::io("write", path, err);
        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(format!(".tmp{}", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(io)?;
        }
        remove_leftovers(path);
        let file = create_private(&tmp).map_err(io)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
        })
    }

    fn io(&self, err: std::io::Error) -> Error {
        Error::io("write", &self.path, err)
    }

    fn writer(&mut self) -> &mut std::io::BufWriter<std::fs::File> {
        self.file.as_mut().expect("open until committed")
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let written = self.writer().write_all(bytes);
        written.map_err(|err| self.io(err))
    }

    /// Writes `bytes` at `offset` from the start (over what is there), then goes
    /// back to the end: a header filled in once what follows it is written.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let written = (|| {
            let writer = self.writer();
            writer.seek(SeekFrom::Start(offset))?;
            writer.write_all(bytes)?;
            writer.seek(SeekFrom::End(0)).map(drop)
        })();
        written.map_err(|err| self.io(err))
    }

    /// Syncs the temporary file and renames it over the target.
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("open until committed");
        let synced = file
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .and_then(|file| file.sync_all());
        if let Err(err) = synced {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(self.io(err));
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|err| {
            let _ = std::fs::remove_file(&self.tmp);
            self.io(err)
        })
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A new file only its owner can read and write (0600 on Unix); one left at that
/// name is replaced.
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Removes the temporary files a crashed write left beside `path`: regular files
/// named exactly `<name>.tmp<digits>` (nothing else is touched). Best effort.
fn remove_leftovers(path: &Path) {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = format!("{name}.tmp");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(other) = file_name.to_str() else {
            continue;
        };
        let leftover = other.strip_prefix(&prefix).is_some_and(|pid| {
            !pid.is_empty() && pid.len() <= 20 && pid.bytes().all(|b| b.is_ascii_digit())
        });
        if leftover && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file dropped before its commit leaves the target as it was and no
    /// temporary file; `write_at` writes over what is there, and writing goes on
    /// at the end.
    #[test]
    fn uncommitted_files_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.bin");
        std::fs::write(&path, b"old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"new bytes").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"0000 body").unwrap();
        file.write_at(0, b"head").unwrap();
        file.write_all(b" tail").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"head body tail");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// The file is private (0600) and a crashed write's temporary files go at the
    /// next write; other files beside it stay.
    #[cfg(unix)]
    #[test]
    fn private_file_and_leftovers_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.bin");
        let keep = [
            "graph.bin.tmp",
            "graph.bin.tmpx1",
            "graph.bin.tmp12.bak",
            "other.tmp1",
        ];
        for name in ["graph.bin.tmp123", "graph.bin.tmp9"].iter().chain(&keep) {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"pay").unwrap();
        file.write_all(b"load").unwrap();
        file.commit().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut expected: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
        expected.push("graph.bin".into());
        expected.sort();
        assert_eq!(left, expected);
        assert_eq!(std::fs::read(&path).unwrap(), b"payload");
    }
}
