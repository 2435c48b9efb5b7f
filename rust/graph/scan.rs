//! Finding and parsing a repository's source files: .gitignore respected, binary,
//! oversized and vendored files skipped (each with its reason), parsing in parallel.

use std::path::{Path, PathBuf};

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

/// A source file to parse: its path relative to the root (with `/`) and language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub relative: String,
    pub language: Language,
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
            Ok(_) => sources.push(Source {
                path: path.to_path_buf(),
                relative,
                language,
            }),
            Err(err) => skipped.push((relative, format!("unreadable: {err}"))),
        }
    }
    sources.sort_by(|a, b| a.relative.cmp(&b.relative));
    (sources, skipped)
}

/// Parses files in parallel. A file that cannot be read, or holds a NUL byte in its
/// first 8 KiB (binary), is an `Err` with the reason.
pub fn parse(sources: &[Source]) -> Vec<Result<FileSymbols, String>> {
    sources
        .par_iter()
        .map(|source| {
            let bytes = std::fs::read(&source.path).map_err(|err| format!("unreadable: {err}"))?;
            if bytes[..bytes.len().min(8192)].contains(&0) {
                return Err("binary (NUL byte)".to_string());
            }
            Ok(extract(source.language, &bytes))
        })
        .collect()
}
