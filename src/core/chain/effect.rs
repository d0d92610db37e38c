//! The feedback's effect at each pointer a `regenerate` step reported
//! (`docs/chains.md#feedback-effects`): `fixed`, `persisted` or `moved` in the next attempt.

use crate::core::verdict::Stage;
use serde::{Deserialize, Serialize};

/// What became of one reported pointer in the attempt after a `regenerate` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The next attempt has no error at this pointer and none elsewhere at the same stage.
    Fixed,
    /// The next attempt still errs at this pointer (at any stage).
    Persisted,
    /// The next attempt errs elsewhere at the same stage, not at this pointer.
    Moved,
}

impl Effect {
    /// The name printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Fixed => "fixed",
            Effect::Persisted => "persisted",
            Effect::Moved => "moved",
        }
    }
}

/// The effect at `pointer`, reported by an attempt that failed at `stage`, given the next
/// attempt's failing stage and pointers (`next_stage` [`Stage::Ready`] and no pointers
/// when it is ready). An attempt that fails at an earlier stage than `stage` (the
/// regenerated output no longer parses) counts as `fixed` by this rule: its pointers are
/// not comparable (`docs/chains.md#feedback-effects`).
pub fn effect(
    pointer: &str,
    stage: Stage,
    next_stage: Stage,
    next_pointers: &[Box<str>],
) -> Effect {
    classify(
        next_pointers.iter().any(|p| &**p == pointer),
        stage,
        next_stage,
    )
}

/// The rule of [`effect`], given whether the next attempt errs at the pointer too.
pub fn classify(persisted: bool, stage: Stage, next_stage: Stage) -> Effect {
    if persisted {
        Effect::Persisted
    } else if next_stage == stage {
        Effect::Moved
    } else {
        Effect::Fixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_follow_the_next_attempt() {
        let ptrs = |p: &[&str]| p.iter().map(|s| Box::<str>::from(*s)).collect::<Vec<_>>();
        let s = Stage::Schema;
        assert_eq!(effect("/a", s, Stage::Ready, &[]), Effect::Fixed);
        assert_eq!(
            effect("/a", s, Stage::Schema, &ptrs(&["/a"])),
            Effect::Persisted
        );
        assert_eq!(
            effect("/a", s, Stage::Business, &ptrs(&["/a"])),
            Effect::Persisted
        );
        assert_eq!(
            effect("/a", s, Stage::Schema, &ptrs(&["/b"])),
            Effect::Moved
        );
        assert_eq!(
            effect("/a", s, Stage::Business, &ptrs(&["/b"])),
            Effect::Fixed
        );
        assert_eq!(effect("/a", s, Stage::Parse, &[]), Effect::Fixed);
    }
}
