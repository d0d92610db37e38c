//! A record handed over as a Python `dict`, written as JSON text in the native module (no
//! `json.dumps`): the compact RFC 8259 text `serde_json` writes (no spaces, non-ASCII kept,
//! `"`, `\` and control characters escaped), the text `max_capture_bytes` counts and the
//! library reads (`docs/python.md#dict-records`).
//!
//! It takes what `json.dumps` takes, with its errors: `None`, `True`/`False`, `str`, `int`,
//! `float`, `list`, `tuple` and `dict` (and their subclasses: an `int` subclass as its
//! integer, a `dict` subclass through its `items()`); a key that is an `int`, `float`, `bool`
//! or `None` as its JSON text (`1` -> `"1"`, `True` -> `"true"`). As `json.dumps`, a
//! non-finite float is written `NaN`, `Infinity`, `-Infinity`, which is no JSON: the record
//! gets the library's `INVALID_CAPTURE` verdict. Errors, as `json.dumps` raises them:
//! `TypeError` "Object of type set is not JSON serializable" (any other type: `set`,
//! `bytes`, ...), `TypeError` "keys must be str, int, float, bool or None, not tuple",
//! `ValueError` "Circular reference detected", `RecursionError` (nesting past the
//! interpreter's recursion limit, or past [`MAX_DEPTH`]), and `UnicodeEncodeError` for a
//! `str` with a lone surrogate (as for a record handed over as such a `str`).

use pyo3::exceptions::{PyRecursionError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The deepest nesting of lists and dicts written, whatever the interpreter's recursion
/// limit (each level is a native stack frame): deeper is a `RecursionError`. The library
/// reads no record nested deeper than 128 levels anyway (`INVALID_CAPTURE`, "nesting is too
/// deep").
pub const MAX_DEPTH: usize = 10_000;

/// `dict`'s JSON text (see the module's doc).
pub fn dict_json(dict: &Bound<'_, PyDict>) -> PyResult<Vec<u8>> {
    let mut w = Writer {
        out: Vec::with_capacity(512),
        open: Vec::new(),
    };
    w.dict(dict)?;
    Ok(w.out)
}

struct Writer {
    out: Vec<u8>,
    /// The lists and dicts being written, outermost first (a cycle comes back to one).
    open: Vec<*mut ffi::PyObject>,
}

/// Leaves the interpreter's recursion count when dropped (`Py_EnterRecursiveCall`'s pair).
struct Recursion;

impl Drop for Recursion {
    fn drop(&mut self) {
        // SAFETY: paired with a successful Py_EnterRecursiveCall, the GIL held
        unsafe { ffi::Py_LeaveRecursiveCall() }
    }
}

impl Writer {
    /// Enters one level of nesting of `container` (json's own check and message).
    fn enter(&mut self, container: &Bound<'_, PyAny>) -> PyResult<Recursion> {
        let ptr = container.as_ptr();
        if self.open.contains(&ptr) {
            return Err(PyValueError::new_err("Circular reference detected"));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(PyRecursionError::new_err(
                "maximum recursion depth exceeded while encoding a JSON object",
            ));
        }
        // SAFETY: the GIL is held; the message is NUL-terminated
        if unsafe { ffi::Py_EnterRecursiveCall(c" while encoding a JSON object".as_ptr()) } != 0 {
            return Err(PyErr::fetch(container.py()));
        }
        self.open.push(ptr);
        Ok(Recursion)
    }

    fn leave(&mut self, _level: Recursion) {
        self.open.pop();
    }

    fn value(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if v.is_none() {
            self.out.extend_from_slice(b"null");
        } else if let Ok(s) = v.cast::<PyString>() {
            self.string(&s.to_cow()?);
        } else if let Ok(b) = v.cast::<PyBool>() {
            self.out
                .extend_from_slice(if b.is_true() { b"true" } else { b"false" });
        } else if let Ok(i) = v.cast::<PyInt>() {
            self.int(i)?;
        } else if let Ok(f) = v.cast::<PyFloat>() {
            self.float(f.value());
        } else if let Ok(l) = v.cast::<PyList>() {
            let level = self.enter(v)?;
            self.out.push(b'[');
            // by index, as the list is now (json's PySequence_Fast)
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(&item)?;
            }
            self.out.push(b']');
            self.leave(level);
        } else if let Ok(t) = v.cast::<PyTuple>() {
            let level = self.enter(v)?;
            self.out.push(b'[');
            for (i, item) in t.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(&item)?;
            }
            self.out.push(b']');
            self.leave(level);
        } else if let Ok(d) = v.cast::<PyDict>() {
            self.dict(d)?;
        } else {
            return Err(PyTypeError::new_err(format!(
                "Object of type {} is not JSON serializable",
                v.get_type().name()?
            )));
        }
        Ok(())
    }

    fn dict(&mut self, d: &Bound<'_, PyDict>) -> PyResult<()> {
        let level = self.enter(d.as_any())?;
        self.out.push(b'{');
        if d.is_exact_instance_of::<PyDict>() {
            for (i, (k, v)) in d.iter().enumerate() {
                self.item(i, &k, &v)?;
            }
        } else {
            // a subclass (an OrderedDict): its own order, through items() as json does
            for (i, kv) in d.call_method0("items")?.try_iter()?.enumerate() {
                let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = kv?.extract()?;
                self.item(i, &k, &v)?;
            }
        }
        self.out.push(b'}');
        self.leave(level);
        Ok(())
    }

    fn item(&mut self, i: usize, k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if i > 0 {
            self.out.push(b',');
        }
        self.key(k)?;
        self.out.push(b':');
        self.value(v)
    }

    /// A key as json.dumps writes it: a str as it is; a float, bool, None or int as text.
    fn key(&mut self, k: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(s) = k.cast::<PyString>() {
            self.string(&s.to_cow()?);
            return Ok(());
        }
        let start = self.out.len();
        if let Ok(f) = k.cast::<PyFloat>() {
            self.float(f.value());
        } else if let Ok(b) = k.cast::<PyBool>() {
            self.out
                .extend_from_slice(if b.is_true() { b"true" } else { b"false" });
        } else if k.is_none() {
            self.out.extend_from_slice(b"null");
        } else if let Ok(i) = k.cast::<PyInt>() {
            self.int(i)?;
        } else {
            return Err(PyTypeError::new_err(format!(
                "keys must be str, int, float, bool or None, not {}",
                k.get_type().name()?
            )));
        }
        // the text between quotes (digits, letters, `.`, `+`, `-`: nothing to escape)
        self.out.insert(start, b'"');
        self.out.push(b'"');
        Ok(())
    }

    fn string(&mut self, s: &str) {
        serde_json::to_writer(&mut self.out, s).expect("writing to memory cannot fail");
    }

    /// An int as its decimal digits (an int subclass as its integer value, as json does).
    fn int(&mut self, i: &Bound<'_, PyInt>) -> PyResult<()> {
        if let Ok(n) = i.extract::<i64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        } else if let Ok(n) = i.extract::<u64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        } else {
            // larger: the exact int's str() (its digit limit is the interpreter's)
            let exact = i.py().get_type::<PyInt>().call1((i,))?;
            self.out
                .extend_from_slice(exact.str()?.to_cow()?.as_bytes());
        }
        Ok(())
    }

    /// A float as `serde_json` writes it (the shortest text that reads back as the same
    /// double); a non-finite one as json.dumps writes it (not JSON).
    fn float(&mut self, f: f64) {
        if f.is_nan() {
            self.out.extend_from_slice(b"NaN");
        } else if f.is_infinite() {
            self.out
                .extend_from_slice(if f > 0.0 { b"Infinity" } else { b"-Infinity" });
        } else {
            serde_json::to_writer(&mut self.out, &f).expect("writing to memory cannot fail");
        }
    }
}
