//! The capture list: every row, kept sorted by severity then id then source, the filtered
//! view over it, and the selection (a cursor in the view and the selected capture's
//! source, which stays put across re-validations).

use crate::engine::summary::CaptureSummary;
use crate::tui::store::{FLIPPED, Put, Row, Store};
use std::collections::HashSet;
use std::sync::Arc;

/// The list pane's model.
#[derive(Debug, Default)]
pub struct List {
    /// Every capture, compact, in arrival order.
    pub store: Store,
    /// Every row index, sorted by severity then id then source (rows not merged yet are in
    /// `unsorted`).
    order: Vec<u32>,
    /// Rows new or moved since `order` was last merged.
    unsorted: Vec<u32>,
    /// Pending rows whose records have no row of their own (`EngineEvent::Batch`'s
    /// `cleared`): removed at the next [`List::sort`], which passes over every row anyway.
    dropping: Vec<u32>,
    /// `order` must be sorted again from scratch (rows were removed).
    order_stale: bool,
    /// Indices into `store.rows` that pass the filter, sorted by severity then id.
    pub view: Vec<u32>,
    /// Row-index buffers to reuse.
    spare: Vec<Vec<u32>>,
    /// Position of the selection in `view`.
    pub cursor: usize,
    /// First visible position of the list.
    pub offset: usize,
    /// The selected capture's source (stays put across re-validations).
    pub selected: Option<String>,
}

impl List {
    /// The selected row.
    pub fn current(&self) -> Option<&Row> {
        self.view
            .get(self.cursor)
            .map(|&i| &self.store.rows[i as usize])
    }

    /// The id of the capture at position `pos` of the view.
    pub fn id_at(&self, pos: usize) -> Option<&str> {
        let r = &self.store.rows[*self.view.get(pos)? as usize];
        Some(self.store.id(r))
    }

    /// The selected capture's id.
    pub fn current_id(&self) -> Option<&str> {
        self.id_at(self.cursor)
    }

    /// The row of the selected capture (an index into `store.rows`).
    pub fn selected_row(&self) -> Option<usize> {
        self.store.find_source(self.selected.as_deref()?)
    }

    /// The sorted rows (every row index, in list order) as of the last [`List::sort`].
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Inserts or replaces a capture's row, unless the row holds a newer generation's
    /// result; a new row of a capture in `flipped` is flagged [`FLIPPED`]. Returns the row
    /// when applied.
    pub fn put(
        &mut self,
        s: &CaptureSummary,
        generation: u64,
        flipped: &HashSet<String>,
    ) -> Option<usize> {
        match self.store.put(s, generation) {
            Put::Stale => None,
            Put::Inserted(i) => {
                if !flipped.is_empty() && flipped.contains(&s.loc.source()) {
                    self.store.rows[i].flags |= FLIPPED;
                }
                self.unsorted.push(i as u32);
                Some(i)
            }
            Put::Replaced { index, moved } => {
                if moved {
                    self.unsorted.push(index as u32);
                }
                Some(index)
            }
        }
    }

    /// Lists the records at lines `first..=last` of `file` as pending rows (those without a
    /// row yet: `docs/commands.md#while-it-loads`); how many were added.
    pub fn put_pending(
        &mut self,
        file: &Arc<str>,
        first: u32,
        last: u32,
        generation: u64,
    ) -> usize {
        let before = self.unsorted.len();
        for line in first..=last {
            if let Some(i) = self.store.put_pending(file, line, generation) {
                self.unsorted.push(i as u32);
            }
        }
        self.unsorted.len() - before
    }

    /// Drops the pending rows of these records (file, line), which have no row of their
    /// own (no capture, or the rows of their parts): at the next [`List::sort`].
    pub fn clear_pending(&mut self, records: &[(Arc<str>, u32)]) {
        for (file, line) in records {
            if let Some(i) = self.store.find(file, *line)
                && Store::is_pending(&self.store.rows[i])
            {
                self.dropping.push(i as u32);
            }
        }
    }

    /// Removes the rows in `dropping` (before any other change to the rows' indices), the
    /// sorted rows and the rows to merge renumbered alike (linear in the list).
    fn drop_rows(&mut self) {
        if self.dropping.is_empty() {
            return;
        }
        let n = self.store.len();
        let mut new = vec![0u32; n];
        for &i in &self.dropping {
            new[i as usize] = u32::MAX;
        }
        self.dropping.clear();
        let mut k = 0u32;
        for x in &mut new {
            if *x == 0 {
                *x = k;
                k += 1;
            }
        }
        let mut at = 0usize;
        self.store.retain(|_| {
            at += 1;
            new[at - 1] != u32::MAX
        });
        for v in [&mut self.order, &mut self.unsorted, &mut self.view] {
            v.retain(|&i| new[i as usize] != u32::MAX);
            for i in v.iter_mut() {
                *i = new[*i as usize];
            }
        }
        self.cursor = self.cursor.min(self.view.len().saturating_sub(1));
    }

    /// Removes a capture's row (unless a newer generation put it there); whether it did.
    pub fn remove(&mut self, source: &str, generation: u64) -> bool {
        let Some(i) = self.store.find_source(source) else {
            return false;
        };
        if self.store.rows[i].generation > generation as u32 {
            return false;
        }
        // the rows waiting to be dropped keep their indices
        self.drop_rows();
        self.store.swap_remove(i);
        self.order_stale = true;
        true
    }

    /// Drops the rows older than generation `g` (a finished full run did not see them) and
    /// the rows still pending (a finished run gave every record its verdict).
    pub fn retain_generation(&mut self, g: u32) {
        self.dropping.clear();
        let keep = |r: &Row| r.generation >= g && !Store::is_pending(r);
        if !self.store.rows.iter().all(keep) {
            self.store.retain(keep);
            self.order_stale = true;
        }
    }

    /// Brings the sorted rows up to date: a full sort when rows were removed, else the new
    /// and moved rows sorted and merged in (linear in the list).
    pub fn sort(&mut self) {
        self.drop_rows();
        if self.order_stale || self.order.len() + self.unsorted.len() < self.store.len() {
            let mut order = self.buffer();
            order.extend(0..self.store.len() as u32);
            let store = &self.store;
            order.sort_unstable_by(|&a, &b| store.cmp(a as usize, b as usize));
            let old = std::mem::replace(&mut self.order, order);
            self.recycle(old);
            self.unsorted.clear();
            self.order_stale = false;
            return;
        }
        if self.unsorted.is_empty() {
            return;
        }
        let mut fresh = std::mem::take(&mut self.unsorted);
        fresh.sort_unstable();
        fresh.dedup();
        let n = self.store.len();
        if self.order.len() + fresh.len() > n {
            // some rows moved: take them out first
            let mut mark = vec![false; n];
            for &i in &fresh {
                mark[i as usize] = true;
            }
            self.order.retain(|&i| !mark[i as usize]);
        }
        let mut out = self.buffer();
        let store = &self.store;
        fresh.sort_unstable_by(|&a, &b| store.cmp(a as usize, b as usize));
        let old = &self.order;
        out.reserve(old.len() + fresh.len());
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < fresh.len() {
            if store.cmp(old[i] as usize, fresh[j] as usize) == std::cmp::Ordering::Greater {
                out.push(fresh[j]);
                j += 1;
            } else {
                out.push(old[i]);
                i += 1;
            }
        }
        out.extend_from_slice(&old[i..]);
        out.extend_from_slice(&fresh[j..]);
        let old = std::mem::replace(&mut self.order, out);
        self.recycle(old);
    }

    /// An empty row-index buffer (a recycled one when there is one: the lists of a million
    /// rows are rebuilt often, and reusing their buffers keeps the allocator from
    /// scattering them).
    pub fn buffer(&mut self) -> Vec<u32> {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps a row-index buffer for [`List::buffer`].
    pub fn recycle(&mut self, mut v: Vec<u32>) {
        if self.spare.len() < 3 && v.capacity() > 0 {
            v.clear();
            self.spare.push(v);
        }
    }

    /// Keeps the cursor inside a window of `h` visible rows.
    pub fn follow(&mut self, h: usize) {
        self.offset = super::scroll::following(self.cursor, self.offset, h);
        self.offset = self
            .offset
            .min(self.view.len().saturating_sub(h))
            .min(self.cursor);
    }
}
