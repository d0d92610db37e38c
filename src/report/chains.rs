//! The chain report as text (`docs/chains.md#the-report`): the funnel line `check`'s human
//! report prints after its own funnel, and the table of `verdict chains`. Chain ids,
//! reasons, pointers and contract names are untrusted text: each goes through
//! [`for_terminal`].

use crate::core::chain::ChainReport;
use crate::core::chain::outcome::{ChainRow, Waste};
use crate::core::chain::summary::{ChainSummary, Spread};
use crate::core::escape::for_terminal;
use std::io::{self, Write};

/// `chains 7 > first-pass 1 > recovered 3 > unrecovered 3`.
pub fn funnel_line(s: &ChainSummary) -> String {
    format!(
        "chains {} > first-pass {} > recovered {} > unrecovered {}",
        s.chains, s.first_pass, s.recovered, s.unrecovered
    )
}

/// `attempts 18; wasted 2 (after reject 1, after recheck 0, same proposal 1) in 2 chains;
/// over budget 1`.
pub fn counts_line(s: &ChainSummary) -> String {
    let w = |k: Waste| s.wasted_attempts.get(&k).copied().unwrap_or(0);
    let wasted: usize = s.wasted_attempts.values().sum();
    format!(
        "attempts {}; wasted {wasted} (after reject {}, after recheck {}, same proposal {}) in {} chain{}; over budget {}",
        s.attempts,
        w(Waste::AfterReject),
        w(Waste::AfterRecheck),
        w(Waste::SameProposal),
        s.wasted_chains,
        if s.wasted_chains == 1 { "" } else { "s" },
        s.over_budget
    )
}

fn spread(s: Option<Spread>) -> String {
    s.map_or("-".into(), |s| format!("{}/{}/{}", s.p50, s.p90, s.max))
}

/// How a column of [`write_columns`] is aligned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    /// Text: padded on the right.
    Left,
    /// Counts and rates: padded on the left.
    Right,
}

/// Writes `header` and `rows` as columns two spaces apart, each line indented by two
/// spaces: every cell padded to its column's widest cell (counted in characters, after
/// [`for_terminal`], which the caller has applied), the last column left unpadded so no
/// line ends in spaces.
fn write_columns(
    out: &mut dyn Write,
    columns: &[(&str, Align)],
    rows: &[Vec<String>],
) -> io::Result<()> {
    write_columns_each(out, None, columns, &mut |f| {
        rows.iter().try_for_each(|r| f(r))
    })
}

/// What takes a row's cells, one row at a time.
type Cells<'a> = dyn FnMut(&[String]) -> io::Result<()> + 'a;

/// [`write_columns`] over rows handed to the given function one at a time, twice (once for
/// the widths, once to write them), so that none is kept, after an empty line and `title`
/// when there is one; nothing at all is written when there is no row.
fn write_columns_each(
    out: &mut dyn Write,
    title: Option<&str>,
    columns: &[(&str, Align)],
    rows: &mut dyn FnMut(&mut Cells<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let mut widths: Vec<usize> = columns.iter().map(|c| c.0.chars().count()).collect();
    let mut any = false;
    rows(&mut |cells| {
        any = true;
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
        Ok(())
    })?;
    if !any {
        return Ok(());
    }
    if let Some(title) = title {
        writeln!(out)?;
        writeln!(out, "{title}")?;
    }
    let mut line_of = |cells: &[String]| {
        let mut line = String::from("  ");
        for (i, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.chars().count());
            let last = i + 1 == cells.len();
            match columns[i].1 {
                Align::Right => {
                    line.push_str(&pad);
                    line.push_str(cell);
                }
                Align::Left if last => line.push_str(cell),
                Align::Left => {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
            }
            if !last {
                line.push_str("  ");
            }
        }
        writeln!(out, "{}", line.trim_end())
    };
    let header: Vec<String> = columns.iter().map(|(h, _)| (*h).to_owned()).collect();
    line_of(&header)?;
    rows(&mut |cells| line_of(cells))
}

/// The table of `verdict chains` (`docs/chains.md#the-summary`): the funnel, per first
/// failure, what never recovered, the budget advice, then the chains that are unrecovered
/// or flagged, each section's columns aligned under a header row.
///
/// # Errors
/// Writing failed.
pub fn write_table(out: &mut dyn Write, r: &ChainReport) -> io::Result<()> {
    use Align::{Left, Right};
    let s = &r.summary;
    writeln!(out, "{}", funnel_line(s))?;
    writeln!(out, "{}", counts_line(s))?;
    if !s.by_first_failure.is_empty() {
        writeln!(out)?;
        writeln!(out, "by first failure")?;
        let rows: Vec<Vec<String>> = s
            .by_first_failure
            .iter()
            .map(|f| {
                vec![
                    f.stage.to_string(),
                    for_terminal(f.reason.as_str()).into_owned(),
                    f.pointer.as_deref().map_or("-".into(), |p| {
                        for_terminal(if p.is_empty() { "\"\"" } else { p }).into_owned()
                    }),
                    f.chains.to_string(),
                    f.recovered.to_string(),
                    format!("{:.0}%", f.recovery_rate * 100.0),
                    spread(f.attempts_to_recover),
                    spread(f.tokens_to_recover),
                ]
            })
            .collect();
        write_columns(
            out,
            &[
                ("stage", Left),
                ("reason", Left),
                ("pointer", Left),
                ("chains", Right),
                ("recovered", Right),
                ("rate", Right),
                ("attempts p50/p90/max", Left),
                ("tokens p50/p90/max", Left),
            ],
            &rows,
        )?;
    }
    if !s.unrecovered_by_reason.is_empty() {
        writeln!(out)?;
        writeln!(out, "never recovered, by the last attempt's reason")?;
        let rows: Vec<Vec<String>> = s
            .unrecovered_by_reason
            .iter()
            .map(|u| {
                vec![
                    for_terminal(u.reason.as_str()).into_owned(),
                    u.chains.to_string(),
                ]
            })
            .collect();
        write_columns(out, &[("reason", Left), ("chains", Right)], &rows)?;
    }
    if !s.budget_advice.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "budget advice: the smallest max_attempts keeping 90% / 95% / 99% of the recoveries seen"
        )?;
        let rows: Vec<Vec<String>> = s
            .budget_advice
            .iter()
            .map(|b| {
                vec![
                    for_terminal(b.contract.as_deref().unwrap_or("(no contract)")).into_owned(),
                    b.p90.to_string(),
                    b.p95.to_string(),
                    b.p99.to_string(),
                    b.recoveries.to_string(),
                ]
            })
            .collect();
        write_columns(
            out,
            &[
                ("contract", Left),
                ("90%", Right),
                ("95%", Right),
                ("99%", Right),
                ("recoveries", Right),
            ],
            &rows,
        )?;
    }
    // the unrecovered or flagged chains, then why each flagged one is: their rows made
    // again for each pass over them (`ChainReport::each_row`), none kept
    let notable = |row: &ChainRow| {
        row.outcome == crate::core::chain::outcome::Outcome::Unrecovered || !row.flags.is_empty()
    };
    write_columns_each(
        out,
        Some("unrecovered or flagged chains"),
        &[
            ("chain", Left),
            ("outcome", Left),
            ("attempts", Right),
            ("last", Left),
            ("flags", Left),
        ],
        &mut |f| {
            r.each_row(|row| {
                if !notable(row) {
                    return Ok(());
                }
                f(&[
                    for_terminal(&row.chain).into_owned(),
                    row.outcome.as_str().to_owned(),
                    row.attempts.to_string(),
                    row.last_reason.as_ref().map_or("ready".to_string(), |r| {
                        for_terminal(r.as_str()).into_owned()
                    }),
                    row.flags.join(", "),
                ])
            })
        },
    )?;
    // why the flagged ones are flagged: each wasted attempt, each budget overrun
    let mut why = |f: &mut Cells<'_>| {
        r.each_row(|row| {
            if !notable(row) {
                return Ok(());
            }
            let chain = for_terminal(&row.chain);
            for w in &row.wasted {
                let after = w.after.as_ref().map_or(String::new(), |r| format!(" {r}"));
                let what = match w.why {
                    Waste::AfterReject => format!("after reject{}", for_terminal(&after)),
                    Waste::AfterRecheck => format!("after recheck{}", for_terminal(&after)),
                    Waste::SameProposal => "the same proposal as the attempt before".into(),
                };
                f(&[
                    chain.clone().into_owned(),
                    format!("attempt {} wasted: {what}", w.attempt),
                ])?;
            }
            for b in &row.over_budget {
                f(&[chain.clone().into_owned(), format!("over budget: {b}")])?;
            }
            Ok(())
        })
    };
    write_columns_each(
        out,
        Some("why they are flagged"),
        &[("chain", Left), ("why", Left)],
        &mut why,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::chain::outcome::{ChainRow, Outcome};
    use crate::core::chain::summary::ChainSummary;
    use crate::core::verdict::{Decision, Reason, Stage};

    fn row(chain: &str, attempts: usize, flags: Vec<&'static str>) -> ChainRow {
        ChainRow {
            contract: Some("c".into()),
            attempts,
            outcome: Outcome::Unrecovered,
            last_stage: Stage::Schema,
            last_decision: Decision::Regenerate,
            last_reason: Some(Reason::SCHEMA_MISMATCH),
            flags,
            ..ChainRow::bare(chain)
        }
    }

    #[test]
    fn the_chain_columns_align_after_escaping_and_end_without_spaces() {
        // an id with an escape sequence is wider once escaped: the columns follow it
        let rows = vec![
            row("a", 12, vec![]),
            row("evil\u{1b}[2Jid", 3, vec!["wasted"]),
        ];
        let r = ChainReport {
            summary: ChainSummary::of(&rows),
            rows,
            ..ChainReport::default()
        };
        let mut out = Vec::new();
        write_table(&mut out, &r).unwrap();
        let text = String::from_utf8(out).unwrap();
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "unrecovered or flagged chains")
            .skip(1)
            .take(3)
            .collect();
        assert_eq!(
            table,
            [
                "  chain            outcome      attempts  last             flags",
                "  a                unrecovered        12  SCHEMA_MISMATCH",
                "  evil\\u{1b}[2Jid  unrecovered         3  SCHEMA_MISMATCH  wasted",
            ]
        );
        assert!(!text.contains('\u{1b}'));
        assert!(text.lines().all(|l| !l.ends_with(' ')), "{text}");
    }
}
