//! Whether a JSON number is held exactly (`docs/verdicts.md#numbers`).
//!
//! The program holds a number as a 64-bit integer (`i64` / `u64`) or an IEEE 754 double
//! (`serde_json` without `arbitrary_precision`, which the CEL binding cannot take). RFC 8259
//! section 6 lets an implementation limit the range and precision of numbers, and I-JSON
//! (RFC 7493 section 2.2) says a message should not hold numbers of greater magnitude or
//! precision than a double. Every number read is held exactly or refused, so every
//! comparison (the confirmed-intent comparison, a schema's `const` and `enum`) compares
//! exact decimal values:
//! - an integer of 64 bits (`-9223372036854775808` to `18446744073709551615`) is held as it is;
//! - any other number is a double, and is kept only when the shortest decimal that reads
//!   back as that double has the number's own value (`0.1`, `1e300`, `1.5e-320`); otherwise
//!   it has more precision than a double holds (`9007199254740993.0`, an integer of 30
//!   digits), underflows (a non-zero number that reads as 0: `1e-400`) or overflows
//!   (`1e400`).

/// How a number token would not be held exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Loss {
    /// Beyond the largest double (`1e400`).
    Overflow,
    /// Not zero, but it reads as 0 (`1e-400`).
    Underflow,
    /// It reads as a double whose shortest decimal (given) has another value.
    Precision(String),
}

/// Whether `token` (an RFC 8259 number, as the grammar allows it) would lose its value;
/// `None` when it is held exactly. Linear in the token's length.
pub(super) fn loss(token: &str) -> Option<Loss> {
    let unsigned = token.strip_prefix('-').unwrap_or(token);
    let (mantissa, exp) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if exp.is_none()
        && frac.is_empty()
        && (token.parse::<u64>().is_ok() || token.parse::<i64>().is_ok())
    {
        return None;
    }
    let (digits, sci) = significant(int, frac, exp)?;
    // at most 15 significant digits (DBL_DIG) inside the normal range always read back
    if digits.len() <= 15 && (-307..=308).contains(&sci) {
        return None;
    }
    let value: f64 = token.parse().ok()?;
    if value.is_infinite() {
        return Some(Loss::Overflow);
    }
    if value == 0.0 {
        return Some(Loss::Underflow);
    }
    let shortest = format!("{:e}", value.abs());
    let (m, e) = shortest.split_once('e')?;
    let (i, f) = m.split_once('.').unwrap_or((m, ""));
    let back = significant(i, f, Some(e));
    if back
        .as_ref()
        .is_some_and(|(d, s)| *d == digits && *s == sci)
    {
        return None;
    }
    // what it reads as: plain within 1e-6..1e21 (as JavaScript prints numbers), else
    // scientific
    let sign = if value < 0.0 { "-" } else { "" };
    let read = if (-6..=20).contains(&back.map_or(0, |b| b.1)) {
        format!("{sign}{}", value.abs())
    } else {
        format!("{sign}{shortest}")
    };
    Some(Loss::Precision(read))
}

/// The significant digits of a decimal (no leading or trailing zeros) and the exponent of
/// its first digit (`12.5e3` is `("125", 4)`); `None` for zero (zero is always exact).
fn significant(int: &str, frac: &str, exp: Option<&str>) -> Option<(String, i64)> {
    let all = || int.bytes().chain(frac.bytes());
    let lead = all().take_while(|&b| b == b'0').count();
    let total = int.len() + frac.len();
    if lead == total {
        return None;
    }
    let trail = all().rev().take_while(|&b| b == b'0').count();
    let digits: String = all()
        .skip(lead)
        .take(total - lead - trail)
        .map(char::from)
        .collect();
    let exp = exp.map_or(0i64, |e| {
        let (neg, d) = match e.as_bytes().first() {
            Some(b'-') => (true, &e[1..]),
            Some(b'+') => (false, &e[1..]),
            _ => (false, e),
        };
        let v = d.bytes().fold(0i64, |v, b| {
            v.saturating_mul(10).saturating_add(i64::from(b - b'0'))
        });
        if neg { -v } else { v }
    });
    // the first significant digit's place: int.len() - 1 - lead
    let sci = exp.saturating_add(int.len() as i64 - 1 - lead as i64);
    Some((digits, sci))
}

#[cfg(test)]
mod tests {
    use super::{Loss, loss};

    #[test]
    fn exact_numbers_and_the_three_losses() {
        for ok in [
            "0",
            "-0",
            "0.0",
            "-0.0e-999",
            "1",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            "0.1",
            "1.5",
            "1e300",
            "1E+2",
            "100000000000000000000",
            "9007199254740992.0",
            "1.7976931348623157e308",
            "5e-324",
            "1.5e-320",
            "2.2250738585072014e-308",
            "0.30000000000000004",
            "123.456e-7",
            "1.0000000000000000000",
        ] {
            assert_eq!(loss(ok), None, "{ok}");
        }
        assert_eq!(loss("1e-400"), Some(Loss::Underflow));
        assert_eq!(loss("-2e-400"), Some(Loss::Underflow));
        assert_eq!(loss("1e400"), Some(Loss::Overflow));
        assert_eq!(
            loss("9007199254740993.0"),
            Some(Loss::Precision("9007199254740992".into()))
        );
        assert_eq!(
            loss("123456789012345678901234567890"),
            Some(Loss::Precision("1.2345678901234568e29".into()))
        );
        // 2^64 is a double, but the shortest decimal of that double is another number: both
        // cannot be kept, or they would compare equal
        assert_eq!(
            loss("18446744073709551616"),
            Some(Loss::Precision("18446744073709552000".into()))
        );
        assert_eq!(loss("18446744073709552000"), None);
        assert_eq!(
            loss("18446744073709551617"),
            Some(Loss::Precision("18446744073709552000".into()))
        );
        assert_eq!(
            loss("0.1000000000000000055511151231257827"),
            Some(Loss::Precision("0.1".into()))
        );
    }
}
