//! The cursor and scroll offset of a pane of rows (the list, the triage tree, the chain
//! tree): one way to move and to keep the cursor in view.

/// `cursor` moved by `delta` rows, clamped to `0..n` (`cursor` itself when `n` is 0).
pub fn moved(cursor: usize, delta: isize, n: usize) -> usize {
    if n == 0 {
        return cursor;
    }
    cursor.saturating_add_signed(delta).min(n - 1)
}

/// The offset that keeps `cursor` inside a window of `h` visible rows starting at `offset`
/// (the window moves only as far as it must).
pub fn following(cursor: usize, offset: usize, h: usize) -> usize {
    if cursor < offset {
        cursor
    } else if cursor >= offset + h {
        cursor + 1 - h
    } else {
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_clamped_and_follows_only_as_far_as_needed() {
        assert_eq!(moved(3, -5, 10), 0);
        assert_eq!(moved(3, 20, 10), 9);
        assert_eq!(moved(3, 1, 0), 3);
        assert_eq!(following(2, 5, 4), 2);
        assert_eq!(following(9, 0, 4), 6);
        assert_eq!(following(5, 3, 4), 3);
    }
}
