//! `verdict._verdict`: the native module of the Python package (`docs/python.md`). It has no
//! behaviour of its own: a [`Workspace`] is the library's [`Checker`] (the workspace opened
//! as `verdict check` opens it), a record's verdict is [`Checker::check`], and its JSON
//! text is [`verdict_text`], the text `check --format json` prints, so Python and the CLI
//! can never disagree. A record handed over as a `dict` is written as JSON text here
//! ([`record`]: compact, as `serde_json` writes it); `Workspace.check_many` gives each
//! verdict as a [`lazy::Verdict`], whose dict is built from the verdict itself when first
//! needed ([`topy`]: its serde serialization, the one [`verdict_text`] writes), with no text
//! in between.

mod lazy;
mod record;
mod topy;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use rayon::prelude::*;
use std::path::PathBuf;
use verdict::core::capture::record_of_bytes;
use verdict::core::record_ref::RecordRef;
use verdict::engine::batch::Checker;
use verdict::report::json::verdict_text;

/// The CLI's allocator (`src/main.rs`): mimalloc for the library's many small JSON and CEL
/// allocations (BENCHMARKS.md, "The Python package"). Python's own objects keep CPython's
/// allocator; only the native module's Rust allocations go through it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _verdict,
    WorkspaceError,
    PyException,
    "The workspace cannot be opened: the message `verdict check PATH` exits 2 with."
);

/// The source a record handed over without one gets: its verdict's `source`, and its `id`
/// when the record names none (`docs/python.md#sources`).
const DEFAULT_SOURCE: &str = "<python>";

/// A workspace opened as `verdict check PATH` opens it (`docs/python.md`).
#[pyclass(frozen, module = "verdict._verdict")]
struct Workspace {
    checker: Checker,
}

/// A record given from Python as its bytes: a `str` (its UTF-8), `bytes` (as they are) or a
/// `dict` (its compact JSON text: [`record`]).
fn record_bytes(record: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(d) = record.cast::<PyDict>() {
        return record::dict_json(d);
    }
    if let Ok(s) = record.cast::<PyString>() {
        // (`to_str` is not in the limited API before 3.10)
        return Ok(s.to_cow()?.into_owned().into_bytes());
    }
    if let Ok(b) = record.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "a record is a dict, a JSON str or bytes, not {}",
        record.get_type().name()?
    )))
}

/// The record bytes and sources of a `check_many*` call: one source (or `None`) per record
/// when `sources` is given (else `ValueError`), else `None` for each.
#[allow(clippy::type_complexity)]
fn many_inputs(
    records: &[Bound<'_, PyAny>],
    sources: Option<Vec<Option<String>>>,
) -> PyResult<(Vec<Vec<u8>>, Vec<Option<String>>)> {
    if let Some(s) = &sources
        && s.len() != records.len()
    {
        return Err(PyValueError::new_err(format!(
            "{} records but {} sources",
            records.len(),
            s.len()
        )));
    }
    let bytes = records
        .iter()
        .map(record_bytes)
        .collect::<PyResult<Vec<_>>>()?;
    let sources = sources.unwrap_or_else(|| vec![None; bytes.len()]);
    Ok((bytes, sources))
}

impl Workspace {
    /// The raw record of `bytes` at `source` (`None`: [`DEFAULT_SOURCE`]), read as a capture
    /// file's record is.
    fn raw(&self, bytes: Vec<u8>, source: Option<&str>) -> verdict::core::capture::RawRecord {
        let source = RecordRef::parse(source.unwrap_or(DEFAULT_SOURCE));
        record_of_bytes(source, bytes, self.checker.ws.config.max_capture_bytes)
    }

    /// The verdict text of one record (`None`: not a capture).
    fn text_of(&self, bytes: Vec<u8>, source: Option<&str>) -> Option<String> {
        self.checker
            .check(&self.raw(bytes, source))
            .map(|v| verdict_text(&v))
    }
}

#[pymethods]
impl Workspace {
    /// Opens the workspace `path` belongs to, as `verdict check PATH` does.
    ///
    /// Raises `WorkspaceError` with the message `check` exits 2 with (the path does not
    /// exist, `verdict.toml` is broken, a folder cannot be read).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Workspace> {
        py.detach(|| Checker::open(&path))
            .map(|checker| Workspace { checker })
            .map_err(|e| WorkspaceError::new_err(e.to_string()))
    }

    /// The workspace folder.
    #[getter]
    fn root(&self) -> PathBuf {
        self.checker.ws.root.clone()
    }

    /// `max_capture_bytes`: a larger record is `INVALID_CAPTURE`, never parsed.
    #[getter]
    fn max_capture_bytes(&self) -> u64 {
        self.checker.ws.config.max_capture_bytes
    }

    /// One record's verdict as the JSON text `check --format json` prints for it, or `None`
    /// when the record is no capture (an MCP message other than a tools/call, a batch
    /// input request). A record of several captures gives the part its source names
    /// (`SOURCE#N`), else its first (`check_all_json` gives them all). `record` is a `str` or `bytes`; `source` is where it would lie in
    /// the workspace (`captures/a.json`, `logs/x.jsonl:3`; default `<python>`).
    #[pyo3(signature = (record, source=None))]
    fn check_json(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        source: Option<String>,
    ) -> PyResult<Option<String>> {
        let bytes = record_bytes(record)?;
        Ok(py.detach(|| self.text_of(bytes, source.as_deref())))
    }

    /// One record's verdict as a [`lazy::Verdict`] (`None`: not a capture), checked on the
    /// caller's thread with the GIL released; the part its source names, as `check_json`.
    #[pyo3(signature = (record, source=None))]
    fn check(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        source: Option<String>,
    ) -> PyResult<Option<Py<lazy::Verdict>>> {
        let bytes = record_bytes(record)?;
        py.detach(|| self.checker.check(&self.raw(bytes, source.as_deref())))
            .map(|v| Py::new(py, lazy::Verdict::new(v)))
            .transpose()
    }

    /// Every verdict text of one record, one per capture it holds, in the record's order:
    /// none for a record that is no capture, one for most records, one per part for a
    /// record of several captures (an OTLP line of several LLM spans, a promptfoo results
    /// file), each part's source `SOURCE#N` (`docs/record-shapes.md`).
    #[pyo3(signature = (record, source=None))]
    fn check_all_json(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        source: Option<String>,
    ) -> PyResult<Vec<String>> {
        let bytes = record_bytes(record)?;
        Ok(py.detach(|| {
            self.checker
                .check_all(&self.raw(bytes, source.as_deref()))
                .iter()
                .map(verdict_text)
                .collect()
        }))
    }

    /// The verdict texts of many records, checked in parallel on the library's thread pool
    /// with the GIL released, in order. `sources`, when given, has one source (or `None`)
    /// per record.
    #[pyo3(signature = (records, sources=None))]
    fn check_many_json(
        &self,
        py: Python<'_>,
        records: Vec<Bound<'_, PyAny>>,
        sources: Option<Vec<Option<String>>>,
    ) -> PyResult<Vec<Option<String>>> {
        let (bytes, sources) = many_inputs(&records, sources)?;
        Ok(py.detach(|| {
            bytes
                .into_par_iter()
                .zip(sources.into_par_iter())
                .map(|(b, s)| self.text_of(b, s.as_deref()))
                .collect()
        }))
    }

    /// The verdicts of many records, in order (`None` for a record that is no capture), as
    /// [`lazy::Verdict`] objects: each a read-only mapping equal to `json.loads` of its
    /// `check_many_json` text, its dict built only when first needed. Validated in parallel
    /// with the GIL released.
    #[pyo3(signature = (records, sources=None))]
    fn check_many(
        &self,
        py: Python<'_>,
        records: Vec<Bound<'_, PyAny>>,
        sources: Option<Vec<Option<String>>>,
    ) -> PyResult<Vec<Option<Py<lazy::Verdict>>>> {
        let (bytes, sources) = many_inputs(&records, sources)?;
        drop(records);
        let verdicts: Vec<Option<verdict::core::verdict::Verdict>> = py.detach(|| {
            bytes
                .into_par_iter()
                .zip(sources.into_par_iter())
                .map(|(b, s)| self.checker.check(&self.raw(b, s.as_deref())))
                .collect()
        });
        verdicts
            .into_iter()
            .map(|v| v.map(|v| Py::new(py, lazy::Verdict::new(v))).transpose())
            .collect()
    }

    /// The self-correction message of `verdict feedback` for one record (what to re-inject
    /// on `regenerate`; for other decisions, why regenerating would not help).
    ///
    /// Raises `ValueError` when the record is no capture.
    #[pyo3(signature = (record, source=None))]
    fn feedback_text(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        source: Option<String>,
    ) -> PyResult<String> {
        let bytes = record_bytes(record)?;
        let ws = &self.checker.ws;
        py.detach(|| {
            let ev = ws.evaluate(&self.raw(bytes, source.as_deref()))?;
            Some(verdict::core::feedback::feedback(ws, &ev).message)
        })
        .ok_or_else(|| PyValueError::new_err("the record is no capture: it has no verdict"))
    }
}

/// A record as the text `check` reads from Python: a `dict` as its compact JSON (the text
/// `max_capture_bytes` counts: [`record`], with `json.dumps`' errors), a `str` or `bytes`
/// as it is. Anything else is a `TypeError`.
#[pyfunction]
fn record_json<'py>(record: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if record.cast::<PyString>().is_ok() || record.cast::<PyBytes>().is_ok() {
        return Ok(record.clone());
    }
    let bytes = record_bytes(record)?;
    // a dict's text is UTF-8: every str in it was encoded as such
    let text = String::from_utf8(bytes).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyString::new(record.py(), &text).into_any())
}

/// The native module: `Workspace`, `Verdict`, `WorkspaceError`, `DEFAULT_SOURCE`, `record_json`.
#[pymodule]
fn _verdict(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Workspace>()?;
    m.add_class::<lazy::Verdict>()?;
    m.add("WorkspaceError", m.py().get_type::<WorkspaceError>())?;
    m.add("DEFAULT_SOURCE", DEFAULT_SOURCE)?;
    m.add_function(wrap_pyfunction!(record_json, m)?)?;
    Ok(())
}
