//! The summary over a run's chains (`docs/chains.md#the-summary`): the chain funnel, per
//! first failure the recovery rate and what recovering cost, what never recovered, the
//! wasted attempts, and the budget advice per contract.

use super::outcome::{ChainRow, Outcome, Waste};
use crate::core::verdict::{Reason, Stage};
use serde::Serialize;
use std::collections::BTreeMap;

/// Nearest-rank percentiles and the maximum of a list of counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Spread {
    /// The median: the `ceil(0.5 n)`-th smallest.
    pub p50: u64,
    /// The `ceil(0.9 n)`-th smallest.
    pub p90: u64,
    /// The largest.
    pub max: u64,
}

/// The nearest-rank `q`-th percentile (`q` in percent) of `sorted` (ascending, not empty):
/// the `ceil(q / 100 * n)`-th smallest value.
pub fn nearest_rank(sorted: &[u64], q: u64) -> u64 {
    let n = sorted.len() as u64;
    let rank = (q * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(mut values: Vec<u64>) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        Some(Spread {
            p50: nearest_rank(&values, 50),
            p90: nearest_rank(&values, 90),
            max: values[values.len() - 1],
        })
    }
}

/// The chains whose first attempt failed with one reason at one pointer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    /// The first failure's stage.
    pub stage: Stage,
    /// Its reason.
    pub reason: Reason,
    /// Its first finding's pointer.
    pub pointer: Option<String>,
    /// How many chains started with it.
    pub chains: usize,
    /// How many of them recovered.
    pub recovered: usize,
    /// `recovered / chains`, rounded to 4 decimals.
    pub recovery_rate: f64,
    /// Of the recovered ones: the attempt that recovered (its position from 1).
    pub attempts_to_recover: Option<Spread>,
    /// Of the recovered ones that logged usage: the tokens spent up to and including the
    /// recovering attempt.
    pub tokens_to_recover: Option<Spread>,
}

/// The smallest `max_attempts` keeping a share of the recoveries seen, for one contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetAdvice {
    /// The contract (`null`: chains whose attempts have none).
    pub contract: Option<String>,
    /// How many of its chains recovered.
    pub recoveries: usize,
    /// The smallest `max_attempts` keeping 90% of those recoveries.
    pub p90: u64,
    /// ... 95%.
    pub p95: u64,
    /// ... 99%.
    pub p99: u64,
}

/// How many chains ended with one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    /// The last attempt's reason.
    pub reason: Reason,
    /// How many chains.
    pub chains: usize,
}

/// The summary of `docs/chains.md#the-summary`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChainSummary {
    /// Every chain.
    pub chains: usize,
    /// Ready at attempt 1.
    pub first_pass: usize,
    /// Ready at the last attempt, not at the first.
    pub recovered: usize,
    /// Failing at the last attempt.
    pub unrecovered: usize,
    /// Attempts over every chain.
    pub attempts: usize,
    /// Chains flagged `wasted`.
    pub wasted_chains: usize,
    /// Wasted attempts by why (`after-reject`, `after-recheck`, `same-proposal`).
    pub wasted_attempts: BTreeMap<Waste, usize>,
    /// Chains flagged `over-budget`.
    pub over_budget: usize,
    /// Per first failure (stage, reason, pointer), most chains first.
    pub by_first_failure: Vec<FailureRow>,
    /// Unrecovered chains by their last attempt's reason, most first.
    pub unrecovered_by_reason: Vec<ReasonCount>,
    /// Per contract with recoveries, by contract name.
    pub budget_advice: Vec<BudgetAdvice>,
}

/// A first failure (stage, reason, pointer) -> its chains, and the recovered ones' attempts
/// and tokens to recover.
type Failures = BTreeMap<(Stage, Reason, Option<String>), (usize, Vec<u64>, Vec<u64>)>;

/// The summary's makings, fed one row at a time ([`SummaryAcc::add`]): the counts, and per
/// first failure and per contract the recovered chains' attempts and tokens (16 bytes a
/// recovered chain), so that a run need not keep its rows to summarize them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryAcc {
    counts: ChainSummary,
    failures: Failures,
    unrecovered: BTreeMap<Reason, usize>,
    advice: BTreeMap<Option<String>, Vec<u64>>,
}

impl SummaryAcc {
    /// Counts one chain's row.
    pub fn add(&mut self, r: &ChainRow) {
        let s = &mut self.counts;
        s.chains += 1;
        s.attempts += r.attempts;
        match r.outcome {
            Outcome::FirstPass => s.first_pass += 1,
            Outcome::Recovered => s.recovered += 1,
            Outcome::Unrecovered => {
                s.unrecovered += 1;
                let reason = r.last_reason.clone().unwrap_or(Reason::INVALID_CAPTURE);
                *self.unrecovered.entry(reason).or_insert(0) += 1;
            }
        }
        if r.wasted_count > 0 {
            s.wasted_chains += 1;
        }
        for (why, n) in &r.wasted_by {
            *s.wasted_attempts.entry(*why).or_insert(0) += n;
        }
        if !r.over_budget.is_empty() {
            s.over_budget += 1;
        }
        if let Some(f) = &r.first_failure {
            let key = (f.stage, f.reason.clone(), f.pointer.clone());
            let e = match self.failures.get_mut(&key) {
                Some(e) => e,
                None => self.failures.entry(key).or_default(),
            };
            e.0 += 1;
            if let Some(k) = r.recovered_at {
                e.1.push(k as u64);
                if let Some(t) = r.tokens_to_recover {
                    e.2.push(t);
                }
                match self.advice.get_mut(&r.contract) {
                    Some(v) => v.push(k as u64),
                    None => {
                        self.advice.insert(r.contract.clone(), vec![k as u64]);
                    }
                }
            }
        }
    }

    /// Adds another run's makings (`check` over several workspaces).
    pub fn merge(&mut self, other: SummaryAcc) {
        let (s, o) = (&mut self.counts, other.counts);
        s.chains += o.chains;
        s.first_pass += o.first_pass;
        s.recovered += o.recovered;
        s.unrecovered += o.unrecovered;
        s.attempts += o.attempts;
        s.wasted_chains += o.wasted_chains;
        s.over_budget += o.over_budget;
        for (why, n) in o.wasted_attempts {
            *s.wasted_attempts.entry(why).or_insert(0) += n;
        }
        for (k, (n, att, tok)) in other.failures {
            let e = self.failures.entry(k).or_default();
            e.0 += n;
            e.1.extend(att);
            e.2.extend(tok);
        }
        for (r, n) in other.unrecovered {
            *self.unrecovered.entry(r).or_insert(0) += n;
        }
        for (c, ks) in other.advice {
            self.advice.entry(c).or_default().extend(ks);
        }
    }

    /// The summary of what was added.
    pub fn summary(&self) -> ChainSummary {
        let mut s = self.counts.clone();
        let mut by: Vec<FailureRow> = self
            .failures
            .iter()
            .map(
                |((stage, reason, pointer), (chains, att, tok))| FailureRow {
                    stage: *stage,
                    reason: reason.clone(),
                    pointer: pointer.clone(),
                    chains: *chains,
                    recovered: att.len(),
                    recovery_rate: (att.len() as f64 / *chains as f64 * 10_000.0).round()
                        / 10_000.0,
                    attempts_to_recover: Spread::of(att.clone()),
                    tokens_to_recover: Spread::of(tok.clone()),
                },
            )
            .collect();
        // most chains first; the key's order breaks ties
        by.sort_by_key(|b| std::cmp::Reverse(b.chains));
        s.by_first_failure = by;
        let mut un: Vec<ReasonCount> = self
            .unrecovered
            .iter()
            .map(|(reason, chains)| ReasonCount {
                reason: reason.clone(),
                chains: *chains,
            })
            .collect();
        un.sort_by_key(|b| std::cmp::Reverse(b.chains));
        s.unrecovered_by_reason = un;
        s.budget_advice = self
            .advice
            .iter()
            .map(|(contract, ks)| {
                let mut ks = ks.clone();
                ks.sort_unstable();
                BudgetAdvice {
                    contract: contract.clone(),
                    recoveries: ks.len(),
                    p90: nearest_rank(&ks, 90),
                    p95: nearest_rank(&ks, 95),
                    p99: nearest_rank(&ks, 99),
                }
            })
            .collect();
        s
    }
}

impl ChainSummary {
    /// The summary over `rows`.
    pub fn of(rows: &[ChainRow]) -> ChainSummary {
        let mut acc = SummaryAcc::default();
        for r in rows {
            acc.add(r);
        }
        acc.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 50), 5);
        assert_eq!(nearest_rank(&v, 90), 9);
        assert_eq!(nearest_rank(&v, 95), 10);
        assert_eq!(nearest_rank(&[2, 3], 50), 2);
        assert_eq!(nearest_rank(&[2, 3], 90), 3);
        assert_eq!(nearest_rank(&[4], 99), 4);
        assert_eq!(
            Spread::of(vec![3, 2, 2]),
            Some(Spread {
                p50: 2,
                p90: 3,
                max: 3
            })
        );
        assert_eq!(Spread::of(Vec::new()), None);
    }
}
