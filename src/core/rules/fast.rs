//! A direct evaluator for the rules most contracts write: comparisons of members of
//! `proposal`, `context` and `intent` with each other and with literals, `has()`, `in` a list,
//! integer `+` and `-`, and `&&`, `||`, `!` and `?:` over those. It reads the capture's JSON
//! where it lies (no CEL context, no conversion of a member to a CEL value), and gives a
//! rule's boolean only where the cel interpreter gives that same boolean: on anything else (a
//! missing member, a member of a non-object, a value of another kind than the ones below, an
//! integer overflow, a non-boolean result) it gives no answer, and the rule runs in the cel
//! interpreter as every rule did before, which then gives the value, or the error, it always
//! gave ([`super::RuleSet::evaluate`]).
//!
//! What it answers, as the cel crate (0.15) does: `==`/`!=` between two JSON integers that fit
//! `i64` (CEL `int`), two strings, two booleans, or `null` and `null`; between two values of
//! different kinds among those, `false` (`!=`: `true`: cel's `equals` of an `int` and a
//! string, a `null` and an `int`...); `<`, `<=`, `>`, `>=` between two `int`s; `+` and `-` of
//! two `int`s that do not overflow; a string `in` a list whose items are strings, numbers,
//! booleans or `null`; `has(x.f)` on an object `x`; `&&` and `||` with cel's short cut (a
//! `false` left side of `&&` is `false` whatever the right side is). Any other double, `uint`,
//! list or map value, and every other operator and function, is left to the interpreter.
//! The test `binding_tests::every_expression_gives_what_the_eager_binding_gives` holds the
//! two to the same findings on every rule it lists.

use cel::common::ast::{Expr, LiteralValue, operators};
use serde_json::{Map, Value};

/// A rule compiled for [`eval`]: only made when every part of the rule is one this
/// evaluator knows ([`compile`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fast {
    /// A literal.
    Lit(Lit),
    /// A member chain rooted at a variable: `context.order.paid_minor` is
    /// `(1, ["order", "paid_minor"])`; the variable alone has no fields.
    Path(usize, Vec<String>),
    /// `has(path.field)`: the object at the path has the member.
    Has(usize, Vec<String>, String),
    /// A binary operator.
    Bin(Op, Box<Fast>, Box<Fast>),
    /// `!x`.
    Not(Box<Fast>),
    /// `c ? a : b`.
    Cond(Box<Fast>, Box<Fast>, Box<Fast>),
}

/// A literal the evaluator handles.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
}

/// The binary operators the evaluator handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    In,
}

/// The variables, in the order [`eval`] takes them.
const VARIABLES: [&str; 3] = ["proposal", "context", "intent"];

/// Whether `name` is one of the three variables of a capture.
pub(super) fn is_variable(name: &str) -> bool {
    VARIABLES.contains(&name)
}

/// The rule `e` for [`eval`], or `None` when any part of it is one the evaluator does not
/// handle (then the rule always runs in the interpreter).
pub(super) fn compile(e: &cel::IdedExpr) -> Option<Fast> {
    Some(match &e.expr {
        Expr::Literal(l) => Fast::Lit(match l {
            LiteralValue::Null => Lit::Null,
            LiteralValue::Boolean(b) => Lit::Bool(*b.inner()),
            LiteralValue::Int(i) => Lit::Int(*i.inner()),
            LiteralValue::String(s) => Lit::Str(s.inner().to_owned()),
            _ => return None,
        }),
        Expr::Ident(_) => {
            let (var, fields) = path(e)?;
            Fast::Path(var, fields)
        }
        Expr::Select(s) if s.test => {
            let (var, fields) = path(&s.operand)?;
            Fast::Has(var, fields, plain(&s.field)?)
        }
        Expr::Select(_) => {
            let (var, fields) = path(e)?;
            Fast::Path(var, fields)
        }
        Expr::Call(c) if c.target.is_none() => {
            let arg = |i: usize| compile(&c.args[i]).map(Box::new);
            match (c.func_name.as_str(), c.args.len()) {
                (operators::LOGICAL_NOT, 1) => Fast::Not(arg(0)?),
                (operators::CONDITIONAL, 3) => Fast::Cond(arg(0)?, arg(1)?, arg(2)?),
                (name, 2) => {
                    let op = match name {
                        operators::LOGICAL_AND => Op::And,
                        operators::LOGICAL_OR => Op::Or,
                        operators::EQUALS => Op::Eq,
                        operators::NOT_EQUALS => Op::Ne,
                        operators::LESS => Op::Lt,
                        operators::LESS_EQUALS => Op::Le,
                        operators::GREATER => Op::Gt,
                        operators::GREATER_EQUALS => Op::Ge,
                        operators::ADD => Op::Add,
                        operators::SUBSTRACT => Op::Sub,
                        operators::IN => Op::In,
                        _ => return None,
                    };
                    Fast::Bin(op, arg(0)?, arg(1)?)
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A member name that is an identifier (no dot: the binding walks names by their dots).
fn plain(field: &str) -> Option<String> {
    (!field.is_empty() && !field.contains('.')).then(|| field.to_owned())
}

/// `proposal.a.b` as `(0, ["a", "b"])`: a chain of member selections on one of the three
/// variables.
fn path(e: &cel::IdedExpr) -> Option<(usize, Vec<String>)> {
    let mut fields = Vec::new();
    let mut cur = e;
    loop {
        match &cur.expr {
            Expr::Select(s) if !s.test => {
                fields.push(plain(&s.field)?);
                cur = &s.operand;
            }
            Expr::Ident(name) => {
                let var = VARIABLES.iter().position(|v| v == name)?;
                fields.reverse();
                return Some((var, fields));
            }
            _ => return None,
        }
    }
}

/// A value during evaluation: the kinds the evaluator computes with, a number that is not
/// an `int` (a double or `uint`), and any other JSON value (a list or a map), which only a
/// few operators accept.
#[derive(Clone, Copy)]
pub(crate) enum V<'a, D> {
    Null,
    Bool(bool),
    Int(i64),
    Str(&'a str),
    /// A number that is no `int`.
    Num,
    Other(D),
}

/// A JSON value the evaluator reads where it lies: `serde_json`'s ([`Json`]) or a record's
/// tape (`core::stage::tape`). Each gives what the other gives for the same JSON, or a
/// value no operator here decides on ([`V::Other`]), which sends the rule to the
/// interpreter.
pub(crate) trait Doc<'a>: Copy {
    /// The elements of an array.
    type Items: Iterator<Item = Self>;
    /// The value as the evaluator computes with it.
    fn view(self) -> V<'a, Self>;
    /// Whether this object has member `name`; `None`: not an object.
    fn has(self, name: &str) -> Option<bool>;
    /// Member `name` of this object; `None`: not an object, or no such member.
    fn member(self, name: &str) -> Option<Self>;
    /// The elements; `None`: not an array.
    fn items(self) -> Option<Self::Items>;
}

/// A `serde_json` value, or an object as its map (`context`, `intent`).
#[derive(Clone, Copy)]
pub(crate) enum Json<'a> {
    Value(&'a Value),
    Map(&'a Map<String, Value>),
}

impl<'a> Doc<'a> for Json<'a> {
    type Items = std::iter::Map<std::slice::Iter<'a, Value>, fn(&'a Value) -> Json<'a>>;

    fn view(self) -> V<'a, Self> {
        match self {
            Json::Value(v) => match v {
                Value::Null => V::Null,
                Value::Bool(b) => V::Bool(*b),
                Value::Number(n) => n.as_i64().map_or(V::Num, V::Int),
                Value::String(s) => V::Str(s),
                _ => V::Other(self),
            },
            Json::Map(_) => V::Other(self),
        }
    }

    fn has(self, name: &str) -> Option<bool> {
        match self {
            Json::Value(Value::Object(m)) | Json::Map(m) => Some(m.contains_key(name)),
            Json::Value(_) => None,
        }
    }

    fn member(self, name: &str) -> Option<Self> {
        match self {
            Json::Value(Value::Object(m)) | Json::Map(m) => m.get(name).map(Json::Value),
            Json::Value(_) => None,
        }
    }

    fn items(self) -> Option<Self::Items> {
        match self {
            Json::Value(Value::Array(a)) => {
                Some(a.iter().map(Json::Value as fn(&'a Value) -> Json<'a>))
            }
            _ => None,
        }
    }
}

/// The three variables of one capture: `proposal` (any JSON), `context` and `intent`
/// (objects; a missing one is empty).
pub(super) struct Vars<'a> {
    pub(super) proposal: &'a Value,
    pub(super) context: &'a Map<String, Value>,
    pub(super) intent: &'a Map<String, Value>,
}

/// Where the evaluator finds the three variables of one capture.
pub(crate) trait Env<'a> {
    /// What the variables are held as.
    type D: Doc<'a>;
    /// The JSON at `fields` under variable `var`, when every step is an object that has
    /// the member.
    fn at(&self, var: usize, fields: &[String]) -> Option<Root<Self::D>>;
}

impl<'a> Env<'a> for Vars<'a> {
    type D = Json<'a>;

    fn at(&self, var: usize, fields: &[String]) -> Option<Root<Json<'a>>> {
        let mut obj = match var {
            0 => match self.proposal {
                Value::Object(m) if !fields.is_empty() => m,
                v => return fields.is_empty().then_some(Root::Value(Json::Value(v))),
            },
            1 => self.context,
            _ => self.intent,
        };
        let Some((last, init)) = fields.split_last() else {
            return Some(Root::Object(Json::Map(obj)));
        };
        for f in init {
            obj = obj.get(f.as_str())?.as_object()?;
        }
        obj.get(last.as_str()).map(|v| Root::Value(Json::Value(v)))
    }
}

/// The variables as any [`Doc`] holds them: `proposal`, and `context` and `intent`
/// as objects (a missing one as an empty object).
pub(crate) struct DocVars<D> {
    pub(crate) proposal: D,
    pub(crate) context: D,
    pub(crate) intent: D,
}

impl<'a, D: Doc<'a>> Env<'a> for DocVars<D> {
    type D = D;

    fn at(&self, var: usize, fields: &[String]) -> Option<Root<D>> {
        let root = match var {
            0 => {
                if fields.is_empty() {
                    return Some(Root::Value(self.proposal));
                }
                self.proposal
            }
            1 => self.context,
            _ => self.intent,
        };
        let Some((last, init)) = fields.split_last() else {
            return Some(Root::Object(root));
        };
        // `member` is `None` on anything but an object, so every step is one
        let mut obj = root;
        for f in init {
            obj = obj.member(f)?;
        }
        obj.member(last).map(Root::Value)
    }
}

/// What a path names: a JSON value, or the `context` / `intent` object itself.
pub(crate) enum Root<D> {
    Value(D),
    Object(D),
}

/// The rule's boolean on these variables, when it is the one the interpreter gives; `None`
/// when the rule must run in the interpreter.
pub(crate) fn eval<'a, E: Env<'a>>(rule: &'a Fast, vars: &E) -> Option<bool> {
    match value(rule, vars)? {
        V::Bool(b) => Some(b),
        _ => None,
    }
}

fn value<'a, E: Env<'a>>(e: &'a Fast, vars: &E) -> Option<V<'a, E::D>> {
    Some(match e {
        Fast::Lit(l) => match l {
            Lit::Null => V::Null,
            Lit::Bool(b) => V::Bool(*b),
            Lit::Int(i) => V::Int(*i),
            Lit::Str(s) => V::Str(s),
        },
        Fast::Path(var, fields) => match vars.at(*var, fields)? {
            Root::Value(v) => v.view(),
            // `context` or `intent` used whole: a map, which no operator here takes
            Root::Object(_) => return None,
        },
        Fast::Has(var, fields, field) => match vars.at(*var, fields)? {
            Root::Value(d) | Root::Object(d) => V::Bool(d.has(field)?),
        },
        Fast::Not(x) => match value(x, vars)? {
            V::Bool(b) => V::Bool(!b),
            _ => return None,
        },
        Fast::Cond(c, a, b) => match value(c, vars)? {
            V::Bool(true) => value(a, vars)?,
            V::Bool(false) => value(b, vars)?,
            _ => return None,
        },
        Fast::Bin(Op::And, a, b) => match value(a, vars)? {
            V::Bool(false) => V::Bool(false),
            V::Bool(true) => match value(b, vars)? {
                V::Bool(r) => V::Bool(r),
                _ => return None,
            },
            _ => return None,
        },
        Fast::Bin(Op::Or, a, b) => match value(a, vars)? {
            V::Bool(true) => V::Bool(true),
            V::Bool(false) => match value(b, vars)? {
                V::Bool(r) => V::Bool(r),
                _ => return None,
            },
            _ => return None,
        },
        Fast::Bin(op, a, b) => {
            let (l, r) = (value(a, vars)?, value(b, vars)?);
            match op {
                Op::Eq => V::Bool(equals(l, r)?),
                Op::Ne => V::Bool(!equals(l, r)?),
                Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                    let (V::Int(l), V::Int(r)) = (l, r) else {
                        return None;
                    };
                    V::Bool(match op {
                        Op::Lt => l < r,
                        Op::Le => l <= r,
                        Op::Gt => l > r,
                        _ => l >= r,
                    })
                }
                Op::Add | Op::Sub => {
                    let (V::Int(l), V::Int(r)) = (l, r) else {
                        return None;
                    };
                    V::Int(if *op == Op::Add {
                        l.checked_add(r)?
                    } else {
                        l.checked_sub(r)?
                    })
                }
                Op::In => {
                    let (V::Str(s), V::Other(list)) = (l, r) else {
                        return None;
                    };
                    let mut found = false;
                    for item in list.items()? {
                        match item.view() {
                            V::Str(t) => found |= t == s,
                            // cel's `equals` of a string and a scalar of another kind
                            V::Null | V::Bool(_) | V::Int(_) | V::Num => {}
                            V::Other(_) => return None,
                        }
                    }
                    V::Bool(found)
                }
                Op::And | Op::Or => unreachable!("matched above"),
            }
        }
    })
}

/// cel's `==` of two values, when both are of the kinds it is decided for here.
fn equals<D>(l: V<'_, D>, r: V<'_, D>) -> Option<bool> {
    Some(match (l, r) {
        (V::Other(_) | V::Num, _) | (_, V::Other(_) | V::Num) => return None,
        (V::Null, V::Null) => true,
        (V::Bool(a), V::Bool(b)) => a == b,
        (V::Int(a), V::Int(b)) => a == b,
        (V::Str(a), V::Str(b)) => a == b,
        _ => false,
    })
}
