//! Python classes for the knowledge graph. No logic here: see `crate::graph`.

use std::path::PathBuf;

use pyo3::prelude::*;

use super::detached;
use crate::error::invalid;
use crate::graph::{discover, parse, Edge, EdgeKind, KnowledgeGraph, NodeIndex};
use crate::Error;

/// A definition (or file) in the graph.
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "Symbol")]
#[derive(Clone, PartialEq)]
pub struct PySymbol {
    /// "file", "function", "class" or "variable".
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
    /// The definition's first line.
    #[pyo3(get)]
    signature: String,
}

#[pymethods]
impl PySymbol {
    fn __repr__(&self) -> String {
        format!("Symbol({} {:?} at {}:{}-{})", self.kind, self.name, self.path, self.line, self.end_line)
    }
}

/// One call edge: the symbol at the other end, the line of the call, and how sure
/// the resolution is (1/n when the name matched n definitions).
#[pyclass(frozen, module = "aircher_mem._core", name = "Call")]
pub struct PyCall {
    #[pyo3(get)]
    symbol: PySymbol,
    #[pyo3(get)]
    line: usize,
    #[pyo3(get)]
    confidence: f32,
}

#[pymethods]
impl PyCall {
    fn __repr__(&self) -> String {
        format!("Call({:?} at line {}, confidence {})", self.symbol.name, self.line, self.confidence)
    }
}

/// The codebase as a graph (seed 002's semantic memory): files, functions, classes
/// and module-level variables; Contains and Calls edges.
#[pyclass(frozen, module = "aircher_mem._core", name = "KnowledgeGraph")]
pub struct PyKnowledgeGraph {
    graph: KnowledgeGraph,
    skipped: Vec<(String, String)>,
    warnings: Vec<(String, String)>,
}

const CHUNK: usize = 256;

impl PyKnowledgeGraph {
    fn symbol(&self, id: NodeIndex) -> PySymbol {
        let n = self.graph.node(id);
        PySymbol {
            kind: n.kind.name(),
            name: n.name.clone(),
            path: n.path.clone(),
            language: n.language.name(),
            line: n.line,
            end_line: n.end_line,
            signature: n.signature.clone(),
        }
    }

    fn calls(&self, found: Vec<(NodeIndex, Edge)>) -> Vec<PyCall> {
        found.into_iter().map(|(id, edge)| PyCall { symbol: self.symbol(id), line: edge.line, confidence: edge.confidence }).collect()
    }
}

#[pymethods]
impl PyKnowledgeGraph {
    /// Indexes every source file under `root` (Python, Rust, JavaScript, TypeScript,
    /// TSX, Go, Java): .gitignore is respected, vendored folders, binary files and
    /// files over `max_file_bytes` are skipped (see `skipped`), files with syntax
    /// errors are indexed as far as the parser got (see `warnings`). Parsing runs in
    /// parallel without the GIL; `progress(done, total)` is called between chunks.
    #[staticmethod]
    #[pyo3(signature = (root, *, max_file_bytes = 1_000_000, progress = None))]
    fn build(py: Python<'_>, root: PathBuf, max_file_bytes: u64, progress: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        if !root.is_dir() {
            return Err(invalid("root", format!("{} is not a directory", root.display())).into());
        }
        let (sources, mut skipped) = detached(py, || discover(&root, max_file_bytes));
        let mut files = Vec::with_capacity(sources.len());
        let mut warnings = Vec::new();
        for (done, chunk) in sources.chunks(CHUNK).enumerate() {
            let parsed = detached(py, || parse(chunk));
            for (source, result) in chunk.iter().zip(parsed) {
                match result {
                    Ok(symbols) => {
                        if symbols.syntax_errors {
                            warnings.push((source.relative.clone(), "syntax errors: indexed as far as the parser got".to_string()));
                        }
                        files.push((source.relative.clone(), symbols));
                    }
                    Err(reason) => skipped.push((source.relative.clone(), reason)),
                }
            }
            if let Some(callback) = &progress {
                callback.call1(((done * CHUNK + chunk.len()).min(sources.len()), sources.len()))?;
            }
        }
        let graph = detached(py, || KnowledgeGraph::from_files(files));
        Ok(Self { graph, skipped, warnings })
    }

    #[getter]
    fn file_count(&self) -> usize {
        self.graph.file_count()
    }
    #[getter]
    fn node_count(&self) -> usize {
        self.graph.node_count()
    }
    #[getter]
    fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
    /// (path, reason) of every file not indexed.
    #[getter]
    fn skipped(&self) -> Vec<(String, String)> {
        self.skipped.clone()
    }
    /// (path, problem) of files indexed only in part.
    #[getter]
    fn warnings(&self) -> Vec<(String, String)> {
        self.warnings.clone()
    }

    /// Definitions named `name` (or, with `prefix`, starting with it).
    #[pyo3(signature = (name, *, prefix = false))]
    fn find_symbol(&self, name: &str, prefix: bool) -> Vec<PySymbol> {
        self.graph.find_symbol(name, prefix).into_iter().map(|id| self.symbol(id)).collect()
    }

    /// Every definition in a file, in line order.
    fn get_file_contents(&self, path: &str) -> PyResult<Vec<PySymbol>> {
        let ids = self.graph.file_contents(path).ok_or_else(|| Error::UnknownFile(path.to_string()))?;
        Ok(ids.into_iter().map(|id| self.symbol(id)).collect())
    }

    /// What calls the definitions named `name`.
    fn get_callers(&self, name: &str) -> Vec<PyCall> {
        self.calls(self.graph.callers(name))
    }

    /// What the definitions named `name` call.
    fn get_callees(&self, name: &str) -> Vec<PyCall> {
        self.calls(self.graph.callees(name))
    }

    /// Every edge as (source, kind, target); a file is its path, a symbol "path:name".
    fn edges(&self) -> Vec<(String, &'static str, String)> {
        self.graph
            .edge_list()
            .into_iter()
            .map(|(a, kind, b)| (a, if kind == EdgeKind::Contains { "contains" } else { "calls" }, b))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "KnowledgeGraph(files={}, nodes={}, edges={}, skipped={})",
            self.graph.file_count(),
            self.graph.node_count(),
            self.graph.edge_count(),
            self.skipped.len()
        )
    }
}
