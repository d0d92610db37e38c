//! Contracts: the JSON Schemas (and, later, rules) in the workspace's `schemas/` folder,
//! each compiled once.
//!
//! * A contract is named by its file name minus `.schema.json` / `.json` (a file in a
//!   sub-folder keeps the folder: `common/money`; a backslash in a Unix file name stays:
//!   `back\\slash`), or by its `$id`.
//! * The dialect comes from `$schema`, else the workspace `dialect`.
//! * Every schema is first checked against its dialect's meta-schema, and ALL meta-schema
//!   errors are reported (as `CONTRACT_ERROR`, naming the file and the pointer).
//! * `$ref`s resolve locally: every schema file is registered under its `$id` (nested
//!   `$id`s are indexed by the resolver) and under its `file://` URI, so both `$id` and
//!   relative-path references work. Nothing is fetched: a reference to anything else is a
//!   `CONTRACT_ERROR` naming the URI, for the captures of the contracts that use it only.
//!   A reference to a schema file that cannot be used (not JSON, an unknown dialect, an
//!   invalid or duplicate `$id`) is a `CONTRACT_ERROR` naming that file and its own error
//!   with line and column (`docs/verdicts.md#limits`).
//! * A hostile `pattern` cannot stall a run: fancy-regex's backtrack limit is 10,000.

use crate::core::config::Config;
use crate::core::hint::hint_for;
use crate::core::lint::{self, LintFinding, LintOptions, Severity};
use crate::core::rules::RuleSet;
use crate::core::schema_budget;
use crate::core::stage::parse;
use crate::core::text::line_col;
use crate::core::verdict::{Finding, Reason, Stage, Warning};
use jsonschema::{Draft, Keyword, Registry, Resource, Retrieve, Uri, ValidationError, Validator};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Backtrack limit for `pattern` and `patternProperties` regexes with lookaround or
/// backreferences (the others run on the linear-time `regex` engine).
pub const REGEX_BACKTRACK_LIMIT: usize = 10_000;

/// The custom keyword that marks a reference that is not available offline.
const UNAVAILABLE: &str = "x-verdict-unavailable-reference";

/// One contract: a compiled schema, or the reason it cannot be used.
#[derive(Debug)]
pub struct Contract {
    /// The contract name (`refund-v1`).
    pub name: String,
    /// The schema's `$id`, if it has one.
    pub id: Option<String>,
    /// The schema file, relative to the workspace (`schemas/refund-v1.schema.json`).
    pub file: PathBuf,
    /// The schema as written.
    pub schema: Arc<Value>,
    /// The schema file's text (for highlighting keyword locations).
    pub text: Arc<str>,
    /// The compiled validator, or every reason the contract is broken (`CONTRACT_ERROR`):
    /// its schema's and its rules file's.
    pub compiled: Result<Validator, Vec<Finding>>,
    /// The business rules from `NAME.rules.toml` beside the schema, if there is one.
    pub rules: Option<RuleSet>,
    /// The rules file's text as read (empty when there is none or it could not be read):
    /// with `text`, what tells whether the contract changed since it was loaded.
    pub rules_text: Arc<str>,
    /// A hash of the text of every schema file its `$ref`s reach (its own included), as
    /// loaded: with `text` and `rules_text`, what tells whether the contract changed (an
    /// edit of a `$ref`'d file changes the contract). 0 when it was not compiled that far.
    pub reaches: u64,
    /// The schema's lint findings (`core::lint`, without a profile), computed once at load.
    /// Every verdict of the contract carries them as `warnings`; with `strict_schemas` the
    /// error- and warning-level ones are also in `compiled` as `CONTRACT_ERROR` (`docs/verdicts.md`).
    pub lint: Vec<LintFinding>,
    /// Where an inline schema is declared (`captures/s.jsonl:2 tools/list "t" inputSchema`,
    /// [`InlineSchema::label`]); `None` for a schema file.
    pub label: Option<String>,
}

/// The most lint findings of its contract a verdict carries as warnings
/// (`docs/verdicts.md#limits`): past it, the most severe 100 (errors, then warnings, then
/// infos; in lint's order among them) and one more warning counting the rest, so a schema
/// of 20,000 optional properties does not put 20,000 warnings (5.7 MB of JSON) on every
/// verdict. `verdict lint` lists every finding.
pub const MAX_CONTRACT_WARNINGS: usize = 100;

impl Contract {
    /// The lint findings as verdict warnings: at most [`MAX_CONTRACT_WARNINGS`], then one
    /// warning of the code, severity and file of the last kept one, without a pointer, that
    /// counts the rest: `19901 more lint findings of this contract not kept (a verdict keeps
    /// 100: docs/verdicts.md#limits; verdict lint lists them all)`.
    pub fn warnings(&self) -> Vec<Warning> {
        if self.lint.len() <= MAX_CONTRACT_WARNINGS {
            return self.lint.iter().map(LintFinding::to_warning).collect();
        }
        let rank = |s: Severity| match s {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Info => 2,
        };
        let mut keep: Vec<usize> = (0..self.lint.len()).collect();
        keep.sort_by_key(|&i| (rank(self.lint[i].severity), i));
        keep.truncate(MAX_CONTRACT_WARNINGS);
        keep.sort_unstable();
        let mut out: Vec<Warning> = keep.iter().map(|&i| self.lint[i].to_warning()).collect();
        let rest = self.lint.len() - MAX_CONTRACT_WARNINGS;
        let last = &self.lint[keep[MAX_CONTRACT_WARNINGS - 1]];
        out.push(Warning {
            code: last.code.clone(),
            severity: Some(last.severity.as_str().to_string()),
            file: Some(last.file.clone()),
            pointer: None,
            at: None,
            message: format!(
                "{rest} more lint finding{} of this contract not kept (a verdict keeps \
                 {MAX_CONTRACT_WARNINGS}: docs/verdicts.md#limits; verdict lint lists them all)",
                if rest == 1 { "" } else { "s" }
            ),
        });
        out
    }
}

/// A schema that is not a file of the schemas folder: an MCP tool's `inputSchema` or
/// `outputSchema` from a `tools/list` result in a capture file (`docs/record-shapes.md#mcp`).
/// It is compiled as a schema file is (its `$schema`, else the workspace `dialect`; the
/// meta-schema check; lint; rules), except that it is not registered for other schemas'
/// `$ref`s, and a schema file of the same name wins.
#[derive(Debug, Clone)]
pub struct InlineSchema {
    /// The contract name (`mcp/get_weather.input`).
    pub name: String,
    /// Where it is, for messages (`captures/s.jsonl:2 tools/list "get_weather" inputSchema`).
    pub label: String,
    /// The file it was read from, workspace-relative (the contract's `file`).
    pub file: PathBuf,
    /// The schema; `None` when the declaration has none (a `CONTRACT_ERROR`).
    pub schema: Option<Value>,
    /// Whether `NAME.rules.toml` in the schemas folder attaches (false for a name that
    /// could leave the folder).
    pub rules: bool,
}

/// All the contracts of a workspace, by name.
#[derive(Debug, Default, Clone)]
pub struct Contracts {
    /// Contracts by name.
    pub by_name: BTreeMap<String, Arc<Contract>>,
}

impl Contracts {
    /// Finds a contract by name or `$id` (with or without a trailing `#`).
    pub fn get(&self, name: &str) -> Option<&Arc<Contract>> {
        self.by_name.get(name).or_else(|| {
            let trimmed = name.trim_end_matches('#');
            self.by_name
                .values()
                .find(|c| c.id.as_deref().map(|i| i.trim_end_matches('#')) == Some(trimmed))
        })
    }

    /// A `did you mean` hint for an unknown contract name.
    pub fn hint(&self, name: &str) -> Option<String> {
        hint_for(name, self.by_name.keys().map(String::as_str))
    }

    /// Loads and compiles every schema file below `schemas_dir` (absolute or relative to
    /// the current folder), naming files relative to `root`. A folder that does not exist
    /// gives no contracts.
    pub fn load(root: &Path, schemas_dir: &Path, config: &Config) -> Contracts {
        Contracts::load_with(root, schemas_dir, config, Vec::new())
    }

    /// [`Contracts::load`] plus `inline` schemas (MCP tool schemas), each compiled as a
    /// schema file unless a schema file has its name.
    pub fn load_with(
        root: &Path,
        schemas_dir: &Path,
        config: &Config,
        inline: Vec<InlineSchema>,
    ) -> Contracts {
        let mut files = Vec::new();
        // the schemas folder itself is checked when the workspace opens; a folder below it
        // that cannot be read is `lint`'s SCHEMA_UNREADABLE error
        let _below = crate::core::workspace::collect_files(
            schemas_dir,
            &|p| p.extension().is_some_and(|e| e == "json"),
            &mut files,
        );
        files.sort();
        Contracts::load_all(root, &files, schemas_dir, config, inline)
    }

    /// Compiles the given schema files as contracts (named relative to `schemas_dir`). The
    /// `*.json` files directly in `schemas_dir` that are not contracts are still registered,
    /// so references to them resolve (`verdict check --schema FILE`).
    pub fn load_files(
        root: &Path,
        files: &[PathBuf],
        schemas_dir: &Path,
        config: &Config,
    ) -> Contracts {
        Contracts::load_all(root, files, schemas_dir, config, Vec::new())
    }

    fn load_all(
        root: &Path,
        files: &[PathBuf],
        schemas_dir: &Path,
        config: &Config,
        inline: Vec<InlineSchema>,
    ) -> Contracts {
        let mut loaded: Vec<Loaded> = files
            .iter()
            .map(|path| Loaded::read(root, schemas_dir, path, config))
            .collect();
        // a set: a list made this step quadratic in the schema files (10,000 files: seconds)
        let canon: std::collections::HashSet<PathBuf> =
            files.iter().filter_map(|f| f.canonicalize().ok()).collect();
        let mut extra: Vec<Loaded> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(schemas_dir) {
            let mut siblings: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .filter(|p| p.canonicalize().is_ok_and(|c| !canon.contains(&c)))
                .collect();
            siblings.sort();
            extra = siblings
                .iter()
                .map(|p| Loaded::read(root, schemas_dir, p, config))
                .collect();
        }
        let offline = Offline::default();
        // a file that cannot be registered (a duplicate `$id`, an invalid `$id` URI, an
        // unknown meta-schema) fails its own contract, named; the others are registered
        let broken = unregistrable(&loaded, &extra, &offline);
        let files = Files::new(
            loaded
                .iter()
                .chain(extra.iter())
                .filter(|l| !broken.contains_key(&l.uri)),
            &offline,
        )
        .with_unusable(loaded.iter().chain(extra.iter()), &broken);
        // inline schemas after the files (a schema file of the same name wins), not
        // registered: a tools/list entry cannot break or shadow the files' `$ref`s
        for i in inline {
            if !loaded.iter().any(|l| l.name == i.name) {
                loaded.push(Loaded::inline(i, config));
            }
        }

        let options = base_options(config, &offline);
        // the files a contract reaches, counted before its registry is built (a registry
        // indexes, and a compile inlines, every file its `$ref`s reach)
        let graph = FileGraph::new(
            loaded
                .iter()
                .chain(extra.iter())
                .filter(|l| l.label.is_none()),
        );
        let mut by_name = BTreeMap::new();
        for l in loaded {
            let mut reached = std::collections::BTreeSet::new();
            // this contract's own view of the files: which unusable ones its `$ref`s reach
            let files = files.for_contract();
            let too_many = match &l.parsed {
                Ok(schema) => {
                    let limit = schema_budget::MAX_SCHEMA_FILES_REACHED;
                    (graph.reached(&l, schema, limit) > limit).then(|| {
                        vec![contract_error(format!(
                            "{}: the schema's $refs reach more than {limit} other schema files \
                             (the limit MAX_SCHEMA_FILES_REACHED); not compiled \
                             (docs/verdicts.md#limits)",
                            l.shown()
                        ))]
                    })
                }
                Err(_) => None,
            };
            let registry = match &l.parsed {
                // over a budget: `compile` is not reached, or refuses it before any `$ref`
                Ok(_) if too_many.is_some() => build_registry(std::iter::empty(), &offline),
                Ok(schema) if schema_budget::document_nodes(schema) > config.max_schema_nodes => {
                    build_registry(std::iter::empty(), &offline)
                }
                Ok(schema) => files.registry_for(&l, schema),
                Err(f) => Err(f.clone()),
            };
            let compiled = match (&l.parsed, &registry) {
                (Err(f), _) => Err(vec![f.clone()]),
                (Ok(_), _) if broken.contains_key(&l.uri) => Err(broken[&l.uri].clone()),
                (Ok(_), _) if too_many.is_some() => Err(too_many.clone().unwrap_or_default()),
                (Ok(_), Err(f)) => Err(vec![f.clone()]),
                // a `$ref` reaches a broken schema file: name it, not "not available offline"
                (Ok(schema), Ok(_)) if !files.hit().is_empty() => {
                    reached = files.hit();
                    Err(files.unusable_findings(&l, schema, &reached))
                }
                (Ok(schema), Ok(registry)) => compile(
                    &l,
                    schema,
                    registry,
                    &mut reached,
                    &options.clone().with_retriever(files.clone()),
                    &offline,
                    config.max_schema_nodes,
                ),
            };
            let (rules, rule_errors, rules_text) = if l.rules {
                load_rules(root, schemas_dir, &l.name)
            } else {
                (None, None, String::new())
            };
            let compiled = match (compiled, rule_errors) {
                (c, None) => c,
                (Ok(_), Some(e)) => Err(e),
                (Err(mut a), Some(b)) => {
                    a.extend(b);
                    Err(a)
                }
            };
            let mut lint = match &l.parsed {
                // a schema over the budget is not compiled, nor linted (its CONTRACT_ERROR says so)
                Ok(schema) if schema_budget::document_nodes(schema) <= config.max_schema_nodes => {
                    lint::lint_schema(
                        &l.shown(),
                        &l.text,
                        schema,
                        &LintOptions::from_config(config),
                    )
                }
                _ => Vec::new(),
            };
            // a rule reading a proposal member the schema nearly names (`lint` says so too)
            if let (Some(rules), Ok(schema)) = (&rules, &l.parsed) {
                let file = shown(root, &schemas_dir.join(format!("{}.rules.toml", l.name)));
                lint.extend(lint::rule_fields::lint_rule_fields(&file, rules, schema));
            }
            let compiled = match compiled {
                Ok(_)
                    if config.strict_schemas
                        && lint.iter().any(|f| f.severity != Severity::Info) =>
                {
                    Err(lint
                        .iter()
                        .filter(|f| f.severity != Severity::Info)
                        .map(LintFinding::to_contract_error)
                        .collect())
                }
                c => c,
            };
            let Loaded {
                name,
                rel,
                id,
                text,
                parsed,
                label,
                ..
            } = l;
            let contract = Contract {
                name: name.clone(),
                id,
                file: rel,
                schema: Arc::new(parsed.unwrap_or(Value::Null)),
                text: Arc::from(text.as_str()),
                compiled,
                rules,
                rules_text: Arc::from(rules_text),
                reaches: files.print(&reached),
                lint,
                label,
            };
            by_name.insert(name, Arc::new(contract));
        }
        Contracts { by_name }
    }
}

/// `path` relative to the workspace `root`, with `/` separators, as messages name files.
fn shown(root: &Path, path: &Path) -> String {
    crate::core::text::slash_path(path.strip_prefix(root).unwrap_or(path))
}

/// Reads `NAME.rules.toml` beside the schema: the rule set, or its errors, and the text.
fn load_rules(
    root: &Path,
    schemas_dir: &Path,
    name: &str,
) -> (Option<RuleSet>, Option<Vec<Finding>>, String) {
    let path = schemas_dir.join(format!("{name}.rules.toml"));
    let shown = shown(root, &path);
    match crate::core::bounded::read_to_string(&path) {
        Err(crate::core::bounded::ReadError::NotFound) => (None, None, String::new()),
        Err(e) => (
            None,
            Some(vec![contract_error(format!("cannot read {shown}: {e}"))]),
            String::new(),
        ),
        Ok(text) => match RuleSet::load(&shown, &text) {
            Ok(r) => (Some(r), None, text),
            Err(e) => (None, Some(e), text),
        },
    }
}

/// A schema file read and parsed, before compiling.
struct Loaded {
    name: String,
    rel: PathBuf,
    id: Option<String>,
    uri: String,
    draft: Draft,
    text: String,
    parsed: Result<Value, Finding>,
    /// Where an inline schema is (`None`: a schema file, named by `rel`).
    label: Option<String>,
    /// Whether `NAME.rules.toml` attaches.
    rules: bool,
}

fn contract_error(message: impl Into<String>) -> Finding {
    Finding::new(Stage::Input, Reason::CONTRACT_ERROR, message)
}

impl Loaded {
    /// How messages name it: the schema file, or where an inline schema is.
    fn shown(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => crate::core::text::slash_path(&self.rel),
        }
    }

    /// An inline schema ([`InlineSchema`]), read as a schema file's text would be.
    fn inline(i: InlineSchema, config: &Config) -> Loaded {
        let label = i.label;
        let (text, parsed) = match i.schema {
            None => (
                String::new(),
                Err(contract_error(format!(
                    "{label} is missing: a tool needs a schema here"
                ))),
            ),
            Some(v) if v.is_object() || v.is_boolean() => {
                (serde_json::to_string_pretty(&v).unwrap_or_default(), Ok(v))
            }
            Some(v) => (
                serde_json::to_string_pretty(&v).unwrap_or_default(),
                Err(contract_error(format!(
                    "{label} is not a schema: a schema is an object or a boolean, found {}",
                    crate::core::text::json_kind(&v)
                ))),
            ),
        };
        let (id, draft) = match &parsed {
            Ok(v) => (
                v.get("$id").and_then(Value::as_str).map(str::to_string),
                match v.get("$schema").and_then(Value::as_str) {
                    Some(s) => Draft::from_schema_uri(s),
                    None => config.dialect.draft(),
                },
            ),
            Err(_) => (None, config.dialect.draft()),
        };
        let mut uri = String::from("urn:verdict-inline:");
        for b in i.name.bytes() {
            if b.is_ascii_alphanumeric() || b"-._".contains(&b) {
                uri.push(b as char);
            } else {
                uri.push_str(&format!("%{b:02X}"));
            }
        }
        Loaded {
            name: i.name,
            rel: i.file,
            id,
            uri,
            draft,
            text,
            parsed,
            label: Some(label),
            rules: i.rules,
        }
    }

    fn read(root: &Path, schemas_dir: &Path, path: &Path, config: &Config) -> Loaded {
        let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        let in_schemas = path.strip_prefix(schemas_dir).unwrap_or(path);
        // `/`-separated; a backslash in a Unix file name stays (`back\\slash`)
        let stem = crate::core::text::slash_path(in_schemas);
        let name = stem
            .strip_suffix(".schema.json")
            .or_else(|| stem.strip_suffix(".json"))
            .unwrap_or(&stem)
            .to_string();
        let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let uri = file_uri(&abs);
        let shown = crate::core::text::slash_path(&rel);
        let (text, parsed) =
            match crate::core::bounded::read(path, crate::core::bounded::MAX_FILE_BYTES) {
                Err(e) => (
                    String::new(),
                    Err(contract_error(format!("cannot read {shown}: {e}"))),
                ),
                Ok(bytes) => match String::from_utf8(bytes) {
                    Err(e) => (
                        String::new(),
                        Err(contract_error(format!(
                            "{shown} is not UTF-8 (invalid byte at offset {})",
                            e.utf8_error().valid_up_to()
                        ))),
                    ),
                    Ok(text) => {
                        let parsed = match parse::parse_strict(&text) {
                            Ok(v) if v.is_object() || v.is_boolean() => Ok(v),
                            Ok(_) => Err(contract_error(format!(
                                "{shown} is not a schema: a schema is an object or a boolean"
                            ))),
                            Err(f) => {
                                let at = f.at.map(|a| format!(" at {a}")).unwrap_or_default();
                                Err(contract_error(format!(
                                    "{shown} is not valid JSON{at}: {}",
                                    f.message
                                )))
                            }
                        };
                        (text, parsed)
                    }
                },
            };
        let (id, draft) = match &parsed {
            Ok(v) => {
                let id = v
                    .get("$id")
                    .or_else(|| v.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let draft = match v.get("$schema").and_then(Value::as_str) {
                    Some(s) => Draft::from_schema_uri(s),
                    None => config.dialect.draft(),
                };
                (id, draft)
            }
            Err(_) => (None, config.dialect.draft()),
        };
        Loaded {
            name,
            rel,
            id,
            uri,
            draft,
            text,
            parsed,
            label: None,
            rules: true,
        }
    }
}

/// The `file://` URI of an absolute path (RFC 8089): every byte that is not an RFC 3986
/// unreserved character, a sub-delimiter, `:`, `@` or the `/` separator is percent-encoded
/// (UTF-8), so a schema file named `zahlung-ä`, `pay"q` or with a line break is still a
/// valid URI to register and resolve `$ref`s against.
fn file_uri(abs: &Path) -> String {
    let mut s = String::from("file://");
    for b in crate::core::text::slash_path(abs).bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Refuses every retrieval: verdict never fetches. References it is asked for resolve to a
/// marker schema, so only the contracts that really reach them fail to compile.
#[derive(Clone, Default)]
struct Offline {
    /// Every URI it was asked for, to name them when a contract that uses one fails.
    asked: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

impl Retrieve for Offline {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(uri.as_str().to_string());
        }
        let mut m = Map::new();
        m.insert(UNAVAILABLE.into(), Value::String(uri.as_str().to_string()));
        Ok(Value::Object(m))
    }
}

/// The registrable schema files served to the `$ref` resolver on demand, by every URI that
/// names them or a part of them (the `file://` URI, a top-level `$id` with a scheme, the
/// nested `$id`s, resolved); any other URI is [`Offline`]'s. Each contract is compiled
/// against a registry of its own file and what its references reach, retrieved from here:
/// one registry of every schema file made each contract's compile, and the registry's own
/// construction, cost the size of the whole schemas folder (quadratic: 10,000 files took
/// minutes; `BENCHMARKS.md#many-schema-files`).
#[derive(Clone, Default)]
struct Files {
    /// Each served document, with a `$schema` naming its dialect when it had none (so it is
    /// read in the dialect the file has, whichever contract reaches it).
    docs: Arc<std::collections::HashMap<String, Value>>,
    /// A hash of the text of the file each served URI is in (the unusable files' too).
    texts: Arc<std::collections::HashMap<String, u64>>,
    /// The schema files that cannot be served (not JSON, not a schema, unreadable, or
    /// [`unregistrable`]), by every URI that names them: a `$ref` to one fails its contract
    /// with a `CONTRACT_ERROR` naming that file and its own errors.
    unusable: Arc<std::collections::HashMap<String, Unusable>>,
    /// The URIs of [`Files::unusable`] asked for since [`Files::for_contract`]: one
    /// contract's registry asks for every document its `$ref`s reach (transitively).
    hit: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
    offline: Offline,
}

/// A schema file a `$ref` cannot use: how messages name it, and its own `CONTRACT_ERROR`s.
#[derive(Clone)]
struct Unusable {
    shown: String,
    errors: Vec<Finding>,
}

/// The URI a registry is asked for, as [`Files`] keys its documents (normalised, without
/// a trailing `#`).
fn served_key(u: &str) -> String {
    referencing::uri::from_str(u.trim_end_matches('#'))
        .map(|u| u.as_str().to_string())
        .unwrap_or_else(|_| u.to_string())
}

/// A hash of a schema file's text.
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Files {
    fn new<'a>(loaded: impl Iterator<Item = &'a Loaded>, offline: &Offline) -> Files {
        let mut docs = std::collections::HashMap::new();
        let mut texts = std::collections::HashMap::new();
        let key = served_key;
        for l in loaded {
            let Ok(v) = &l.parsed else { continue };
            let text = text_hash(&l.text);
            let served = |v: &Value| match v {
                Value::Object(m) if !m.contains_key("$schema") => {
                    let mut m = m.clone();
                    m.insert("$schema".into(), Value::String(draft_uri(l.draft).into()));
                    Value::Object(m)
                }
                v => v.clone(),
            };
            docs.entry(key(&l.uri)).or_insert_with(|| served(v));
            texts.entry(key(&l.uri)).or_insert(text);
            if let Some(id) = &l.id
                && id.contains(':')
            {
                docs.entry(key(id)).or_insert_with(|| served(v));
                texts.entry(key(id)).or_insert(text);
            }
            for (pointer, id) in ids_of(l, v) {
                let at = pointer
                    .rsplit_once('/')
                    .map(|(at, _)| at)
                    .unwrap_or_default();
                if let Some(part) = v.pointer(at) {
                    docs.entry(key(&id)).or_insert_with(|| served(part));
                    texts.entry(key(&id)).or_insert(text);
                }
            }
        }
        Files {
            docs: Arc::new(docs),
            texts: Arc::new(texts),
            unusable: Default::default(),
            hit: Default::default(),
            offline: offline.clone(),
        }
    }

    /// Adds the files of `all` that cannot be served: those that did not parse as a schema,
    /// and those in `broken` ([`unregistrable`]), by their `file://` URI, their top-level
    /// `$id` and their nested `$id`s (a URI a served document has stays that document's).
    fn with_unusable<'a>(
        mut self,
        all: impl Iterator<Item = &'a Loaded>,
        broken: &std::collections::HashMap<String, Vec<Finding>>,
    ) -> Files {
        let mut unusable = std::collections::HashMap::new();
        let mut texts = (*self.texts).clone();
        for l in all {
            let (errors, names) = match (&l.parsed, broken.get(&l.uri)) {
                (Err(f), _) => (vec![f.clone()], vec![l.uri.clone()]),
                (Ok(v), Some(errors)) => {
                    let mut names = vec![l.uri.clone()];
                    names.extend(l.id.iter().filter(|id| id.contains(':')).cloned());
                    names.extend(ids_of(l, v).into_iter().map(|(_, id)| id));
                    (errors.clone(), names)
                }
                (Ok(_), None) => continue,
            };
            let u = Unusable {
                shown: l.shown(),
                errors,
            };
            for name in names {
                let k = served_key(&name);
                if self.docs.contains_key(&k) {
                    continue;
                }
                texts.entry(k.clone()).or_insert_with(|| text_hash(&l.text));
                unusable.entry(k).or_insert_with(|| u.clone());
            }
        }
        self.unusable = Arc::new(unusable);
        self.texts = Arc::new(texts);
        self
    }

    /// The same files, with an empty [`Files::hit`] of its own: one per contract.
    fn for_contract(&self) -> Files {
        Files {
            hit: Default::default(),
            ..self.clone()
        }
    }

    /// The unusable files' URIs asked for so far.
    fn hit(&self) -> std::collections::BTreeSet<String> {
        self.hit.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// The `CONTRACT_ERROR`s of contract `l` (its `schema`) whose `$ref`s reach the
    /// unusable files `hit`: for each error of each such file, one naming the `$ref` that
    /// leads there (its pointer and line:column; the root when it is reached through other
    /// files) and carrying that file's own error, with its line and column.
    fn unusable_findings(
        &self,
        l: &Loaded,
        schema: &Value,
        hit: &std::collections::BTreeSet<String>,
    ) -> Vec<Finding> {
        let base = match &l.id {
            Some(id) if id.contains(':') && l.label.is_none() => id.as_str(),
            _ => l.uri.as_str(),
        };
        let refs = refs_raw(schema);
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for k in hit {
            let Some(u) = self.unusable.get(k) else {
                continue;
            };
            if !seen.insert(u.shown.clone()) {
                continue;
            }
            let direct = refs.iter().find(|(_, r)| {
                referencing::uri::from_str(base)
                    .ok()
                    .and_then(|b| referencing::uri::resolve_against(&b.borrow(), r).ok())
                    .is_some_and(|t| {
                        let t = t.as_str();
                        served_key(t.split('#').next().unwrap_or(t)) == *k
                    })
            });
            let (pointer, how) = match direct {
                Some((p, _)) => (p.as_str(), "refers to"),
                None => ("", "refers (through its $refs) to"),
            };
            for e in &u.errors {
                out.push(schema_file_finding(
                    l,
                    pointer,
                    &format!(
                        "{how} {}, a schema file that cannot be used, so this contract is not compiled: {}",
                        u.shown, e.message
                    ),
                ));
            }
        }
        out
    }

    /// A registry of `l` (as [`build_registry`] registers it) and every document its
    /// references reach.
    fn registry_for(&self, l: &Loaded, schema: &Value) -> Result<Registry<'static>, Finding> {
        let mut pairs: Vec<(String, Resource)> =
            vec![(l.uri.clone(), l.draft.create_resource(schema.clone()))];
        if let Some(id) = &l.id
            && id.contains(':')
        {
            pairs.push((id.clone(), l.draft.create_resource(schema.clone())));
        }
        Registry::new()
            .retriever(self.clone())
            .draft(l.draft)
            .retrieve_known_draft_meta_schemas(false)
            .extend(pairs)
            .and_then(|b| b.prepare())
            .map_err(|e| contract_error(format!("cannot index the schemas: {e}")))
    }
}

impl Files {
    /// A hash of the texts of the files holding `reached` (URIs as [`schema_budget`]
    /// reports them); a URI no file has counts by itself.
    fn print(&self, reached: &std::collections::BTreeSet<String>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for uri in reached {
            uri.hash(&mut h);
            self.texts.get(uri.as_str()).hash(&mut h);
        }
        h.finish()
    }
}

/// The schema files as a graph of their `$ref`s, built once per load: which files each
/// file's `$ref`s name (every `$ref` of the document, resolved against its base and looked
/// up by every URI a file has, as [`Files`] serves them). It bounds, before any registry is
/// built, how many files a contract reaches ([`schema_budget::MAX_SCHEMA_FILES_REACHED`]).
struct FileGraph {
    /// A file's index by every URI that names it (its `file://` URI, its `$id`s).
    by_uri: std::collections::HashMap<String, usize>,
    /// The files each file's `$ref`s name (itself left out).
    edges: Vec<Vec<usize>>,
}

/// The files (served keys, no fragment) the `$ref`s of `schema` name, resolved against `base`.
fn ref_targets(schema: &Value, base: &str) -> Vec<String> {
    let Ok(base) = referencing::uri::from_str(base) else {
        return Vec::new();
    };
    refs_raw(schema)
        .into_iter()
        .filter(|(_, r)| !r.starts_with('#'))
        .filter_map(|(_, r)| referencing::uri::resolve_against(&base.borrow(), &r).ok())
        .map(|t| {
            let t = t.as_str();
            served_key(t.split('#').next().unwrap_or(t))
        })
        .collect()
}

/// The base a file's own `$ref`s resolve against: its absolute `$id`, else its `file://` URI.
fn ref_base(l: &Loaded) -> &str {
    match &l.id {
        Some(id) if id.contains(':') && l.label.is_none() => id.as_str(),
        _ => l.uri.as_str(),
    }
}

impl FileGraph {
    fn new<'a>(files: impl Iterator<Item = &'a Loaded> + Clone) -> FileGraph {
        let mut by_uri = std::collections::HashMap::new();
        for (i, l) in files.clone().enumerate() {
            by_uri.entry(served_key(&l.uri)).or_insert(i);
            if let Ok(v) = &l.parsed {
                if let Some(id) = l.id.as_ref().filter(|id| id.contains(':')) {
                    by_uri.entry(served_key(id)).or_insert(i);
                }
                for (_, id) in ids_of(l, v) {
                    by_uri.entry(served_key(&id)).or_insert(i);
                }
            }
        }
        let edges = files
            .enumerate()
            .map(|(i, l)| match &l.parsed {
                Ok(v) => {
                    let mut e: Vec<usize> = ref_targets(v, ref_base(l))
                        .iter()
                        .filter_map(|k| by_uri.get(k).copied())
                        .filter(|&j| j != i)
                        .collect();
                    e.sort_unstable();
                    e.dedup();
                    e
                }
                Err(_) => Vec::new(),
            })
            .collect();
        FileGraph { by_uri, edges }
    }

    /// How many other files `l`'s `$ref`s reach, transitively, counting at most `limit` + 1
    /// (the walk stops there): the work is at most that many files' edges.
    fn reached(&self, l: &Loaded, schema: &Value, limit: usize) -> usize {
        let own = self.by_uri.get(&served_key(&l.uri)).copied();
        let mut seen = std::collections::HashSet::new();
        let mut todo: Vec<usize> = ref_targets(schema, ref_base(l))
            .iter()
            .filter_map(|k| self.by_uri.get(k).copied())
            .collect();
        while let Some(i) = todo.pop() {
            if Some(i) == own || !seen.insert(i) {
                continue;
            }
            if seen.len() > limit {
                break;
            }
            todo.extend(self.edges[i].iter().copied());
        }
        seen.len()
    }
}

impl Retrieve for Files {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let k = uri.as_str().trim_end_matches('#');
        if let Some(v) = self.docs.get(k) {
            return Ok(v.clone());
        }
        if self.unusable.contains_key(k)
            && let Ok(mut hit) = self.hit.lock()
        {
            hit.insert(k.to_string());
        }
        self.offline.retrieve(uri)
    }
}

/// The `$schema` URI of a dialect.
fn draft_uri(draft: Draft) -> &'static str {
    match draft {
        Draft::Draft4 => "http://json-schema.org/draft-04/schema#",
        Draft::Draft6 => "http://json-schema.org/draft-06/schema#",
        Draft::Draft7 => "http://json-schema.org/draft-07/schema#",
        Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
        _ => "https://json-schema.org/draft/2020-12/schema",
    }
}

fn build_registry<'a>(
    loaded: impl Iterator<Item = &'a Loaded>,
    offline: &Offline,
) -> Result<Registry<'static>, Finding> {
    let mut pairs: Vec<(String, Resource)> = Vec::new();
    for l in loaded {
        let Ok(v) = &l.parsed else { continue };
        let draft = l.draft;
        pairs.push((l.uri.clone(), draft.create_resource(v.clone())));
        if let Some(id) = &l.id
            && id.contains(':')
        {
            pairs.push((id.clone(), draft.create_resource(v.clone())));
        }
    }
    Registry::new()
        .retriever(offline.clone())
        .extend(pairs)
        .and_then(|b| b.prepare())
        .map_err(|e| contract_error(format!("cannot index the schemas: {e}")))
}

/// The files (by URI) that cannot be registered, each with its `CONTRACT_ERROR`s naming it
/// with line and column: every file of a `$id` that another file also has (top-level or
/// nested, resolved against its base: `docs/verdicts.md#limits`), naming both; and each
/// file that cannot be indexed on its own (an
/// invalid `$id` URI such as `http://[zz`, an unknown meta-schema such as draft-03's). A
/// broken file is left out of the registry, so only the contracts that use it fail.
fn unregistrable(
    loaded: &[Loaded],
    extra: &[Loaded],
    offline: &Offline,
) -> std::collections::HashMap<String, Vec<Finding>> {
    let mut out: std::collections::HashMap<String, Vec<Finding>> = Default::default();
    let all: Vec<&Loaded> = loaded
        .iter()
        .chain(extra.iter())
        .filter(|l| l.parsed.is_ok())
        .collect();
    // duplicate `$id`s, in file order (the files are sorted): deterministic
    let mut seen: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (i, l) in all.iter().enumerate() {
        let Ok(schema) = &l.parsed else { continue };
        for (pointer, id) in ids_of(l, schema) {
            match seen.get(&id) {
                Some((j, first_ptr)) if *j != i => {
                    let first = all[*j];
                    let at = |l: &Loaded, p: &str| {
                        let place = parse::locate(&l.text, p)
                            .map(|span| line_col(&l.text, span.start))
                            .map(|a| format!(":{}:{}", a.line, a.column))
                            .unwrap_or_default();
                        format!("{}{place}", l.shown())
                    };
                    let msg_second = format!(
                        "$id {} is also the $id of {} (at {first_ptr}): a $id names one schema; not compiled",
                        crate::core::escape::quote(&id, 120),
                        at(first, first_ptr)
                    );
                    let msg_first = format!(
                        "$id {} is also the $id of {} (at {pointer}): a $id names one schema; not compiled",
                        crate::core::escape::quote(&id, 120),
                        at(l, &pointer)
                    );
                    out.entry(l.uri.clone())
                        .or_default()
                        .push(schema_file_finding(l, &pointer, &msg_second));
                    out.entry(first.uri.clone())
                        .or_default()
                        .push(schema_file_finding(first, first_ptr, &msg_first));
                }
                Some(_) => {}
                None => {
                    seen.insert(id, (i, pointer));
                }
            }
        }
    }
    let rest = || all.iter().copied().filter(|l| !out.contains_key(&l.uri));
    // each file alone (linear: a registry of every file costs the square of their number in
    // the indexer), asking a throwaway `Offline` (what it is asked for here is no
    // contract's missing reference)
    let _ = offline;
    let mut alone = Vec::new();
    for l in rest() {
        if let Err(f) = build_registry(std::iter::once(l), &Offline::default()) {
            let message = f.message.clone();
            let pointer = match &l.parsed {
                Ok(schema) if message.contains("meta-schema") => {
                    if schema.get("$schema").is_some() {
                        "/$schema".to_string()
                    } else {
                        String::new()
                    }
                }
                Ok(schema) => ids_raw(schema)
                    .into_iter()
                    .find(|(_, id)| message.contains(&format!("'{id}'")))
                    .map(|(p, _)| p)
                    .unwrap_or_default(),
                Err(_) => String::new(),
            };
            let text = message.trim_start_matches("cannot index the schemas: ");
            alone.push((
                l.uri.clone(),
                schema_file_finding(l, &pointer, &format!("cannot be indexed for $ref: {text}")),
            ));
        }
    }
    for (uri, f) in alone {
        out.entry(uri).or_default().push(f);
    }
    out
}

/// Every `$id` (`id` in draft-04) of a schema document, with its pointer, as written:
/// objects below `const`, `enum`, `examples` and `default` are data, not schemas.
fn ids_raw(schema: &Value) -> Vec<(String, String)> {
    strings_at(schema, &["$id", "id"])
}

/// Every string value of one of `keys` in the objects of a schema document, with its
/// pointer, in document order; objects below `const`, `enum`, `examples` and `default` are
/// data, not schemas, and are skipped.
fn strings_at(schema: &Value, keys: &[&str]) -> Vec<(String, String)> {
    fn visit(v: &Value, keys: &[&str], ptr: &mut String, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for key in keys {
                    if let Some(Value::String(s)) = m.get(*key) {
                        out.push((
                            format!("{ptr}/{}", crate::core::pointer::escape(key)),
                            s.clone(),
                        ));
                    }
                }
                for (k, c) in m {
                    if matches!(k.as_str(), "const" | "enum" | "examples" | "default") {
                        continue;
                    }
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&crate::core::pointer::escape(k));
                    visit(c, keys, ptr, out);
                    ptr.truncate(len);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    visit(c, keys, ptr, out);
                    ptr.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    visit(schema, keys, &mut String::new(), &mut out);
    out
}

/// Every `$ref` of a schema document, with its pointer, as written (data below `const`,
/// `enum`, `examples` and `default` skipped, as [`ids_raw`] does).
fn refs_raw(schema: &Value) -> Vec<(String, String)> {
    strings_at(schema, &["$ref"])
}

/// The `$id`s of a schema file that name it or a part of it for other files: the top-level
/// one and the nested ones, each resolved against the base it is in (the file's `$id`, or its
/// `file://` URI), without a trailing `#`; with their pointers. A `$id` that is a bare
/// fragment (`#foo`, an anchor in draft-07) names no resource and is skipped; one that does
/// not resolve is left to the indexer.
fn ids_of(l: &Loaded, schema: &Value) -> Vec<(String, String)> {
    let key = if l.draft == Draft::Draft4 {
        "id"
    } else {
        "$id"
    };
    let mut bases: Vec<(String, String)> = vec![(String::new(), l.uri.clone())];
    let mut out = Vec::new();
    for (pointer, id) in ids_raw(schema) {
        let Some(at) = pointer.strip_suffix(&format!("/{key}")) else {
            continue;
        };
        if id.starts_with('#') {
            continue;
        }
        while bases.len() > 1 {
            let top = &bases[bases.len() - 1].0;
            if at.starts_with(&format!("{top}/")) {
                break;
            }
            bases.pop();
        }
        let base = &bases[bases.len() - 1].1;
        let Ok(base_uri) = referencing::uri::from_str(base) else {
            continue;
        };
        let Ok(resolved) = referencing::uri::resolve_against(&base_uri.borrow(), &id) else {
            continue;
        };
        let resolved = resolved.as_str().trim_end_matches('#').to_string();
        bases.push((at.to_string(), resolved.clone()));
        out.push((pointer, resolved));
    }
    out
}

fn base_options(config: &Config, offline: &Offline) -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .should_validate_formats(config.format_assertion)
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(REGEX_BACKTRACK_LIMIT))
        .with_retriever(offline.clone())
        .with_keyword(UNAVAILABLE, |_, value: &Value, _| {
            let uri = value.as_str().unwrap_or("?");
            Err::<Box<dyn for<'i> Keyword<'i>>, _>(ValidationError::custom(format!(
                "remote reference {uri} is not available offline: verdict resolves $ref only within the schemas folder (by $id or relative path)"
            )))
        })
}

fn compile(
    l: &Loaded,
    schema: &Value,
    registry: &Registry<'static>,
    reached: &mut std::collections::BTreeSet<String>,
    options: &jsonschema::ValidationOptions<'static>,
    offline: &Offline,
    max_nodes: u64,
) -> Result<Validator, Vec<Finding>> {
    let shown = l.shown();
    let written = schema_budget::document_nodes(schema);
    if written > max_nodes {
        return Err(vec![contract_error(format!(
            "{shown}: the schema has {written} nodes as written (more with its $refs inlined), over \
             max_schema_nodes ({max_nodes}); not compiled (docs/verdicts.md#limits)"
        ))]);
    }
    if let Value::Object(obj) = schema
        && let Some(s) = obj.get("$schema")
    {
        let known = s
            .as_str()
            .is_some_and(|s| Draft::from_schema_uri(s) != Draft::Unknown);
        if !known {
            return Err(vec![contract_error(format!(
                "{shown}: unknown dialect $schema {s}; supported: draft-04, draft-06, draft-07, 2019-09, 2020-12"
            ))]);
        }
    }
    // The meta-schema check first, reporting every error.
    let meta = match l.draft {
        Draft::Draft4 => jsonschema::draft4::meta::validator(),
        Draft::Draft6 => jsonschema::draft6::meta::validator(),
        Draft::Draft7 => jsonschema::draft7::meta::validator(),
        Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
        _ => jsonschema::draft202012::meta::validator(),
    };
    let errors: Vec<Finding> = meta
        .iter_errors(schema)
        .map(|e| {
            schema_file_finding(
                l,
                e.instance_path().as_str(),
                &format!("does not meet its meta-schema: {e}"),
            )
        })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let own_base = l.label.is_some() || l.id.as_deref().is_none_or(|id| !id.contains(':'));
    // the compile budget, measured before the compiler sees the schema (docs/verdicts.md#limits)
    let base = match &l.id {
        Some(id) if !own_base => id.as_str(),
        _ => l.uri.as_str(),
    };
    let (cost, found) = schema_budget::measure_reach(schema, base, l.draft, registry);
    *reached = found;
    if cost.depth > schema_budget::MAX_SCHEMA_DEPTH {
        return Err(vec![contract_error(format!(
            "{shown}: the schema nests more than {} levels deep (nested values plus $ref hops, \
             the limit MAX_SCHEMA_DEPTH); not compiled (docs/verdicts.md#limits)",
            schema_budget::MAX_SCHEMA_DEPTH
        ))]);
    }
    if cost.nodes > max_nodes {
        return Err(vec![contract_error(format!(
            "{shown}: the schema has {} nodes with every $ref inlined, over max_schema_nodes \
             ({max_nodes}); not compiled (docs/verdicts.md#limits)",
            if cost.nodes == u64::MAX {
                "more than 18446744073709551614".to_string()
            } else {
                cost.nodes.to_string()
            }
        ))]);
    }
    let mut opts = options.clone().with_registry(registry).with_draft(l.draft);
    if own_base {
        opts = opts.with_base_uri(l.uri.clone());
    }
    opts.build(schema).map_err(|e| {
        let ptr = match e.kind() {
            // our marker keyword's own location means nothing to the user
            jsonschema::error::ValidationErrorKind::Custom { .. } => String::new(),
            _ => e.instance_path().as_str().to_string(),
        };
        let message = match e.kind() {
            jsonschema::error::ValidationErrorKind::Custom { message, .. } => message.clone(),
            _ => {
                // A reference into a document that is not available offline fails as a
                // missing pointer: name the document it was looked for in.
                let unavailable: Vec<String> = offline
                    .asked
                    .lock()
                    .map(|a| a.iter().cloned().collect())
                    .unwrap_or_default();
                let remote: Vec<&str> = unavailable
                    .iter()
                    .map(String::as_str)
                    .filter(|u| {
                        let tail = u.trim_end_matches('/').rsplit('/').next().unwrap_or(u);
                        !tail.is_empty() && l.text.contains(tail)
                    })
                    .collect();
                if remote.is_empty() {
                    e.to_string()
                } else {
                    format!(
                        "remote reference {} is not available offline: verdict resolves $ref only within the schemas folder (by $id or relative path) ({e})",
                        remote.join(", ")
                    )
                }
            }
        };
        vec![schema_file_finding(l, &ptr, &message)]
    })
}

/// A `CONTRACT_ERROR` about a place in a schema file: names the file, the pointer and,
/// when it can be found, the line:column.
fn schema_file_finding(l: &Loaded, pointer: &str, message: &str) -> Finding {
    let shown = l.shown();
    // an inline schema's text is not a file the user has: no line:column
    let at = parse::locate(&l.text, pointer)
        .filter(|_| l.label.is_none())
        .map(|span| line_col(&l.text, span.start));
    let place = match at {
        Some(at) => format!("{shown}:{}:{}", at.line, at.column),
        None => shown.to_string(),
    };
    let ptr = if pointer.is_empty() {
        String::new()
    } else {
        format!(" at {pointer}")
    };
    let mut f = contract_error(format!("{place}{ptr} {message}"));
    f.schema_path = Some(pointer.to_string());
    f
}

impl Contract {
    /// Compiles one schema alone, as an inline schema is (its `$schema`, else the
    /// workspace `dialect`; the meta-schema check; nothing fetched) but with no rules file,
    /// no lint and no other schema to `$ref`: a generation schema a request sent
    /// (`docs/requests.md#zero-config`). Its `CONTRACT_ERROR` messages start with `label`.
    pub fn compile_inline(config: &Config, name: &str, label: &str, schema: Value) -> Contract {
        let l = Loaded::inline(
            InlineSchema {
                name: name.to_owned(),
                label: label.to_owned(),
                file: PathBuf::new(),
                schema: Some(schema),
                rules: false,
            },
            config,
        );
        let offline = Offline::default();
        let options = base_options(config, &offline);
        let compiled = match (&l.parsed, build_registry(std::iter::once(&l), &offline)) {
            (Err(f), _) => Err(vec![f.clone()]),
            (Ok(_), Err(f)) => Err(vec![f]),
            (Ok(schema), Ok(registry)) => compile(
                &l,
                schema,
                &registry,
                &mut Default::default(),
                &options,
                &offline,
                config.max_schema_nodes,
            ),
        };
        Contract {
            name: l.name,
            id: l.id,
            file: l.rel,
            schema: Arc::new(l.parsed.unwrap_or(Value::Null)),
            text: Arc::from(l.text.as_str()),
            compiled,
            rules: None,
            rules_text: Arc::from(""),
            reaches: 0,
            lint: Vec::new(),
            label: l.label,
        }
    }
}
