//! The chain report as text (`docs/chains.md#the-report`): the funnel line `check`'s human
//! report prints after its own funnel, and the table of `verdict chains`. Chain ids,
//! reasons, pointers and contract names are untrusted text: each goes through
//! [`for_terminal`].

use crate::core::chain::ChainReport;
use crate::core::chain::outcome::Waste;
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

/// The table of `verdict chains`: the funnel, per first failure, what never recovered,
/// the wasted attempts, the budget advice, then one line per chain that is unrecovered or
/// flagged.
///
/// # Errors
/// Writing failed.
pub fn write_table(out: &mut dyn Write, r: &ChainReport) -> io::Result<()> {
    let s = &r.summary;
    writeln!(out, "{}", funnel_line(s))?;
    writeln!(out, "{}", counts_line(s))?;
    if !s.by_first_failure.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "first failure (stage reason pointer): chains, recovered, rate, attempts to recover p50/p90/max, tokens to recover p50/p90/max"
        )?;
        for f in &s.by_first_failure {
            let pointer = f.pointer.as_deref().map_or(String::new(), |p| {
                format!(" {}", for_terminal(if p.is_empty() { "\"\"" } else { p }))
            });
            writeln!(
                out,
                "  {} {}{pointer}: {}, {}, {:.0}%, {}, {}",
                f.stage,
                for_terminal(f.reason.as_str()),
                f.chains,
                f.recovered,
                f.recovery_rate * 100.0,
                spread(f.attempts_to_recover),
                spread(f.tokens_to_recover)
            )?;
        }
    }
    if !s.unrecovered_by_reason.is_empty() {
        writeln!(out)?;
        writeln!(out, "never recovered (last attempt's reason): chains")?;
        for u in &s.unrecovered_by_reason {
            writeln!(out, "  {}: {}", for_terminal(u.reason.as_str()), u.chains)?;
        }
    }
    if !s.budget_advice.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "budget advice (smallest max_attempts keeping 90% / 95% / 99% of the recoveries seen)"
        )?;
        for b in &s.budget_advice {
            writeln!(
                out,
                "  {}: {} / {} / {} ({} recover{})",
                for_terminal(b.contract.as_deref().unwrap_or("(no contract)")),
                b.p90,
                b.p95,
                b.p99,
                b.recoveries,
                if b.recoveries == 1 { "y" } else { "ies" }
            )?;
        }
    }
    let notable: Vec<_> = r
        .rows
        .iter()
        .filter(|row| {
            row.outcome == crate::core::chain::outcome::Outcome::Unrecovered
                || !row.flags.is_empty()
        })
        .collect();
    if !notable.is_empty() {
        writeln!(out)?;
        writeln!(out, "unrecovered or flagged chains")?;
        for row in notable {
            let last = row
                .last_reason
                .as_ref()
                .map_or("ready".to_string(), |r| r.to_string());
            let flags = if row.flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", row.flags.join(", "))
            };
            writeln!(
                out,
                "  {} {}: {} attempt{}, last {}{flags}",
                for_terminal(&row.chain),
                row.outcome.as_str(),
                row.attempts,
                if row.attempts == 1 { "" } else { "s" },
                for_terminal(&last)
            )?;
            for w in &row.wasted {
                let after = w.after.as_ref().map_or(String::new(), |r| format!(" {r}"));
                let why = match w.why {
                    Waste::AfterReject => format!("after reject{}", for_terminal(&after)),
                    Waste::AfterRecheck => format!("after recheck{}", for_terminal(&after)),
                    Waste::SameProposal => "the same proposal as the attempt before".into(),
                };
                writeln!(out, "    attempt {} wasted: {why}", w.attempt)?;
            }
            for b in &row.over_budget {
                writeln!(out, "    over budget: {b}")?;
            }
        }
    }
    Ok(())
}
