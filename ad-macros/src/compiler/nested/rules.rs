//! The tangent rules of the scalar operations, written as IR: `d_y = cos(x)
//! * d_x` for `y = sin(x)`, with operations on constants folded and kinks
//! (`abs`, `max`, `min`) as branches on primal values.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use super::super::ir::{Arith, Const, If, Op, Operand, Phi, Stmt};
use super::tangents::Tangents;

/// Whether the tangent rule of `op` reads its operands and whether it
/// reads its result (`exp`'s reads only the result, a sum's neither);
/// `None` for an operation whose adjoint `adjoints.rs` does not write.
/// Keep in step with the rules below.
pub(super) fn reads(op: &Op) -> Option<(bool, bool)> {
    Some(match op {
        Op::Arith(Arith::Add | Arith::Sub, ..) | Op::Neg(_) | Op::View(_) | Op::ToOwned(_) => {
            (false, false)
        }
        Op::Arith(Arith::Mul, ..) | Op::Powi(..) | Op::MulAdd(..) => (true, false),
        Op::Arith(Arith::Div, ..) => (true, true),
        Op::Unary(name, _) => match *name {
            "tan" | "tanh" | "exp" | "exp2" | "exp_m1" | "sqrt" | "cbrt" | "recip" => (false, true),
            "to_degrees" | "to_radians" => (false, false),
            _ => (true, false),
        },
        Op::Binary(name, ..) => (true, matches!(*name, "powf" | "hypot" | "log")),
        _ => return None,
    })
}

/// Pushes the instructions of one tangent rule.
pub(super) struct Builder<'b, 'a> {
    pub(super) t: &'b mut Tangents<'a>,
    pub(super) out: &'b mut Vec<Stmt>,
    pub(super) span: Span,
}

impl Builder<'_, '_> {
    /// The operation's result: an instruction, or a constant when no
    /// operand is active (`b - 1` of a constant exponent `b`), as every
    /// instruction reads an active value.
    pub(super) fn op(&mut self, op: Op) -> Operand {
        match self.folded(&op) {
            Some(tokens) => Operand::Const(Const {
                tokens,
                literal: false,
                scalar: true,
            }),
            None => self.t.push(self.out, op, self.span),
        }
    }

    /// An operand as an expression of the function's float type.
    fn tokens(&self, o: &Operand) -> TokenStream {
        match o {
            Operand::Const(c) if c.literal => {
                let (scalar, tokens) = (self.t.scalar, &c.tokens);
                quote!(<#scalar as ::ad::Float>::of(#tokens))
            }
            Operand::Const(c) => {
                let tokens = &c.tokens;
                quote!((#tokens))
            }
            Operand::Var(v) => {
                let ident = &self.t.vars[v.0].ident;
                quote!(#ident)
            }
        }
    }

    /// What `then` makes if `cond` holds, else what `els` makes: an `if`
    /// with one phi, whose condition reads primal values (a kink: `abs`,
    /// `max`, `min`).
    fn select(
        &mut self,
        cond: TokenStream,
        then: impl FnOnce(&mut Builder<'_, '_>) -> Operand,
        els: impl FnOnce(&mut Builder<'_, '_>) -> Operand,
    ) -> Operand {
        let mut arm = |make: &mut dyn FnMut(&mut Builder<'_, '_>) -> Operand| {
            let mut out = Vec::new();
            let value = make(&mut Builder {
                t: &mut *self.t,
                out: &mut out,
                span: self.span,
            });
            (out, value)
        };
        let (mut then, mut els) = (Some(then), Some(els));
        let (then_stmts, then_value) = arm(&mut |e| (then.take().expect("made once"))(e));
        let (els_stmts, els_value) = arm(&mut |e| (els.take().expect("made once"))(e));
        let dest = self.t.temp(self.span);
        self.out.push(Stmt::If(Box::new(If {
            cond,
            then: then_stmts,
            els: els_stmts,
            phis: vec![Phi {
                dest,
                then: then_value,
                els: els_value,
            }],
            value: None,
        })));
        Operand::Var(dest)
    }

    /// The tokens computing `op` when its operands are all constants.
    fn folded(&self, op: &Op) -> Option<TokenStream> {
        let c = |o: &Operand| match o {
            Operand::Const(_) => Some(self.tokens(o)),
            Operand::Var(_) => None,
        };
        Some(match op {
            Op::Arith(kind, a, b) => {
                let (a, b) = (c(a)?, c(b)?);
                match kind {
                    Arith::Add => quote!((#a + #b)),
                    Arith::Sub => quote!((#a - #b)),
                    Arith::Mul => quote!((#a * #b)),
                    Arith::Div => quote!((#a / #b)),
                }
            }
            Op::Neg(a) => {
                let a = c(a)?;
                quote!((-#a))
            }
            Op::Unary(name, a) => {
                let (a, name) = (c(a)?, format_ident!("{}", name));
                quote!(#a.#name())
            }
            Op::Binary(name, a, b) => {
                let (a, b, name) = (c(a)?, c(b)?, format_ident!("{}", name));
                quote!(#a.#name(#b))
            }
            Op::Powi(a, n) => {
                let (a, n) = (c(a)?, &n.tokens);
                quote!(#a.powi(#n))
            }
            _ => return None,
        })
    }

    fn add(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Add, a, b))
    }

    fn sub(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Sub, a, b))
    }

    pub(super) fn mul(&mut self, a: Operand, b: Operand) -> Operand {
        // The seed of an adjoint is one: `ȳ · ∂y/∂a` is the partial itself.
        let one = self.tokens(&self.constant(1.0)).to_string();
        let is_one =
            |o: &Operand| matches!(o, Operand::Const(_)) && self.tokens(o).to_string() == one;
        match (is_one(&a), is_one(&b)) {
            (true, _) => b,
            (_, true) => a,
            _ => self.op(Op::Arith(Arith::Mul, a, b)),
        }
    }

    pub(super) fn div(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Div, a, b))
    }

    pub(super) fn neg(&mut self, a: Operand) -> Operand {
        self.op(Op::Neg(a))
    }

    fn unary_op(&mut self, name: &'static str, a: Operand) -> Operand {
        self.op(Op::Unary(name, a))
    }

    fn constant(&self, x: f64) -> Operand {
        self.t.constant(x)
    }

    /// The sum of the terms that are not zero.
    pub(super) fn sum(&mut self, terms: Vec<Option<Operand>>) -> Option<Operand> {
        terms
            .into_iter()
            .flatten()
            .reduce(|acc, term| self.add(acc, term))
    }

    fn square(&mut self, a: Operand) -> Operand {
        self.mul(a.clone(), a)
    }

    /// `d` over `sqrt(s)`.
    fn over_root(&mut self, d: Operand, s: Operand) -> Operand {
        let root = self.unary_op("sqrt", s);
        self.div(d, root)
    }

    pub(super) fn unsupported(&self, what: &str) -> Option<Operand> {
        self.t.errors.at_span(
            self.span,
            format!("`#[differentiable(nested)]` cannot yet differentiate {what} twice: write it with `+ - * /`, the scalar methods and calls of `#[differentiable(nested)]` functions, or take the nested derivative with `ad::Dual`s"),
        );
        None
    }

    /// The tangent of `y = name(a)` along `d`.
    pub(super) fn unary(
        &mut self,
        name: &str,
        a: Operand,
        y: Operand,
        d: Operand,
    ) -> Option<Operand> {
        let one = self.constant(1.0);
        Some(match name {
            "sin" => {
                let c = self.unary_op("cos", a);
                self.mul(c, d)
            }
            "cos" => {
                let s = self.unary_op("sin", a);
                let m = self.mul(s, d);
                self.neg(m)
            }
            "tan" => {
                let y2 = self.square(y);
                let f = self.add(one, y2);
                self.mul(f, d)
            }
            "sinh" => {
                let c = self.unary_op("cosh", a);
                self.mul(c, d)
            }
            "cosh" => {
                let s = self.unary_op("sinh", a);
                self.mul(s, d)
            }
            "tanh" => {
                let y2 = self.square(y);
                let f = self.sub(one, y2);
                self.mul(f, d)
            }
            // The inverse circular and hyperbolic functions: d over 1 - a²,
            // 1 + a² or a² - 1, under a root for all but the two tangents.
            "asin" | "acos" | "atan" | "asinh" | "acosh" | "atanh" => {
                let a2 = self.square(a);
                let s = match name {
                    "asin" | "acos" | "atanh" => self.sub(one, a2),
                    "atan" | "asinh" => self.add(a2, one),
                    _ => self.sub(a2, one),
                };
                let q = if matches!(name, "atan" | "atanh") {
                    self.div(d, s)
                } else {
                    self.over_root(d, s)
                };
                if name == "acos" {
                    self.neg(q)
                } else {
                    q
                }
            }
            "exp" => self.mul(y, d),
            "exp2" => {
                let ln2 = self.constant(std::f64::consts::LN_2);
                let f = self.mul(y, ln2);
                self.mul(f, d)
            }
            "exp_m1" => {
                let f = self.add(y, one);
                self.mul(f, d)
            }
            "ln" => self.div(d, a),
            "ln_1p" => {
                let s = self.add(a, one);
                self.div(d, s)
            }
            "log2" | "log10" => {
                let ln_base = self.constant(if name == "log2" {
                    std::f64::consts::LN_2
                } else {
                    std::f64::consts::LN_10
                });
                let s = self.mul(a, ln_base);
                self.div(d, s)
            }
            "sqrt" => {
                let two = self.constant(2.0);
                let s = self.mul(two, y);
                self.div(d, s)
            }
            "cbrt" => {
                let three = self.constant(3.0);
                let y2 = self.square(y);
                let s = self.mul(three, y2);
                self.div(d, s)
            }
            "recip" => {
                let y2 = self.square(y);
                let m = self.mul(y2, d);
                self.neg(m)
            }
            // The sign of `a` times `d`: zero at 0, as the first-order rule.
            "abs" => {
                let (a, zero) = (self.tokens(&a), self.constant(0.0));
                let zero_tokens = self.tokens(&zero);
                let (above, below) = (quote!(#a > #zero_tokens), quote!(#a < #zero_tokens));
                self.select(
                    above,
                    |_| d.clone(),
                    |e| e.select(below, |e| e.neg(d.clone()), |_| zero),
                )
            }
            "to_degrees" | "to_radians" => {
                let pi = std::f64::consts::PI;
                let k = self.constant(if name == "to_degrees" {
                    180.0 / pi
                } else {
                    pi / 180.0
                });
                self.mul(k, d)
            }
            other => return self.unsupported(&format!("`{other}`")),
        })
    }

    /// The tangent of `y = name(a, b)` along `da` and `db`.
    pub(super) fn binary(
        &mut self,
        name: &str,
        (a, da): (Operand, Option<Operand>),
        (b, db): (Operand, Option<Operand>),
        y: Operand,
    ) -> Option<Operand> {
        match name {
            // atan(a / b): (b da - a db) / (a² + b²).
            "atan2" => {
                let left = da.map(|d| self.mul(b.clone(), d));
                let right = db.map(|d| {
                    let m = self.mul(a.clone(), d);
                    self.neg(m)
                });
                let top = self.sum(vec![left, right])?;
                let (a2, b2) = (self.square(a), self.square(b));
                let bottom = self.add(a2, b2);
                Some(self.div(top, bottom))
            }
            // a^b: b a^(b-1) da + y ln(a) db.
            "powf" => {
                let left = da.map(|d| {
                    let one = self.constant(1.0);
                    let lower = self.sub(b.clone(), one);
                    let power = self.op(Op::Binary("powf", a.clone(), lower));
                    let f = self.mul(b.clone(), power);
                    self.mul(f, d)
                });
                let right = db.map(|d| {
                    let ln = self.unary_op("ln", a.clone());
                    let f = self.mul(y.clone(), ln);
                    self.mul(f, d)
                });
                self.sum(vec![left, right])
            }
            // (a da + b db) / y.
            "hypot" => {
                let left = da.map(|d| self.mul(a.clone(), d));
                let right = db.map(|d| self.mul(b.clone(), d));
                let top = self.sum(vec![left, right])?;
                Some(self.div(top, y))
            }
            // log_b(a) = ln a / ln b: da / (a ln b) - y db / (b ln b).
            "log" => {
                let ln_b = self.unary_op("ln", b.clone());
                let left = da.map(|d| {
                    let f = self.mul(a.clone(), ln_b.clone());
                    self.div(d, f)
                });
                let right = db.map(|d| {
                    let y_db = self.mul(y.clone(), d);
                    let f = self.mul(b.clone(), ln_b.clone());
                    let q = self.div(y_db, f);
                    self.neg(q)
                });
                self.sum(vec![left, right])
            }
            // The tangent of the operand chosen, as a branch would take it.
            "max" | "min" => {
                let zero = || self.constant(0.0);
                let (da, db) = (da.unwrap_or_else(zero), db.unwrap_or_else(zero));
                let (a, b) = (self.tokens(&a), self.tokens(&b));
                let cond = if name == "max" {
                    quote!(#a >= #b)
                } else {
                    quote!(#a <= #b)
                };
                // To `a` on ties, as the first-order rule.
                Some(self.select(cond, |_| da, |_| db))
            }
            other => self.unsupported(&format!("`{other}`")),
        }
    }
}
