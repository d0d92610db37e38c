//! The bytes of a JSON string's text that stand for themselves (RFC 8259 section 7): a run
//! of them ends at a `"`, a `\` or a control character. Found eight bytes a step, as
//! serde_json's own string scan does; shared by the OTLP byte scan
//! (`crate::core::shape::otlp`) and the `meta` writer (`crate::core::meta`).

/// Eight copies of a byte.
#[inline]
const fn lanes(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The high bit of each byte of `x` that is zero (exact up to the first such byte).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(lanes(1)) & !x & lanes(0x80)
}

/// Whether a string's byte ends a run of plain text: `"`, `\` or a control character.
#[inline]
pub(crate) fn special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

/// The index of the first special byte ([`special`]) of `b` at or after `j`, or `b.len()`:
/// eight bytes a step (serde_json's own string scan does the same).
#[inline]
pub(crate) fn to_special(b: &[u8], mut j: usize) -> usize {
    if b.get(j).is_none_or(|&c| special(c)) {
        return j;
    }
    while let Some(word) = b.get(j..j + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let m = zero_bytes(x ^ lanes(b'"'))
            | zero_bytes(x ^ lanes(b'\\'))
            | (x.wrapping_sub(lanes(0x20)) & !x & lanes(0x80));
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while b.get(j).is_some_and(|&c| !special(c)) {
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_word_search_is_the_byte_search() {
        let text: Vec<u8> = (0..600u32)
            .map(|i| match (i * 7919) % 41 {
                0 => b'"',
                1 => b'\\',
                2 => 0x1f,
                3 => 0x7f,
                4 => 0xc3,
                5 => 0x20,
                n => b'a' + (n % 26) as u8,
            })
            .collect();
        for j in 0..=text.len() {
            let naive = (j..text.len())
                .find(|&k| super::special(text[k]))
                .unwrap_or(text.len());
            assert_eq!(super::to_special(&text, j), naive, "from {j}");
        }
        let plain = vec![b'x'; 37];
        for j in 0..=plain.len() {
            assert_eq!(super::to_special(&plain, j), plain.len());
        }
    }
}
