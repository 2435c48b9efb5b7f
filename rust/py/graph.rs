//! Python classes for the knowledge graph. No logic here: see `crate::graph`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::convert::{Checked, FsPath, Int, Real, Text};
use super::detached;
use super::errors::InvalidInputError;
use crate::graph::{
    canonical_root, parse_indexed, reference_kinds, relative_to, search, Direction, Edge, Found,
    GraphView, KnowledgeGraph, Language, Level, NodeIndex, Parsed, PathKind, Phase, Progress,
    Project, ReadIndex, Remark, SavedSearch, Scan, SearchParams, Searchable, Symbols,
    Tracked as Walked, EMBED,
};
use crate::retrieve::{Bm25Params, LexicalIndex, Normalization, QueryTerms};
use crate::Error;

/// A node of the graph: a file, a definition or an import.
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "Definition")]
#[derive(Clone, PartialEq)]
pub struct PyDefinition {
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
    /// The class or function the definition is in ("" at file level).
    #[pyo3(get)]
    scope: String,
    /// The names an import brings in (empty for other definitions).
    #[pyo3(get)]
    items: Vec<String>,
}

#[pymethods]
impl PyDefinition {
    fn __repr__(&self) -> String {
        format!(
            "Definition({} {:?} at {}:{}-{})",
            self.kind, self.name, self.path, self.line, self.end_line
        )
    }
}

/// One edge seen from a symbol: the symbol at the other end, the edge's kind
/// ("calls", "inherits", "references", "uses", "imports"), the line of the reference, and how
/// sure the resolution is (1/n when the name matched n definitions).
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "Reference")]
#[derive(PartialEq)]
pub struct PyReference {
    #[pyo3(get)]
    symbol: PyDefinition,
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

/// The fields of a code document in which another form of a query word counts:
/// the identifiers and the path, not the docstring and body.
const FORM_FIELDS: &[&str] = &["name", "names", "path", "qualified", "signature"];

/// The weights of a code search (the Policy's `[retrieval]` section builds one);
/// every argument is required: the Policy is the one place their values live.
#[pyclass(frozen, module = "aircher_mem._core", name = "SearchParams")]
pub struct PySearchParams {
    params: SearchParams,
}

#[pymethods]
impl PySearchParams {
    #[new]
    #[pyo3(signature = (
        *, k1, b, field_weights, normalization, lexical_weight, graph_weight, dense_weight,
        candidates, graph_seeds, path_weight, focus_weight, damping, epsilon, max_pushes,
        forms, idf_exponent, prose_only, filler, test_factor, bench_factor, example_factor, docs_factor,
        vendor_factor, file_spread, name_only_factor
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        k1: Real,
        b: Real,
        field_weights: Checked<Vec<(Text, Real)>>,
        normalization: Text,
        lexical_weight: Real,
        graph_weight: Real,
        dense_weight: Real,
        candidates: Int<usize>,
        graph_seeds: Int<usize>,
        path_weight: Real,
        focus_weight: Real,
        damping: Real,
        epsilon: Real,
        max_pushes: Int<usize>,
        forms: Real,
        idf_exponent: Real,
        prose_only: Real,
        filler: Real,
        test_factor: Real,
        bench_factor: Real,
        example_factor: Real,
        docs_factor: Real,
        vendor_factor: Real,
        file_spread: Real,
        name_only_factor: Real,
    ) -> PyResult<Self> {
        if !(0.0..1.0).contains(&damping.0) {
            return Err(InvalidInputError::new_err(format!(
                "damping must be in [0, 1), got {}",
                damping.0
            )));
        }
        let normalization: Normalization = normalization.0.parse()?;
        Ok(Self {
            params: SearchParams {
                bm25: Bm25Params {
                    k1: k1.0,
                    b: b.0,
                    field_weights: field_weights
                        .0
                        .into_iter()
                        .map(|(f, w)| (f.0, w.0))
                        .collect(),
                },
                normalization,
                lexical_weight: lexical_weight.0,
                graph_weight: graph_weight.0,
                dense_weight: dense_weight.0,
                candidates: candidates.0,
                graph_seeds: graph_seeds.0,
                path_weight: path_weight.0,
                focus_weight: focus_weight.0,
                damping: damping.0,
                epsilon: epsilon.0,
                max_pushes: max_pushes.0,
                terms: QueryTerms {
                    forms: forms.0,
                    idf_exponent: idf_exponent.0,
                    form_fields: FORM_FIELDS,
                    prose_only: prose_only.0,
                    filler: filler.0,
                },
                test_factor: test_factor.0,
                bench_factor: bench_factor.0,
                example_factor: example_factor.0,
                docs_factor: docs_factor.0,
                vendor_factor: vendor_factor.0,
                file_spread: file_spread.0,
                name_only_factor: name_only_factor.0,
            },
        })
    }
}

/// One code search result: the definition (or file) found, its fused score, the
/// score of each channel that found it as (channel, raw, normalized, weight), the
/// query terms it matched and, for a file, its best definitions.
#[pyclass(frozen, module = "aircher_mem._core", name = "CodeHit")]
pub struct PyCodeHit {
    #[pyo3(get)]
    symbol: PyDefinition,
    #[pyo3(get)]
    score: f64,
    #[pyo3(get)]
    channels: Vec<(String, f64, f64, f64)>,
    #[pyo3(get)]
    matched: Vec<String>,
    #[pyo3(get)]
    via: Vec<PyDefinition>,
    /// A test or fixture file (scored down).
    #[pyo3(get)]
    test: bool,
}

#[pymethods]
impl PyCodeHit {
    fn __repr__(&self) -> String {
        format!(
            "CodeHit({} {:?} at {}:{}, score {:.4})",
            self.symbol.kind, self.symbol.name, self.symbol.path, self.symbol.line, self.score
        )
    }
}

/// The codebase as a graph (the agent's semantic memory): files, functions, classes,
/// variables and imports; contains, calls, imports, inherits, references and uses edges.
#[pyclass(frozen, module = "aircher_mem._core", name = "KnowledgeGraph")]
pub struct PyKnowledgeGraph {
    project: Project,
}

/// How often `build` reports progress (and checks for Ctrl-C) while it runs.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The callbacks a build reports to: `progress(done, total)` while parsing,
/// `phase(name)` as each phase begins.
struct Reporters<'a, 'py> {
    progress: Option<&'a Bound<'py, PyAny>>,
    phase: Option<&'a Bound<'py, PyAny>>,
}

impl Reporters<'_, '_> {
    /// An InvalidInputError for a callback that is not callable.
    fn check(&self) -> PyResult<()> {
        for (name, callback) in [("progress", self.progress), ("phase", self.phase)] {
            if let Some(callback) = callback.filter(|c| !c.is_callable()) {
                let kind = callback.get_type().name()?;
                return Err(InvalidInputError::new_err(format!(
                    "{name} must be callable or None (got a value of type {kind})"
                )));
            }
        }
        Ok(())
    }
}

/// Scans `root`, parses its sources (those of them named in `only`, when it is
/// given) on the thread pool and makes what `finish` makes of them, on a thread of its own, while this thread, the GIL released
/// between reports, every `REPORT_EVERY`: calls `phase(name)` for each phase
/// begun since the last report (every phase, in order, even one begun and ended
/// between two reports), and `progress(done, total)` while parsing and once when
/// the parse ends. An exception from a callback, or a signal (Ctrl-C), stops the
/// parse early (nothing is made of it) and is raised once the thread is done.
fn build_reporting<T: Send>(
    py: Python<'_>,
    root: &FsPath,
    max_file_bytes: u64,
    only: Option<Vec<String>>,
    reporters: &Reporters<'_, '_>,
    finish: impl FnOnce(Scan, Parsed, &Progress) -> crate::Result<T> + Send,
) -> PyResult<T> {
    reporters.check()?;
    let state = Progress::default();
    let total = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| -> crate::Result<Option<T>> {
            let mut scan = Project::scan(&root.0, max_file_bytes)?;
            if let Some(only) = only {
                let only: std::collections::HashSet<String> = only.into_iter().collect();
                scan.sources
                    .retain(|source| only.contains(&source.relative));
            }
            total.store(scan.sources.len(), Ordering::Relaxed);
            state.enter(Phase::Parsing);
            let parsed = parse_indexed(&scan.root, scan.max_file_bytes, &scan.sources, &state);
            if state.cancelled.load(Ordering::Relaxed) {
                return Ok(None);
            }
            finish(scan, parsed, &state).map(Some)
        });
        let mut outcome = Ok(());
        let mut reported: Option<Phase> = None; // the last phase whose begin was reported
        let mut parse_ended = false;
        loop {
            let finished = detached(py, || {
                let until = std::time::Instant::now() + REPORT_EVERY;
                while !worker.is_finished() && std::time::Instant::now() < until {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                worker.is_finished()
            });
            if outcome.is_ok() {
                outcome = py.check_signals().and_then(|()| {
                    let now = state.phase();
                    for phase in Phase::ALL {
                        if phase > now || reported.is_some_and(|last| phase <= last) {
                            continue;
                        }
                        if phase > Phase::Parsing && !parse_ended {
                            parse_ended = true;
                            report_parsed(reporters, &state, &total)?;
                        }
                        reported = Some(phase);
                        if let Some(callback) = reporters.phase {
                            callback.call1((phase.name(),))?;
                        }
                    }
                    if now == Phase::Parsing && !parse_ended {
                        parse_ended = finished;
                        report_parsed(reporters, &state, &total)?;
                    }
                    Ok(())
                });
                if outcome.is_err() {
                    state.cancelled.store(true, Ordering::Relaxed);
                }
            }
            if finished {
                break;
            }
        }
        let made = worker
            .join()
            .map_err(|_| PyRuntimeError::new_err("indexing failed (a thread panicked)"))?;
        outcome?;
        match made? {
            Some(made) => Ok(made),
            None => Err(PyRuntimeError::new_err("indexing was cancelled")),
        }
    })
}

/// `progress(done, total)` of the parse, if there is a `progress` callback.
fn report_parsed(
    reporters: &Reporters<'_, '_>,
    state: &Progress,
    total: &std::sync::atomic::AtomicUsize,
) -> PyResult<()> {
    match reporters.progress {
        Some(callback) => callback
            .call1((
                state.done.load(Ordering::Relaxed),
                total.load(Ordering::Relaxed),
            ))
            .map(drop),
        None => Ok(()),
    }
}

/// `path` relative to the project `root`, with `/` separators: the one rule every
/// interface uses to name a file of the project. `path` may be relative to `root`
/// or absolute inside it; `root` is canonicalised. Raises InvalidInputError for an
/// empty path, a NUL byte, the root itself, a `..` component, or a path outside the
/// root (also through a symlink).
#[pyfunction]
pub fn relative_path(py: Python<'_>, root: FsPath, path: FsPath) -> PyResult<String> {
    Ok(detached(py, || {
        relative_to(&canonical_root(&root.0)?, &path.0)
    })?)
}

/// The definitions and imports of a source text, as `KnowledgeGraph.get_file_contents`
/// would give them were it the file at `path` (root-relative, `/`), without a graph:
/// for comparing two versions of a file. The language is the one the graph gives
/// `path` (its extension, else its `#!` line); empty for a path the graph does not
/// parse and for binary text. InvalidInputError for a source over `max_bytes`.
#[pyfunction]
#[pyo3(
    signature = (path, source, *, max_bytes = Int(1_000_000)),
    text_signature = "(path, source, *, max_bytes=1000000)"
)]
pub fn outline(
    py: Python<'_>,
    path: Text,
    source: &[u8],
    max_bytes: Int<u64>,
) -> PyResult<Vec<PyDefinition>> {
    let found = detached(py, || crate::graph::outline(&path.0, source, max_bytes.0))?;
    Ok(found
        .into_iter()
        .map(|o| PyDefinition {
            kind: o.kind.name(),
            name: o.name,
            path: path.0.clone(),
            language: o.language.name(),
            line: o.line as usize,
            end_line: o.end_line as usize,
            signature: o.signature,
            scope: o.scope,
            items: o.items,
        })
        .collect())
}

/// The kind of non-product code a project-relative `path` is by its folder and file
/// names (`test`, `bench`, `example`, `docs`, `vendor`), or None: product code.
#[pyfunction]
pub fn path_kind(path: Text) -> Option<&'static str> {
    crate::graph::path_kind(&path.0, &[]).map(crate::graph::PathKind::name)
}

/// The bytes of the project file `path` (relative to `root` or absolute inside it),
/// read the one way the engine reads project files: no symbolic link is followed
/// (on any component of the path), nothing but a regular file is opened (a FIFO
/// never blocks), at most `max_bytes` are read. Raises InvalidInputError for a
/// path outside the root, through or to a symlink, or a bad `max_bytes`;
/// FileMissingError for a file (or folder on the way) that is not there;
/// StoreError for a FIFO, socket, device or folder, and for a file larger than
/// `max_bytes`.
#[pyfunction]
#[pyo3(signature = (root, path, *, max_bytes))]
pub fn read_project_file<'py>(
    py: Python<'py>,
    root: FsPath,
    path: FsPath,
    max_bytes: Int<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = detached(py, || -> crate::Result<Vec<u8>> {
        let root = canonical_root(&root.0)?;
        let relative = relative_to(&root, &path.0)?;
        crate::graph::read_project_file(&root, &relative, max_bytes.0)
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// Source files, skipped files and the count of files per unsupported language, as
/// `discover` returns them.
type Discovered = (Vec<String>, Vec<Remark>, BTreeMap<String, usize>);

/// Whether `path` ends with one of `suffixes`.
fn ends_with_any(path: &str, suffixes: &[Text]) -> bool {
    suffixes
        .iter()
        .any(|suffix| path.ends_with(suffix.0.as_str()))
}

/// `tracked` returns them: the source files' paths, mtime_ns and sizes, the counts
/// of files of languages the graph does not parse.
type Tracked = (Vec<String>, Vec<i128>, Vec<u64>, BTreeMap<String, usize>);

/// A node as Python sees it.
fn symbol(graph: &KnowledgeGraph, id: NodeIndex) -> PyDefinition {
    let n = graph.node(id);
    PyDefinition {
        scope: graph.scope(id).unwrap_or_default().to_string(),
        items: n.items.iter().map(|item| item.to_string()).collect(),
        kind: n.kind.name(),
        name: n.name.to_string(),
        path: n.path.to_string(),
        language: n.language.name(),
        line: n.line as usize,
        end_line: n.end_line as usize,
        signature: n.signature.to_string(),
    }
}

/// Edges found, as Python sees them: the node at the other end (by `symbol`) and
/// the edge's kind, line and confidence.
fn references(
    found: Vec<(NodeIndex, Edge)>,
    symbol: impl Fn(NodeIndex) -> PyDefinition,
) -> Vec<PyReference> {
    found
        .into_iter()
        .map(|(id, edge)| reference(symbol(id), edge))
        .collect()
}

fn reference(symbol: PyDefinition, edge: Edge) -> PyReference {
    PyReference {
        symbol,
        kind: edge.kind.name(),
        line: edge.line as usize,
        confidence: edge.confidence,
    }
}

/// What a search returns to Python: the hits, the files the text mentions, why
/// nothing was found.
type Searched = (Vec<PyCodeHit>, Vec<String>, String);

/// A search's arguments, checked.
struct Asked {
    text: String,
    level: Level,
    limit: usize,
    focus: Vec<String>,
    dense: Vec<(String, f64)>,
    declared: Vec<(String, PathKind)>,
}

impl Asked {
    fn new(
        text: Text,
        level: Text,
        limit: Int<usize>,
        focus: Checked<Vec<Text>>,
        dense: Checked<Vec<(Text, Real)>>,
        kinds: Checked<Vec<(Text, Text)>>,
    ) -> PyResult<Asked> {
        Ok(Asked {
            text: text.0,
            level: level.0.parse()?,
            limit: limit.0,
            focus: focus.0.into_iter().map(|t| t.0).collect(),
            dense: dense.0.into_iter().map(|(k, s)| (k.0, s.0)).collect(),
            declared: kinds
                .0
                .into_iter()
                .map(|(path, kind)| Ok((path.0, kind.0.parse::<PathKind>()?)))
                .collect::<crate::Result<_>>()?,
        })
    }

    fn run(&self, graph: &impl Searchable, lexical: &LexicalIndex, params: &SearchParams) -> Found {
        search(
            graph,
            lexical,
            &self.text,
            &self.focus,
            &self.dense,
            self.level,
            self.limit,
            params,
            &self.declared,
        )
    }
}

/// A search's hits for Python, each node made a `Definition` by `symbol`.
trait HitsOf {
    fn hits_of(self, symbol: impl Fn(NodeIndex) -> PyDefinition) -> Searched;
}

impl HitsOf for Found {
    fn hits_of(self, symbol: impl Fn(NodeIndex) -> PyDefinition) -> Searched {
        let hits = self
            .hits
            .into_iter()
            .map(|hit| PyCodeHit {
                symbol: symbol(hit.node),
                score: hit.score,
                channels: hit
                    .channels
                    .into_iter()
                    .map(|c| (c.name, c.raw, c.normalized, c.weight))
                    .collect(),
                matched: hit.matched,
                via: hit.via.into_iter().map(&symbol).collect(),
                test: hit.test,
            })
            .collect();
        (hits, self.mentioned, self.reason)
    }
}

/// A node of a graph's view as a `Definition` (None: a damaged record, read as
/// an empty one).
fn view_symbol(view: &GraphView, id: NodeIndex) -> PyDefinition {
    let Some(n) = view.node(id) else {
        return PyDefinition {
            kind: "file",
            name: String::new(),
            path: String::new(),
            language: "",
            line: 0,
            end_line: 0,
            signature: String::new(),
            scope: String::new(),
            items: Vec::new(),
        };
    };
    PyDefinition {
        scope: n.scope.to_string(),
        items: n.items.iter().map(|item| item.to_string()).collect(),
        kind: n.kind.name(),
        name: n.name.to_string(),
        path: n.path.to_string(),
        language: n.language.name(),
        line: n.line as usize,
        end_line: n.end_line as usize,
        signature: n.signature.to_string(),
    }
}

/// A saved graph searched where it lies (its view and lexical index mapped, see
/// `crate::graph::view`), without loading it: a first search in a process that
/// has not loaded the graph. It answers `search` as the loaded graph does, to
/// the bit.
#[pyclass(frozen, module = "aircher_mem._core", name = "GraphView")]
pub struct PyGraphView {
    saved: SavedSearch,
    root: PathBuf,
}

#[pymethods]
impl PyGraphView {
    /// The view and lexical index saved beside the graph file at `path`, for the
    /// project at `root`. Raises `StoreCorruptError` when either is damaged or was
    /// not written with that graph file (a save cut short), `SchemaVersionError`
    /// for another format, `FileMissingError` when either is missing.
    #[staticmethod]
    #[pyo3(signature = (path, *, root), text_signature = "(path, *, root)")]
    fn open(py: Python<'_>, path: FsPath, root: FsPath) -> PyResult<Self> {
        let saved = detached(py, || SavedSearch::open(&path.0))?;
        Ok(Self {
            saved,
            root: root.0,
        })
    }

    /// The project root, as given.
    #[getter]
    fn root(&self) -> PathBuf {
        self.root.clone()
    }

    #[getter]
    fn file_count(&self) -> usize {
        self.saved.view.file_count()
    }

    /// The files in the graph (relative paths, sorted).
    #[getter]
    fn files(&self) -> Vec<String> {
        self.saved.view.paths().map(str::to_string).collect()
    }

    /// `KnowledgeGraph.files_ending`, from the saved graph.
    fn files_ending(&self, suffixes: Checked<Vec<Text>>) -> Vec<String> {
        self.saved
            .view
            .paths()
            .filter(|path| ends_with_any(path, &suffixes.0))
            .map(str::to_string)
            .collect()
    }

    /// `KnowledgeGraph.find_symbol`, from the saved graph.
    #[pyo3(
        signature = (name, *, prefix = Checked(false), fuzzy = Checked(false)),
        text_signature = "($self, name, *, prefix=False, fuzzy=False)"
    )]
    fn find_symbol(
        &self,
        py: Python<'_>,
        name: Text,
        prefix: Checked<bool>,
        fuzzy: Checked<bool>,
    ) -> PyResult<Vec<PyDefinition>> {
        self.answer(py, |view| {
            let found = view.find(&name.0, prefix.0, fuzzy.0)?;
            Ok(found.into_iter().map(|id| view_symbol(view, id)).collect())
        })
    }

    /// `KnowledgeGraph.get_file_contents`, from the saved graph.
    fn get_file_contents(&self, py: Python<'_>, path: Text) -> PyResult<Vec<PyDefinition>> {
        self.answer(py, |view| {
            let ids = view
                .file_contents(&path.0)
                .ok_or_else(|| Error::UnknownFile(path.0.clone()))?;
            Ok(ids.into_iter().map(|id| view_symbol(view, id)).collect())
        })
    }

    /// `KnowledgeGraph.get_callers`, from the saved graph.
    fn get_callers(&self, py: Python<'_>, name: Text) -> PyResult<Vec<PyReference>> {
        self.answer(py, |view| {
            Ok(references(view.callers(&name.0), |id| {
                view_symbol(view, id)
            }))
        })
    }

    /// `KnowledgeGraph.get_callees`, from the saved graph.
    fn get_callees(&self, py: Python<'_>, name: Text) -> PyResult<Vec<PyReference>> {
        self.answer(py, |view| {
            Ok(references(view.callees(&name.0), |id| {
                view_symbol(view, id)
            }))
        })
    }

    /// `KnowledgeGraph.get_references`, from the saved graph.
    #[pyo3(signature = (name, *, kind = None))]
    fn get_references(
        &self,
        py: Python<'_>,
        name: Text,
        kind: Option<Text>,
    ) -> PyResult<Vec<PyReference>> {
        let kinds = reference_kinds(kind.as_ref().map(|k| k.0.as_str()))?;
        self.answer(py, |view| {
            let found = view.references(&name.0, &kinds);
            Ok(references(found, |id| view_symbol(view, id)))
        })
    }

    /// `KnowledgeGraph.get_dependencies`, from the saved graph.
    fn get_dependencies(&self, py: Python<'_>, path: Text) -> PyResult<Vec<String>> {
        self.answer(py, |view| dependencies(view, &path.0, Direction::Outgoing))
    }

    /// `KnowledgeGraph.get_dependents`, from the saved graph.
    fn get_dependents(&self, py: Python<'_>, path: Text) -> PyResult<Vec<String>> {
        self.answer(py, |view| dependencies(view, &path.0, Direction::Incoming))
    }

    /// `KnowledgeGraph.neighbourhood`, from the saved graph.
    #[pyo3(signature = (name, hops = Int(1)), text_signature = "($self, name, hops=1)")]
    fn neighbourhood(
        &self,
        py: Python<'_>,
        name: Text,
        hops: Int<usize>,
    ) -> PyResult<Vec<(PyDefinition, usize)>> {
        self.answer(py, |view| {
            let found = view.neighbourhood_of(&name.0, hops.0);
            Ok(found
                .into_iter()
                .map(|(id, d)| (view_symbol(view, id), d))
                .collect())
        })
    }

    /// `KnowledgeGraph.search`, from the saved graph.
    #[pyo3(
        signature = (text, params, *, level = Text("definition".to_string()), limit = Int(10), focus = Checked(Vec::new()), dense = Checked(Vec::new()), kinds = Checked(Vec::new())),
        text_signature = "($self, text, params, *, level='definition', limit=10, focus=(), dense=(), kinds=())"
    )]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        text: Text,
        params: PyRef<'_, PySearchParams>,
        level: Text,
        limit: Int<usize>,
        focus: Checked<Vec<Text>>,
        dense: Checked<Vec<(Text, Real)>>,
        kinds: Checked<Vec<(Text, Text)>>,
    ) -> PyResult<Searched> {
        let asked = Asked::new(text, level, limit, focus, dense, kinds)?;
        let params = &params.params;
        Ok(detached(py, || -> crate::Result<_> {
            let (view, lexical) = (&self.saved.view, &self.saved.lexical);
            let found = asked.run(view, lexical, params);
            // A damaged block met: an error, not the hits found without it.
            view.check()?;
            lexical.check_source()?;
            Ok(found.hits_of(|node| view_symbol(view, node)))
        })?)
    }
}

impl PyGraphView {
    /// `work`'s answer from the view, without the GIL; an error when it met a
    /// block that fails its checksum (an answer read without it is not to be
    /// trusted: a damaged file record is not an unknown file).
    fn answer<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&GraphView) -> crate::Result<T> + Send,
    ) -> PyResult<T> {
        let view = &self.saved.view;
        Ok(detached(py, || {
            let answer = work(view);
            view.check()?;
            answer
        })?)
    }
}

/// The files `path` imports (`Outgoing`) or that import it, sorted.
fn dependencies(
    graph: &impl Symbols,
    path: &str,
    direction: Direction,
) -> crate::Result<Vec<String>> {
    graph
        .dependencies(path, direction)
        .ok_or_else(|| Error::UnknownFile(path.to_string()))
}

fn symbols(graph: &KnowledgeGraph, ids: Vec<NodeIndex>) -> Vec<PyDefinition> {
    ids.into_iter().map(|id| symbol(graph, id)).collect()
}

#[pymethods]
impl PyKnowledgeGraph {
    /// Indexes every source file under `root` (Python, Rust, JavaScript, TypeScript,
    /// TSX, Go, Java, C, C++, C#, Ruby, PHP, Lua, Bash, Kotlin, Swift, Scala): .gitignore is respected, vendored folders, binary files and
    /// files over `max_file_bytes` are skipped (see `skipped`), files with syntax
    /// errors keep what the parser read, and `warnings` says which lines it could not. Parsing runs in
    /// parallel without the GIL; `phase(name)` is called as each phase begins
    /// ("scanning", "parsing", "lexical index", "linking"), `progress(done, total)`
    /// every 100 ms while parsing and once when the parse ends; an exception either
    /// raises, or Ctrl-C, stops the build. With `only` (root-relative paths with
    /// `/`), only those of the source files are parsed: a first part of the
    /// project, the rest added with `update_file`.
    #[staticmethod]
    #[pyo3(
        signature = (root, *, max_file_bytes = Int(1_000_000), progress = None, phase = None, only = None),
        text_signature = "(root, *, max_file_bytes=1000000, progress=None, phase=None, only=None)"
    )]
    fn build(
        py: Python<'_>,
        root: FsPath,
        max_file_bytes: Int<u64>,
        progress: Option<Bound<'_, PyAny>>,
        phase: Option<Bound<'_, PyAny>>,
        only: Option<Checked<Vec<Text>>>,
    ) -> PyResult<Self> {
        let reporters = Reporters {
            progress: progress.as_ref(),
            phase: phase.as_ref(),
        };
        let project = build_reporting(
            py,
            &root,
            max_file_bytes.0,
            only.map(|names| names.0.into_iter().map(|name| name.0).collect()),
            &reporters,
            |scan, parsed, state| Ok(Project::from_parsed(scan, parsed, state)),
        )?;
        Ok(Self { project })
    }

    /// Builds the graph of `root` as `build` does and saves it to `path` as `save`
    /// does (the same bytes), without keeping it: less memory at the peak (the
    /// lexical index is written from its parts without being made whole, and
    /// dropped before the graph is made). For a caller that only wants the store;
    /// `load` reads it back. Reports as `build` does, with a last phase, "saving".
    /// Returns (the number of files in the graph, `skipped`, `warnings`).
    #[staticmethod]
    #[pyo3(
        signature = (root, path, *, max_file_bytes = Int(1_000_000), progress = None, phase = None),
        text_signature = "(root, path, *, max_file_bytes=1000000, progress=None, phase=None)"
    )]
    fn build_into(
        py: Python<'_>,
        root: FsPath,
        path: FsPath,
        max_file_bytes: Int<u64>,
        progress: Option<Bound<'_, PyAny>>,
        phase: Option<Bound<'_, PyAny>>,
    ) -> PyResult<(usize, Vec<Remark>, Vec<Remark>)> {
        let reporters = Reporters {
            progress: progress.as_ref(),
            phase: phase.as_ref(),
        };
        let built = build_reporting(
            py,
            &root,
            max_file_bytes.0,
            None,
            &reporters,
            |scan, parsed, state| Project::build_into(scan, parsed, &path.0, state),
        )?;
        Ok((built.files, built.skipped, built.warnings))
    }

    /// Re-reads one file and repairs only the edges into and out of it. A file that
    /// is gone is removed; one that is now binary or too large is removed and listed
    /// in `skipped`. `path` is relative to the root or absolute inside it.
    fn update_file(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        detached(py, || self.project.update_file(&path.0))?;
        Ok(())
    }

    /// Writes the graph to `path` (temporary file, then rename; missing folders are
    /// created): what each file defines and calls, the root, and what was skipped.
    /// Loading needs no parsing.
    fn save(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        Ok(detached(py, || self.project.save(&path.0))?)
    }

    /// Reads a graph written by `save`. A damaged file raises StoreCorruptError, one
    /// of another format version SchemaVersionError: rebuild with `build` then.
    /// `root` overrides the saved project root (e.g. after moving the checkout).
    /// The lexical index saved beside it is read when first needed (a search, a
    /// save, `embedding_texts`; `read_index="when_needed"`): graph queries and
    /// updates never wait for it. `read_index="with_graph"` reads it beside the
    /// graph, for a caller about to search (the two side by side take less time
    /// than one after the other).
    #[staticmethod]
    #[pyo3(
        signature = (path, *, root = None, max_file_bytes = Int(1_000_000), read_index = Text("when_needed".to_string())),
        text_signature = "(path, *, root=None, max_file_bytes=1000000, read_index='when_needed')"
    )]
    fn load(
        py: Python<'_>,
        path: FsPath,
        root: Option<FsPath>,
        max_file_bytes: Int<u64>,
        read_index: Text,
    ) -> PyResult<Self> {
        let root = root.map(|r| r.0);
        let read: ReadIndex = read_index.0.parse()?;
        let project = detached(py, || Project::load(&path.0, root, max_file_bytes.0, read))?;
        Ok(Self { project })
    }

    /// Drops a file from the graph (e.g. after it was deleted); false if it was not in it.
    fn remove_file(&self, py: Python<'_>, path: FsPath) -> PyResult<bool> {
        Ok(detached(py, || self.project.remove_file(&path.0))?)
    }

    /// The project root (absolute).
    #[getter]
    fn root(&self) -> PathBuf {
        self.project.root().to_path_buf()
    }

    #[getter]
    fn file_count(&self) -> usize {
        self.project.state().graph().file_count()
    }
    #[getter]
    fn node_count(&self) -> usize {
        self.project.state().graph().node_count()
    }
    #[getter]
    fn edge_count(&self) -> usize {
        self.project.state().graph().edge_count()
    }
    /// Whether the lexical index is in memory (false after `load` until it is
    /// first needed).
    #[getter]
    fn lexical_read(&self) -> bool {
        self.project.state().lexical_read()
    }
    /// (path, reason) of every file not indexed.
    #[getter]
    fn skipped(&self) -> Vec<Remark> {
        self.project.state().skipped().to_vec()
    }
    /// (path, problem) of files indexed only in part.
    #[getter]
    fn warnings(&self) -> Vec<Remark> {
        self.project.state().warnings().to_vec()
    }

    /// Definitions named `name`, by path and line; with `prefix`, those whose name
    /// starts with it; with `fuzzy`, those whose name holds its letters in order,
    /// ignoring case, best match first. `Class.method` (or `Class::method`) looks
    /// for `method` (exact, prefix or fuzzy) defined directly in `Class` only.
    #[pyo3(
        signature = (name, *, prefix = Checked(false), fuzzy = Checked(false)),
        text_signature = "($self, name, *, prefix=False, fuzzy=False)"
    )]
    fn find_symbol(
        &self,
        name: Text,
        prefix: Checked<bool>,
        fuzzy: Checked<bool>,
    ) -> PyResult<Vec<PyDefinition>> {
        let state = self.project.state();
        let found = state.graph().find(&name.0, prefix.0, fuzzy.0)?;
        Ok(symbols(state.graph(), found))
    }

    /// The source files `build` would index under `root` (relative paths, sorted),
    /// the files it would skip before parsing, with why, and how many files of each
    /// programming language the graph does not parse lie there (language name ->
    /// count, e.g. {"Kotlin": 12}); nothing is read or parsed.
    #[staticmethod]
    #[pyo3(
        signature = (root, *, max_file_bytes = Int(1_000_000)),
        text_signature = "(root, *, max_file_bytes=1000000)"
    )]
    fn discover(py: Python<'_>, root: FsPath, max_file_bytes: Int<u64>) -> PyResult<Discovered> {
        let scan = detached(py, || Project::scan(&root.0, max_file_bytes.0))?;
        Ok((
            scan.sources.into_iter().map(|s| s.relative).collect(),
            scan.skipped,
            scan.unsupported,
        ))
    }

    /// The source files `build` would index under `root` whatever their size,
    /// sorted by path, in three columns: the paths, each one's modification time
    /// (nanoseconds since the epoch, as `os.stat_result.st_mtime_ns`) and size as
    /// the walk saw them (`lstat`: a symlink is never followed); and the count of
    /// files of each programming language the graph does not parse: one walk, for a
    /// check of which files changed since an index (columns: no tuple per file to
    /// make and collect). Nothing is read but `#!` lines. With
    /// `record`, a file where the walk is kept: a later call whose tree is as the
    /// walk left it (each folder, ignore file and `#!` line unchanged) stats the
    /// files instead of walking again.
    #[staticmethod]
    #[pyo3(signature = (root, *, record = None), text_signature = "(root, *, record=None)")]
    fn tracked(py: Python<'_>, root: FsPath, record: Option<FsPath>) -> PyResult<Tracked> {
        let found = detached(py, || match &record {
            Some(record) => Project::tracked(&root.0, &record.0),
            None => Project::scan(&root.0, u64::MAX).map(|scan| Walked {
                sources: scan.sources,
                unsupported: scan.unsupported,
            }),
        })?;
        let modified = found.sources.iter().map(|s| s.modified).collect();
        let bytes = found.sources.iter().map(|s| s.bytes).collect();
        let paths = found.sources.into_iter().map(|s| s.relative).collect();
        Ok((paths, modified, bytes, found.unsupported))
    }

    /// The languages the graph parses, by name ("Python", "Rust", "TSX"...).
    #[staticmethod]
    fn supported_languages() -> Vec<&'static str> {
        Language::ALL.iter().map(|l| l.display_name()).collect()
    }

    /// The files in the graph (relative paths, sorted).
    #[getter]
    fn files(&self) -> Vec<String> {
        self.project.state().graph().paths()
    }

    /// The files in the graph whose path ends with one of `suffixes` (`.js`...),
    /// sorted: `files` filtered without a string for each of the others.
    fn files_ending(&self, suffixes: Checked<Vec<Text>>) -> Vec<String> {
        let mut paths = self.project.state().graph().paths();
        paths.retain(|path| ends_with_any(path, &suffixes.0));
        paths
    }

    /// Every definition and import in a file, in line order.
    fn get_file_contents(&self, path: Text) -> PyResult<Vec<PyDefinition>> {
        let path = path.0.as_str();
        let state = self.project.state();
        let ids = state
            .graph()
            .file_contents(path)
            .ok_or_else(|| Error::UnknownFile(path.to_string()))?;
        Ok(symbols(state.graph(), ids))
    }

    /// What calls the definitions named `name` (or `Class.method`).
    fn get_callers(&self, name: Text) -> Vec<PyReference> {
        let graph = self.project.state();
        let graph = graph.graph();
        references(graph.callers(&name.0), |id| symbol(graph, id))
    }

    /// What the definitions named `name` (or `Class.method`) call.
    fn get_callees(&self, name: Text) -> Vec<PyReference> {
        let graph = self.project.state();
        let graph = graph.graph();
        references(graph.callees(&name.0), |id| symbol(graph, id))
    }

    /// What refers to the definitions named `name`: calls them, inherits from them,
    /// names them in a type or an import, uses them (a variable); or only `kind`.
    #[pyo3(signature = (name, *, kind = None))]
    fn get_references(&self, name: Text, kind: Option<Text>) -> PyResult<Vec<PyReference>> {
        let kinds = reference_kinds(kind.as_ref().map(|k| k.0.as_str()))?;
        let graph = self.project.state();
        let graph = graph.graph();
        Ok(references(graph.references(&name.0, &kinds), |id| {
            symbol(graph, id)
        }))
    }

    /// Every edge out of a file other than containment, as (source symbol, reference
    /// to the target), by line: what the file calls, imports, inherits, names and uses.
    fn get_references_from(&self, path: Text) -> PyResult<Vec<(PyDefinition, PyReference)>> {
        let path = path.0.as_str();
        let state = self.project.state();
        let graph = state.graph();
        let edges = graph
            .references_from(path)
            .ok_or_else(|| Error::UnknownFile(path.to_string()))?;
        Ok(edges
            .into_iter()
            .map(|(a, b, e)| (symbol(graph, a), reference(symbol(graph, b), e)))
            .collect())
    }

    /// The files `path` imports (repository-relative paths, sorted).
    fn get_dependencies(&self, path: Text) -> PyResult<Vec<String>> {
        Ok(dependencies(
            self.project.state().graph(),
            &path.0,
            Direction::Outgoing,
        )?)
    }

    /// The files that import `path`.
    fn get_dependents(&self, path: Text) -> PyResult<Vec<String>> {
        Ok(dependencies(
            self.project.state().graph(),
            &path.0,
            Direction::Incoming,
        )?)
    }

    /// Symbols ranked by personalized PageRank seeded by definitions named in `names`
    /// (each name's weight shared among its definitions) and by the files in `files`
    /// (unknown ones are ignored), best first.
    #[pyo3(
        signature = (names, files = Checked(Vec::new()), *, limit = Int(50), damping = Real(0.85), iterations = Int(30)),
        text_signature = "($self, names, files=..., *, limit=50, damping=0.85, iterations=30)"
    )]
    fn rank(
        &self,
        py: Python<'_>,
        names: Checked<Vec<Text>>,
        files: Checked<Vec<Text>>,
        limit: Int<usize>,
        damping: Real,
        iterations: Int<usize>,
    ) -> PyResult<Vec<(PyDefinition, f64)>> {
        let names: Vec<String> = names.0.into_iter().map(|t| t.0).collect();
        let files: Vec<String> = files.0.into_iter().map(|t| t.0).collect();
        let (limit, damping, iterations) = (limit.0, damping.0, iterations.0);
        // The lock is taken and released without the GIL: a thread never waits for
        // the GIL while holding it (an update waiting to write would block readers).
        Ok(detached(
            py,
            || -> crate::Result<Vec<(PyDefinition, f64)>> {
                let state = self.project.state();
                let graph = state.graph();
                let ranked = graph.rank_named(&names, &files, limit, damping, iterations)?;
                Ok(ranked
                    .into_iter()
                    .map(|(id, score)| (symbol(graph, id), score))
                    .collect())
            },
        )?)
    }

    /// The definitions (`level="definition"`) or files (`level="file"`) most
    /// relevant to `text`, best first, at most `limit`: lexical matches, a walk over
    /// the graph from them, from the files `text` mentions and from `focus` files,
    /// and `dense` (document key, similarity) pairs when given, fused with `params`.
    /// Returns (hits, files the text mentions, why nothing was found or "").
    #[pyo3(
        signature = (text, params, *, level = Text("definition".to_string()), limit = Int(10), focus = Checked(Vec::new()), dense = Checked(Vec::new()), kinds = Checked(Vec::new())),
        text_signature = "($self, text, params, *, level='definition', limit=10, focus=(), dense=(), kinds=())"
    )]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        text: Text,
        params: PyRef<'_, PySearchParams>,
        level: Text,
        limit: Int<usize>,
        focus: Checked<Vec<Text>>,
        dense: Checked<Vec<(Text, Real)>>,
        kinds: Checked<Vec<(Text, Text)>>,
    ) -> PyResult<Searched> {
        let asked = Asked::new(text, level, limit, focus, dense, kinds)?;
        let params = &params.params;
        Ok(detached(py, || -> crate::Result<_> {
            let state = self.project.state_checked()?;
            let graph = state.graph();
            let found = asked.run(graph, state.lexical(), params);
            // A damaged file read in place: its error, not the hits found without it.
            state.lexical().check_source()?;
            Ok(found.hits_of(|node| symbol(graph, node)))
        })?)
    }

    /// (document key, text) of every document an embedding model reads (functions,
    /// classes and files), sorted by key: what a dense index is built from.
    fn embedding_texts(&self, py: Python<'_>) -> Vec<(String, String)> {
        detached(py, || {
            let state = self.project.state();
            let mut out: Vec<(String, String)> = state
                .lexical()
                .documents()
                .filter_map(|d| {
                    let text = d.meta.get(EMBED)?;
                    Some((d.key.to_string(), text.to_owned()))
                })
                .collect();
            out.sort_unstable();
            out
        })
    }

    /// Everything within `hops` edges (either direction) of the definitions named
    /// `name` (or `Class.method`) or of the file `name`, as (symbol, distance),
    /// nearest first.
    #[pyo3(signature = (name, hops = Int(1)), text_signature = "($self, name, hops=1)")]
    fn neighbourhood(&self, name: Text, hops: Int<usize>) -> Vec<(PyDefinition, usize)> {
        let state = self.project.state();
        let graph = state.graph();
        graph
            .neighbourhood_of(&name.0, hops.0)
            .into_iter()
            .map(|(id, d)| (symbol(graph, id), d))
            .collect()
    }

    /// Every edge as (source, kind, target), sorted; a file is its path, a symbol
    /// "path:name", an import "path:import module".
    fn edges(&self) -> Vec<(String, &'static str, String)> {
        self.project
            .state()
            .graph()
            .edge_list()
            .into_iter()
            .map(|(a, kind, b, _, _)| (a, kind.name(), b))
            .collect()
    }

    fn __repr__(&self) -> String {
        let state = self.project.state();
        format!(
            "KnowledgeGraph(files={}, nodes={}, edges={}, skipped={})",
            state.graph().file_count(),
            state.graph().node_count(),
            state.graph().edge_count(),
            state.skipped().len()
        )
    }
}
