//! The one way the engine reads a project's files: `read_project_file`. It never
//! leaves the root (no symlink is followed, on any component), never opens anything
//! but a regular file (a FIFO would block a reader forever, a device has effects)
//! and never reads more than a limit.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{invalid, Error, Result};

/// Why a file is not read, as the skipped list of a graph says it.
pub fn reason(err: &Error) -> String {
    match err {
        Error::Missing { .. } => "unreadable: no such file".to_string(),
        Error::Io { source, .. } => format!("unreadable: {source}"),
        Error::Unreadable { reason, .. } => reason.clone(),
        Error::InvalidValue { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// The bytes of the file at `relative` (components separated by `/`, as the graph
/// names files) under `root` (canonical). Refused:
/// - a relative path that is empty, absolute, or has a `.`, `..` or empty component,
///   or a NUL byte, and any symlink on the way, the file itself included: invalid
///   input (`Error::InvalidValue`), so nothing outside the root is ever opened;
/// - a file or folder on the way that is not there: `Error::Missing`;
/// - anything but a regular file (FIFO, socket, device, folder) and a file larger
///   than `max_bytes`: `Error::Unreadable`.
///
/// Each folder is opened relative to the one before with `O_NOFOLLOW`, the file
/// with `O_NOFOLLOW | O_NONBLOCK` (opening a FIFO does not wait for a writer), and
/// the opened handle is checked with `fstat`: a file swapped for a link or a FIFO
/// between the check and the read is refused all the same. The size is checked on
/// the handle, and the read stops one byte past `max_bytes`.
pub fn read_project_file(root: &Path, relative: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let (mut file, full, meta) = open_regular(root, relative)?;
    let too_large = |size: u64| Error::Unreadable {
        path: full.clone(),
        reason: format!("larger than {max_bytes} bytes ({size} bytes)"),
    };
    if meta.len() > max_bytes {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", &full, err))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// `relative` (a plain path under `root`) opened as [`read_project_file`] says, with
/// its full path and metadata: an error for anything but a regular file.
fn open_regular(
    root: &Path,
    relative: &str,
) -> Result<(std::fs::File, PathBuf, std::fs::Metadata)> {
    let parts: Vec<&str> = relative.split('/').collect();
    if relative.contains('\0')
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(invalid(
            "path",
            format!("{relative:?} is not a plain path relative to the project root"),
        ));
    }
    let full: PathBuf = root.join(relative);
    let file = open_beneath(root, &parts, &full)?;
    let meta = file
        .metadata()
        .map_err(|err| Error::io("read", &full, err))?;
    if !meta.file_type().is_file() {
        return Err(not_regular(&full, &meta.file_type()));
    }
    Ok((file, full, meta))
}

/// The first `max_bytes` bytes of a project file (fewer if it is shorter), opened
/// as `read_project_file` opens it (no symlink followed, nothing but a regular file
/// read): enough for its `#!` line, whatever its size.
pub fn read_project_head(root: &Path, relative: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let (mut file, full, _) = open_regular(root, relative)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", &full, err))?;
    Ok(bytes)
}

fn not_regular(path: &Path, kind: &std::fs::FileType) -> Error {
    let what = if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file (a FIFO, socket or device)"
    };
    Error::Unreadable {
        path: path.to_path_buf(),
        reason: format!("{what}: not read"),
    }
}

fn symlink(full: &Path) -> Error {
    invalid(
        "path",
        format!(
            "{} is or passes through a symbolic link: not followed",
            full.display()
        ),
    )
}

#[cfg(unix)]
fn open_beneath(root: &Path, parts: &[&str], full: &Path) -> Result<std::fs::File> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    let c_string = |bytes: &[u8]| {
        CString::new(bytes).map_err(|_| invalid("path", format!("{full:?} holds a NUL byte")))
    };
    let open_at = |dir: Option<&OwnedFd>, name: &CString, flags: libc::c_int| {
        let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
        // SAFETY: `name` is a NUL-terminated string that outlives the call; `at` is
        // an open descriptor (or AT_FDCWD); the result is checked before use.
        let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: `fd` was just returned by openat and is owned by no one else.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let fail = |err: std::io::Error, at: &Path| match err.raw_os_error() {
        Some(libc::ELOOP) => symlink(full),
        Some(libc::ENOTDIR) => Error::Missing {
            action: "read",
            path: at.to_path_buf(),
        },
        _ => Error::io("read", at, err),
    };
    let directory = libc::O_RDONLY | libc::O_DIRECTORY;
    let mut dir = open_at(None, &c_string(root.as_os_str().as_bytes())?, directory)
        .map_err(|err| Error::io("read", root, err))?;
    let (name, folders) = parts.split_last().expect("split gives one part at least");
    let mut at = root.to_path_buf();
    // The kind (S_IFMT bits) of `name` in `dir`, not following a symlink.
    let kind_of = |dir: &OwnedFd, name: &CString| {
        // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `dir` is open, `name` NUL-terminated, `stat` writable.
        let rc = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                &mut stat,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc == 0 {
            Ok(stat.st_mode & libc::S_IFMT)
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    for folder in folders {
        at.push(folder);
        let folder = c_string(folder.as_bytes())?;
        dir = match open_at(Some(&dir), &folder, directory | libc::O_NOFOLLOW) {
            Ok(next) => next,
            // A link to a folder fails as "not a folder" under O_NOFOLLOW.
            Err(err) if kind_of(&dir, &folder).is_ok_and(|k| k == libc::S_IFLNK) => {
                drop(err);
                return Err(symlink(full));
            }
            Err(err) => return Err(fail(err, &at)),
        };
    }
    let name = c_string(name.as_bytes())?;
    // Look before opening: a device or FIFO is refused without being opened.
    let kind = kind_of(&dir, &name).map_err(|err| fail(err, full))?;
    match kind {
        libc::S_IFREG => {}
        libc::S_IFLNK => return Err(symlink(full)),
        libc::S_IFDIR => {
            return Err(Error::Unreadable {
                path: full.to_path_buf(),
                reason: "a folder: not read".to_string(),
            })
        }
        _ => {
            return Err(Error::Unreadable {
                path: full.to_path_buf(),
                reason: "not a regular file (a FIFO, socket or device): not read".to_string(),
            })
        }
    }
    let fd = open_at(
        Some(&dir),
        &name,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    )
    .map_err(|err| fail(err, full))?;
    Ok(std::fs::File::from(fd))
}

#[cfg(not(unix))]
fn open_beneath(root: &Path, parts: &[&str], full: &Path) -> Result<std::fs::File> {
    let mut at = root.to_path_buf();
    for part in parts {
        at.push(part);
        let meta = std::fs::symlink_metadata(&at).map_err(|err| Error::io("read", &at, err))?;
        if meta.file_type().is_symlink() {
            return Err(symlink(full));
        }
    }
    std::fs::File::open(full).map_err(|err| Error::io("read", full, err))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn kind(result: Result<Vec<u8>>) -> String {
        match result {
            Ok(bytes) => format!("ok {}", bytes.len()),
            Err(Error::InvalidValue { .. }) => "invalid".into(),
            Err(Error::Missing { .. }) => "missing".into(),
            Err(Error::Unreadable { reason, .. }) => format!("unreadable {reason}"),
            Err(other) => format!("other {other}"),
        }
    }

    #[test]
    fn reads_regular_files_under_the_root_only() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.py"), "x = 1\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/b.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("big.py"), "x".repeat(100)).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.py"), root.join("out.py")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("outdir")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b.py"), root.join("in.py")).unwrap();
        let fifo =
            std::ffi::CString::new(root.join("pipe.py").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let read = |p: &str, max: u64| kind(read_project_file(&root, p, max));
        assert_eq!(read("a/b.py", 100), "ok 6");
        assert_eq!(read("big.py", 100), "ok 100");
        assert!(read("big.py", 99).starts_with("unreadable larger than 99"));
        assert_eq!(read("out.py", 100), "invalid");
        assert_eq!(read("outdir/secret.py", 100), "invalid");
        assert_eq!(read("in.py", 100), "invalid", "no symlink is followed");
        assert_eq!(read("gone.py", 100), "missing");
        assert_eq!(read("gone/x.py", 100), "missing");
        assert_eq!(read("a/b.py/x.py", 100), "missing");
        assert!(read("pipe.py", 100).contains("FIFO"), "and no hang");
        assert!(read("a", 100).contains("folder"));
        for bad in [
            "",
            "../x.py",
            "a/../b.py",
            "./a/b.py",
            "/etc/passwd",
            "a//b.py",
            "a\0b",
        ] {
            assert_eq!(read(bad, 100), "invalid", "{bad:?}");
        }
    }
}
