//! `verdict.Verdict`: what `Workspace.check_many` gives per capture (`docs/python.md#verdict`).
//! One small object holding the library's verdict itself; its dict (the one `json.loads` of
//! the verdict's `check --format json` text gives, built by [`crate::topy`]) is made the
//! first time a key, a comparison or an iteration needs it, and kept. The flat fields read
//! as attributes (`v.decision`) are made from the verdict without the dict, through the same
//! serialization, so they equal the dict's values.
//!
//! Why: building ~11 Python objects per verdict during the call, and freeing them, cost
//! more than the check itself (BENCHMARKS.md, "Session 14: `check_many` on this machine").

use crate::topy;
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use serde::Serialize;
use verdict::core::verdict::Verdict as CoreVerdict;
use verdict::report::json::verdict_text;

/// One capture's verdict, as `check --format json` gives it: a read-only mapping (registered
/// as a `collections.abc.Mapping`) equal to the dict `Workspace.check` returns for the same
/// record.
#[pyclass(frozen, mapping, name = "Verdict", module = "verdict._verdict")]
pub struct Verdict {
    verdict: CoreVerdict,
    /// The dict, once something needed it.
    dict: PyOnceLock<Py<PyDict>>,
}

impl Verdict {
    /// A verdict whose dict is not built yet.
    pub fn new(verdict: CoreVerdict) -> Verdict {
        Verdict {
            verdict,
            dict: PyOnceLock::new(),
        }
    }

    /// The kept dict (built on first need).
    fn dict<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyDict>> {
        let d = self.dict.get_or_try_init(py, || {
            Ok::<_, PyErr>(fresh_dict(py, &self.verdict)?.unbind())
        })?;
        Ok(d.bind(py))
    }

    /// One field of the verdict as the Python value its dict holds for it.
    fn field<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
        topy::Builder::new(py).build(v)
    }
}

/// A new dict of `verdict`, equal to `json.loads` of its `check --format json` text.
fn fresh_dict<'py>(py: Python<'py>, verdict: &CoreVerdict) -> PyResult<Bound<'py, PyDict>> {
    Ok(topy::Builder::new(py)
        .build(verdict)?
        .cast_into::<PyDict>()?)
}

#[pymethods]
impl Verdict {
    /// The capture's id.
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        PyString::new(py, &self.verdict.id)
    }

    /// Where the capture came from (`captures/a.json`, `logs/x.jsonl:3`, `<python>`).
    #[getter]
    fn source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.source)
    }

    /// The contract it was checked against (`None`: no contract was found).
    #[getter]
    fn contract<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.contract)
    }

    /// The record shape it was read as (`capture`, `openai-batch`, ...; `None`: none).
    #[getter]
    fn format<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.format)
    }

    /// The first failing stage, or `ready`.
    #[getter]
    fn stage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.stage)
    }

    /// What to do next: `accept`, `regenerate`, `retry`, `reject`, `recheck`.
    #[getter]
    fn decision<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.decision)
    }

    /// The first failure's reason code (`None` when ready).
    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::field(py, &self.verdict.reason)
    }

    /// A new plain dict of the verdict, equal to `Workspace.check`'s for the same record
    /// (the caller's to change: the kept one is not shared).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        fresh_dict(py, &self.verdict)
    }

    /// The exact JSON text `check --format json` prints for this verdict.
    fn json(&self) -> String {
        verdict_text(&self.verdict)
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py)?
            .get_item(key)?
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.dict(py)?.len())
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.dict(py)?.contains(key)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.dict(py)?.try_iter()?.into_any())
    }

    /// The keys, as `dict.keys()` gives them.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py)?.call_method0("keys")
    }

    /// The values, as `dict.values()` gives them.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py)?.call_method0("values")
    }

    /// The items, as `dict.items()` gives them.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.dict(py)?.call_method0("items")
    }

    /// `self[key]`, or `default` when there is no such key.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.dict(py)?.get_item(key)? {
            Some(v) => v,
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    /// Equal to a `Verdict` or a mapping exactly when the dicts are equal (as a dict
    /// compares); other types are not comparable (`NotImplemented`).
    fn __richcmp__<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let other = match other.cast::<Verdict>() {
            Ok(v) => v.get().dict(py)?.clone().into_any(),
            Err(_) if other.cast::<PyDict>().is_ok() => other.clone(),
            Err(_) => return Ok(py.NotImplemented()),
        };
        match op {
            CompareOp::Eq => Ok(self
                .dict(py)?
                .eq(other)?
                .into_pyobject(py)?
                .to_owned()
                .into_any()
                .unbind()),
            CompareOp::Ne => Ok(self
                .dict(py)?
                .ne(other)?
                .into_pyobject(py)?
                .to_owned()
                .into_any()
                .unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    /// Unhashable, as a dict is.
    fn __hash__(&self) -> PyResult<isize> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "unhashable type: 'Verdict'",
        ))
    }

    /// Pickled (and copied) as its plain dict.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let dict_type = py.get_type::<PyDict>();
        PyTuple::new(
            py,
            [
                dict_type.into_any(),
                PyTuple::new(py, [self.to_dict(py)?])?.into_any(),
            ],
        )
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("verdict.Verdict({})", self.dict(py)?.repr()?))
    }
}
