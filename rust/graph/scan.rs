//! Finding and parsing a repository's source files: .gitignore respected, binary,
//! oversized and vendored files skipped (each with its reason), parsing in parallel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::documents::documents;
use super::extract::{extract, FileSymbols, Language};
use super::read::{read_project_file, read_project_head, reason};
use crate::retrieve::{Document, LexicalIndex};

/// Folders of third-party or generated code, never indexed (and any Python
/// virtual environment, whatever its name: see `virtualenv`).
pub const VENDORED: &[&str] = &[
    "node_modules",
    "vendor",
    "third_party",
    "site-packages",
    ".venv",
    "__pycache__",
    "target",
    "dist",
    "build",
];

/// Programming languages the graph does not parse, by file extension (exact, so
/// `.r` and `.R` are listed both): what `discover` counts so that a caller can say
/// which parts of a repository the graph does not see.
pub const UNSUPPORTED: &[(&str, &[&str])] = &[
    ("Shell", &["zsh", "ksh", "fish"]),
    ("Perl", &["pl", "pm"]),
    ("R", &["r", "R"]),
    ("Objective-C", &["m", "mm"]),
    ("Dart", &["dart"]),
    ("Elixir", &["ex", "exs"]),
    ("Erlang", &["erl"]),
    ("Haskell", &["hs"]),
    ("OCaml", &["ml", "mli"]),
    ("Zig", &["zig"]),
    ("Julia", &["jl"]),
    ("Clojure", &["clj"]),
    ("SQL", &["sql"]),
    ("Vue", &["vue"]),
    ("Svelte", &["svelte"]),
];

/// The language of `UNSUPPORTED` a file's extension names, if any.
pub fn unsupported_language(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?;
    UNSUPPORTED
        .iter()
        .find(|(_, extensions)| extensions.contains(&extension))
        .map(|(name, _)| *name)
}

/// How many bytes of a file without an extension are read for its `#!` line.
pub const SHEBANG_BYTES: u64 = 256;

/// Interpreters a `#!` line names (its last path component, after `env` and its
/// options; a version suffix such as `3.11` dropped): the language the graph parses
/// the script as, or the name of one it does not parse (as in `UNSUPPORTED`).
pub const INTERPRETERS: &[(&str, Result<Language, &str>)] = &[
    ("python", Ok(Language::Python)),
    ("pypy", Ok(Language::Python)),
    ("node", Ok(Language::JavaScript)),
    ("nodejs", Ok(Language::JavaScript)),
    ("deno", Ok(Language::JavaScript)),
    ("bun", Ok(Language::JavaScript)),
    ("ts-node", Ok(Language::TypeScript)),
    ("tsx", Ok(Language::TypeScript)),
    ("sh", Ok(Language::Bash)),
    ("bash", Ok(Language::Bash)),
    ("dash", Ok(Language::Bash)),
    ("ash", Ok(Language::Bash)),
    ("ruby", Ok(Language::Ruby)),
    ("php", Ok(Language::Php)),
    ("lua", Ok(Language::Lua)),
    ("luajit", Ok(Language::Lua)),
    ("swift", Ok(Language::Swift)),
    ("kotlin", Ok(Language::Kotlin)),
    ("scala", Ok(Language::Scala)),
    ("zsh", Err("Shell")),
    ("ksh", Err("Shell")),
    ("mksh", Err("Shell")),
    ("fish", Err("Shell")),
    ("csh", Err("Shell")),
    ("tcsh", Err("Shell")),
    ("perl", Err("Perl")),
    ("Rscript", Err("R")),
    ("escript", Err("Erlang")),
    ("elixir", Err("Elixir")),
    ("julia", Err("Julia")),
    ("runghc", Err("Haskell")),
    ("runhaskell", Err("Haskell")),
    ("ocaml", Err("OCaml")),
];

/// The language a script's first bytes name in a `#!` line (`#!/bin/sh`,
/// `#!/usr/bin/env python3`, `#!/usr/bin/env -S node --flag`): `Ok` for one the
/// graph parses, `Err` with the name of one it does not; None without a `#!` line
/// or for an interpreter not in `INTERPRETERS`. Only the first line is read.
pub fn shebang_language(head: &[u8]) -> Option<Result<Language, &'static str>> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut words = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let program = |word: &[u8]| -> Vec<u8> {
        word.rsplit(|&b| b == b'/')
            .next()
            .unwrap_or_default()
            .to_vec()
    };
    let mut name = program(words.next()?);
    if name == b"env" {
        // `env -S python3 -u`, `env PYTHONPATH=. python3`: the first other word.
        name = program(words.find(|w| !w.starts_with(b"-") && !w.contains(&b'='))?);
    }
    // `python3.11`, `perl5`, `lua5.4`: the version goes.
    let bare = name
        .iter()
        .rposition(|b| !(b.is_ascii_digit() || *b == b'.'))
        .map_or(&name[..0], |last| &name[..=last]);
    INTERPRETERS
        .iter()
        .find(|(interpreter, _)| interpreter.as_bytes() == bare)
        .map(|(_, language)| *language)
}

/// The language of a file without an extension from its `#!` line (see
/// `shebang_language`), reading at most `SHEBANG_BYTES` of it; None for a file
/// with an extension, without a `#!` line (binary files among them) or unreadable.
pub fn script_language(root: &Path, relative: &str) -> Option<Result<Language, &'static str>> {
    if Path::new(relative).extension().is_some() {
        return None;
    }
    let head = read_project_head(root, relative, SHEBANG_BYTES).ok()?;
    shebang_language(&head)
}

/// Why a FIFO, socket or device is skipped.
pub const SPECIAL: &str = "not a regular file (a FIFO, socket or device): not read";

/// Why a scan that found no source file names one: ignore rules exclude it, and
/// every other source file of the tree.
pub const ALL_EXCLUDED: &str = "excluded by ignore rules (.gitignore, .ignore or git's \
     excludes), as is every source file here: nothing is indexed";

/// Why a file whose name is not valid UTF-8 is skipped.
pub const NOT_UTF8: &str = "file name is not valid UTF-8";

/// What `discover` finds under a root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovered {
    /// The source files to parse, sorted by relative path.
    pub sources: Vec<Source>,
    /// (path, why) of the files skipped before parsing.
    pub skipped: Vec<(String, String)>,
    /// Files of languages the graph does not parse (`UNSUPPORTED`): language -> count.
    pub unsupported: BTreeMap<String, usize>,
}

/// A source file to parse: its path relative to the root (with `/`), language, size
/// and modification time (nanoseconds since the epoch), as the walk saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub relative: String,
    pub language: Language,
    pub bytes: u64,
    pub modified: i128,
}

/// Shared with a build running on other threads: the phase it is in, how many
/// files are parsed, and a request to stop (the files not started yet are then
/// not parsed).
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicUsize,
    pub cancelled: AtomicBool,
    phase: AtomicU8,
}

/// What a build is doing, in the order it does it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    Scanning,
    Parsing,
    LexicalIndex,
    Linking,
    Saving,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Scanning,
        Phase::Parsing,
        Phase::LexicalIndex,
        Phase::Linking,
        Phase::Saving,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Scanning => "scanning",
            Phase::Parsing => "parsing",
            Phase::LexicalIndex => "lexical index",
            Phase::Linking => "linking",
            Phase::Saving => "saving",
        }
    }
}

impl Progress {
    /// Marks the build as being in `phase` from now on.
    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// The phase the build is in (`Scanning` until another is entered).
    pub fn phase(&self) -> Phase {
        Phase::ALL[usize::from(self.phase.load(Ordering::Relaxed))]
    }
}

/// Source files under `root` (sorted by relative path), the files skipped, with why
/// (sorted by path), and how many files of each language the graph does not parse
/// there. The walk respects .gitignore, and skips hidden files and folders and
/// `VENDORED` folders. It runs on the thread pool's number of threads (a folder
/// listed, its ignore files found in the listing rather than looked for one by
/// one); what it finds does not depend on how the folders were shared out.
pub fn discover(root: &Path, max_file_bytes: u64) -> Discovered {
    walk(root, max_file_bytes, false).0
}

/// What a walk passed on the way (`walk` with `record`), for `look`: the folders it
/// entered and the files whose language it took from their `#!` line (absolute
/// paths, in no order); `complete` is false when part of the tree could not be
/// walked (an unreadable folder).
#[derive(Debug, Default)]
pub struct Seen {
    pub folders: Vec<PathBuf>,
    pub scripts: Vec<PathBuf>,
    pub complete: bool,
}

/// `discover`, and with `record` what the walk passed on the way (else an empty
/// `Seen`).
pub fn walk(root: &Path, max_file_bytes: u64, record: bool) -> (Discovered, Seen) {
    let (sender, receiver) = std::sync::mpsc::channel();
    ignore::WalkBuilder::new(root)
        .require_git(false) // .gitignore counts even outside a git checkout
        .follow_links(false) // a symlink loop cannot trap the walk
        .filter_entry(not_vendored)
        .threads(rayon::current_num_threads())
        .build_parallel()
        .run(|| {
            let sender = sender.clone();
            Box::new(move |entry| {
                // The receiver outlives the walk.
                if record {
                    if let Some(passed) = passed(&entry) {
                        let _ = sender.send(passed);
                    }
                }
                if let Some(found) = found(root, entry, max_file_bytes) {
                    let _ = sender.send(found);
                }
                ignore::WalkState::Continue
            })
        });
    drop(sender);
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    let mut unsupported: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = Seen {
        complete: true,
        ..Seen::default()
    };
    for found in receiver {
        match found {
            Found::Source(source) => sources.push(source),
            Found::Skipped(path, why) => {
                seen.complete &= !path.is_empty();
                skipped.push((path, why));
            }
            Found::Other(language) => *unsupported.entry(language.to_string()).or_default() += 1,
            Found::Folder(path) => seen.folders.push(path),
            Found::Script(path) => seen.scripts.push(path),
        }
    }
    sources.sort_by(|a, b| a.relative.cmp(&b.relative));
    skipped.sort();
    if sources.is_empty() {
        if let Some(example) = excluded_source(root) {
            skipped.push((example, ALL_EXCLUDED.to_string()));
        }
    }
    let found = Discovered {
        sources,
        skipped,
        unsupported,
    };
    (found, seen)
}

/// What a recording walk notes of an entry besides what `found` makes of it: a
/// folder entered, or a file whose `#!` line `found` reads.
fn passed(entry: &std::result::Result<ignore::DirEntry, ignore::Error>) -> Option<Found> {
    let entry = entry.as_ref().ok()?;
    let kind = entry.file_type()?;
    let path = entry.path();
    if kind.is_dir() {
        return Some(Found::Folder(path.to_path_buf()));
    }
    let by_content = kind.is_file()
        && path.extension().is_none()
        && Language::from_path(path).is_none()
        && unsupported_language(path).is_none();
    by_content.then(|| Found::Script(path.to_path_buf()))
}

/// What the walk makes of one entry.
enum Found {
    Source(Source),
    /// A file not to parse (its path, or "" for an error of the walk, and why).
    Skipped(String, String),
    /// A file of a language the graph does not parse (`UNSUPPORTED`).
    Other(&'static str),
    /// A folder entered (a recording walk, see `passed`).
    Folder(PathBuf),
    /// A file whose language its `#!` line decides (a recording walk).
    Script(PathBuf),
}

/// What `discover` makes of one entry of the walk: None for a folder, a symlink
/// and a file of no language.
fn found(
    root: &Path,
    entry: std::result::Result<ignore::DirEntry, ignore::Error>,
    max_file_bytes: u64,
) -> Option<Found> {
    let entry = match entry {
        Ok(entry) => entry,
        Err(err) => return Some(Found::Skipped(String::new(), err.to_string())),
    };
    let path = entry.path();
    let kind = entry.file_type()?;
    // Folders are walked and symlinks not followed (silently: a link is not a
    // file of the project); anything else that is not a regular file (a FIFO
    // would block the reader, a device has effects) is skipped, saying why.
    if kind.is_dir() || kind.is_symlink() {
        return None;
    }
    let lossy = || {
        path.strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    };
    if !kind.is_file() {
        return Some(Found::Skipped(lossy(), SPECIAL.to_string()));
    }
    // The graph names files by UTF-8 paths: two names that differ only in
    // bytes that are not UTF-8 would become one.
    if path.strip_prefix(root).unwrap_or(path).to_str().is_none() {
        return Language::from_path(path)
            .is_some()
            .then(|| Found::Skipped(lossy(), NOT_UTF8.to_string()));
    }
    let relative = lossy();
    // A script without an extension: its `#!` line says.
    let language = match Language::from_path(path) {
        Some(language) => language,
        None => match unsupported_language(path) {
            Some(other) => return Some(Found::Other(other)),
            None => match script_language(root, &relative)? {
                Ok(language) => language,
                Err(other) => return Some(Found::Other(other)),
            },
        },
    };
    Some(match entry.metadata() {
        Ok(meta) if meta.len() > max_file_bytes => Found::Skipped(
            relative,
            format!("larger than {max_file_bytes} bytes ({} bytes)", meta.len()),
        ),
        Ok(meta) => Found::Source(Source {
            path: path.to_path_buf(),
            relative,
            language,
            bytes: meta.len(),
            modified: modified_ns(&meta),
        }),
        Err(err) => Found::Skipped(relative, format!("unreadable: {err}")),
    })
}

/// A file's modification time in nanoseconds since the epoch, as Python's
/// `os.stat_result.st_mtime_ns` gives it.
#[cfg(unix)]
fn modified_ns(meta: &std::fs::Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt;
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
#[cfg(not(unix))]
fn modified_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .map(|time| match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => after.as_nanos() as i128,
            Err(before) => -(before.duration().as_nanos() as i128),
        })
        .unwrap_or_default()
}

/// Whether the walk enters `entry`: anything but a `VENDORED` folder or a virtual
/// environment below the root.
fn not_vendored(entry: &ignore::DirEntry) -> bool {
    !(entry.depth() > 0
        && entry.file_type().is_some_and(|t| t.is_dir())
        && (VENDORED.contains(&entry.file_name().to_string_lossy().as_ref())
            || virtualenv(entry.path())))
}

/// Whether `folder` is a Python virtual environment: it has the `pyvenv.cfg` that
/// `venv` and `virtualenv` write. By that, not by name, so that a package named
/// `venv` (CPython's own) is indexed and an environment named `env` or `.tox/py311`
/// is not. A symlink named so is not followed.
fn virtualenv(folder: &Path) -> bool {
    std::fs::symlink_metadata(folder.join("pyvenv.cfg")).is_ok_and(|m| m.is_file())
}

/// A source file under `root` that the walk finds once ignore rules (.gitignore,
/// .ignore, git's excludes) are not applied, if there is one; the hidden and
/// vendored folders stay out as in `discover`. For a scan that found nothing: a
/// tree whose every source file is ignored (Debian's kernel source ends its
/// .gitignore with `/*`) would otherwise index nothing without a word.
fn excluded_source(root: &Path) -> Option<String> {
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(true)
        .follow_links(false)
        .filter_entry(not_vendored)
        .build()
        .filter_map(std::result::Result::ok)
        .find(|entry| {
            entry.file_type().is_some_and(|t| t.is_file())
                && Language::from_path(entry.path()).is_some()
        })
        .and_then(|entry| {
            let relative = entry.path().strip_prefix(root).ok()?.to_str()?;
            Some(relative.replace('\\', "/"))
        })
}

/// Parses files in parallel, largest first (so that no core is left alone with a
/// big file at the end), in `sources` order in the result. Each file is read with
/// `read_project_file` (under `root`, at most `max_file_bytes`). A file that cannot
/// be read, or holds a NUL byte in its first 8 KiB (binary), is an `Err` with the
/// reason; so is each file not parsed because `progress` was cancelled.
pub fn parse(
    root: &Path,
    max_file_bytes: u64,
    sources: &[Source],
    progress: &Progress,
) -> Vec<Result<ParsedFile, String>> {
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sources[i].bytes));
    let parsed: Vec<(usize, Result<ParsedFile, String>)> = order
        .into_par_iter()
        .map(|i| (i, parse_source(root, max_file_bytes, &sources[i], progress)))
        .collect();
    in_order(parsed)
}

/// Shards of the lexical index `parse_indexed` fills, per thread of the pool: a
/// few, so that the threads finish together however the parse times of the
/// shards' files differ from their sizes.
const SHARDS_PER_THREAD: usize = 2;

/// What `parse_indexed` gives back.
pub struct Parsed {
    /// Each file's symbols, or why it was not parsed, in `sources` order.
    pub files: Vec<Result<FileSymbols, String>>,
    /// The lexical index of the files' documents, in shards, each with the outcome
    /// of filling it: for `LexicalIndex::from_shards`.
    pub shards: Vec<(LexicalIndex, crate::error::Result<()>)>,
}

/// `parse`, each file's documents indexed as soon as the file is parsed (into the
/// shard of the lexical index its thread fills), so that they are never all held
/// at once. The files are dealt into shards of about equal bytes, largest first;
/// each shard's files are parsed in `sources` order, so that the share of files
/// done tracks the share of the work done (largest first, the first minutes of a
/// kernel build parse a few hundred generated headers and the rate in files a
/// second says hours are left). Which shard a file goes to depends only on the
/// sizes of the files, so a build indexes the same documents in the same order
/// every time.
pub fn parse_indexed(
    root: &Path,
    max_file_bytes: u64,
    sources: &[Source],
    progress: &Progress,
) -> Parsed {
    let shards = SHARDS_PER_THREAD * rayon::current_num_threads();
    let done: Vec<_> = dealt(sources, shards)
        .into_par_iter()
        .map(|files| {
            let mut shard = LexicalIndex::for_build(false);
            let mut filled = Ok(());
            let parsed: Vec<_> = files
                .into_iter()
                .map(|i| {
                    let parsed = parse_source(root, max_file_bytes, &sources[i], progress);
                    let symbols = parsed.map(|ParsedFile { symbols, documents }| {
                        if filled.is_ok() {
                            filled = shard.upsert_local(documents);
                        }
                        symbols
                    });
                    (i, symbols)
                })
                .collect();
            (parsed, (shard, filled))
        })
        .collect();
    let mut files = Vec::with_capacity(sources.len());
    let mut shards = Vec::with_capacity(done.len());
    for (parsed, shard) in done {
        files.extend(parsed);
        shards.push(shard);
    }
    Parsed {
        files: in_order(files),
        shards,
    }
}

/// The indexes of `sources` dealt into at most `parts` lists of about equal bytes:
/// largest first, each to the list with the fewest bytes so far (the first of
/// those); each list then in `sources` order. No list is empty.
fn dealt(sources: &[Source], parts: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sources[i].bytes));
    let mut lists: Vec<(u64, Vec<usize>)> =
        vec![(0, Vec::new()); parts.clamp(1, order.len().max(1))];
    for i in order {
        let least = lists
            .iter_mut()
            .min_by_key(|(bytes, _)| *bytes)
            .expect("at least one list");
        least.0 += sources[i].bytes;
        least.1.push(i);
    }
    lists
        .into_iter()
        .map(|(_, mut list)| {
            list.sort_unstable();
            list
        })
        .filter(|list| !list.is_empty())
        .collect()
}

/// One source read and parsed, counted in `progress` (not parsed once cancelled).
fn parse_source(
    root: &Path,
    max_file_bytes: u64,
    source: &Source,
    progress: &Progress,
) -> Result<ParsedFile, String> {
    if progress.cancelled.load(Ordering::Relaxed) {
        return Err("cancelled".to_string());
    }
    let result = read_project_file(root, &source.relative, max_file_bytes)
        .map_err(|err| reason(&err))
        .and_then(|bytes| parse_file(&source.relative, source.language, &bytes));
    progress.done.fetch_add(1, Ordering::Relaxed);
    result
}

/// The values of (index, value) pairs, sorted by index.
fn in_order<T>(mut indexed: Vec<(usize, T)>) -> Vec<T> {
    indexed.sort_unstable_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, value)| value).collect()
}

/// A file parsed: its symbols for the graph, its documents for the lexical index.
#[derive(Debug, Clone)]
pub struct ParsedFile {
    pub symbols: FileSymbols,
    pub documents: Vec<Document>,
}

/// `path`'s symbols and documents (see `symbols_of`, `documents`). A `.h` file
/// that reads as C++ (`header_language`) is parsed as C++.
pub fn parse_file(path: &str, language: Language, bytes: &[u8]) -> Result<ParsedFile, String> {
    let language = match language {
        Language::C if path.ends_with(".h") => header_language(bytes),
        other => other,
    };
    let symbols = symbols_of(language, bytes)?;
    let documents = documents(path, &symbols, bytes);
    Ok(ParsedFile { symbols, documents })
}

/// C++ for a header with a line that only C++ has (one starting `namespace `,
/// `template`, `class `, `public:`..., `using namespace`, or an `#include` of a
/// standard header without an extension, `<vector>`); else C. A `.h` file is C or
/// C++ (LLVM, Qt and pybind11 name their C++ headers so); the C grammar reads C++
/// as a run of syntax errors, the C++ grammar reads C but not its C++ keywords
/// used as names (`new`, `class` in the Linux kernel).
pub fn header_language(bytes: &[u8]) -> Language {
    const CPP: &[&[u8]] = &[
        b"namespace ",
        b"template<",
        b"template <",
        b"class ",
        b"public:",
        b"private:",
        b"protected:",
        b"using namespace ",
        b"extern \"C++\"",
    ];
    let cpp = bytes.split(|b| *b == b'\n').any(|line| {
        let start = line.iter().position(|b| !b.is_ascii_whitespace());
        let line = &line[start.unwrap_or(line.len())..];
        CPP.iter().any(|p| line.starts_with(p))
            || line
                .strip_prefix(b"#include <")
                .and_then(|rest| rest.split(|b| *b == b'>').next())
                .is_some_and(|name| !name.is_empty() && !name.contains(&b'.') && rest_is_name(name))
    });
    if cpp {
        Language::Cpp
    } else {
        Language::C
    }
}

/// A standard C++ header's name: letters, digits and `_` (`vector`, `unordered_map`).
fn rest_is_name(name: &[u8]) -> bool {
    name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// How much of a file `binary_reason` looks at: its first 8 KiB.
pub const BINARY_SAMPLE: usize = 8192;

/// A sample with at least this share (per mille) of control bytes that text does
/// not use (C0 controls but tab, line feed, vertical tab, form feed, carriage
/// return and escape; and DEL) ...
pub const BINARY_CONTROL_PER_MILLE: usize = 20;

/// ... and at least this share (per mille) of bytes that are not valid UTF-8 is
/// binary. Random bytes have about 100 and 600 per mille; text in UTF-8 has none
/// of either, and text in Latin-1, Shift JIS or GBK (invalid UTF-8) no controls.
pub const BINARY_INVALID_PER_MILLE: usize = 250;

/// Why `bytes` is no source file, looking at its first `BINARY_SAMPLE` bytes: a
/// NUL byte, or control bytes and invalid UTF-8 both over their shares (random
/// bytes: a parser's error recovery spends seconds a kilobyte on them). None for
/// text, in any encoding that keeps ASCII's control bytes for control.
pub fn binary_reason(bytes: &[u8]) -> Option<String> {
    let sample = &bytes[..bytes.len().min(BINARY_SAMPLE)];
    if sample.is_empty() {
        return None;
    }
    if sample.contains(&0) {
        return Some("binary (NUL byte)".to_string());
    }
    let controls = sample
        .iter()
        .filter(|&&b| {
            (b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1b)) || b == 0x7f
        })
        .count();
    if controls * 1000 < sample.len() * BINARY_CONTROL_PER_MILLE {
        return None;
    }
    // Bytes of invalid UTF-8; a sequence cut by the sample's end counts as valid.
    let mut invalid = 0;
    let mut rest = sample;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(err) => {
                let Some(bad) = err.error_len() else { break };
                invalid += bad;
                rest = &rest[err.valid_up_to() + bad..];
            }
        }
    }
    (invalid * 1000 >= sample.len() * BINARY_INVALID_PER_MILLE).then(|| {
        format!(
            "binary ({} control and {} invalid UTF-8 bytes in the first {} bytes)",
            controls,
            invalid,
            sample.len()
        )
    })
}

/// A file's symbols, or why not: binary (`binary_reason`).
pub fn symbols_of(language: Language, bytes: &[u8]) -> Result<FileSymbols, String> {
    if let Some(reason) = binary_reason(bytes) {
        return Err(reason);
    }
    Ok(extract(language, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_dealt_by_size_and_parsed_in_their_order() {
        let sources: Vec<Source> = [5u64, 100, 1, 60, 40, 2, 3]
            .iter()
            .enumerate()
            .map(|(i, &bytes)| Source {
                path: PathBuf::from(format!("f{i}.py")),
                relative: format!("f{i}.py"),
                language: Language::Python,
                bytes,
                modified: 0,
            })
            .collect();
        // 100 | 60 40 | then 5, 3, 2, 1 each to the lighter list (the first on a tie).
        assert_eq!(dealt(&sources, 2), [vec![0, 1, 2], vec![3, 4, 5, 6]]);
        assert_eq!(dealt(&sources, 1), [vec![0, 1, 2, 3, 4, 5, 6]]);
        assert_eq!(dealt(&sources[..1], 4), [vec![0]]);
        assert!(dealt(&[], 3).is_empty());
    }

    /// Random bytes without NUL are binary; text is not, in UTF-8, Latin-1 or
    /// Shift JIS (invalid UTF-8, no control bytes), nor UTF-8 with form feeds,
    /// escapes and a few stray control bytes.
    #[test]
    fn random_bytes_are_binary_and_text_in_any_encoding_is_not() {
        let noise = crate::testing::noise(0x9e37_79b9_7f4a_7c15, 500_000);
        let why = binary_reason(&noise).expect("random bytes are binary");
        assert!(
            why.starts_with("binary (") && why.ends_with(" in the first 8192 bytes)"),
            "{why}"
        );
        for language in [Language::Lua, Language::Scala] {
            assert_eq!(symbols_of(language, &noise).err(), Some(why.clone()));
        }
        assert_eq!(
            binary_reason(b"x = 1\0\n").as_deref(),
            Some("binary (NUL byte)")
        );
        let utf8 =
            "-- caf\u{e9} \u{65e5}\u{672c}\n\x0c\x1b[1mlocal x = 1\r\n\tprint(x)\n".repeat(300);
        let latin1: Vec<u8> = "-- caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}\nlocal x = 1\n"
            .repeat(300)
            .chars()
            .map(|c| c as u32 as u8)
            .collect();
        // "日本語のコメント" in Shift JIS, between lines of code.
        let sjis = [
            0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x52, 0x83, 0x81,
        ];
        let shift_jis: Vec<u8> = (0..500)
            .flat_map(|_| [&b"-- "[..], &sjis, &sjis, b"\nx=1\n"].concat())
            .collect();
        let mut stray = utf8.clone().into_bytes();
        stray[10] = 0x01;
        stray[100] = 0x7f;
        for text in [utf8.as_bytes(), &latin1, &shift_jis, &stray, b"", b"\n"] {
            assert_eq!(binary_reason(text), None);
        }
        assert!(symbols_of(Language::Lua, utf8.as_bytes()).is_ok());
    }

    /// A tree whose ignore rules exclude every source file (as Debian's kernel
    /// source does) gets one skipped entry saying so; an empty tree, or one whose
    /// ignored files are no sources, gets none.
    #[test]
    fn a_tree_whose_every_source_is_ignored_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |file: &str| {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        };
        assert_eq!(discover(root, 1000), Discovered::default());
        write(".gitignore");
        std::fs::write(root.join(".gitignore"), "/*\n!/debian/\n").unwrap();
        write("README");
        write("debian/rules");
        write("node_modules/dep/index.js");
        write(".hidden/h.py");
        assert_eq!(discover(root, 1000), Discovered::default());
        write("kernel/sched/core.c");
        let found = discover(root, 1000);
        assert!(found.sources.is_empty());
        assert_eq!(
            found.skipped,
            [("kernel/sched/core.c".to_string(), ALL_EXCLUDED.to_string())]
        );
        // Once one source file is let through, the others are not reported.
        write("debian/tool.py");
        let found = discover(root, 1000);
        assert_eq!(found.sources.len(), 1);
        assert!(found.skipped.is_empty());
    }

    #[test]
    fn shebangs_name_the_language_of_scripts() {
        let of = |head: &[u8]| shebang_language(head);
        assert_eq!(of(b"#!/bin/sh\necho\n"), Some(Ok(Language::Bash)));
        assert_eq!(of(b"#! /bin/bash -e\n"), Some(Ok(Language::Bash)));
        assert_eq!(of(b"#!/usr/bin/env python3\n"), Some(Ok(Language::Python)));
        assert_eq!(
            of(b"#!/usr/bin/python3.11 -u\n"),
            Some(Ok(Language::Python))
        );
        assert_eq!(
            of(b"#!/usr/bin/env -S PYTHONPATH=. python3 -u\n"),
            Some(Ok(Language::Python))
        );
        assert_eq!(of(b"#!/usr/bin/env node"), Some(Ok(Language::JavaScript)));
        assert_eq!(of(b"#!/usr/bin/env ruby\r\n"), Some(Ok(Language::Ruby)));
        assert_eq!(of(b"#!/usr/bin/perl -w\n"), Some(Err("Perl")));
        assert_eq!(of(b"#!/bin/zsh\n"), Some(Err("Shell")));
        assert_eq!(of(b"#!/usr/bin/env\n"), None);
        assert_eq!(of(b"#!/usr/bin/awk -f\n"), None);
        assert_eq!(of(b"# a comment\n"), None);
        assert_eq!(of(b"\x7fELF\x02\x01"), None);
        // Only the first line counts.
        assert_eq!(of(b"#!\npython\n"), None);
    }

    #[test]
    fn discover_counts_files_of_other_languages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            "app.py",
            "lib/core.rs",
            "native/a.c",
            "native/a.h",
            "native/b.cpp",
            "native/b.hpp",
            "scripts/run.zsh",
            "scripts/R/plot.R",
            "scripts/R/fit.r",
            "web/App.vue",
            "web/x.dart",
            "web/App.kt",
            "ios/App.swift",
            "jvm/Main.scala",
            "README.md",
            "Makefile",
            "data.json",
            "ignored/skip.c",
            "node_modules/dep/index.c",
            ".hidden/h.rb",
            ".secret.rb",
            // A package named venv is code; virtual environments, by any name, are not.
            "venv/__init__.py",
            "env/pyvenv.cfg",
            "env/lib/tool.py",
            "tools/py311/pyvenv.cfg",
            "tools/py311/bin/activate.py",
        ];
        for file in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        let found = discover(root, 1_000_000);
        let sources: Vec<_> = found.sources.iter().map(|s| s.relative.as_str()).collect();
        assert_eq!(
            sources,
            [
                "app.py",
                "ios/App.swift",
                "jvm/Main.scala",
                "lib/core.rs",
                "native/a.c",
                "native/a.h",
                "native/b.cpp",
                "native/b.hpp",
                "venv/__init__.py",
                "web/App.kt"
            ]
        );
        assert!(found.skipped.is_empty());
        let counts: Vec<(&str, usize)> = found
            .unsupported
            .iter()
            .map(|(name, n)| (name.as_str(), *n))
            .collect();
        assert_eq!(counts, [("Dart", 1), ("R", 2), ("Shell", 1), ("Vue", 1)]);
        assert_eq!(unsupported_language(Path::new("x.dart")), Some("Dart"));
        assert_eq!(unsupported_language(Path::new("x.h")), None);
        assert_eq!(unsupported_language(Path::new("x.py")), None);
        assert_eq!(unsupported_language(Path::new("Makefile")), None);
        // No language is both parsed and counted as unsupported.
        for (name, extensions) in UNSUPPORTED {
            for extension in *extensions {
                let file = format!("x.{extension}");
                assert!(Language::from_path(Path::new(&file)).is_none(), "{name}");
            }
        }
    }

    #[test]
    fn headers_that_read_as_cpp_are_parsed_as_cpp() {
        let cpp = b"#pragma once\n#include <vector>\nint f(void);\n";
        assert_eq!(header_language(cpp), Language::Cpp);
        let cpp = b"struct A;\nnamespace n {\n  class B : public A {};\n}\n";
        assert_eq!(header_language(cpp), Language::Cpp);
        // The kernel's C: `new` and `class` as names, `<linux/x.h>`.
        let c = b"#include <linux/list.h>\nint f(struct device *new, int class);\n/* class of device */\n";
        assert_eq!(header_language(c), Language::C);
        let parsed = parse_file(
            "a/b.h",
            Language::C,
            b"namespace n { class B { void f() {} }; }\n",
        )
        .unwrap();
        assert_eq!(parsed.symbols.language, Language::Cpp);
        assert!(!parsed.symbols.syntax_errors);
        assert_eq!(parsed.symbols.definitions.len(), 2);
        let parsed = parse_file(
            "a/b.c",
            Language::C,
            b"int new(int class) { return class; }\n",
        )
        .unwrap();
        assert_eq!(parsed.symbols.language, Language::C);
        assert!(!parsed.symbols.syntax_errors);
    }

    /// FIFOs (and sockets, devices) are skipped with a reason, never opened; so are
    /// file names that are not UTF-8, which would collide once made lossy.
    #[cfg(unix)]
    #[test]
    fn special_files_and_non_utf8_names_are_skipped() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("ok.py"), "def f():\n    pass\n").unwrap();
        for name in [&b"a\xff.py"[..], b"a\xfe.py"] {
            let path = root.join(std::ffi::OsStr::from_bytes(name));
            std::fs::write(path, "def g():\n    pass\n").unwrap();
        }
        let fifo = std::ffi::CString::new(root.join("pipe.py").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let found = discover(&root, 1_000_000);
        let sources: Vec<_> = found.sources.iter().map(|s| s.relative.as_str()).collect();
        assert_eq!(sources, ["ok.py"]);
        let mut skipped = found.skipped.clone();
        skipped.sort();
        assert_eq!(
            skipped,
            [
                ("a\u{FFFD}.py".to_string(), NOT_UTF8.to_string()),
                ("a\u{FFFD}.py".to_string(), NOT_UTF8.to_string()),
                ("pipe.py".to_string(), SPECIAL.to_string()),
            ]
        );
        let parsed = parse(&root, 1_000_000, &found.sources, &Progress::default());
        assert!(parsed[0].is_ok());
    }

    /// `discover` as a walk on one thread finds it (the walk `discover` made before
    /// it ran on the pool): the reference the parallel walk must match.
    fn discover_on_one_thread(root: &Path, max_file_bytes: u64) -> Discovered {
        let mut found_all = Discovered::default();
        let walk = ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            .filter_entry(not_vendored)
            .build();
        for entry in walk {
            match found(root, entry, max_file_bytes) {
                Some(Found::Source(source)) => found_all.sources.push(source),
                Some(Found::Skipped(path, why)) => found_all.skipped.push((path, why)),
                Some(Found::Other(language)) => {
                    *found_all
                        .unsupported
                        .entry(language.to_string())
                        .or_default() += 1
                }
                Some(Found::Folder(_) | Found::Script(_)) | None => {}
            }
        }
        found_all
            .sources
            .sort_by(|a, b| a.relative.cmp(&b.relative));
        found_all.skipped.sort();
        if found_all.sources.is_empty() {
            if let Some(example) = excluded_source(root) {
                found_all.skipped.push((example, ALL_EXCLUDED.to_string()));
            }
        }
        found_all
    }

    const FOLDERS: &[&str] = &[
        "",
        "a",
        "a/b",
        "a/b/c",
        "d",
        ".hidden",
        "node_modules",
        "a/vendor",
        "env",
    ];
    const NAMES: &[&str] = &[
        "x.py",
        "y.rs",
        "z.js",
        "run",
        "tool",
        "n.txt",
        "k.dart",
        "big.py",
        ".dot.py",
        "pyvenv.cfg",
    ];
    const RULES: &[&str] = &[
        "*.py", "!x.py", "b/", "/y.rs", "c", "*.js", "!a/", "run", "d/", "!/d/x.py", "big.*",
        "**/z.js",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any tree of sources, scripts, other files, ignore files (`.gitignore` and
        /// `.ignore` at any depth, negations among their rules), hidden, vendored
        /// and virtual-environment folders and symlinks: the parallel walk finds
        /// what the walk on one thread finds, each file with the size and time
        /// `lstat` gives.
        #[cfg(unix)]
        #[test]
        fn the_parallel_walk_finds_what_one_thread_finds(
            files in proptest::collection::vec((0..FOLDERS.len(), 0..NAMES.len(), 0..3usize), 0..24),
            ignores in proptest::collection::vec(
                (0..FOLDERS.len(), proptest::bool::ANY, proptest::collection::vec(0..RULES.len(), 1..4)),
                0..4,
            ),
            links in proptest::collection::vec((0..FOLDERS.len(), 0..FOLDERS.len(), proptest::bool::ANY), 0..3),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            for (folder, name, body) in files {
                let folder = root.join(FOLDERS[folder]);
                std::fs::create_dir_all(&folder).unwrap();
                let text: &[u8] = match body {
                    0 => b"x = 1\n",
                    1 => b"#!/usr/bin/env python3\nprint(1)\n",
                    _ => b"#!/bin/zsh\necho\n",
                };
                std::fs::write(folder.join(NAMES[name]), text).unwrap();
            }
            for (folder, git, rules) in ignores {
                let folder = root.join(FOLDERS[folder]);
                std::fs::create_dir_all(&folder).unwrap();
                let text: Vec<&str> = rules.iter().map(|&r| RULES[r]).collect();
                let name = if git { ".gitignore" } else { ".ignore" };
                std::fs::write(folder.join(name), text.join("\n")).unwrap();
            }
            for (n, (folder, target, to_folder)) in links.into_iter().enumerate() {
                let folder = root.join(FOLDERS[folder]);
                std::fs::create_dir_all(&folder).unwrap();
                let target = root.join(FOLDERS[target]);
                let target = if to_folder { target } else { target.join("x.py") };
                let _ = std::os::unix::fs::symlink(target, folder.join(format!("link{n}.py")));
            }
            let parallel = discover(&root, 20);
            proptest::prop_assert_eq!(&parallel, &discover_on_one_thread(&root, 20));
            let everything = discover(&root, u64::MAX);
            proptest::prop_assert_eq!(&everything, &discover_on_one_thread(&root, u64::MAX));
            for source in &everything.sources {
                let meta = std::fs::symlink_metadata(&source.path).unwrap();
                proptest::prop_assert_eq!((source.bytes, source.modified), (meta.len(), modified_ns(&meta)));
            }
        }
    }
}
