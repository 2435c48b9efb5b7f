//! The one error type of the engine. The binding layer maps each variant to a
//! Python exception class (see `py/errors.rs`); nothing here knows about Python.

use std::path::{Path, PathBuf};

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("an item with id {0:?} is already in the context window")]
    DuplicateId(String),
    #[error("no item with id {0:?} in the context window")]
    UnknownId(String),
    #[error("item {item:?} depends on {dependency:?}, which is not in the context window")]
    UnknownDependency { item: String, dependency: String },
    #[error("invalid {field}: {reason}")]
    InvalidValue { field: &'static str, reason: String },
    #[error("invalid policy value {field}: {reason}")]
    Policy { field: String, reason: String },
    #[error("no file {0:?} in the knowledge graph")]
    UnknownFile(String),
    /// A file that could not be read or written, with the OS error.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done: "read", "write", ...
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file that is not there (an I/O error of kind `NotFound`).
    #[error("cannot {action} {}: no such file or directory", path.display())]
    Missing { action: &'static str, path: PathBuf },
    /// A project file that is not read: not a regular file, or too large.
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    /// A graph that cannot be encoded (postcard).
    #[error("cannot encode the graph: {0}")]
    Encode(#[source] postcard::Error),
    #[error("{0}")]
    Corrupt(String),
    /// A store file of a format version this build does not read: the caller
    /// rebuilds it.
    #[error("{path} has {what} format version {found}; this aircher-mem reads version {expected}: rebuild the {what}")]
    FormatVersion {
        /// The kind of file: "graph", "lexical index", ...
        what: &'static str,
        path: String,
        found: u32,
        expected: u32,
    },
}

impl Error {
    /// The error for `action` ("read", "write", ...) on `path` failing with `source`:
    /// `Missing` if the file is not there, else `Io` (which keeps the OS error).
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        let path = path.to_path_buf();
        if source.kind() == std::io::ErrorKind::NotFound {
            Error::Missing { action, path }
        } else {
            Error::Io {
                action,
                path,
                source,
            }
        }
    }
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidValue {
        field,
        reason: reason.into(),
    }
}

/// A count that arrives as a signed integer (from Python or a config file) and must
/// not be negative.
pub fn count(field: &'static str, value: i64) -> Result<usize> {
    usize::try_from(value).map_err(|_| invalid(field, format!("must be >= 0, got {value}")))
}

/// A real number that must be finite and not negative.
pub fn non_negative(field: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(invalid(
            field,
            format!("must be a finite number >= 0, got {value}"),
        ))
    }
}
