//! An upper bound, taken before a rule runs, on the bytes of the largest value it can build
//! (`docs/verdicts.md#limits`, [`super::MAX_RULE_BYTES`]): the cel crate has no run-time
//! limit, and a rule such as nine chained `['aaaa'].map(x, x + x + x + x + x + x + x + x)`
//! builds gigabytes and ends the process on the first capture it runs on.
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

use cel::common::ast::{Expr, LiteralValue, operators};
use serde_json::Value;

/// Terms `(k, e)`, each `k · S^e` (`k >= 0`).
pub(super) type Poly = Vec<(f64, i32)>;

/// The bytes charged for any value on top of its contents (a scalar, a list slot).
const SLOT: f64 = 16.0;

/// A size bound: a polynomial in `S`, plus `(variable, k)`: `k` times the size of the
/// comprehension variable at that place of the scope.
#[derive(Debug, Clone, Default)]
struct Bound {
    poly: Poly,
    vars: Vec<(usize, f64)>,
}

impl Bound {
    fn constant(k: f64) -> Bound {
        Bound {
            poly: vec![(k, 0)],
            vars: Vec::new(),
        }
    }

    fn input() -> Bound {
        Bound {
            poly: vec![(1.0, 1)],
            vars: Vec::new(),
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
                Some((_, j)) => *j = j.max(k),
                None => vars.push((v, k)),
            }
        }
        Bound {
            poly: max_poly(&self.poly, &other.poly),
            vars,
        }
    }

    /// The coefficient of variable `v`, and the bound without it.
    fn split(mut self, v: usize) -> (f64, Bound) {
        let k = self
            .vars
            .iter()
            .filter(|(w, _)| *w == v)
            .map(|(_, k)| k)
            .sum();
        self.vars.retain(|(w, _)| *w != v);
        (k, self)
    }
}

/// One comprehension variable (or accumulator): the bound of its size, a polynomial in `S`
/// (the variables of enclosing comprehensions resolved). Its length is at most its size
/// over [`SLOT`].
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
    for &(v, k) in &b.vars {
        p.extend(scope[v].size.iter().map(|&(j, e)| (k * j, e)));
    }
    normalize(&mut p);
    p
}

impl Bound {
    /// The constant it is, when it is one (no `S`, no variable).
    fn as_constant(&self) -> Option<f64> {
        (self.vars.is_empty() && self.poly.iter().all(|t| t.1 == 0))
            .then(|| self.poly.iter().map(|t| t.0).sum())
    }

    fn scaled(mut self, c: f64) -> Bound {
        for t in &mut self.poly {
            t.0 *= c;
        }
        for v in &mut self.vars {
            v.1 *= c;
        }
        self
    }
}

/// `a · b`: kept in the variables when one side is a constant, else resolved.
fn product(a: Bound, b: Bound, scope: &[Var<'_>]) -> Bound {
    match (a.as_constant(), b.as_constant()) {
        (Some(c), _) => b.scaled(c),
        (_, Some(c)) => a.scaled(c),
        _ => Bound {
            poly: mul(&resolve(&a, scope), &resolve(&b, scope)),
            vars: Vec::new(),
        },
    }
}

/// The value of `p` at `s`.
pub(super) fn at(p: &Poly, s: f64) -> f64 {
    p.iter().map(|(k, e)| k * s.powi(*e)).sum()
}

/// The bound of the largest value the expression builds (every node's, the comprehensions'
/// accumulators included), as a polynomial in `S`.
pub(super) fn largest_value(e: &cel::IdedExpr) -> Poly {
    let mut largest = Poly::new();
    walk(e, &mut Vec::new(), &mut largest);
    largest
}

/// A value's size and length (items, for a list or map) bounds.
type Sized = (Bound, Bound);

/// The size and length bounds of `e`, each node's size counted into `largest`.
fn walk<'e>(e: &'e cel::IdedExpr, scope: &mut Vec<Var<'e>>, largest: &mut Poly) -> Sized {
    let (size, len) = node(e, scope, largest);
    *largest = max_poly(largest, &resolve(&size, scope));
    (size, len)
}

fn node<'e>(e: &'e cel::IdedExpr, scope: &mut Vec<Var<'e>>, largest: &mut Poly) -> Sized {
    let scalar = || (Bound::constant(SLOT), Bound::default());
    match &e.expr {
        Expr::Literal(l) => {
            let bytes = match l {
                LiteralValue::String(s) => s.inner().len(),
                LiteralValue::Bytes(b) => b.inner().len(),
                _ => 0,
            };
            (Bound::constant(bytes as f64 + SLOT), Bound::default())
        }
        // a variable's items are each at least a slot of its size
        Expr::Ident(name) => match scope.iter().rposition(|v| v.name == name) {
            Some(i) => (
                Bound {
                    poly: Vec::new(),
                    vars: vec![(i, 1.0)],
                },
                Bound {
                    poly: Vec::new(),
                    vars: vec![(i, 1.0 / SLOT)],
                },
            ),
            None if super::fast::is_variable(name) => {
                (Bound::input(), Bound::input().scaled(1.0 / SLOT))
            }
            None => scalar(),
        },
        // a part of its operand, or (`has`) a boolean
        Expr::Select(s) => {
            let got = walk(&s.operand, scope, largest);
            if s.test { scalar() } else { got }
        }
        Expr::List(l) => {
            let mut size = Bound::constant(SLOT);
            for item in &l.elements {
                size = size
                    .add(walk(item, scope, largest).0)
                    .add(Bound::constant(SLOT));
            }
            (size, Bound::constant(l.elements.len() as f64))
        }
        Expr::Map(_) | Expr::Struct(_) => {
            let mut size = Bound::constant(SLOT);
            let mut n = 0.0;
            for child in super::children(e) {
                size = size
                    .add(walk(child, scope, largest).0)
                    .add(Bound::constant(SLOT));
                n += 1.0;
            }
            (size, Bound::constant(n))
        }
        Expr::Call(c) => {
            let mut args: Vec<Sized> = Vec::new();
            for a in c.target.as_deref().into_iter().chain(c.args.iter()) {
                args.push(walk(a, scope, largest));
            }
            match (c.func_name.as_str(), args.len()) {
                (operators::ADD, 2) => {
                    let (b, bl) = args.pop().expect("two");
                    let (a, al) = args.pop().expect("two");
                    (a.add(b), al.add(bl))
                }
                // a part of the container
                (operators::INDEX, 2) => args.swap_remove(0),
                (operators::CONDITIONAL, 3) => {
                    let (c, cl) = args.pop().expect("three");
                    let (b, bl) = args.pop().expect("three");
                    (b.max(c), bl.max(cl))
                }
                // the value itself, or its text (a number's is short)
                ("dyn", 1) => args.swap_remove(0),
                ("string", 1) => {
                    let (a, _) = args.swap_remove(0);
                    (a.add(Bound::constant(32.0)), Bound::default())
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
                ) => scalar(),
                // anything else: as large as all its arguments together, and more
                _ => {
                    let mut size = Bound::constant(32.0);
                    let mut len = Bound::default();
                    for (a, l) in args {
                        size = size.add(a);
                        len = len.add(l);
                    }
                    (size, len)
                }
            }
        }
        Expr::Comprehension(c) => {
            let (range, range_len) = walk(&c.iter_range, scope, largest);
            let (init, init_len) = walk(&c.accu_init, scope, largest);
            // the variables: an item (or key, value) is at most the range
            let depth = scope.len();
            let range_size = resolve(&range, scope);
            for name in std::iter::once(&c.iter_var).chain(c.iter_var2.as_ref()) {
                scope.push(Var {
                    name,
                    size: range_size.clone(),
                });
            }
            let items: Vec<usize> = (depth..scope.len()).collect();
            // one step adds to the accumulator what the step makes beside it
            let accu = scope.len();
            scope.push(Var {
                name: &c.accu_var,
                size: Poly::new(),
            });
            let (step, step_len) = walk(&c.loop_step, scope, largest);
            scope.pop();
            let (step, step_len) = (step.split(accu).1, step_len.split(accu).1);
            // over every step: the part that is an item's size adds up to the range's
            // size; the rest comes once per item
            let mut per_item = step;
            let mut of_items = 0.0;
            for &v in &items {
                let (k, rest) = per_item.split(v);
                of_items += k;
                per_item = rest;
            }
            let mut per_item_len = step_len;
            let mut len_of_items = 0.0;
            for &v in &items {
                let (k, rest) = per_item_len.split(v);
                len_of_items += k;
                per_item_len = rest;
            }
            scope.truncate(depth);
            let accumulated = init
                .add(product(range_len.clone(), per_item, scope))
                .add(range.clone().scaled(of_items));
            let accumulated_len = init_len
                .add(product(range_len, per_item_len, scope))
                .add(range.clone().scaled(len_of_items));
            *largest = max_poly(largest, &resolve(&accumulated, scope));
            // the result, and the condition, read the accumulator as it ends
            scope.push(Var {
                name: &c.accu_var,
                size: resolve(&accumulated, scope),
            });
            walk(&c.loop_cond, scope, largest);
            let (result, result_len) = walk(&c.result, scope, largest);
            // a result that is the accumulator keeps its variables (it is not resolved)
            let out = match &c.result.expr {
                Expr::Ident(n) if *n == c.accu_var => (accumulated, accumulated_len),
                _ => (
                    Bound {
                        poly: resolve(&result, scope),
                        vars: Vec::new(),
                    },
                    Bound {
                        poly: resolve(&result_len, scope),
                        vars: Vec::new(),
                    },
                ),
            };
            scope.truncate(depth);
            out
        }
        Expr::Unspecified => scalar(),
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
}
