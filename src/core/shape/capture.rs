//! The capture record (`docs/capture-record.md`): verdict's own record, `response` or
//! `output` with trusted `context`, `intent` and `expect`.

use super::Shape;
use crate::core::capture::{RECORD_KEYS, read_capture};
use serde_json::Value;

/// A capture record: it has `response` or `output`, or no key outside the record table (so
/// a record that only misspells a key is still read as one, and told which key).
pub(super) const SHAPE: Shape = Shape {
    format: "capture",
    describe: "a capture record",
    keys: &RECORD_KEYS,
    detect,
    read: |obj, source| read_capture(obj, source.as_str()),
};

fn detect(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    obj.contains_key("response")
        || obj.contains_key("output")
        || obj.keys().all(|k| RECORD_KEYS.contains(&k.as_str()))
}
