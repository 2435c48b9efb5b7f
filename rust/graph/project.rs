//! A project: a root folder, the graph of its source files, and what was said about
//! the files that were not (fully) indexed. Building from disk, updating one file
//! from disk, saving and loading, and the paths a caller may name. The bindings wrap
//! this type; everything here is plain Rust.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use std::sync::OnceLock;

use foldhash::HashMap;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rayon::prelude::*;

use super::extract::{FileSymbols, Language};
use super::look::{self, Tracked};
use super::persist::{self, corrupt, load_with_sum, Saved};
use super::read::{read_project_file, reason};
use super::scan::{
    discover, parse_file, parse_indexed, script_language, Parsed, ParsedFile, Phase, Progress,
    Source, NOT_UTF8,
};
use super::store::KnowledgeGraph;
use super::view::view_path;
use crate::atomic::AtomicFile;
use crate::error::{invalid, Error, Result};
use crate::retrieve::{Document, LexicalFile, LexicalIndex};
use crate::{release_free_memory, with_spare};

/// The warning for a file indexed only as far as the parser got, when what it
/// skipped is not known (the parse was given up: see `extract::FILE_BUDGET`).
pub const PARTIAL: &str = "syntax errors: indexed as far as the parser got";

/// (path, why) of a file not indexed, or indexed in part.
pub type Remark = (String, String);

/// The graph, the lexical index of its files and the remarks about files, kept
/// together under one lock: the index holds the documents of exactly the files the
/// graph holds.
#[derive(Debug, Default)]
pub struct State {
    graph: KnowledgeGraph,
    lexical: Lexical,
    skipped: Vec<Remark>,
    warnings: Vec<Remark>,
}

impl State {
    pub fn graph(&self) -> &KnowledgeGraph {
        &self.graph
    }

    /// The documents of the graph's files (see `documents`). After a load, the
    /// first call reads the index (see `Lexical`).
    pub fn lexical(&self) -> &LexicalIndex {
        self.lexical.get(&self.graph)
    }

    /// Whether the lexical index is in memory: false after a load until the
    /// first `lexical` (a search, a save).
    pub fn lexical_read(&self) -> bool {
        self.lexical.index.get().is_some()
    }

    /// Puts a parsed file in the graph and its documents in the index.
    fn index(&mut self, path: &str, parsed: ParsedFile) {
        self.lexical.change(path, Some(parsed.documents));
        self.graph.update_file(path, parsed.symbols);
    }

    /// Takes a file out of the graph and the index; false if the graph did not hold it.
    fn drop_file(&mut self, path: &str) -> bool {
        self.lexical.change(path, None);
        self.graph.remove_file(path)
    }

    /// (path, reason) of every file not indexed.
    pub fn skipped(&self) -> &[Remark] {
        &self.skipped
    }

    /// (path, problem) of every file indexed only in part.
    pub fn warnings(&self) -> &[Remark] {
        &self.warnings
    }

    /// Forgets what was said about a file before it is looked at again.
    fn forget(&mut self, path: &str) {
        self.skipped.retain(|(p, _)| p != path);
        self.warnings.retain(|(p, _)| p != path);
    }
}

/// A project's lexical index: in memory, or, after a load, still in its file
/// until it is first asked for (`State::lexical`: a search, a save, the
/// documents). A graph query or an update never reads it, so a load that leaves
/// it in its file does not pay for it. The documents of the
/// files updated or removed in the meantime wait beside the file, the latest for
/// each file, and go into the index when it is read, in the order they came
/// (what updating the index then and there would have given: the same
/// documents, in the same order).
#[derive(Debug, Default)]
struct Lexical {
    index: OnceLock<LexicalIndex>,
    /// Until `index` is set after a load.
    unread: Mutex<Option<Unread>>,
}

/// What a loaded project's index is read from, and the changes since the load.
#[derive(Debug)]
struct Unread {
    /// `None` when the file was missing, unreadable, or saved with another
    /// version of the graph file: the index is then made from the files on disk.
    file: Option<LexicalFile>,
    root: PathBuf,
    max_file_bytes: u64,
    /// (path, its documents, or `None` for a file removed), in order; an entry
    /// is dropped (`None`) when its file changes again (the later entry replaces
    /// whatever the file had), and the dropped ones are let go once they are
    /// half: a project updated for days without a search holds one entry a file.
    changes: Vec<Option<(String, Option<Vec<Document>>)>>,
    /// Each file's latest entry in `changes`.
    at: HashMap<String, usize>,
    dropped: usize,
}

impl Lexical {
    fn ready(index: LexicalIndex) -> Lexical {
        Lexical {
            index: OnceLock::from(with_room(index)),
            unread: Mutex::new(None),
        }
    }

    fn unread(file: Option<LexicalFile>, root: PathBuf, max_file_bytes: u64) -> Lexical {
        let unread = Unread {
            file,
            root,
            max_file_bytes,
            changes: Vec::new(),
            at: HashMap::default(),
            dropped: 0,
        };
        Lexical {
            index: OnceLock::new(),
            unread: Mutex::new(Some(unread)),
        }
    }

    /// The index, read first if it is not yet (`Unread::read`).
    fn get(&self, graph: &KnowledgeGraph) -> &LexicalIndex {
        self.index.get_or_init(|| {
            let unread = self.unread.lock().take();
            let index = unread.map_or_else(LexicalIndex::default, |u| u.read(graph));
            let index = with_room(index);
            // What the read freed, and the arrays the room replaced.
            release_free_memory();
            index
        })
    }

    /// Replaces the documents of the file `path` with `documents` (none: the
    /// file is gone), in the index or beside its file.
    fn change(&mut self, path: &str, documents: Option<Vec<Document>>) {
        if let Some(index) = self.index.get_mut() {
            apply(index, path, documents);
            return;
        }
        self.unread
            .get_mut()
            .as_mut()
            .expect("an index not read has its file")
            .change(path, documents);
    }

    /// An error if the index in memory reads a file written in place since
    /// (`LexicalIndex::check_source`); one not read yet checks its file when it
    /// is read.
    fn check_source(&self) -> Result<()> {
        self.index.get().map_or(Ok(()), LexicalIndex::check_source)
    }
}

/// `index` with room for what comes next, as the graph keeps (`with_spare`):
/// without it, the first update after a build or load copies the index's large
/// arrays into fresh memory.
fn with_room(mut index: LexicalIndex) -> LexicalIndex {
    index.reserve(with_spare(index.len()) - index.len());
    index
}

/// Replaces the documents of the file `path` in `index` (see `Lexical::change`).
fn apply(index: &mut LexicalIndex, path: &str, documents: Option<Vec<Document>>) {
    index.remove_group(path);
    if let Some(documents) = documents {
        add_documents(index, documents);
    }
}

impl Unread {
    /// Notes that the file `path` now has `documents` (none: it is gone).
    fn change(&mut self, path: &str, documents: Option<Vec<Document>>) {
        if let Some(earlier) = self.at.insert(path.to_string(), self.changes.len()) {
            self.changes[earlier] = None;
            self.dropped += 1;
        }
        self.changes.push(Some((path.to_string(), documents)));
        if self.dropped > 16 && self.dropped * 2 > self.changes.len() {
            self.changes.retain(Option::is_some);
            self.dropped = 0;
            for (i, (path, _)) in self.changes.iter().flatten().enumerate() {
                self.at.insert(path.clone(), i);
            }
        }
    }

    /// The index of `graph`'s files: the file's, with the changes since applied;
    /// when the file cannot be used (missing, saved with another graph file,
    /// written in place since the load, damaged), the index made from the files
    /// of `graph` on disk (they are what the changes were read from).
    fn read(self, graph: &KnowledgeGraph) -> LexicalIndex {
        // The changes go over the file's index, searched where it is (see
        // `LexicalIndex::has_overlay`); a read of the file that fails on the
        // way is noted (`check_source`).
        let Unread {
            file,
            root,
            max_file_bytes,
            changes,
            ..
        } = self;
        let read = |file: LexicalFile| {
            let mut index = file.read()?;
            for (path, documents) in changes.into_iter().flatten() {
                index.remove_group(&path);
                if let Some(documents) = documents {
                    index.upsert_all(documents)?;
                }
            }
            index.check_source()?;
            Ok::<_, crate::Error>(index)
        };
        match file.map(read) {
            Some(Ok(index)) => index,
            _ => lexical_from_disk(&root, max_file_bytes, graph),
        }
    }
}

/// What a scan of a root found, before anything is parsed.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The root, canonical.
    pub root: PathBuf,
    pub max_file_bytes: u64,
    /// The source files to parse, sorted by relative path.
    pub sources: Vec<Source>,
    /// Files skipped before parsing (too large, unreadable), with why.
    pub skipped: Vec<Remark>,
    /// Files of languages the graph does not parse: language -> count.
    pub unsupported: BTreeMap<String, usize>,
}

/// What `Project::update_file` did with a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Updated {
    /// Parsed and indexed.
    Indexed,
    /// Indexed as far as the parser got, or as far as a limit of extraction
    /// allowed (listed in `warnings`).
    Partial,
    /// Not on disk (any more): removed from the graph.
    Removed,
    /// Too large, binary or unreadable: removed from the graph and listed in
    /// `skipped` with this reason.
    Skipped(String),
}

/// A project root and its graph. Reads take a shared lock and updates an exclusive
/// one, held only while the graph changes (never while a file is read or parsed).
#[derive(Debug)]
pub struct Project {
    root: PathBuf,
    max_file_bytes: u64,
    state: RwLock<State>,
}

impl Project {
    fn new(
        root: PathBuf,
        max_file_bytes: u64,
        graph: KnowledgeGraph,
        lexical: Lexical,
        skipped: Vec<Remark>,
        warnings: Vec<Remark>,
    ) -> Self {
        // What the build or load freed (an index in memory: its room made too).
        release_free_memory();
        let state = RwLock::new(State {
            graph,
            lexical,
            skipped,
            warnings,
        });
        Self {
            root,
            max_file_bytes,
            state,
        }
    }

    /// The source files under `root` (see `scan::discover`); `root` must be a folder.
    pub fn scan(root: &Path, max_file_bytes: u64) -> Result<Scan> {
        let root = canonical_root(root)?;
        let found = discover(&root, max_file_bytes);
        Ok(Scan {
            root,
            max_file_bytes,
            sources: found.sources,
            skipped: found.skipped,
            unsupported: found.unsupported,
        })
    }

    /// The source files under `root` whatever their size, and the count of files of
    /// each language the graph does not parse, found through the walk kept at
    /// `record` (see `look`); `root` must be a folder.
    pub fn tracked(root: &Path, record: &Path) -> Result<Tracked> {
        let root = canonical_root(root)?;
        Ok(look::tracked(&root, record))
    }

    /// The project of a scan whose sources were parsed (as `scan::parse_indexed`
    /// returns them): a file that could not be parsed is skipped with its reason,
    /// one with syntax errors gets a warning. Enters its phases in `progress`.
    pub fn from_parsed(scan: Scan, parsed: Parsed, progress: &Progress) -> Self {
        let Parsed { files, shards } = parsed;
        let Settled {
            root,
            max_file_bytes,
            files,
            skipped,
            warnings,
        } = settled(scan, files);
        // The index first, then the graph, each on all cores: side by side
        // (rayon::join) they were no faster and held more memory.
        progress.enter(Phase::LexicalIndex);
        let (lexical, added) = LexicalIndex::from_shards(shards, false);
        debug_assert!(added.is_ok(), "{added:?}");
        release_free_memory();
        progress.enter(Phase::Linking);
        let graph = KnowledgeGraph::from_files(files);
        let lexical = Lexical::ready(lexical);
        Self::new(root, max_file_bytes, graph, lexical, skipped, warnings)
    }

    /// Writes what `from_parsed(scan, parsed).save(path)` writes, byte for byte,
    /// without holding the project: the shards' merged index is written straight
    /// to its file (`LexicalIndex::write_merged`) and the shards dropped before
    /// the graph is made; the graph is dropped once saved. For a build whose
    /// caller only wants the store (`aircher-mem index`): the merge is never held
    /// in memory beside the shards, nor the graph beside the merged index.
    /// Returns the number of files in the graph, the files
    /// skipped and the warnings. Enters its phases in `progress`.
    pub fn build_into(
        scan: Scan,
        parsed: Parsed,
        path: &Path,
        progress: &Progress,
    ) -> Result<Built> {
        let Parsed { files, shards } = parsed;
        let Settled {
            root,
            files,
            skipped,
            warnings,
            ..
        } = settled(scan, files);
        progress.enter(Phase::LexicalIndex);
        let (index, added) = LexicalIndex::write_merged(shards, false, &lexical_path(path))?;
        debug_assert!(added.is_ok(), "{added:?}");
        release_free_memory();
        progress.enter(Phase::Linking);
        let graph = KnowledgeGraph::from_files(files);
        progress.enter(Phase::Saving);
        let (written, view) = rayon::join(
            || write_graph(path, &root, &graph, &skipped, &warnings),
            || graph.write_view(&view_path(path)),
        );
        let (graph_file, sum) = written?;
        let files = graph.file_count();
        drop(graph);
        commit_all(graph_file, [index.finish(sum)?, view?.finish(sum)?])?;
        Ok(Built {
            files,
            skipped,
            warnings,
        })
    }

    /// Scans `root` and parses its source files (in parallel, reporting to `progress`).
    pub fn build(root: &Path, max_file_bytes: u64, progress: &Progress) -> Result<Self> {
        progress.enter(Phase::Scanning);
        let scan = Self::scan(root, max_file_bytes)?;
        progress.enter(Phase::Parsing);
        let parsed = parse_indexed(&scan.root, scan.max_file_bytes, &scan.sources, progress);
        Ok(Self::from_parsed(scan, parsed, progress))
    }

    /// The project root (canonical when built; as saved or given when loaded).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// The graph and the remarks, read-locked until the guard is dropped.
    pub fn state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read()
    }

    /// `state`, for a caller that reads the lexical index's posting lists (a
    /// search, a save): an error if the file a loaded index reads them from was
    /// written in place since (`LexicalIndex::check_source`).
    pub fn state_checked(&self) -> Result<RwLockReadGuard<'_, State>> {
        let state = self.state.read();
        state.lexical.check_source()?;
        Ok(state)
    }

    /// The state to change, checked as `state_checked` does: an update reads the
    /// terms of the documents it replaces.
    fn state_to_change(&self) -> Result<RwLockWriteGuard<'_, State>> {
        let state = self.state.write();
        state.lexical.check_source()?;
        Ok(state)
    }

    /// `path` (relative to the root, or absolute inside it) as the graph names it.
    pub fn relative(&self, path: &Path) -> Result<String> {
        relative_to(&self.root, path)
    }

    /// Re-reads one file from disk (with `read_project_file`: no symlink followed,
    /// nothing but a regular file opened) and repairs only the edges into and out of
    /// it. A file that is gone is removed; one that is too large, binary, unreadable,
    /// a symlink or not a regular file is removed and listed in `skipped` (so is a
    /// name that is not UTF-8, left out of the graph); one with syntax errors is indexed as far as
    /// the parser got and listed in `warnings`. A file without an extension is a
    /// script of the language its `#!` line names (one the graph holds that no longer
    /// names one is removed). A path outside the root, or not of a language the graph
    /// parses, is an error.
    pub fn update_file(&self, path: &Path) -> Result<Updated> {
        let relative = self.relative(path)?;
        if path.to_str().is_none() {
            // As a scan does: the graph names files by UTF-8 paths.
            let mut state = self.state_to_change()?;
            state.forget(&relative);
            state.skipped.push((relative, NOT_UTF8.to_string()));
            return Ok(Updated::Skipped(NOT_UTF8.to_string()));
        }
        // A script without an extension: by its `#!` line, or, gone from disk, by
        // the language the graph has it in.
        let language =
            Language::from_path(Path::new(&relative)).or_else(|| {
                match script_language(&self.root, &relative) {
                    Some(Ok(language)) => Some(language),
                    Some(Err(_)) => None,
                    None => self.state.read().graph.file_language(&relative),
                }
            });
        let Some(language) = language else {
            if self.state.read().graph.file_node(&relative).is_some() {
                // A script whose `#!` line no longer names a language the graph parses.
                let mut state = self.state_to_change()?;
                state.forget(&relative);
                state.drop_file(&relative);
                return Ok(Updated::Removed);
            }
            return Err(invalid(
                "path",
                format!("{relative} is not a source file of a supported language"),
            ));
        };
        let parsed = match read_project_file(&self.root, &relative, self.max_file_bytes) {
            Err(Error::Missing { .. }) => {
                let mut state = self.state_to_change()?;
                state.forget(&relative);
                state.drop_file(&relative);
                return Ok(Updated::Removed);
            }
            Err(err) => Err(reason(&err)),
            Ok(bytes) => parse_file(&relative, language, &bytes),
        };
        let mut state = self.state_to_change()?;
        state.forget(&relative);
        Ok(match parsed {
            Ok(mut parsed) => {
                let said = remarks(&relative, &mut parsed.symbols);
                let partial = !said.is_empty();
                state.warnings.extend(said);
                state.index(&relative, parsed);
                if partial {
                    Updated::Partial
                } else {
                    Updated::Indexed
                }
            }
            Err(reason) => {
                state.drop_file(&relative);
                state.skipped.push((relative, reason.clone()));
                Updated::Skipped(reason)
            }
        })
    }

    /// Drops a file from the graph and what was said about it; false if it was not
    /// in the graph.
    pub fn remove_file(&self, path: &Path) -> Result<bool> {
        // A file the graph holds or lists as skipped is removed by the name it is
        // known by, whatever is on disk now (it may have become a symlink out of the
        // project): nothing is read, so only other paths go through the full check.
        let known = path.to_str().filter(|name| {
            let state = self.state.read();
            state.graph.file_node(name).is_some() || state.skipped.iter().any(|(p, _)| p == name)
        });
        let relative = match known {
            Some(name) => name.to_string(),
            None => self.relative(path)?,
        };
        let mut state = self.state_to_change()?;
        state.forget(&relative);
        Ok(state.drop_file(&relative))
    }

    /// What `save` writes: the root, each file's symbols and links, the remarks.
    pub fn saved(&self) -> Saved {
        self.saved_from(&self.state.read())
    }

    /// Writes the project to `path` (see `persist`) and its lexical index beside it
    /// (`lexical_path`), tied to this version of the graph file. Both are streamed
    /// to temporary files, side by side, under the read lock (queries go on;
    /// updates wait): the graph is copied into its saved form a run of files at a
    /// time, each run encoded, written and dropped; the index's postings are
    /// encoded and written a batch at a time: neither encoded file is ever held
    /// whole. The index's header, which
    /// names the graph file's checksum, is written once the graph's is known. The
    /// two files are synced and renamed side by side after the lock is released;
    /// whichever is renamed first, a crash between the two leaves an index that
    /// `load` does not pair with the graph (it is rebuilt from disk then).
    pub fn save(&self, path: &Path) -> Result<()> {
        let root = &self.root;
        let (graph, tied) = {
            let state = self.state_checked()?;
            let (graph, (index, view)) = rayon::join(
                || write_graph(path, root, &state.graph, &state.skipped, &state.warnings),
                || {
                    rayon::join(
                        || state.lexical().write(&lexical_path(path)),
                        || state.graph.write_view(&view_path(path)),
                    )
                },
            );
            let (graph, sum) = graph?;
            (graph, [index?.finish(sum)?, view?.finish(sum)?])
        };
        commit_all(graph, tied)
    }

    fn saved_from(&self, state: &State) -> Saved {
        Saved {
            root: self.root.to_string_lossy().into_owned(),
            graph: state.graph.saved(),
            skipped: state.skipped.clone(),
            warnings: state.warnings.clone(),
        }
    }

    /// Reads a project written by `save`; `root` overrides the saved root. The
    /// lexical index saved beside it is read as `read` says; when it is missing,
    /// unreadable or saved with another version of the graph file, it is made from
    /// the files on disk then.
    pub fn load(
        path: &Path,
        root: Option<PathBuf>,
        max_file_bytes: u64,
        read: ReadIndex,
    ) -> Result<Self> {
        // The index file is opened (mapped: a later save renames a new file over
        // its name and leaves these bytes) and its header read; the index is read
        // beside the graph (`WithGraph`) or when first asked for (`Lexical`).
        let load_graph = || -> Result<_> {
            let (saved, sum) = load_with_sum(path)?;
            let graph =
                KnowledgeGraph::from_saved(saved.graph).map_err(|why| corrupt(path, &why))?;
            Ok((saved.root, graph, sum, saved.skipped, saved.warnings))
        };
        let mut file = LexicalFile::open(&lexical_path(path)).ok();
        let generation = file.as_ref().map(LexicalFile::generation);
        let (loaded, index) = match read {
            ReadIndex::WhenNeeded => (load_graph(), None),
            // Side by side: each takes about half the load, and neither keeps
            // both cores busy on its own.
            ReadIndex::WithGraph => {
                let (loaded, index) =
                    rayon::join(load_graph, || file.take().map(LexicalFile::read));
                (loaded, Some(index))
            }
        };
        let (saved_root, graph, sum, skipped, warnings) = loaded?;
        let root = root.unwrap_or_else(|| PathBuf::from(saved_root));
        let current = generation == Some(sum);
        let lexical = match index {
            None => Lexical::unread(file.filter(|_| current), root.clone(), max_file_bytes),
            Some(Some(Ok(index))) if current => Lexical::ready(index),
            Some(_) => {
                let lexical = Lexical::unread(None, root.clone(), max_file_bytes);
                lexical.get(&graph);
                lexical
            }
        };
        Ok(Self::new(
            root,
            max_file_bytes,
            graph,
            lexical,
            skipped,
            warnings,
        ))
    }
}

/// When [`Project::load`] reads the lexical index saved beside the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadIndex {
    /// When it is first needed (a search, a save, the documents): graph queries
    /// and updates never wait for it, and the load does not read it.
    #[default]
    WhenNeeded,
    /// With the graph, side by side: for a caller about to search, for whom
    /// the two together take less than one after the other.
    WithGraph,
}

impl std::str::FromStr for ReadIndex {
    type Err = Error;

    fn from_str(read: &str) -> Result<Self> {
        match read {
            "when_needed" => Ok(ReadIndex::WhenNeeded),
            "with_graph" => Ok(ReadIndex::WithGraph),
            other => Err(invalid(
                "read_index",
                format!("must be 'when_needed' or 'with_graph', got {other:?}"),
            )),
        }
    }
}

/// What [`Project::build_into`] says of the project it saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The files in the graph.
    pub files: usize,
    pub skipped: Vec<Remark>,
    pub warnings: Vec<Remark>,
}

/// The parts of a parsed scan a project is made of (see `settled`).
struct Settled {
    root: PathBuf,
    max_file_bytes: u64,
    /// Each parsed file's symbols.
    files: Vec<(String, FileSymbols)>,
    /// The files skipped, those the parse could not read too.
    skipped: Vec<Remark>,
    /// A file with syntax errors gets one.
    warnings: Vec<Remark>,
}

/// The parts of `scan` and its parse a project is made of.
fn settled(scan: Scan, parsed: Vec<std::result::Result<FileSymbols, String>>) -> Settled {
    let Scan {
        root,
        max_file_bytes,
        sources,
        mut skipped,
        ..
    } = scan;
    let mut files = Vec::with_capacity(sources.len());
    let mut warnings = Vec::new();
    for (source, result) in sources.into_iter().zip(parsed) {
        match result {
            Ok(mut symbols) => {
                warnings.extend(remarks(&source.relative, &mut symbols));
                files.push((source.relative, symbols));
            }
            Err(reason) => skipped.push((source.relative, reason)),
        }
    }
    Settled {
        root,
        max_file_bytes,
        files,
        skipped,
        warnings,
    }
}

/// The graph file of a project, streamed to a temporary file beside `path` (see
/// `persist`): the graph is copied into its saved form a run of files at a time,
/// each run encoded, written and dropped. The file, to commit, and its checksum.
fn write_graph(
    path: &Path,
    root: &Path,
    graph: &KnowledgeGraph,
    skipped: &[Remark],
    warnings: &[Remark],
) -> Result<(AtomicFile, u64)> {
    let mut file = persist::Writer::create(path)?;
    graph.saved_chunks(
        persist::CHUNK,
        |files| persist::encode_chunk(&files),
        |chunk| file.chunk(&chunk?),
    )?;
    file.finish(graph.names(), &root.to_string_lossy(), skipped, warnings)
}

/// Syncs and renames a graph file and the files tied to it (its lexical index
/// and its view) side by side (see [`Project::save`]).
fn commit_all<const N: usize>(graph: AtomicFile, tied: [AtomicFile; N]) -> Result<()> {
    std::thread::scope(|s| {
        let tied: Vec<_> = tied
            .into_iter()
            .map(|file| s.spawn(|| file.commit()))
            .collect();
        let mut result = graph.commit();
        for file in tied {
            let committed = file
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            result = result.and(committed);
        }
        result
    })
}

/// Where the lexical index of the graph file `path` lives: beside it, with the
/// extension `.lexical` (`graph.bin` -> `graph.lexical`).
pub fn lexical_path(path: &Path) -> PathBuf {
    path.with_extension("lexical")
}

/// The lexical index of the graph's files, read again from disk (in parallel). A
/// file that cannot be read any more contributes no documents; the next update
/// from disk settles it.
fn lexical_from_disk(root: &Path, max_file_bytes: u64, graph: &KnowledgeGraph) -> LexicalIndex {
    let files = graph.files();
    let documents: Vec<_> = files
        .par_iter()
        .filter_map(|(path, symbols)| {
            let bytes = read_project_file(root, path, max_file_bytes).ok()?;
            parse_file(path, symbols.language, &bytes).ok()
        })
        .map(|parsed| parsed.documents)
        .collect();
    lexical_of(documents.into_iter().flatten().collect())
}

/// Adds code documents to the index (tokenized in parallel). They use the seven
/// field names of `documents`, far below the index's cap on distinct fields, its
/// only refusal.
fn add_documents(lexical: &mut LexicalIndex, documents: Vec<Document>) {
    let added = lexical.upsert_all(documents);
    debug_assert!(added.is_ok(), "{added:?}");
}

/// The lexical index of a whole project's documents, as a build makes it. The
/// bulk load builds it in memory of exact sizes, its lists together, apart from
/// the pages the tokenizing threads used; those, and the documents' (freed as they
/// were indexed, on every thread), are returned right after.
pub fn lexical_of(documents: Vec<Document>) -> LexicalIndex {
    let mut lexical = LexicalIndex::default();
    add_documents(&mut lexical, documents);
    release_free_memory();
    lexical
}

/// The warnings about one parsed file: syntax errors (the lines the parser skipped),
/// and each limit its extraction reached (both taken out of `symbols`).
fn remarks(path: &str, symbols: &mut FileSymbols) -> Vec<Remark> {
    let mut out = Vec::new();
    if symbols.syntax_errors {
        let note = symbols.error_note.take();
        out.push((
            path.to_string(),
            note.unwrap_or_else(|| PARTIAL.to_string()),
        ));
    }
    for note in std::mem::take(&mut symbols.truncated) {
        out.push((path.to_string(), note));
    }
    out
}

/// The project root, canonical, or an error if it is not a directory.
pub fn canonical_root(root: &Path) -> Result<PathBuf> {
    if !root.is_dir() {
        return Err(invalid(
            "root",
            format!("{} is not a directory", root.display()),
        ));
    }
    root.canonicalize()
        .map_err(|err| invalid("root", format!("{}: {err}", root.display())))
}

/// `path` with its longest existing ancestor resolved (symlinks, `..`) and the rest
/// appended as written; `path` itself when no ancestor resolves.
fn resolve(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(mut resolved) = existing.canonicalize() {
            resolved.extend(rest.iter().rev());
            return resolved;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `path` relative to `root`, with `/` between components: `path` is relative to
/// the root or absolute inside it (symlinks resolved), `.` is dropped and `..` takes
/// back the component before it. Refused (as invalid input): an empty or blank path,
/// one holding a NUL byte, the root itself, and a path that leads outside the root,
/// by `..` or through a symlink.
pub fn relative_to(root: &Path, path: &Path) -> Result<String> {
    let raw = path.as_os_str().as_encoded_bytes();
    if raw.contains(&0) {
        return Err(invalid("path", format!("{path:?} holds a NUL byte")));
    }
    // Compare like with like: symlinks resolved on both sides.
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let outside = |why: &str| {
        invalid(
            "path",
            format!(
                "{} is outside the project root {}{why}",
                path.display(),
                root.display()
            ),
        )
    };
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Err(outside(": the path is empty"));
    }
    let rel = if path.is_absolute() {
        resolve(path)
            .strip_prefix(&root)
            .map_err(|_| outside(""))?
            .to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(|| outside(""))?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside("")),
        }
    }
    if parts.is_empty() {
        return Err(invalid(
            "path",
            format!(
                "{} is the project root itself, not a file in it",
                path.display()
            ),
        ));
    }
    // Nor may it leave the root through a symlink inside it.
    let joined: PathBuf = parts.iter().collect();
    if !resolve(&root.join(joined)).starts_with(&root) {
        return Err(outside(""));
    }
    Ok(parts
        .iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Symbols;
    use crate::Error;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/b.py"), "def f():\n    g()\n").unwrap();
        std::fs::write(root.join("g.py"), "def g():\n    pass\n").unwrap();
        (dir, root)
    }

    /// `project` and 40 files of 9 sizes, each with a function, a class and a
    /// method: enough for every shard of a build.
    fn sized_project() -> (tempfile::TempDir, PathBuf) {
        let (dir, root) = project();
        for i in 0..40 {
            let body = "    x = helper(y)\n".repeat(i % 9 + 1);
            let class = format!("class C{i}:\n    def run(self):\n        return f{i}(1)\n");
            let source = format!("def f{i}(y):\n{body}\n{class}");
            std::fs::write(root.join(format!("m{i}.py")), source).unwrap();
        }
        (dir, root)
    }

    /// A build indexes each file's documents as it parses it, into shards by size:
    /// the index answers as the one of all the documents at once does.
    #[test]
    fn a_build_indexes_what_the_parse_documents() {
        let (_dir, root) = sized_project();
        let built = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        let scan = Project::scan(&root, 1_000_000).unwrap();
        let parsed =
            super::super::scan::parse(&root, 1_000_000, &scan.sources, &Progress::default());
        let all = lexical_of(
            parsed
                .into_iter()
                .flat_map(|p| p.unwrap().documents)
                .collect(),
        );
        let state = built.state();
        assert_eq!(state.lexical().len(), all.len());
        assert_eq!(
            all.len(),
            40 * 4 + 2 * 2,
            "three definitions and the file, each"
        );
        let params = crate::retrieve::Bm25Params::default();
        for query in ["helper", "run f7", "C12 run", "C3", "m3.py x y"] {
            let hits = |index: &LexicalIndex| -> Vec<(String, u64)> {
                index
                    .search(query, &params, &[], 20)
                    .into_iter()
                    .map(|h| (h.key, h.score.to_bits()))
                    .collect()
            };
            assert_eq!(hits(state.lexical()), hits(&all), "{query}");
            assert!(!hits(&all).is_empty(), "{query}");
        }
    }

    /// Two builds of the same tree save the same bytes: the files go to the same
    /// shards every time, whatever thread parses them.
    #[test]
    fn builds_save_the_same_bytes() {
        let (_dir, root) = sized_project();
        let out = tempfile::tempdir().unwrap();
        let saved: Vec<(Vec<u8>, Vec<u8>)> = (0..3)
            .map(|i| {
                let path = out.path().join(format!("g{i}.bin"));
                Project::build(&root, 1_000_000, &Progress::default())
                    .unwrap()
                    .save(&path)
                    .unwrap();
                let lexical = std::fs::read(lexical_path(&path)).unwrap();
                (std::fs::read(&path).unwrap(), lexical)
            })
            .collect();
        assert!(saved.iter().all(|files| *files == saved[0]));
    }

    /// `build_into` writes the bytes a build's `save` writes, and says what the
    /// built project says: its files, those skipped and the warnings.
    #[test]
    fn a_build_into_a_file_saves_what_a_build_saves() {
        let (_dir, root) = sized_project();
        std::fs::write(root.join("broken.py"), "foo bar\ndef h():\n    pass\n").unwrap();
        std::fs::write(root.join("blob.py"), b"x = 1\0\0binary").unwrap();
        let out = tempfile::tempdir().unwrap();
        let (held, streamed) = (out.path().join("a.bin"), out.path().join("b.bin"));
        let project = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        project.save(&held).unwrap();
        let scan = Project::scan(&root, 1_000_000).unwrap();
        let parsed = parse_indexed(&root, 1_000_000, &scan.sources, &Progress::default());
        let built = Project::build_into(scan, parsed, &streamed, &Progress::default()).unwrap();
        assert_eq!(
            std::fs::read(&streamed).unwrap(),
            std::fs::read(&held).unwrap()
        );
        assert_eq!(
            std::fs::read(lexical_path(&streamed)).unwrap(),
            std::fs::read(lexical_path(&held)).unwrap()
        );
        let state = project.state();
        assert_eq!(built.files, state.graph().file_count());
        assert_eq!(built.files, 43, "the 40 sized files, b.py, g.py, broken.py");
        assert_eq!(built.skipped, state.skipped);
        assert_eq!(built.warnings, state.warnings);
        assert_eq!(built.skipped.len(), 1, "{:?}", built.skipped);
        assert!(built.warnings.iter().any(|(file, _)| file == "broken.py"));
        let loaded = Project::load(&streamed, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        assert_eq!(loaded.state().lexical().len(), state.lexical().len());
    }

    fn refused(result: Result<String>) -> String {
        match result {
            Err(err @ Error::InvalidValue { .. }) => err.to_string(),
            other => panic!("expected an invalid path, got {other:?}"),
        }
    }

    #[test]
    fn relative_to_accepts_paths_inside_the_root_only() {
        let (_dir, root) = project();
        let rel = |p: &str| relative_to(&root, Path::new(p));
        assert_eq!(rel("a/b.py").unwrap(), "a/b.py");
        assert_eq!(rel("./a/b").unwrap(), "a/b");
        assert_eq!(rel("a/./b.py").unwrap(), "a/b.py");
        assert_eq!(rel("new/file.py").unwrap(), "new/file.py", "need not exist");
        let inside = root.join("a/b.py");
        assert_eq!(relative_to(&root, &inside).unwrap(), "a/b.py");
        let gone = root.join("a/gone.py");
        assert_eq!(relative_to(&root, &gone).unwrap(), "a/gone.py");
        // A root given through a `..` is the same root.
        let roundabout = root.join("a/..");
        assert_eq!(relative_to(&roundabout, &inside).unwrap(), "a/b.py");

        assert!(refused(rel("../x.py")).contains("outside the project root"));
        assert!(refused(rel("a/../../x.py")).contains("outside"));
        assert_eq!(rel("a/../g.py").unwrap(), "g.py", "`..` inside the root");
        assert_eq!(rel("./a/../a/b.py").unwrap(), "a/b.py");
        let back_in = root.join("a/../a/b.py");
        assert_eq!(relative_to(&root, &back_in).unwrap(), "a/b.py");
        let name = root.file_name().unwrap().to_string_lossy();
        let left = format!("../{name}/g.py");
        assert!(refused(rel(&left)).contains("outside"), "left, then back");
        assert!(refused(rel("a/../..")).contains("outside"));
        let elsewhere = root.parent().unwrap().join("x.py");
        assert!(refused(relative_to(&root, &elsewhere)).contains("outside"));
        assert!(refused(relative_to(&root, Path::new("/etc/passwd"))).contains("outside"));
        assert!(refused(relative_to(&root, &root.join("a/../../x.py"))).contains("outside"));
        assert!(refused(relative_to(&root, &root)).contains("project root itself"));
        assert!(refused(rel(".")).contains("project root itself"));
        assert!(refused(rel("")).contains("outside the project root"));
        assert!(refused(rel("  ")).contains("the path is empty"));
        assert!(refused(rel("a/b\0.py")).contains("NUL"));
    }

    #[cfg(unix)]
    #[test]
    fn relative_to_refuses_symlinks_out_of_the_root() {
        let (_dir, root) = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.py"), "").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("alias")).unwrap();
        assert!(refused(relative_to(&root, &root.join("out/x.py"))).contains("outside"));
        assert!(refused(relative_to(&root, &root.join("out/new.py"))).contains("outside"));
        assert!(refused(relative_to(&root, Path::new("out/x.py"))).contains("outside"));
        assert!(refused(relative_to(&root, Path::new("a/../out/x.py"))).contains("outside"));
        std::os::unix::fs::symlink(outside.path().join("x.py"), root.join("a/link.py")).unwrap();
        assert!(refused(relative_to(&root, Path::new("a/link.py"))).contains("outside"));
        // A link that stays inside is followed for absolute paths (as canonical).
        assert_eq!(
            relative_to(&root, &root.join("alias/b.py")).unwrap(),
            "a/b.py"
        );
        assert_eq!(
            relative_to(&root, Path::new("alias/b.py")).unwrap(),
            "alias/b.py"
        );
    }

    fn callers(project: &Project, name: &str) -> Vec<String> {
        let state = project.state();
        let g = state.graph();
        g.callers(name).iter().map(|(n, _)| g.label(*n)).collect()
    }

    #[test]
    fn build_then_update_from_disk() {
        let (_dir, root) = project();
        std::fs::write(root.join("broken.py"), "foo bar\ndef h():\n    pass\n").unwrap();
        std::fs::write(root.join("big.py"), "x = 1\n".repeat(100)).unwrap();
        let p = Project::build(&root, 300, &Progress::default()).unwrap();
        assert_eq!(p.root(), root);
        assert_eq!(callers(&p, "g"), ["a/b.py:f"]);
        assert_eq!(p.state().graph().paths(), ["a/b.py", "broken.py", "g.py"]);
        assert_eq!(
            p.state().warnings(),
            [(
                "broken.py".to_string(),
                "syntax errors: line 1 not indexed".to_string()
            )]
        );
        assert_eq!(p.state().skipped().len(), 1);
        assert_eq!(p.state().skipped()[0].0, "big.py");

        // Fixed: indexed, the warning gone.
        std::fs::write(root.join("broken.py"), "def h():\n    g()\n").unwrap();
        assert_eq!(
            p.update_file(Path::new("broken.py")).unwrap(),
            Updated::Indexed
        );
        assert!(p.state().warnings().is_empty());
        assert_eq!(callers(&p, "g"), ["a/b.py:f", "broken.py:h"]);

        // Broken again (absolute path): indexed in part, warned once.
        std::fs::write(root.join("broken.py"), "def h():\n    foo bar\n").unwrap();
        let absolute = root.join("broken.py");
        assert_eq!(p.update_file(&absolute).unwrap(), Updated::Partial);
        assert_eq!(p.update_file(&absolute).unwrap(), Updated::Partial);
        assert_eq!(p.state().warnings().len(), 1);

        // Shrunk below the limit: indexed, no longer skipped.
        std::fs::write(root.join("big.py"), "x = 1\n").unwrap();
        assert_eq!(
            p.update_file(Path::new("big.py")).unwrap(),
            Updated::Indexed
        );
        assert!(p.state().skipped().is_empty());
        assert!(p.state().graph().file_node("big.py").is_some());

        // Too large now: removed and skipped, with why.
        std::fs::write(root.join("g.py"), "x = 1\n".repeat(100)).unwrap();
        let Updated::Skipped(why) = p.update_file(Path::new("g.py")).unwrap() else {
            panic!("g.py is too large");
        };
        assert!(why.starts_with("larger than 300 bytes"), "{why}");
        assert_eq!(p.state().skipped(), [("g.py".to_string(), why)]);
        assert!(p.state().graph().file_node("g.py").is_none());

        // Binary: skipped too.
        std::fs::write(root.join("big.py"), b"x = 1\0\n").unwrap();
        assert_eq!(
            p.update_file(Path::new("big.py")).unwrap(),
            Updated::Skipped("binary (NUL byte)".into())
        );
        assert_eq!(p.state().skipped().len(), 2);

        // Gone: removed, and what was said about it forgotten.
        std::fs::remove_file(root.join("g.py")).unwrap();
        assert_eq!(p.update_file(Path::new("g.py")).unwrap(), Updated::Removed);
        assert_eq!(p.state().skipped().len(), 1);
        std::fs::remove_file(root.join("broken.py")).unwrap();
        assert_eq!(
            p.update_file(Path::new("broken.py")).unwrap(),
            Updated::Removed
        );
        assert!(p.state().warnings().is_empty());
        assert!(p.state().graph().file_node("broken.py").is_none());

        // New file: added and linked.
        std::fs::write(root.join("a/c.py"), "def g():\n    pass\n").unwrap();
        assert_eq!(
            p.update_file(Path::new("a/c.py")).unwrap(),
            Updated::Indexed
        );
        assert_eq!(callers(&p, "g"), ["a/b.py:f"]);

        // Not a language the graph parses, or outside the root: errors.
        std::fs::write(root.join("notes.txt"), "hello").unwrap();
        assert!(matches!(
            p.update_file(Path::new("notes.txt")),
            Err(Error::InvalidValue { .. })
        ));
        assert!(matches!(
            p.update_file(Path::new("../x.py")),
            Err(Error::InvalidValue { .. })
        ));
    }

    #[test]
    fn a_file_turned_into_a_symlink_out_can_still_be_removed() {
        let (dir, root) = project();
        let p = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        let outside = dir
            .path()
            .parent()
            .unwrap()
            .join(format!("out-{}.py", std::process::id()));
        std::fs::write(&outside, "def f():\n    pass\n").unwrap();
        std::fs::remove_file(root.join("g.py")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("g.py")).unwrap();
        assert!(
            p.relative(Path::new("g.py")).is_err(),
            "reading through it is refused"
        );
        assert!(
            p.remove_file(Path::new("g.py")).unwrap(),
            "but the graph lets go of it"
        );
        assert!(p.state().graph().file_node("g.py").is_none());
        assert!(p.remove_file(Path::new("../x.py")).is_err());
        std::fs::remove_file(outside).unwrap();
    }

    /// A file the build skipped (binary) that became a symlink out of the project
    /// is let go of by its name, with nothing read through the link.
    #[test]
    fn a_skipped_file_turned_into_a_symlink_out_can_still_be_removed() {
        let (dir, root) = project();
        std::fs::write(root.join("blob.py"), b"x\0y").unwrap();
        let p = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        let blob = ("blob.py".to_string(), "binary (NUL byte)".to_string());
        assert_eq!(p.state().skipped(), [blob]);
        let outside = dir
            .path()
            .parent()
            .unwrap()
            .join(format!("out-skipped-{}.py", std::process::id()));
        std::fs::write(&outside, "def f():\n    pass\n").unwrap();
        std::fs::remove_file(root.join("blob.py")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("blob.py")).unwrap();
        assert!(p.relative(Path::new("blob.py")).is_err());
        assert!(
            !p.remove_file(Path::new("blob.py")).unwrap(),
            "it was not in the graph"
        );
        assert!(
            p.state().skipped().is_empty(),
            "nor is it listed as skipped now"
        );
        assert_eq!(p.state().graph().file_count(), 2);
        std::fs::remove_file(outside).unwrap();
    }

    /// The save copies the graph out a run of files at a time and writes both files
    /// side by side: byte for byte what saving the whole saved form at once (and the
    /// index after it) writes, with more files than one run holds.
    #[test]
    fn save_writes_what_the_saved_form_encodes() {
        let (_dir, root) = project();
        for i in 0..(2 * persist::CHUNK + 5) {
            let body = format!(
                "from g import g\n\ndef f{i}():\n    g()\n    f{}()\n",
                i / 2
            );
            std::fs::write(root.join(format!("a/m{i:03}.py")), body).unwrap();
        }
        std::fs::write(root.join("broken.py"), "def h():\n    foo bar\n").unwrap();
        std::fs::write(root.join("blob.py"), b"\0\0").unwrap();
        let p = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        let files = p.state().graph().file_count();
        assert_eq!(files, 2 * persist::CHUNK + 8);
        assert!(!p.state().skipped().is_empty() && !p.state().warnings().is_empty());

        let out = tempfile::tempdir().unwrap();
        let (new, old) = (out.path().join("new.bin"), out.path().join("old.bin"));
        p.save(&new).unwrap();
        let sum = persist::save(&old, &p.saved()).unwrap();
        p.state().lexical().save(&lexical_path(&old), sum).unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), std::fs::read(&old).unwrap());
        assert_eq!(
            std::fs::read(lexical_path(&new)).unwrap(),
            std::fs::read(lexical_path(&old)).unwrap()
        );

        // Runs of any length make the same saved form, in order.
        let whole = p.state().graph().saved().files;
        assert_eq!(whole.len(), files);
        for chunk in [1, 7, persist::CHUNK, files, files + 1] {
            let mut runs = Vec::new();
            p.state()
                .graph()
                .saved_chunks(
                    chunk,
                    |run| run,
                    |run| {
                        runs.push(run);
                        Ok::<_, ()>(())
                    },
                )
                .unwrap();
            assert_eq!(runs.len(), files.div_ceil(chunk));
            assert!(runs[..runs.len() - 1].iter().all(|run| run.len() == chunk));
            assert_eq!(runs.into_iter().flatten().collect::<Vec<_>>(), whole);
        }
        let loaded = Project::load(&new, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        let (a, b) = (loaded.state(), p.state());
        assert_eq!(a.graph().paths(), b.graph().paths());
        assert_eq!(a.graph().node_count(), b.graph().node_count());
        assert_eq!(a.graph().edge_count(), b.graph().edge_count());
        assert_eq!(a.lexical().len(), b.lexical().len());
    }

    #[test]
    fn remove_forgets_and_save_load_round_trips() {
        let (_dir, root) = project();
        std::fs::write(root.join("broken.py"), "def h():\n    foo bar\n").unwrap();
        std::fs::write(root.join("blob.py"), b"\0\0").unwrap();
        let p = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        assert_eq!(p.state().warnings().len(), 1);
        assert_eq!(
            p.state().skipped(),
            [("blob.py".to_string(), "binary (NUL byte)".to_string())]
        );

        let file = root.join("graph.bin");
        p.save(&file).unwrap();
        let loaded = Project::load(&file, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        assert_eq!(loaded.root(), root);
        assert_eq!(loaded.saved(), p.saved());
        let moved =
            Project::load(&file, Some("/elsewhere".into()), 5, ReadIndex::WhenNeeded).unwrap();
        assert_eq!(moved.root(), Path::new("/elsewhere"));
        assert_eq!(moved.max_file_bytes(), 5);

        assert!(p.remove_file(Path::new("broken.py")).unwrap());
        assert!(p.state().warnings().is_empty());
        assert!(
            !p.remove_file(Path::new("blob.py")).unwrap(),
            "never in the graph"
        );
        assert!(p.state().skipped().is_empty(), "but forgotten");
        assert!(!p.remove_file(&root.join("nope.py")).unwrap());
        assert!(p.remove_file(&root).is_err());

        assert!(matches!(
            Project::load(&root.join("absent.bin"), None, 1, ReadIndex::WhenNeeded),
            Err(Error::Missing { .. })
        ));
        assert!(matches!(
            Project::build(&root.join("a/b.py"), 1, &Progress::default()),
            Err(Error::InvalidValue { .. })
        ));
    }

    /// `sized_project`, built and saved to `graph.bin` in its root (returned).
    fn saved_sized_project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let (dir, root) = sized_project();
        let file = root.join("graph.bin");
        Project::build(&root, 1_000_000, &Progress::default())
            .unwrap()
            .save(&file)
            .unwrap();
        (dir, root, file)
    }

    /// Every hit of `query` in `index`: (key, score bits), best first.
    fn hits_of(index: &LexicalIndex, query: &str) -> Vec<(String, u64)> {
        let params = crate::retrieve::Bm25Params::default();
        index
            .search(query, &params, &[], 50)
            .into_iter()
            .map(|h| (h.key, h.score.to_bits()))
            .collect()
    }

    /// A loaded project's index is read only when first asked for: graph
    /// queries, updates and removals leave it in its file, and the changes wait.
    /// Read then, it answers exactly as the index of a project that read it at
    /// once and took the same changes one by one.
    #[test]
    fn a_loaded_index_is_read_when_first_asked_for() {
        let (_dir, root, file) = saved_sized_project();
        let lazy = Project::load(&file, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        let eager = Project::load(&file, None, 1_000_000, ReadIndex::WithGraph).unwrap();
        assert!(!lazy.state().lexical_read() && eager.state().lexical_read());
        assert_eq!(eager.state().lexical().len(), 40 * 4 + 2 * 2);

        assert_eq!(callers(&lazy, "g"), ["a/b.py:f"]);
        let write = |name: &str, text: &str| std::fs::write(root.join(name), text).unwrap();
        let both = |name: &str| {
            let (a, b) = (
                lazy.update_file(Path::new(name)),
                eager.update_file(Path::new(name)),
            );
            assert_eq!(a.unwrap(), b.unwrap(), "{name}");
        };
        write("m1.py", "def renamed(y):\n    return helper(y)\n");
        both("m1.py");
        std::fs::remove_file(root.join("m2.py")).unwrap();
        both("m2.py");
        write("new.py", "def fresh():\n    helper(1)\n");
        both("new.py");
        write("m1.py", "def revised(y):\n    return y\n");
        both("m1.py");
        write("m3.py", "def brief():\n    pass\n");
        both("m3.py");
        std::fs::remove_file(root.join("m3.py")).unwrap();
        both("m3.py");
        assert!(lazy.remove_file(Path::new("m4.py")).unwrap());
        assert!(eager.remove_file(Path::new("m4.py")).unwrap());
        assert_eq!(callers(&lazy, "helper"), callers(&eager, "helper"));
        assert!(!lazy.state().lexical_read(), "updates leave it unread");

        let (a, b) = (lazy.state(), eager.state());
        assert_eq!(a.lexical().len(), b.lexical().len());
        assert!(a.lexical_read());
        assert_eq!(a.lexical().len(), 40 * 4 + 2 * 2 - 4 * 4 + 2 + 2);
        // The changes went over the file, not copied into memory; copied, it
        // answers alike.
        assert!(a.lexical().has_overlay() && b.lexical().has_overlay());
        let mut copied = a.lexical().clone();
        copied.thaw().unwrap();
        assert!(!copied.has_overlay());
        for query in [
            "helper", "renamed", "fresh", "brief", "revised", "C1 run", "m4.py", "f2",
        ] {
            assert_eq!(
                hits_of(a.lexical(), query),
                hits_of(b.lexical(), query),
                "{query}"
            );
            assert_eq!(hits_of(a.lexical(), query), hits_of(&copied, query));
        }
        for gone in ["renamed", "brief", "f2", "f4"] {
            assert!(hits_of(a.lexical(), gone).is_empty(), "{gone}");
        }
        assert_eq!(
            hits_of(a.lexical(), "revised").len(),
            2,
            "the function and its file"
        );
    }

    /// A file changed again and again before the index is read keeps one entry
    /// among the waiting changes (the dropped ones are let go once they are
    /// half), and only its last documents are indexed.
    #[test]
    fn changes_waiting_for_the_index_keep_one_entry_a_file() {
        let (_dir, root, file) = saved_sized_project();
        let project = Project::load(&file, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        // One word a file and round, letters only (the tokenizer splits digits).
        let word = |file: char, round: u32| -> String {
            let letter = |n: u32| char::from(b'a' + (n % 26) as u8);
            [file, letter(round / 26), letter(round)].iter().collect()
        };
        for round in 0..200 {
            for (name, letter) in [("m1.py", 'x'), ("m2.py", 'y'), ("m3.py", 'z')] {
                let text = format!("def {}():\n    pass\n", word(letter, round));
                std::fs::write(root.join(name), text).unwrap();
                project.update_file(Path::new(name)).unwrap();
            }
        }
        std::fs::remove_file(root.join("m3.py")).unwrap();
        project.update_file(Path::new("m3.py")).unwrap();
        let waiting = {
            let state = project.state();
            let unread = state.lexical.unread.lock();
            let unread = unread.as_ref().unwrap();
            (
                unread.changes.len(),
                unread.changes.iter().flatten().count(),
            )
        };
        assert_eq!(waiting.1, 3);
        assert!(waiting.0 <= 2 * 17 + 3, "{waiting:?}");
        let state = project.state();
        let found = |query: &str| !hits_of(state.lexical(), query).is_empty();
        assert!(found(&word('x', 199)) && found(&word('y', 199)));
        assert!(!found(&word('x', 198)) && !found(&word('z', 199)) && !found("f3"));
        assert_eq!(state.lexical().len(), 40 * 4 + 2 * 2 - 3 * 4 + 2 * 2);
    }

    /// What a loaded project's index is read from, whatever happened to its file
    /// since the load: the bytes it had then, though a save renamed another file
    /// over its name; the files on disk, when it was missing then or was written
    /// in place since.
    #[test]
    fn a_loaded_index_reads_the_file_it_was_loaded_with() {
        let (_dir, root) = sized_project();
        let file = root.join("graph.bin");
        let built = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        built.save(&file).unwrap();
        let saved = std::fs::read(lexical_path(&file)).unwrap();
        let out = tempfile::tempdir().unwrap();
        let out = out.path();
        let loaded = || Project::load(&file, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
        let found = |p: &Project, query: &str| !hits_of(p.state().lexical(), query).is_empty();

        // m5.py changes on disk; nothing updates the project.
        let renamed = loaded();
        let damaged = loaded();
        std::fs::write(root.join("m5.py"), "def changed_on_disk():\n    pass\n").unwrap();
        // Another save (of a project that did read the change) over both files.
        let other = Project::build(&root, 1_000_000, &Progress::default()).unwrap();
        other.save(&file).unwrap();
        assert!(found(&other, "changed_on_disk"));
        assert!(!found(&renamed, "changed_on_disk"), "read what it loaded");
        assert!(found(&renamed, "f5"));

        // Written in place after the load (damaged): made from the disk.
        std::fs::write(lexical_path(&file), &saved).unwrap();
        let damaged_in_place = {
            let project = Project::load(&file, None, 1_000_000, ReadIndex::WhenNeeded).unwrap();
            let mut bytes = saved.clone();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            std::fs::write(lexical_path(&file), &bytes).unwrap();
            project
        };
        assert!(found(&damaged_in_place, "changed_on_disk"));
        assert!(!found(&damaged_in_place, "f5"));
        // `damaged` was loaded before `other` saved: its file is the first one, no
        // longer there, and it reads it all the same.
        assert!(!found(&damaged, "changed_on_disk"));

        // Saved with another graph file, read with the graph: made from the disk
        // at the load.
        std::fs::copy(lexical_path(&file), out.join("other.lexical")).unwrap();
        std::fs::write(lexical_path(&file), &saved).unwrap();
        let with_graph = || Project::load(&file, None, 1_000_000, ReadIndex::WithGraph).unwrap();
        let stale = with_graph();
        assert!(stale.state().lexical_read());
        assert!(found(&stale, "changed_on_disk") && !found(&stale, "f5"));
        std::fs::copy(out.join("other.lexical"), lexical_path(&file)).unwrap();
        let current = with_graph();
        assert!(current.state().lexical_read());
        let query = "changed_on_disk f5 helper";
        let (a, b) = (current.state(), other.state());
        assert_eq!(hits_of(a.lexical(), query), hits_of(b.lexical(), query));

        // Missing at the load: made from the disk, when first needed or at once.
        std::fs::remove_file(lexical_path(&file)).unwrap();
        let missing = loaded();
        assert!(!missing.state().lexical_read());
        assert!(found(&missing, "changed_on_disk"));
        let (a, b) = (missing.state(), other.state());
        assert_eq!(a.lexical().len(), b.lexical().len());
        let missing = with_graph();
        assert!(missing.state().lexical_read());
        assert!(found(&missing, "changed_on_disk"));
    }
}
