//! aircher-mem's Rust core. `context` is plain Rust; the Python module below is a thin
//! binding over it, compiled only with the `python` feature.

mod atomic;
pub mod context;
pub mod error;
pub mod graph;
mod intern;
mod mapped;
pub mod retrieve;

#[cfg(test)]
mod fuzz;

pub use error::{Error, Result};

/// Returns the memory mimalloc holds free to the OS, on every rayon thread and this
/// one, after a build or load: a build frees most of what its parse allocated
/// (syntax trees, sources, tokens), spread over the worker threads' heaps, which keep
/// free pages until those threads allocate again (idle, they may never). Measured on
/// CPython's stdlib with `examples/graph_memory.rs`. A no-op for memory not
/// allocated by mimalloc (without the `python` feature Rust's allocator is the
/// system's; tree-sitter's always is mimalloc).
pub(crate) fn release_free_memory() {
    // SAFETY: mi_collect has no preconditions; it only returns free pages.
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

#[cfg(feature = "python")]
mod py;

#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "python")]
#[pyo3::pymodule]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::py::context::{
        PyContextItem, PyContextItemType, PyContextPolicy, PyContextWindow, PyPruneResult,
    };
    #[pymodule_export]
    use crate::py::graph::{
        read_project_file, relative_path, PyCodeHit, PyKnowledgeGraph, PyReference, PySearchParams,
        PySymbol,
    };
    #[pymodule_export]
    use crate::py::retrieve::{fuse, tokenize, PyLexicalIndex, PyVectorIndex};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
