//! The Diff tab's model: the proposal and the confirmed intent side by side, aligned by
//! JSON Pointer (a member on one row on both sides, however the two values differ; a member
//! only on one side gets a blank row on the other). Every string has been through
//! [`escape_control`].

use crate::core::pipeline::Evaluation;
use crate::core::text::escape_control;
use crate::core::verdict::Stage;
use serde_json::Value;

/// What kind of difference a diff row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// The same on both sides.
    Same,
    /// Different text on the two sides.
    Changed,
    /// Only in the proposal.
    LeftOnly,
    /// Only in the confirmed intent.
    RightOnly,
}

/// One side-by-side diff row.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    /// Proposal line, escaped.
    pub left: Option<String>,
    /// Intent line, escaped.
    pub right: Option<String>,
    /// The kind of row.
    pub kind: DiffKind,
    /// Whether the row holds a mismatching pointer's value (on either side).
    pub mismatch: bool,
}

/// The proposal vs the confirmed intent.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffView {
    /// Side-by-side rows (pretty JSON, keys sorted, aligned by pointer).
    pub rows: Vec<DiffRow>,
    /// The pointers where the proposal differs from the intent (from the verdict).
    pub mismatches: Vec<String>,
    /// Whether the pipeline's intent comparison ran and passed (`Some(true)`), ran and
    /// failed (`Some(false)`), or did not run because an earlier check decided (`None`).
    pub compared: Option<bool>,
}

/// The Diff tab of an evaluation, or why there is none.
pub fn diff_view(ev: &Evaluation) -> Result<DiffView, String> {
    let intent = match ev.capture.as_ref() {
        Some(c) => c.intent.as_ref().ok_or_else(|| {
            "this capture has no confirmed intent (`intent`), so there is nothing to compare the proposal with".to_string()
        })?,
        None if ev.verdict.stage == Stage::Input => {
            return Err(
                "the capture record could not be read, so its confirmed intent is unknown (see Raw)"
                    .to_string(),
            );
        }
        None => return Err("this capture has no confirmed intent (`intent`)".to_string()),
    };
    let proposal = ev.proposal.as_ref().ok_or_else(|| {
        "no proposal to compare with the confirmed intent: the capture failed before the schema stage".to_string()
    })?;
    let mismatches: Vec<String> = ev
        .verdict
        .errors
        .iter()
        .filter(|f| f.reason.as_str() == "INTENT_MISMATCH")
        .filter_map(|f| f.pointer.clone())
        .collect();
    let rows = aligned_rows(proposal, &Value::Object(intent.clone()), &mismatches);
    let compared = if !mismatches.is_empty() {
        Some(false)
    } else if ev.verdict.stage == Stage::Ready {
        Some(true)
    } else {
        None
    };
    Ok(DiffView {
        rows,
        mismatches: mismatches.iter().map(|p| esc(p)).collect(),
        compared,
    })
}

fn esc(s: &str) -> String {
    escape_control(s).into_owned()
}

/// The rows of `a` (left) against `b` (right), pretty-printed with two-space indents and
/// aligned member by member, element by element; a row is a mismatch when its pointer is
/// one of `mismatches` or inside one.
pub fn aligned_rows(a: &Value, b: &Value, mismatches: &[String]) -> Vec<DiffRow> {
    let mut w = Walk {
        rows: Vec::new(),
        mismatches,
    };
    w.pair(Side::both(a, b, true, true), "", 0, "");
    w.rows
}

/// One value on each side (either may be absent), with whether it is its parent's last
/// member on that side (no trailing comma).
#[derive(Clone, Copy)]
struct Side<'a> {
    a: Option<&'a Value>,
    b: Option<&'a Value>,
    last_a: bool,
    last_b: bool,
}

impl<'a> Side<'a> {
    fn both(a: &'a Value, b: &'a Value, last_a: bool, last_b: bool) -> Side<'a> {
        Side {
            a: Some(a),
            b: Some(b),
            last_a,
            last_b,
        }
    }
}

struct Walk<'m> {
    rows: Vec<DiffRow>,
    mismatches: &'m [String],
}

/// The lines of `v` pretty-printed at `depth`, the first prefixed with `key`, the last
/// with a comma unless `last`.
fn lines_of(v: &Value, key: &str, depth: usize, last: bool) -> Vec<String> {
    let pad = "  ".repeat(depth);
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mut out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{pad}{key}{l}")
            } else {
                format!("{pad}{l}")
            }
        })
        .collect();
    if !last && let Some(l) = out.last_mut() {
        l.push(',');
    }
    out
}

fn comma(last: bool) -> &'static str {
    if last { "" } else { "," }
}

impl Walk<'_> {
    fn mismatch(&self, pointer: &str) -> bool {
        self.mismatches.iter().any(|m| {
            pointer == m || (pointer.starts_with(m.as_str()) && pointer[m.len()..].starts_with('/'))
        })
    }

    fn push(&mut self, left: Option<String>, right: Option<String>, pointer: &str) {
        let kind = match (&left, &right) {
            (Some(l), Some(r)) if l.trim_end_matches(',') == r.trim_end_matches(',') => {
                DiffKind::Same
            }
            (Some(_), Some(_)) => DiffKind::Changed,
            (Some(_), None) => DiffKind::LeftOnly,
            _ => DiffKind::RightOnly,
        };
        let mismatch = self.mismatch(pointer);
        self.rows.push(DiffRow {
            left: left.map(|s| esc(&s)),
            right: right.map(|s| esc(&s)),
            kind,
            mismatch,
        });
    }

    /// Rows for one member (`key`: `"name": ` or empty) at `pointer`.
    fn pair(&mut self, s: Side<'_>, key: &str, depth: usize, pointer: &str) {
        let pad = "  ".repeat(depth);
        match (s.a, s.b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) if !x.is_empty() || !y.is_empty() => {
                self.push(
                    Some(format!("{pad}{key}{{")),
                    Some(format!("{pad}{key}{{")),
                    pointer,
                );
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                let (last_x, last_y) = (x.keys().max(), y.keys().max());
                for k in keys {
                    let name = format!("{}: ", serde_json::to_string(k).unwrap_or_default());
                    let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
                    let side = Side {
                        a: x.get(k),
                        b: y.get(k),
                        last_a: x.len() < 2 || Some(k) == last_x,
                        last_b: y.len() < 2 || Some(k) == last_y,
                    };
                    self.pair(side, &name, depth + 1, &p);
                }
                self.push(
                    Some(format!("{pad}}}{}", comma(s.last_a))),
                    Some(format!("{pad}}}{}", comma(s.last_b))),
                    pointer,
                );
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) if !x.is_empty() || !y.is_empty() => {
                self.push(
                    Some(format!("{pad}{key}[")),
                    Some(format!("{pad}{key}[")),
                    pointer,
                );
                for i in 0..x.len().max(y.len()) {
                    let side = Side {
                        a: x.get(i),
                        b: y.get(i),
                        last_a: i + 1 >= x.len(),
                        last_b: i + 1 >= y.len(),
                    };
                    self.pair(side, "", depth + 1, &format!("{pointer}/{i}"));
                }
                self.push(
                    Some(format!("{pad}]{}", comma(s.last_a))),
                    Some(format!("{pad}]{}", comma(s.last_b))),
                    pointer,
                );
            }
            (a, b) => {
                // scalars, different types, or a member on one side only: the lines of
                // each side from the same row, the shorter side padded with blank rows
                let la = a.map_or_else(Vec::new, |v| lines_of(v, key, depth, s.last_a));
                let lb = b.map_or_else(Vec::new, |v| lines_of(v, key, depth, s.last_b));
                for i in 0..la.len().max(lb.len()) {
                    self.push(la.get(i).cloned(), lb.get(i).cloned(), pointer);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The rows as `left | right` text, a kind letter and `!` for a mismatch.
    fn show(a: Value, b: Value, mismatches: &[&str]) -> Vec<String> {
        let m: Vec<String> = mismatches.iter().map(|s| s.to_string()).collect();
        aligned_rows(&a, &b, &m)
            .into_iter()
            .map(|r| {
                let k = match r.kind {
                    DiffKind::Same => '=',
                    DiffKind::Changed => '~',
                    DiffKind::LeftOnly => '<',
                    DiffKind::RightOnly => '>',
                };
                format!(
                    "{k}{} {} | {}",
                    if r.mismatch { "!" } else { " " },
                    r.left.unwrap_or_default(),
                    r.right.unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn a_member_is_on_one_row_on_both_sides_with_blanks_for_the_other_members() {
        // the case: `results` only in the proposal must not pair with `totalCount`
        assert_eq!(
            show(
                json!({"results": [], "totalCount": 3}),
                json!({"totalCount": 5}),
                &["/totalCount"]
            ),
            [
                "=  { | {",
                "<    \"results\": [], | ",
                "~!   \"totalCount\": 3 |   \"totalCount\": 5",
                "=  } | }",
            ]
        );
    }

    #[test]
    fn proposal_only_members_above_and_below_the_differing_one() {
        assert_eq!(
            show(
                json!({"a": 1, "b": {"x": true}, "m": 3, "z": "last"}),
                json!({"m": 5}),
                &["/m"]
            ),
            [
                "=  { | {",
                "<    \"a\": 1, | ",
                "<    \"b\": { | ",
                "<      \"x\": true | ",
                "<    }, | ",
                "~!   \"m\": 3, |   \"m\": 5",
                "<    \"z\": \"last\" | ",
                "=  } | }",
            ]
        );
    }

    #[test]
    fn nested_objects_and_arrays_align_by_pointer() {
        assert_eq!(
            show(
                json!({"order": {"id": "O-1", "lines": [1, 2, 3], "note": "x"}}),
                json!({"order": {"lines": [1, 7]}, "total": 4}),
                &["/order/lines/1", "/total"]
            ),
            [
                "=  { | {",
                "=    \"order\": { |   \"order\": {",
                "<      \"id\": \"O-1\", | ",
                "=      \"lines\": [ |     \"lines\": [",
                "=        1, |       1,",
                "~!       2, |       7",
                "<        3 | ",
                "=      ], |     ]",
                "<      \"note\": \"x\" | ",
                "=    } |   },",
                ">!  |   \"total\": 4",
                "=  } | }",
            ]
        );
    }
}
