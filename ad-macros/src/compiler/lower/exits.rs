//! Desugaring `continue`, `break` and early `return` into structured code
//! before lowering, so every loop iteration runs to its end (where it saves
//! its tape entry) and the function has one result.
//!
//! - `if c { a; continue; } rest` becomes `if c { a } else { rest }`: what
//!   follows an `if` that may exit is moved into its branches.
//! - `break` sets a flag; the loop stops after the iteration's end:
//!   `if c { a; break; } rest` becomes `if c { a; exit = true; } else { rest }`
//!   and the loop checks `exit` after saving the iteration.
//! - `return e` at the top level becomes the function's value:
//!   `if c { return e; } rest` becomes `if c { e } else { rest }`. Inside a
//!   loop it stores `e`, sets a flag and breaks; after the loop,
//!   `if returned { return value; }` is desugared in turn.
//! - `break e` out of a `loop` stores `e` and sets the exit flag; the loop
//!   used as a value becomes a block ending in the stored value:
//!   `let v = loop { .. break e; .. };` is
//!   `let v = { let mut value = Default::default(); loop { .. } value };`.

use proc_macro2::{Ident, Span};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Stmt};

use super::super::errors::Errors;

/// The flags the desugaring introduces are named `__ad_exit_k`,
/// `__ad_returned_k`, `__ad_return_value_k` and `__ad_break_value_k` for
/// the `k`-th loop: the `__ad_` prefix is reserved.

#[derive(Default, Clone, Copy)]
struct Exits {
    brk: bool,
    cont: bool,
    ret: bool,
    /// A `break e`, which gives the loop a value.
    value: bool,
    /// A `break` or `continue` of a nested loop.
    nested: bool,
}

impl Exits {
    fn any(self) -> bool {
        self.brk || self.cont || self.ret
    }
}

/// Which exits `node` contains for the loop it is in (`break`/`continue`
/// of nested loops belong to those loops; `return` counts at any depth).
fn exits_in(visit: impl FnOnce(&mut Finder)) -> Exits {
    let mut f = Finder::default();
    visit(&mut f);
    f.exits
}

/// Finds exits: the kinds at this loop's level, and the span of each
/// `break` and `continue` that belongs to this loop or has a label (a
/// `return` is reported by [`report_remaining_returns`]).
#[derive(Default)]
pub struct Finder {
    exits: Exits,
    depth: usize,
    pub found: Vec<(Span, &'static str)>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        if self.depth == 0 {
            self.exits.brk = true;
            self.exits.value |= b.expr.is_some();
        } else {
            self.exits.nested = true;
        }
        if self.depth == 0 || b.label.is_some() {
            self.found.push((b.break_token.span, "break"));
        }
    }
    fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
        if self.depth == 0 {
            self.exits.cont = true;
        } else {
            self.exits.nested = true;
        }
        if self.depth == 0 || c.label.is_some() {
            self.found.push((c.continue_token.span, "continue"));
        }
    }
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.exits.ret = true;
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.depth += 1;
        syn::visit::visit_expr_for_loop(self, f);
        self.depth -= 1;
    }
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.depth += 1;
        syn::visit::visit_expr_while(self, w);
        self.depth -= 1;
    }
    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.depth += 1;
        syn::visit::visit_expr_loop(self, l);
        self.depth -= 1;
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn stmt_exits(s: &Stmt) -> Exits {
    exits_in(|f| f.visit_stmt(s))
}

/// The exits of a loop's own body (its `break`s and `continue`s, and
/// those of the loops inside it).
fn loop_body_exits(e: &Expr) -> Exits {
    let body = match e {
        Expr::ForLoop(l) => &l.body,
        Expr::While(w) => &w.body,
        Expr::Loop(l) => &l.body,
        _ => return Exits::default(),
    };
    exits_in(|f| body.stmts.iter().for_each(|s| f.visit_stmt(s)))
}

/// Whether a statement has exits to desugar: its own, or those of a loop
/// at any depth inside it.
fn needs_desugar(s: &Stmt) -> bool {
    let exits = stmt_exits(s);
    exits.any() || exits.nested
}

/// Where the desugared code is: the function's top level (a `return`
/// gives its value) or a loop body (it sets flags).
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Top,
    Loop,
}

/// Numbers the loops it desugars; `loops` holds the numbers of the loops
/// around the code being desugared, innermost last.
pub struct Desugar {
    counter: usize,
    loops: Vec<usize>,
}

fn flag(kind: &str, k: usize) -> Ident {
    Ident::new(&format!("__ad_{kind}_{k}"), Span::call_site())
}

impl Desugar {
    pub fn new() -> Self {
        Desugar {
            counter: 0,
            loops: Vec::new(),
        }
    }

    fn current(&self) -> usize {
        *self
            .loops
            .last()
            .expect("exits in loop context are inside a loop")
    }

    /// The function body with every exit desugared. Unsupported exits
    /// (labels, `break` with a value) are left for lowering to report.
    pub fn body(&mut self, block: &Block) -> Block {
        let has_exits = block.stmts.iter().any(needs_desugar);
        if !has_exits {
            return block.clone();
        }
        Block {
            brace_token: block.brace_token,
            stmts: self.stmts(&block.stmts, Context::Top),
        }
    }

    /// `stmts` with the exits at this level desugared.
    fn stmts(&mut self, stmts: &[Stmt], cx: Context) -> Vec<Stmt> {
        let mut out = Vec::new();
        for (i, stmt) in stmts.iter().enumerate() {
            let rest = &stmts[i + 1..];
            if let Some(expr) = exit_expr(stmt) {
                out.extend(self.exit(expr, cx));
                return out;
            }
            if let Some(branches) = let_of_diverging_arms(stmt, rest) {
                out.extend(self.stmts(&[branches], cx));
                return out;
            }
            match stmt_expr(stmt) {
                Some(Expr::If(e)) if stmt_exits(stmt).any() => {
                    // Move what follows into both branches, then desugar them.
                    let then = followed_by(e.then_branch.stmts.clone(), rest);
                    let els = match &e.else_branch {
                        Some((_, els)) => match &**els {
                            Expr::Block(b) => b.block.stmts.clone(),
                            other => vec![Stmt::Expr(other.clone(), None)],
                        },
                        None => Vec::new(),
                    };
                    let els = followed_by(els, rest);
                    let then = self.stmts(&then, cx);
                    let els = self.stmts(&els, cx);
                    let cond = &e.cond;
                    let stmt: Stmt =
                        Stmt::Expr(parse_quote!(if #cond { #(#then)* } else { #(#els)* }), None);
                    out.push(stmt);
                    return out;
                }
                Some(Expr::Match(m)) if stmt_exits(stmt).any() => {
                    // As for `if`: what follows goes into every arm.
                    let mut m = m.clone();
                    for arm in &mut m.arms {
                        let body = match &*arm.body {
                            Expr::Block(b) if b.label.is_none() => b.block.stmts.clone(),
                            other => vec![Stmt::Expr(other.clone(), None)],
                        };
                        let body = followed_by(body, rest);
                        let body = self.stmts(&body, cx);
                        *arm.body = parse_quote!({ #(#body)* });
                        arm.comma = Some(Default::default());
                    }
                    out.push(Stmt::Expr(Expr::Match(m), None));
                    return out;
                }
                Some(Expr::Block(b))
                    if cx == Context::Loop && b.label.is_none() && stmt_exits(stmt).any() =>
                {
                    // A bare block keeps its scope: what follows it cannot
                    // move inside, so it runs if the block's end was reached.
                    self.counter += 1;
                    let through = flag("through", self.counter);
                    let end: Stmt = parse_quote!(#through = true;);
                    let inner = followed_by(b.block.stmts.clone(), &[end]);
                    let inner = self.stmts(&inner, cx);
                    out.push(parse_quote!(let mut #through = false;));
                    out.push(Stmt::Expr(parse_quote!({ #(#inner)* }), None));
                    if !rest.is_empty() {
                        let rest = self.stmts(rest, cx);
                        out.push(Stmt::Expr(parse_quote!(if #through { #(#rest)* }), None));
                    }
                    return out;
                }
                Some(Expr::Block(b)) if b.label.is_none() && stmt_exits(stmt).any() => {
                    // Outside loops only `return` exits a block: the block
                    // becomes the body of a loop run once, whose `return`
                    // is desugared as in any loop.
                    let block = &b.block;
                    let once: Expr = parse_quote!(for _ in 0..1 #block);
                    let desugared = self.loop_(&once);
                    out.extend(desugared.stmts);
                    if let Some(k) = desugared.returns {
                        out.extend(self.after_return_flag(k, rest, cx));
                        return out;
                    }
                }
                Some(loop_expr @ (Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_)))
                    if needs_desugar(stmt) =>
                {
                    let desugared = self.loop_(loop_expr);
                    out.extend(desugared.stmts);
                    // A loop ending a block gives the block its value.
                    let tail = matches!(stmt, Stmt::Expr(_, None));
                    let value: Vec<Stmt> = match desugared.value {
                        Some(value) if tail => vec![Stmt::Expr(parse_quote!(#value), None)],
                        _ => Vec::new(),
                    };
                    if let Some(k) = desugared.returns {
                        out.extend(self.after_return_flag(k, &followed_by(value, rest), cx));
                        return out;
                    }
                    out.extend(value);
                }
                _ if needs_desugar(stmt) && !stmt_exits(stmt).any() => {
                    // Only loops nested in this statement's blocks exit
                    // (`if c { for .. { continue; } }`): desugar those blocks.
                    let mut stmt = stmt.clone();
                    NestedBlocks { desugar: self, cx }.visit_stmt_mut(&mut stmt);
                    out.push(stmt);
                }
                _ => out.push(stmt.clone()),
            }
        }
        out
    }

    /// What follows loop `k`, whose body may `return`:
    /// `if returned { return value; } rest`, desugared here.
    fn after_return_flag(&mut self, k: usize, rest: &[Stmt], cx: Context) -> Vec<Stmt> {
        let (flag, value) = (flag("returned", k), flag("return_value", k));
        let mut tail: Vec<Stmt> = vec![parse_quote!(if #flag { return #value; })];
        tail.extend(rest.iter().cloned());
        self.stmts(&tail, cx)
    }

    /// The replacement of `break;`, `continue;` or `return e;`.
    fn exit(&mut self, expr: &Expr, cx: Context) -> Vec<Stmt> {
        match (expr, cx) {
            (Expr::Continue(_), _) => Vec::new(),
            (Expr::Break(b), _) => {
                let k = self.current();
                let exit = flag("exit", k);
                let mut stmts: Vec<Stmt> = Vec::new();
                if let Some(e) = &b.expr {
                    let value = flag("break_value", k);
                    stmts.push(parse_quote!(#value = #e;));
                }
                stmts.push(parse_quote!(#exit = true;));
                stmts
            }
            (Expr::Return(r), Context::Top) => match &r.expr {
                Some(e) => vec![Stmt::Expr((**e).clone(), None)],
                None => vec![Stmt::Expr(expr.clone(), None)],
            },
            (Expr::Return(r), Context::Loop) => {
                let k = self.current();
                let (returned, value, exit) = (
                    flag("returned", k),
                    flag("return_value", k),
                    flag("exit", k),
                );
                let e = r
                    .expr
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| parse_quote!(()));
                vec![
                    parse_quote!(#value = #e;),
                    parse_quote!(#returned = true;),
                    parse_quote!(#exit = true;),
                ]
            }
            _ => vec![Stmt::Expr(expr.clone(), None)],
        }
    }

    /// A loop whose body may exit: its body desugared, with the flags
    /// declared before it and the check after each iteration marked by a
    /// trailing `if exit_flag { break; }` (which lowering turns into the
    /// loop's exit condition).
    fn loop_(&mut self, expr: &Expr) -> DesugaredLoop {
        let exits = loop_body_exits(expr);
        self.counter += 1;
        let k = self.counter;
        let body = match expr {
            Expr::ForLoop(l) => &l.body,
            Expr::While(w) => &w.body,
            Expr::Loop(l) => &l.body,
            _ => unreachable!("loop_ is called on loops"),
        };
        self.loops.push(k);
        let mut stmts = self.stmts(&body.stmts, Context::Loop);
        self.loops.pop();
        let exit = flag("exit", k);
        let mut out: Vec<Stmt> = Vec::new();
        if exits.brk || exits.ret {
            out.push(parse_quote!(let mut #exit = false;));
            stmts.push(parse_quote!(if #exit { break; }));
        }
        if exits.ret {
            let (returned, value) = (flag("returned", k), flag("return_value", k));
            out.push(parse_quote!(let mut #returned = false;));
            out.push(parse_quote!(let mut #value = ::core::default::Default::default();));
        }
        let value = exits.value.then(|| flag("break_value", k));
        if let Some(value) = &value {
            out.push(parse_quote!(let mut #value = ::core::default::Default::default();));
        }
        let new_body: Block = parse_quote!({ #(#stmts)* });
        let new_loop: Expr = match expr {
            Expr::ForLoop(l) => {
                let mut l = l.clone();
                l.body = new_body;
                Expr::ForLoop(l)
            }
            Expr::While(w) => {
                let mut w = w.clone();
                w.body = new_body;
                Expr::While(w)
            }
            Expr::Loop(l) => {
                let mut l = l.clone();
                l.body = new_body;
                Expr::Loop(l)
            }
            _ => unreachable!(),
        };
        out.push(Stmt::Expr(new_loop, None));
        DesugaredLoop {
            stmts: out,
            returns: exits.ret.then_some(k),
            value,
        }
    }
}

/// A loop with its exits desugared.
struct DesugaredLoop {
    /// The flags' declarations, then the loop.
    stmts: Vec<Stmt>,
    /// The loop's number, if its body may `return`.
    returns: Option<usize>,
    /// Where a `break e` stores the loop's value.
    value: Option<Ident>,
}

/// Desugars the statements of every block it reaches; the loops among
/// them are desugared by [`Desugar::stmts`], with what is inside them.
struct NestedBlocks<'a> {
    desugar: &'a mut Desugar,
    cx: Context,
}

impl VisitMut for NestedBlocks<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        b.stmts = self.desugar.stmts(&b.stmts, self.cx);
    }
    /// A loop used as a value (`let v = loop { .. break e; };`) becomes a
    /// block: the flags, the loop, then the value its `break e` stored.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let is_loop = matches!(e, Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_));
        if !is_loop || !loop_body_exits(e).any() {
            return syn::visit_mut::visit_expr_mut(self, e);
        }
        let desugared = self.desugar.loop_(e);
        let mut stmts = desugared.stmts;
        if let Some(value) = desugared.value {
            stmts.push(Stmt::Expr(parse_quote!(#value), None));
        }
        *e = parse_quote!({ #(#stmts)* });
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `let p = if c { a } else { return e };` then `rest`, as the statement
/// `if c { let p = a; rest } else { return e; }`, so the `return` can be
/// desugared like any other (the same for `match`, and for `break` and
/// `continue`). An arm that exits as a whole (an exit, or a block ending
/// in one) is not followed by `rest`; one without exits keeps its value as
/// a block; a block that may exit (`{ if c { break; } v }`) is followed by
/// `let p = v;` and `rest`, unless its own `let`s would hide names `rest`
/// reads, in which case the `let` is left for lowering to report.
fn let_of_diverging_arms(stmt: &Stmt, rest: &[Stmt]) -> Option<Stmt> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    if let Some(init) = &local.init {
        if let Some((_, els)) = &init.diverge {
            return let_else_that_exits(&local.pat, &init.expr, els, rest);
        }
    }
    let init = local.init.as_ref()?;
    if !stmt_exits(stmt).any() {
        return None;
    }
    let pat = &local.pat;
    // The statements an arm becomes.
    let arm = |body: &Expr| -> Option<Vec<Stmt>> {
        match body {
            e if is_exit(e) => Some(vec![Stmt::Expr(e.clone(), Some(Default::default()))]),
            Expr::Block(b)
                if b.label.is_none() && b.block.stmts.last().and_then(exit_expr).is_some() =>
            {
                Some(b.block.stmts.clone())
            }
            Expr::Block(b) if b.label.is_none() && !hides_names(&b.block.stmts, rest) => {
                // `{ if c { break; } v }`: its statements, then `let p = v;`.
                let (last, init) = b.block.stmts.split_last()?;
                let Stmt::Expr(value, None) = last else {
                    return None;
                };
                let mut stmts = init.to_vec();
                stmts.push(parse_quote!(let #pat = #value;));
                stmts.extend(rest.iter().cloned());
                Some(stmts)
            }
            value if !exits_in(|f| f.visit_expr(value)).any() => {
                let mut stmts: Vec<Stmt> = vec![parse_quote!(let #pat = #value;)];
                stmts.extend(rest.iter().cloned());
                Some(stmts)
            }
            _ => None,
        }
    };
    match &*init.expr {
        Expr::If(e) => {
            let (_, els) = e.else_branch.as_ref()?;
            let then = arm(&Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: e.then_branch.clone(),
            }))?;
            let els = arm(els)?;
            let cond = &e.cond;
            Some(Stmt::Expr(
                parse_quote!(if #cond { #(#then)* } else { #(#els)* }),
                None,
            ))
        }
        Expr::Match(m) => {
            let mut m = m.clone();
            for a in &mut m.arms {
                let body = arm(&a.body)?;
                *a.body = parse_quote!({ #(#body)* });
                a.comma = Some(Default::default());
            }
            Some(Stmt::Expr(Expr::Match(m), None))
        }
        _ => None,
    }
}

/// `let Some(v) = e else { break };` then `rest`, as the statement
/// `match e { Some(v) => { rest } _ => { break } }`, whose exit is then
/// desugared like any other (`while let` loops become this, see
/// `loop_forms.rs`). A `let ... else` whose `else` leaves otherwise
/// (`panic!`) is kept.
fn let_else_that_exits(pat: &syn::Pat, value: &Expr, els: &Expr, rest: &[Stmt]) -> Option<Stmt> {
    if !exits_in(|f| f.visit_expr(els)).any() {
        return None;
    }
    Some(Stmt::Expr(
        parse_quote!(match #value { #pat => { #(#rest)* } _ => #els }),
        None,
    ))
}

/// Whether a `let` among `stmts` binds a name that `rest` reads, which
/// moving `rest` after `stmts` would make it see.
fn hides_names(stmts: &[Stmt], rest: &[Stmt]) -> bool {
    let bound: std::collections::HashSet<String> = stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Local(l) => Some(super::super::scan::pattern_names(&l.pat)),
            _ => None,
        })
        .flatten()
        .collect();
    let read = super::super::scan::token_names(&quote::quote!(#(#rest)*));
    bound.iter().any(|name| read.contains(name))
}

/// `stmts` then `rest`: a last expression of `stmts` gets its `;` when
/// `rest` follows (its value was `()`, as the `if` or `match` it ended was a
/// statement), so that the statements still parse.
fn followed_by(mut stmts: Vec<Stmt>, rest: &[Stmt]) -> Vec<Stmt> {
    if !rest.is_empty() {
        if let Some(Stmt::Expr(_, semi @ None)) = stmts.last_mut() {
            *semi = Some(Default::default());
        }
        stmts.extend(rest.iter().cloned());
    }
    stmts
}

/// `break;`, `break e;`, `continue;`, `return e;` as a statement.
fn exit_expr(stmt: &Stmt) -> Option<&Expr> {
    stmt_expr(stmt).filter(|e| is_exit(e))
}

/// `break`, `break e`, `continue` or `return e`, unlabelled.
fn is_exit(e: &Expr) -> bool {
    match e {
        Expr::Break(b) => b.label.is_none(),
        Expr::Continue(c) => c.label.is_none(),
        Expr::Return(_) => true,
        _ => false,
    }
}

pub(super) fn stmt_expr(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Expr(e, _) => Some(e),
        _ => None,
    }
}

/// What a `return` the desugaring could not move is told: it sits inside
/// a value, where the generated functions, which return derivatives too,
/// cannot return it as written.
pub const RETURN_IN_A_VALUE: &str = "a `return` inside a value (the `if`, `match`, `loop` or block a `let` binds, or an operand) is not supported yet: return from a statement instead, as in `if c { return e; }` before the `let`";

/// Reports every `return` left after desugaring (outside closures and
/// items): each is inside a value.
pub fn report_remaining_returns(block: &Block, errors: &Errors) {
    struct Returns<'a>(&'a Errors);
    impl<'ast> Visit<'ast> for Returns<'_> {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            self.0.at(r.return_token, RETURN_IN_A_VALUE);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    Returns(errors).visit_block(block);
}

/// The condition of `if c { break; }`, the check that ends a desugared
/// loop's body (see `loop_`).
pub(super) fn break_check(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Expr(Expr::If(i), _)
            if i.else_branch.is_none()
                && matches!(i.then_branch.stmts.as_slice(), [Stmt::Expr(Expr::Break(b), _)] if b.label.is_none() && b.expr.is_none()) =>
        {
            Some(&i.cond)
        }
        _ => None,
    }
}
