//! One chain's outcome (`docs/chains.md#outcomes`): its attempts in order, `first-pass`,
//! `recovered` or `unrecovered`, the `wasted` and `over-budget` flags, and the feedback's
//! effects.

use super::effect::{Effect, classify};
use super::{CHAIN_ATTEMPTS, CHAIN_ORDER, LinkedBy, StepView};
use crate::core::config::Budget;
use crate::core::escape::quote;
use crate::core::verdict::{Decision, Reason, Stage, Warning};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most wasted attempts and effects a row lists (the counts count them all): a chain of
/// 100,000 attempts keeps a bounded row.
pub const MAX_LISTED: usize = 100;

/// A chain's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Its first attempt is ready (and so is its last).
    FirstPass,
    /// Its last attempt is ready, its first is not.
    Recovered,
    /// Its last attempt fails.
    Unrecovered,
}

impl Outcome {
    /// The name printed in reports (`first-pass`, `recovered`, `unrecovered`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::FirstPass => "first-pass",
            Outcome::Recovered => "recovered",
            Outcome::Unrecovered => "unrecovered",
        }
    }
}

/// Why an attempt was wasted (`docs/chains.md#flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Waste {
    /// The attempt before it was decided `reject`: no retry can fix it.
    AfterReject,
    /// The attempt before it was decided `recheck`: state must be re-fetched or the user
    /// asked first, which a log does not show.
    AfterRecheck,
    /// After `regenerate`, it sent the same proposal as the attempt before (same
    /// canonical digest).
    SameProposal,
}

impl Waste {
    /// The name printed in reports (`after-reject`, `after-recheck`, `same-proposal`).
    pub fn as_str(self) -> &'static str {
        match self {
            Waste::AfterReject => "after-reject",
            Waste::AfterRecheck => "after-recheck",
            Waste::SameProposal => "same-proposal",
        }
    }
}

/// One wasted attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wasted {
    /// Its 1-based position in the chain.
    pub attempt: usize,
    /// Why.
    pub why: Waste,
    /// The reason of the attempt before it.
    pub after: Option<Reason>,
}

/// The feedback's effect at one pointer of one `regenerate` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointerEffect {
    /// The position (1-based) of the `regenerate` step.
    pub attempt: usize,
    /// The pointer it reported.
    pub pointer: String,
    /// What the next attempt did with it.
    pub effect: Effect,
}

/// The first failing attempt's stage, reason and pointer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FirstFailure {
    /// Its stage.
    pub stage: Stage,
    /// Its reason.
    pub reason: Reason,
    /// Its first finding's pointer.
    pub pointer: Option<String>,
}

/// One chain's row (`docs/chains.md#the-report`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainRow {
    /// The chain's id.
    pub chain: String,
    /// How its attempts were linked.
    pub linked_by: LinkedBy,
    /// Its first attempt's contract (with one, else the first attempt that has one).
    pub contract: Option<String>,
    /// How many attempts.
    pub attempts: usize,
    /// Its outcome.
    pub outcome: Outcome,
    /// For `recovered`: the position (1-based) of the first attempt of its last run of
    /// ready attempts.
    pub recovered_at: Option<usize>,
    /// The first attempt's failure; `None` for `first-pass`.
    pub first_failure: Option<FirstFailure>,
    /// The last attempt's stage.
    pub last_stage: Stage,
    /// The last attempt's decision.
    pub last_decision: Decision,
    /// The last attempt's reason.
    pub last_reason: Option<Reason>,
    /// The tokens of every attempt that logged usage, summed; `None` when none did.
    pub tokens: Option<u64>,
    /// For `recovered`: the tokens up to and including the recovering attempt; `None` when
    /// none of those logged usage.
    pub tokens_to_recover: Option<u64>,
    /// `wasted` and `over-budget`, those that apply.
    pub flags: Vec<&'static str>,
    /// How many attempts were wasted.
    pub wasted_count: usize,
    /// How many attempts were wasted, by why.
    pub wasted_by: BTreeMap<Waste, usize>,
    /// The wasted attempts, the first [`MAX_LISTED`].
    pub wasted: Vec<Wasted>,
    /// Why the chain is over budget (`attempts 5 > max_attempts 3`), empty when it is not.
    pub over_budget: Vec<String>,
    /// Counts of the feedback effects (`fixed`, `moved`, `persisted`).
    pub effect_counts: BTreeMap<Effect, usize>,
    /// The effects, the first [`MAX_LISTED`].
    pub effects: Vec<PointerEffect>,
    /// Each attempt's source, the first [`MAX_LISTED`], in chain order.
    pub sources: Vec<String>,
}

#[cfg(test)]
impl ChainRow {
    /// A test row: chain `chain`, one attempt, first pass, linked by its record, nothing
    /// flagged, counted or listed (fields set with `..ChainRow::bare(chain)`).
    pub(crate) fn bare(chain: &str) -> ChainRow {
        ChainRow {
            chain: chain.into(),
            linked_by: LinkedBy::Record,
            contract: None,
            attempts: 1,
            outcome: Outcome::FirstPass,
            recovered_at: None,
            first_failure: None,
            last_stage: Stage::Ready,
            last_decision: Decision::ReadyForCommit,
            last_reason: None,
            tokens: None,
            tokens_to_recover: None,
            flags: Vec::new(),
            wasted_count: 0,
            wasted_by: Default::default(),
            wasted: Vec::new(),
            over_budget: Vec::new(),
            effect_counts: Default::default(),
            effects: Vec::new(),
            sources: Vec::new(),
        }
    }
}

/// How a chain's steps were ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordered {
    /// By every step's `[chains] order` value (then attempt number, then place).
    ByOrder,
    /// By attempt number (steps without one last), then file name, then line.
    ByAttempt,
}

/// Orders a chain's steps (`docs/chains.md#order`): by `order` when every step has a
/// usable one, else by attempt number, then file name, then line; ties by attempt number,
/// then place, so the result never depends on the order they were added in.
pub fn order(steps: &mut [StepView<'_>]) -> Ordered {
    let attempt = |s: &StepView<'_>| s.attempt().unwrap_or(u64::MAX);
    if !steps.is_empty() && steps.iter().all(|s| s.order().is_some()) {
        steps.sort_by(|a, b| {
            let (x, y) = (a.order().unwrap_or(0.0), b.order().unwrap_or(0.0));
            x.total_cmp(&y)
                .then(attempt(a).cmp(&attempt(b)))
                .then_with(|| a.cmp_source(b))
        });
        Ordered::ByOrder
    } else {
        steps.sort_by(|a, b| attempt(a).cmp(&attempt(b)).then_with(|| a.cmp_source(b)));
        Ordered::ByAttempt
    }
}

/// Lists up to five items, then `and N more`.
fn some<T: std::fmt::Display>(items: &[T]) -> String {
    let mut s: Vec<String> = items.iter().take(5).map(ToString::to_string).collect();
    if items.len() > 5 {
        s.push(format!("and {} more", items.len() - 5));
    }
    s.join(", ")
}

/// The workspace warnings of one ordered chain: unusable order values (`CHAIN_ORDER`), and
/// attempt numbers that repeat, skip, are missing on some attempts, cannot be read, or
/// disagree with `order` (`CHAIN_ATTEMPTS`). Nothing is renumbered or dropped.
pub fn warnings(id: &str, steps: &[StepView<'_>], ordered: Ordered) -> Vec<Warning> {
    // quoted only for a warning: most chains have none
    let name = || quote(id, 80);
    let mut out = Vec::new();
    let order_problems: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            s.problem()
                .filter(|p| p.starts_with("`order`"))
                .map(|p| format!("{}: {p}", s.source()))
        })
        .collect();
    if !order_problems.is_empty() {
        out.push(Warning::capture(
            CHAIN_ORDER,
            None,
            format!(
                "chain {}: {} of its {} attempts have no usable `order` value ({}); the chain is ordered by attempt number, else file name and line",
                name(),
                order_problems.len(),
                steps.len(),
                some(&order_problems)
            ),
        ));
    }
    let mut issues: Vec<String> = Vec::new();
    let unread: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            s.problem()
                .filter(|p| !p.starts_with("`order`"))
                .map(|p| format!("{}: {p}", s.source()))
        })
        .collect();
    if !unread.is_empty() {
        issues.push(some(&unread));
    }
    let mut numbers: Vec<u64> = steps.iter().filter_map(StepView::attempt).collect();
    if !numbers.is_empty() {
        let without = steps.len() - numbers.len();
        if without > 0 {
            issues.push(format!(
                "{without} of its {} attempts have no attempt number",
                steps.len()
            ));
        }
        if ordered == Ordered::ByOrder && numbers.windows(2).any(|w| w[0] > w[1]) {
            issues.push(format!(
                "its attempt numbers in `order` are {}",
                some(&numbers)
            ));
        }
        numbers.sort_unstable();
        let mut repeated: Vec<String> = Vec::new();
        let mut missing: Vec<u64> = Vec::new();
        let mut missing_count = 0u64;
        let mut expect = 1u64;
        let mut i = 0;
        while i < numbers.len() {
            let n = numbers[i];
            let run = numbers[i..].iter().take_while(|m| **m == n).count();
            if run > 1 {
                let at: Vec<String> = steps
                    .iter()
                    .filter(|s| s.attempt() == Some(n))
                    .map(|s| s.source().to_string())
                    .collect();
                repeated.push(format!("attempt {n} appears {run} times ({})", some(&at)));
            }
            if n > expect {
                missing_count += n - expect;
                missing.extend((expect..n).take(5 - missing.len().min(5)));
            }
            // the last attempt number may be u64::MAX
            expect = n.saturating_add(1);
            i += run;
        }
        issues.extend(repeated);
        if missing_count > 0 {
            let shown: Vec<String> = missing.iter().map(ToString::to_string).collect();
            let rest = missing_count - missing.len() as u64;
            let more = if rest > 0 {
                format!(" and {rest} more")
            } else {
                String::new()
            };
            let s = if missing_count == 1 { "" } else { "s" };
            issues.push(format!("attempt{s} {}{more} missing", shown.join(", ")));
        }
    }
    if !issues.is_empty() {
        out.push(Warning::capture(
            CHAIN_ATTEMPTS,
            None,
            format!(
                "chain {}: {}; its attempts are taken as ordered, never renumbered (docs/chains.md#order)",
                name(),
                issues.join("; ")
            ),
        ));
    }
    out
}

/// The row of one ordered chain under `budget`.
pub fn row(
    id: &str,
    linked_by: LinkedBy,
    contract: Option<String>,
    steps: &[StepView<'_>],
    budget: &Budget,
) -> ChainRow {
    row_listing(id, linked_by, contract, steps, budget, true)
}

/// [`row`], with its `sources` and `effects` lists left empty unless `lists` (every count
/// still counts them all): the row a summary reads, or `verdict chains`' table, which
/// print no list, made without a string per attempt.
pub fn row_listing(
    id: &str,
    linked_by: LinkedBy,
    contract: Option<String>,
    steps: &[StepView<'_>],
    budget: &Budget,
    lists: bool,
) -> ChainRow {
    let n = steps.len();
    let first = steps[0];
    let last = steps[n - 1];
    let ready = |s: &StepView<'_>| s.stage() == Stage::Ready;
    let outcome = if !ready(&last) {
        Outcome::Unrecovered
    } else if ready(&first) {
        Outcome::FirstPass
    } else {
        Outcome::Recovered
    };
    let recovered_at = (outcome == Outcome::Recovered).then(|| {
        let last_fail = steps.iter().rposition(|s| !ready(s)).unwrap_or(0);
        last_fail + 2
    });
    let first_failure = (!ready(&first)).then(|| FirstFailure {
        stage: first.stage(),
        reason: first.reason().cloned().unwrap_or(Reason::INVALID_CAPTURE),
        pointer: first.first_pointer().map(str::to_owned),
    });
    let sum = |steps: &[StepView<'_>]| {
        steps
            .iter()
            .filter_map(StepView::tokens)
            .fold(None, |acc: Option<u64>, t| {
                Some(acc.unwrap_or(0).saturating_add(t))
            })
    };
    let tokens = sum(steps);
    let tokens_to_recover = recovered_at.and_then(|k| sum(&steps[..k]));
    let mut wasted = Vec::new();
    let mut wasted_count = 0;
    let mut wasted_by = BTreeMap::new();
    let mut effects = Vec::new();
    let mut effect_counts = BTreeMap::new();
    for (i, pair) in steps.windows(2).enumerate() {
        let (prev, next) = (pair[0], pair[1]);
        let why = match prev.decision() {
            Decision::Reject => Some(Waste::AfterReject),
            Decision::Recheck => Some(Waste::AfterRecheck),
            Decision::Regenerate if prev.digest().is_some() && prev.digest() == next.digest() => {
                Some(Waste::SameProposal)
            }
            _ => None,
        };
        if let Some(why) = why {
            wasted_count += 1;
            *wasted_by.entry(why).or_insert(0) += 1;
            if wasted.len() < MAX_LISTED {
                wasted.push(Wasted {
                    attempt: i + 2,
                    why,
                    after: prev.reason().cloned(),
                });
            }
        }
        if prev.decision() == Decision::Regenerate {
            let next_pointers: &[u32] = if ready(&next) {
                &[]
            } else {
                next.pointer_ids()
            };
            for &p in prev.pointer_ids() {
                let e = classify(next_pointers.contains(&p), prev.stage(), next.stage());
                *effect_counts.entry(e).or_insert(0) += 1;
                if lists && effects.len() < MAX_LISTED {
                    effects.push(PointerEffect {
                        attempt: i + 1,
                        pointer: prev.pointer(p).to_owned(),
                        effect: e,
                    });
                }
            }
        }
    }
    let mut over_budget = Vec::new();
    if let Some(max) = budget.max_attempts
        && n as u64 > max
    {
        over_budget.push(format!("attempts {n} > max_attempts {max}"));
    }
    if let (Some(max), Some(t)) = (budget.max_tokens, tokens)
        && t > max
    {
        over_budget.push(format!("tokens {t} > max_tokens {max}"));
    }
    let mut flags = Vec::new();
    if wasted_count > 0 {
        flags.push("wasted");
    }
    if !over_budget.is_empty() {
        flags.push("over-budget");
    }
    ChainRow {
        chain: id.to_owned(),
        linked_by,
        contract,
        attempts: n,
        outcome,
        recovered_at,
        first_failure,
        last_stage: last.stage(),
        last_decision: last.decision(),
        last_reason: last.reason().cloned(),
        tokens,
        tokens_to_recover,
        flags,
        wasted_count,
        wasted_by,
        wasted,
        over_budget,
        effect_counts,
        effects,
        sources: if lists {
            steps
                .iter()
                .take(MAX_LISTED)
                .map(|s| s.source().to_string())
                .collect()
        } else {
            Vec::new()
        },
    }
}
