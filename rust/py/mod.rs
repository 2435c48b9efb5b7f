//! Thin PyO3 wrappers over the pure-Rust engine: convert, call, convert back.

pub mod context;
mod convert;
mod errors;
pub mod graph;
pub mod prose;
pub mod retrieve;
pub mod tokens;

use pyo3::prelude::*;

/// The one place the GIL is released: every call that can take long (scoring and
/// pruning large windows, batch inserts) goes through here. Inputs are converted to
/// Rust data before, Python objects are built after.
pub(crate) fn detached<T, F>(py: Python<'_>, work: F) -> T
where
    F: FnOnce() -> T + Send,
    T: Send,
{
    py.detach(work)
}
