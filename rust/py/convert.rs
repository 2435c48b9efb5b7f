//! Argument conversion at the boundary: every value Python passes in is converted
//! here, and a value that does not fit (an int out of range, a float that is not a
//! number, a str with a lone surrogate, a path that is not one) raises
//! InvalidInputError, never pyo3's OverflowError, TypeError or UnicodeEncodeError.
//! One newtype per kind of value; the bindings take these instead of Rust types.

use std::convert::Infallible;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt, PyString, PyTuple};

use super::errors::{AircherError, InvalidInputError};

fn refused(what: &str, obj: &Borrowed<'_, '_, PyAny>, why: &str) -> PyErr {
    let kind = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    InvalidInputError::new_err(format!("{what} {why} (got a value of type {kind})"))
}

/// A Python str as Rust text: InvalidInputError for a str holding a lone surrogate
/// (it is not valid UTF-8 text) or for anything that is not a str.
pub fn text(obj: &Borrowed<'_, '_, PyAny>) -> PyResult<String> {
    let Ok(s) = obj.cast::<PyString>() else {
        return Err(refused("a text argument", obj, "must be a str"));
    };
    match s.to_str() {
        Ok(s) => Ok(s.to_string()),
        Err(_) => Err(InvalidInputError::new_err(
            "a str argument is not valid UTF-8 text (lone surrogate)",
        )),
    }
}

/// A str argument (see `text`); as a value it converts back to a Python str.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Text(pub String);

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        text(&obj).map(Text)
    }
}

impl<'py> IntoPyObject<'py> for Text {
    type Target = PyString;
    type Output = Bound<'py, PyString>;
    type Error = Infallible;
    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Infallible> {
        Ok(PyString::new(py, &self.0))
    }
}

impl<'py> IntoPyObject<'py> for &Text {
    type Target = PyString;
    type Output = Bound<'py, PyString>;
    type Error = Infallible;
    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Infallible> {
        Ok(PyString::new(py, &self.0))
    }
}

/// A path (str or os.PathLike): InvalidInputError for anything else, and for a str
/// the file system encoding cannot take (a lone surrogate that is not an escaped
/// byte).
#[derive(Clone, Debug)]
pub struct FsPath(pub PathBuf);

impl<'a, 'py> FromPyObject<'a, 'py> for FsPath {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        match obj.extract::<PathBuf>() {
            Ok(path) => Ok(FsPath(path)),
            Err(err) if err.is_instance_of::<pyo3::exceptions::PyUnicodeError>(py) => {
                Err(InvalidInputError::new_err(
                    "a path is not valid text for the file system (lone surrogate)",
                ))
            }
            Err(_) => Err(refused("a path", &obj, "must be a str or os.PathLike")),
        }
    }
}

/// A Python int that must fit `T` (a count, a size, a line): InvalidInputError
/// for an int out of range (negative, too large), a bool or a non-int.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Int<T>(pub T);

fn int<T: TryFrom<i128>>(obj: &Borrowed<'_, '_, PyAny>) -> PyResult<T> {
    let range = || {
        refused(
            "an integer argument",
            obj,
            &format!(
                "is out of range ({})",
                std::any::type_name::<T>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("?")
            ),
        )
    };
    if !obj.is_instance_of::<PyInt>() {
        return Err(refused("an integer argument", obj, "must be an int"));
    }
    let wide: i128 = obj.extract().map_err(|_| range())?;
    T::try_from(wide).map_err(|_| range())
}

impl<'a, 'py, T: TryFrom<i128>> FromPyObject<'a, 'py> for Int<T> {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        int(&obj).map(Int)
    }
}

/// A Python float (or int) as f64: InvalidInputError for an int too large for a
/// float and for a non-number. NaN and infinities pass: the engine refuses them
/// where they matter, with the field's name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real(pub f64);

impl<'a, 'py> FromPyObject<'a, 'py> for Real {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if !(obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>()) {
            return Err(refused("a number argument", &obj, "must be a float"));
        }
        obj.extract::<f64>()
            .map(Real)
            .map_err(|_| refused("a number argument", &obj, "is too large for a float"))
    }
}

/// A code snippet's (first, last) line: a pair of ints in 0..2**64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRange(pub u64, pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for LineRange {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let pair = obj
            .cast::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 2)
            .ok_or_else(|| refused("line_range", &obj, "must be a (first, last) tuple of ints"))?;
        let first = pair.get_borrowed_item(0)?;
        let last = pair.get_borrowed_item(1)?;
        Ok(LineRange(int(&first)?, int(&last)?))
    }
}

impl<'py> IntoPyObject<'py> for &LineRange {
    type Target = PyTuple;
    type Output = Bound<'py, PyTuple>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        (self.0, self.1).into_pyobject(py)
    }
}

impl<'py> IntoPyObject<'py> for LineRange {
    type Target = PyTuple;
    type Output = Bound<'py, PyTuple>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        (self.0, self.1).into_pyobject(py)
    }
}

/// Any other argument (a class instance, a bool, a list, an optional of those):
/// extracted as `T` is, but an argument of the wrong type raises InvalidInputError
/// (with pyo3's message, which names the type expected and the type given) instead
/// of pyo3's TypeError. An AircherError raised while extracting (an element of a
/// list that is not valid text) passes unchanged; so does a BaseException that is
/// not an Exception (KeyboardInterrupt). The original error is the `__cause__`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Checked<T>(pub T);

impl<'a, 'py, T> FromPyObject<'a, 'py> for Checked<T>
where
    T: FromPyObject<'a, 'py>,
    T::Error: Into<PyErr>,
{
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        T::extract(obj).map(Checked).map_err(|err| {
            let err: PyErr = err.into();
            if err.is_instance_of::<AircherError>(py)
                || !err.is_instance_of::<pyo3::exceptions::PyException>(py)
            {
                return err;
            }
            let kind = obj
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            let refused = InvalidInputError::new_err(format!(
                "an argument has the wrong type (got a value of type {kind}): {}",
                err.value(py)
            ));
            refused.set_cause(py, Some(err));
            refused
        })
    }
}

impl<'py, T: IntoPyObject<'py>> IntoPyObject<'py> for Checked<T> {
    type Target = T::Target;
    type Output = T::Output;
    type Error = T::Error;
    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        self.0.into_pyobject(py)
    }
}

impl<'a, 'py, T> IntoPyObject<'py> for &'a Checked<T>
where
    &'a T: IntoPyObject<'py>,
{
    type Target = <&'a T as IntoPyObject<'py>>::Target;
    type Output = <&'a T as IntoPyObject<'py>>::Output;
    type Error = <&'a T as IntoPyObject<'py>>::Error;
    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        (&self.0).into_pyobject(py)
    }
}
