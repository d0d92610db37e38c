//! The engine's pre-pass (`docs/commands.md#the-pre-pass`): one read of each capture file
//! before the first verdict ([`crate::core::prescan::read`]) that gives at once the
//! workspace's MCP facts and batch-request index (so the workspace's `mcp/TOOL.*`
//! contracts are compiled and its results find their requests) and the duplicate-id
//! candidates of the records to be checked ([`ids::Candidates`], then [`ids::Scan`]).
//! `check` ([`crate::engine::batch`]), the live session behind `watch --json`
//! ([`crate::engine::session`]) and the workbench's engine ([`crate::engine::worker`],
//! behind the first frame, its progress shown) all start with it.

use crate::core::mcp::McpSessions;
use crate::core::prescan::{self, Progress, Target};
use crate::core::request::Requests;
use crate::core::workspace::Workspace;
use crate::engine::ids;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What the pre-pass gives.
#[derive(Debug)]
pub struct PrePass {
    /// The MCP facts of the files read (for [`Workspace::with_facts`]).
    pub mcp: McpSessions,
    /// The batch input requests of the files read (for [`Workspace::with_facts`]).
    pub requests: Requests,
    /// The duplicate-id scan of the checked files (to finish with [`ids::Scan::exact`]).
    pub ids: ids::Scan,
    /// Every file read (workspace-relative), in the order given (the workspace's, then the
    /// other checked ones), with its number of records as the pipeline reads them.
    pub records: Vec<(Arc<str>, usize)>,
    /// The files read (workspace-relative) whose every record is a batch input request
    /// ([`Requests::holds_only_requests`]): no capture in them, so `check` does not read
    /// them a second time (`docs/requests.md#memory`).
    pub requests_only: std::collections::HashSet<Arc<str>>,
    /// False when [`Progress::stop`] stopped it: nothing in it is to be used.
    pub complete: bool,
}

/// Reads `all` (every capture file of `ws`: their MCP facts and batch requests) and
/// `checked` (the files whose records will be validated: their duplicate-id candidates;
/// those not among `all` are read for their facts too), each file once.
pub fn run(ws: &Workspace, all: &[PathBuf], checked: &[PathBuf], progress: &Progress) -> PrePass {
    let mut targets: Vec<Target> = Vec::with_capacity(all.len());
    let mut at: HashMap<String, usize> = HashMap::with_capacity(all.len());
    for p in all {
        let rel = ws.relative(p);
        if at.contains_key(&rel) {
            continue;
        }
        at.insert(rel, targets.len());
        targets.push(Target {
            path: p.clone(),
            hook: None,
        });
    }
    let mut names: Vec<Arc<str>> = Vec::with_capacity(checked.len());
    for p in checked {
        let rel = ws.relative(p);
        let n = names.len() as u32;
        match at.get(&rel) {
            Some(&i) if targets[i].hook.is_none() => {
                // read once, under the name it is checked by
                targets[i].path = p.clone();
                targets[i].hook = Some(n);
            }
            // the same file named twice: checked once
            Some(_) => continue,
            None => {
                at.insert(rel.clone(), targets.len());
                targets.push(Target {
                    path: p.clone(),
                    hook: Some(n),
                });
            }
        }
        names.push(rel.into());
    }
    let hook = ids::Candidates::new(ws, names);
    let pre = prescan::read(ws, &targets, true, &hook, progress);
    let records: Vec<(Arc<str>, usize)> = pre
        .files
        .iter()
        .map(|f| (f.name.clone(), f.records))
        .collect();
    let requests_only = records
        .iter()
        .filter(|(name, n)| pre.requests.holds_only_requests(name, *n))
        .map(|(name, _)| name.clone())
        .collect();
    let ids = ids::Scan::of(pre.files, pre.found, ws.config.max_capture_bytes);
    PrePass {
        mcp: pre.mcp,
        requests: pre.requests,
        ids,
        records,
        requests_only,
        complete: pre.complete,
    }
}
