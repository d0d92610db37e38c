//! JSON Pointer (RFC 6901): the one place that escapes, unescapes, splits, builds and
//! resolves pointers.
//!
//! A pointer is `""` (the whole document) or a sequence of `/`-prefixed reference tokens
//! (section 3). In a token `~` is written `~0` and `/` is written `~1`; unescaping turns
//! `~1` into `/` first-come left to right, so `~01` is `~1`, never `/` (section 4).

use serde_json::Value;
use std::borrow::Cow;

/// Why a string is not a JSON Pointer (RFC 6901 sections 3 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// The pointer is neither `""` nor starts with `/` (section 3).
    #[error("a JSON Pointer is empty or starts with \"/\" (RFC 6901 section 3)")]
    NoLeadingSlash,
    /// A `~` at byte `offset` (of the token or pointer given) is not followed by `0` or
    /// `1` (section 3: `escaped = "~" ( "0" / "1" )`).
    #[error("\"~\" at byte {offset} is not followed by \"0\" or \"1\" (RFC 6901 section 3)")]
    BadEscape {
        /// Byte offset of the `~`.
        offset: usize,
    },
}

/// One reference token escaped for a pointer (RFC 6901 section 3): `~` as `~0`, then `/`
/// as `~1`. Borrowed when there is nothing to escape.
pub fn escape(token: &str) -> Cow<'_, str> {
    if !token.contains(['~', '/']) {
        return Cow::Borrowed(token);
    }
    let mut out = String::with_capacity(token.len() + 2);
    push_escaped(&mut out, token);
    Cow::Owned(out)
}

/// Appends `token` escaped (RFC 6901 section 3, as [`escape`]) to `out`, without a `/`.
pub fn push_escaped(out: &mut String, token: &str) {
    let mut rest = token;
    while let Some(n) = rest.find(['~', '/']) {
        out.push_str(&rest[..n]);
        out.push_str(if rest.as_bytes()[n] == b'~' {
            "~0"
        } else {
            "~1"
        });
        rest = &rest[n + 1..];
    }
    out.push_str(rest);
}

/// Appends one reference token to `pointer`: `/` and the token escaped (RFC 6901
/// section 3). `push(&mut "/a".into(), "b/c")` gives `/a/b~1c`.
pub fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    push_escaped(pointer, token);
}

/// The pointer of the unescaped reference `tokens` (RFC 6901 section 3): `""` for none,
/// else each token as `/` and the token escaped.
pub fn join<I, S>(tokens: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for t in tokens {
        push(&mut out, t.as_ref());
    }
    out
}

/// One reference token unescaped (RFC 6901 section 4): `~1` is `/`, `~0` is `~`, read
/// left to right (`~01` is `~1`). Borrowed when the token holds no `~`.
///
/// # Errors
/// [`PointerError::BadEscape`] when a `~` is not followed by `0` or `1` (offset in `token`).
pub fn unescape(token: &str) -> Result<Cow<'_, str>, PointerError> {
    let Some(first) = token.find('~') else {
        return Ok(Cow::Borrowed(token));
    };
    let mut out = String::with_capacity(token.len());
    out.push_str(&token[..first]);
    let b = token.as_bytes();
    let mut i = first;
    while i < b.len() {
        if b[i] == b'~' {
            match b.get(i + 1) {
                Some(b'0') => out.push('~'),
                Some(b'1') => out.push('/'),
                _ => return Err(PointerError::BadEscape { offset: i }),
            }
            i += 2;
        } else {
            // copy up to the next `~` (never inside a multi-byte character: `~` is ASCII)
            let n = token[i..].find('~').map_or(b.len(), |n| i + n);
            out.push_str(&token[i..n]);
            i = n;
        }
    }
    Ok(Cow::Owned(out))
}

/// The raw (still escaped) reference tokens of `pointer` (RFC 6901 section 3): none for
/// `""`, else the pieces between the `/`s (`"/"` has one empty token, `"/a//b"` three).
///
/// # Errors
/// [`PointerError::NoLeadingSlash`] when `pointer` is not empty and does not start with `/`.
pub fn raw_tokens(pointer: &str) -> Result<impl Iterator<Item = &str>, PointerError> {
    let rest = match pointer {
        "" => None,
        p => Some(p.strip_prefix('/').ok_or(PointerError::NoLeadingSlash)?),
    };
    Ok(rest.into_iter().flat_map(|r| r.split('/')))
}

/// `pointer` split into unescaped reference tokens (RFC 6901 sections 3 and 4): `""` is
/// no tokens, `"/"` one empty token, `"/a~1b/~01"` is `["a/b", "~1"]`.
///
/// # Errors
/// [`PointerError::NoLeadingSlash`], or [`PointerError::BadEscape`] with the offset of the
/// bad `~` in `pointer`.
pub fn split(pointer: &str) -> Result<Vec<String>, PointerError> {
    Ok(tokens(pointer)?.into_iter().map(Cow::into_owned).collect())
}

/// [`split`] without copying: each token borrowed from `pointer` unless it holds a `~`.
///
/// # Errors
/// As [`split`].
pub fn tokens(pointer: &str) -> Result<Vec<Cow<'_, str>>, PointerError> {
    if !pointer.contains('~') {
        return Ok(raw_tokens(pointer)?.map(Cow::Borrowed).collect());
    }
    let mut offset = 1;
    raw_tokens(pointer)?
        .map(|raw| {
            let t = unescape(raw).map_err(|e| match e {
                PointerError::BadEscape { offset: at } => PointerError::BadEscape {
                    offset: offset + at,
                },
                e => e,
            });
            offset += raw.len() + 1;
            t
        })
        .collect()
}

/// A reference token read as an array index (RFC 6901 section 4): `0`, or ASCII digits
/// without a leading zero (`01` is not an index), that fit a `usize`. `-` (the element
/// after the last) is never an index here: it names no existing value.
pub fn array_index(token: &str) -> Option<usize> {
    let b = token.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    token.parse().ok()
}

/// The child of `value` named by one unescaped reference token (RFC 6901 section 4): an
/// object's member of that name, or an array's element when the token is an
/// [`array_index`] in range; `None` otherwise (and always for a scalar).
pub fn child<'v>(value: &'v Value, token: &str) -> Option<&'v Value> {
    match value {
        Value::Object(m) => m.get(token),
        Value::Array(a) => a.get(array_index(token)?),
        _ => None,
    }
}

/// The value at `pointer` in `value` (RFC 6901 section 4), or `None` when nothing is
/// there or `pointer` is malformed (see [`split`]). Allocates only for tokens with `~`.
pub fn resolve<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    raw_tokens(pointer)
        .ok()?
        .try_fold(value, |v, raw| child(v, &unescape(raw).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escape_and_push_write_tilde_first_then_slash() {
        assert_eq!(escape("plain"), "plain");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a/b"), "a~1b");
        assert_eq!(escape("m~n"), "m~0n");
        // `~1` literally: the `~` is escaped, the `1` stays
        assert_eq!(escape("~1"), "~01");
        assert_eq!(escape("/~/é"), "~1~0~1é");
        assert_eq!(escape(""), "");
        let mut p = String::from("/a");
        push(&mut p, "b/c");
        push(&mut p, "");
        push(&mut p, "~");
        assert_eq!(p, "/a/b~1c//~0");
        assert_eq!(join(["a/b", "~1", "0"]), "/a~1b/~01/0");
        assert_eq!(join(Vec::<String>::new()), "");
        assert_eq!(join([""]), "/");
    }

    #[test]
    fn unescape_reads_left_to_right() {
        assert_eq!(unescape("plain").unwrap(), "plain");
        assert!(matches!(unescape("plain").unwrap(), Cow::Borrowed(_)));
        assert_eq!(unescape("a~1b").unwrap(), "a/b");
        assert_eq!(unescape("m~0n").unwrap(), "m~n");
        // `~01` is `~` then `1`, not `/`
        assert_eq!(unescape("~01").unwrap(), "~1");
        assert_eq!(unescape("~10").unwrap(), "/0");
        assert_eq!(unescape("é~0é").unwrap(), "é~é");
        assert_eq!(unescape("").unwrap(), "");
        assert_eq!(
            unescape("ab~").unwrap_err(),
            PointerError::BadEscape { offset: 2 }
        );
        assert_eq!(
            unescape("~0~2").unwrap_err(),
            PointerError::BadEscape { offset: 2 }
        );
        assert_eq!(
            unescape("~~0").unwrap_err(),
            PointerError::BadEscape { offset: 0 }
        );
    }

    #[test]
    fn escape_round_trips() {
        for t in ["", "~", "/", "~1", "~0", "a/~b", "~~//", "é/~ü"] {
            assert_eq!(unescape(&escape(t)).unwrap(), t, "{t:?}");
            assert_eq!(split(&join([t])).unwrap(), [t], "{t:?}");
        }
    }

    #[test]
    fn split_gives_tokens_or_the_rfc_errors() {
        assert_eq!(split("").unwrap(), Vec::<String>::new());
        assert_eq!(split("/").unwrap(), [""]);
        assert_eq!(split("//").unwrap(), ["", ""]);
        assert_eq!(split("/a//b/").unwrap(), ["a", "", "b", ""]);
        assert_eq!(
            split("/a~1b/~01/0/01/-").unwrap(),
            ["a/b", "~1", "0", "01", "-"]
        );
        assert_eq!(split("a").unwrap_err(), PointerError::NoLeadingSlash);
        assert_eq!(split("#/a").unwrap_err(), PointerError::NoLeadingSlash);
        // offsets are in the whole pointer
        assert_eq!(
            split("/ab/c~").unwrap_err(),
            PointerError::BadEscape { offset: 5 }
        );
        assert_eq!(
            split("/~2").unwrap_err(),
            PointerError::BadEscape { offset: 1 }
        );
        assert_eq!(
            raw_tokens("/a~1b/").unwrap().collect::<Vec<_>>(),
            ["a~1b", ""]
        );
        assert!(raw_tokens("x").is_err());
        assert_eq!(raw_tokens("").unwrap().count(), 0);
    }

    #[test]
    fn array_index_tokens() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("10"), Some(10));
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("00"), None);
        assert_eq!(array_index("-"), None);
        assert_eq!(array_index("-1"), None);
        assert_eq!(array_index("+1"), None);
        assert_eq!(array_index(""), None);
        assert_eq!(array_index("1e2"), None);
        assert_eq!(array_index("٣"), None);
        assert_eq!(array_index("99999999999999999999999"), None);
    }

    #[test]
    fn resolve_follows_rfc_6901_section_5() {
        // the examples of RFC 6901 section 5
        let doc = json!({
            "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4,
            "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8
        });
        assert_eq!(resolve(&doc, ""), Some(&doc));
        assert_eq!(resolve(&doc, "/foo"), Some(&json!(["bar", "baz"])));
        assert_eq!(resolve(&doc, "/foo/0"), Some(&json!("bar")));
        for (p, n) in [
            ("/", 0),
            ("/a~1b", 1),
            ("/c%d", 2),
            ("/e^f", 3),
            ("/g|h", 4),
            ("/i\\j", 5),
            ("/k\"l", 6),
            ("/ ", 7),
            ("/m~0n", 8),
        ] {
            assert_eq!(resolve(&doc, p), Some(&json!(n)), "{p}");
        }
        assert_eq!(resolve(&doc, "/foo/01"), None);
        assert_eq!(resolve(&doc, "/foo/-"), None);
        assert_eq!(resolve(&doc, "/foo/2"), None);
        assert_eq!(resolve(&doc, "/foo/0/x"), None);
        assert_eq!(resolve(&doc, "foo"), None);
        assert_eq!(resolve(&doc, "/m~2n"), None);
        // an object keyed "0" or "01" answers those tokens as member names
        let keyed = json!({"0": "zero", "01": "one", "-": "dash", "~1": "t"});
        assert_eq!(resolve(&keyed, "/0"), Some(&json!("zero")));
        assert_eq!(resolve(&keyed, "/01"), Some(&json!("one")));
        assert_eq!(resolve(&keyed, "/-"), Some(&json!("dash")));
        assert_eq!(resolve(&keyed, "/~01"), Some(&json!("t")));
        assert_eq!(child(&json!(3), "0"), None);
    }
}
