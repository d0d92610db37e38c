//! The compile budget of a contract (`docs/verdicts.md#limits`): what a schema costs to
//! compile and validate with, measured on the schema document itself before it is handed to
//! the `jsonschema` crate, which inlines every non-recursive `$ref` and recurses once per
//! level while it compiles and validates.
//!
//! Two figures, both counted over JSON values (every object and array of the schema, and of
//! every schema a `$ref` leads to, counts as a node):
//!
//! * **depth**: the deepest chain of nested values, a `$ref` hop counting as one more level
//!   ([`MAX_SCHEMA_DEPTH`]). A chain of `$defs` each referring to the next is as deep as it
//!   is long; deeper than the limit would overflow the stack of the thread that compiles or
//!   validates.
//! * **size**: the number of nodes once every `$ref` is replaced by what it refers to, as the
//!   compiler inlines them ([`DEFAULT_MAX_SCHEMA_NODES`], `max_schema_nodes` in
//!   `verdict.toml`). A "diamond" (each level two `$ref`s to the next) of 40 levels is small
//!   on disk but 2⁴⁰ nodes inlined.
//!
//! `$defs` and `definitions` are not walked where they stand: the compiler compiles a
//! definition where a `$ref` uses it, and it is counted there.
//!
//! Both are computed in one walk, each value once (memoised by its address), so measuring
//! costs time linear in the schemas' size. A `$ref` back into the chain being walked (a
//! recursive schema, which the compiler does not inline) counts as one node and ends the
//! chain. `$ref`s that do not resolve count as one node (the compiler reports them).

use jsonschema::{Draft, Registry};
use referencing::Resolver;
use serde_json::Value;
use std::collections::HashMap;

/// The deepest a contract's schema may nest, in JSON levels plus `$ref` hops (see the
/// module docs): a deeper one is `CONTRACT_ERROR` before it is compiled. Fixed, not
/// configurable: it keeps the compile and validation recursion within the stack of every
/// thread that runs them (2 MiB, in debug builds too).
pub const MAX_SCHEMA_DEPTH: usize = 1_000;

/// The most other schema files a contract's `$ref`s may reach, transitively, as the
/// resolver follows them (every `$ref` of every file reached, whole documents or parts of
/// them): a contract reaching more is `CONTRACT_ERROR` before its registry is built or it is
/// compiled (`docs/verdicts.md#limits`). Counted over the workspace's own files
/// (`core::contract`), in time linear in what is counted. Fixed: without it each contract
/// of a chain of files (each `$ref`-ing the next) indexed and compiled every file after it,
/// the square of the chain's length (3,000 files: 195 s of CPU in a debug build; 1,000 files,
/// every contract within [`MAX_SCHEMA_DEPTH`]: 48 s and 490 MB).
pub const MAX_SCHEMA_FILES_REACHED: usize = 100;

/// Default `max_schema_nodes`: the most nodes a contract's schema may have with every
/// `$ref` inlined (see the module docs): a larger one is `CONTRACT_ERROR` before it is
/// compiled.
pub const DEFAULT_MAX_SCHEMA_NODES: u64 = 200_000;

/// The nodes (objects and arrays) of one schema document as written, `$ref`s not followed:
/// the cheap check made before anything else walks a schema (the meta-schema check, lint),
/// so a document over `max_schema_nodes` is refused before them. Iterative.
pub fn document_nodes(schema: &Value) -> u64 {
    let mut n = 0u64;
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                n += 1;
                stack.extend(m.values());
            }
            Value::Array(a) => {
                n += 1;
                stack.extend(a.iter());
            }
            _ => {}
        }
    }
    n
}

/// What [`measure`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Levels of nesting plus `$ref` hops, at most `MAX_SCHEMA_DEPTH + 1` (the walk stops
    /// going deeper once it is past the limit).
    pub depth: usize,
    /// Nodes with every `$ref` inlined (saturating).
    pub nodes: u64,
}

/// Measures `schema` (a document whose base URI is `base`, in `draft`), following its
/// `$ref`s through `registry` (a `#...` reference that the registry does not know, as in a
/// schema that is not registered, is looked up in `schema` itself). Recurses at most
/// [`MAX_SCHEMA_DEPTH`] + 1 levels, in small frames.
pub fn measure(schema: &Value, base: &str, draft: Draft, registry: &Registry<'_>) -> Cost {
    measure_reach(schema, base, draft, registry).0
}

/// [`measure`], plus the base URI (without fragment) of every resource a `$ref` of the walk
/// landed in: the documents (or `$id`'d parts of documents) the schema reaches, so that it
/// can be compiled against a registry of those alone (`core::contract`; a registry of every
/// schema file made each compile cost the size of the whole schemas folder). Only `$ref` is
/// followed, so the set can miss what `$dynamicRef`/`$recursiveRef` reach: a caller that
/// compiles against it must fall back to the whole registry when that compile fails.
pub fn measure_reach(
    schema: &Value,
    base: &str,
    draft: Draft,
    registry: &Registry<'_>,
) -> (Cost, std::collections::BTreeSet<String>) {
    let Ok(uri) = jsonschema::uri::from_str(base) else {
        return (Cost { depth: 0, nodes: 1 }, Default::default());
    };
    let mut walk = Walk {
        doc: schema,
        draft,
        memo: HashMap::new(),
        on_stack: std::collections::HashSet::new(),
        too_deep: false,
        reached: Default::default(),
    };
    let cost = walk.cost(schema, &registry.resolver(uri), 0);
    let cost = if walk.too_deep {
        Cost {
            depth: MAX_SCHEMA_DEPTH + 1,
            ..cost
        }
    } else {
        cost
    };
    (cost, walk.reached)
}

struct Walk<'v> {
    doc: &'v Value,
    draft: Draft,
    memo: HashMap<*const Value, Cost>,
    on_stack: std::collections::HashSet<*const Value>,
    /// Set once a value lies deeper than the limit: the walk stops there.
    too_deep: bool,
    /// The base URIs `$ref`s landed in ([`measure_reach`]).
    reached: std::collections::BTreeSet<String>,
}

impl<'v> Walk<'v> {
    /// The cost of `value`, reached `level` levels below the root.
    fn cost(&mut self, value: &'v Value, resolver: &Resolver<'v>, level: usize) -> Cost {
        let key = value as *const Value;
        let leaf = Cost { depth: 0, nodes: 1 };
        if self.too_deep {
            return leaf;
        }
        if let Some(c) = self.memo.get(&key) {
            return *c;
        }
        if self.on_stack.contains(&key) {
            // a recursive reference: the compiler does not inline it
            return leaf;
        }
        if level > MAX_SCHEMA_DEPTH {
            // deep enough to fail: the walk ends here
            self.too_deep = true;
            return leaf;
        }
        let children: Vec<&'v Value> = match value {
            // a definition is compiled where a `$ref` uses it, and counted there
            Value::Object(m) => m
                .iter()
                .filter(|(k, v)| {
                    (v.is_object() || v.is_array())
                        && !matches!(k.as_str(), "$defs" | "definitions")
                })
                .map(|(_, v)| v)
                .collect(),
            Value::Array(a) => a.iter().filter(|v| v.is_object() || v.is_array()).collect(),
            _ => return leaf,
        };
        self.on_stack.insert(key);
        let sub;
        let resolver = match value {
            Value::Object(_) if self.draft.create_resource_ref(value).id().is_some() => {
                match resolver.in_subresource(self.draft.create_resource_ref(value)) {
                    Ok(r) => {
                        sub = r;
                        &sub
                    }
                    Err(_) => resolver,
                }
            }
            _ => resolver,
        };
        let mut total = leaf;
        for c in children {
            let k = self.cost(c, resolver, level + 1);
            total.depth = total.depth.max(k.depth + 1);
            total.nodes = total.nodes.saturating_add(k.nodes);
        }
        if let Some(Value::String(r)) = value.get("$ref") {
            let target = match resolver.lookup(r) {
                Ok(resolved) => {
                    let (contents, next, _) = resolved.into_inner();
                    let at = next.base_uri();
                    let at = at.as_str();
                    if !self.reached.contains(at) {
                        self.reached.insert(at.trim_end_matches('#').to_string());
                    }
                    Some(self.cost(contents, &next, level + 1))
                }
                Err(_) => r
                    .strip_prefix('#')
                    .and_then(|p| self.doc.pointer(p))
                    .map(|t| self.cost(t, resolver, level + 1)),
            };
            if let Some(k) = target {
                total.depth = total.depth.max(k.depth + 1);
                total.nodes = total.nodes.saturating_add(k.nodes);
            }
        }
        self.on_stack.remove(&key);
        self.memo.insert(key, total);
        total
    }
}
