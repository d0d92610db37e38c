//! Report formats of `verdict check`: one engine, interchangeable sinks (ripgrep's printer
//! idea). Every format prints the same verdicts; only the shape differs. Sinks receive the
//! verdicts one by one in capture order and never hold them all: a report of a million
//! captures is written in constant memory (the human and JUnit sinks spill their groups to
//! temporary files and copy them out at the end).

pub mod chains;
pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod lint;
pub mod review;
pub mod sarif;
mod verdict_bytes;

pub use crate::core::item::{Item, Renderer};
use crate::core::summary::Summary;
use crate::core::verdict::Verdict;
use std::io;

/// Options of the human format.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportOptions {
    /// Colour with ANSI escapes.
    pub color: bool,
    /// Leave out captures that pass.
    pub quiet: bool,
    /// The records are plain instances (`check --schema`): no response or business stage,
    /// so the summary counts instances, parsed and valid.
    pub instances: bool,
}

/// A report format: takes verdicts in order, then the summary.
pub trait Sink {
    /// One checked capture.
    ///
    /// # Errors
    /// Writing failed (a closed pipe included).
    fn item(&mut self, item: &Item) -> io::Result<()>;

    /// How to pre-render items in parallel, when this sink prints each item on its own
    /// (see [`Item::rendered`]). `None` (the default): the sink renders in [`Sink::item`].
    fn renderer(&self) -> Option<Renderer> {
        None
    }

    /// `n` passing items, rendered by this sink's [`Renderer`] back to back in `bytes`, that
    /// differ from `model` only in their id, source and line (the instances of one log that
    /// passed `check --schema`'s fast path; `bytes` is empty under `-q`). Sinks that return a
    /// renderer implement it; the default refuses.
    ///
    /// # Errors
    /// Writing failed; or the sink has no renderer.
    fn passes(&mut self, model: &Item, bytes: &[u8], n: usize) -> io::Result<()> {
        let _ = (model, bytes, n);
        Err(io::Error::other(
            "this report format takes no pre-rendered items",
        ))
    }

    /// The end of the run.
    ///
    /// # Errors
    /// Writing failed.
    fn finish(&mut self, summary: &Summary) -> io::Result<()>;
}

/// The first error's message with its pointer, for one-line formats: `/amount_minor: 8000 is ...`.
pub(crate) fn headline(v: &Verdict) -> String {
    match v.errors.first() {
        Some(f) => match f.pointer.as_deref() {
            Some(p) if !p.is_empty() => format!("{p}: {}", f.message),
            _ => f.message.clone(),
        },
        None => "ready for commit".to_string(),
    }
}

/// Why an `expect` was not met: `expected schema/SCHEMA_MISMATCH/regenerate, got parse/INVALID_JSON/regenerate`.
pub(crate) fn expect_mismatch(v: &Verdict) -> Option<String> {
    let e = v.expect.as_ref().filter(|e| !e.met)?;
    let want = format!(
        "{}/{}/{}",
        e.expect.stage.map_or("*".into(), |s| s.to_string()),
        e.expect.reason.as_ref().map_or("*".into(), |r| r
            .as_ref()
            .map_or("null".into(), |r| r.to_string())),
        e.expect.decision.map_or("*".into(), |d| d.to_string()),
    );
    let got = format!(
        "{}/{}/{}",
        v.stage,
        v.reason.as_ref().map_or("null".into(), |r| r.to_string()),
        v.decision
    );
    Some(format!("expected {want}, got {got}"))
}

/// A verdict's `repair` in words, for the text formats: [`Repair::sentence`]
/// (`docs/repairs.md#in-words`), the same sentence the workbench shows; `None` without one.
///
/// [`Repair::sentence`]: crate::core::repair::Repair::sentence
pub(crate) fn repair_note(v: &Verdict) -> Option<String> {
    v.repair.as_ref().map(crate::core::repair::Repair::sentence)
}

/// The eval tool's own outcome of a capture, shown beside the verdict's
/// (`docs/record-shapes.md#promptfoo`): from `meta.promptfoo` (`{pass, failure_reason,
/// score, reason}`), `promptfoo: pass (score 1)` or `promptfoo: FAIL (assert, score 0):
/// REASON`; `None` for a capture without one. The reason is the grader's text, unescaped:
/// the caller escapes it for its output.
pub fn eval_note(v: &Verdict) -> Option<String> {
    let own = v.meta.as_ref()?.get("promptfoo")?.as_object()?;
    let mut head = match own.get("pass").and_then(serde_json::Value::as_bool) {
        Some(true) => "pass".to_owned(),
        Some(false) => "FAIL".to_owned(),
        None => "no pass/fail".to_owned(),
    };
    let mut why: Vec<String> = Vec::new();
    if let Some(f) = own
        .get("failure_reason")
        .and_then(serde_json::Value::as_str)
        .filter(|f| *f != "none")
    {
        why.push(f.to_owned());
    }
    if let Some(s) = own.get("score").filter(|s| s.is_number()) {
        why.push(format!("score {s}"));
    }
    if !why.is_empty() {
        head = format!("{head} ({})", why.join(", "));
    }
    Some(
        match own.get("reason").and_then(serde_json::Value::as_str) {
            Some(r) if !r.is_empty() => format!("promptfoo: {head}: {r}"),
            _ => format!("promptfoo: {head}"),
        },
    )
}

/// The reason code of a verdict, `READY` when it has none.
pub(crate) fn rule_id(v: &Verdict) -> String {
    v.reason
        .as_ref()
        .map_or("READY".to_string(), |r| r.to_string())
}

/// The capture's generation warnings (`GENERATION_GAP`, `STRICT_VIOLATION`:
/// `docs/requests.md#both-contracts`; `REQUEST_CONFLICT`), each with where the request that sent the schema
/// is, as the user can open it: the input file (the workspace folder the item's path starts
/// with, joined with the request's file) and line, or, for a request in the capture's own
/// record, the item's path and the record's line.
pub(crate) fn generation_warnings(
    it: &Item,
) -> Vec<(&crate::core::verdict::Warning, String, usize)> {
    use crate::core::verdict::Warning;
    let v = &it.verdict;
    let Some(g) = &v.generation else {
        return Vec::new();
    };
    let (file, line) = match g.request_ref() {
        Some(at) => {
            let root = it.path.strip_suffix(v.source.file().as_ref()).unwrap_or("");
            (format!("{root}{}", at.file()), at.line().unwrap_or(1))
        }
        // the record's own line (a `.json` record starts at line 1)
        None => (it.path.to_string(), v.source.line().unwrap_or(1)),
    };
    v.warnings
        .iter()
        .filter(|w| {
            [
                Warning::GENERATION_GAP,
                Warning::STRICT_VIOLATION,
                Warning::REQUEST_CONFLICT,
            ]
            .contains(&w.code.as_str())
        })
        .map(|w| (w, file.clone(), line))
        .collect()
}
