//! Verdicts into Python objects, for `check_many`'s [`crate::lazy::Verdict`]: a serde [`Serializer`] that builds, from a
//! verdict's own serialization (the one `check --format json` writes as text), the objects
//! `json.loads` of that text gives: a struct or map as a `dict`, a sequence or tuple as a
//! `list`, a unit variant as its name, `None` for a unit or a missing option, a non-finite
//! float as `None` (as `serde_json` writes `null`). It is `pythonize`'s mapping, with the
//! repeats shared instead of made again:
//!
//! - every struct field name and unit variant name (`"stage"`, `"SCHEMA_MISMATCH"`) is one
//!   interned `str` for the process, found by the address of its `&'static str` (its hash is
//!   computed once, so a dict insertion never hashes it again);
//! - a string value of at most [`SHARED_MAX_LEN`] bytes (a contract's name, a `next_action`
//!   sentence, a message, a model's name, a map key) is one `str` per distinct text, up to
//!   [`SHARED_MAX_COUNT`] texts, the first seen, kept for the life of the process; the fields that are unique per record (`id`,
//!   `source`) are made each time. Python `str`s are immutable: sharing one is invisible
//!   but to `is`.

use foldhash::fast::RandomState;
use pyo3::BoundObject;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde::ser::{self, Serialize};
use std::collections::HashMap;
use std::fmt;

/// The longest string value (in UTF-8 bytes) [`Builder`] shares between verdicts.
pub const SHARED_MAX_LEN: usize = 200;
/// How many distinct string values the builders keep to share (for the life of the
/// process: at most 16,384 of at most [`SHARED_MAX_LEN`] bytes); more are made each time.
pub const SHARED_MAX_COUNT: usize = 1 << 14;

/// The fields whose string value is unique per record: never looked up nor kept.
const UNIQUE_FIELDS: [&str; 2] = ["id", "source"];

/// The `str`s shared by every [`Builder`] for the life of the process: field and
/// unit-variant names (a few hundred at most: the names of the verdict's types) and short
/// string values (at most [`SHARED_MAX_COUNT`], the first ones seen).
static SHARED: std::sync::LazyLock<std::sync::Mutex<Shared>> =
    std::sync::LazyLock::new(Default::default);

/// [`SHARED`]'s maps.
#[derive(Default)]
struct Shared {
    /// By the address and length of a `&'static str`: its interned `str`.
    names: HashMap<(usize, usize), Py<PyString>, RandomState>,
    /// String values, by text.
    texts: HashMap<Box<str>, Py<PyString>, RandomState>,
}

/// Builds Python objects from serde values (see the module's doc); the GIL is held while
/// it lives. It holds [`SHARED`] while it lives; when another builder holds it (a build
/// that a finalizer run during another build started), this one shares nothing.
pub struct Builder<'py> {
    py: Python<'py>,
    shared: Option<std::sync::MutexGuard<'static, Shared>>,
}

impl<'py> Builder<'py> {
    /// A builder that shares [`SHARED`]'s strings when no other builder holds them.
    pub fn new(py: Python<'py>) -> Builder<'py> {
        let shared = match SHARED.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        Builder { py, shared }
    }

    /// `value` as the Python object `json.loads` of its `serde_json` text gives.
    pub fn build<T: Serialize + ?Sized>(&mut self, value: &T) -> PyResult<Bound<'py, PyAny>> {
        value
            .serialize(Ser {
                b: self,
                field: None,
            })
            .map_err(|e| e.0)
    }

    /// The one interned `str` of a static name.
    fn name(&mut self, s: &'static str) -> Bound<'py, PyString> {
        let py = self.py;
        match &mut self.shared {
            Some(shared) => shared
                .names
                .entry((s.as_ptr() as usize, s.len()))
                .or_insert_with(|| PyString::intern(py, s).unbind())
                .bind(py)
                .clone(),
            None => PyString::intern(py, s),
        }
    }

    /// A string value: shared when short and not of a [`UNIQUE_FIELDS`] field.
    fn text(&mut self, s: &str, field: Option<&'static str>) -> Bound<'py, PyString> {
        let py = self.py;
        let Some(shared) = &mut self.shared else {
            return PyString::new(py, s);
        };
        if s.len() > SHARED_MAX_LEN || field.is_some_and(|f| UNIQUE_FIELDS.contains(&f)) {
            return PyString::new(py, s);
        }
        if let Some(o) = shared.texts.get(s) {
            return o.bind(py).clone();
        }
        let o = PyString::new(py, s);
        if shared.texts.len() < SHARED_MAX_COUNT {
            shared.texts.insert(s.into(), o.clone().unbind());
        }
        o
    }
}

/// A Python error carried through serde (`serde::ser::Error` needs `Display`).
#[derive(Debug)]
pub struct Error(PyErr);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Error {
        Error(pyo3::exceptions::PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Error {
        Error(e)
    }
}

/// The serializer of one value; `field` is the struct field it is the value of.
struct Ser<'a, 'py> {
    b: &'a mut Builder<'py>,
    field: Option<&'static str>,
}

type R<'py> = Result<Bound<'py, PyAny>, Error>;

impl<'a, 'py> Ser<'a, 'py> {
    fn obj<T: IntoPyObject<'py>>(self, v: T) -> R<'py>
    where
        PyErr: From<T::Error>,
    {
        Ok(v.into_pyobject(self.b.py)
            .map_err(PyErr::from)?
            .into_any()
            .into_bound())
    }

    fn none(self) -> R<'py> {
        Ok(self.b.py.None().into_bound(self.b.py))
    }
}

/// A dict being built (a struct, a map, a struct variant's inner struct).
struct DictSer<'a, 'py> {
    b: &'a mut Builder<'py>,
    dict: Bound<'py, PyDict>,
    /// A map's key, until its value comes.
    key: Option<Bound<'py, PyAny>>,
    /// For a struct variant: the variant's name, the key of the one-item dict around it.
    variant: Option<&'static str>,
}

/// A list being built (a sequence, a tuple, a tuple variant's items).
struct ListSer<'a, 'py> {
    b: &'a mut Builder<'py>,
    items: Vec<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

/// `{variant: value}`: serde's externally tagged variant, as `serde_json` writes it.
fn tagged<'py>(b: &mut Builder<'py>, variant: &'static str, value: Bound<'py, PyAny>) -> R<'py> {
    let d = PyDict::new(b.py);
    d.set_item(b.name(variant), value)?;
    Ok(d.into_any())
}

impl<'a, 'py> ser::Serializer for Ser<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = ListSer<'a, 'py>;
    type SerializeTuple = ListSer<'a, 'py>;
    type SerializeTupleStruct = ListSer<'a, 'py>;
    type SerializeTupleVariant = ListSer<'a, 'py>;
    type SerializeMap = DictSer<'a, 'py>;
    type SerializeStruct = DictSer<'a, 'py>;
    type SerializeStructVariant = DictSer<'a, 'py>;

    fn serialize_bool(self, v: bool) -> R<'py> {
        self.obj(v)
    }
    fn serialize_i8(self, v: i8) -> R<'py> {
        self.obj(v)
    }
    fn serialize_i16(self, v: i16) -> R<'py> {
        self.obj(v)
    }
    fn serialize_i32(self, v: i32) -> R<'py> {
        self.obj(v)
    }
    fn serialize_i64(self, v: i64) -> R<'py> {
        self.obj(v)
    }
    fn serialize_i128(self, v: i128) -> R<'py> {
        self.obj(v)
    }
    fn serialize_u8(self, v: u8) -> R<'py> {
        self.obj(v)
    }
    fn serialize_u16(self, v: u16) -> R<'py> {
        self.obj(v)
    }
    fn serialize_u32(self, v: u32) -> R<'py> {
        self.obj(v)
    }
    fn serialize_u64(self, v: u64) -> R<'py> {
        self.obj(v)
    }
    fn serialize_u128(self, v: u128) -> R<'py> {
        self.obj(v)
    }
    fn serialize_f32(self, v: f32) -> R<'py> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> R<'py> {
        // serde_json writes a non-finite float as `null`
        if v.is_finite() {
            self.obj(v)
        } else {
            self.none()
        }
    }
    fn serialize_char(self, v: char) -> R<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> R<'py> {
        Ok(self.b.text(v, self.field).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> R<'py> {
        // serde_json writes bytes as an array of numbers
        Ok(PyList::new(self.b.py, v)?.into_any())
    }
    fn serialize_none(self) -> R<'py> {
        self.none()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R<'py> {
        self.none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R<'py> {
        self.none()
    }
    fn serialize_unit_variant(self, _name: &'static str, _i: u32, variant: &'static str) -> R<'py> {
        Ok(self.b.name(variant).into_any())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> R<'py> {
        let inner = value.serialize(Ser {
            b: &mut *self.b,
            field: None,
        })?;
        tagged(self.b, variant, inner)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListSer<'a, 'py>, Error> {
        Ok(ListSer {
            b: self.b,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<ListSer<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<ListSer<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<ListSer<'a, 'py>, Error> {
        Ok(ListSer {
            b: self.b,
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<DictSer<'a, 'py>, Error> {
        let dict = PyDict::new(self.b.py);
        Ok(DictSer {
            b: self.b,
            dict,
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<DictSer<'a, 'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<DictSer<'a, 'py>, Error> {
        let dict = PyDict::new(self.b.py);
        Ok(DictSer {
            b: self.b,
            dict,
            key: None,
            variant: Some(variant),
        })
    }
}

impl<'py> ListSer<'_, 'py> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let v = value.serialize(Ser {
            b: &mut *self.b,
            field: None,
        })?;
        self.items.push(v);
        Ok(())
    }

    fn finish(self) -> R<'py> {
        let list = PyList::new(self.b.py, self.items)?.into_any();
        match self.variant {
            Some(variant) => tagged(self.b, variant, list),
            None => Ok(list),
        }
    }
}

/// The serde sequence traits of [`ListSer`]: each element pushed, the list made at the end.
macro_rules! list_traits {
    ($($tr:ident :: $push:ident),*) => {$(
        impl<'py> ser::$tr for ListSer<'_, 'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn $push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> R<'py> {
                self.finish()
            }
        }
    )*};
}

list_traits!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<'py> DictSer<'_, 'py> {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        let v = value.serialize(Ser {
            b: &mut *self.b,
            field: Some(key),
        })?;
        self.dict.set_item(self.b.name(key), v)?;
        Ok(())
    }

    fn finish(self) -> R<'py> {
        let dict = self.dict.into_any();
        match self.variant {
            Some(variant) => tagged(self.b, variant, dict),
            None => Ok(dict),
        }
    }
}

impl<'py> ser::SerializeMap for DictSer<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(Ser {
            b: &mut *self.b,
            field: None,
        })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let v = value.serialize(Ser {
            b: &mut *self.b,
            field: None,
        })?;
        let key = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value before its key"))?;
        self.dict.set_item(key, v)?;
        Ok(())
    }
    fn end(self) -> R<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStruct for DictSer<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> R<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStructVariant for DictSer<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> R<'py> {
        self.finish()
    }
}
