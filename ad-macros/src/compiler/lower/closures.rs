//! Closures bound to a local (`let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());`)
//! and called on active values: each call is the closure's body inlined,
//! `{ let z = arg; body }`, which lowering then differentiates like the
//! rest of the body. The closure still exists for inactive calls when it
//! reads no active value.
//!
//! A closure sees the values its names had where it was written. Inlined,
//! it sees them where it is called, so a call is rejected if a name the
//! closure reads has been bound again (or reassigned) in between.

use syn::spanned::Spanned;
use syn::{Expr, Pat};

use super::*;

/// A closure bound to a local, and the bindings of the names it reads at
/// that point.
#[derive(Clone)]
pub(super) struct LocalClosure {
    closure: syn::ExprClosure,
    reads: Vec<(String, Option<Binding>)>,
    /// It reads active values: every call carries a derivative, and the
    /// closure itself is not emitted.
    pub(super) reads_active: bool,
    /// Names it reads that a `let` has bound again since.
    rebound: Vec<String>,
}

impl Lowerer<'_> {
    /// Records `let name = |..| ..;`; true when the `let` needs no more
    /// lowering (the closure reads active values, so only its calls exist).
    pub(super) fn local_closure(&mut self, name: &Ident, c: &syn::ExprClosure) -> bool {
        let params: HashSet<String> = c.inputs.iter().flat_map(scan::pattern_names).collect();
        let reads = scan::token_names(&quote::ToTokens::to_token_stream(&c.body))
            .into_iter()
            .filter(|n| !params.contains(n) && self.env.contains_key(n))
            .map(|n| {
                let binding = self.env.get(&n).cloned();
                (n, binding)
            })
            .collect();
        let reads_active = !self.active_mentions(&Expr::Closure(c.clone())).is_empty();
        self.local_closures.insert(
            name.to_string(),
            LocalClosure {
                closure: c.clone(),
                reads,
                reads_active,
                rebound: Vec::new(),
            },
        );
        reads_active
    }

    /// A `let` binds `names` again: the closures that read them would see
    /// the new values if inlined after it.
    pub(super) fn rebind_for_closures(&mut self, names: &HashSet<String>) {
        for name in names {
            self.local_closures.remove(name);
        }
        for closure in self.local_closures.values_mut() {
            let read = closure.reads.iter().filter(|(n, _)| names.contains(n));
            closure.rebound.extend(read.map(|(n, _)| n.clone()));
        }
    }

    /// Whether `func` names a closure bound to a local that reads active
    /// values.
    pub(super) fn is_active_closure(&self, func: &Expr) -> bool {
        matches!(func, Expr::Path(p) if p.path.get_ident().is_some_and(|i| {
            self.local_closures.get(&i.to_string()).is_some_and(|c| c.reads_active)
        }))
    }

    /// Whether `e` calls a closure bound to a local that is not emitted,
    /// as it reads active values.
    pub(super) fn calls_hidden_closure(&self, e: &Expr) -> bool {
        let hidden = self
            .local_closures
            .iter()
            .filter(|(_, c)| c.reads_active)
            .map(|(n, _)| n);
        scan::mentions(e, hidden)
    }

    /// `f(args)` for a closure `f` bound to a local, inlined; `None` when
    /// `f` is no such closure.
    pub(super) fn inlined_call(&mut self, c: &syn::ExprCall) -> Option<Result<Expr, ()>> {
        let Expr::Path(p) = &*c.func else { return None };
        let name = p.path.get_ident()?.to_string();
        let local = self.local_closures.get(&name)?.clone();
        if self.check_inlined(&name, &local, c).is_err() {
            return Some(Err(()));
        }
        let f = &local.closure;
        let span = c.func.span();
        let pats: Vec<&Pat> = f.inputs.iter().map(untyped).collect();
        let args: Vec<&Expr> = c.args.iter().collect();
        let body = &f.body;
        // Every argument is evaluated before any parameter is bound, as in
        // a call (`scaled(b, a)` into `|a, b|`).
        let stmts: Vec<syn::Stmt> =
            match (pats.as_slice(), args.as_slice()) {
                ([pat], [arg]) => vec![syn::parse_quote_spanned!(span=> let #pat = #arg;)],
                _ => {
                    let temps: Vec<Ident> =
                        args.iter().map(|_| self.fresh_local("arg", span)).collect();
                    let evaluate = temps.iter().zip(&args).map(|(t, a)| -> syn::Stmt {
                        syn::parse_quote_spanned!(span=> let #t = #a;)
                    });
                    let bind = pats.iter().zip(&temps).map(|(p, t)| -> syn::Stmt {
                        syn::parse_quote_spanned!(span=> let #p = #t;)
                    });
                    evaluate.chain(bind).collect()
                }
            };
        Some(Ok(syn::parse_quote_spanned!(span=> { #(#stmts)* #body })))
    }
}

impl Lowerer<'_> {
    /// Reports why the call `c` of the closure `name` cannot be its body
    /// inlined, if it cannot.
    fn check_inlined(&self, name: &str, local: &LocalClosure, c: &syn::ExprCall) -> Result<(), ()> {
        let f = &local.closure;
        // An active value assigned again has a new variable; Rust keeps an
        // inactive one from changing while a closure borrows it, but a
        // `move` closure has its own copy.
        let moved = f.capture.is_some();
        let changed = local.reads.iter().find(|(n, then)| {
            self.env.get(n) != then.as_ref() || (moved && self.body_assigned.contains(n))
        });
        if let Some(read) = local.rebound.first().or(changed.map(|(n, _)| n)) {
            self.errors.at(
                &c.func,
                format!("the closure `{name}` reads `{read}`, which changes between the closure and this call: pass `{read}` to the closure as an argument, or write a `#[differentiable]` function"),
            );
            return Err(());
        }
        if f.inputs.len() != c.args.len() {
            self.errors.at(
                &c.args,
                format!("the closure `{name}` takes {} argument(s)", f.inputs.len()),
            );
            return Err(());
        }
        if super::iterators::contains_return(&f.body) || f.asyncness.is_some() {
            self.errors.at(
                f,
                format!("the closure `{name}` is inlined where it is called on active values, so it cannot `return`: write a `#[differentiable]` function"),
            );
            return Err(());
        }
        Ok(())
    }

    /// Whether some closure bound to a local is not emitted.
    pub(super) fn has_hidden_closures(&self) -> bool {
        self.local_closures.values().any(|c| c.reads_active)
    }

    /// `e` with each call of a closure that is not emitted (it reads
    /// active values) written as the closure's body, for inactive code
    /// emitted as written that calls one (`if g(c[0]) > 0.0`). The
    /// arguments are evaluated before any parameter is bound, as in a call.
    pub(super) fn hidden_calls_inlined(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        syn::visit_mut::VisitMut::visit_expr_mut(&mut Inliner(self), &mut e);
        e
    }

    /// [`Lowerer::hidden_calls_inlined`] for a statement.
    pub(super) fn hidden_calls_inlined_in_stmt(&self, stmt: &syn::Stmt) -> syn::Stmt {
        let mut stmt = stmt.clone();
        syn::visit_mut::VisitMut::visit_stmt_mut(&mut Inliner(self), &mut stmt);
        stmt
    }
}

struct Inliner<'l, 'a>(&'l Lowerer<'a>);

impl syn::visit_mut::VisitMut for Inliner<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Call(c) = &*e else { return };
        let Expr::Path(p) = &*c.func else { return };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        let lowerer = self.0;
        let Some(local) = lowerer.local_closures.get(&name).filter(|l| l.reads_active) else {
            return;
        };
        if lowerer.check_inlined(&name, local, c).is_err() {
            return;
        }
        let f = &local.closure;
        let (pats, args, body) = (f.inputs.iter(), c.args.iter(), &f.body);
        let span = c.func.span();
        let mut inlined: Expr = if c.args.len() == 1 {
            syn::parse_quote_spanned!(span=> { #(let #pats = #args;)* #body })
        } else {
            let indices = (0..c.args.len()).map(syn::Index::from);
            syn::parse_quote_spanned!(span=> {
                let __ad_args = (#(#args,)*);
                #(let #pats = __ad_args.#indices;)*
                #body
            })
        };
        // The body may call another such closure.
        syn::visit_mut::visit_expr_mut(self, &mut inlined);
        *e = inlined;
    }
}

fn untyped(p: &Pat) -> &Pat {
    match p {
        Pat::Type(t) => untyped(&t.pat),
        p => p,
    }
}
