//! "Did you mean" hints for misspelt keys and names.

/// The candidate closest to `word` by Jaro-Winkler similarity, if it is close enough (≥ 0.8)
/// to be a plausible typo (`intnet` → `intent`, `minimun` → `minimum`); ASCII case is
/// ignored (`Anthropic` → `anthropic`). The one "did you mean" of the project.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&word, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `did you mean `x`?` for use as a [`crate::core::verdict::Finding`] hint, if any candidate is close.
pub fn hint_for<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    did_you_mean(word, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_key() {
        let keys = ["id", "intent", "context", "expect", "output"];
        assert_eq!(did_you_mean("intnet", keys), Some("intent"));
        assert_eq!(did_you_mean("contxt", keys), Some("context"));
        assert_eq!(did_you_mean("zebra", keys), None);
    }
}
