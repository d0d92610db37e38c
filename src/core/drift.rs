//! The drift report (`docs/requests.md#the-drift-report`): every distinct generation schema
//! the captures' requests sent, compared with the server contract that checked them.
//!
//! A *variant* is one generation schema (by name, source, `strict` flag and
//! [`content_hash`](crate::core::generation::content_hash)) sent to captures that one server
//! contract checked; it counts those captures and keeps the first [`MAX_IDS`] ids. Its
//! findings come from `review`'s structural diff ([`crate::core::review::diff`]) of the
//! server contract (old) against the sent schema (new), read as:
//!
//! * `REQUEST_LOOSER`: a constraint the server has and the request lacks (a bound removed or
//!   loosened, `required` dropped, a type widened, an enum value added, a property no longer
//!   declared, an object opened), with the keyword and whether the provider's strict-mode
//!   profile (`profiles/*.toml`: OpenAI to `openai-strict`, Anthropic to `anthropic`, Gemini
//!   to `gemini`) says the keyword is unsupported, so the request could not carry it;
//! * `REQUEST_STRICTER`: a constraint the request adds;
//! * `REQUEST_NULLABLE_FOR_OPTIONAL`: a property the server leaves optional that the
//!   request makes required and nullable (OpenAI strict mode's rewrite of an optional
//!   field): a missing key and `null` are different states.
//!
//! UI-free: `verdict lint` prints the report, the TUI's Contract tab shows one capture's
//! variant.

use crate::core::config::Dialect;
use crate::core::contract::Contract;
use crate::core::generation::{GenerationSchema, SchemaSource};
use crate::core::lint::Profile;
use crate::core::lint::walk::escape;
use crate::core::pipeline::Evaluation;
use crate::core::review::diff::{SchemaChange, diff};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// A constraint the server has and the request lacks.
pub const REQUEST_LOOSER: &str = "REQUEST_LOOSER";
/// A constraint the request adds to the server's.
pub const REQUEST_STRICTER: &str = "REQUEST_STRICTER";
/// An optional property of the server's that the request makes required and nullable.
pub const REQUEST_NULLABLE_FOR_OPTIONAL: &str = "REQUEST_NULLABLE_FOR_OPTIONAL";

/// At most this many capture ids are kept per variant (the count is exact).
pub const MAX_IDS: usize = 50;

/// One difference between a sent schema and its server contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriftFinding {
    /// `REQUEST_LOOSER`, `REQUEST_STRICTER` or `REQUEST_NULLABLE_FOR_OPTIONAL`.
    pub code: &'static str,
    /// The keyword that differs (`minimum`, `required`, `additionalProperties`, `type`,
    /// `enum`, `properties`).
    pub keyword: String,
    /// JSON Pointer of the keyword, from the schema's root (the same place in both
    /// schemas; for what the request lacks, where the server has it).
    pub pointer: String,
    /// `REQUEST_LOOSER` only: whether the provider's strict-mode profile says the keyword
    /// is unsupported (so the request cannot carry it: only the server checks it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<bool>,
    /// What differs, server to request (`minimum 1 -> none`).
    pub message: String,
}

/// The strict-mode profile of a response adapter (`provider`): `openai-strict` for OpenAI
/// and Azure OpenAI, `anthropic`, `gemini`; `None` for the others.
pub fn profile_name(provider: &str) -> Option<&'static str> {
    match provider {
        "openai-chat" | "openai-responses" | "azure-openai" => Some("openai-strict"),
        "anthropic" => Some("anthropic"),
        "gemini" => Some("gemini"),
        _ => None,
    }
}

/// The keyword a structural change is about.
fn keyword_of(c: &SchemaChange) -> String {
    let k = c.kind.as_str();
    if k.starts_with("required_") {
        "required".into()
    } else if k.starts_with("type_") {
        "type".into()
    } else if k.starts_with("enum_") {
        "enum".into()
    } else if k.starts_with("property_") {
        "properties".into()
    } else if k.starts_with("object_") {
        "additionalProperties".into()
    } else {
        c.pointer.rsplit('/').next().unwrap_or("").to_owned()
    }
}

/// Whether a value's `type` allows `null`.
fn allows_null(s: Option<&Value>) -> bool {
    match s.and_then(|s| s.get("type")) {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(a)) => a.iter().any(|t| t == "null"),
        _ => false,
    }
}

/// Compares the schema a request sent (`sent`) with the server contract's (`server`), both
/// read in `dialect`; `profile` is the provider's strict-mode profile, when it has one.
/// Findings in document order of the sent schema.
pub fn compare(
    server: &Value,
    sent: &Value,
    dialect: Dialect,
    profile: Option<&Profile>,
) -> Vec<DriftFinding> {
    let changes = diff("", server, sent, dialect);
    // optional in the server, required and nullable in the request: one finding for the
    // property, in place of its `required_added` and its `null` type (and enum) widening
    let mut nullable: Vec<String> = Vec::new();
    for c in changes.iter().filter(|c| c.kind == "required_added") {
        let Some((parent, i)) = c.pointer.rsplit_once("/required/") else {
            continue;
        };
        let Some(name) = sent
            .pointer(&format!("{parent}/required/{i}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let prop = format!("{parent}/properties/{}", escape(name));
        let server_prop = server.pointer(&prop);
        if server_prop.is_some() && allows_null(sent.pointer(&prop)) && !allows_null(server_prop) {
            nullable.push(prop);
        }
    }
    let mut out = Vec::new();
    for c in &changes {
        let absorbed = nullable.iter().any(|prop| {
            (c.kind == "required_added"
                && c.pointer
                    .rsplit_once("/required/")
                    .is_some_and(|(parent, i)| {
                        sent.pointer(&format!("{parent}/required/{i}"))
                            .and_then(Value::as_str)
                            .is_some_and(|n| *prop == format!("{parent}/properties/{}", escape(n)))
                    }))
                || (c.kind == "type_widened" && c.pointer == format!("{prop}/type"))
                || (c.kind == "enum_added"
                    && c.pointer == format!("{prop}/enum")
                    && c.message == "enum value null added")
        });
        if absorbed {
            if c.kind == "required_added" {
                let (parent, i) = c.pointer.rsplit_once("/required/").expect("checked");
                let name = sent
                    .pointer(&format!("{parent}/required/{i}"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                out.push(DriftFinding {
                    code: REQUEST_NULLABLE_FOR_OPTIONAL,
                    keyword: "required".into(),
                    pointer: format!("{parent}/properties/{}", escape(name)),
                    unsupported: None,
                    message: format!(
                        "`{name}` is optional in the server contract but required and nullable in the request: the model must send `null` where the server expects the key to be absent (a missing key and null are different states)"
                    ),
                });
            }
            continue;
        }
        let looser = matches!(
            c.kind.as_str(),
            "required_removed"
                | "type_widened"
                | "type_changed"
                | "enum_added"
                | "bound_loosened"
                | "property_removed"
                | "object_opened"
        );
        let keyword = keyword_of(c);
        let pointer = if c.kind == "required_added" {
            c.pointer
                .rsplit_once("/required/")
                .map_or(c.pointer.clone(), |(p, _)| format!("{p}/required"))
        } else {
            c.pointer.clone()
        };
        if looser {
            let unsupported = profile.map(|p| p.drops(&keyword));
            let note = match (profile, unsupported) {
                (Some(p), Some(true)) => format!(
                    "; {} does not support `{keyword}` in strict mode, so the request cannot carry it: only the server checks it",
                    p.name
                ),
                _ => String::new(),
            };
            out.push(DriftFinding {
                code: REQUEST_LOOSER,
                keyword,
                pointer,
                unsupported: Some(unsupported.unwrap_or(false)),
                message: format!(
                    "the request lacks the server's constraint: {}{note}",
                    c.message
                ),
            });
        } else {
            out.push(DriftFinding {
                code: REQUEST_STRICTER,
                keyword,
                pointer,
                unsupported: None,
                message: format!("the request adds a constraint: {}", c.message),
            });
        }
    }
    out
}

/// One distinct generation schema sent to captures one server contract checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variant {
    /// The server contract's name.
    pub contract: String,
    /// Its schema file, relative to the workspace.
    pub contract_file: String,
    /// The generation schema's name (the tool's, or the text format's).
    pub schema: String,
    /// `tool` or `text`.
    pub source: SchemaSource,
    /// Whether the requests said `strict: true`.
    pub strict: bool,
    /// The schema's content hash, 16 hex digits (the variant's identity).
    pub hash: String,
    /// The response adapter of the first capture (`openai-chat`, `anthropic`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The strict-mode profile the findings were read against (`openai-strict`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Where the first capture's request is: `record`, `echo` or `FILE:LINE`.
    pub request: String,
    /// The first capture's source (where a `record` or `echo` request is).
    pub first_source: String,
    /// JSON Pointer of the schema in that request's record.
    pub pointer: String,
    /// How many captures were sent this schema.
    pub captures: usize,
    /// The first [`MAX_IDS`] of their ids, in the order seen.
    pub ids: Vec<String>,
    /// How the sent schema differs from the server contract.
    pub findings: Vec<DriftFinding>,
    /// The sent schema.
    #[serde(skip)]
    pub sent: GenerationSchema,
}

/// The drift report of a set of evaluations: its variants, in the order first seen.
#[derive(Debug, Default)]
pub struct Drift {
    variants: Vec<Variant>,
    index: HashMap<(String, String, SchemaSource, bool, u64), usize>,
    profiles: HashMap<&'static str, Option<Profile>>,
}

/// The variant key of an evaluation: (contract, schema name, source, strict, hash), when its
/// request sent a schema and a server contract (not that schema) checked it.
pub fn key_of(ev: &Evaluation) -> Option<(String, String, SchemaSource, bool, u64)> {
    let v = &ev.verdict;
    let g = ev.sent.as_ref()?;
    if v.contract_from.as_deref() == Some("request") {
        return None;
    }
    Some((
        v.contract.clone()?,
        g.name.clone(),
        g.source,
        g.strict,
        g.hash,
    ))
}

/// The findings of a sent schema against the server contract `c`, read with the profile of
/// `provider`.
pub fn findings_for(
    c: &Contract,
    sent: &GenerationSchema,
    dialect: Dialect,
    profile: Option<&Profile>,
) -> Vec<DriftFinding> {
    let d = crate::core::lint::declared_dialect(&c.schema, dialect);
    compare(&c.schema, &sent.schema, d, profile)
}

impl Drift {
    /// Counts one evaluation of the workspace `ws` (an evaluation without a generation
    /// schema beside a server contract is not counted).
    pub fn add(&mut self, ws: &crate::core::workspace::Workspace, ev: &Evaluation) {
        let Some(key) = key_of(ev) else {
            return;
        };
        let v = &ev.verdict;
        if let Some(&i) = self.index.get(&key) {
            let var = &mut self.variants[i];
            var.captures += 1;
            if var.ids.len() < MAX_IDS {
                var.ids.push(v.id.clone());
            }
            return;
        }
        let Some(c) = ws.contracts.get(&key.0) else {
            return;
        };
        let sent = ev.sent.clone().expect("key_of checked");
        let g = v.generation.as_ref();
        let provider = v.provider.clone();
        let profile_name = provider.as_deref().and_then(profile_name);
        let profile = profile_name.and_then(|n| {
            self.profiles
                .entry(n)
                .or_insert_with(|| Profile::load(n).ok())
                .as_ref()
        });
        let findings = findings_for(c, &sent, ws.config.dialect, profile);
        self.index.insert(key.clone(), self.variants.len());
        self.variants.push(Variant {
            contract: key.0,
            contract_file: crate::core::text::slash_path(&c.file),
            schema: key.1,
            source: key.2,
            strict: key.3,
            hash: format!("{:016x}", key.4),
            provider,
            profile: profile_name.map(str::to_owned),
            request: g.map_or(String::new(), |g| g.request.clone()),
            first_source: v.source.to_string(),
            pointer: g.map_or(String::new(), |g| g.pointer.clone()),
            captures: 1,
            ids: vec![v.id.clone()],
            findings,
            sent,
        });
    }

    /// The variants, grouped by contract and schema name (in the order each group was first
    /// seen), each group's variants in the order first seen.
    pub fn variants(mut self) -> Vec<Variant> {
        let mut first: HashMap<(String, String), usize> = HashMap::new();
        for (i, v) in self.variants.iter().enumerate() {
            first
                .entry((v.contract.clone(), v.schema.clone()))
                .or_insert(i);
        }
        let mut order: Vec<(usize, usize, Variant)> = self
            .variants
            .drain(..)
            .enumerate()
            .map(|(i, v)| (first[&(v.contract.clone(), v.schema.clone())], i, v))
            .collect();
        order.sort_by_key(|(g, i, _)| (*g, *i));
        order.into_iter().map(|(_, _, v)| v).collect()
    }
}

/// The drift report of every capture of `ws` (evaluated in parallel, counted in capture
/// order).
pub fn report(ws: &crate::core::workspace::Workspace) -> Vec<Variant> {
    use rayon::prelude::*;
    let mut drift = Drift::default();
    for file in ws.capture_files() {
        let evs: Vec<Evaluation> = ws
            .read_file(&file)
            .par_iter()
            .flat_map_iter(|r| ws.evaluate_all(r))
            .filter(|ev| key_of(ev).is_some())
            .collect();
        for ev in &evs {
            drift.add(ws, ev);
        }
    }
    drift.variants()
}
