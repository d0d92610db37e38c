//! `check --schema`'s fast path for JSONL lines: an instance that parses and meets the
//! schema is validated in place, no verdict is built for it, and it is printed from a
//! template of its log's passing item (checked against the sink's own rendering); every
//! other line takes the full path. The report is byte for byte the full path's.

use super::{LineAt, LineBlock, Out, Render};
use crate::core::item::Item;
use crate::core::record_ref::RecordRef;
use crate::core::verdict::{Finding, Verdict};
use std::sync::Arc;

/// `check --schema`'s fast path for JSONL lines: an instance that parses and meets the
/// schema is validated in place (no copy of the line, no verdict built) and reported from
/// its log's [`PassModel`]; the rest take the full path.
pub(super) struct Fast<'a> {
    /// An instance text's findings (none: it passes), as `check` finds them.
    pub(super) errors: &'a (dyn Fn(&str) -> Vec<Finding> + Sync),
    /// The verdict `check` gives the instance at `source` (a log's line) with these findings.
    pub(super) verdict: &'a (dyn Fn(RecordRef, Vec<Finding>) -> Verdict + Sync),
}

/// The report of one log's passing instances: a model item, and the sink's rendering of it
/// split around the line number, so a passing line is rendered by copying bytes.
pub(super) struct PassModel {
    /// A passing item of the log (line 0).
    pub(super) item: Item,
    /// The rendered model split where the line number goes (`None`: the sink has no
    /// renderer, or its output for a passing item is not the model's with the line number
    /// substituted, so each item is rendered in full).
    template: Option<Vec<Vec<u8>>>,
    /// `-q`: passing lines are counted, not rendered.
    quiet: bool,
}

impl PassModel {
    /// Stands in for the line number while the template is made: a Unicode noncharacter,
    /// printed unescaped by every format.
    const MARK: &'static str = "\u{FDD0}";

    /// The model of log `rel` (shown as `path`); the template is checked against the
    /// sink's own rendering of two items at `probe` lines.
    pub(super) fn new(
        rel: &Arc<str>,
        path: Arc<str>,
        verdict: &dyn Fn(RecordRef, Vec<Finding>) -> Verdict,
        render: Option<&Render>,
        probe: [usize; 2],
    ) -> PassModel {
        let mut model = PassModel {
            item: Item {
                verdict: verdict(RecordRef::new(rel.clone(), Some(0)), Vec::new()),
                path,
                line: 0,
                column: 1,
                rendered: None,
            },
            template: None,
            quiet: render.is_none_or(|r| r.quiet),
        };
        let Some(render) = render else { return model };
        if rel.contains(Self::MARK) {
            return model;
        }
        let mut marked = model.item.clone();
        marked.verdict.id = format!("{rel}:{}", Self::MARK);
        // the mark where the line number goes: a "file" that prints as `rel:MARK`
        marked.verdict.source = RecordRef::new(marked.verdict.id.as_str(), None);
        let mut bytes = Vec::new();
        (render.renderer)(&marked, &mut bytes);
        let pieces = split_bytes(&bytes, Self::MARK.as_bytes());
        // the template must give exactly what the renderer gives
        for line in probe {
            let mut real = Vec::new();
            (render.renderer)(&model.at(line), &mut real);
            let mut made = Vec::new();
            fill(&pieces, line, &mut made);
            if real != made {
                return model;
            }
        }
        model.template = Some(pieces);
        model
    }

    /// The passing item at `line`.
    pub(super) fn at(&self, line: usize) -> Item {
        let mut item = self.item.clone();
        item.verdict.source = self.item.verdict.source.at_line(line);
        item.verdict.id = item.verdict.source.as_str().to_string();
        item.line = line;
        item
    }
}

/// `bytes` split at every `mark`.
fn split_bytes(bytes: &[u8], mark: &[u8]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut rest = bytes;
    while let Some(at) = rest.windows(mark.len()).position(|w| w == mark) {
        pieces.push(rest[..at].to_vec());
        rest = &rest[at + mark.len()..];
    }
    pieces.push(rest.to_vec());
    pieces
}

/// About how long a line rendered from the template is (line numbers of 8 digits).
fn line_len(pieces: &[Vec<u8>]) -> usize {
    pieces.iter().map(|p| p.len() + 8).sum()
}

/// Appends the template's pieces with `line` between them.
fn fill(pieces: &[Vec<u8>], line: usize, out: &mut Vec<u8>) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(line).as_bytes();
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(digits);
        }
        out.extend_from_slice(piece);
    }
}

/// A run of consecutive passing instances of one log.
pub(super) struct Passes {
    pub(super) model: Arc<PassModel>,
    /// Their 1-based line numbers.
    pub(super) lines: Vec<usize>,
    /// Their rendering back to back, from the model's template (empty under `-q`); `None`
    /// when the model has no template.
    pub(super) rendered: Option<Vec<u8>>,
}

impl Passes {
    /// An empty run with room for `room` line numbers (at most 8). Its rendering starts
    /// with room for one line and grows by doubling, so runs of one passing line between
    /// failing ones hold no more than they print.
    pub(super) fn new(model: &Arc<PassModel>, room: usize) -> Passes {
        Passes {
            model: model.clone(),
            lines: Vec::with_capacity(room.min(8)),
            rendered: model.template.as_ref().map(|_| Vec::new()),
        }
    }

    /// Moves a non-empty run to `outs`, leaving an empty one with room for `room` lines.
    pub(super) fn flush(&mut self, outs: &mut Vec<Out>, model: &Arc<PassModel>, room: usize) {
        if !self.lines.is_empty() {
            outs.push(Out::Passes(std::mem::replace(
                self,
                Passes::new(model, room),
            )));
        }
    }

    pub(super) fn push(&mut self, line: usize) {
        self.lines.push(line);
        if let (Some(out), Some(pieces)) = (&mut self.rendered, &self.model.template)
            && !self.model.quiet
        {
            if out.capacity() == 0 {
                out.reserve_exact(line_len(pieces));
            }
            fill(pieces, line, out);
        }
    }
}

/// The fast path over some lines of a block: runs of passing lines, and an item for each
/// other line (`failed`: the item of a verdict at a line; `slow`: the full path for a line
/// that is not text).
pub(super) fn fast_part(
    lines: &[(usize, LineAt)],
    block: &LineBlock,
    fast: &Fast<'_>,
    model: &Arc<PassModel>,
    failed: &dyn Fn(Verdict, usize) -> Item,
    slow: &dyn Fn(usize, &LineAt) -> Item,
) -> Vec<Out> {
    let mut outs = Vec::new();
    let mut run = Passes::new(model, lines.len());
    for (i, (line_no, at)) in lines.iter().enumerate() {
        let text = at
            .as_ref()
            .ok()
            .and_then(|range| std::str::from_utf8(&block.bytes[range.clone()]).ok());
        let Some(text) = text else {
            // not UTF-8, too long: as `check` says
            run.flush(&mut outs, model, lines.len() - i);
            outs.push(Out::Item(Box::new(slow(*line_no, at))));
            continue;
        };
        let errors = (fast.errors)(text);
        if errors.is_empty() {
            run.push(*line_no);
            continue;
        }
        run.flush(&mut outs, model, lines.len() - i);
        let verdict = (fast.verdict)(RecordRef::new(block.rel.clone(), Some(*line_no)), errors);
        outs.push(Out::Item(Box::new(failed(verdict, *line_no))));
    }
    run.flush(&mut outs, model, 0);
    outs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::verdict::Warning;
    use crate::report::{self, ReportOptions, Sink};

    /// The renderers of the sinks that have one: human (plain and coloured), json, jsonl.
    fn renderers() -> Vec<(&'static str, Render)> {
        let human = |color, instances| {
            let opts = ReportOptions {
                color,
                instances,
                ..ReportOptions::default()
            };
            report::human::Human::new(Vec::new(), &opts).renderer()
        };
        [
            ("human", human(false, false)),
            ("human colour", human(true, false)),
            ("human instances", human(false, true)),
            ("human instances colour", human(true, true)),
            ("json", report::json::Json::new(Vec::new()).renderer()),
            ("jsonl", report::json::JsonLines::new(Vec::new()).renderer()),
        ]
        .into_iter()
        .map(|(name, r)| {
            let renderer = r.expect("this sink renders on the validation threads");
            (
                name,
                Render {
                    renderer,
                    quiet: false,
                },
            )
        })
        .collect()
    }

    #[test]
    fn pass_templates_print_what_the_sinks_print() {
        let verdict = |source: RecordRef, errors: Vec<Finding>| {
            let mut v = Verdict::from_errors(source.to_string(), source, Some("s".into()), errors);
            v.warnings = vec![Warning {
                code: "FORMAT_NOT_ASSERTED".into(),
                severity: Some("warning".into()),
                file: Some("s.schema.json".into()),
                pointer: None,
                at: None,
                message: "`format` \"email\" \u{1b}[31m".into(),
            }];
            v
        };
        let names = [
            "in/log.jsonl",
            "odd \"quoted\" \\ back\tslash \u{1b}[31m é 🙂.jsonl",
            "mark \u{FDD0} in the name.jsonl",
        ];
        for rel in names {
            for (sink, render) in renderers() {
                let model =
                    PassModel::new(&rel.into(), Arc::from(rel), &verdict, Some(&render), [7, 8]);
                // every sink with a renderer gets a template, unless the name holds the mark
                assert_eq!(
                    model.template.is_some(),
                    !rel.contains(PassModel::MARK),
                    "{sink} {rel:?}"
                );
                let mut run = Passes::new(&Arc::new(model), 4);
                let lines = [1, 9, 10, 99, 12_345, 1_000_000, usize::MAX];
                let mut want = Vec::new();
                for line in lines {
                    run.push(line);
                    (render.renderer)(&run.model.at(line), &mut want);
                }
                match &run.rendered {
                    Some(got) => assert_eq!(
                        String::from_utf8_lossy(got),
                        String::from_utf8_lossy(&want),
                        "{sink} {rel:?}"
                    ),
                    None => assert!(rel.contains(PassModel::MARK)),
                }
                assert_eq!(run.lines, lines);
            }
        }
    }

    /// The pass model of log `rel` for the jsonl sink (`quiet`: `-q`).
    fn jsonl_model(
        rel: &str,
        verdict: &dyn Fn(RecordRef, Vec<Finding>) -> Verdict,
        quiet: bool,
    ) -> Arc<PassModel> {
        let (_, mut render) = renderers().remove(3);
        render.quiet = quiet;
        Arc::new(PassModel::new(
            &rel.into(),
            Arc::from(rel),
            verdict,
            Some(&render),
            [1, 2],
        ))
    }

    #[test]
    fn quiet_runs_count_lines_without_rendering_them() {
        let verdict = |source: RecordRef, errors: Vec<Finding>| {
            Verdict::from_errors(source.to_string(), source, None, errors)
        };
        let model = jsonl_model("l.jsonl", &verdict, true);
        let mut run = Passes::new(&model, 64);
        run.push(3);
        run.push(4);
        assert_eq!(run.lines, [3, 4]);
        assert_eq!(run.rendered, Some(Vec::new()));
    }

    #[test]
    fn runs_between_failing_lines_hold_only_what_they_print() {
        // passing and failing lines alternate: one run of one passing line per failing one
        let mut block = LineBlock {
            rel: "alt.jsonl".into(),
            bytes: Vec::new(),
            lines: Vec::new(),
        };
        for n in 1..=256 {
            let start = block.bytes.len();
            block
                .bytes
                .extend_from_slice(if n % 2 == 0 { b"pass" } else { b"fail" });
            block.lines.push((n, Ok(start..block.bytes.len())));
        }
        let errors = |text: &str| match text {
            "pass" => Vec::new(),
            _ => vec![Finding::new(
                crate::core::verdict::Stage::Schema,
                crate::core::verdict::Reason::SCHEMA_MISMATCH,
                "no",
            )],
        };
        let verdict = |source: RecordRef, errors: Vec<Finding>| {
            Verdict::from_errors(source.to_string(), source, Some("s".into()), errors)
        };
        let fast = Fast {
            errors: &errors,
            verdict: &verdict,
        };
        let model = jsonl_model("alt.jsonl", &verdict, false);
        let item = |verdict: Verdict, line: usize| Item {
            verdict,
            path: Arc::from("alt.jsonl"),
            line,
            column: 1,
            rendered: None,
        };
        let outs = fast_part(&block.lines, &block, &fast, &model, &item, &|_, _| {
            unreachable!("every line is text")
        });
        assert_eq!(outs.len(), 256);
        let mut passes = 0;
        for (i, out) in outs.iter().enumerate() {
            match out {
                Out::Item(it) => assert_eq!((i % 2, it.line), (0, i + 1)),
                Out::Passes(run) => {
                    assert_eq!((i % 2, run.lines.as_slice()), (1, [i + 1].as_slice()));
                    let bytes = run.rendered.as_ref().unwrap();
                    assert_eq!(bytes.capacity(), line_len(model.template.as_ref().unwrap()));
                    assert!(bytes.len() <= bytes.capacity());
                    assert!(run.lines.capacity() <= 8);
                    passes += 1;
                }
                Out::Counted(_) => panic!("the fast path never counts a line alone"),
            }
        }
        assert_eq!(passes, 128);
    }
}
