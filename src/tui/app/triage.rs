//! The triage tree (stage > reason > pointer): its nodes, built from the rows' outcomes, and
//! the tree's cursor.

use crate::core::verdict::Stage;
use crate::tui::filter::pointer_label;
use crate::tui::store::Store;
use std::collections::{BTreeMap, HashMap};

/// One node of the triage tree (stage > reason > pointer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriageNode {
    /// 0 stage, 1 reason, 2 pointer.
    pub depth: u8,
    /// The stage, reason or pointer, escaped.
    pub label: String,
    /// How many captures it holds.
    pub count: usize,
    /// The filter query that opens this group.
    pub query: String,
    /// The stage it belongs to (for the colour).
    pub stage: Stage,
}

/// The triage tree, flattened, with its cursor (whether it is shown is the
/// [`super::Mode`]'s business).
#[derive(Debug, Default)]
pub struct Triage {
    /// The nodes in display order.
    pub tree: Vec<TriageNode>,
    /// Selected node.
    pub cursor: usize,
    /// First visible node.
    pub offset: usize,
}

impl Triage {
    /// Rebuilds the tree from the rows of `store`: stages in pipeline order, reasons and
    /// pointers within a stage largest first. The cursor stays (clamped).
    pub fn build(&mut self, store: &Store) {
        type Pointers = BTreeMap<String, usize>;
        type Reasons = BTreeMap<String, (usize, Pointers)>;
        let mut stages: BTreeMap<Stage, (usize, Reasons)> = BTreeMap::new();
        // rows counted by (outcome, pointer set) first: a log has few distinct pairs
        let mut pairs: HashMap<(u32, u32), usize> = HashMap::new();
        for r in &store.rows {
            *pairs.entry((r.kind, r.pointers)).or_default() += 1;
        }
        for ((kind, pset), n) in pairs {
            let k = &store.kinds[kind as usize];
            let s = stages.entry(k.outcome.stage).or_default();
            s.0 += n;
            let Some(reason) = &k.outcome.reason else {
                continue;
            };
            let rr = s.1.entry(reason.as_str().to_string()).or_default();
            rr.0 += n;
            for p in &store.psets[pset as usize] {
                *rr.1.entry(p.to_string()).or_default() += n;
            }
        }
        let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
        let mut tree = Vec::new();
        let mut stage_list: Vec<_> = stages.into_iter().collect();
        // stages in pipeline order (input < response < parse < schema < business < ready)
        stage_list.sort_by_key(|s| s.0);
        for (stage, (count, reasons)) in stage_list {
            tree.push(TriageNode {
                depth: 0,
                label: stage.as_str().to_string(),
                count,
                query: format!("stage:{stage}"),
                stage,
            });
            let mut reasons: Vec<_> = reasons.into_iter().collect();
            reasons.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
            for (reason, (count, ptrs)) in reasons {
                let rq = format!("stage:{stage} reason:{reason}");
                tree.push(TriageNode {
                    depth: 1,
                    label: esc(&reason),
                    count,
                    query: rq.clone(),
                    stage,
                });
                let mut ptrs: Vec<_> = ptrs.into_iter().collect();
                ptrs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                for (p, count) in ptrs {
                    let label = pointer_label(&p);
                    let query = if label.chars().any(char::is_whitespace) {
                        rq.clone()
                    } else {
                        format!("{rq} pointer:{label}")
                    };
                    tree.push(TriageNode {
                        depth: 2,
                        label: esc(label),
                        count,
                        query,
                        stage,
                    });
                }
            }
        }
        self.tree = tree;
        self.cursor = self.cursor.min(self.tree.len().saturating_sub(1));
    }

    /// Moves the cursor by `delta` nodes (clamped to the tree).
    pub fn move_by(&mut self, delta: isize) {
        self.cursor = super::scroll::moved(self.cursor, delta, self.tree.len());
    }

    /// Keeps the cursor inside a window of `h` visible nodes.
    pub fn follow(&mut self, h: usize) {
        self.offset = super::scroll::following(self.cursor, self.offset, h);
    }
}
