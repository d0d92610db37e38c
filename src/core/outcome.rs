//! The outcome of a verdict: what every front end compares, counts and reports, and the one
//! rule for when an outcome has flipped (`docs/verdicts.md`, "Outcomes and flips").
//!
//! A [`Verdict`] carries its findings; an [`Outcome`] is the part of it that decides what
//! happens next: the deciding [`Stage`], the [`Decision`], the [`Reason`] and, for a capture
//! with an `expect`, whether the verdict meets it. The session of a live workspace, the TUI's
//! list, `watch --json` and `verdict review` all keep outcomes, never whole verdicts, and ask
//! [`Outcome::flip_from`] whether one changed.

use crate::core::verdict::{Decision, Reason, Stage, Verdict};
use serde::{Serialize, Serializer};

/// Whether a capture counts as passing a `check` run: it meets its `expect`, or it has none
/// and every stage passed. `expect_met` is `Some(met)` for a capture with an `expect`.
/// The one definition of "passes": [`Outcome::passes`], [`Verdict::passes`] and the funnel's
/// tally all call it.
pub fn passes(stage: Stage, expect_met: Option<bool>) -> bool {
    expect_met.unwrap_or(stage == Stage::Ready)
}

/// A verdict's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The first failing stage, or `ready`.
    pub stage: Stage,
    /// What to do next.
    pub decision: Decision,
    /// The first failure's reason; `None` when ready.
    pub reason: Option<Reason>,
    /// `Some(met)` when the capture has an `expect`: whether the verdict meets it.
    pub expect_met: Option<bool>,
    /// The verdict's `repair`, as the funnel's rates count it (`docs/repairs.md#the-rates`).
    /// Not part of a flip: the verdict's own outcome is unchanged by a repair.
    pub repair: Option<crate::core::repair::RepairMark>,
}

impl Outcome {
    /// The outcome of a capture that passed every stage (`ready`, `ready-for-commit`), with
    /// no `expect` and no repair.
    pub fn ready() -> Outcome {
        Outcome {
            stage: Stage::Ready,
            decision: Decision::ReadyForCommit,
            reason: None,
            expect_met: None,
            repair: None,
        }
    }

    /// The outcome of a verdict.
    pub fn of(v: &Verdict) -> Outcome {
        Outcome {
            stage: v.stage,
            decision: v.decision,
            reason: v.reason.clone(),
            expect_met: v.expect.as_ref().map(|e| e.met),
            repair: v.repair.as_ref().map(crate::core::repair::Repair::mark),
        }
    }

    /// Whether `check` counts it as passing ([`passes`]).
    pub fn passes(&self) -> bool {
        passes(self.stage, self.expect_met)
    }

    /// Whether the capture has an `expect` that the verdict misses.
    pub fn misses_expect(&self) -> bool {
        self.expect_met == Some(false)
    }

    /// `schema/SCHEMA_MISMATCH`, or `ready`.
    pub fn label(&self) -> String {
        match &self.reason {
            Some(r) => format!("{}/{r}", self.stage),
            None => self.stage.to_string(),
        }
    }

    /// How this outcome differs from `old`, the same capture's previous outcome: `None`
    /// when the stage, decision, reason and pass/fail are all the same. For a capture with
    /// an `expect` on both sides, pass/fail is whether it meets it: `now meets expect` or
    /// `no longer meets expect` (a capture that went from ready to SCHEMA_MISMATCH because
    /// its `expect` says it should fail is not "now passing"); otherwise `now failing` or
    /// `now passing` when pass/fail changed, else `changed`. A change in whether the capture
    /// meets its `expect` alone is a flip. The one flip rule of the session, the TUI,
    /// `watch --json` and `review`.
    pub fn flip_from(&self, old: &Outcome) -> Option<FlipKind> {
        let (was, is) = (old.passes(), self.passes());
        if old.stage == self.stage
            && old.decision == self.decision
            && old.reason == self.reason
            && was == is
        {
            return None;
        }
        let expected = old.expect_met.is_some() && self.expect_met.is_some();
        Some(match (was, is) {
            (true, false) if expected => FlipKind::NoLongerMeetsExpect,
            (false, true) if expected => FlipKind::NowMeetsExpect,
            (true, false) => FlipKind::NowFailing,
            (false, true) => FlipKind::NowPassing,
            _ => FlipKind::Changed,
        })
    }
}

/// Serialized as `{"stage", "reason", "decision", "passes"}` (the `review --format json`
/// shape): readers of a flip want pass/fail, not how it was derived.
impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Outcome", 4)?;
        st.serialize_field("stage", &self.stage)?;
        st.serialize_field("reason", &self.reason)?;
        st.serialize_field("decision", &self.decision)?;
        st.serialize_field("passes", &self.passes())?;
        st.end()
    }
}

/// How a capture's outcome changed, named by what a user sees (`docs/verdicts.md`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum FlipKind {
    /// `now-failing`: a capture without `expect` was ready and fails now.
    NowFailing,
    /// `no-longer-meets-expect`: a capture met its `expect` and misses it now.
    NoLongerMeetsExpect,
    /// `now-passing`: a capture without `expect` failed and is ready now.
    NowPassing,
    /// `now-meets-expect`: a capture missed its `expect` and meets it now.
    NowMeetsExpect,
    /// `changed`: the same pass/fail, another stage, reason or decision (and, in `review`,
    /// another first error within the same reason).
    Changed,
}

impl FlipKind {
    /// Every kind, in report order (what fails first).
    pub const ALL: [FlipKind; 5] = [
        FlipKind::NowFailing,
        FlipKind::NoLongerMeetsExpect,
        FlipKind::NowPassing,
        FlipKind::NowMeetsExpect,
        FlipKind::Changed,
    ];

    /// `now failing`, `no longer meets expect`, `now passing`, `now meets expect`, `changed`.
    pub fn title(self) -> &'static str {
        match self {
            FlipKind::NowFailing => "now failing",
            FlipKind::NoLongerMeetsExpect => "no longer meets expect",
            FlipKind::NowPassing => "now passing",
            FlipKind::NowMeetsExpect => "now meets expect",
            FlipKind::Changed => "changed",
        }
    }

    /// Whether the capture went from passing to failing a `check` run (`now failing`,
    /// `no longer meets expect`): what makes `review` exit 1.
    pub fn fails(self) -> bool {
        matches!(self, FlipKind::NowFailing | FlipKind::NoLongerMeetsExpect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(stage: Stage, reason: Option<Reason>, expect_met: Option<bool>) -> Outcome {
        let decision = match &reason {
            Some(r) => r.default_decision(),
            None => Decision::ReadyForCommit,
        };
        Outcome {
            stage,
            decision,
            reason,
            expect_met,
            repair: None,
        }
    }

    #[test]
    fn passes_is_expect_met_else_ready() {
        assert!(o(Stage::Ready, None, None).passes());
        assert!(!o(Stage::Ready, None, Some(false)).passes());
        assert!(o(Stage::Schema, Some(Reason::SCHEMA_MISMATCH), Some(true)).passes());
        assert!(!o(Stage::Schema, Some(Reason::SCHEMA_MISMATCH), None).passes());
    }

    #[test]
    fn the_flip_rule() {
        let ready = o(Stage::Ready, None, None);
        let schema = o(Stage::Schema, Some(Reason::SCHEMA_MISMATCH), None);
        assert_eq!(ready.flip_from(&ready), None);
        assert_eq!(schema.flip_from(&ready), Some(FlipKind::NowFailing));
        assert_eq!(ready.flip_from(&schema), Some(FlipKind::NowPassing));
        let parse = o(Stage::Parse, Some(Reason::INVALID_JSON), None);
        assert_eq!(parse.flip_from(&schema), Some(FlipKind::Changed));
        // only whether `expect` is met changes: a flip
        let met = o(Stage::Schema, Some(Reason::SCHEMA_MISMATCH), Some(true));
        let unmet = o(Stage::Schema, Some(Reason::SCHEMA_MISMATCH), Some(false));
        assert_eq!(unmet.flip_from(&met), Some(FlipKind::NoLongerMeetsExpect));
        assert_eq!(met.flip_from(&unmet), Some(FlipKind::NowMeetsExpect));
        // ready -> SCHEMA_MISMATCH that its expect asks for: it only now meets its expect
        let ready_unmet = o(Stage::Ready, None, Some(false));
        assert_eq!(met.flip_from(&ready_unmet), Some(FlipKind::NowMeetsExpect));
        assert!(FlipKind::NoLongerMeetsExpect.fails() && FlipKind::NowFailing.fails());
        assert!(!FlipKind::NowMeetsExpect.fails() && !FlipKind::Changed.fails());
        // an expect added that the verdict meets: same pass/fail, same outcome otherwise
        assert_eq!(
            o(Stage::Ready, None, Some(true)).flip_from(&ready),
            None,
            "ready without expect and ready meeting its expect both pass"
        );
    }

    #[test]
    fn serializes_with_passes() {
        let v = serde_json::to_value(o(Stage::Ready, None, Some(false))).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"stage": "ready", "reason": null, "decision": "ready-for-commit", "passes": false})
        );
    }
}
