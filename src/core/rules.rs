//! Business rules: `schemas/NAME.rules.toml`, CEL expressions over `proposal`, `context`
//! and `intent` (`docs/verdicts.md`; names after Kubernetes `x-kubernetes-validations`).
//!
//! ```toml
//! [[rule]]
//! reason   = "EXCEEDS_REMAINING"
//! rule     = "proposal.amount_minor <= context.order.paid_minor - context.order.refunded_minor"
//! message  = "the amount exceeds what is left to refund"
//! message_expression = "'amount ' + string(proposal.amount_minor) + ' is over the remainder'"
//! decision = "reject"          # default
//! field    = "/amount_minor"   # JSON Pointer into the proposal to blame
//!
//! [intent]
//! fields = ["/order_id", "/amount_minor", "/currency"]
//! ```
//!
//! Every expression is compiled when the contract loads. Each capture's JSON is bound once
//! (integers as CEL `int`, so `paid - refunded` may go negative and `5000 == 5000.0`; a value
//! is converted when a rule reads it, see [`Binding`]), and the rules run in file order
//! against that one binding: the first rule that does not hold decides and later rules are
//! not evaluated. A rule that cannot be evaluated, or yields a
//! non-boolean, is `RULE_ERROR` and fails closed.

use crate::core::hint::hint_for;
use crate::core::text::line_col;
use crate::core::verdict::{Decision, Finding, Reason, Stage};
use cel::common::traits::{Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::types::{MAP_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{Context, Env, ExecutionError, Program};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

pub(crate) mod fast;
mod size;

/// One compiled rule.
pub struct Rule {
    /// 1-based position in the file.
    pub index: usize,
    /// The reason code it fails with.
    pub reason: Reason,
    /// The CEL source.
    pub source: String,
    /// 1-based line of the `rule =` value in the rules file.
    pub line: u32,
    program: Program,
    /// The static message.
    pub message: String,
    message_expression: Option<Program>,
    /// The decision when it fails (default `reject`).
    pub decision: Decision,
    /// JSON Pointer into the proposal to blame.
    pub field: Option<String>,
    /// The rule's (and its `message_expression`'s) comprehension steps as terms `k · N^e`
    /// ([`size::steps`]), `N` the values of one capture.
    cost: Vec<(f64, i32)>,
    /// The bound of the largest value the rule (and its `message_expression`) can build,
    /// in bytes, as terms `k · S^e`, `S` the size of the capture's values
    /// ([`size::largest_value`], [`MAX_RULE_BYTES`]).
    size: Vec<(f64, i32)>,
    /// The rule for the direct evaluator ([`fast`]), when every part of it is one that
    /// evaluator knows: then a capture it can decide does not go through the interpreter.
    fast: Option<fast::Fast>,
}

/// The most comprehension steps (`all`, `exists`, `exists_one`, `map`, `filter` iterations)
/// a rule may take on one capture (`docs/verdicts.md#limits`): 10,000,000. The cel crate has
/// no run-time budget and cannot be interrupted, so the cost is bounded before the rule
/// runs, from its expression and the size of the capture ([`Rule::estimated_steps`], every
/// range bounded by its length: literals by their items, parts of the capture by its value
/// count; `src/core/rules/size.rs`); over the budget, the bound is taken again on the
/// capture's own values (`Rule::bounds_on`), and a rule still over it does not run and is
/// `RULE_ERROR` naming the budget (fails closed).
pub const MAX_RULE_STEPS: f64 = 10_000_000.0;

/// The largest value a rule may build on one capture (`docs/verdicts.md#limits`): 256 MiB.
/// The cel crate has no memory limit either, and `+` of strings or lists in chained or
/// nested comprehensions doubles what it builds at each step (nine chained
/// `.map(x, x + x + x + x + x + x + x + x)` on a string of 56 bytes: 7.5 GB), so the size is
/// bounded before the rule runs (`src/core/rules/size.rs`): over the budget, the bound is
/// taken again on the capture's own values (`Rule::bounds_on`), and still over it the rule
/// is `RULE_ERROR`, not run.
pub const MAX_RULE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

impl Rule {
    /// The comprehension steps the rule may take on a capture of `n` values (see
    /// [`MAX_RULE_STEPS`]): an upper estimate, made before the rule runs.
    pub fn estimated_steps(&self, n: f64) -> f64 {
        self.cost.iter().map(|(k, e)| k * n.powi(*e)).sum()
    }

    /// The bytes of the largest value the rule may build on a capture whose values have
    /// size `s` (see [`MAX_RULE_BYTES`]): an upper estimate, made before the rule runs.
    pub fn estimated_bytes(&self, s: f64) -> f64 {
        size::at(&self.size, s)
    }

    /// The comprehension steps and the bytes of the largest value the rule (and its
    /// `message_expression`) may take and build on this capture: the bounds of
    /// [`Rule::estimated_steps`] and [`Rule::estimated_bytes`] with every path of static
    /// members and literal indexes counted as the value it names there
    /// ([`size::on_capture`]). Taken only when a static bound is over its budget: it walks
    /// the expression and the capture.
    fn bounds_on(&self, vars: &fast::Vars<'_>) -> (f64, f64) {
        let (n, s) = (vars.values(), vars.bytes());
        let mut steps = 0.0;
        let mut bytes: f64 = 0.0;
        for e in std::iter::once(&self.program).chain(&self.message_expression) {
            let (b, st) = size::on_capture(e.expression(), vars);
            bytes = bytes.max(size::at(&b, s));
            steps += size::at(&st, n);
        }
        (steps, bytes)
    }

    /// Whether the estimate of [`Rule::estimated_bytes`] needs the capture's size: a rule
    /// that can build more than a few times the capture (a term of `S²` or more, or of
    /// more than 8 `S`); for the others the constant part alone is checked.
    fn sized(&self) -> bool {
        self.size
            .iter()
            .any(|&(k, e)| e >= 2 || (e == 1 && k > 8.0))
    }

    /// The proposal members the rule (and its `message_expression`) reads, as paths of
    /// member names, sorted: `proposal.order.id` gives `["order", "id"]` (and `["order"]`);
    /// `has(proposal.x)` counts too. Index access (`proposal["x"]`) is not followed.
    pub fn proposal_paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        collect_paths(self.program.expression(), &mut out);
        if let Some(m) = &self.message_expression {
            collect_paths(m.expression(), &mut out);
        }
        out.sort();
        out.dedup();
        out
    }
}

/// `proposal.a.b` as `["a", "b"]`; anything else `None`.
fn proposal_chain(e: &cel::IdedExpr) -> Option<Vec<String>> {
    use cel::common::ast::Expr;
    let mut fields = Vec::new();
    let mut cur = e;
    loop {
        match &cur.expr {
            Expr::Select(s) => {
                fields.push(s.field.clone());
                cur = &s.operand;
            }
            Expr::Ident(name) if name == "proposal" && !fields.is_empty() => {
                fields.reverse();
                return Some(fields);
            }
            _ => return None,
        }
    }
}

fn collect_paths(e: &cel::IdedExpr, out: &mut Vec<Vec<String>>) {
    use cel::common::ast::{EntryExpr, Expr};
    if let Some(chain) = proposal_chain(e) {
        out.push(chain);
    }
    let entry = |en: &cel::common::ast::IdedEntryExpr, out: &mut Vec<Vec<String>>| match &en.expr {
        EntryExpr::MapEntry(m) => {
            collect_paths(&m.key, out);
            collect_paths(&m.value, out);
        }
        EntryExpr::StructField(f) => collect_paths(&f.value, out),
    };
    match &e.expr {
        Expr::Select(s) => collect_paths(&s.operand, out),
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                collect_paths(t, out);
            }
            for a in &c.args {
                collect_paths(a, out);
            }
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                collect_paths(x, out);
            }
        }
        Expr::List(l) => {
            for x in &l.elements {
                collect_paths(x, out);
            }
        }
        Expr::Map(m) => {
            for en in &m.entries {
                entry(en, out);
            }
        }
        Expr::Struct(st) => {
            for en in &st.entries {
                entry(en, out);
            }
        }
        _ => {}
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("index", &self.index)
            .field("reason", &self.reason)
            .field("source", &self.source)
            .finish()
    }
}

/// The rules of one contract, compiled.
#[derive(Debug)]
pub struct RuleSet {
    /// The rules file, relative to the workspace.
    pub file: String,
    /// The rules in file order.
    pub rules: Vec<Rule>,
    /// `[intent] fields`: the pointers the confirmed-intent comparison checks; `None` = every leaf.
    pub intent_fields: Option<Vec<String>>,
    /// [`members_only`] over every rule and message expression.
    members_only: [bool; 3],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    rule: Vec<RawRule>,
    intent: Option<RawIntent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    reason: String,
    rule: toml::Spanned<String>,
    message: Option<String>,
    message_expression: Option<toml::Spanned<String>>,
    decision: Option<toml::Spanned<String>>,
    field: Option<toml::Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIntent {
    fields: Vec<String>,
}

const RULE_KEYS: [&str; 6] = [
    "reason",
    "rule",
    "message",
    "message_expression",
    "decision",
    "field",
];
const FILE_KEYS: [&str; 2] = ["rule", "intent"];

/// The keys of the table an unknown key was found in, from serde's message (`unknown field
/// `x`, expected one of `a`, `b`` or `expected `a``); [`RULE_KEYS`] when it names none.
fn valid_keys(serde_message: &str) -> Vec<&str> {
    let keys: Vec<&str> = serde_message
        .split_once("expected")
        .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    if keys.is_empty() {
        RULE_KEYS.to_vec()
    } else {
        keys
    }
}

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| Arc::new(Env::stdlib()))
}

/// Why CEL source did not give a usable program.
enum CompileProblem {
    /// The parser's errors.
    Syntax(cel::ParseErrors),
    /// The expression tree is this deep, over [`MAX_EXPRESSION_DEPTH`].
    TooDeep(usize),
}

/// Compiles CEL source and checks its depth. A long source is parsed (and, when too deep,
/// dropped) on a thread with a 64 MiB stack: the parser recurses once per operator, so a
/// huge chain must not overflow the caller's stack.
fn compile_checked(source: &str) -> Result<Program, CompileProblem> {
    fn run(source: &str) -> Result<Program, CompileProblem> {
        let p = env().compile(source).map_err(CompileProblem::Syntax)?;
        match depth(p.expression()) {
            d if d > MAX_EXPRESSION_DEPTH => Err(CompileProblem::TooDeep(d)),
            _ => Ok(p),
        }
    }
    if source.len() < 256 {
        return run(source);
    }
    let owned = source.to_string();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || run(&owned))
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or(Err(CompileProblem::TooDeep(usize::MAX)))
}

fn contract_error(message: String) -> Finding {
    Finding::new(Stage::Input, Reason::CONTRACT_ERROR, message)
}

/// Why `p` is not an RFC 6901 JSON Pointer (no leading `/`, a `~` not followed by `0` or
/// `1`), or `None` when it is one. A malformed pointer must stop the load: it would match
/// nothing and silently turn a check off.
fn pointer_problem(p: &str) -> Option<String> {
    crate::core::pointer::tokens(p).err().map(|e| e.to_string())
}

impl RuleSet {
    /// Parses and compiles a rules file. `file` is its workspace-relative name, for messages.
    ///
    /// # Errors
    /// Every problem as a `CONTRACT_ERROR` naming the file, the line and, for a CEL syntax
    /// error, the column in the expression: TOML errors, unknown keys (with a hint), an
    /// unknown decision, a `field` that is not a JSON Pointer, an expression that does not
    /// compile.
    pub fn load(file: &str, text: &str) -> Result<RuleSet, Vec<Finding>> {
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let mut msg = e.message().trim_end().to_string();
            if let Some(unknown) = msg
                .strip_prefix("unknown field `")
                .and_then(|r| r.split('`').next())
            {
                msg = match hint_for(unknown, RULE_KEYS.into_iter().chain(FILE_KEYS)) {
                    Some(h) => format!("unknown key `{unknown}` ({h})"),
                    None => format!(
                        "unknown key `{unknown}`; valid keys: {}",
                        valid_keys(&msg).join(", ")
                    ),
                };
            }
            let at = e
                .span()
                .map(|s| format!(":{}", line_col(text, s.start)))
                .unwrap_or_default();
            vec![contract_error(format!("{file}{at}: {msg}"))]
        })?;
        let mut errors = Vec::new();
        let mut rules = Vec::new();
        for (i, r) in raw.rule.into_iter().enumerate() {
            let index = i + 1;
            let start = line_col(text, r.rule.span().start);
            let place = format!("{file}:{}", start.line);
            let compile = |src: &toml::Spanned<String>, what: &str| -> Result<Program, Finding> {
                compile_checked(src.get_ref()).map_err(|problem| {
                    let e = match problem {
                        CompileProblem::Syntax(e) => e,
                        CompileProblem::TooDeep(d) => {
                            let at = line_col(text, src.span().start);
                            return contract_error(format!(
                                "{file}:{}: rule {index} ({}): {what} nests {d} levels deep, over the limit of {MAX_EXPRESSION_DEPTH}; split it into several rules",
                                at.line, r.reason
                            ));
                        }
                    };
                    let first = e.errors.first();
                    let (line, col) = first.map_or((1, 1), |p| (p.pos.0.max(1), p.pos.1.max(1)));
                    let at = line_col(text, src.span().start);
                    // a multi-line string drops the newline right after its opening quotes
                    let body = text.get(src.span().start..).unwrap_or("");
                    let dropped = u32::from(
                        (body.starts_with("'''") || body.starts_with("\"\"\""))
                            && (body[3..].starts_with('\n') || body[3..].starts_with("\r\n")),
                    );
                    let msg = first.map_or_else(|| e.to_string(), |p| p.msg.clone());
                    // file position: on the string's first line, after its opening quote(s);
                    // exact for expressions without escapes
                    let file_line = at.line + dropped + line as u32 - 1;
                    let quote = if body.starts_with("'''") || body.starts_with("\"\"\"") { 3 } else { 1 };
                    let file_col = if line == 1 && dropped == 0 { at.column + quote + col as u32 - 1 } else { col as u32 };
                    contract_error(format!(
                        "{file}:{file_line}:{file_col}: rule {index} ({}): {what} does not compile at expression line {line}, column {col}: {msg}",
                        r.reason
                    ))
                })
            };
            let program = match compile(&r.rule, "`rule`") {
                Ok(p) => p,
                Err(f) => {
                    errors.push(f);
                    continue;
                }
            };
            let message_expression = match &r.message_expression {
                Some(m) => match compile(m, "`message_expression`") {
                    Ok(p) => Some(p),
                    Err(f) => {
                        errors.push(f);
                        continue;
                    }
                },
                None => None,
            };
            // a key's own problem is placed at its value, not at the rule's `rule`
            let place_of = |s: &toml::Spanned<String>| {
                let at = line_col(text, s.span().start);
                format!("{file}:{}:{}", at.line, at.column)
            };
            let decision = match &r.decision {
                None => Decision::Reject,
                Some(spanned) => match Decision::parse(spanned.get_ref())
                    .filter(|d| *d != Decision::ReadyForCommit)
                {
                    Some(d) => d,
                    None => {
                        let d = spanned.get_ref();
                        let names = ["reject", "recheck", "regenerate", "retry"];
                        let hint = hint_for(d, names)
                            .map(|h| format!(" ({h})"))
                            .unwrap_or_default();
                        errors.push(contract_error(format!(
                            "{}: rule {index}: unknown decision {d:?}{hint}; use one of {}",
                            place_of(spanned),
                            names.join(", ")
                        )));
                        continue;
                    }
                },
            };
            if let Some(spanned) = &r.field
                && let Some(why) = pointer_problem(spanned.get_ref())
            {
                let f = spanned.get_ref();
                errors.push(contract_error(format!(
                    "{}: rule {index}: `field` {f:?} is not a JSON Pointer: {why}",
                    place_of(spanned)
                )));
                continue;
            }
            if r.reason.trim().is_empty() {
                errors.push(contract_error(format!(
                    "{place}: rule {index}: `reason` is empty"
                )));
                continue;
            }
            let message = r
                .message
                .unwrap_or_else(|| format!("rule {} does not hold", r.rule.get_ref()));
            rules.push(Rule {
                index,
                reason: Reason::new(r.reason),
                source: r.rule.into_inner(),
                line: start.line,
                cost: {
                    let mut c = size::steps(program.expression());
                    if let Some(m) = &message_expression {
                        c.extend(size::steps(m.expression()));
                    }
                    c
                },
                size: {
                    let mut s = size::largest_value(program.expression());
                    if let Some(m) = &message_expression {
                        s = size::max(&s, &size::largest_value(m.expression()));
                    }
                    s
                },
                fast: fast::compile(program.expression()),
                program,
                message,
                message_expression,
                decision,
                field: r.field.map(toml::Spanned::into_inner),
            });
        }
        let intent_fields = raw.intent.map(|i| i.fields);
        if let Some(fields) = &intent_fields {
            for (f, why) in fields
                .iter()
                .filter_map(|f| pointer_problem(f).map(|why| (f, why)))
            {
                errors.push(contract_error(format!(
                    "{file}: [intent] field {f:?} is not a JSON Pointer: {why}"
                )));
            }
        }
        if errors.is_empty() {
            let members_only = members_only(rules.iter().flat_map(|r| {
                std::iter::once(r.program.expression())
                    .chain(r.message_expression.as_ref().map(|m| m.expression()))
            }));
            Ok(RuleSet {
                file: file.to_string(),
                rules,
                intent_fields,
                members_only,
            })
        } else {
            Err(errors)
        }
    }

    /// Whether the direct evaluator ([`fast`]) can stand in for [`RuleSet::evaluate`] on
    /// every rule: each compiled for it, none with a comprehension budget or a size bound
    /// that depends on the capture (so no budget check can fail before it runs).
    pub(crate) fn all_direct(&self) -> bool {
        self.rules.iter().all(|r| {
            r.fast.is_some()
                && r.cost.is_empty()
                && !r.sized()
                && r.estimated_bytes(0.0) <= MAX_RULE_BYTES
        })
    }

    /// Whether every rule holds on `vars` as the direct evaluator decides it (`false` when
    /// one fails or one is left undecided): when [`RuleSet::all_direct`], `true` only where
    /// [`RuleSet::evaluate`] finds nothing on the same JSON.
    pub(crate) fn hold_directly<'a, E: fast::Env<'a>>(&'a self, vars: &E) -> bool {
        self.rules.iter().all(|r| {
            r.fast
                .as_ref()
                .is_some_and(|f| fast::eval(f, vars) == Some(true))
        })
    }

    /// Binds `proposal`, `context` and `intent` of one capture for these rules, see
    /// [`Binding`]. Nothing is converted or copied here.
    pub fn bind<'a>(
        &self,
        proposal: &'a Value,
        context: Option<&'a Map<String, Value>>,
        intent: Option<&'a Map<String, Value>>,
    ) -> Binding<'a> {
        let [p, c, i] = self.members_only;
        let object = |m: Option<&'a Map<String, Value>>| Json::Object(m.unwrap_or(empty_object()));
        Binding {
            proposal: Var::new(Json::Any(proposal), p),
            context: Var::new(object(context), c),
            intent: Var::new(object(intent), i),
        }
    }

    /// Evaluates the rules in order against one binding of the capture and returns the first
    /// failure (the rule's reason and decision, or `RULE_ERROR`), or `None` when all hold.
    pub fn evaluate(
        &self,
        proposal: &Value,
        context: Option<&Map<String, Value>>,
        intent: Option<&Map<String, Value>>,
    ) -> Option<Finding> {
        if self.rules.is_empty() {
            return None;
        }
        let binding = self.bind(proposal, context, intent);
        let vars = fast::Vars {
            proposal,
            context: context.unwrap_or(empty_object()),
            intent: intent.unwrap_or(empty_object()),
        };
        let n = if self.rules.iter().any(|r| !r.cost.is_empty()) {
            vars.values()
        } else {
            0.0
        };
        let s = if self.rules.iter().any(Rule::sized) {
            vars.bytes()
        } else {
            0.0
        };
        // the CEL context is made for the first rule the direct evaluator cannot decide
        let ctx = std::cell::OnceCell::new();
        self.run_with(Some(&vars), || ctx.get_or_init(|| binding.context()), n, s)
    }

    /// The rules in order against one CEL context: the first failure, or `None`.
    /// Each rule is first checked against [`MAX_RULE_STEPS`] for a capture of `n` values: a
    /// rule over it does not run and is `RULE_ERROR`.
    #[cfg(test)]
    fn run(&self, ctx: &Context<'_, '_>, n: f64) -> Option<Finding> {
        self.run_with(None, || ctx, n, 0.0)
    }

    /// [`RuleSet::run`], each rule first given to the direct evaluator ([`fast`]) on
    /// `vars` when there are any: the interpreter runs (on `ctx()`, made when first asked
    /// for) only the rules it cannot decide and the message expressions of failing rules.
    fn run_with<'c>(
        &self,
        vars: Option<&fast::Vars<'_>>,
        ctx: impl Fn() -> &'c Context<'c, 'c>,
        n: f64,
        s: f64,
    ) -> Option<Finding> {
        for rule in &self.rules {
            let (mut steps, mut bytes) = (rule.estimated_steps(n), rule.estimated_bytes(s));
            // over a budget by the static bound: the bound on this capture decides
            if (bytes > MAX_RULE_BYTES || steps > MAX_RULE_STEPS)
                && let Some(vars) = vars
            {
                (steps, bytes) = rule.bounds_on(vars);
            }
            let outcome = if bytes > MAX_RULE_BYTES {
                Finding::new(
                    Stage::Business,
                    Reason::RULE_ERROR,
                    format!(
                        "rule {} ({}) could build a value of up to {bytes:.3e} bytes on this capture, over the rule budget of 256 MiB (MAX_RULE_BYTES, docs/verdicts.md#limits); not evaluated, fails closed",
                        rule.index, rule.reason
                    ),
                )
            } else if steps > MAX_RULE_STEPS {
                Finding::new(
                    Stage::Business,
                    Reason::RULE_ERROR,
                    format!(
                        "rule {} ({}) could take up to {steps:.3e} comprehension steps on this capture ({n} values), over the rule budget of 10,000,000 steps (MAX_RULE_STEPS, docs/verdicts.md#limits); not evaluated, fails closed",
                        rule.index, rule.reason
                    ),
                )
            } else {
                let decided = match (&rule.fast, vars) {
                    (Some(f), Some(vars)) => fast::eval(f, vars),
                    _ => None,
                };
                let result = match decided {
                    Some(b) => Ok(cel::Value::Bool(b)),
                    None => rule.program.execute(ctx()),
                };
                match result {
                    Ok(cel::Value::Bool(true)) => continue,
                    Ok(cel::Value::Bool(false)) => {
                        let message = match &rule.message_expression {
                            Some(p) => match p.execute(ctx()) {
                                Ok(cel::Value::String(s)) => s.to_string(),
                                Ok(other) => format!(
                                    "{} (message_expression gave {}, not a string)",
                                    rule.message,
                                    type_name(&other)
                                ),
                                Err(e) => {
                                    format!("{} (message_expression failed: {e})", rule.message)
                                }
                            },
                            None => rule.message.clone(),
                        };
                        Finding::new(Stage::Business, rule.reason.clone(), message)
                            .with_decision(rule.decision)
                    }
                    Ok(other) => Finding::new(
                        Stage::Business,
                        Reason::RULE_ERROR,
                        format!(
                            "rule {} ({}) gave {} {}, not a boolean; fails closed",
                            rule.index,
                            rule.reason,
                            type_name(&other),
                            short(&other)
                        ),
                    ),
                    Err(e) => Finding::new(
                        Stage::Business,
                        Reason::RULE_ERROR,
                        format!(
                            "rule {} ({}) could not be evaluated: {e}; fails closed",
                            rule.index, rule.reason
                        ),
                    ),
                }
            };
            let mut f = outcome;
            f.keyword = Some(format!("rule[{}]", rule.index));
            f.pointer = rule.field.clone();
            return Some(f);
        }
        None
    }
}

/// Deepest nesting of a CEL expression tree that evaluation may recurse through. The
/// interpreter recurses once per level, so a rule like `1 + 1 + ... (3,000 terms)` would
/// overflow the stack and take the whole run down; such a rule is a `CONTRACT_ERROR`.
/// 100 levels take about 1 MiB of stack in a release build (the binary gives its worker
/// threads 16 MiB, for debug builds).
pub const MAX_EXPRESSION_DEPTH: usize = 100;

/// The depth of an expression tree, computed without recursion.
fn depth(root: &cel::IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&cel::IdedExpr, usize)> = vec![(root, 1)];
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(children(e).into_iter().map(|c| (c, d + 1)));
    }
    deepest
}

/// The direct sub-expressions of a CEL expression.
fn children(e: &cel::IdedExpr) -> Vec<&cel::IdedExpr> {
    use cel::common::ast::{EntryExpr, Expr};
    fn entry(en: &cel::common::ast::IdedEntryExpr) -> Vec<&cel::IdedExpr> {
        match &en.expr {
            EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
            EntryExpr::StructField(f) => vec![&f.value],
        }
    }
    match &e.expr {
        Expr::Call(c) => c
            .target
            .as_deref()
            .into_iter()
            .chain(c.args.iter())
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => m.entries.iter().flat_map(entry).collect(),
        Expr::Struct(st) => st.entries.iter().flat_map(entry).collect(),
        Expr::Select(sel) => vec![&*sel.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

fn type_name(v: &cel::Value) -> &'static str {
    match v {
        cel::Value::List(_) => "a list",
        cel::Value::Map(_) => "a map",
        cel::Value::Int(_) | cel::Value::UInt(_) => "an int",
        cel::Value::Float(_) => "a double",
        cel::Value::String(_) => "a string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "a bool",
        cel::Value::Null => "null",
        _ => "a value",
    }
}

fn short(v: &cel::Value) -> String {
    let s = match v {
        cel::Value::String(s) => format!("{:?}", s.as_str()),
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Float(f) => f.to_string(),
        // a map's entries come out in random order: name its size only
        cel::Value::Map(m) => format!("with {} entries", m.map.len()),
        other => format!("{other:?}"),
    };
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s
    }
}

/// The capture's JSON as the rules see it: `proposal`, `context` and `intent` (a missing
/// `context` or `intent` is an empty map), made once per capture and shared by its rules.
///
/// Nothing is converted up front. A rule's qualified name (`context.order.paid_minor`) is
/// resolved by the interpreter through this binding, which walks the JSON objects member by
/// member and converts only the value found (with [`to_val`]); a name that does not lead to
/// a value (a missing member, a member of a non-object) is left to the interpreter, which then
/// selects the members one at a time on the shorter names and reports the same error as
/// ever. A variable used whole (`size(context)`) is converted whole, once, exactly as
/// [`to_val`] does; one the rules only select members of (`has(context.order)`) is an
/// object that converts a member when it is selected. Nothing is copied: CEL strings and map keys borrow from the
/// JSON, which must outlive the binding.
pub struct Binding<'a> {
    proposal: Var<'a>,
    context: Var<'a>,
    intent: Var<'a>,
}

/// One of the three variables.
struct Var<'a> {
    json: Json<'a>,
    /// The whole value as CEL, converted on its first whole use.
    whole: OnceLock<Box<dyn Val + 'a>>,
    /// Set when the rules only select members of this variable and it is an object: the
    /// variable itself is then this lazy object, which `has(context.order)` asks without
    /// converting `context`.
    lazy: Option<LazyObject<'a>>,
}

/// What a variable holds: any JSON (`proposal`) or an object (`context`, `intent`).
#[derive(Clone, Copy)]
enum Json<'a> {
    Any(&'a Value),
    Object(&'a Map<String, Value>),
}

impl<'a> Var<'a> {
    fn new(json: Json<'a>, members_only: bool) -> Self {
        let object = match json {
            Json::Any(v) => v.as_object(),
            Json::Object(m) => Some(m),
        };
        Var {
            json,
            whole: OnceLock::new(),
            lazy: object.filter(|_| members_only).map(LazyObject::new),
        }
    }

    /// The whole value: the lazy object, else the eager conversion.
    fn whole(&self) -> &(dyn Val + 'a) {
        if let Some(lazy) = &self.lazy {
            return lazy;
        }
        self.whole
            .get_or_init(|| match self.json {
                Json::Any(v) => to_val(v),
                Json::Object(m) => map_to_val(m),
            })
            .as_ref()
    }

    /// The members, when the variable is an object.
    fn object(&self) -> Option<&'a Map<String, Value>> {
        match self.json {
            Json::Any(v) => v.as_object(),
            Json::Object(m) => Some(m),
        }
    }

    /// The value at `path` (member names joined by dots, at least one), when every
    /// step is an object that has the member.
    fn member(&self, path: &str) -> Option<&'a Value> {
        let (field, mut rest) = split_dot(path);
        let mut value = self.object()?.get(field)?;
        while let Some(path) = rest {
            let (field, tail) = split_dot(path);
            value = value.as_object()?.get(field)?;
            rest = tail;
        }
        Some(value)
    }
}

/// `a.b.c` as `("a", Some("b.c"))`, `a` as `("a", None)`. A byte loop: the names are short,
/// and `split_once('.')` (a memchr search) cost more than the lookups it serves.
fn split_dot(name: &str) -> (&str, Option<&str>) {
    match name.bytes().position(|b| b == b'.') {
        Some(i) => (&name[..i], Some(&name[i + 1..])),
        None => (name, None),
    }
}

fn empty_object() -> &'static Map<String, Value> {
    static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl<'a> Binding<'a> {
    /// A CEL context whose only variables are the three names of this binding.
    pub fn context(&self) -> Context<'_, '_> {
        let mut ctx = Context::with_env(env().clone());
        ctx.set_variable_resolver(self);
        ctx
    }

    fn var(&self, name: &str) -> Option<&Var<'a>> {
        match name {
            "proposal" => Some(&self.proposal),
            "context" => Some(&self.context),
            "intent" => Some(&self.intent),
            _ => None,
        }
    }
}

impl cel::context::VariableResolver for Binding<'_> {
    /// `name` is a variable (`context`) or a qualified name rooted at one
    /// (`context.order.paid_minor`); the interpreter asks for the longest name first.
    fn resolve<'b>(&'b self, name: &str) -> Option<CowVal<'b, 'b>> {
        let (head, path) = split_dot(name);
        let var = self.var(head)?;
        match path {
            None => Some(CowVal::Borrowed(var.whole())),
            Some(path) => var.member(path).map(|v| CowVal::Owned(to_val(v))),
        }
    }
}

/// Which variables the rules only ever select members of (`context.order`,
/// `has(context.order)`), in the order `proposal`, `context`, `intent`. A variable used in any
/// other way (`context == {}`, `context["order"]`, `size(context)`, `'order' in context`, or a
/// comprehension variable of the same name) is not.
fn members_only<'e>(exprs: impl IntoIterator<Item = &'e cel::IdedExpr>) -> [bool; 3] {
    use cel::common::ast::Expr;
    let mut whole = [false; 3];
    let mut stack: Vec<&cel::IdedExpr> = exprs.into_iter().collect();
    while let Some(e) = stack.pop() {
        match &e.expr {
            Expr::Select(s) if matches!(s.operand.expr, Expr::Ident(_)) => {}
            Expr::Ident(name) => {
                if let Some(i) = VARIABLES.iter().position(|v| v == name) {
                    whole[i] = true;
                }
            }
            _ => stack.extend(children(e)),
        }
    }
    whole.map(|w| !w)
}

/// The names the rules see, in [`members_only`]'s order.
const VARIABLES: [&str; 3] = ["proposal", "context", "intent"];

/// An object whose members are converted when they are selected, so that
/// `has(context.order)` does not convert `context`. Whatever else it is asked (`in`,
/// iteration, size, equality, a copy) it answers as the converted map, made once.
///
/// It stands for a variable the rules only select members of ([`members_only`]): the
/// interpreter then only ever selects a member of it (a member it has is found by the
/// [`Binding`] first, so here only for `has()`), and neither it nor a member it gives out
/// is ever a rule's result or an operand (it is not a `CelMap` to a downcast).
#[derive(Debug)]
struct LazyObject<'a> {
    map: &'a Map<String, Value>,
    full: OnceLock<CelMap<'a>>,
}

impl<'a> LazyObject<'a> {
    fn new(map: &'a Map<String, Value>) -> Self {
        LazyObject {
            map,
            full: OnceLock::new(),
        }
    }

    /// The map [`to_val`] makes of it.
    fn full(&self) -> &CelMap<'a> {
        self.full.get_or_init(|| map_to_cel(self.map))
    }
}

impl Val for LazyObject<'_> {
    fn get_type(&self) -> &Type {
        <Self as Val>::cel_type()
    }

    fn cel_type() -> &'static Type {
        &MAP_TYPE
    }

    fn as_container(&self) -> Option<&dyn Container> {
        self.full().as_container()
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn as_iterable<'b, 'w>(&'b self) -> Option<&'b (dyn Iterable + 'w)>
    where
        Self: 'w,
    {
        self.full().as_iterable()
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        self.full().as_sizer()
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        self.full().as_zeroer()
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.full().equals(other)
    }

    fn clone_as_boxed<'w>(&self) -> Box<dyn Val + 'w>
    where
        Self: 'w,
    {
        Box::new(self.full().clone())
    }
}

impl Indexer for LazyObject<'_> {
    fn get<'b, 'w>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        if let Some(key) = idx.downcast_ref::<CelString>() {
            return match self.map.get(key.inner()) {
                Some(Value::Object(m)) => Ok(CowVal::owned(LazyObject::new(m))),
                Some(v) => Ok(CowVal::Owned(to_val(v))),
                // what `CelMap` says for a string key it does not have
                None => Err(ExecutionError::NoSuchKey(Arc::new(key.inner().to_string()))),
            };
        }
        self.full().get(idx)
    }

    fn steal<'w>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'w>, ExecutionError>
    where
        Self: 'w,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

fn map_to_val(m: &Map<String, Value>) -> Box<dyn Val + '_> {
    Box::new(map_to_cel(m))
}

fn map_to_cel(m: &Map<String, Value>) -> CelMap<'_> {
    let map: HashMap<CelMapKey<'_>, Box<dyn Val + '_>> = m
        .iter()
        .map(|(k, v)| (CelMapKey::from(k.as_str()), to_val(v)))
        .collect();
    CelMap::from(map)
}

/// JSON to a CEL value with every integer that fits `i64` as `int` (never `uint`), so
/// arithmetic mixes freely (`paid - refunded` may go negative, `5000 == 5000.0`); larger
/// integers become `uint`, fractions `double`. Strings are borrowed, not copied.
pub fn to_val(v: &Value) -> Box<dyn Val + '_> {
    match v {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(a) => Box::new(CelList::from(a.iter().map(to_val).collect::<Vec<_>>())),
        Value::Object(m) => map_to_val(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(rule: &str) -> RuleSet {
        RuleSet::load(
            "r.rules.toml",
            &format!("[[rule]]\nreason = \"R\"\nrule = {rule:?}\nmessage = \"m\"\n"),
        )
        .unwrap()
    }

    fn run(rs: &RuleSet, proposal: Value, context: Value) -> Option<Finding> {
        rs.evaluate(&proposal, context.as_object(), None)
    }

    #[test]
    fn integers_are_ints_so_subtraction_can_go_negative() {
        let rs = one("context.paid - context.refunded == -4990");
        assert_eq!(
            run(&rs, json!({}), json!({"paid": 10, "refunded": 5000})),
            None
        );
        let rs = one("proposal.amount + 1 == 1501");
        assert_eq!(run(&rs, json!({"amount": 1500}), json!({})), None);
    }

    #[test]
    fn zero_and_equal_by_value() {
        let rs = one("proposal.amount == 5000.0 && context.zero == 0 && context.zero - 0 == 0");
        assert_eq!(run(&rs, json!({"amount": 5000}), json!({"zero": 0})), None);
        let rs = one("proposal.amount == 5000");
        assert_eq!(run(&rs, json!({"amount": 5000.0}), json!({})), None);
    }

    #[test]
    fn false_rule_gives_its_reason_decision_field_and_message() {
        let rs = RuleSet::load(
            "r.rules.toml",
            "[[rule]]\nreason = \"EXCEEDS_REMAINING\"\nrule = \"proposal.a <= context.left\"\nmessage = \"too much\"\n\
             message_expression = \"'amount ' + string(proposal.a) + ' over ' + string(context.left)\"\n\
             field = \"/a\"\ndecision = \"recheck\"\n",
        )
        .unwrap();
        let f = run(&rs, json!({"a": 9000}), json!({"left": 8000})).unwrap();
        assert_eq!(f.stage, Stage::Business);
        assert_eq!(f.reason.as_str(), "EXCEEDS_REMAINING");
        assert_eq!(f.decision, Decision::Recheck);
        assert_eq!(f.pointer.as_deref(), Some("/a"));
        assert_eq!(f.message, "amount 9000 over 8000");
        assert_eq!(f.keyword.as_deref(), Some("rule[1]"));
    }

    #[test]
    fn null_comparison_is_a_rule_error_that_fails_closed() {
        let rs = one("proposal.amount <= 5");
        let f = run(&rs, json!({"amount": null}), json!({})).unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert_eq!(f.decision, Decision::Reject);
        assert!(
            f.message.starts_with("rule 1 (R) could not be evaluated: "),
            "{}",
            f.message
        );
        // but comparing with null by equality is fine
        assert_eq!(
            run(
                &one("proposal.amount != null"),
                json!({"amount": 1}),
                json!({})
            ),
            None
        );
    }

    #[test]
    fn missing_key_and_division_by_zero_are_rule_errors() {
        let f = run(&one("proposal.missing > 0"), json!({}), json!({})).unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert!(f.message.contains("No such key: missing"), "{}", f.message);
        let f = run(
            &one("proposal.a / context.z > 1"),
            json!({"a": 5}),
            json!({"z": 0}),
        )
        .unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert!(
            f.message.to_lowercase().contains("division by zero"),
            "{}",
            f.message
        );
    }

    #[test]
    fn non_boolean_result_is_a_rule_error() {
        let f = run(&one("proposal.a + 1"), json!({"a": 1}), json!({})).unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert_eq!(
            f.message,
            "rule 1 (R) gave an int 2, not a boolean; fails closed"
        );
    }

    #[test]
    fn unknown_variable_is_a_rule_error() {
        let f = run(&one("request.user == 'x'"), json!({}), json!({})).unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert!(
            f.message.contains("Undeclared reference to 'request'"),
            "{}",
            f.message
        );
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        let e = RuleSet::load(
            "schemas/x.rules.toml",
            "# c\n[[rule]]\nreason = \"R\"\nrule = \"proposal.a <=\"\n",
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].reason, Reason::CONTRACT_ERROR);
        assert!(
            e[0].message.starts_with("schemas/x.rules.toml:4:22: rule 1 (R): `rule` does not compile at expression line 1, column 14: "),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn unknown_keys_without_a_hint_get_the_valid_keys() {
        let e = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"R\"\nexpr = \"true\"\n",
        )
        .unwrap_err();
        assert_eq!(
            e[0].message,
            "x.rules.toml:3:1: unknown key `expr`; valid keys: reason, rule, message, message_expression, decision, field"
        );
        let e = RuleSet::load("x.rules.toml", "[intent]\npointers = []\n").unwrap_err();
        assert_eq!(
            e[0].message,
            "x.rules.toml:2:1: unknown key `pointers`; valid keys: fields"
        );
        let e = RuleSet::load("x.rules.toml", "zzz = 1\n").unwrap_err();
        assert_eq!(
            e[0].message,
            "x.rules.toml:1:1: unknown key `zzz`; valid keys: rule, intent"
        );
    }

    #[test]
    fn unknown_keys_get_a_hint() {
        let e = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"true\"\nmesage = \"m\"\n",
        )
        .unwrap_err();
        assert!(
            e[0].message
                .contains("unknown key `mesage` (did you mean `message`?)"),
            "{}",
            e[0].message
        );
        let e = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"true\"\ndecision = \"rejct\"\n",
        )
        .unwrap_err();
        assert!(
            e[0].message
                .contains("unknown decision \"rejct\" (did you mean `reject`?)"),
            "{}",
            e[0].message
        );
        // placed at the `decision` value (line 4, column 12), not at the rule's `rule` line
        assert!(
            e[0].message
                .starts_with("x.rules.toml:4:12: rule 1: unknown decision"),
            "{}",
            e[0].message
        );
        let e = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"true\"\n\nfield = \"amount\"\n",
        )
        .unwrap_err();
        assert!(
            e[0].message
                .starts_with("x.rules.toml:5:9: rule 1: `field` \"amount\" is not a JSON Pointer"),
            "{}",
            e[0].message
        );
        // a bad `~` escape (RFC 6901) stops the load too: it would match nothing and turn
        // the check off silently
        let e = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"R\"\nrule = \"true\"\nfield = \"/a~2\"\n\n[intent]\nfields = [\"/zz~2\"]\n",
        )
        .unwrap_err();
        let messages: Vec<&str> = e.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "x.rules.toml:4:9: rule 1: `field` \"/a~2\" is not a JSON Pointer: \"~\" at byte 2 is not followed by \"0\" or \"1\" (RFC 6901 section 3)",
                "x.rules.toml: [intent] field \"/zz~2\" is not a JSON Pointer: \"~\" at byte 3 is not followed by \"0\" or \"1\" (RFC 6901 section 3)",
            ]
        );
    }

    #[test]
    fn first_failure_decides_and_later_rules_are_not_evaluated() {
        let rs = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"A\"\nrule = \"true\"\n\
             [[rule]]\nreason = \"B\"\nrule = \"proposal.nope > 1\"\n\
             [[rule]]\nreason = \"C\"\nrule = \"false\"\n",
        )
        .unwrap();
        let f = run(&rs, json!({}), json!({})).unwrap();
        assert_eq!(f.reason, Reason::RULE_ERROR);
        assert_eq!(f.keyword.as_deref(), Some("rule[2]"));
        // had rule 3 been evaluated first it would say C; a throwing rule stops the list
        let rs = RuleSet::load(
            "x.rules.toml",
            "[[rule]]\nreason = \"A\"\nrule = \"false\"\n[[rule]]\nreason = \"B\"\nrule = \"1 / 0 == 1\"\n",
        )
        .unwrap();
        assert_eq!(run(&rs, json!({}), json!({})).unwrap().reason.as_str(), "A");
    }
}

/// The binding against the conversion it replaces: every variable converted whole up front
/// into context variables. Both must give the same finding, message included.
#[cfg(test)]
mod binding_tests {
    use super::*;
    use cel::common::ast::operators;
    use serde_json::json;

    /// The old binding: `proposal`, `context` and `intent` converted whole, up front.
    fn eager<'a>(
        proposal: &'a Value,
        context: Option<&'a Map<String, Value>>,
        intent: Option<&'a Map<String, Value>>,
    ) -> Context<'a, 'a> {
        let mut ctx = Context::with_env(env().clone());
        let empty = || -> Box<dyn Val + 'a> {
            Box::new(CelMap::from(
                HashMap::<CelMapKey<'a>, Box<dyn Val + 'a>>::new(),
            ))
        };
        ctx.add_variable_as_val("proposal", to_val(proposal));
        ctx.add_variable_as_val("context", context.map_or_else(empty, map_to_val));
        ctx.add_variable_as_val("intent", intent.map_or_else(empty, map_to_val));
        ctx
    }

    fn data() -> (Value, Value, Value) {
        let proposal = json!({
            "amount": 1500, "neg": -3, "zero": 0, "f": 1.5, "whole_f": 5000.0,
            "big": 18446744073709551615u64, "i64max": 9223372036854775807i64,
            "s": "refund", "t": true, "n": null,
            "lines": [{"qty": 2, "sku": "a"}, {"qty": 1, "sku": "b"}],
            "nested": {"a": {"b": {"c": 7}}, "list": [1, 2], "empty": {}},
            "a.b": "dotted", "a": {"b": "not dotted"},
        });
        let context = json!({
            "actor": {"user_id": "u1", "allowed_actions": ["refund", "view"]},
            "order": {"owner_id": "u1", "paid": 10, "refunded": 5000, "currency": "EUR", "note": null},
            "z": 0,
        });
        let intent = json!({"amount": 1500, "currency": "EUR"});
        (proposal, context, intent)
    }

    /// Rules that read the variables every way: members, nested members, missing members,
    /// members of non-objects, `has()`, whole variables, comprehensions, numbers of each kind.
    const EXPRESSIONS: &[&str] = &[
        "proposal.amount == 1500",
        "proposal.amount + 1 == 1501 && proposal.neg - 1 == -4 && proposal.zero == 0",
        "proposal.amount == 1500.0 && proposal.whole_f == 5000 && proposal.f * 2.0 == 3.0",
        "proposal.amount + 1.0 > 0",
        "proposal.big == 18446744073709551615u && proposal.big > proposal.i64max",
        "proposal.big + 1u > 0u",
        "proposal.big + 1 > 0",
        "proposal.i64max + 1 > 0",
        "proposal.f > 1 && proposal.f < 2u",
        "type(proposal.big) == uint && type(proposal.amount) == int && type(proposal.f) == double",
        "context.paid - context.refunded < 0",
        "context.order.paid - context.order.refunded == -4990",
        "proposal.amount / context.z > 1",
        "proposal.missing > 0",
        "context.order.missing > 0",
        "context.nope.deeper > 0",
        "intent.amount == proposal.amount && intent.currency == context.order.currency",
        "intent.missing == 1",
        "proposal.s.missing == 1",
        "proposal.lines.qty == 1",
        "proposal.n.x == 1",
        "proposal.n == null && context.order.note == null",
        "proposal.n > 0",
        "context.order.note <= 5",
        "proposal.nested.a.b.c == 7 && proposal.nested.a.b == {'c': 7}",
        "proposal.nested.a.b.c.d == 7",
        "has(context.order) && has(context.order.owner_id) && !has(context.order.nope)",
        "has(context.nope)",
        "has(context.nope.x)",
        "has(proposal.s.x)",
        "has(proposal.nested.a.b.c) && !has(proposal.nested.a.x)",
        "has(proposal.nested.empty) && !has(proposal.nested.empty.x)",
        "has(intent.amount) && !has(intent.nope)",
        "'refund' in context.actor.allowed_actions && !('x' in context.actor.allowed_actions)",
        "proposal.lines.all(l, l.qty >= 1) && proposal.lines.exists(l, l.sku == 'b')",
        "proposal.lines.map(l, l.qty).filter(q, q > 1) == [2]",
        "size(proposal.lines) == 2 && proposal.lines[0].qty == 2 && proposal.lines[1].sku == 'b'",
        "proposal.lines[5].qty == 1",
        "proposal.nested.list + [3] == [1, 2, 3]",
        "proposal['a.b'] == 'dotted' && proposal.a.b == 'not dotted'",
        "proposal.a.b == 'not dotted'",
        "context == {}",
        "{'z': 0} == context",
        "size(context) == 3 && size(intent) == 2",
        "'order' in context && !('nope' in context)",
        "context['order'].currency == 'EUR'",
        "context.?order.orValue({}) != {}",
        "context.?nope.orValue(1) == 1",
        "context.all(k, k != '')",
        "context.order == {'owner_id': 'u1', 'paid': 10, 'refunded': 5000, 'currency': 'EUR', 'note': null}",
        "{'owner_id': 'u1', 'paid': 10, 'refunded': 5000, 'currency': 'EUR', 'note': null} == context.order",
        "[context.order][0].paid == 10 && context.order in [context.order]",
        "intent == {'amount': 1500, 'currency': 'EUR'}",
        "[1].all(context, has(context.x) == false)",
        "[{'x': 1}].all(context, has(context.x))",
        "proposal.s.startsWith('ref') && proposal.s.size() == 6 && string(proposal.amount) == '1500'",
        "proposal.t && !proposal.n",
        "proposal.amount",
        "proposal.s",
        "proposal.nested",
        "context",
        // not `proposal.lines`: a list's message prints its maps in HashMap order, which
        // differs between any two conversions
        "proposal.nested.list",
        "context.order",
        "intent.nope",
        "undeclared.x == 1",
        // the direct evaluator's kinds (`fast`): each answered or left to the interpreter
        "proposal.amount != null && proposal.s != null && proposal.t != null",
        "proposal.n != null",
        "null == proposal.n && proposal.n == null && !(proposal.n != null)",
        "proposal.s == 1 || proposal.amount == 's' || proposal.t == 1 || proposal.n == false",
        "proposal.amount == proposal.f",
        "proposal.amount != proposal.big",
        "proposal.amount == proposal.nested",
        "proposal.t == true && proposal.s == 'refund' && proposal.amount == 1500",
        "proposal.amount <= context.order.paid - context.order.refunded",
        "proposal.amount >= intent.amount && proposal.amount > 1499 && proposal.amount < 1501",
        "proposal.s <= 'z'",
        "proposal.neg - 9223372036854775807 < 0",
        "proposal.i64max + proposal.neg > 0",
        "proposal.amount - proposal.f > 0",
        "'refund' in context.actor.allowed_actions",
        "'x' in context.actor.allowed_actions || 'view' in context.actor.allowed_actions",
        "'a' in proposal.lines",
        "'a' in [1, 'b', null, true, 1.5]",
        "'b' in ['a', 'b']",
        "1 in proposal.nested.list",
        "'order' in context",
        "proposal.missing && false",
        "false && proposal.missing",
        "true || proposal.missing",
        "proposal.missing || true",
        "proposal.amount && true",
        "true && proposal.amount",
        "proposal.t ? proposal.amount == 1500 : proposal.missing",
        "proposal.n ? true : false",
        "!proposal.t || !has(context.order)",
        "has(proposal.amount) && has(context.actor.user_id) && !has(intent.x)",
        "has(context.actor.allowed_actions.x)",
        "has(proposal.missing.x)",
        "context.order.owner_id == context.actor.user_id && context.order.currency == intent.currency",
        "proposal.amount",
        "proposal.amount + 1",
    ];

    fn rules(rule: &str, message_expression: Option<&str>) -> RuleSet {
        let mx = message_expression
            .map(|m| format!("message_expression = {m:?}\n"))
            .unwrap_or_default();
        RuleSet::load(
            "r.rules.toml",
            &format!("[[rule]]\nreason = \"R\"\nrule = {rule:?}\nmessage = \"m\"\n{mx}"),
        )
        .unwrap()
    }

    fn same(
        rs: &RuleSet,
        p: &Value,
        c: Option<&Map<String, Value>>,
        i: Option<&Map<String, Value>>,
    ) {
        let got = rs.evaluate(p, c, i);
        let want = rs.run(&eager(p, c, i), 0.0);
        assert_eq!(got, want, "{:?}", rs.rules[0].source);
    }

    #[test]
    fn every_expression_gives_what_the_eager_binding_gives() {
        let (p, c, i) = data();
        for e in EXPRESSIONS {
            let rs = rules(e, None);
            same(&rs, &p, c.as_object(), i.as_object());
            same(&rs, &p, None, None);
            same(&rs, &json!([1, 2]), c.as_object(), None);
            same(&rs, &json!(null), None, i.as_object());
        }
    }

    /// The refund sample's rules are all the direct evaluator's, and on a capture of that
    /// contract it decides each of them (the interpreter runs none).
    #[test]
    fn the_refund_rules_are_decided_without_the_interpreter() {
        let rs = RuleSet::load(
            "refund-v1.rules.toml",
            include_str!("../../samples/refund/schemas/refund-v1.rules.toml"),
        )
        .unwrap();
        assert_eq!(rs.rules.len(), 5);
        // no per-capture work for the budgets: no steps, no size, no bound on the capture
        for r in &rs.rules {
            assert!(r.cost.is_empty() && !r.sized(), "{}", r.source);
            assert!(r.estimated_bytes(0.0) < 1e3, "{}", r.source);
        }
        let proposal = json!({"schema_version": "refund-v1", "order_id": "O-1", "amount_minor": 500,
            "currency": "EUR", "expected_version": 3});
        let context = json!({"actor": {"user_id": "U-1", "allowed_actions": ["refund", "view"]},
            "order": {"order_id": "O-1", "owner_id": "U-1", "currency": "EUR", "paid_minor": 1000,
                "refunded_minor": 200, "version": 3}});
        let vars = fast::Vars {
            proposal: &proposal,
            context: context.as_object().unwrap(),
            intent: empty_object(),
        };
        let decided: Vec<Option<bool>> = rs
            .rules
            .iter()
            .map(|r| fast::eval(r.fast.as_ref().expect(&r.source), &vars))
            .collect();
        assert_eq!(decided, vec![Some(true); 5]);
        // the amount over the remainder (800): EXCEEDS_REMAINING is decided false
        let over = json!({"schema_version": "refund-v1", "order_id": "O-1", "amount_minor": 801,
            "currency": "EUR", "expected_version": 3});
        let vars = fast::Vars {
            proposal: &over,
            ..vars
        };
        let decided: Vec<Option<bool>> = rs
            .rules
            .iter()
            .map(|r| fast::eval(r.fast.as_ref().unwrap(), &vars))
            .collect();
        assert_eq!(
            decided,
            vec![Some(true), Some(true), Some(true), Some(false), Some(true)]
        );
        assert_eq!(
            rs.evaluate(&over, context.as_object(), None)
                .map(|f| f.message),
            Some("amount 801 exceeds the refundable remainder 800".to_owned())
        );
    }

    #[test]
    fn message_expressions_give_what_the_eager_binding_gives() {
        let (p, c, i) = data();
        for e in EXPRESSIONS {
            let rs = rules("false", Some(e));
            same(&rs, &p, c.as_object(), i.as_object());
            same(&rs, &p, None, None);
        }
    }

    #[test]
    fn members_only_tells_selected_members_from_whole_uses() {
        let only = |e: &str| rules(e, None).members_only;
        assert_eq!(
            only("has(context.order) && proposal.a.b == intent.c"),
            [true, true, true]
        );
        assert_eq!(only("context == {} && proposal.a"), [true, false, true]);
        assert_eq!(only("size(intent) == 0"), [true, true, false]);
        assert_eq!(
            only("context['a'] == 1 || 'a' in proposal"),
            [false, false, true]
        );
        assert_eq!(only("context.?a.orValue(1) == 1"), [true, false, true]);
        // a comprehension variable of the same name counts as a whole use
        assert_eq!(only("[1].all(intent, intent > 0)"), [true, true, false]);
        // the message expression counts too
        let rs = rules("true", Some("string(proposal)"));
        assert_eq!(rs.members_only, [false, true, true]);
    }

    #[test]
    fn lazy_lookups_give_the_eager_errors() {
        let (p, c, i) = data();
        let msg = |e: &str| {
            rules(e, None)
                .evaluate(&p, c.as_object(), i.as_object())
                .map(|f| f.message)
        };
        let cases = [
            (
                "context.order.missing > 0",
                Some("rule 1 (R) could not be evaluated: No such key: missing; fails closed"),
            ),
            (
                "has(context.nope) || context.nope.x > 0",
                Some("rule 1 (R) could not be evaluated: No such key: nope; fails closed"),
            ),
            ("has(context.order) && has(proposal.nested.a.b.c)", None),
            (
                "context",
                Some("rule 1 (R) gave a map with 3 entries, not a boolean; fails closed"),
            ),
            (
                "proposal.big",
                Some("rule 1 (R) gave an int 18446744073709551615, not a boolean; fails closed"),
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(msg(rule).as_deref(), want, "{rule}");
        }
    }

    /// xorshift64*: a seeded generator for the randomized test (no dependency, the same
    /// sequence on every run).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'x, T>(&mut self, xs: &'x [T]) -> &'x T {
            &xs[self.below(xs.len())]
        }

        /// True `pct` times in 100.
        fn chance(&mut self, pct: u64) -> bool {
            self.next() % 100 < pct
        }
    }

    /// The member names the random values have; `zz` is never present.
    const KEYS: [&str; 6] = ["a", "b", "s", "l", "o", "n"];

    /// A random JSON value `depth` levels deep at most: integers at the edges of `i64`,
    /// integers over `i64::MAX` (CEL `uint`), doubles (whole ones too: `5.0`), strings
    /// empty and not ASCII, booleans, null, arrays of strings or of mixed items, nested
    /// objects.
    fn random_json(rng: &mut Rng, depth: u32) -> Value {
        let string = |rng: &mut Rng| json!(*rng.pick(&["", "a", "s", "é", "日本", "a.b", "0"]));
        match rng.below(if depth == 0 { 9 } else { 13 }) {
            0..=2 => json!(*rng.pick(&[
                0i64,
                -1,
                1,
                2,
                5,
                100,
                i64::MAX,
                i64::MIN,
                i64::MAX - 1,
                i64::MIN + 1
            ])),
            3 => json!(*rng.pick(&[i64::MAX as u64 + 1, u64::MAX])),
            4 => json!(*rng.pick(&[5.0f64, 1e2, 1.5, -0.0, 0.0, -1.0])),
            5 | 6 => string(rng),
            7 => json!(rng.chance(50)),
            8 => Value::Null,
            // strings only, or scalars of every kind
            9 if rng.chance(50) => Value::Array((0..rng.below(4)).map(|_| string(rng)).collect()),
            9 => Value::Array((0..rng.below(5)).map(|_| random_json(rng, 0)).collect()),
            10 => Value::Array(
                (0..rng.below(4))
                    .map(|_| random_json(rng, depth - 1))
                    .collect(),
            ),
            _ => Value::Object(random_object(rng, depth - 1)),
        }
    }

    /// An object with each of [`KEYS`] as a member 3 times in 4, so that random member
    /// chains often lead to a value.
    fn random_object(rng: &mut Rng, depth: u32) -> Map<String, Value> {
        let mut m = Map::new();
        for k in KEYS {
            if rng.chance(75) {
                m.insert(k.to_owned(), random_json(rng, depth));
            }
        }
        m
    }

    /// Random rules, as CEL source and as the tree the parser makes of it: the tree is
    /// put together from parts (literals are parsed once), since parsing 20,000 rules
    /// would take most of a minute in a debug build.
    struct RuleGen {
        rng: Rng,
        literals: HashMap<&'static str, cel::IdedExpr>,
    }

    type Gen = (String, cel::IdedExpr);

    impl RuleGen {
        fn node(expr: cel::common::ast::Expr) -> cel::IdedExpr {
            cel::IdedExpr { id: 0, expr }
        }

        fn call(
            func: &str,
            target: Option<cel::IdedExpr>,
            args: Vec<cel::IdedExpr>,
        ) -> cel::IdedExpr {
            Self::node(cel::common::ast::Expr::Call(cel::common::ast::CallExpr {
                func_name: func.to_owned(),
                target: target.map(Box::new),
                args,
            }))
        }

        fn select(operand: cel::IdedExpr, field: &str, test: bool) -> cel::IdedExpr {
            Self::node(cel::common::ast::Expr::Select(
                cel::common::ast::SelectExpr {
                    operand: Box::new(operand),
                    field: field.to_owned(),
                    test,
                },
            ))
        }

        /// One of `sources`, a literal.
        fn literal(&mut self, sources: &[&'static str]) -> Gen {
            let source = *self.rng.pick(sources);
            let e = self
                .literals
                .entry(source)
                .or_insert_with(|| env().compile(source).unwrap().expression().clone());
            (source.to_owned(), e.clone())
        }

        /// A member chain on one of the variables, up to three names deep, now and then
        /// one that no value has.
        fn path(&mut self) -> Gen {
            let var = *self.rng.pick(&VARIABLES);
            let (mut s, mut e) = (
                var.to_owned(),
                Self::node(cel::common::ast::Expr::Ident(var.to_owned())),
            );
            for _ in 0..*self.rng.pick(&[0, 1, 1, 2, 2, 3]) {
                let f = if self.rng.chance(3) {
                    "zz"
                } else {
                    *self.rng.pick(&KEYS)
                };
                s = format!("{s}.{f}");
                e = Self::select(e, f, false);
            }
            (s, e)
        }

        fn atom(&mut self) -> Gen {
            let n = self.rng.below(20);
            let source = match n {
                9 | 10 => *self.rng.pick(&[
                    "0",
                    "1",
                    "-1",
                    "2",
                    "5",
                    "100",
                    "9223372036854775807",
                    "-9223372036854775807",
                    "-9223372036854775808",
                ]),
                11 | 12 => *self.rng.pick(&["''", "'a'", "'s'", "'é'", "'日本'", "'0'"]),
                13 => *self.rng.pick(&["true", "false", "null"]),
                // outside the direct evaluator: doubles, uints, lists, maps, bytes
                14 => *self.rng.pick(&[
                    "1.5",
                    "5.0",
                    "1e2",
                    "-0.0",
                    "5u",
                    "0u",
                    "18446744073709551615u",
                ]),
                15 => *self.rng.pick(&[
                    "[]",
                    "['a', 's']",
                    "[1, 'a', null, 5.0]",
                    "{}",
                    "{'a': 1}",
                    "b'a'",
                ]),
                _ => "",
            };
            if !source.is_empty() {
                return self.literal(&[source]);
            }
            let (s, e) = self.path();
            match n {
                7 | 8 => {
                    let f = if self.rng.chance(10) {
                        "zz"
                    } else {
                        *self.rng.pick(&KEYS)
                    };
                    (format!("has({s}.{f})"), Self::select(e, f, true))
                }
                // functions, outside the direct evaluator too
                16 => (format!("size({s})"), Self::call("size", None, vec![e])),
                17 => (format!("string({s})"), Self::call("string", None, vec![e])),
                18 => (format!("{s}.size()"), Self::call("size", Some(e), vec![])),
                19 => (
                    format!("type({s}) == int"),
                    Self::call(
                        operators::EQUALS,
                        None,
                        vec![
                            Self::call("type", None, vec![e]),
                            Self::node(cel::common::ast::Expr::Ident("int".to_owned())),
                        ],
                    ),
                ),
                _ => (s, e),
            }
        }

        /// `op` of two parts.
        fn binary(op: &str, (ls, le): Gen, (rs, re): Gen) -> Gen {
            let name = match op {
                "==" => operators::EQUALS,
                "!=" => operators::NOT_EQUALS,
                "<" => operators::LESS,
                "<=" => operators::LESS_EQUALS,
                ">" => operators::GREATER,
                ">=" => operators::GREATER_EQUALS,
                "+" => operators::ADD,
                "-" => operators::SUBSTRACT,
                "&&" => operators::LOGICAL_AND,
                "||" => operators::LOGICAL_OR,
                "in" => operators::IN,
                "*" => operators::MULTIPLY,
                "/" => operators::DIVIDE,
                _ => operators::MODULO,
            };
            (
                format!("({ls}) {op} ({rs})"),
                Self::call(name, None, vec![le, re]),
            )
        }

        /// `c ? a : b`.
        fn conditional((cs, ce): Gen, (a_s, ae): Gen, (bs, be): Gen) -> Gen {
            (
                format!("({cs}) ? ({a_s}) : ({bs})"),
                Self::call(operators::CONDITIONAL, None, vec![ce, ae, be]),
            )
        }

        /// A random rule meant to give a value of kind `kind` (`b`ool, `i`nt, or `a`ny),
        /// so that more rules reach an answer than [`RuleGen::expr`]'s; one part in 10 is
        /// [`RuleGen::expr`]'s (of any kind).
        fn typed(&mut self, kind: char, depth: u32) -> Gen {
            if self.rng.chance(10) {
                return self.expr(depth);
            }
            if depth == 0 || self.rng.chance(25) {
                return match (kind, self.rng.below(10)) {
                    ('b', 0..=4) => {
                        let (s, e) = self.path();
                        let f = *self.rng.pick(&KEYS);
                        (format!("has({s}.{f})"), Self::select(e, f, true))
                    }
                    ('b', 5 | 6) => self.literal(&["true", "false"]),
                    ('i', 0..=4) => self.literal(&[
                        "0",
                        "1",
                        "-1",
                        "100",
                        "9223372036854775807",
                        "-9223372036854775808",
                    ]),
                    ('a', 0..=4) => self.atom(),
                    _ => self.path(),
                };
            }
            let d = depth - 1;
            match (kind, self.rng.below(10)) {
                ('b', 0 | 1) => {
                    let op = *self.rng.pick(&["==", "!="]);
                    Self::binary(op, self.typed('a', d), self.typed('a', d))
                }
                ('b', 2 | 3) => {
                    let op = *self.rng.pick(&["<", "<=", ">", ">="]);
                    Self::binary(op, self.typed('i', d), self.typed('i', d))
                }
                ('b', 4 | 5) => {
                    let op = *self.rng.pick(&["&&", "||"]);
                    Self::binary(op, self.typed('b', d), self.typed('b', d))
                }
                ('b', 6) => {
                    let (s, e) = self.typed('b', d);
                    (
                        format!("!({s})"),
                        Self::call(operators::LOGICAL_NOT, None, vec![e]),
                    )
                }
                ('b', 7) => {
                    let l = self.literal(&["''", "'a'", "'s'", "'日本'", "'0'", "'1'", "1"]);
                    Self::binary("in", l, self.path())
                }
                ('b', 8) => Self::binary("==", self.typed('i', d), self.typed('i', d)),
                ('i', 0..=6) => {
                    let op = *self.rng.pick(&["+", "-"]);
                    Self::binary(op, self.typed('i', d), self.typed('i', d))
                }
                ('a', 0..=2) => self.typed('i', depth),
                ('a', 3..=5) => self.typed('b', depth),
                ('a', 6) => self.expr(depth),
                _ => {
                    Self::conditional(self.typed('b', d), self.typed(kind, d), self.typed(kind, d))
                }
            }
        }

        /// A random rule: mostly the direct evaluator's grammar (members, literals,
        /// `has()`, `in`, comparisons, `+`, `-`, `&&`, `||`, `!`, `?:`), with parts outside
        /// it (`*`, `/`, `%`, unary `-`, the atoms above).
        fn expr(&mut self, depth: u32) -> Gen {
            if depth == 0 || self.rng.chance(25) {
                return self.atom();
            }
            let d = depth - 1;
            match self.rng.below(20) {
                0..=11 => {
                    let op = *self.rng.pick(&[
                        "==", "!=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "&&", "||", "&&",
                        "||", "in", "*", "/", "%",
                    ]);
                    Self::binary(op, self.expr(d), self.expr(d))
                }
                12 | 13 => {
                    let (s, e) = self.expr(d);
                    (
                        format!("!({s})"),
                        Self::call(operators::LOGICAL_NOT, None, vec![e]),
                    )
                }
                14 | 15 => Self::conditional(self.expr(d), self.expr(d), self.expr(d)),
                16 => {
                    let (s, e) = self.expr(d);
                    (
                        format!("-({s})"),
                        Self::call(operators::NEGATE, None, vec![e]),
                    )
                }
                _ => Self::binary("in", self.atom(), self.path()),
            }
        }
    }

    /// Two findings equal but for the order of a map's entries in the message: the
    /// interpreter prints a map, or a list made of a map's keys (`[1] + {'a': 1}`), in
    /// `HashMap` order, which differs between two conversions of the same JSON (and `short`
    /// may then cut the value at different places).
    fn same_but_map_order(a: &Finding, b: &Finding) -> bool {
        let (ma, mb) = (&a.message, &b.message);
        let Some(at) = ma.find(['{', '[']) else {
            return false;
        };
        let sorted = |m: &str| {
            let mut chars: Vec<char> = m.chars().collect();
            chars.sort_unstable();
            chars
        };
        let rest_equal = match (ma.rfind("..."), mb.rfind("...")) {
            (Some(x), Some(y)) => ma[x..] == mb[y..],
            _ => sorted(ma) == sorted(mb),
        };
        let no_message = |f: &Finding| Finding {
            message: String::new(),
            ..f.clone()
        };
        ma.get(..at) == mb.get(..at) && rest_equal && no_message(a) == no_message(b)
    }

    type Capture = (
        Value,
        Option<Map<String, Value>>,
        Option<Map<String, Value>>,
    );

    fn random_captures(rng: &mut Rng, n: usize) -> Vec<Capture> {
        (0..n)
            .map(|_| {
                let proposal = if rng.chance(80) {
                    Value::Object(random_object(rng, 3))
                } else {
                    random_json(rng, 3)
                };
                let mut var = || rng.chance(85).then(|| random_object(rng, 3));
                (proposal, var(), var())
            })
            .collect()
    }

    /// Randomized differential test of the direct evaluator: 20,000 random rules (half of
    /// them made to give a boolean), each against 8 of 256 random captures. Whenever
    /// [`fast::eval`] decides a rule, the interpreter (on the eager conversion, and on the
    /// lazy binding `evaluate` used before the direct evaluator) gives that same boolean.
    /// Every 20th rule is also parsed from its source and loaded as a rules file: its
    /// direct form is the one put together, and on 4 captures the finding of
    /// [`RuleSet::evaluate`] is the interpreter's. 1.1-1.8 s of CPU in a debug build, most
    /// of it in the parser (loading the 1,000 rules files).
    #[test]
    fn random_rules_decided_directly_give_the_interpreters_boolean() {
        let mut generator = RuleGen {
            rng: Rng(0x9e37_79b9_7f4a_7c15),
            literals: HashMap::new(),
        };
        let captures = random_captures(&mut generator.rng, 256);
        let (mut compiled, mut decided, mut loaded, mut unloadable) = (0, [0; 2], 0, 0);
        let mut mismatches = Vec::new();
        let show = |(p, c, i): &Capture| {
            let obj = |m: &Option<Map<String, Value>>| {
                m.as_ref().map_or("(none)".to_owned(), |m| {
                    Value::Object(m.clone()).to_string()
                })
            };
            format!(
                "  proposal: {p}\n  context: {}\n  intent: {}",
                obj(c),
                obj(i)
            )
        };
        // each capture converted once (the conversion is most of an interpreter run)
        let eagers: Vec<Context<'_, '_>> = captures
            .iter()
            .map(|(p, c, i)| eager(p, c.as_ref(), i.as_ref()))
            .collect();
        for n in 0..20_000 {
            let depth = generator.rng.below(4) as u32 + 1;
            let (source, tree) = if n % 2 == 0 {
                generator.typed('b', depth)
            } else {
                generator.expr(depth)
            };
            let direct = fast::compile(&tree);
            // no rules: only for `bind`, with the tree's variables used whole or not
            let unbound = RuleSet {
                file: String::new(),
                rules: Vec::new(),
                intent_fields: None,
                members_only: members_only([&tree]),
            };
            compiled += usize::from(direct.is_some());
            for _ in 0..8 {
                let Some(f) = &direct else { break };
                let k = generator.rng.below(captures.len());
                let capture = &captures[k];
                let (p, c, i) = (&capture.0, capture.1.as_ref(), capture.2.as_ref());
                let vars = fast::Vars {
                    proposal: p,
                    context: c.unwrap_or(empty_object()),
                    intent: i.unwrap_or(empty_object()),
                };
                let Some(b) = fast::eval(f, &vars) else {
                    continue;
                };
                decided[usize::from(b)] += 1;
                let want = cel::Value::resolve(&tree, &eagers[k]);
                let binding = unbound.bind(p, c, i);
                let lazy = cel::Value::resolve(&tree, &binding.context());
                if !matches!(want, Ok(cel::Value::Bool(w)) if w == b)
                    || !matches!(lazy, Ok(cel::Value::Bool(w)) if w == b)
                {
                    mismatches.push(format!(
                        "{source}\n  direct: {b}, interpreter: {want:?}, lazy binding: {lazy:?}\n{}",
                        show(capture)
                    ));
                }
            }
            if n % 20 != 0 {
                continue;
            }
            let Ok(rs) = RuleSet::load(
                "r.rules.toml",
                &format!("[[rule]]\nreason = \"R\"\nrule = {source:?}\nmessage = \"m\"\n"),
            ) else {
                unloadable += 1;
                continue;
            };
            loaded += 1;
            if rs.rules[0].fast != direct {
                mismatches.push(format!(
                    "{source}\n  parsed: {:?}\n  put together: {direct:?}",
                    rs.rules[0].fast
                ));
            }
            for _ in 0..4 {
                let k = generator.rng.below(captures.len());
                let capture = &captures[k];
                let (p, c, i) = (&capture.0, capture.1.as_ref(), capture.2.as_ref());
                let got = rs.evaluate(p, c, i);
                let want = rs.run(&eagers[k], 0.0);
                let equal = match (&got, &want) {
                    (Some(g), Some(w)) => g == w || same_but_map_order(g, w),
                    _ => got == want,
                };
                if !equal {
                    mismatches.push(format!(
                        "{source}\n  finding: {got:?}\n  interpreter's: {want:?}\n{}",
                        show(capture)
                    ));
                }
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} mismatches, the first 20:\n{}",
            mismatches.len(),
            mismatches[..mismatches.len().min(20)].join("\n")
        );
        // the generator reaches what it is for: rules the direct evaluator compiles and
        // decides both ways, and rules that load
        eprintln!(
            "compiled {compiled}, decided false {}, true {}, loaded {loaded}, unloadable {unloadable}",
            decided[0], decided[1]
        );
        assert!(compiled > 8_000, "{compiled}");
        assert!(decided[0] > 5_000 && decided[1] > 5_000, "{decided:?}");
        assert!(loaded > 950, "{loaded}");
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;
    use serde_json::json;

    fn chain(terms: usize) -> String {
        let mut s = vec!["1"; terms].join(" + ");
        s.push_str(&format!(" == {terms}"));
        format!("[[rule]]\nreason = \"R\"\nrule = \"{s}\"\n")
    }

    #[test]
    fn a_rule_nested_too_deep_is_a_contract_error_not_a_crash() {
        let e = RuleSet::load("x.rules.toml", &chain(3000)).unwrap_err();
        assert_eq!(e[0].reason, Reason::CONTRACT_ERROR);
        assert!(
            e[0].message.starts_with(
                "x.rules.toml:3: rule 1 (R): `rule` nests 3001 levels deep, over the limit of 100"
            ),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn a_rule_just_under_the_limit_evaluates_on_a_small_thread_stack() {
        let rs = RuleSet::load("x.rules.toml", &chain(MAX_EXPRESSION_DEPTH - 2)).unwrap();
        // the binary's worker threads have 16 MiB (enough for a debug build)
        let f = std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || rs.evaluate(&json!({}), None, None))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(f, None);
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use serde_json::json;

    fn one(rule: &str) -> RuleSet {
        RuleSet::load(
            "r.rules.toml",
            &format!("[[rule]]\nreason = \"R\"\nrule = {rule:?}\nmessage = \"m\"\n"),
        )
        .unwrap()
    }

    /// An order of `n` items `{sku, name, qty}` with short strings (3000 items: 179 KB).
    fn order(n: usize) -> Value {
        let items: Vec<Value> = (0..n)
            .map(|i| json!({"sku": format!("S{i}"), "name": format!("n{i}"), "qty": i % 7 + 1}))
            .collect();
        json!({"order_id": "o-17", "currency": "EUR", "items": items})
    }

    /// The message of the `RULE_ERROR` of a rule over the bytes budget.
    fn over_bytes(bytes: &str) -> String {
        format!(
            "rule 1 (R) could build a value of up to {bytes} bytes on this capture, over the rule budget of 256 MiB (MAX_RULE_BYTES, docs/verdicts.md#limits); not evaluated, fails closed"
        )
    }

    /// The message of the `RULE_ERROR` of a rule over the steps budget.
    fn over_steps(steps: &str, n: usize) -> String {
        format!(
            "rule 1 (R) could take up to {steps} comprehension steps on this capture ({n} values), over the rule budget of 10,000,000 steps (MAX_RULE_STEPS, docs/verdicts.md#limits); not evaluated, fails closed"
        )
    }

    /// The finding of `rule` on `proposal`: a `RULE_ERROR` gives its message.
    fn error(rule: &str, proposal: &Value) -> String {
        let f = one(rule).evaluate(proposal, None, None).expect(rule);
        assert_eq!(f.reason, Reason::RULE_ERROR, "{rule}: {}", f.message);
        f.message
    }

    fn ones(n: usize) -> String {
        format!("[{}]", vec!["1"; n].join(", "))
    }

    /// Bug 1: an index or a member of a literal was as long as the literal (one item):
    /// three nested maps over the 600 items of `[[1, ...]][0]` built 3.6 GB and ended the
    /// process. Now the part is as long as the literal's size allows.
    #[test]
    fn an_indexed_or_selected_literal_is_refused_not_an_abort() {
        let l = format!("[{}][0]", ones(600));
        let rule = format!("{l}.map(a, {l}.map(b, {l}.map(c, 1))).size() > 0");
        assert_eq!(error(&rule, &json!({})), over_bytes("8.364e10"));
        let l = format!("{{'k': {}}}.k", ones(300));
        let rule = format!("{l}.map(a, {l}.map(b, {l}.map(c, 1))).size() > 0");
        assert_eq!(error(&rule, &json!({})), over_bytes("1.065e10"));
    }

    /// Bug 2: a range that was neither a literal list nor read from the capture counted as
    /// `N` (one, on an empty capture): four nested `all` over `[1, ...100] + []` took 10^8
    /// steps. Now its length is the sum of the literals'.
    #[test]
    fn a_range_built_from_literals_is_refused_not_a_hang() {
        let l = format!("({} + [])", ones(100));
        let rule = format!("{l}.all(a, {l}.all(b, {l}.all(c, {l}.all(d, true))))");
        assert_eq!(error(&rule, &json!({})), over_steps("1.010e8", 1));
        // three nested over the same list: 1,010,100 steps, under the budget, runs
        let rule = format!("{l}.all(a, {l}.all(b, {l}.all(c, true)))");
        assert_eq!(one(&rule).evaluate(&json!({}), None, None), None);
    }

    /// Bug 3: a capture value read in a `.map` body counted as the whole capture per item
    /// (`S²/16`: 1.05e10 bytes on 3000 items); the bound on this capture counts it as the
    /// value it is, so these rules run and give their boolean.
    #[test]
    fn reading_a_capture_value_per_item_is_bounded_by_that_value_on_the_capture() {
        let p = order(3000);
        let vars = fast::Vars {
            proposal: &p,
            context: empty_object(),
            intent: empty_object(),
        };
        let rules = [
            "proposal.items.map(i, proposal.order_id + ':' + i.sku)",
            "proposal.items.map(i, [i.sku, proposal.currency])",
            "proposal['items'].map(i, [i.name, proposal.items[0].sku])",
        ];
        for rule in rules {
            // over the budget without the capture, well under it on the capture
            let r = &one(rule).rules[0];
            let static_bytes = r.estimated_bytes(vars.bytes());
            assert!(static_bytes > MAX_RULE_BYTES, "{rule}: {static_bytes}");
            let (steps, bytes) = r.bounds_on(&vars);
            assert!(bytes < 1e6, "{rule}: {bytes}");
            assert!((3000.0..3100.0).contains(&steps), "{rule}: {steps}");
        }
        // (a map copies its accumulator at each step: a few seconds each in a debug build)
        for rule in &rules[..2] {
            let holds = one(&format!("{rule}.size() == 3000"));
            assert_eq!(holds.evaluate(&p, None, None), None, "{rule}");
        }
        let f = one(&format!("{}.size() > 3000", rules[0]))
            .evaluate(&p, None, None)
            .unwrap();
        assert_eq!((f.reason.as_str(), f.message.as_str()), ("R", "m"));
        // a capture that really is too large for the rule is still refused, with the
        // figures of this capture
        let pairs = "proposal.items.map(i, proposal.items.map(j, i.sku + j.sku)).size() > 0";
        assert_eq!(error(pairs, &p), over_bytes("2.651e9"));
        let pairs = "proposal.items.all(i, proposal.items.all(j, i.sku != j.sku || i == j))";
        assert_eq!(error(pairs, &order(4000)), over_steps("1.600e7", 16004));
    }

    /// What was refused stays refused, on any capture: nine chained maps of eight copies
    /// of a 56-byte string, and `N²` steps over the capture's own items.
    #[test]
    fn the_existing_refusals_hold_on_the_capture() {
        let eight = ".map(x, x + x + x + x + x + x + x + x)";
        let rule = format!("['{}']{}.size() > 0", "a".repeat(56), eight.repeat(9));
        for p in [json!({}), order(3)] {
            assert_eq!(error(&rule, &p), over_bytes("1.488e10"));
        }
    }
}
