//! Python class for dense vectors. No logic here: see `crate::retrieve::vectors`.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use super::convert::{Checked, FsPath, Int, Text};
use super::detached;
use super::errors::InvalidInputError;
use crate::retrieve::VectorIndex;

/// Dense vectors by key, one contiguous float32 matrix searched by brute force
/// (cosine: rows are L2-normalised on insert). Saved to and loaded from one file.
#[pyclass(module = "aircher_mem._core", name = "VectorIndex")]
pub struct PyVectorIndex {
    index: VectorIndex,
}

#[pymethods]
impl PyVectorIndex {
    #[new]
    fn new(dim: Int<usize>) -> PyResult<Self> {
        Ok(Self {
            index: VectorIndex::new(dim.0)?,
        })
    }

    #[getter]
    fn dim(&self) -> usize {
        self.index.dim()
    }

    fn __len__(&self) -> usize {
        self.index.len()
    }

    /// The keys, in row order.
    fn keys(&self) -> Vec<String> {
        self.index.keys().to_vec()
    }

    /// Sets the vector of each key (row `i` of `vectors` for `keys[i]`). A wrong
    /// shape, a non-finite or all-zero row raises InvalidInputError; rows before
    /// the bad one are kept.
    fn upsert(
        &mut self,
        py: Python<'_>,
        keys: Checked<Vec<Text>>,
        vectors: PyReadonlyArray2<'_, f32>,
    ) -> PyResult<()> {
        let keys = keys.0;
        let view = vectors.as_array();
        if view.nrows() != keys.len() || view.ncols() != self.index.dim() {
            return Err(InvalidInputError::new_err(format!(
                "vectors must have shape ({}, {}), got {:?}",
                keys.len(),
                self.index.dim(),
                view.shape()
            )));
        }
        let rows: Vec<Vec<f32>> = view.rows().into_iter().map(|r| r.to_vec()).collect();
        let index = &mut self.index;
        detached(py, || -> crate::Result<()> {
            for (key, row) in keys.iter().zip(&rows) {
                index.upsert(&key.0, row)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Removes the keys; returns how many there were.
    fn remove(&mut self, keys: Checked<Vec<Text>>) -> usize {
        let keys: Vec<&str> = keys.0.iter().map(|k| k.0.as_str()).collect();
        self.index.remove_keys(&keys)
    }

    /// The `limit` keys most similar to `query` (cosine), best first.
    fn search(
        &self,
        py: Python<'_>,
        query: PyReadonlyArray1<'_, f32>,
        limit: Int<usize>,
    ) -> PyResult<Vec<(String, f32)>> {
        let query = query.as_array().to_vec();
        Ok(detached(py, || self.index.search(&query, limit.0, None))?)
    }

    /// Writes the index to `path` (temporary file, then rename; mode 0600).
    fn save(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        Ok(detached(py, || self.index.save(&path.0, 0))?)
    }

    /// Reads an index written by `save`; StoreCorruptError for a damaged file.
    #[staticmethod]
    fn load(py: Python<'_>, path: FsPath) -> PyResult<Self> {
        let (index, _) = detached(py, || VectorIndex::load(&path.0))?;
        Ok(Self { index })
    }
}
