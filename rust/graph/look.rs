//! A walk of the tree kept (`Record`), so that the next look at an unchanged tree
//! checks what decided the walk instead of walking again: the same files found
//! for a stat of each folder, ignore file and source file, where the walk lists
//! every folder and reads its ignore files.
//!
//! What decides a walk: the entries of each folder walked (a file or folder added,
//! removed or renamed there changes the folder's time), the ignore files
//! (`.gitignore`, `.ignore`, `.git/info/exclude` in each folder walked and each
//! folder above the root, and git's global excludes file and where git's config
//! puts it), and the `#!` line of each file without an extension. The record
//! keeps a stamp of each (times, inode, size; absent for an ignore file above the
//! root that is not there), the package's version, the source files found and the
//! count of files in other languages. A look whose stamps all match (and each
//! source file still a regular file) finds what the walk found, each file with its
//! time and size now; any other look walks and keeps a new record.
//!
//! The stamps are taken once the walk is done (the walker lists a folder and reads
//! its ignore files before handing it over), so a stamp whose times are not at
//! least `RACY_NS` older than the walk's start is not trusted: the change behind
//! it may have come after the walk read the path, or within the file system's
//! clock tick of it. No record is kept then, and the next look walks.
//!
//! Layout: magic `AMWALK01`, checksum of the rest (u64 LE), then the `Record`
//! (postcard). A record that cannot be read, is of another version or another
//! root, is not used (the look walks).

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::path::{Component, Path, PathBuf};

use rayon::prelude::*;

use super::extract::Language;
use super::scan::{walk, Source};
use crate::atomic::AtomicFile;
use crate::error::Result;

const MAGIC: &[u8; 8] = b"AMWALK01";

/// The rules by which a walk takes a file for a language (extensions, `UNSUPPORTED`,
/// `INTERPRETERS`, `VENDORED`), numbered: a record kept under other rules is not
/// used. Raise it with any change of them (`the_walk_rules_are_pinned` says when).
const RULES: u32 = 1;

/// How long before the walk a stamp must be to be trusted (nanoseconds).
const RACY_NS: i128 = 2_000_000_000;

/// The ignore files the walk reads in a folder (the third inside `.git`).
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".git/info/exclude"];

/// What the walk found, or a look found in its place: the source files (sorted by
/// relative path) and the count of files of each language the graph does not parse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tracked {
    pub sources: Vec<Source>,
    pub unsupported: BTreeMap<String, usize>,
}

/// A path's kind, times, inode and size, as `lstat` (or `stat`, following a
/// symlink, for an ignore file: the walk reads through one) gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    kind: u8,
    modified: i128,
    changed: i128,
    device: u64,
    inode: u64,
    size: u64,
}

/// A path the look checks: relative to the root, or absolute (above the root),
/// as bytes; whether its stamp follows a symlink; its stamp (None: not there).
type Watched = (Vec<u8>, bool, Option<Stamp>);

/// The walk kept (see the module documentation).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Record {
    version: String,
    root: Vec<u8>,
    global: Option<Vec<u8>>,
    watched: Vec<Watched>,
    sources: Vec<(String, Language)>,
    unsupported: Vec<(String, u64)>,
}

/// The files under `root` (a canonical folder) as `scan::discover` finds them
/// whatever their size, found by a look at the record at `record` when it holds,
/// else by a walk, kept at `record` when its folder exists (a record that cannot
/// be written is not an error: the next look walks).
pub fn tracked(root: &Path, record: &Path) -> Tracked {
    recorded(root, record, None)
}

/// `tracked`, trusting stamps older than `trusted_before` (None: `RACY_NS` before
/// the walk began).
fn recorded(root: &Path, record: &Path, trusted_before: Option<i128>) -> Tracked {
    if let Some(found) = look(root, record) {
        return found;
    }
    let before = trusted_before.unwrap_or_else(|| now_ns() - RACY_NS);
    let (found, seen) = walk(root, u64::MAX, true);
    let tracked = Tracked {
        sources: found.sources,
        unsupported: found.unsupported,
    };
    let folder_exists = record.parent().is_some_and(Path::is_dir);
    if folder_exists && seen.complete {
        if let Some(kept) = kept(root, &tracked, &seen.folders, &seen.scripts, before) {
            let _ = save(record, &kept);
        }
    }
    tracked
}

/// The record of a walk that found `tracked`, entering `folders` and reading the
/// `#!` lines of `scripts` (absolute paths); None when a path cannot be kept
/// (not Unix) or a stamp is not older than `before` (too recent to trust).
fn kept(
    root: &Path,
    tracked: &Tracked,
    folders: &[PathBuf],
    scripts: &[PathBuf],
    before: i128,
) -> Option<Record> {
    let relative = |path: &Path| path.strip_prefix(root).ok().and_then(bytes_of);
    // Inside the tree: each folder, the ignore files in it, the scripts; above the
    // root: its folders' ignore files, there or not.
    let mut watched: Vec<Watched> = folders
        .par_iter()
        .map(|folder| -> Option<Vec<Watched>> {
            let mut out = vec![(relative(folder)?, false, Some(stamp(folder, false)?))];
            for name in IGNORE_FILES {
                let path = folder.join(name);
                if let Some(found) = stamp(&path, true) {
                    out.push((relative(&path)?, true, Some(found)));
                }
            }
            Some(out)
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    for script in scripts {
        watched.push((relative(script)?, false, stamp(script, false)));
    }
    for folder in root.ancestors().skip(1) {
        for name in IGNORE_FILES {
            let path = folder.join(name);
            watched.push((bytes_of(&path)?, true, stamp(&path, true)));
        }
    }
    let global = global_excludes()?;
    if let Some((path, bytes)) = &global {
        watched.push((bytes.clone(), true, stamp(path, true)));
    }
    let trusted = |s: &Stamp| s.modified < before && s.changed < before;
    if !watched
        .iter()
        .all(|(_, _, s)| s.as_ref().is_none_or(trusted))
    {
        return None;
    }
    Some(Record {
        version: version(),
        root: bytes_of(root)?,
        global: global.map(|(_, bytes)| bytes),
        watched,
        sources: tracked
            .sources
            .iter()
            .map(|s| (s.relative.clone(), s.language))
            .collect(),
        unsupported: tracked
            .unsupported
            .iter()
            .map(|(k, v)| (k.clone(), *v as u64))
            .collect(),
    })
}

/// What the record at `record` says the tree holds, each source file with its
/// time and size now; None when there is no usable record or anything it stamps
/// changed.
fn look(root: &Path, record: &Path) -> Option<Tracked> {
    let record = read(record)?;
    if record.version != version() || record.root != bytes_of(root)? {
        return None;
    }
    if global_excludes()?.map(|(_, bytes)| bytes) != record.global {
        return None;
    }
    let same = record.watched.par_iter().all(|(path, follow, was)| {
        path_of(path).is_some_and(|path| stamp(&root.join(path), *follow) == *was)
    });
    if !same {
        return None;
    }
    let sources = record
        .sources
        .into_par_iter()
        .map(|(relative, language)| {
            if !plain(&relative) {
                return None;
            }
            let path = root.join(&relative);
            let now = stamp(&path, false).filter(|s| s.kind == FILE)?;
            Some(Source {
                path,
                relative,
                language,
                bytes: now.size,
                modified: now.modified,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Tracked {
        sources,
        unsupported: record
            .unsupported
            .into_iter()
            .map(|(k, v)| (k, v as usize))
            .collect(),
    })
}

/// Git's global excludes file as git's config names it now (None: none), with its
/// path as bytes; None when the path cannot be kept (not Unix).
fn global_excludes() -> Option<Option<(PathBuf, Vec<u8>)>> {
    match ignore::gitignore::gitconfig_excludes_path() {
        Some(path) => {
            let bytes = bytes_of(&path)?;
            Some(Some((path, bytes)))
        }
        None => Some(None),
    }
}

/// The package's version and the walk's `RULES`: what a record must have been kept
/// under to be used.
fn version() -> String {
    format!("{} rules {RULES}", env!("CARGO_PKG_VERSION"))
}

/// Whether `relative` names a path inside the root: not empty, each part a name
/// (no root, `.` or `..`).
fn plain(relative: &str) -> bool {
    !relative.is_empty()
        && Path::new(relative)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

const FILE: u8 = 1;
const FOLDER: u8 = 2;
const OTHER: u8 = 3;

#[cfg(unix)]
fn stamp(path: &Path, follow: bool) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    }
    .ok()?;
    let kind = if meta.is_file() {
        FILE
    } else if meta.is_dir() {
        FOLDER
    } else {
        OTHER
    };
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Some(Stamp {
        kind,
        modified: ns(meta.mtime(), meta.mtime_nsec()),
        changed: ns(meta.ctime(), meta.ctime_nsec()),
        device: meta.dev(),
        inode: meta.ino(),
        size: meta.size(),
    })
}

/// Elsewhere no record is kept (`bytes_of` is None), so no stamp is taken.
#[cfg(not(unix))]
fn stamp(_path: &Path, _follow: bool) -> Option<Stamp> {
    None
}

#[cfg(unix)]
fn bytes_of(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Some(path.as_os_str().as_bytes().to_vec())
}

#[cfg(not(unix))]
fn bytes_of(_path: &Path) -> Option<Vec<u8>> {
    None
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_of(_bytes: &[u8]) -> Option<PathBuf> {
    None
}

/// Now, in nanoseconds since the epoch.
fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

fn sum(payload: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0xA1C4_3A1C).hash_one(payload)
}

fn save(path: &Path, record: &Record) -> Result<()> {
    let payload = postcard::to_stdvec(record)
        .map_err(|err| crate::error::Error::io("write", path, std::io::Error::other(err)))?;
    let mut file = AtomicFile::create(path)?;
    file.write_all(MAGIC)?;
    file.write_all(&sum(&payload).to_le_bytes())?;
    file.write_all(&payload)?;
    file.commit()
}

fn read(path: &Path) -> Option<Record> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (checksum, payload) = rest.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*checksum) != sum(payload) {
        return None;
    }
    postcard::from_bytes(payload).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::discover;

    /// The FNV-1a sum of the walk's rules written out (see `the_walk_rules_are_pinned`).
    const PINNED: u64 = 18_158_649_471_360_590_862;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Every path under `root` (and `root`) dated long ago: a change made after
    /// stamps a new time, however coarse the file system's clock.
    fn age(root: &Path) {
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        for entry in ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .build()
        {
            let entry = entry.unwrap();
            if entry.path_is_symlink() {
                continue;
            }
            let file = std::fs::File::open(entry.path()).unwrap();
            file.set_modified(old).unwrap();
        }
    }

    /// What a walk finds, as `tracked` reports it.
    fn walked(root: &Path) -> Tracked {
        let found = discover(root, u64::MAX);
        Tracked {
            sources: found.sources,
            unsupported: found.unsupported,
        }
    }

    /// A tree of each kind of thing the walk decides by, its record kept at
    /// `record` (returned).
    fn recorded_tree(root: &Path) -> PathBuf {
        write(root, "a.py", "x = 1\n");
        write(root, "pkg/b.py", "y = 2\n");
        write(root, "pkg/deep/c.rs", "fn c() {}\n");
        write(root, "pkg/m.hs", "main = pure ()\n");
        write(root, "tool", "#!/usr/bin/env python3\nprint(1)\n");
        write(root, "README", "plain words\n");
        write(root, "pkg/.gitignore", "skip.py\n");
        write(root, "pkg/skip.py", "z = 3\n");
        write(root, "build/out.py", "w = 4\n");
        write(root, ".ignore", "build/\n");
        std::fs::create_dir_all(root.join(".store")).unwrap();
        age(root);
        let record = root.join(".store/walk");
        let first = recorded(root, &record, Some(i128::MAX));
        assert_eq!(first, walked(root));
        assert!(record.is_file());
        record
    }

    fn paths(found: &Tracked) -> Vec<&str> {
        found.sources.iter().map(|s| s.relative.as_str()).collect()
    }

    #[test]
    fn an_unchanged_tree_is_looked_at_not_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        let record = recorded_tree(root);
        let looked = look(root, &record).expect("the record holds");
        assert_eq!(looked, walked(root));
        assert_eq!(
            paths(&looked),
            ["a.py", "pkg/b.py", "pkg/deep/c.rs", "tool"]
        );
        assert_eq!(
            looked.unsupported,
            BTreeMap::from([("Haskell".to_string(), 1)])
        );
        // A file changed in place: still looked at, with its time and size now.
        write(root, "pkg/b.py", "y = 2222\n");
        let looked = look(root, &record).expect("a file's content does not decide the walk");
        assert_eq!(looked, walked(root));
        assert_eq!(looked.sources[1].bytes, 9);
    }

    #[test]
    fn each_change_that_decides_the_walk_makes_the_look_walk() {
        type Change = fn(&Path);
        let changes: [(&str, Change); 9] = [
            ("a file added", |r| write(r, "pkg/deep/new.py", "n = 1\n")),
            ("a file removed", |r| {
                std::fs::remove_file(r.join("pkg/b.py")).unwrap()
            }),
            ("a folder added", |r| write(r, "lib/x/y.go", "package x\n")),
            ("an ignore file edited", |r| {
                write(r, "pkg/.gitignore", "b.py\n")
            }),
            ("a top ignore file edited", |r| write(r, ".ignore", "\n")),
            ("a script's #! line changed", |r| {
                write(r, "tool", "#!/bin/sh\necho\n")
            }),
            ("a plain file made a script", |r| {
                write(r, "README", "#!/bin/bash\n")
            }),
            ("a source made a symlink", |r| {
                std::fs::remove_file(r.join("a.py")).unwrap();
                std::os::unix::fs::symlink(r.join("pkg/b.py"), r.join("a.py")).unwrap();
            }),
            ("git's exclude added", |r| {
                write(r, ".git/info/exclude", "a.py\n")
            }),
        ];
        for (what, change) in changes {
            let dir = tempfile::tempdir().unwrap();
            let root = &dir.path().canonicalize().unwrap();
            let record = recorded_tree(root);
            change(root);
            assert_eq!(look(root, &record), None, "{what}");
            assert_eq!(tracked(root, &record), walked(root), "{what}");
        }
    }

    #[test]
    fn an_ignore_file_above_the_root_counts() {
        let dir = tempfile::tempdir().unwrap();
        let top = &dir.path().canonicalize().unwrap();
        let root = &top.join("project");
        std::fs::create_dir(root).unwrap();
        let record = recorded_tree(root);
        write(top, ".gitignore", "a.py\n");
        assert_eq!(look(root, &record), None);
        let found = tracked(root, &record);
        assert_eq!(found, walked(root));
        assert!(!paths(&found).contains(&"a.py"));
    }

    #[test]
    fn a_damaged_record_of_another_root_or_a_recent_walk_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        let record = recorded_tree(root);
        let bytes = std::fs::read(&record).unwrap();
        for at in [0, 9, bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            std::fs::write(&record, &damaged).unwrap();
            assert_eq!(look(root, &record), None, "byte {at}");
        }
        std::fs::write(&record, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(look(root, &record), None);
        // Another root's record.
        let other = tempfile::tempdir().unwrap();
        let other = &other.path().canonicalize().unwrap();
        write(other, "a.py", "x = 1\n");
        std::fs::write(&record, &bytes).unwrap();
        assert_eq!(look(other, &record), None);
        assert_eq!(tracked(other, &record), walked(other));
        // Stamps of a moment ago are not trusted: no record is kept.
        let fresh = tempfile::tempdir().unwrap();
        let fresh = &fresh.path().canonicalize().unwrap();
        write(fresh, "a.py", "x = 1\n");
        let kept = fresh.join("walk");
        assert_eq!(tracked(fresh, &kept), walked(fresh));
        assert!(!kept.exists());
    }

    #[test]
    fn a_record_naming_paths_outside_the_root_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        let record = recorded_tree(root);
        let mut kept = read(&record).unwrap();
        kept.sources
            .push(("../outside.py".to_string(), Language::Python));
        save(&record, &kept).unwrap();
        assert_eq!(look(root, &record), None);
    }

    /// What decides a walk's findings, written out: a change here changes what a
    /// kept walk would say, so `RULES` must be raised with it (and this text).
    #[test]
    fn the_walk_rules_are_pinned() {
        use crate::graph::scan::{INTERPRETERS, UNSUPPORTED, VENDORED};
        let probes = [
            "py", "pyi", "rs", "js", "jsx", "mjs", "cjs", "ts", "mts", "cts", "tsx", "go", "java",
            "c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "cs",
            "rb", "rake", "php", "lua", "sh", "bash", "kt", "kts", "swift", "scala", "sc", "m",
            "mm", "pl", "pm", "r", "ex", "exs", "erl", "hs", "ml", "mli", "zig", "jl", "clj",
            "sql", "vue", "svelte", "dart", "zsh", "fish", "txt", "md", "json", "toml", "yaml",
        ];
        let languages: Vec<String> = probes
            .iter()
            .map(|e| {
                format!(
                    "{e}={:?}",
                    Language::from_path(Path::new(&format!("f.{e}")))
                )
            })
            .collect();
        let rules = format!("{languages:?}{UNSUPPORTED:?}{INTERPRETERS:?}{VENDORED:?}");
        // FNV-1a: the same sum wherever and whenever the test runs.
        let fnv = rules.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        assert_eq!(
            (RULES, fnv),
            (1, PINNED),
            "the walk's rules changed: raise RULES and pin the new sum"
        );
    }

    const TREE: [&str; 11] = [
        "a.py",
        "b.rs",
        "pkg/c.py",
        "pkg/d.hs",
        "pkg/sub/e.go",
        "tool",
        "notes",
        "pkg/.gitignore",
        ".ignore",
        "build/f.py",
        "pkg/sub/.gitignore",
    ];
    const TEXTS: [&str; 6] = [
        "x = 1\n",
        "#!/bin/sh\n",
        "*.py\n",
        "!c.py\n",
        "sub/\n",
        "e.go\n",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any tree of sources, scripts and ignore files, its walk kept, then any
        /// files written (a source, a script, an ignore rule) or removed: the look
        /// finds what a walk finds.
        #[test]
        fn a_look_finds_what_a_walk_finds(
            tree in proptest::collection::vec((0..TREE.len(), 0..TEXTS.len()), 0..10),
            changes in proptest::collection::vec((0..TREE.len(), 0..=TEXTS.len()), 0..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = &dir.path().canonicalize().unwrap();
            for (file, text) in tree {
                write(root, TREE[file], TEXTS[text]);
            }
            std::fs::create_dir_all(root.join(".store")).unwrap();
            age(root);
            let record = root.join(".store/walk");
            proptest::prop_assert_eq!(recorded(root, &record, Some(i128::MAX)), walked(root));
            for (file, text) in changes {
                match TEXTS.get(text) {
                    Some(text) => write(root, TREE[file], text),
                    None => {
                        let _ = std::fs::remove_file(root.join(TREE[file]));
                    }
                }
            }
            proptest::prop_assert_eq!(tracked(root, &record), walked(root));
        }

        /// Any payload sealed as a record (its checksum right): a look never
        /// panics, and finds nothing outside the root.
        #[test]
        fn any_sealed_payload_is_looked_at_safely(payload in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let dir = tempfile::tempdir().unwrap();
            let root = &dir.path().canonicalize().unwrap();
            write(root, "a.py", "x = 1\n");
            let record = root.join("walk");
            let mut bytes = MAGIC.to_vec();
            bytes.extend(sum(&payload).to_le_bytes());
            bytes.extend(&payload);
            std::fs::write(&record, bytes).unwrap();
            if let Some(found) = look(root, &record) {
                proptest::prop_assert!(found.sources.iter().all(|s| plain(&s.relative) && s.path.starts_with(root)));
            }
        }
    }
}
