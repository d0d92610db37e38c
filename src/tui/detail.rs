//! The detail model of the selected capture: everything the right pane shows, computed
//! once when the selection (or its verdict) changes, so drawing never formats JSON,
//! diffs or builds feedback. Every string that came from a capture or a contract file
//! has been through [`escape_control`] here.

use crate::core::capture::Payload;
use crate::core::feedback::feedback;
use crate::core::pipeline::Evaluation;
use crate::core::stage::parse::locate;
use crate::core::text::{escape_control, line_col};
use crate::core::verdict::{Decision, Finding, Stage};
use crate::core::workspace::Workspace;
use serde_json::Value;
use std::ops::RangeInclusive;

pub use crate::tui::diff::{DiffKind, DiffRow, DiffView, diff_view};

/// How a stage of the strip fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Passed (`✓`).
    Pass,
    /// Decided the verdict (`✗`).
    Fail,
    /// Not reached (`·`).
    NotReached,
}

/// One row of the error table.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorRow {
    /// Reason code.
    pub reason: String,
    /// Pointer (`(root)` for the empty pointer), or empty.
    pub pointer: String,
    /// Keyword location (schema), `rule[n]` (rules), or empty.
    pub location: String,
    /// `line:col` in the raw output, or empty.
    pub at: String,
    /// The message (with the best `anyOf`/`oneOf` branch's first error, and a hint).
    pub message: String,
}

/// A block of JSON text with the lines of each error's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonView {
    /// The lines, escaped.
    pub lines: Vec<String>,
    /// For each error of the verdict (same index), the lines of its value, if located.
    pub marks: Vec<Option<RangeInclusive<usize>>>,
}

impl JsonView {
    fn new(text: &str, targets: &[Option<&str>]) -> JsonView {
        let lines = text
            .lines()
            .map(|l| escape_control(l).into_owned())
            .collect();
        let marks = targets
            .iter()
            .map(|t| {
                let p = (*t)?;
                let span = locate(text, p)?;
                let first = line_col(text, span.start).line as usize - 1;
                if p.is_empty() || p == "#" {
                    // the root value: mark its first line, not the whole document
                    return Some(first..=first);
                }
                let last =
                    line_col(text, span.end.saturating_sub(1).max(span.start)).line as usize - 1;
                Some(first..=last)
            })
            .collect();
        JsonView { lines, marks }
    }

    /// How a line is highlighted: `Some(true)` for the current error, `Some(false)` for
    /// another error, `None` for none.
    pub fn mark_of(&self, line: usize, current: usize) -> Option<bool> {
        if self
            .marks
            .get(current)
            .and_then(Option::as_ref)
            .is_some_and(|r| r.contains(&line))
        {
            return Some(true);
        }
        self.marks
            .iter()
            .flatten()
            .any(|r| r.contains(&line))
            .then_some(false)
    }

    /// The first line of an error's value.
    pub fn target(&self, error: usize) -> Option<usize> {
        self.marks.get(error)?.as_ref().map(|r| *r.start())
    }
}

/// The raw output with the parse error position.
#[derive(Debug, Clone, PartialEq)]
pub struct RawView {
    /// Lines split at `\n`; each a list of `(escaped text, is the error position)` pieces.
    pub lines: Vec<Vec<(String, bool)>>,
    /// `line:col` and message of the parse error (or other located finding), if any.
    pub error: Option<(String, String)>,
    /// The 0-based line of the marked position.
    pub error_line: usize,
}

/// A line of a text tab with its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A section heading.
    Heading,
    /// Ordinary text.
    Text,
    /// Secondary text.
    Dim,
    /// The failing part (rule).
    Highlight,
    /// A line the next proposal added (the Chain tab's diffs).
    Added,
    /// A line the next proposal took out.
    Removed,
}

/// The contract tab.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractView {
    /// `refund-v1  schemas/refund-v1.schema.json`.
    pub heading: String,
    /// The schema text with each error's keyword location marked.
    pub schema: JsonView,
    /// The contract's lint findings (as `check` prints them), then the rules, each as
    /// lines with a role (the failing rule highlighted).
    pub rules: Vec<(String, Role)>,
    /// When the capture's request sent a schema beside this server contract: the two side
    /// by side (`docs/requests.md#the-drift-report`).
    pub drift: Option<DriftView>,
}

/// The Contract tab of a capture checked by a server contract beside the schema its request
/// sent: the drift findings, then the sent schema and the server contract side by side,
/// the differing pointers marked in both. Every string is escaped.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftView {
    /// The heading lines: what was sent, from where, its variant; then each drift finding
    /// (`REQUEST_LOOSER` highlighted).
    pub lines: Vec<(String, Role)>,
    /// The variant's hash (what the pane counts the captures of).
    pub hash: u64,
    /// Left: the sent schema, pretty-printed.
    pub sent: JsonView,
    /// Right: the server contract's schema text.
    pub server: JsonView,
    /// The left column's title (`sent  text format "ticket"`).
    pub sent_title: String,
    /// The right column's title (`server  ticket  schemas/ticket.schema.json`).
    pub server_title: String,
}

impl DriftView {
    /// The line saying how many captures of the workspace were sent this variant
    /// (`variants`: each distinct sent schema of the contract with its count and first
    /// ids, as `Store::variants` gives them), after the first heading line.
    pub fn set_variants(&mut self, variants: &[(u64, usize, Vec<String>)]) {
        let Some(i) = variants.iter().position(|(h, _, _)| *h == self.hash) else {
            return;
        };
        let (_, n, ids) = &variants[i];
        let mut shown: Vec<String> = ids.iter().map(|id| esc(id)).collect();
        if *n > shown.len() {
            shown.push(format!("and {} more", n - shown.len()));
        }
        let line = format!(
            "variant {} of {}: {n} capture{} ({})",
            i + 1,
            variants.len(),
            if *n == 1 { "" } else { "s" },
            shown.join(", ")
        );
        match self.lines.get_mut(1) {
            Some((l, Role::Dim)) if l.starts_with("variant ") => *l = line,
            _ => self
                .lines
                .insert(1.min(self.lines.len()), (line, Role::Dim)),
        }
    }
}

/// `pointer` and its ancestors, nearest first (what one schema lacks is marked at the
/// nearest ancestor the other has).
fn near(pointer: &str) -> Vec<String> {
    let mut out = vec![pointer.to_owned()];
    let mut p = pointer;
    while let Some((parent, _)) = p.rsplit_once('/') {
        out.push(parent.to_owned());
        p = parent;
    }
    out
}

/// A JSON view of `text` with each of `pointers` marked at its value, or at its nearest
/// ancestor's in `text`.
fn marked_view(text: &str, pointers: &[String]) -> JsonView {
    let found: Vec<String> = pointers
        .iter()
        .map(|p| {
            near(p)
                .into_iter()
                .find(|q| locate(text, q).is_some())
                .unwrap_or_default()
        })
        .collect();
    let refs: Vec<Option<&str>> = found.iter().map(|p| Some(p.as_str())).collect();
    JsonView::new(text, &refs)
}

/// The drift view of a capture whose request sent `sent` beside the server contract `c`.
fn drift_view(
    ws: &Workspace,
    ev: &Evaluation,
    c: &crate::core::contract::Contract,
    sent: &crate::core::generation::GenerationSchema,
) -> DriftView {
    use crate::core::drift;
    let v = &ev.verdict;
    let profile = v
        .provider
        .as_deref()
        .and_then(drift::profile_name)
        .and_then(|n| crate::core::lint::Profile::load(n).ok());
    let findings = drift::findings_for(c, sent, ws.config.dialect, profile.as_ref());
    let named = crate::core::generation::describe(&sent.name, sent.source);
    let mut lines = Vec::new();
    if let Some(g) = &v.generation {
        lines.push((
            esc(&format!(
                "sent  the {named}{} at {} {}{}",
                if g.strict { " (strict)" } else { "" },
                g.request,
                g.pointer,
                match g.valid {
                    Some(true) => ": the proposal meets it",
                    Some(false) => ": the proposal does not meet it",
                    None => "",
                }
            )),
            Role::Heading,
        ));
    }
    if findings.is_empty() {
        lines.push((
            "no drift: the sent schema has the server contract's constraints".into(),
            Role::Dim,
        ));
    }
    for f in &findings {
        let ptr = if f.pointer.is_empty() {
            "(root)"
        } else {
            f.pointer.as_str()
        };
        lines.push((
            esc(&format!(
                "{} {ptr}: {}{}",
                f.code,
                f.message,
                profile
                    .as_ref()
                    .filter(|_| f.unsupported == Some(true))
                    .map(|p| format!(" [unsupported by {}]", p.name))
                    .unwrap_or_default()
            )),
            if f.code == drift::REQUEST_LOOSER {
                Role::Highlight
            } else {
                Role::Text
            },
        ));
    }
    let pointers: Vec<String> = findings.iter().map(|f| f.pointer.clone()).collect();
    DriftView {
        lines,
        hash: sent.hash,
        sent: marked_view(&pretty(&sent.schema), &pointers),
        server: marked_view(&c.text, &pointers),
        sent_title: esc(&format!("sent  {named}")),
        server_title: esc(&format!("server  {}  {}", c.name, c.file.display())),
    }
}

/// One line of a side of the Repair tab: a sign (`-` removed or dropped, `~` changed, `+`
/// added, ` ` kept) and its pieces (escaped text, whether the repair touched it).
#[derive(Debug, Clone, PartialEq)]
pub struct SideLine {
    /// `' '`, `'-'`, `'~'` or `'+'`.
    pub sign: char,
    /// The line's text in pieces, escaped, each marked when the repair dropped or changed
    /// it.
    pub pieces: Vec<(String, bool)>,
}

/// The Repair tab of a capture with a `repair` (`docs/repairs.md#the-repair-tab`): the
/// repair's name and would-be outcome, the changed pointers, then the original (the raw
/// output for a parse-stage repair, else the proposal) beside the repaired copy, rebuilt
/// for this capture by `core::repair::rebuild`. Every string is escaped.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairView {
    /// The heading lines: the repair's one sentence ([`crate::core::repair::Repair::sentence`],
    /// `` would pass after `drop-unknown` (not applied) ``), then what changed
    /// (`removed /approved`).
    pub lines: Vec<(String, Role)>,
    /// The left column's title (`raw output` or `proposal`).
    pub original_title: String,
    /// The original, its dropped text or changed pointers marked.
    pub original: Vec<SideLine>,
    /// The right column's title.
    pub copy_title: String,
    /// The repaired copy, pretty-printed, its changed pointers marked.
    pub copy: Vec<SideLine>,
}

/// The lines of pretty JSON `text`, each pointer of `marks` marked with its sign.
fn signed_json(text: &str, marks: &[(String, char)]) -> Vec<SideLine> {
    let targets: Vec<Option<&str>> = marks.iter().map(|(p, _)| Some(p.as_str())).collect();
    let view = JsonView::new(text, &targets);
    view.lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let sign = view
                .marks
                .iter()
                .zip(marks)
                .find(|(r, _)| r.as_ref().is_some_and(|r| r.contains(&i)))
                .map_or(' ', |(_, (_, c))| *c);
            SideLine {
                sign,
                pieces: vec![(line, sign != ' ')],
            }
        })
        .collect()
}

/// `text` split at `\n`, escaped, the bytes of `dropped` marked; a line with a dropped
/// character other than whitespace gets `-`.
fn signed_text(text: &str, dropped: &[std::ops::Range<usize>]) -> Vec<SideLine> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    for line in text.split('\n') {
        let mut pieces: Vec<(String, bool)> = Vec::new();
        let mut sign = ' ';
        for (i, c) in line.char_indices() {
            let marked = dropped.iter().any(|r| r.contains(&(offset + i)));
            if marked && !c.is_whitespace() {
                sign = '-';
            }
            push_char(&mut pieces, c, marked);
        }
        offset += line.len() + 1;
        out.push(SideLine { sign, pieces });
    }
    out
}

/// `c`, its control characters escaped (`escape_control`), appended to `pieces`: to the last
/// piece when that one is marked alike, else as a new piece. The runs of marked and unmarked
/// text of the Raw view and of the Repair tab's text side.
fn push_char(pieces: &mut Vec<(String, bool)>, c: char, marked: bool) {
    let mut buf = [0u8; 4];
    let e = escape_control(c.encode_utf8(&mut buf));
    match pieces.last_mut() {
        Some((s, m)) if *m == marked => s.push_str(&e),
        _ => pieces.push((e.into_owned(), marked)),
    }
}

/// Why a capture has no Repair tab, in one line.
fn no_repair(v: &crate::core::verdict::Verdict) -> String {
    let label = esc(&v.outcome().label());
    match v.stage {
        Stage::Ready => "no repair: the capture is ready".to_string(),
        Stage::Parse | Stage::Schema => {
            format!("no repair: no allowed repair would change {label} (docs/repairs.md#the-table)")
        }
        _ => format!("no repair: repairs apply to parse and schema failures, not {label}"),
    }
}

/// The Repair tab of `ev`, its copy rebuilt with the capture's contract, or why there is
/// none.
fn repair_view(ws: Option<&Workspace>, ev: &Evaluation) -> Result<RepairView, String> {
    use crate::core::repair::rebuild::{ChangeKind, rebuild};
    let v = &ev.verdict;
    let Some(r) = &v.repair else {
        return Err(no_repair(v));
    };
    let ws = ws.ok_or_else(|| "the workspace is loading".to_string())?;
    let validator = v
        .contract
        .as_deref()
        .and_then(|n| ws.contracts.get(n))
        .and_then(|c| c.compiled.as_ref().ok())
        .ok_or_else(|| {
            "no repaired copy: the capture's contract is not a compiled contract of the workspace"
                .to_string()
        })?;
    let built = rebuild(
        r.name,
        validator,
        ev.raw_output.as_deref(),
        ev.proposal.as_ref(),
    )
    .map_err(|e| format!("no repaired copy: {}", esc(&e)))?;
    // the one sentence of every front end (docs/repairs.md#in-words)
    let outcome = r.sentence();
    let mut lines = vec![(esc(&outcome), Role::Heading)];
    let copy_text = pretty(&built.copy);
    let (original_title, original, copy) = if built.changes.is_empty() {
        let text = ev.raw_output.as_deref().unwrap_or_default();
        let before = built.dropped.first().is_some_and(|d| d.start == 0);
        let after = built
            .dropped
            .last()
            .is_some_and(|d| d.end == text.len() && d.start > 0);
        let what = match (before, after) {
            (true, true) => "before and after",
            (true, false) => "before",
            _ => "after",
        };
        lines.push((
            format!("dropped: the text {what} the value (marked -)"),
            Role::Highlight,
        ));
        (
            "raw output".to_string(),
            signed_text(text, &built.dropped),
            signed_json(&copy_text, &[]),
        )
    } else {
        let word = |k: ChangeKind| match k {
            ChangeKind::Removed => ("removed", '-'),
            ChangeKind::Changed => ("changed", '~'),
            ChangeKind::Added => ("added", '+'),
        };
        let said: Vec<String> = built
            .changes
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    word(c.kind).0,
                    crate::tui::filter::pointer_label(&c.pointer)
                )
            })
            .collect();
        lines.push((esc(&said.join(" · ")), Role::Highlight));
        let left: Vec<(String, char)> = built
            .changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Added)
            .map(|c| (c.pointer.clone(), word(c.kind).1))
            .collect();
        let right: Vec<(String, char)> = built
            .changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Removed)
            .map(|c| (c.pointer.clone(), word(c.kind).1))
            .collect();
        let original = ev.proposal.as_ref().map(pretty).unwrap_or_default();
        (
            "proposal".to_string(),
            signed_json(&original, &left),
            signed_json(&copy_text, &right),
        )
    };
    let (original, copy) = align(original, copy);
    Ok(RepairView {
        lines,
        original_title,
        original,
        copy_title: format!("after {} (not applied)", r.name),
        copy,
    })
}

/// The two sides of the Repair tab line by line: a line only the original has (`-`, removed
/// or dropped) faces a blank line in the copy, a line only the copy has (`+`, added) a blank
/// line in the original, so the lines after them stay side by side (as the Diff tab leaves
/// a blank for a missing member).
fn align(original: Vec<SideLine>, copy: Vec<SideLine>) -> (Vec<SideLine>, Vec<SideLine>) {
    let blank = || SideLine {
        sign: ' ',
        pieces: Vec::new(),
    };
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let mut o = original.into_iter().peekable();
    let mut c = copy.into_iter().peekable();
    loop {
        match (o.peek(), c.peek()) {
            (None, None) => break,
            (Some(l), _) if l.sign == '-' => {
                left.extend(o.next());
                right.push(blank());
            }
            (_, Some(r)) if r.sign == '+' => {
                left.push(blank());
                right.extend(c.next());
            }
            _ => {
                left.push(o.next().unwrap_or_else(blank));
                right.push(c.next().unwrap_or_else(blank));
            }
        }
    }
    (left, right)
}

/// Everything the detail pane shows for one capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// The capture's source (the selection key).
    pub source: String,
    /// The capture's id, escaped, and its record shape when that is not a capture record
    /// (`request-7 · openai-batch`).
    pub title: String,
    /// The decision.
    pub decision: Decision,
    /// `response`, `parse`, `schema`, `business` (with `input` first when it failed).
    pub strip: Vec<(Stage, Mark)>,
    /// The error table.
    pub errors: Vec<ErrorRow>,
    /// The error table's repair line when the verdict has a `repair` (`docs/repairs.md`),
    /// and whether its copy would be ready: `would pass after `drop-unknown` (not
    /// applied)`, or `after `unquote-number` it would be business/EXCEEDS_REMAINING
    /// (reject; not applied)`. Escaped.
    pub repair: Option<(String, bool)>,
    /// Diff tab, or why there is none.
    pub diff: Result<DiffView, String>,
    /// Proposal tab, or why there is none.
    pub proposal: Result<JsonView, String>,
    /// Raw tab, or why there is none.
    pub raw: Result<RawView, String>,
    /// Response tab.
    pub response: Vec<(String, Role)>,
    /// Contract tab, or why there is none.
    pub contract: Result<ContractView, String>,
    /// Repair tab, or why there is none (`no repair: ...`).
    pub repair_tab: Result<RepairView, String>,
    /// Context tab.
    pub context: Vec<(String, Role)>,
    /// Feedback tab.
    pub feedback: Vec<(String, Role)>,
    /// The feedback message as built (unescaped: it is only ever copied, never drawn).
    pub feedback_text: Option<String>,
}

fn esc(s: &str) -> String {
    escape_control(s).into_owned()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The stage strip of a verdict.
pub fn strip(stage: Stage) -> Vec<(Stage, Mark)> {
    let mut out = Vec::new();
    if stage == Stage::Input {
        out.push((Stage::Input, Mark::Fail));
    }
    // response, parse, schema, business: the stages between input and ready
    for &s in &Stage::ALL[1..5] {
        let m = if stage == Stage::Input || s > stage {
            Mark::NotReached
        } else if s == stage {
            Mark::Fail
        } else {
            Mark::Pass
        };
        out.push((s, m));
    }
    out
}

fn error_row(f: &Finding) -> ErrorRow {
    let mut message = f.message.clone();
    if let Some(best) = f.branches.first()
        && let Some(e) = best.errors.first()
    {
        message.push_str(&format!(" (closest branch {}: {})", best.index, e.message));
    }
    if let Some(h) = &f.hint {
        message.push_str(&format!(" (hint: {h})"));
    }
    ErrorRow {
        reason: esc(f.reason.as_str()),
        pointer: f
            .pointer
            .as_deref()
            .map(|p| esc(crate::tui::filter::pointer_label(p)))
            .unwrap_or_default(),
        location: esc(f
            .schema_path
            .as_deref()
            .or(f.keyword.as_deref())
            .unwrap_or("")),
        at: f.at.map(|a| a.to_string()).unwrap_or_default(),
        message: esc(&message),
    }
}

/// The error table's line for a verdict's repair: [`Repair::sentence`]
/// (`docs/repairs.md#in-words`), escaped all the same, and whether the repaired copy would
/// be ready.
///
/// [`Repair::sentence`]: crate::core::repair::Repair::sentence
pub(crate) fn repair_line(r: &crate::core::repair::Repair) -> (String, bool) {
    (esc(&r.sentence()), r.would_be.is_ready())
}

impl Detail {
    /// Builds the detail of one evaluation. `ws` gives the contract and the feedback;
    /// without it (the workspace is being re-opened) those tabs say so.
    pub fn new(ws: Option<&Workspace>, ev: &Evaluation) -> Detail {
        let v = &ev.verdict;
        let pointers: Vec<Option<&str>> = v.errors.iter().map(|f| f.pointer.as_deref()).collect();
        let proposal = match &ev.proposal {
            Some(p) => Ok(JsonView::new(&pretty(p), &pointers)),
            None => Err(match v.stage {
                Stage::Input => {
                    "no proposal: the capture could not be used (input stage)".to_string()
                }
                Stage::Response => "no proposal: the response stage failed".to_string(),
                _ => "no proposal: the output is not one strict JSON value (see Raw)".to_string(),
            }),
        };
        // the Feedback tab's lines and the text `y` copies: one feedback, made once
        let fb = ws.map(|ws| feedback(ws, ev));
        Detail {
            source: v.source.to_string(),
            // a native record's shape beside its id: `request-7 · openai-batch`
            title: match v.format.as_deref() {
                Some(format) if format != "capture" => format!("{} · {format}", esc(&v.id)),
                _ => esc(&v.id),
            },
            decision: v.decision,
            strip: strip(v.stage),
            errors: v.errors.iter().map(error_row).collect(),
            repair: v.repair.as_ref().map(repair_line),
            diff: diff_view(ev),
            proposal,
            raw: raw_view(ev, 0),
            response: response_lines(ev),
            contract: contract_view(ws, ev),
            repair_tab: repair_view(ws, ev),
            context: context_lines(ev),
            feedback: match &fb {
                Some(fb) => {
                    let mut out = vec![(
                        format!(
                            "decision {}  ·  regenerate with this feedback: {}",
                            fb.decision,
                            if fb.regenerate { "yes" } else { "no" }
                        ),
                        Role::Heading,
                    )];
                    out.extend(fb.message.lines().map(|l| (esc(l), Role::Text)));
                    out
                }
                None => vec![("the workspace is loading".into(), Role::Dim)],
            },
            feedback_text: fb.map(|fb| fb.message),
        }
    }
}

/// The Raw tab with error `error`'s position marked (the first located error's when that
/// one has no position).
pub fn raw_view(ev: &Evaluation, error: usize) -> Result<RawView, String> {
    let text = ev.raw_output.as_deref().ok_or_else(|| match ev.proposal {
        Some(_) => "the output was already structured (a tool call's arguments object): there is no raw text".to_string(),
        None if ev.capture.is_none() && ev.verdict.stage == Stage::Input => format!(
            "the capture record could not be read: {}",
            esc(ev.verdict.errors.first().map_or("", |f| f.message.as_str()))
        ),
        None => "no raw output: the capture failed before its output was read".to_string(),
    })?;
    if ev.capture.is_none() && ev.verdict.stage == Stage::Input {
        return Ok(record_view(text, ev));
    }
    let errors = &ev.verdict.errors;
    let located = errors
        .get(error)
        .filter(|f| f.span.is_some())
        .or_else(|| errors.iter().find(|f| f.span.is_some()));
    let mut view = marked_lines(text, located.and_then(|f| f.span));
    view.error = located.map(|f| {
        (
            f.at.map(|a| a.to_string()).unwrap_or_default(),
            esc(&f.message),
        )
    });
    Ok(view)
}

/// The Raw tab of a record that is not a capture (`INVALID_CAPTURE`): the record's text,
/// with the position where it stops being JSON when that is why.
fn record_view(text: &str, ev: &Evaluation) -> RawView {
    let bad = crate::core::stage::parse::parse_strict(text).err();
    let mut view = marked_lines(text, bad.as_ref().and_then(|f| f.span));
    view.error = ev.verdict.errors.first().map(|f| {
        (
            bad.as_ref()
                .and_then(|b| b.at)
                .map(|a| a.to_string())
                .unwrap_or_default(),
            esc(&format!("the capture record, as read: {}", f.message)),
        )
    });
    view
}

/// `text` split at `\n` and escaped, the characters of `span` marked (only its first when
/// it is longer than 40 bytes; an end-of-text cell when it starts at the end).
fn marked_lines(text: &str, span: Option<crate::core::verdict::Span>) -> RawView {
    let mut lines = Vec::new();
    let mut error_line = 0;
    let mut offset = 0usize;
    for (n, line) in text.split('\n').enumerate() {
        let mut pieces: Vec<(String, bool)> = Vec::new();
        for (i, c) in line.char_indices() {
            let at = offset + i;
            let marked = span.is_some_and(|s| {
                (s.start..s.end.max(s.start + 1)).contains(&at)
                    && (at == s.start || s.end - s.start <= 40)
            });
            if marked && at == span.map_or(usize::MAX, |s| s.start) {
                error_line = n;
            }
            push_char(&mut pieces, c, marked);
        }
        offset += line.len() + 1;
        lines.push(pieces);
    }
    if let Some(s) = span
        && s.start >= text.len()
    {
        // the problem is the end of the text itself: mark an end-of-text cell
        error_line = lines.len() - 1;
        if let Some(l) = lines.last_mut() {
            l.push(("⏎end".to_string(), true));
        }
    }
    RawView {
        lines,
        error: None,
        error_line,
    }
}

fn kv(out: &mut Vec<(String, Role)>, k: &str, v: &str) {
    out.push((format!("{k:<12}{}", esc(v)), Role::Text));
}

fn json_block(out: &mut Vec<(String, Role)>, title: &str, v: &Value) {
    out.push((title.to_string(), Role::Heading));
    out.extend(pretty(v).lines().map(|l| (esc(l), Role::Text)));
}

fn response_lines(ev: &Evaluation) -> Vec<(String, Role)> {
    let v = &ev.verdict;
    let mut out = Vec::new();
    if let Some(format) = &v.format {
        kv(&mut out, "format", format);
    }
    match &v.response {
        Some(r) => {
            let provider = if r.stream {
                format!("{} (stream)", r.provider)
            } else {
                r.provider.clone()
            };
            kv(&mut out, "provider", &provider);
            kv(
                &mut out,
                "stop reason",
                r.stop_reason.as_deref().unwrap_or("-"),
            );
            if let Some(n) = &r.native_stop_reason {
                kv(&mut out, "native stop", n);
            }
            if let Some(m) = &r.model {
                kv(&mut out, "model", m);
            }
            if let Some(t) = &r.tool {
                kv(&mut out, "tool", t);
            }
        }
        None => out.push(("the response stage was not reached".into(), Role::Dim)),
    }
    if let Some(Payload::Output {
        status,
        status_detail,
        ..
    }) = ev.capture.as_ref().map(|c| &c.payload)
    {
        kv(&mut out, "status", status.as_deref().unwrap_or("completed"));
        if let Some(d) = status_detail {
            kv(&mut out, "detail", d);
        }
    }
    kv(&mut out, "next action", &v.next_action);
    // the eval tool's own pass/fail beside verdict's (`docs/record-shapes.md#promptfoo`)
    if let Some(note) = crate::report::eval_note(v)
        && let Some(own) = note.strip_prefix("promptfoo: ")
    {
        kv(&mut out, "promptfoo", own);
    }
    if let Some(e) = &v.expect {
        let want = serde_json::to_string(&e.expect).unwrap_or_default();
        kv(
            &mut out,
            "expect",
            // the outcome first: a long expectation wraps, and a lone `met` line reads as noise
            &format!("{}: {want}", if e.met { "met" } else { "NOT MET" }),
        );
    }
    // the capture's own warnings; a contract's lint findings are on the Contract tab
    for w in v.warnings.iter().filter(|w| w.file.is_none()) {
        out.push((
            esc(&format!(
                "{} {}: {}",
                w.severity.as_deref().unwrap_or("warning"),
                w.code,
                w.message
            )),
            Role::Highlight,
        ));
    }
    if let Some(u) = v.response.as_ref().and_then(|r| r.usage.as_ref()) {
        json_block(&mut out, "usage", u);
    }
    if let Some(m) = &v.meta {
        json_block(&mut out, "meta", &Value::Object(m.map().clone()));
    }
    out
}

fn context_lines(ev: &Evaluation) -> Vec<(String, Role)> {
    let mut out = Vec::new();
    let c = ev.capture.as_ref();
    match c.and_then(|c| c.context.as_ref()) {
        Some(ctx) => json_block(
            &mut out,
            "context (trusted, server-side)",
            &Value::Object(ctx.clone()),
        ),
        None => out.push(("this capture has no context".into(), Role::Dim)),
    }
    match c.and_then(|c| c.intent.as_ref()) {
        Some(i) => json_block(&mut out, "confirmed intent", &Value::Object(i.clone())),
        None => out.push(("this capture has no confirmed intent".into(), Role::Dim)),
    }
    out
}

fn contract_view(ws: Option<&Workspace>, ev: &Evaluation) -> Result<ContractView, String> {
    let v = &ev.verdict;
    let unread = ev.capture.is_none() && v.stage == Stage::Input;
    let name = match v.contract.as_deref() {
        Some(name) => name,
        None if unread => return Err(unread_contract(ws)),
        None => return Err("no contract: the capture names none the workspace has".to_string()),
    };
    let ws = ws.ok_or_else(|| "the workspace is loading".to_string())?;
    let c = ws
        .contracts
        .get(name)
        .ok_or_else(|| format!("contract {} is not in the workspace", esc(name)))?;
    let paths: Vec<Option<&str>> = v
        .errors
        .iter()
        .map(|f| {
            f.schema_path
                .as_deref()
                .filter(|_| f.stage == Stage::Schema)
        })
        .collect();
    let mut rules = Vec::new();
    let lint = c.warnings();
    if !lint.is_empty() {
        let n = lint.len();
        rules.push((
            format!("lint  {n} finding{}", if n == 1 { "" } else { "s" }),
            Role::Heading,
        ));
        for w in &lint {
            // as `check` prints them: place, severity[CODE], message
            let place = match (&w.file, w.at) {
                (Some(f), Some(at)) => format!("{f}:{at} "),
                (Some(f), None) => format!("{f} "),
                _ => String::new(),
            };
            let severity = w.severity.as_deref().unwrap_or("warning");
            rules.push((
                esc(&format!("{place}{severity}[{}] {}", w.code, w.message)),
                if severity == "info" {
                    Role::Text
                } else {
                    Role::Highlight
                },
            ));
        }
        rules.push((String::new(), Role::Text));
    }
    match &c.rules {
        Some(rs) => {
            rules.push((format!("rules  {}", esc(&rs.file)), Role::Heading));
            let failing = v.errors.first().filter(|f| f.stage == Stage::Business);
            for r in &rs.rules {
                let hit = failing.is_some_and(|f| {
                    f.keyword.as_deref() == Some(format!("rule[{}]", r.index).as_str())
                        || (f.keyword.is_none() && f.reason == r.reason)
                });
                let role = if hit { Role::Highlight } else { Role::Text };
                rules.push((
                    esc(&format!(
                        "[{}] {}  {}{}  (line {})",
                        r.index,
                        r.reason,
                        r.decision,
                        r.field
                            .as_deref()
                            .map(|f| format!("  {f}"))
                            .unwrap_or_default(),
                        r.line
                    )),
                    role,
                ));
                rules.push((
                    esc(&format!("    {}", r.source)),
                    if hit { role } else { Role::Dim },
                ));
            }
            if let Some(fields) = &rs.intent_fields {
                rules.push((
                    esc(&format!("[intent] fields = {}", fields.join(", "))),
                    Role::Text,
                ));
            }
        }
        None => rules.push(("no rules file for this contract".into(), Role::Dim)),
    }
    let drift = ev
        .sent
        .as_ref()
        .filter(|_| v.contract_from.as_deref() != Some("request"))
        .map(|sent| drift_view(ws, ev, c, sent));
    Ok(ContractView {
        heading: esc(&format!("{}  {}", c.name, c.file.display())),
        schema: JsonView::new(&c.text, &paths),
        rules,
        drift,
    })
}

/// The Contract tab of a record that could not be read as a capture: which contract would
/// apply to it (the record's own `contract` is unknown).
fn unread_contract(ws: Option<&Workspace>) -> String {
    let head =
        "the capture record could not be read (see Raw), so the contract it names is unknown";
    let Some(ws) = ws else {
        return format!("{head}; the workspace is loading");
    };
    let by_name = &ws.contracts.by_name;
    match ws.config.default_contract.as_deref() {
        Some(d) => format!(
            "{head}; without one, default_contract {} (verdict.toml) would apply",
            esc(d)
        ),
        None if by_name.len() == 1 => format!(
            "{head}; without one, {}, the workspace's only contract, would apply",
            esc(by_name.keys().next().map_or("", String::as_str))
        ),
        None => format!("{head}; the workspace has no default_contract"),
    }
}
