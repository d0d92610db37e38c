//! The filter job: the filter text and its parsed query, and the filtering of the sorted
//! rows into the list's view, done in slices between frames when there are many rows.

use super::list::List;
use crate::tui::filter::{FuzzyMatcher, Query, Rank, advance, keeps, narrows, write_haystack};
use crate::tui::store::{FLIPPED, Row, Store};
use std::time::{Duration, Instant};

/// How long one slice of filtering may take (a keypress's frame stays under 16 ms).
pub const FILTER_SLICE: Duration = Duration::from_millis(6);

/// The fuzzy filter's fast path over a row's haystack pieces without writing the
/// haystack: for plain ASCII words, how far each word gets through the pieces shared by
/// many rows (the reason of an outcome, a pointer set, a file name) is worked out once per
/// query; per row only the id, the message and the line number are scanned.
struct FastText<'a> {
    words: &'a [Vec<u8>],
    /// Per word, per outcome: the word position after the reason, for each start position
    /// (`None`: the piece is not ASCII, use the slow path).
    kind: Vec<Vec<Option<Vec<u16>>>>,
    /// The same for the pointer sets (the pointers in order).
    pset: Vec<Vec<Option<Vec<u16>>>>,
    /// The same for the file names.
    file: Vec<Vec<Option<Vec<u16>>>>,
}

impl<'a> FastText<'a> {
    fn new(words: &'a [Vec<u8>], store: &Store) -> FastText<'a> {
        let table = |w: &[u8], pieces: &[&str]| -> Option<Vec<u16>> {
            if !pieces.iter().all(|p| p.is_ascii()) || w.len() >= u16::MAX as usize {
                return None;
            }
            Some(
                (0..=w.len())
                    .map(|k| pieces.iter().fold(k, |k, p| advance(w, k, p.as_bytes())) as u16)
                    .collect(),
            )
        };
        FastText {
            words,
            kind: words
                .iter()
                .map(|w| {
                    store
                        .kinds
                        .iter()
                        .map(|k| table(w, &[k.outcome.reason.as_ref().map_or("", |r| r.as_str())]))
                        .collect()
                })
                .collect(),
            pset: words
                .iter()
                .map(|w| {
                    store
                        .psets
                        .iter()
                        .map(|p| {
                            let v: Vec<&str> = p.iter().map(String::as_str).collect();
                            table(w, &v)
                        })
                        .collect()
                })
                .collect(),
            file: words
                .iter()
                .map(|w| store.files.iter().map(|f| table(w, &[f])).collect())
                .collect(),
        }
    }

    /// Whether every word matches the row's haystack; `None` when a piece is not ASCII.
    fn matches(&self, store: &Store, r: &Row) -> Option<bool> {
        let id = store.id(r).as_bytes();
        let msg = store.message(r).unwrap_or("").as_bytes();
        if !id.is_ascii() || !msg.is_ascii() {
            return None;
        }
        let mut digits = [0u8; 10];
        let mut n = 0;
        if r.line > 0 {
            let mut l = r.line;
            while l > 0 {
                digits[9 - n] = b'0' + (l % 10) as u8;
                l /= 10;
                n += 1;
            }
        }
        let line = &digits[10 - n..];
        // a part of a record of several captures: `#PART` after the line
        let mut part_digits = [0u8; 5];
        let mut m = 0;
        let mut p = r.part;
        while p > 0 {
            part_digits[4 - m] = b'0' + (p % 10) as u8;
            p /= 10;
            m += 1;
        }
        let part = &part_digits[5 - m..];
        for (i, w) in self.words.iter().enumerate() {
            let mut k = advance(w, 0, id);
            k = self.kind[i][r.kind as usize].as_ref()?[k] as usize;
            k = self.pset[i][r.pointers as usize].as_ref()?[k] as usize;
            k = advance(w, k, msg);
            k = self.file[i][r.file as usize].as_ref()?[k] as usize;
            if r.line > 0 {
                k = advance(w, k, b":");
                k = advance(w, k, line);
            }
            if r.part > 0 {
                k = advance(w, k, b"#");
                k = advance(w, k, part);
            }
            if k < w.len() {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// A filter over many rows, done in slices between frames.
#[derive(Debug)]
struct PendingFilter {
    /// The rows to test, in list order.
    from: Vec<u32>,
    /// How many of them are done.
    pos: usize,
    /// The filter text.
    text: String,
    /// See [`FilterJob::start`].
    top_if_lost: bool,
    /// The matches so far with their rank, in list order (fuzzy text only).
    ranks: Vec<(u32, Rank)>,
}

/// What one [`FilterJob::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// No filter was running.
    Idle,
    /// Some rows are left for the next step (the view holds the matches so far).
    Partial,
    /// The view is complete; the selection is to be put back with this `top_if_lost`
    /// (see [`FilterJob::start`]).
    Done {
        /// Select the first row when the selected capture was filtered out.
        top_if_lost: bool,
    },
}

/// The filter text, its query, and the filtering still to do.
#[derive(Debug)]
pub struct FilterJob {
    /// The filter text.
    pub text: String,
    query: Query,
    matcher: FuzzyMatcher,
    /// The filter text the view was computed for (from the current rows), for narrowing.
    view_filter: Option<String>,
    /// A filter still running (the view holds the matches so far).
    pending: Option<PendingFilter>,
    /// Every match of the view's filter in list order, when the view is ranked and cut
    /// (fuzzy text): what a narrowing filter starts from.
    matched: Option<Vec<u32>>,
    /// Scratch buffer for fuzzy haystacks.
    hay: String,
}

impl Default for FilterJob {
    fn default() -> FilterJob {
        FilterJob {
            text: String::new(),
            query: Query::parse(""),
            matcher: FuzzyMatcher::default(),
            view_filter: None,
            pending: None,
            matched: None,
            hay: String::new(),
        }
    }
}

impl FilterJob {
    /// Sets the filter text (the filtering itself is [`FilterJob::start`]).
    pub fn set(&mut self, text: String) {
        self.text = text;
        self.query = Query::parse(&self.text);
    }

    /// Forgets the view the last filter computed and any filter still running (the rows
    /// changed: the next filter starts from the sorted rows, never from the old view).
    pub fn reset(&mut self) {
        self.view_filter = None;
        self.pending = None;
        self.matched = None;
    }

    /// Every row the finished filter matched, in list order (the view before ranking and
    /// dropping weak fuzzy matches): row indices into `list`'s store.
    pub fn all_matches<'a>(&'a self, list: &'a List) -> &'a [u32] {
        self.matched.as_deref().unwrap_or(&list.view)
    }

    /// A did-you-mean for a `stage:` or `decision:` value that matches nothing.
    pub fn hint(&self) -> Option<&str> {
        self.query.hint()
    }

    /// Whether a filter is still running ([`FilterJob::step`] goes on with it).
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// How far the running filter is, in percent.
    pub fn progress(&self) -> Option<usize> {
        self.pending
            .as_ref()
            .map(|p| p.pos * 100 / p.from.len().max(1))
    }

    /// Starts filtering `list`'s sorted rows (or, when the filter only narrowed, its
    /// previous view) for the current query. With no query the view is every row at once
    /// and this returns true (the filter is done); else the view is emptied and the rows
    /// are tested by [`FilterJob::step`], the view growing as matches are found; with
    /// fuzzy text the finished view is ranked (see [`Rank`]) and its weak matches dropped
    /// (see [`keeps`]).
    /// `top_if_lost`: when the selected capture is filtered out, select the first row (a
    /// new filter), rather than the row at the cursor.
    pub fn start(&mut self, list: &mut List, top_if_lost: bool) -> bool {
        let pending = self.pending.take();
        let matched = self.matched.take();
        if self.query.is_empty() {
            let mut view = list.buffer();
            view.extend_from_slice(list.order());
            let old = std::mem::replace(&mut list.view, view);
            list.recycle(old);
            if let Some(p) = pending {
                list.recycle(p.from);
            }
            self.view_filter = Some(self.text.clone());
            return true;
        }
        let from = match (pending, self.view_filter.as_deref()) {
            (Some(p), _) if narrows(&p.text, &self.text) => {
                let mut v = std::mem::take(&mut list.view);
                v.extend_from_slice(&p.from[p.pos..]);
                list.recycle(p.from);
                v
            }
            (None, Some(old)) if narrows(old, &self.text) => match matched {
                // the view was ranked and cut: start from every match, in list order
                Some(m) => {
                    let old = std::mem::take(&mut list.view);
                    list.recycle(old);
                    m
                }
                None => std::mem::take(&mut list.view),
            },
            (p, _) => {
                if let Some(p) = p {
                    list.recycle(p.from);
                }
                let old = std::mem::take(&mut list.view);
                list.recycle(old);
                let mut v = list.buffer();
                v.extend_from_slice(list.order());
                v
            }
        };
        list.view = list.buffer();
        self.view_filter = None;
        self.pending = Some(PendingFilter {
            from,
            pos: 0,
            text: self.text.clone(),
            top_if_lost,
            ranks: Vec::new(),
        });
        false
    }

    /// Goes on with a running filter for about `budget`. On a partial step the cursor
    /// follows the selected capture when it was found.
    pub fn step(&mut self, list: &mut List, budget: Duration) -> Step {
        let Some(mut p) = self.pending.take() else {
            return Step::Idle;
        };
        let start = Instant::now();
        loop {
            let end = (p.pos + 4096).min(p.from.len());
            let found = self.filter_rows(&list.store, &p.from[p.pos..end], &mut p.ranks);
            list.view.extend(found);
            p.pos = end;
            if p.pos == p.from.len() {
                break;
            }
            if start.elapsed() >= budget {
                // partial: the selection stays; the cursor follows it if it was found
                let sel = list.selected_row().map(|i| i as u32);
                if let Some(c) = sel.and_then(|s| list.view.iter().position(|&i| i == s)) {
                    list.cursor = c;
                }
                self.pending = Some(p);
                return Step::Partial;
            }
        }
        self.view_filter = Some(p.text);
        list.recycle(p.from);
        if self.query.has_text() {
            self.rank(list, p.ranks);
        }
        Step::Done {
            top_if_lost: p.top_if_lost,
        }
    }

    /// Orders the finished view by rank (the list order breaking ties) and drops the
    /// weak matches; keeps every match, in list order, for a narrowing filter.
    fn rank(&mut self, list: &mut List, mut ranks: Vec<(u32, Rank)>) {
        // stable: equal ranks keep the list order (severity)
        ranks.sort_by_key(|r| std::cmp::Reverse(r.1));
        let mut view = list.buffer();
        if let Some(&(_, best)) = ranks.first() {
            let keep = keeps(best);
            view.extend(ranks.iter().filter(|(_, r)| keep(r)).map(|(i, _)| *i));
        }
        self.matched = Some(std::mem::replace(&mut list.view, view));
    }

    /// Filters `from` (row indices in list order) with the current query; with fuzzy text
    /// each match's rank is pushed to `ranks`.
    fn filter_rows(
        &mut self,
        store: &Store,
        from: &[u32],
        ranks: &mut Vec<(u32, Rank)>,
    ) -> Vec<u32> {
        let (q, m, hay) = (&self.query, &mut self.matcher, &mut self.hay);
        // the tokens depend only on a row's outcome and pointer set: decide each once
        // a pending row has no outcome, id or message yet: no query matches it
        let kind_ok: Vec<bool> = store
            .kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                i != crate::tui::store::PENDING_KIND as usize
                    && q.kind_matches(
                        k.outcome.stage,
                        k.outcome.decision,
                        k.outcome.reason.as_ref().map(|r| r.as_str()),
                        k.contract.as_deref(),
                        k.repair.as_ref(),
                    )
            })
            .collect();
        let pset_ok: Vec<bool> = store.psets.iter().map(|p| q.pointers_match(p)).collect();
        let text = q.has_text();
        let fast = q.plain_words().map(|w| FastText::new(w, store));
        let found: Vec<u32> = from
            .iter()
            .copied()
            .filter(|&i| {
                let r = &store.rows[i as usize];
                if !kind_ok[r.kind as usize] || !pset_ok[r.pointers as usize] {
                    return false;
                }
                let k = store.kind(r);
                if !q.flags_match(r.flags & FLIPPED != 0, k.outcome.misses_expect()) {
                    return false;
                }
                if !text {
                    return true;
                }
                if let Some(hit) = fast.as_ref().and_then(|f| f.matches(store, r)) {
                    return hit;
                }
                write_haystack(
                    hay,
                    store.id(r),
                    k.outcome.reason.as_ref().map(|r| r.as_str()),
                    store.pointers(r),
                    store.message(r),
                    |o| store.write_source(r, o),
                );
                q.text_matches(hay, m)
            })
            .collect();
        if text {
            for &i in &found {
                let r = &store.rows[i as usize];
                let k = store.kind(r);
                write_haystack(
                    hay,
                    store.id(r),
                    k.outcome.reason.as_ref().map(|r| r.as_str()),
                    store.pointers(r),
                    store.message(r),
                    |o| store.write_source(r, o),
                );
                // a match by the fast path that nucleo does not score ranks last
                let rank = q
                    .rank(store.id(r), hay, m)
                    .unwrap_or(Rank { tier: 0, score: 0 });
                ranks.push((i, rank));
            }
        }
        found
    }
}
