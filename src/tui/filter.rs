//! The `/` filter: field tokens (`stage:schema`, `reason:intent`, `decision:recheck`,
//! `contract:refund`, `pointer:/amount_minor`, `flipped`, each negated with a leading `!`) and fuzzy
//! text (nucleo-matcher) over a capture's id, reason, pointers, messages and source.

use crate::core::pipeline::Evaluation;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A field a token tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Stage,
    Reason,
    Decision,
    Contract,
    Pointer,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    field: Field,
    value: String,
    negate: bool,
}

/// A parsed filter query.
#[derive(Debug)]
pub struct Query {
    tokens: Vec<Token>,
    /// `flipped` (Some(true)) or `!flipped` (Some(false)).
    flipped: Option<bool>,
    /// `unmet` (Some(true)): the verdict does not meet the capture's `expect`.
    unmet: Option<bool>,
    text: Option<Pattern>,
}

/// Whether a verdict misses its capture's `expect` (`check`'s NOT AS EXPECTED).
pub fn unmet(ev: &Evaluation) -> bool {
    ev.verdict.expect.as_ref().is_some_and(|e| !e.met)
}

/// How a pointer is written in a `pointer:` token: the root pointer is `(root)`.
pub fn pointer_label(p: &str) -> &str {
    if p.is_empty() { "(root)" } else { p }
}

impl Query {
    /// Parses a query. Unknown `word:` prefixes are fuzzy text.
    pub fn parse(q: &str) -> Query {
        let mut tokens = Vec::new();
        let mut flipped = None;
        let mut unmet = None;
        let mut text: Vec<&str> = Vec::new();
        for word in q.split_whitespace() {
            let (negate, body) = match word.strip_prefix('!') {
                Some(b) => (true, b),
                None => (false, word),
            };
            if body.eq_ignore_ascii_case("flipped") {
                flipped = Some(!negate);
                continue;
            }
            if body.eq_ignore_ascii_case("unmet") {
                unmet = Some(!negate);
                continue;
            }
            let field = body.split_once(':').and_then(|(k, v)| {
                let f = match k {
                    "stage" => Field::Stage,
                    "reason" => Field::Reason,
                    "decision" => Field::Decision,
                    "contract" => Field::Contract,
                    "pointer" => Field::Pointer,
                    _ => return None,
                };
                Some((f, v))
            });
            match field {
                Some((field, value)) => tokens.push(Token {
                    field,
                    value: value.to_lowercase(),
                    negate,
                }),
                None => text.push(word),
            }
        }
        let text = (!text.is_empty())
            .then(|| Pattern::parse(&text.join(" "), CaseMatching::Ignore, Normalization::Smart));
        Query {
            tokens,
            flipped,
            unmet,
            text,
        }
    }

    /// Whether the query matches nothing-specific (every capture passes).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
            && self.text.is_none()
            && self.flipped.is_none()
            && self.unmet.is_none()
    }

    /// Whether an evaluated capture passes; `haystack` is its [`haystack`], `flipped`
    /// whether its verdict flipped this session.
    pub fn matches(
        &self,
        ev: &Evaluation,
        haystack: &str,
        flipped: bool,
        m: &mut FuzzyMatcher,
    ) -> bool {
        if self.flipped.is_some_and(|f| f != flipped) {
            return false;
        }
        if self.unmet.is_some_and(|u| u != unmet(ev)) {
            return false;
        }
        for t in &self.tokens {
            if token_matches(t, ev) == t.negate {
                return false;
            }
        }
        match &self.text {
            None => true,
            Some(p) => {
                let mut buf = Vec::new();
                p.score(Utf32Str::new(haystack, &mut buf), &mut m.0)
                    .is_some()
            }
        }
    }
}

fn token_matches(t: &Token, ev: &Evaluation) -> bool {
    let v = &ev.verdict;
    let prefix = |s: &str| s.to_lowercase().starts_with(&t.value);
    match t.field {
        Field::Stage => prefix(v.stage.as_str()),
        Field::Decision => prefix(v.decision.as_str()),
        Field::Reason => v.reason.as_ref().is_some_and(|r| prefix(r.as_str())),
        Field::Contract => v.contract.as_deref().is_some_and(prefix),
        Field::Pointer => v.errors.iter().any(|f| {
            f.pointer
                .as_deref()
                .is_some_and(|p| pointer_label(p).to_lowercase() == t.value)
        }),
    }
}

/// The fuzzy matcher (reused across queries; one per thread).
pub struct FuzzyMatcher(Matcher);

impl Default for FuzzyMatcher {
    fn default() -> Self {
        FuzzyMatcher(Matcher::new(Config::DEFAULT))
    }
}

impl std::fmt::Debug for FuzzyMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FuzzyMatcher")
    }
}

/// The text the fuzzy part of a query searches: id, reason, every pointer and message,
/// and the source, separated by spaces.
pub fn haystack(ev: &Evaluation) -> String {
    let v = &ev.verdict;
    let mut s = String::with_capacity(64);
    s.push_str(&v.id);
    if let Some(r) = &v.reason {
        s.push(' ');
        s.push_str(r.as_str());
    }
    for f in &v.errors {
        if let Some(p) = &f.pointer {
            s.push(' ');
            s.push_str(p);
        }
        s.push(' ');
        s.push_str(&f.message);
    }
    s.push(' ');
    s.push_str(&v.source);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::verdict::{Finding, Reason, Stage, Verdict};

    fn ev(id: &str, stage: Stage, reason: Reason, pointer: &str) -> Evaluation {
        let f = Finding::new(stage, reason, "some message").with_pointer(pointer);
        Evaluation {
            verdict: Verdict::from_errors(
                id.into(),
                format!("captures/{id}.json"),
                Some("refund-v1".into()),
                vec![f],
            ),
            capture: None,
            raw_output: None,
            proposal: None,
        }
    }

    fn hit(q: &str, e: &Evaluation) -> bool {
        Query::parse(q).matches(e, &haystack(e), false, &mut FuzzyMatcher::default())
    }

    #[test]
    fn tokens_fuzzy_text_and_negation() {
        let a = ev(
            "amount-8000",
            Stage::Business,
            Reason::INTENT_MISMATCH,
            "/amount_minor",
        );
        let b = ev("dup", Stage::Parse, Reason::DUPLICATE_KEY, "/currency");
        assert!(hit("stage:business", &a) && !hit("stage:business", &b));
        assert!(hit("!stage:business", &b) && !hit("!stage:business", &a));
        assert!(hit("reason:intent", &a));
        assert!(hit("decision:recheck", &a) && !hit("decision:recheck", &b));
        assert!(hit("contract:refund", &a));
        assert!(hit("pointer:/amount_minor", &a) && !hit("pointer:/amount_minor", &b));
        assert!(hit("a8000", &a) && !hit("a8000", &b));
        assert!(hit("amount !dup", &a) && !hit("!dup", &b));
        assert!(hit("", &a));
    }

    #[test]
    fn flipped_token_and_its_negation() {
        let a = ev("a", Stage::Schema, Reason::SCHEMA_MISMATCH, "/x");
        let q = Query::parse("flipped");
        assert!(!q.is_empty());
        let m = &mut FuzzyMatcher::default();
        assert!(q.matches(&a, &haystack(&a), true, m));
        assert!(!q.matches(&a, &haystack(&a), false, m));
        let q = Query::parse("!flipped stage:schema");
        assert!(q.matches(&a, &haystack(&a), false, m));
        assert!(!q.matches(&a, &haystack(&a), true, m));
    }
}
