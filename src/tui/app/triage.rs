//! The triage tree (stage > reason > pointer, or by repair: repair > would-be outcome,
//! `docs/repairs.md#in-the-workbench`): its nodes, built from the rows' outcomes, and the
//! tree's cursor.

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
    /// Grouped by repair (repair > would-be outcome) rather than by stage.
    pub by_repair: bool,
}

impl Triage {
    /// Rebuilds the tree from the rows of `store`: stages in pipeline order, reasons and
    /// pointers within a stage largest first. The cursor stays (clamped).
    pub fn build(&mut self, store: &Store) {
        if self.by_repair {
            self.tree = by_repair(store);
            self.cursor = self.cursor.min(self.tree.len().saturating_sub(1));
            return;
        }
        type Pointers = BTreeMap<String, usize>;
        type Reasons = BTreeMap<String, (usize, Pointers)>;
        let mut stages: BTreeMap<Stage, (usize, Reasons)> = BTreeMap::new();
        // rows counted by (outcome, pointer set) first: a log has few distinct pairs
        let mut pairs: HashMap<(u32, u32), usize> = HashMap::new();
        // pending rows have no outcome yet
        for r in store.rows.iter().filter(|r| !Store::is_pending(r)) {
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

/// The tree by repair over the failing rows of `store` (every row that is not ready): each
/// repair of the table that some capture has, in table order, with its would-be outcomes
/// (largest first), then `not repairable` (the failing captures without one). Each node's
/// query is the filter of its captures (`repair:drop-unknown`, `repair:unquote-number
/// would:business/exceeds_remaining`, `!stage:ready repair:none`).
fn by_repair(store: &Store) -> Vec<TriageNode> {
    use crate::core::repair::{Applies, RepairName, TABLE};
    let mut kinds: HashMap<u32, usize> = HashMap::new();
    for r in store.rows.iter().filter(|r| !Store::is_pending(r)) {
        *kinds.entry(r.kind).or_default() += 1;
    }
    /// Per would-be outcome label: its count and stage.
    type Outcomes = BTreeMap<String, (usize, Stage)>;
    let mut repairs: BTreeMap<RepairName, (usize, Outcomes)> = BTreeMap::new();
    let mut not_repairable = 0usize;
    for (kind, n) in kinds {
        let k = &store.kinds[kind as usize];
        if k.outcome.stage == Stage::Ready {
            continue;
        }
        match &k.repair {
            Some(r) => {
                let e = repairs.entry(r.name).or_default();
                e.0 += n;
                let w =
                    e.1.entry(r.would_be.label())
                        .or_insert((0, r.would_be.stage));
                w.0 += n;
            }
            None => not_repairable += n,
        }
    }
    let esc = |s: &str| crate::core::text::escape_control(s).into_owned();
    let mut tree = Vec::new();
    for (name, (count, outcomes)) in repairs {
        let stage = match TABLE[name.index()].applies {
            Applies::Parse(_) => Stage::Parse,
            Applies::Schema(_) => Stage::Schema,
        };
        let rq = format!("repair:{name}");
        tree.push(TriageNode {
            depth: 0,
            label: name.to_string(),
            count,
            query: rq.clone(),
            stage,
        });
        let mut outcomes: Vec<_> = outcomes.into_iter().collect();
        outcomes.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        for (label, (count, stage)) in outcomes {
            let query = if label.chars().any(char::is_whitespace) {
                rq.clone()
            } else {
                format!("{rq} would:{}", label.to_lowercase())
            };
            tree.push(TriageNode {
                depth: 1,
                label: format!("would be {}", esc(&label)),
                count,
                query,
                stage,
            });
        }
    }
    if not_repairable > 0 {
        tree.push(TriageNode {
            depth: 0,
            label: "not repairable".to_string(),
            count: not_repairable,
            query: "!stage:ready repair:none".to_string(),
            stage: Stage::Schema,
        });
    }
    tree
}
