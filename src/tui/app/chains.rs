//! The chain tree (`c`, `docs/chains.md#in-the-terminal-workbench`): the list grouped by
//! self-correction chain, one row per chain (its outcome glyph, outcome, attempt count and
//! id), each expandable to its attempts in chain order; and the chains the engine computed
//! (the same core as `check`'s report), which the header's chain funnel and the Chain tab
//! read too.

use crate::core::chain::Attempt;
use crate::engine::chains::ChainsView;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One row of the chain tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainNode {
    /// A chain: its row index in the [`ChainsView`].
    Chain(u32),
    /// An attempt: the chain's row index and the attempt's position (0-based).
    Attempt(u32, u32),
}

/// The chains and the tree over them (whether it is shown is the [`super::Mode`]'s
/// business).
#[derive(Debug, Default)]
pub struct ChainTree {
    /// The chains from the engine's last run or change (`None` until the first run ends,
    /// and for a workspace that never had a chain).
    pub view: Option<Arc<ChainsView>>,
    /// The chains expanded to their attempts, by id.
    pub expanded: HashSet<String>,
    /// The attempts of the expanded chains, by row index (made from the view when a chain
    /// is expanded or the view changes: the view keeps no chain's attempts).
    pub attempts: HashMap<u32, Vec<Attempt>>,
    /// The rows in display order.
    pub nodes: Vec<ChainNode>,
    /// Selected row.
    pub cursor: usize,
    /// First visible row.
    pub offset: usize,
}

impl ChainTree {
    /// Whether the workspace has chains.
    pub fn any(&self) -> bool {
        self.view.as_ref().is_some_and(|v| !v.is_empty())
    }

    /// Takes new chains from the engine; the tree is rebuilt with the cursor on the same
    /// chain (or attempt) when it is still there.
    pub fn set(&mut self, view: Arc<ChainsView>) {
        let at = self.current_key();
        self.view = Some(view);
        self.build();
        if let Some(key) = at
            && let Some(i) = self.position_of(&key)
        {
            self.cursor = i;
        }
    }

    /// The chain id and attempt position of the selected row.
    fn current_key(&self) -> Option<(String, Option<u32>)> {
        let v = self.view.as_ref()?;
        match *self.nodes.get(self.cursor)? {
            ChainNode::Chain(i) => Some((v.heads[i as usize].chain.clone(), None)),
            ChainNode::Attempt(i, k) => Some((v.heads[i as usize].chain.clone(), Some(k))),
        }
    }

    fn position_of(&self, key: &(String, Option<u32>)) -> Option<usize> {
        let v = self.view.as_ref()?;
        self.nodes.iter().position(|n| match *n {
            ChainNode::Chain(i) => key.1.is_none() && v.heads[i as usize].chain == key.0,
            ChainNode::Attempt(i, k) => key.1 == Some(k) && v.heads[i as usize].chain == key.0,
        })
    }

    /// Rebuilds the rows: chains in report order (the order their first attempt was read,
    /// as `check` lists them), an expanded chain followed by its attempts. The cursor stays
    /// (clamped).
    pub fn build(&mut self) {
        self.nodes.clear();
        self.attempts.clear();
        let Some(v) = &self.view else { return };
        self.nodes.reserve(v.heads.len());
        for (i, head) in v.heads.iter().enumerate() {
            self.nodes.push(ChainNode::Chain(i as u32));
            if self.expanded.contains(&head.chain)
                && let Some((_, attempts)) = v.chain(i)
            {
                let n = attempts.len() as u32;
                self.attempts.insert(i as u32, attempts);
                self.nodes
                    .extend((0..n).map(|k| ChainNode::Attempt(i as u32, k)));
            }
        }
        self.cursor = self.cursor.min(self.nodes.len().saturating_sub(1));
    }

    /// Expands or collapses the selected chain (on an attempt: its chain, the cursor
    /// going to the chain's row) in place: its attempts inserted after its row, or taken
    /// out, in one splice (O(attempts) and a move of the rows after it, never a rebuild
    /// of the tree nor a search of it).
    pub fn toggle(&mut self) {
        let Some(v) = self.view.clone() else { return };
        let Some(&node) = self.nodes.get(self.cursor) else {
            return;
        };
        // the chain's row: the selected one, or the one `k + 1` rows above its attempt
        // (a chain's attempts follow its row, in order)
        let (i, at) = match node {
            ChainNode::Chain(i) => (i, self.cursor),
            ChainNode::Attempt(i, k) => (i, self.cursor.saturating_sub(k as usize + 1)),
        };
        debug_assert_eq!(self.nodes.get(at), Some(&ChainNode::Chain(i)));
        let id = &v.heads[i as usize].chain;
        let shown = self.nodes[at + 1..]
            .iter()
            .take_while(|n| matches!(n, ChainNode::Attempt(c, _) if *c == i))
            .count();
        if self.expanded.remove(id) {
            self.attempts.remove(&i);
            self.nodes.drain(at + 1..at + 1 + shown);
        } else {
            self.expanded.insert(id.clone());
            let attempts = v.chain(i as usize).map(|(_, a)| a).unwrap_or_default();
            let n = attempts.len() as u32;
            self.attempts.insert(i, attempts);
            self.nodes.splice(
                at + 1..at + 1 + shown,
                (0..n).map(|k| ChainNode::Attempt(i, k)),
            );
        }
        self.cursor = at;
    }

    /// The source of the capture the selected row stands for: the attempt's, or a chain's
    /// first attempt's.
    pub fn selected_source(&self) -> Option<String> {
        let v = self.view.as_ref()?;
        let (i, k) = match *self.nodes.get(self.cursor)? {
            ChainNode::Chain(i) => (i, 0),
            ChainNode::Attempt(i, k) => (i, k),
        };
        let made;
        let attempts = match self.attempts.get(&i) {
            Some(a) => a,
            None => {
                made = v.chain(i as usize)?.1;
                &made
            }
        };
        Some(attempts.get(k as usize)?.source.to_string())
    }

    /// The attempt at row `c`, position `k` of an expanded chain.
    pub fn attempt(&self, c: u32, k: u32) -> Option<&Attempt> {
        self.attempts.get(&c)?.get(k as usize)
    }

    /// Moves the cursor by `delta` rows (clamped).
    pub fn move_by(&mut self, delta: isize) {
        self.cursor = super::scroll::moved(self.cursor, delta, self.nodes.len());
    }

    /// Keeps the cursor inside a window of `h` visible rows.
    pub fn follow(&mut self, h: usize) {
        self.offset = super::scroll::following(self.cursor, self.offset, h);
    }
}

/// The chains pane state: the tree, and what the Chain tab shows for the selected capture.
#[derive(Debug, Default)]
pub struct ChainPane {
    /// The chains and the tree over them.
    pub tree: ChainTree,
    /// The Chain tab of the selected capture.
    pub tab: crate::tui::chain::ChainTab,
    /// The proposals of a chain's first attempts, as the engine read them: (chain id,
    /// proposals in chain order).
    pub proposals: Option<(String, Vec<Option<serde_json::Value>>)>,
    /// The chain whose proposals were asked for and have not arrived.
    pub asked: Option<String>,
}

impl ChainPane {
    /// Takes new chains from the engine: the proposals read before may be stale.
    pub fn set(&mut self, view: Arc<ChainsView>) {
        self.tree.set(view);
        self.proposals = None;
        self.asked = None;
    }

    /// Takes the proposals the engine read for `chain`; whether they were the ones asked
    /// for.
    pub fn loaded(&mut self, chain: String, proposals: Vec<Option<serde_json::Value>>) -> bool {
        if self.asked.as_deref() != Some(chain.as_str()) {
            return false;
        }
        self.asked = None;
        self.proposals = Some((chain, proposals));
        true
    }

    /// Rebuilds the tab for the capture at `selected`; when the tab is `shown` and the
    /// chain's proposals are not at hand, returns the load that reads them (`locate`:
    /// where an attempt's record is).
    pub fn refresh(
        &mut self,
        selected: Option<&str>,
        shown: bool,
        locate: impl Fn(&str) -> crate::engine::summary::Locator,
    ) -> Option<crate::engine::Job> {
        use crate::tui::chain::{ChainTab, MAX_DIFFED};
        let view = self.tree.view.clone();
        let Some((row, attempts, at)) = view
            .as_deref()
            .zip(selected)
            .and_then(|(v, s)| v.of_source(s))
        else {
            self.tab = ChainTab::none(view.is_some());
            return None;
        };
        let proposals = self
            .proposals
            .as_ref()
            .filter(|(c, _)| *c == row.chain)
            .map(|(_, p)| p.as_slice());
        self.tab = ChainTab::new(&row, &attempts, at, proposals);
        if proposals.is_some() || !shown || self.asked.as_deref() == Some(row.chain.as_str()) {
            return None;
        }
        self.asked = Some(row.chain.clone());
        Some(crate::engine::Job::LoadChain {
            chain: row.chain.clone(),
            locs: attempts
                .iter()
                .take(MAX_DIFFED)
                .map(|a| locate(&a.source.to_string()))
                .collect(),
        })
    }
}
