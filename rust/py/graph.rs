//! Python classes for the knowledge graph. No logic here: see `crate::graph`.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::Ordering;

use parking_lot::RwLock;
use pyo3::prelude::*;

use super::detached;
use crate::error::invalid;
use crate::graph::{
    corrupt, discover, load, parse, save, Direction, Edge, EdgeKind, FileSymbols, KnowledgeGraph,
    Language, NodeIndex, NodeKind, Progress, Saved, Source,
};
use crate::Error;

/// A node of the graph: a file, a definition or an import.
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "Symbol")]
#[derive(Clone, PartialEq)]
pub struct PySymbol {
    /// "file", "function", "class", "variable" or "import".
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    language: &'static str,
    /// 1-based first and last line.
    #[pyo3(get)]
    line: usize,
    #[pyo3(get)]
    end_line: usize,
    /// The definition's first line; an import's statement.
    #[pyo3(get)]
    signature: String,
    /// The class or function the symbol is defined in ("" at file level).
    #[pyo3(get)]
    scope: String,
    /// The names an import brings in (empty for other symbols).
    #[pyo3(get)]
    items: Vec<String>,
}

#[pymethods]
impl PySymbol {
    fn __repr__(&self) -> String {
        format!(
            "Symbol({} {:?} at {}:{}-{})",
            self.kind, self.name, self.path, self.line, self.end_line
        )
    }
}

/// One edge seen from a symbol: the symbol at the other end, the edge's kind
/// ("calls", "inherits", "references", "uses", "imports"), the line of the reference, and how
/// sure the resolution is (1/n when the name matched n definitions).
#[pyclass(frozen, module = "aircher_mem._core", name = "Reference")]
pub struct PyReference {
    #[pyo3(get)]
    symbol: PySymbol,
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    line: usize,
    #[pyo3(get)]
    confidence: f32,
}

#[pymethods]
impl PyReference {
    fn __repr__(&self) -> String {
        format!(
            "Reference({} {:?} at line {}, confidence {})",
            self.kind, self.symbol.name, self.line, self.confidence
        )
    }
}

/// The edge kinds `get_references` accepts.
const REFERENCE_KINDS: [EdgeKind; 4] = [
    EdgeKind::Calls,
    EdgeKind::Inherits,
    EdgeKind::References,
    EdgeKind::Uses,
];

/// The codebase as a graph (seed 002's semantic memory): files, functions, classes,
/// variables and imports; contains, calls, imports, inherits, references and uses edges.
#[pyclass(frozen, module = "aircher_mem._core", name = "KnowledgeGraph")]
pub struct PyKnowledgeGraph {
    root: PathBuf,
    max_file_bytes: u64,
    state: RwLock<State>,
}

struct State {
    graph: KnowledgeGraph,
    skipped: Vec<(String, String)>,
    warnings: Vec<(String, String)>,
}

impl PyKnowledgeGraph {
    fn new(
        root: PathBuf,
        max_file_bytes: u64,
        graph: KnowledgeGraph,
        skipped: Vec<(String, String)>,
        warnings: Vec<(String, String)>,
    ) -> Self {
        let state = RwLock::new(State {
            graph,
            skipped,
            warnings,
        });
        Self {
            root,
            max_file_bytes,
            state,
        }
    }
}

impl State {
    /// Forgets what was said about a file before it is looked at again.
    fn forget(&mut self, path: &str) {
        self.skipped.retain(|(p, _)| p != path);
        self.warnings.retain(|(p, _)| p != path);
    }
}

/// How often `build` reports progress (and checks for Ctrl-C) while parsing.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Parses `sources` on the thread pool while this thread, the GIL released between
/// reports, calls `progress(done, total)` every `REPORT_EVERY` and at the end. An
/// exception from the callback, or a signal (Ctrl-C), stops the parse early and is
/// raised.
fn parse_reporting(
    py: Python<'_>,
    sources: &[Source],
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Result<FileSymbols, String>>> {
    let state = Progress::default();
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| parse(sources, &state));
        let mut outcome = Ok(());
        loop {
            let finished = detached(py, || {
                let until = std::time::Instant::now() + REPORT_EVERY;
                while !worker.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                worker.is_finished()
            });
            if outcome.is_ok() {
                let done = state.done.load(Ordering::Relaxed);
                outcome = py.check_signals().and_then(|()| match progress {
                    Some(callback) => callback.call1((done, sources.len())).map(drop),
                    None => Ok(()),
                });
                if outcome.is_err() {
                    state.cancelled.store(true, Ordering::Relaxed);
                }
            }
            if finished {
                break;
            }
        }
        let parsed = worker.join().expect("parsing does not panic");
        outcome.map(|()| parsed)
    })
}
const PARTIAL: &str = "syntax errors: indexed as far as the parser got";

/// `path` relative to `root` (either form accepted), refusing anything outside it.
fn relative_to(root: &Path, path: &Path) -> crate::Result<String> {
    let outside = || {
        invalid(
            "path",
            format!(
                "{} is outside the project root {}",
                path.display(),
                root.display()
            ),
        )
    };
    // Compare like with like: the root is canonical, so is an existing absolute path.
    let canonical = if path.is_absolute() {
        path.canonicalize().ok()
    } else {
        None
    };
    let absolute = canonical.as_deref().unwrap_or(path);
    let rel = if absolute.is_absolute() {
        absolute.strip_prefix(root).map_err(|_| outside())?
    } else {
        path
    };
    if rel.as_os_str().is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(outside());
    }
    Ok(rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

/// Source files and skipped files, as `discover` returns them.
type Discovered = (Vec<String>, Vec<(String, String)>);

/// The project root, canonical, or an error if it is not a directory.
fn canonical_root(root: &Path) -> crate::Result<PathBuf> {
    if !root.is_dir() {
        return Err(invalid(
            "root",
            format!("{} is not a directory", root.display()),
        ));
    }
    root.canonicalize()
        .map_err(|err| invalid("root", format!("{}: {err}", root.display())))
}

impl PyKnowledgeGraph {
    fn symbol(&self, graph: &KnowledgeGraph, id: NodeIndex) -> PySymbol {
        let n = graph.node(id);
        let scope = graph
            .parent(id)
            .map(|p| graph.node(p))
            .filter(|p| p.kind != NodeKind::File)
            .map_or_else(String::new, |p| p.name.clone());
        PySymbol {
            scope,
            items: n.items.clone(),
            kind: n.kind.name(),
            name: n.name.clone(),
            path: n.path.clone(),
            language: n.language.name(),
            line: n.line,
            end_line: n.end_line,
            signature: n.signature.clone(),
        }
    }

    fn reference(&self, graph: &KnowledgeGraph, other: NodeIndex, edge: Edge) -> PyReference {
        PyReference {
            symbol: self.symbol(graph, other),
            kind: edge.kind.name(),
            line: edge.line,
            confidence: edge.confidence,
        }
    }

    fn references(
        &self,
        graph: &KnowledgeGraph,
        found: Vec<(NodeIndex, Edge)>,
    ) -> Vec<PyReference> {
        found
            .into_iter()
            .map(|(id, edge)| self.reference(graph, id, edge))
            .collect()
    }

    fn dependencies(&self, path: &str, direction: Direction) -> PyResult<Vec<String>> {
        self.state
            .read()
            .graph
            .dependencies(path, direction)
            .ok_or_else(|| Error::UnknownFile(path.to_string()).into())
    }
}

#[pymethods]
impl PyKnowledgeGraph {
    /// Indexes every source file under `root` (Python, Rust, JavaScript, TypeScript,
    /// TSX, Go, Java): .gitignore is respected, vendored folders, binary files and
    /// files over `max_file_bytes` are skipped (see `skipped`), files with syntax
    /// errors are indexed as far as the parser got (see `warnings`). Parsing runs in
    /// parallel without the GIL; `progress(done, total)` is called every 100 ms while
    /// parsing and once at the end; an exception it raises, or Ctrl-C, stops the build.
    #[staticmethod]
    #[pyo3(signature = (root, *, max_file_bytes = 1_000_000, progress = None))]
    fn build(
        py: Python<'_>,
        root: PathBuf,
        max_file_bytes: u64,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let root = canonical_root(&root)?;
        let (sources, mut skipped) = detached(py, || discover(&root, max_file_bytes));
        let parsed = parse_reporting(py, &sources, progress.as_ref())?;
        let mut files = Vec::with_capacity(sources.len());
        let mut warnings = Vec::new();
        for (source, result) in sources.iter().zip(parsed) {
            match result {
                Ok(symbols) => {
                    if symbols.syntax_errors {
                        warnings.push((source.relative.clone(), PARTIAL.to_string()));
                    }
                    files.push((source.relative.clone(), symbols));
                }
                Err(reason) => skipped.push((source.relative.clone(), reason)),
            }
        }
        let graph = detached(py, || KnowledgeGraph::from_files(files));
        Ok(Self::new(root, max_file_bytes, graph, skipped, warnings))
    }

    /// Re-reads one file and repairs only the edges into and out of it. A file that
    /// is gone is removed; one that is now binary or too large is removed and listed
    /// in `skipped`. `path` is relative to the root or absolute inside it.
    fn update_file(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let relative = relative_to(&self.root, &path)?;
        let Some(language) = Language::from_path(Path::new(&relative)) else {
            return Err(invalid(
                "path",
                format!("{relative} is not a source file of a supported language"),
            )
            .into());
        };
        let full = self.root.join(&relative);
        let size = match std::fs::metadata(&full) {
            Ok(meta) => meta.len(),
            Err(_) => {
                let mut state = self.state.write();
                state.forget(&relative);
                state.graph.remove_file(&relative);
                return Ok(());
            }
        };
        let parsed = if size > self.max_file_bytes {
            Err(format!(
                "larger than {} bytes ({size} bytes)",
                self.max_file_bytes
            ))
        } else {
            let source = Source {
                path: full,
                relative: relative.clone(),
                language,
                bytes: size,
            };
            detached(py, || {
                parse(std::slice::from_ref(&source), &Progress::default())
            })
            .pop()
            .expect("one file parsed")
        };
        detached(py, || {
            let mut state = self.state.write();
            state.forget(&relative);
            match parsed {
                Ok(symbols) => {
                    if symbols.syntax_errors {
                        state.warnings.push((relative.clone(), PARTIAL.to_string()));
                    }
                    state.graph.update_file(&relative, symbols);
                }
                Err(reason) => {
                    state.graph.remove_file(&relative);
                    state.skipped.push((relative.clone(), reason));
                }
            }
        });
        Ok(())
    }

    /// Writes the graph to `path` (temporary file, then rename): what each file
    /// defines and calls, the root, and what was skipped. Loading needs no parsing.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let state = self.state.read();
        let saved = Saved {
            root: self.root.to_string_lossy().into_owned(),
            files: state.graph.saved(),
            skipped: state.skipped.clone(),
            warnings: state.warnings.clone(),
        };
        drop(state);
        Ok(detached(py, || save(&path, &saved))?)
    }

    /// Reads a graph written by `save`. A damaged file raises StoreCorruptError, one
    /// of another format version SchemaVersionError: rebuild with `build` then.
    /// `root` overrides the saved project root (e.g. after moving the checkout).
    #[staticmethod]
    #[pyo3(signature = (path, *, root = None, max_file_bytes = 1_000_000))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        root: Option<PathBuf>,
        max_file_bytes: u64,
    ) -> PyResult<Self> {
        let saved = detached(py, || load(&path))?;
        let root = root.unwrap_or_else(|| PathBuf::from(&saved.root));
        let Saved {
            files,
            skipped,
            warnings,
            ..
        } = saved;
        let graph = detached(py, || KnowledgeGraph::from_saved(files))
            .map_err(|why| corrupt(&path, &why))?;
        Ok(Self::new(root, max_file_bytes, graph, skipped, warnings))
    }

    /// Drops a file from the graph (e.g. after it was deleted); false if it was not in it.
    fn remove_file(&self, path: PathBuf) -> PyResult<bool> {
        let relative = relative_to(&self.root, &path)?;
        let mut state = self.state.write();
        state.forget(&relative);
        Ok(state.graph.remove_file(&relative))
    }

    /// The project root (absolute).
    #[getter]
    fn root(&self) -> PathBuf {
        self.root.clone()
    }

    #[getter]
    fn file_count(&self) -> usize {
        self.state.read().graph.file_count()
    }
    #[getter]
    fn node_count(&self) -> usize {
        self.state.read().graph.node_count()
    }
    #[getter]
    fn edge_count(&self) -> usize {
        self.state.read().graph.edge_count()
    }
    /// (path, reason) of every file not indexed.
    #[getter]
    fn skipped(&self) -> Vec<(String, String)> {
        self.state.read().skipped.clone()
    }
    /// (path, problem) of files indexed only in part.
    #[getter]
    fn warnings(&self) -> Vec<(String, String)> {
        self.state.read().warnings.clone()
    }

    /// Definitions named `name`, by path and line; with `prefix`, those whose name
    /// starts with it; with `fuzzy`, those whose name holds its letters in order,
    /// ignoring case, best match first.
    #[pyo3(signature = (name, *, prefix = false, fuzzy = false))]
    fn find_symbol(&self, name: &str, prefix: bool, fuzzy: bool) -> PyResult<Vec<PySymbol>> {
        if prefix && fuzzy {
            return Err(invalid("fuzzy", "prefix and fuzzy are exclusive").into());
        }
        let state = self.state.read();
        let found = if fuzzy {
            state.graph.find_fuzzy(name)
        } else {
            state.graph.find_symbol(name, prefix)
        };
        Ok(found
            .into_iter()
            .map(|id| self.symbol(&state.graph, id))
            .collect())
    }

    /// The source files `build` would index under `root` (relative paths, sorted) and
    /// the files it would skip before parsing, with why; nothing is read or parsed.
    #[staticmethod]
    #[pyo3(signature = (root, *, max_file_bytes = 1_000_000))]
    fn discover(py: Python<'_>, root: PathBuf, max_file_bytes: u64) -> PyResult<Discovered> {
        let root = canonical_root(&root)?;
        let (sources, skipped) = detached(py, || discover(&root, max_file_bytes));
        Ok((sources.into_iter().map(|s| s.relative).collect(), skipped))
    }

    /// The files in the graph (relative paths, sorted).
    #[getter]
    fn files(&self) -> Vec<String> {
        self.state.read().graph.paths()
    }

    /// Every definition and import in a file, in line order.
    fn get_file_contents(&self, path: &str) -> PyResult<Vec<PySymbol>> {
        let state = self.state.read();
        let ids = state
            .graph
            .file_contents(path)
            .ok_or_else(|| Error::UnknownFile(path.to_string()))?;
        Ok(ids
            .into_iter()
            .map(|id| self.symbol(&state.graph, id))
            .collect())
    }

    /// What calls the definitions named `name`.
    fn get_callers(&self, name: &str) -> Vec<PyReference> {
        let state = self.state.read();
        self.references(&state.graph, state.graph.callers(name))
    }

    /// What the definitions named `name` call.
    fn get_callees(&self, name: &str) -> Vec<PyReference> {
        let state = self.state.read();
        self.references(&state.graph, state.graph.callees(name))
    }

    /// What refers to the definitions named `name`: calls them, inherits from them,
    /// names them in a type or an import, uses them (a variable); or only `kind`.
    #[pyo3(signature = (name, *, kind = None))]
    fn get_references(&self, name: &str, kind: Option<&str>) -> PyResult<Vec<PyReference>> {
        let kinds: Vec<EdgeKind> = match kind {
            None => REFERENCE_KINDS.to_vec(),
            Some(k) => match REFERENCE_KINDS.iter().find(|e| e.name() == k) {
                Some(&e) => vec![e],
                None => {
                    let known: Vec<_> = REFERENCE_KINDS.iter().map(|e| e.name()).collect();
                    return Err(invalid("kind", format!("{k:?} is not one of {known:?}")).into());
                }
            },
        };
        let state = self.state.read();
        let mut found: Vec<(NodeIndex, Edge)> = kinds
            .into_iter()
            .flat_map(|k| state.graph.related(name, k, Direction::Incoming))
            .collect();
        found.sort_by(|a, b| {
            (&state.graph.node(a.0).path, a.1.line, a.1.kind).cmp(&(
                &state.graph.node(b.0).path,
                b.1.line,
                b.1.kind,
            ))
        });
        Ok(self.references(&state.graph, found))
    }

    /// Every edge out of a file other than containment, as (source symbol, reference
    /// to the target), by line: what the file calls, imports, inherits, names and uses.
    fn get_references_from(&self, path: &str) -> PyResult<Vec<(PySymbol, PyReference)>> {
        let state = self.state.read();
        let edges = state
            .graph
            .references_from(path)
            .ok_or_else(|| Error::UnknownFile(path.to_string()))?;
        Ok(edges
            .into_iter()
            .map(|(a, b, e)| {
                (
                    self.symbol(&state.graph, a),
                    self.reference(&state.graph, b, e),
                )
            })
            .collect())
    }

    /// The files `path` imports (repository-relative paths, sorted).
    fn get_dependencies(&self, path: &str) -> PyResult<Vec<String>> {
        self.dependencies(path, Direction::Outgoing)
    }

    /// The files that import `path`.
    fn get_dependents(&self, path: &str) -> PyResult<Vec<String>> {
        self.dependencies(path, Direction::Incoming)
    }

    /// Symbols ranked by personalized PageRank seeded by definitions named in `names`
    /// (each name's weight shared among its definitions) and by the files in `files`
    /// (unknown ones are ignored), best first.
    #[pyo3(signature = (names, files = Vec::new(), *, limit = 50, damping = 0.85, iterations = 30))]
    fn rank(
        &self,
        py: Python<'_>,
        names: Vec<String>,
        files: Vec<String>,
        limit: usize,
        damping: f64,
        iterations: usize,
    ) -> PyResult<Vec<(PySymbol, f64)>> {
        if !(0.0..1.0).contains(&damping) {
            return Err(invalid("damping", format!("must be in [0, 1), got {damping}")).into());
        }
        let state = self.state.read();
        // A name defined once says more than one defined in fifty places: each name's
        // seed weight is shared among its definitions.
        let mut seeds: Vec<(NodeIndex, f64)> = Vec::new();
        for name in &names {
            let defs = state.graph.find_symbol(name, false);
            let weight = 1.0 / defs.len().max(1) as f64;
            seeds.extend(defs.into_iter().map(|id| (id, weight)));
        }
        seeds.extend(
            files
                .iter()
                .filter_map(|f| state.graph.file_node(f))
                .map(|id| (id, 1.0)),
        );
        let ranked = detached(py, || state.graph.rank(&seeds, damping, iterations));
        Ok(ranked
            .into_iter()
            .take(limit)
            .map(|(id, score)| (self.symbol(&state.graph, id), score))
            .collect())
    }

    /// Everything within `hops` edges (either direction) of the definitions named
    /// `name` or of the file `name`, as (symbol, distance), nearest first.
    #[pyo3(signature = (name, hops = 1))]
    fn neighbourhood(&self, name: &str, hops: usize) -> Vec<(PySymbol, usize)> {
        let state = self.state.read();
        let mut starts = state.graph.find_symbol(name, false);
        starts.extend(state.graph.file_node(name));
        state
            .graph
            .neighbourhood(&starts, hops)
            .into_iter()
            .map(|(id, d)| (self.symbol(&state.graph, id), d))
            .collect()
    }

    /// Every edge as (source, kind, target), sorted; a file is its path, a symbol
    /// "path:name", an import "path:import module".
    fn edges(&self) -> Vec<(String, &'static str, String)> {
        self.state
            .read()
            .graph
            .edge_list()
            .into_iter()
            .map(|(a, kind, b, _, _)| (a, kind.name(), b))
            .collect()
    }

    fn __repr__(&self) -> String {
        let state = self.state.read();
        format!(
            "KnowledgeGraph(files={}, nodes={}, edges={}, skipped={})",
            state.graph.file_count(),
            state.graph.node_count(),
            state.graph.edge_count(),
            state.skipped.len()
        )
    }
}
