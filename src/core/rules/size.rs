//! Upper bounds, taken before a rule runs, on the bytes of the largest value it can build
//! (`docs/verdicts.md#limits`, [`super::MAX_RULE_BYTES`]) and on the comprehension steps it
//! can take ([`super::MAX_RULE_STEPS`]): the cel crate has no run-time limit, and a rule such
//! as nine chained `['aaaa'].map(x, x + x + x + x + x + x + x + x)` builds gigabytes and ends
//! the process on the first capture it runs on, while four nested `all` over a list of 100
//! take 10^8 steps.
//!
//! Values in cel are shared, not copied (a string or list read from a capture, or bound to
//! a comprehension's variable, is the same value), so what makes new bytes is `+` (of two
//! strings, bytes or lists), list and map literals, conversions to a string, and a
//! comprehension's accumulator. The bound of a value's size is a polynomial in `S`, the
//! size of the capture's `proposal`, `context` and `intent` ([`value_bytes`]), plus a
//! multiple of the size of each comprehension variable in scope, so that a comprehension
//! whose body is the variable, or a part of it, builds a list the size of its range (the
//! items' sizes add up to the range's), while one whose body holds it eight times builds
//! eight times its range.
//!
//! The same walk, measuring values instead of bytes ([`Metric::Values`]: one for each value,
//! a polynomial in `N`, the capture's value count), bounds the steps: a comprehension runs
//! its body once per item of its range, and a range's length is bounded whatever the range
//! is: a list literal by its items, `a + b` by the sum, a part of a container (an index, a
//! member, a comprehension variable) by the container's size over one value, a `.map` or
//! `.filter` by its range, a value read from the capture by `N`.
//!
//! Both bounds can also be taken on one capture ([`on_capture`]): a path of static member
//! names and literal indexes rooted at `proposal`, `context` or `intent` then counts as the
//! value it names on that capture (its size and length), not as the whole capture.

use super::fast::Vars;
use cel::common::ast::{Expr, LiteralValue, operators};
use serde_json::{Map, Value};

/// Terms `(k, e)`, each `k · S^e` (`k >= 0`), or `k · N^e` for [`Metric::Values`].
pub(super) type Poly = Vec<(f64, i32)>;

/// The bytes charged for any value on top of its contents (a scalar, a list slot).
const SLOT: f64 = 16.0;

/// What a bound measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    /// Bytes, as [`value_bytes`] counts them: a polynomial in `S`.
    Bytes,
    /// Values, as [`value_count`] counts them (every list, map, scalar, key and item): a
    /// polynomial in `N`. A list or map has at most as many items as it has values, so a
    /// length is bounded by a size, which is what the steps bound needs.
    Values,
}

impl Metric {
    /// What any one value costs on top of its contents; every item of a list or map costs
    /// at least this, so a value's length is at most its size over it.
    fn value(self) -> f64 {
        match self {
            Metric::Bytes => SLOT,
            Metric::Values => 1.0,
        }
    }

    /// What an item's place in a list or map costs on top of the item.
    fn slot(self) -> f64 {
        match self {
            Metric::Bytes => SLOT,
            Metric::Values => 0.0,
        }
    }

    /// What the contents of a string or bytes of `n` bytes cost.
    fn text(self, n: usize) -> f64 {
        match self {
            Metric::Bytes => n as f64,
            Metric::Values => 0.0,
        }
    }

    /// The bound of the size and the length of `proposal`, `context` or `intent` (or a
    /// part of it) without looking at the capture: `S` and `S / 16`; `N + 1` (`N` does not
    /// count the `context` and `intent` objects themselves) and `N`.
    fn input(self) -> (Bound, Bound) {
        match self {
            Metric::Bytes => (Bound::of(vec![(1.0, 1)]), Bound::of(vec![(1.0 / SLOT, 1)])),
            Metric::Values => (
                Bound::of(vec![(1.0, 1), (1.0, 0)]),
                Bound::of(vec![(1.0, 1)]),
            ),
        }
    }

    /// The size of a JSON value of the capture.
    fn of_json(self, v: &Value) -> f64 {
        match self {
            Metric::Bytes => value_bytes(v),
            Metric::Values => value_count(v),
        }
    }

    /// The size of the `context` or `intent` object.
    fn of_object(self, m: &Map<String, Value>) -> f64 {
        match self {
            Metric::Bytes => object_bytes(m),
            Metric::Values => 1.0 + m.values().map(value_count).sum::<f64>(),
        }
    }
}

/// A size (or length, or steps) bound: a polynomial in `S` (or `N`), plus `(variable, p)`:
/// `p` (a polynomial) times the size of the comprehension variable at that place of the
/// scope.
#[derive(Debug, Clone, Default)]
struct Bound {
    poly: Poly,
    vars: Vec<(usize, Poly)>,
}

impl Bound {
    fn of(poly: Poly) -> Bound {
        Bound {
            poly,
            vars: Vec::new(),
        }
    }

    fn constant(k: f64) -> Bound {
        Bound::of(vec![(k, 0)])
    }

    /// `k` times the size of variable `v`.
    fn var(v: usize, k: f64) -> Bound {
        Bound {
            poly: Vec::new(),
            vars: vec![(v, vec![(k, 0)])],
        }
    }

    fn add(mut self, other: Bound) -> Bound {
        self.poly.extend(other.poly);
        self.vars.extend(other.vars);
        self
    }

    /// Term by term the larger (an upper bound of both).
    fn max(self, other: Bound) -> Bound {
        let mut vars = self.vars;
        for (v, k) in other.vars {
            match vars.iter_mut().find(|(w, _)| *w == v) {
                Some((_, j)) => *j = max_poly(j, &k),
                None => vars.push((v, k)),
            }
        }
        Bound {
            poly: max_poly(&self.poly, &other.poly),
            vars,
        }
    }

    /// The coefficient of variable `v`, and the bound without it.
    fn split(mut self, v: usize) -> (Poly, Bound) {
        let mut k = Poly::new();
        for (_, p) in self.vars.iter().filter(|(w, _)| *w == v) {
            k.extend(p.iter().copied());
        }
        normalize(&mut k);
        self.vars.retain(|(w, _)| *w != v);
        (k, self)
    }

    /// Whether it has no variable.
    fn is_poly(&self) -> bool {
        self.vars.is_empty()
    }

    /// Every term times `p` (a polynomial without variables).
    fn times(mut self, p: &Poly) -> Bound {
        self.poly = mul(&self.poly, p);
        for v in &mut self.vars {
            v.1 = mul(&v.1, p);
        }
        self
    }

    fn scaled(self, c: f64) -> Bound {
        self.times(&vec![(c, 0)])
    }
}

/// One comprehension variable (or accumulator): the bound of its size, a polynomial in `S`
/// (the variables of enclosing comprehensions resolved). Its length is at most its size
/// over [`Metric::value`].
struct Var<'e> {
    name: &'e str,
    size: Poly,
}

fn normalize(p: &mut Poly) {
    p.retain(|t| t.0 > 0.0);
    p.sort_by_key(|t| t.1);
    let mut out: Poly = Vec::with_capacity(p.len());
    for &(k, e) in p.iter() {
        match out.last_mut() {
            Some(last) if last.1 == e => last.0 += k,
            _ => out.push((k, e)),
        }
    }
    *p = out;
}

/// Term by term the larger of two bounds.
pub(super) fn max(a: &Poly, b: &Poly) -> Poly {
    max_poly(a, b)
}

fn max_poly(a: &Poly, b: &Poly) -> Poly {
    let (mut a, mut b) = (a.clone(), b.clone());
    normalize(&mut a);
    normalize(&mut b);
    let mut out = a;
    for (k, e) in b {
        match out.iter_mut().find(|t| t.1 == e) {
            Some(t) => t.0 = t.0.max(k),
            None => out.push((k, e)),
        }
    }
    out
}

fn mul(a: &Poly, b: &Poly) -> Poly {
    let mut out = Vec::with_capacity(a.len() * b.len());
    for &(k, e) in a {
        for &(j, f) in b {
            out.push((k * j, e + f));
        }
    }
    normalize(&mut out);
    out
}

/// `b` with every variable replaced by its size bound.
fn resolve(b: &Bound, scope: &[Var<'_>]) -> Poly {
    let mut p = b.poly.clone();
    for (v, k) in &b.vars {
        p.extend(mul(k, &scope[*v].size));
    }
    normalize(&mut p);
    p
}

/// `a · b`: kept in the variables when one side has none, else resolved.
fn product(a: Bound, b: Bound, scope: &[Var<'_>]) -> Bound {
    if a.is_poly() {
        b.times(&a.poly)
    } else if b.is_poly() {
        a.times(&b.poly)
    } else {
        Bound::of(mul(&resolve(&a, scope), &resolve(&b, scope)))
    }
}

/// The value of `p` at `s`.
pub(super) fn at(p: &Poly, s: f64) -> f64 {
    p.iter().map(|(k, e)| k * s.powi(*e)).sum()
}

/// The bound of the largest value the expression builds (every node's, the comprehensions'
/// accumulators included), as a polynomial in `S`.
pub(super) fn largest_value(e: &cel::IdedExpr) -> Poly {
    let mut w = Walk::new(Metric::Bytes, None);
    w.walk(e);
    w.largest
}

/// The bound of the comprehension steps the expression takes (every iteration of every
/// `all`, `exists`, `exists_one`, `map`, `filter`), as a polynomial in `N`.
pub(super) fn steps(e: &cel::IdedExpr) -> Poly {
    let mut w = Walk::new(Metric::Values, None);
    let out = w.walk(e);
    resolve(&out.steps, &[])
}

/// [`largest_value`] and [`steps`] of the expression on one capture: a path of static member
/// names and literal indexes rooted at `proposal`, `context` or `intent` (not a
/// comprehension variable of that name) counts as the value it names there, its size and
/// its length; what is left of `S` and `N` is the rest of the expression (an index that is
/// not a literal, a path that names nothing).
pub(super) fn on_capture(e: &cel::IdedExpr, vars: &Vars<'_>) -> (Poly, Poly) {
    let mut w = Walk::new(Metric::Bytes, Some(vars));
    w.walk(e);
    let bytes = w.largest;
    let mut w = Walk::new(Metric::Values, Some(vars));
    let out = w.walk(e);
    (bytes, resolve(&out.steps, &[]))
}

/// A value's bounds: its size, its length (items, for a list or map) and the steps taken
/// to make it.
struct Out {
    size: Bound,
    len: Bound,
    steps: Bound,
}

/// What a path on a capture names.
#[derive(Clone, Copy)]
enum Actual<'a> {
    Value(&'a Value),
    Object(&'a Map<String, Value>),
}

impl Actual<'_> {
    fn size(self, m: Metric) -> f64 {
        match self {
            Actual::Value(v) => m.of_json(v),
            Actual::Object(o) => m.of_object(o),
        }
    }

    fn len(self) -> f64 {
        match self {
            Actual::Value(Value::Array(a)) => a.len() as f64,
            Actual::Value(Value::Object(o)) | Actual::Object(o) => o.len() as f64,
            Actual::Value(_) => 0.0,
        }
    }

    fn member(self, name: &str) -> Option<Self> {
        match self {
            Actual::Value(Value::Object(o)) | Actual::Object(o) => o.get(name).map(Actual::Value),
            Actual::Value(_) => None,
        }
    }

    fn item(self, i: i64) -> Option<Self> {
        match self {
            Actual::Value(Value::Array(a)) => usize::try_from(i)
                .ok()
                .and_then(|i| a.get(i))
                .map(Actual::Value),
            _ => None,
        }
    }
}

/// One walk of an expression: the metric, the capture (for [`on_capture`]), the
/// comprehension variables in scope and the largest size seen so far.
struct Walk<'e, 'v> {
    metric: Metric,
    vars: Option<&'v Vars<'v>>,
    scope: Vec<Var<'e>>,
    largest: Poly,
}

impl<'e, 'v> Walk<'e, 'v> {
    fn new(metric: Metric, vars: Option<&'v Vars<'v>>) -> Self {
        Walk {
            metric,
            vars,
            scope: Vec::new(),
            largest: Poly::new(),
        }
    }

    /// A value without items (a scalar, a boolean), made in no steps.
    fn scalar(&self) -> Out {
        Out {
            size: Bound::constant(self.metric.value()),
            len: Bound::default(),
            steps: Bound::default(),
        }
    }

    /// The length bound of a value of size `size`.
    fn len_of(&self, size: &Bound) -> Bound {
        size.clone().scaled(1.0 / self.metric.value())
    }

    /// The value `e` names on the capture, when it is a path of static member names and
    /// literal indexes rooted at an unshadowed `proposal`, `context` or `intent` that names
    /// a value there (a missing member is left to the static bound).
    fn actual(&self, e: &cel::IdedExpr) -> Option<Actual<'v>> {
        let vars = self.vars?;
        match &e.expr {
            Expr::Ident(name) if !self.scope.iter().any(|v| v.name == name) => {
                match name.as_str() {
                    "proposal" => Some(Actual::Value(vars.proposal)),
                    "context" => Some(Actual::Object(vars.context)),
                    "intent" => Some(Actual::Object(vars.intent)),
                    _ => None,
                }
            }
            Expr::Select(s) if !s.test => self.actual(&s.operand)?.member(&s.field),
            Expr::Call(c) if c.func_name == operators::INDEX && c.target.is_none() => {
                let [container, index] = c.args.as_slice() else {
                    return None;
                };
                let container = self.actual(container)?;
                match &index.expr {
                    Expr::Literal(LiteralValue::String(s)) => container.member(s.inner()),
                    Expr::Literal(LiteralValue::Int(i)) => container.item(*i.inner()),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The bounds of `e`, each node's size counted into `largest`.
    fn walk(&mut self, e: &'e cel::IdedExpr) -> Out {
        let out = self.node(e);
        self.largest = max_poly(&self.largest, &resolve(&out.size, &self.scope));
        out
    }

    fn node(&mut self, e: &'e cel::IdedExpr) -> Out {
        if let Some(a) = self.actual(e) {
            return Out {
                size: Bound::constant(a.size(self.metric)),
                len: Bound::constant(a.len()),
                steps: Bound::default(),
            };
        }
        let m = self.metric;
        match &e.expr {
            Expr::Literal(l) => {
                let bytes = match l {
                    LiteralValue::String(s) => m.text(s.inner().len()),
                    LiteralValue::Bytes(b) => m.text(b.inner().len()),
                    _ => 0.0,
                };
                Out {
                    size: Bound::constant(bytes + m.value()),
                    ..self.scalar()
                }
            }
            // a variable's items are each at least a value of its size
            Expr::Ident(name) => match self.scope.iter().rposition(|v| v.name == name) {
                Some(i) => Out {
                    size: Bound::var(i, 1.0),
                    len: Bound::var(i, 1.0 / m.value()),
                    steps: Bound::default(),
                },
                None if super::fast::is_variable(name) => {
                    let (size, len) = m.input();
                    Out {
                        size,
                        len,
                        steps: Bound::default(),
                    }
                }
                None => self.scalar(),
            },
            // a part of its operand (its length at most the operand's size over a value),
            // or (`has`) a boolean
            Expr::Select(s) => {
                let got = self.walk(&s.operand);
                if s.test {
                    Out {
                        steps: got.steps,
                        ..self.scalar()
                    }
                } else {
                    Out {
                        len: self.len_of(&got.size),
                        ..got
                    }
                }
            }
            Expr::List(l) => {
                let mut size = Bound::constant(m.value());
                let mut steps = Bound::default();
                for item in &l.elements {
                    let got = self.walk(item);
                    size = size.add(got.size).add(Bound::constant(m.slot()));
                    steps = steps.add(got.steps);
                }
                Out {
                    size,
                    len: Bound::constant(l.elements.len() as f64),
                    steps,
                }
            }
            Expr::Map(_) | Expr::Struct(_) => {
                let mut size = Bound::constant(m.value());
                let mut steps = Bound::default();
                let mut n = 0.0;
                for child in super::children(e) {
                    let got = self.walk(child);
                    size = size.add(got.size).add(Bound::constant(m.slot()));
                    steps = steps.add(got.steps);
                    n += 1.0;
                }
                Out {
                    size,
                    len: Bound::constant(n),
                    steps,
                }
            }
            Expr::Call(c) => {
                let mut args: Vec<Out> = Vec::new();
                for a in c.target.as_deref().into_iter().chain(c.args.iter()) {
                    args.push(self.walk(a));
                }
                let steps = args
                    .iter()
                    .fold(Bound::default(), |s, a| s.add(a.steps.clone()));
                let (size, len) = match (c.func_name.as_str(), args.len()) {
                    (operators::ADD, 2) => {
                        let b = args.pop().expect("two");
                        let a = args.pop().expect("two");
                        (a.size.add(b.size), a.len.add(b.len))
                    }
                    // a part of the container: its length at most the container's size
                    // over a value (`[[1, 1, 1]][0]` has three items, not one)
                    (operators::INDEX, 2) => {
                        let a = args.swap_remove(0);
                        let len = self.len_of(&a.size);
                        (a.size, len)
                    }
                    (operators::CONDITIONAL, 3) => {
                        let c = args.pop().expect("three");
                        let b = args.pop().expect("three");
                        (b.size.max(c.size), b.len.max(c.len))
                    }
                    // the value itself
                    ("dyn", 1) => {
                        let a = args.swap_remove(0);
                        (a.size, a.len)
                    }
                    // its text (a number's is short): a new string, one value
                    ("string", 1) => {
                        let a = args.swap_remove(0);
                        let size = match m {
                            Metric::Bytes => a.size.add(Bound::constant(32.0)),
                            Metric::Values => Bound::constant(m.value()),
                        };
                        (size, Bound::default())
                    }
                    // comparisons, logic, arithmetic, `size`, `matches`, `contains`, `int`,
                    // `timestamp`...: a scalar
                    (
                        operators::EQUALS
                        | operators::NOT_EQUALS
                        | operators::LESS
                        | operators::LESS_EQUALS
                        | operators::GREATER
                        | operators::GREATER_EQUALS
                        | operators::LOGICAL_AND
                        | operators::LOGICAL_OR
                        | operators::LOGICAL_NOT
                        | operators::NOT_STRICTLY_FALSE
                        | operators::IN
                        | operators::SUBSTRACT
                        | operators::MULTIPLY
                        | operators::DIVIDE
                        | operators::MODULO
                        | operators::NEGATE
                        | "size"
                        | "matches"
                        | "contains"
                        | "startsWith"
                        | "endsWith"
                        | "int"
                        | "uint"
                        | "double"
                        | "bool"
                        | "type"
                        | "timestamp"
                        | "duration",
                        _,
                    ) => {
                        let s = self.scalar();
                        (s.size, s.len)
                    }
                    // anything else (`optional.of(x).value()`, `m.?k`...): as large as all
                    // its arguments together, and more; its length at most that over a
                    // value
                    _ => {
                        let mut size = Bound::constant(2.0 * m.value());
                        for a in args {
                            size = size.add(a.size);
                        }
                        let len = self.len_of(&size);
                        (size, len)
                    }
                };
                Out { size, len, steps }
            }
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Unspecified => self.scalar(),
        }
    }

    fn comprehension(&mut self, c: &'e cel::common::ast::ComprehensionExpr) -> Out {
        let range = self.walk(&c.iter_range);
        let init = self.walk(&c.accu_init);
        // the variables: an item (or key, value) is at most the range
        let depth = self.scope.len();
        let range_size = resolve(&range.size, &self.scope);
        for name in std::iter::once(&c.iter_var).chain(c.iter_var2.as_ref()) {
            self.scope.push(Var {
                name,
                size: range_size.clone(),
            });
        }
        let items: Vec<usize> = (depth..self.scope.len()).collect();
        // one step adds to the accumulator what the step makes beside it (a macro's step
        // reads the accumulator only to add to it, and never iterates over it)
        let accu = self.scope.len();
        self.scope.push(Var {
            name: &c.accu_var,
            size: Poly::new(),
        });
        let step = self.walk(&c.loop_step);
        self.scope.pop();
        // over every step: the part that is an item's size adds up to the range's size; the
        // rest comes once per item. Each step is one step more than its body takes.
        let over_items = |b: Bound, scope: &[Var<'_>]| {
            let mut rest = b.split(accu).1;
            let mut of_items = Poly::new();
            for &v in &items {
                let (k, r) = rest.split(v);
                of_items.extend(k);
                rest = r;
            }
            normalize(&mut of_items);
            product(range.len.clone(), rest, scope).add(range.size.clone().times(&of_items))
        };
        let accumulated = init.size.add(over_items(step.size, &self.scope));
        let accumulated_len = init.len.add(over_items(step.len, &self.scope));
        let iterations = over_items(step.steps.add(Bound::constant(1.0)), &self.scope);
        self.scope.truncate(depth);
        self.largest = max_poly(&self.largest, &resolve(&accumulated, &self.scope));
        // the result, and the condition, read the accumulator as it ends
        self.scope.push(Var {
            name: &c.accu_var,
            size: resolve(&accumulated, &self.scope),
        });
        let cond = self.walk(&c.loop_cond);
        let result = self.walk(&c.result);
        let resolved = |b: &Bound| Bound::of(resolve(b, &self.scope));
        let steps = range
            .steps
            .add(init.steps)
            .add(iterations)
            .add(product(
                range.len.clone(),
                resolved(&cond.steps),
                &self.scope,
            ))
            .add(resolved(&result.steps));
        // a result that is the accumulator keeps its variables (it is not resolved)
        let out = match &c.result.expr {
            Expr::Ident(n) if *n == c.accu_var => Out {
                size: accumulated,
                len: accumulated_len,
                steps,
            },
            _ => Out {
                size: resolved(&result.size),
                len: resolved(&result.len),
                steps,
            },
        };
        self.scope.truncate(depth);
        out
    }
}

impl Vars<'_> {
    /// `N`, the capture's value count: [`value_count`] of `proposal` and of each member of
    /// `context` and `intent`.
    pub(super) fn values(&self) -> f64 {
        value_count(self.proposal)
            + self.context.values().map(value_count).sum::<f64>()
            + self.intent.values().map(value_count).sum::<f64>()
    }

    /// `S`, the capture's size: [`value_bytes`] of `proposal`, and [`object_bytes`] of
    /// `context` and `intent`.
    pub(super) fn bytes(&self) -> f64 {
        value_bytes(self.proposal) + object_bytes(self.context) + object_bytes(self.intent)
    }
}

/// The `S` of a capture's values (see the module docs): every value's contents (a string's
/// bytes) and [`SLOT`] bytes for each value, member and item.
pub(super) fn value_bytes(v: &Value) -> f64 {
    let mut n = 0.0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += SLOT;
        match v {
            Value::String(s) => n += s.len() as f64,
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => {
                for (k, v) in m {
                    n += SLOT + k.len() as f64;
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    n
}

/// [`value_bytes`] of the `context` or `intent` object: its members and itself.
pub(super) fn object_bytes(m: &Map<String, Value>) -> f64 {
    SLOT + m
        .iter()
        .map(|(k, v)| SLOT + k.len() as f64 + value_bytes(v))
        .sum::<f64>()
}

/// The number of values of a JSON value: itself, and every member and item, recursively.
pub(super) fn value_count(v: &Value) -> f64 {
    let mut n = 0.0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += 1.0;
        match v {
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(src: &str, s: f64) -> f64 {
        let p = cel::Program::compile(src).unwrap();
        at(&largest_value(p.expression()), s)
    }

    /// The bytes of a cel value as this module counts them (contents and a slot each).
    fn bytes(v: &cel::Value) -> f64 {
        SLOT + match v {
            cel::Value::String(s) => s.len() as f64,
            cel::Value::List(l) => l.iter().map(|v| bytes(v) + SLOT).sum(),
            _ => 0.0,
        }
    }

    /// The bound is at least the size of what the expression gives, on expressions that
    /// build with `+`, literals and comprehensions, over a capture and without one.
    #[test]
    fn the_bound_holds_what_the_rule_builds() {
        let capture = serde_json::json!({"items": [{"name": "abc", "tags": ["x", "yy"]},
            {"name": "defgh", "tags": []}, {"name": "i", "tags": ["zzz"]}], "s": "hello"});
        let s = value_bytes(&capture);
        let mut ctx = cel::Context::default();
        ctx.add_variable_as_val("proposal", super::super::to_val(&capture));
        for src in [
            "proposal.s + proposal.s",
            "proposal.items.map(i, i.name)",
            "proposal.items.map(i, i.name + i.name + '!')",
            "proposal.items.map(i, i.tags.map(t, t + t))",
            "proposal.items.map(i, proposal.items.map(j, i.name + j.name))",
            "proposal.items.filter(i, i.name != 'i').map(i, [i.name, i.tags])",
            "['ab', 'cd'].map(x, x + x).map(y, y + y + y)",
            "['aaaa'].map(x, x + x + x + x + x + x + x + x).map(x, x + x + x + x + x + x + x + x)",
            "[1, 2, 3].map(x, [x, x, x])",
            "proposal.items.map(i, i.tags).map(t, t + t)",
            "[['ab', 'c', 'd'], ['e']][0].map(x, [x, x])",
            "{'k': ['ab', 'cd']}.k.map(x, x + x)",
            "(['a', 'b'] + ['c']).map(x, [x])",
            "proposal['items'][1].tags.map(t, t + t)",
        ] {
            let got = cel::Program::compile(src).unwrap().execute(&ctx).unwrap();
            let b = bound(src, s);
            assert!(b >= bytes(&got), "{src}: bound {b} < {}", bytes(&got));
        }
    }

    /// Growth that compounds is caught: `k` chained maps of eight copies of a string of 56
    /// bytes build `56 · 8^k` bytes (at 9, 7.5 GB), and the bound follows it; a chain that
    /// copies nothing stays linear in the capture.
    #[test]
    fn compounding_concatenation_is_over_the_budget_and_copying_is_linear() {
        let eight = ".map(x, x + x + x + x + x + x + x + x)";
        let chained = |k: usize| format!("['{}']{}.size() > 0", "a".repeat(56), eight.repeat(k));
        for k in 1..=9 {
            let b = bound(&chained(k), 0.0);
            let real = 56.0 * 8f64.powi(k as i32);
            assert!(b >= real && b < 50.0 * real, "{k}: {b} against {real}");
        }
        assert!(bound(&chained(9), 0.0) > super::super::MAX_RULE_BYTES);
        assert!(bound(&chained(6), 0.0) < super::super::MAX_RULE_BYTES);
        let copying =
            "proposal.items.map(i, i.name).map(n, n).filter(n, n != '').map(n, [n]).size() > 0";
        let p = cel::Program::compile(copying).unwrap();
        let poly = largest_value(p.expression());
        assert!(
            poly.iter().all(|&(k, e)| e == 0 || (e == 1 && k <= 16.0)),
            "{poly:?}"
        );
    }

    fn steps_at(src: &str, n: f64) -> f64 {
        let p = cel::Program::compile(src).unwrap();
        at(&steps(p.expression()), n)
    }

    fn ones(n: usize) -> String {
        format!("[{}]", vec!["1"; n].join(", "))
    }

    /// An index or a member of a literal is as long as the literal's size allows, not one
    /// item (the outer list's length): three nested maps over `[[1 (600)]][0]` build 3.6 GB
    /// (a bound over the budget), and take 600 + 600² + 600³ steps (a bound at least that).
    #[test]
    fn a_part_of_a_literal_is_as_long_as_the_literal_allows() {
        for l in [
            format!("[{}][0]", ones(600)),
            format!("{{'k': {}}}.k", ones(600)),
        ] {
            let rule = format!("{l}.map(a, {l}.map(b, {l}.map(c, 1))).size() > 0");
            assert!(bound(&rule, 0.0) > super::super::MAX_RULE_BYTES, "{rule}");
            let real = 600.0 + 600f64.powi(2) + 600f64.powi(3);
            let b = steps_at(&rule, 0.0);
            assert!(b >= real && b < 10.0 * real, "{b} against {real}");
        }
    }

    /// Every kind of range is bounded by its length, not by `N`: `+` of literals, an index,
    /// a member, a `.map`, a literal list of capture values; reading the capture's own
    /// items' parts stays linear, and a pair of loops over the capture quadratic.
    #[test]
    fn the_steps_bound_holds_every_kind_of_range() {
        let ten = ones(10);
        // two nested `all` over a range of `len` items that costs `make` steps to build
        for (l, len, make) in [
            (format!("({ten} + {ten})"), 20.0, 0.0),
            (format!("[{ten}][0]"), 10.0, 0.0),
            (format!("{{'k': {ten}}}.k"), 10.0, 0.0),
            (format!("{ten}.map(x, x)"), 10.0, 10.0),
            (format!("{ten}.filter(x, x > 0)"), 10.0, 10.0),
            (format!("dyn({ten})"), 10.0, 0.0),
        ] {
            let rule = format!("{l}.all(a, {l}.all(b, true))");
            let real = make + len * (1.0 + make + len);
            let b = steps_at(&rule, 0.0);
            assert!(b >= real && b < 20.0 * real, "{rule}: {b} against {real}");
        }
        let l = format!("({} + [])", ones(100));
        let four = format!("{l}.all(a, {l}.all(b, {l}.all(c, {l}.all(d, true))))");
        assert!(steps_at(&four, 1.0) > 1e8);
        // a list of two capture values: each item is up to N long
        let b = steps_at(
            "[proposal.items, proposal.items].all(l, l.all(x, true))",
            1e6,
        );
        assert!(b >= 2.0 + 2e6, "{b}");
        for (src, degree) in [
            ("proposal.items.all(i, i.tags.all(t, t != ''))", 1),
            ("proposal.items.map(i, i.tags).all(t, t.size() > 0)", 1),
            ("proposal.items.all(a, proposal.items.exists(b, a == b))", 2),
            ("[1, 2, 3].all(x, x > 0)", 0),
        ] {
            let p = cel::Program::compile(src).unwrap();
            let got = steps(p.expression());
            assert_eq!(
                got.iter().map(|t| t.1).max(),
                Some(degree),
                "{src}: {got:?}"
            );
        }
    }
}
