//! Finding and parsing a repository's source files: .gitignore respected, binary,
//! oversized and vendored files skipped (each with its reason), parsing in parallel.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::extract::{extract, FileSymbols, Language};

/// Folders of third-party or generated code, never indexed.
pub const VENDORED: &[&str] = &[
    "node_modules",
    "vendor",
    "third_party",
    "site-packages",
    ".venv",
    "venv",
    "__pycache__",
    "target",
    "dist",
    "build",
];

/// A source file to parse: its path relative to the root (with `/`), language and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub relative: String,
    pub language: Language,
    pub bytes: u64,
}

/// Shared with a parse running on other threads: how many files are done, and a
/// request to stop (the files not started yet are then not parsed).
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicUsize,
    pub cancelled: AtomicBool,
}

/// Source files under `root` (sorted by relative path) and the files skipped, with why.
pub fn discover(root: &Path, max_file_bytes: u64) -> (Vec<Source>, Vec<(String, String)>) {
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .require_git(false) // .gitignore counts even outside a git checkout
        .follow_links(false) // a symlink loop cannot trap the walk
        .filter_entry(|entry| {
            !(entry.depth() > 0
                && entry.file_type().is_some_and(|t| t.is_dir())
                && VENDORED.contains(&entry.file_name().to_string_lossy().as_ref()))
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                skipped.push((String::new(), err.to_string()));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Some(language) = Language::from_path(path) else {
            continue;
        };
        let relative = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        match entry.metadata() {
            Ok(meta) if meta.len() > max_file_bytes => {
                skipped.push((
                    relative,
                    format!("larger than {max_file_bytes} bytes ({} bytes)", meta.len()),
                ));
            }
            Ok(meta) => sources.push(Source {
                path: path.to_path_buf(),
                relative,
                language,
                bytes: meta.len(),
            }),
            Err(err) => skipped.push((relative, format!("unreadable: {err}"))),
        }
    }
    sources.sort_by(|a, b| a.relative.cmp(&b.relative));
    (sources, skipped)
}

/// Parses files in parallel, largest first (so that no core is left alone with a
/// big file at the end), in `sources` order in the result. A file that cannot be
/// read, or holds a NUL byte in its first 8 KiB (binary), is an `Err` with the
/// reason; so is each file not parsed because `progress` was cancelled.
pub fn parse(sources: &[Source], progress: &Progress) -> Vec<Result<FileSymbols, String>> {
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sources[i].bytes));
    let mut parsed: Vec<(usize, Result<FileSymbols, String>)> = order
        .into_par_iter()
        .map(|i| {
            if progress.cancelled.load(Ordering::Relaxed) {
                return (i, Err("cancelled".to_string()));
            }
            let result = parse_one(&sources[i]);
            progress.done.fetch_add(1, Ordering::Relaxed);
            (i, result)
        })
        .collect();
    parsed.sort_unstable_by_key(|(i, _)| *i);
    parsed.into_iter().map(|(_, result)| result).collect()
}

fn parse_one(source: &Source) -> Result<FileSymbols, String> {
    let bytes = std::fs::read(&source.path).map_err(|err| format!("unreadable: {err}"))?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err("binary (NUL byte)".to_string());
    }
    Ok(extract(source.language, &bytes))
}
