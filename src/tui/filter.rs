//! The `/` filter: field tokens (`stage:schema`, `reason:intent`, `decision:recheck`,
//! `contract:refund`, `pointer:/amount_minor`, `repair:drop-unknown` (`repair:none`: no
//! repair), `would:ready` (the repair's would-be outcome), `flipped`, each negated with a
//! leading `!`) and fuzzy
//! text (nucleo-matcher) over a capture's id, reason, pointers, first message and source.

use crate::core::pipeline::Evaluation;
use crate::core::verdict::{Decision, Stage};
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
    /// The verdict's repair by name (`repair:none`: it has none).
    Repair,
    /// The repair's would-be outcome (`would:ready`, `would:business/exceeds_remaining`).
    Would,
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
    /// The fuzzy words lower-cased, when every one is a plain ASCII fuzzy atom (no `^`,
    /// `'`, `!`, `$` or `\\`): then an ASCII haystack matches when each word is a
    /// subsequence of it, which is what nucleo decides, without scoring.
    plain: Option<Vec<Vec<u8>>>,
    /// `stage:parss matches no stage; did you mean `stage:parse`?` for a `stage:` or
    /// `decision:` value that no stage or decision starts with.
    hint: Option<String>,
}

/// How well a capture matches the fuzzy text, to rank the filtered list: the better
/// [`Rank::tier`] first, then the higher nucleo score, then the list order (severity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// 2: every word is a substring of the id; 1: of the haystack (a pointer, the
    /// reason, the message, the source); 0: a fuzzy (subsequence) match only. Always 1
    /// for a query with nucleo syntax (`^`, `'`, `$`, `!`, `\\`) or non-ASCII text.
    pub tier: u8,
    /// nucleo-matcher's score (consecutive and word-boundary characters score higher).
    pub score: u32,
}

/// Which ranked matches stay: when some match has every word as a substring (tier 1 or
/// 2), only those (the scattered subsequence matches of a word typed whole are noise:
/// `stream-sse` also matched `openai-responses/refusal`); else, a typo or an
/// abbreviation (`a8000`), the fuzzy matches scoring at least half the best one.
pub fn keeps(best: Rank) -> impl Fn(&Rank) -> bool {
    move |r: &Rank| {
        if best.tier > 0 {
            r.tier > 0
        } else {
            r.score * 2 >= best.score
        }
    }
}

/// Whether lower-case ASCII `word` is a substring of `hay`, ignoring case.
fn contains_word(hay: &str, word: &[u8]) -> bool {
    if !hay.is_ascii() {
        let word = std::str::from_utf8(word).unwrap_or_default();
        return hay.to_lowercase().contains(word);
    }
    word.is_empty()
        || hay.as_bytes().windows(word.len()).any(|w| {
            w.iter()
                .zip(word)
                .all(|(a, b)| a.to_ascii_lowercase() == *b)
        })
}

/// The hint for a `field:value` token whose value starts no word of `names`.
fn field_hint<'a>(
    field: &str,
    value: &str,
    names: impl Iterator<Item = &'a str> + Clone,
) -> Option<String> {
    if names.clone().any(|n| n.starts_with(value)) {
        return None;
    }
    let kind = if field == "stage" {
        "stage"
    } else {
        "decision"
    };
    Some(match crate::core::hint::did_you_mean(value, names) {
        Some(n) => format!("{field}:{value} matches no {kind}; did you mean `{field}:{n}`?"),
        None => format!("{field}:{value} matches no {kind}"),
    })
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
                    "repair" => Field::Repair,
                    "would" => Field::Would,
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
        let plain = text
            .iter()
            .all(|w| {
                w.is_ascii()
                    && !w.starts_with(['^', '\'', '!'])
                    && !w.ends_with('$')
                    && !w.contains('\\')
            })
            .then(|| {
                text.iter()
                    .map(|w| w.bytes().map(|b| b.to_ascii_lowercase()).collect())
                    .collect()
            });
        let text = (!text.is_empty())
            .then(|| Pattern::parse(&text.join(" "), CaseMatching::Ignore, Normalization::Smart));
        let hint = tokens.iter().find_map(|t| match t.field {
            Field::Stage => field_hint("stage", &t.value, Stage::ALL.iter().map(|s| s.as_str())),
            Field::Decision => field_hint(
                "decision",
                &t.value,
                Decision::ALL.iter().map(|d| d.as_str()),
            ),
            _ => None,
        });
        Query {
            tokens,
            flipped,
            unmet,
            text,
            plain,
            hint,
        }
    }

    /// A did-you-mean for a `stage:` or `decision:` value that matches no stage or
    /// decision (`stage:parss`), if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// How well `haystack` (whose first part is `id`) matches the fuzzy text; `None` when
    /// it does not match or there is no fuzzy text.
    pub fn rank(&self, id: &str, haystack: &str, m: &mut FuzzyMatcher) -> Option<Rank> {
        let score = self
            .text
            .as_ref()?
            .score(Utf32Str::new(haystack, &mut m.1), &mut m.0)?;
        let tier = match &self.plain {
            Some(words) => {
                let all_in = |hay: &str| words.iter().all(|w| contains_word(hay, w));
                if all_in(id) {
                    2
                } else if all_in(haystack) {
                    1
                } else {
                    0
                }
            }
            _ => 1,
        };
        Some(Rank { tier, score })
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
        let v = &ev.verdict;
        let pointers: Vec<String> = v.errors.iter().filter_map(|f| f.pointer.clone()).collect();
        self.flags_match(flipped, unmet(ev))
            && self.kind_matches(
                v.stage,
                v.decision,
                v.reason.as_ref().map(|r| r.as_str()),
                v.contract.as_deref(),
                v.repair.as_ref(),
            )
            && self.pointers_match(&pointers)
            && self.text_matches(haystack, m)
    }

    /// Whether the `flipped` and `unmet` words hold.
    pub fn flags_match(&self, flipped: bool, unmet: bool) -> bool {
        self.flipped.is_none_or(|f| f == flipped) && self.unmet.is_none_or(|u| u == unmet)
    }

    /// Whether the `stage:`, `decision:`, `reason:`, `contract:`, `repair:` and `would:`
    /// tokens hold for this outcome and repair.
    pub fn kind_matches(
        &self,
        stage: Stage,
        decision: Decision,
        reason: Option<&str>,
        contract: Option<&str>,
        repair: Option<&crate::core::repair::Repair>,
    ) -> bool {
        self.tokens.iter().all(|t| {
            let prefix = |s: &str| s.to_lowercase().starts_with(&t.value);
            let hit = match t.field {
                Field::Stage => prefix(stage.as_str()),
                Field::Decision => prefix(decision.as_str()),
                Field::Reason => reason.is_some_and(prefix),
                Field::Contract => contract.is_some_and(prefix),
                Field::Repair if t.value == "none" => repair.is_none(),
                Field::Repair => repair.is_some_and(|r| prefix(r.name.as_str())),
                Field::Would => repair.is_some_and(|r| prefix(&r.would_be.label())),
                Field::Pointer => return true,
            };
            hit != t.negate
        })
    }

    /// Whether the `pointer:` tokens hold for a capture with these error pointers.
    pub fn pointers_match(&self, pointers: &[String]) -> bool {
        self.tokens
            .iter()
            .filter(|t| t.field == Field::Pointer)
            .all(|t| {
                let hit = pointers
                    .iter()
                    .any(|p| pointer_label(p).to_lowercase() == t.value);
                hit != t.negate
            })
    }

    /// The fuzzy words, lower-cased, when the fast ASCII path applies (see
    /// [`advance`]).
    pub fn plain_words(&self) -> Option<&[Vec<u8>]> {
        self.plain.as_deref()
    }

    /// Whether the query has fuzzy text (the only part that needs the haystack).
    pub fn has_text(&self) -> bool {
        self.text.is_some()
    }

    /// Whether the fuzzy text matches `haystack` (true when there is none).
    pub fn text_matches(&self, haystack: &str, m: &mut FuzzyMatcher) -> bool {
        if let Some(words) = &self.plain
            && haystack.is_ascii()
        {
            let hay = haystack.as_bytes();
            return words.iter().all(|w| {
                let mut want = w.iter().peekable();
                for b in hay {
                    if want.peek().is_some_and(|&&c| c == b.to_ascii_lowercase()) {
                        want.next();
                    }
                }
                want.peek().is_none()
            });
        }
        match &self.text {
            None => true,
            Some(p) => p
                .score(Utf32Str::new(haystack, &mut m.1), &mut m.0)
                .is_some(),
        }
    }
}

/// How far a fuzzy word (lower-case ASCII) gets through an ASCII `piece` of a haystack,
/// starting at position `k` of the word: the word matches a haystack when it gets to its
/// end over the haystack's pieces in order (the spaces between pieces never match, as
/// words have none).
pub fn advance(word: &[u8], mut k: usize, piece: &[u8]) -> usize {
    for &b in piece {
        if k == word.len() {
            break;
        }
        if word[k] == b.to_ascii_lowercase() {
            k += 1;
        }
    }
    k
}

/// Whether the query `new` only narrows `old` (every capture `new` matches, `old` matched):
/// `new` extends `old` without `!`, the last word of `old` keeps its kind (fuzzy text, the
/// same field token, a flag) and is no `pointer:` token (exact) nor ends in `$` or `\`
/// (fuzzy syntax whose meaning changes as it grows). Then the new view can be filtered
/// from the old one.
pub fn narrows(old: &str, new: &str) -> bool {
    if !new.starts_with(old) || new.contains('!') {
        return false;
    }
    let Some(last) = old.split_whitespace().last() else {
        return true;
    };
    if old.ends_with(char::is_whitespace) {
        return true;
    }
    let grown = new[old.len() - last.len()..]
        .split_whitespace()
        .next()
        .unwrap_or(last);
    fn kind(w: &str) -> Option<&'static str> {
        if w.eq_ignore_ascii_case("flipped") || w.eq_ignore_ascii_case("unmet") {
            return Some("flag");
        }
        match w.split_once(':')?.0 {
            "stage" => Some("stage"),
            "reason" => Some("reason"),
            "decision" => Some("decision"),
            "contract" => Some("contract"),
            "pointer" => Some("pointer"),
            "repair" => Some("repair"),
            "would" => Some("would"),
            _ => None,
        }
    }
    let k = kind(last);
    k == kind(grown)
        && k != Some("pointer")
        && k != Some("repair")
        && k != Some("flag")
        && !last.ends_with('$')
        && !last.ends_with('\\')
}

/// The fuzzy matcher and its scratch buffer (reused across queries; one per thread).
pub struct FuzzyMatcher(Matcher, Vec<char>);

impl Default for FuzzyMatcher {
    fn default() -> Self {
        FuzzyMatcher(Matcher::new(Config::DEFAULT), Vec::new())
    }
}

impl std::fmt::Debug for FuzzyMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FuzzyMatcher")
    }
}

/// Writes the text the fuzzy part of a query searches into `out` (cleared first): id,
/// reason, every pointer, the first error's message, and the source, separated by spaces.
/// Built on the fly into a reused buffer: nothing is stored per capture.
pub fn write_haystack(
    out: &mut String,
    id: &str,
    reason: Option<&str>,
    pointers: &[String],
    message: Option<&str>,
    source: impl FnOnce(&mut String),
) {
    out.clear();
    out.push_str(id);
    for part in reason
        .into_iter()
        .chain(pointers.iter().map(String::as_str))
        .chain(message)
    {
        out.push(' ');
        out.push_str(part);
    }
    out.push(' ');
    source(out);
}

/// The haystack of an evaluated capture (see [`write_haystack`]).
pub fn haystack(ev: &Evaluation) -> String {
    let v = &ev.verdict;
    let mut pointers: Vec<String> = Vec::new();
    for p in v.errors.iter().filter_map(|f| f.pointer.as_ref()) {
        if !pointers.contains(p) {
            pointers.push(p.clone());
        }
    }
    let mut s = String::new();
    write_haystack(
        &mut s,
        &v.id,
        v.reason.as_ref().map(|r| r.as_str()),
        &pointers,
        v.errors.first().map(|f| f.message.as_str()),
        |o| o.push_str(v.source.as_str()),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::record_ref::RecordRef;
    use crate::core::verdict::{Finding, Reason, Stage, Verdict};

    fn ev(id: &str, stage: Stage, reason: Reason, pointer: &str) -> Evaluation {
        let f = Finding::new(stage, reason, "some message").with_pointer(pointer);
        Evaluation {
            verdict: Verdict::from_errors(
                id.into(),
                RecordRef::new(format!("captures/{id}.json"), None),
                Some("refund-v1".into()),
                vec![f],
            ),
            capture: None,
            raw_output: None,
            proposal: None,
            sent: None,
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
    fn repair_and_would_tokens() {
        use crate::core::repair::{Repair, RepairName, WouldBe};
        let mut a = ev("a", Stage::Schema, Reason::SCHEMA_MISMATCH, "/amount_minor");
        a.verdict.repair = Some(Repair {
            name: RepairName::UnquoteNumber,
            would_be: WouldBe {
                stage: Stage::Business,
                decision: Decision::Reject,
                reason: Some(Reason::new("EXCEEDS_REMAINING")),
            },
        });
        let b = ev("b", Stage::Schema, Reason::SCHEMA_MISMATCH, "/x");
        assert!(hit("repair:unquote-number", &a) && !hit("repair:unquote-number", &b));
        assert!(hit("repair:none", &b) && !hit("repair:none", &a));
        assert!(hit("!repair:none", &a) && !hit("repair:drop-unknown", &a));
        assert!(hit("would:business/exceeds_remaining", &a) && hit("would:business", &a));
        assert!(!hit("would:ready", &a) && !hit("would:business", &b));
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

    #[test]
    fn which_queries_only_narrow() {
        assert!(narrows("", "s"));
        assert!(narrows("s", "st"));
        assert!(narrows("stage:s", "stage:sc"));
        assert!(narrows("stage:schema", "stage:schema amount"));
        assert!(narrows("amount ", "amount x"));
        assert!(!narrows("st", "s"));
        assert!(!narrows("stage", "stage:"));
        assert!(!narrows("flip", "flipped"));
        assert!(!narrows("pointer:/a", "pointer:/am"));
        assert!(!narrows("!a", "!ab"));
        assert!(!narrows("a$", "a$b"));
    }

    #[test]
    fn the_plain_fast_path_agrees_with_nucleo() {
        let hays = [
            "c0000123 SCHEMA_MISMATCH /amount_minor \"5000\" is not of type \"integer\" captures/log.jsonl:124",
            "valid-proposal captures/valid-proposal.json",
            "amount-8000-intent-5000 INTENT_MISMATCH /amount_minor proposal 8000 captures/cases.jsonl:20",
            "",
            "Ab",
        ];
        let queries = [
            "s",
            "sc",
            "sch",
            "a8000",
            "8000-intent",
            "zz",
            "AMT",
            "amount 8000",
            "ba",
            "ab",
            "c0 124",
        ];
        let m = &mut FuzzyMatcher::default();
        for q in queries {
            let fast = Query::parse(q);
            assert!(fast.plain.is_some(), "{q}");
            let mut slow = Query::parse(q);
            slow.plain = None;
            for h in hays {
                assert_eq!(
                    fast.text_matches(h, m),
                    slow.text_matches(h, m),
                    "{q:?} on {h:?}"
                );
            }
        }
        assert!(Query::parse("^ab").plain.is_none());
        assert!(Query::parse("ab$").plain.is_none());
        assert!(Query::parse("é").plain.is_none());
    }
}
