//! Engine errors -> the Python hierarchy in `aircher_mem.errors` (rooted at
//! `AircherError`, with stdlib bases such as ValueError and KeyError where users
//! expect them). The classes are defined in Python so they can inherit from both.

use pyo3::{PyErr, Python};

use crate::Error;

pyo3::import_exception!(aircher_mem.errors, AircherError);
pyo3::import_exception!(aircher_mem.errors, DuplicateItemError);
pyo3::import_exception!(aircher_mem.errors, UnknownItemError);
pyo3::import_exception!(aircher_mem.errors, UnknownDependencyError);
pyo3::import_exception!(aircher_mem.errors, InvalidInputError);
pyo3::import_exception!(aircher_mem.errors, PolicyError);
pyo3::import_exception!(aircher_mem.errors, StoreError);
pyo3::import_exception!(aircher_mem.errors, FileMissingError);
pyo3::import_exception!(aircher_mem.errors, StoreCorruptError);
pyo3::import_exception!(aircher_mem.errors, SchemaVersionError);

impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        let msg = err.to_string();
        match err {
            Error::DuplicateId(_) => DuplicateItemError::new_err(msg),
            Error::UnknownId(_) | Error::UnknownFile(_) => UnknownItemError::new_err(msg),
            Error::UnknownDependency { .. } => UnknownDependencyError::new_err(msg),
            Error::InvalidValue { .. } => InvalidInputError::new_err(msg),
            Error::Policy { .. } => PolicyError::new_err(msg),
            Error::Io { source, .. } => {
                // The OSError (errno, strerror) becomes the exception's __cause__.
                let err = StoreError::new_err(msg);
                Python::attach(|py| err.set_cause(py, Some(PyErr::from(source))));
                err
            }
            Error::Encode(_) | Error::Unreadable { .. } => StoreError::new_err(msg),
            Error::Missing { .. } => FileMissingError::new_err(msg),
            Error::Corrupt(_) => StoreCorruptError::new_err(msg),
            Error::FormatVersion { .. } => SchemaVersionError::new_err(msg),
        }
    }
}
