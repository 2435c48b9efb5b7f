//! The token counter of a byte-pair encoding (`crate::tokens`). No logic here.

use pyo3::prelude::*;
use rayon::prelude::*;

use super::convert::Text;
use super::detached;
use crate::tokens::{self, Bpe};

/// A byte-pair encoding made from a tiktoken ranks file's bytes and its
/// pre-tokenizer pattern, counting tokens as ``tiktoken``'s ``encode_ordinary``
/// makes them. A text with a lone surrogate raises ``UnicodeEncodeError``.
#[pyclass(module = "aircher_mem._core", name = "TokenEncoding", frozen)]
pub struct PyTokenEncoding {
    bpe: Bpe,
}

#[pymethods]
impl PyTokenEncoding {
    #[new]
    fn new(py: Python<'_>, ranks: &[u8], pattern: Text) -> PyResult<Self> {
        let bpe = detached(py, || Bpe::new(ranks, &pattern.0))?;
        Ok(PyTokenEncoding { bpe })
    }

    /// The number of tokens of ``text``.
    fn count(&self, py: Python<'_>, text: &str) -> usize {
        detached(py, || self.bpe.count(text))
    }

    /// The number of tokens of each text, counted in parallel.
    fn count_many(&self, py: Python<'_>, texts: Vec<String>) -> Vec<usize> {
        detached(py, || texts.par_iter().map(|t| self.bpe.count(t)).collect())
    }
}

/// The SHA-256 of ``data`` in lowercase hex, computed without the GIL (the ranks
/// file's check before it loads, beside other work).
#[pyfunction]
#[pyo3(text_signature = "(data)")]
pub fn sha256_hex(py: Python<'_>, data: &[u8]) -> String {
    detached(py, || tokens::sha256_hex(data))
}
