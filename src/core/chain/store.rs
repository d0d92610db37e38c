//! The storage under a [`ChainSet`](super::ChainSet) (`docs/chains.md#memory`): vectors in
//! chunks allocated once at their full size (never a doubling that holds one and a half
//! times its contents while it copies), and the chains' ids kept once in a text arena behind
//! a table of 4-byte indexes.

use std::hash::BuildHasher;

/// A vector of `T` in chunks of `N` (a power of two): the first chunk grows as a vector
/// does up to `N`, every later one is allocated at `N` once and never moves. Index `i` is
/// element `i % N` of chunk `i / N`; a run pushed with [`Chunks::push_run`] never straddles
/// two chunks, so it may leave the rest of a chunk unused (its indexes are never given).
#[derive(Debug, Clone)]
pub(super) struct Chunks<T, const N: usize> {
    chunks: Vec<Vec<T>>,
    /// The next index [`Chunks::push`] gives.
    end: usize,
}

impl<T, const N: usize> Default for Chunks<T, N> {
    fn default() -> Self {
        Chunks {
            chunks: Vec::new(),
            end: 0,
        }
    }
}

impl<T: Copy, const N: usize> Chunks<T, N> {
    /// One past the last index given (the unused tails of chunks included).
    pub(super) fn end(&self) -> usize {
        self.end
    }

    /// Element `i` (an index this gave).
    pub(super) fn get(&self, i: usize) -> &T {
        &self.chunks[i / N][i % N]
    }

    /// Element `i` (an index this gave), to change it.
    pub(super) fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / N][i % N]
    }

    /// Elements `i .. i + n` (a run [`Chunks::push_run`] gave, `n` its length).
    pub(super) fn run(&self, i: usize, n: usize) -> &[T] {
        &self.chunks[i / N][i % N..i % N + n]
    }

    /// Appends `x`; its index.
    pub(super) fn push(&mut self, x: T) -> usize {
        self.push_run(std::slice::from_ref(&x))
    }

    /// Appends `xs` (at most `N` of them) within one chunk; the index of the first.
    pub(super) fn push_run(&mut self, xs: &[T]) -> usize {
        assert!(xs.len() <= N, "a run of {} in chunks of {N}", xs.len());
        if self.end % N + xs.len() > N || self.chunks.len() * N <= self.end {
            // into the next chunk (what is left of this one unused)
            self.end = self.end.div_ceil(N) * N;
            if self.chunks.is_empty() {
                self.chunks.push(Vec::new());
            } else {
                self.chunks.push(Vec::with_capacity(N));
            }
        }
        let Some(c) = self.chunks.last_mut() else {
            unreachable!("a chunk was pushed above")
        };
        reserve(c, xs.len(), N);
        c.extend_from_slice(xs);
        let at = self.end;
        self.end += xs.len();
        at
    }

    /// The elements of every chunk with their indexes (a chunk's unused tail left out).
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        self.chunks
            .iter_mut()
            .enumerate()
            .flat_map(|(c, v)| v.iter_mut().enumerate().map(move |(i, x)| (c * N + i, x)))
    }

    /// The bytes allocated (capacities).
    pub(super) fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Vec<T>>()
            + self.chunks.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<T>()
    }
}

/// Makes room in `v` for `more` (at most `max` in all, a power of two): by doubling, never
/// past `max` (a vector's own growth may pass it when a run is longer than it holds).
fn reserve<T>(v: &mut Vec<T>, more: usize, max: usize) {
    let need = v.len() + more;
    if need > v.capacity() {
        v.reserve_exact(need.next_power_of_two().min(max).max(need) - v.len());
    }
}

/// Bytes of a chunk of the id arena (an id longer than this has a chunk of its own).
const ID_CHUNK: usize = 1 << 20;

/// Where an id is in the arena: its chunk, its first byte there and its length.
#[derive(Debug, Clone, Copy)]
pub(super) struct IdAt {
    chunk: u32,
    at: u32,
    len: u32,
}

/// Ids kept once each: their text in an arena of 1 MiB chunks, and a hash table of 4-byte
/// indexes into [`Ids::at`] (the table compares the full text on every hit: two ids are one
/// only when their texts are equal, whatever their hashes).
#[derive(Debug, Clone, Default)]
pub(super) struct Ids {
    text: Vec<String>,
    /// Per id (by its index), where its text is.
    at: Chunks<IdAt, { 1 << 14 }>,
    table: hashbrown::HashTable<u32>,
    hasher: std::hash::RandomState,
    /// The index [`Ids::intern`] gave last: a chain's attempts mostly come one after
    /// another, and an id equal to it is found without hashing (its text is compared).
    last: u32,
}

fn text_of(text: &[String], at: IdAt) -> &str {
    let start = at.at as usize;
    &text[at.chunk as usize][start..start + at.len as usize]
}

impl Ids {
    /// How many ids.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.at.end()
    }

    /// The text of id `i` (an index [`Ids::intern`] gave).
    pub(super) fn get(&self, i: u32) -> &str {
        text_of(&self.text, *self.at.get(i as usize))
    }

    /// The index of `id`, and whether it is new (added now, indexes given in order from 0).
    pub(super) fn intern(&mut self, id: &str) -> (u32, bool) {
        if self.at.end() > self.last as usize && self.get(self.last) == id {
            return (self.last, false);
        }
        let (i, new) = self.intern_hashed(id);
        self.last = i;
        (i, new)
    }

    /// [`Ids::intern`] through the table.
    fn intern_hashed(&mut self, id: &str) -> (u32, bool) {
        let hash = self.hasher.hash_one(id);
        let (text, at) = (&self.text, &self.at);
        if let Some(&i) = self
            .table
            .find(hash, |&i| text_of(text, *at.get(i as usize)) == id)
        {
            return (i, false);
        }
        let fits = self
            .text
            .last()
            .is_some_and(|t| t.len() + id.len() <= t.capacity().max(ID_CHUNK));
        if !fits {
            // the first chunk grows by doubling up to a chunk; later ones are allocated at a
            // chunk once (or at the id's length, for one longer than a chunk)
            self.text.push(if self.text.is_empty() {
                String::new()
            } else {
                String::with_capacity(id.len().max(ID_CHUNK))
            });
        }
        let chunk = self.text.len() - 1;
        let t = &mut self.text[chunk];
        let need = t.len() + id.len();
        if need > t.capacity() {
            t.reserve_exact(need.next_power_of_two().min(ID_CHUNK).max(need) - t.len());
        }
        let place = IdAt {
            chunk: u32::try_from(chunk).expect("fewer than 2^32 chunks of ids"),
            at: u32::try_from(t.len()).expect("a chunk of ids is under 4 GiB"),
            len: u32::try_from(id.len()).expect("an id is under 4 GiB"),
        };
        t.push_str(id);
        let i = u32::try_from(self.at.push(place)).expect("fewer than 2^32 chains");
        let (text, at, hasher) = (&self.text, &self.at, &self.hasher);
        self.table.insert_unique(hash, i, |&j| {
            hasher.hash_one(text_of(text, *at.get(j as usize)))
        });
        (i, true)
    }

    /// The bytes allocated: the arena's chunks, the places, the table.
    pub(super) fn heap_bytes(&self) -> usize {
        self.text.iter().map(String::capacity).sum::<usize>()
            + self.text.capacity() * std::mem::size_of::<String>()
            + self.at.heap_bytes()
            + self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_never_straddle_a_chunk_and_indexes_stay_put() {
        let mut c: Chunks<u32, 4> = Chunks::default();
        assert_eq!(c.push_run(&[1, 2, 3]), 0);
        // two more do not fit in the first chunk's last slot: the next chunk
        assert_eq!(c.push_run(&[4, 5]), 4);
        assert_eq!(c.push(6), 6);
        assert_eq!(c.push(7), 7);
        assert_eq!(c.push(8), 8);
        assert_eq!((c.run(0, 3), c.run(4, 2)), (&[1, 2, 3][..], &[4, 5][..]));
        assert_eq!((*c.get(6), *c.get(8), c.end()), (6, 8, 9));
        *c.get_mut(7) = 70;
        let all: Vec<(usize, u32)> = c.iter_mut().map(|(i, x)| (i, *x)).collect();
        assert_eq!(
            all,
            [
                (0, 1),
                (1, 2),
                (2, 3),
                (4, 4),
                (5, 5),
                (6, 6),
                (7, 70),
                (8, 8)
            ]
        );
        // later chunks are allocated at their full size once
        assert_eq!(c.chunks[1].capacity(), 4);
    }

    #[test]
    fn ids_are_kept_once_by_their_full_text() {
        let mut ids = Ids::default();
        assert_eq!(ids.intern("a"), (0, true));
        assert_eq!(ids.intern("b"), (1, true));
        assert_eq!(ids.intern("a"), (0, false));
        // an id longer than a chunk of the arena has a chunk of its own
        let long = "x".repeat(ID_CHUNK + 3);
        assert_eq!(ids.intern(&long), (2, true));
        assert_eq!(ids.intern("c"), (3, true));
        assert_eq!(ids.intern(&long), (2, false));
        assert_eq!(
            (ids.get(0), ids.get(1), ids.get(2).len(), ids.get(3)),
            ("a", "b", ID_CHUNK + 3, "c")
        );
        assert_eq!(ids.len(), 4);
        // 100,000 more, each found again by its text
        for n in 0..100_000u32 {
            assert_eq!(ids.intern(&format!("loop-{n}")), (n + 4, true));
        }
        for n in (0..100_000u32).step_by(7) {
            assert_eq!(ids.intern(&format!("loop-{n}")), (n + 4, false));
            assert_eq!(ids.get(n + 4), format!("loop-{n}"));
        }
        assert_eq!(ids.len(), 100_004);
    }
}
