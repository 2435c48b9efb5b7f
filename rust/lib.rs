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
