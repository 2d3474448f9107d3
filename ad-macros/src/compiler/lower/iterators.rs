//! Iterator chains that carry a derivative, rewritten as the loops they
//! stand for before lowering:
//!
//! - `x.iter().map(|v| v * v).sum()`, `a.iter().zip(&b).map(|(p, q)| p * q).sum()`,
//!   `xs.iter().enumerate().map(..).product()`, `.fold(init, |acc, v| ..)`:
//!   a block that declares an accumulator, loops and yields it;
//! - `(0..n).map(|i| x[i] * w[i]).sum()`, whose iterator is inactive: the
//!   same block, looping over the iterator as written;
//! - `for (a, b) in x.iter().zip(y.iter())` and the other sources below: a
//!   loop over indices.
//!
//! An active source is read by index, `x.iter()`'s item being `&x[k]`, so a
//! chain may `zip` and `enumerate` sources of the same length; `copied()`
//! and `cloned()` read `x[k]`. Indexing by one `usize` assumes a slice, a
//! `Vec` or a 1-D array, as a `for` loop over a struct's field does; a
//! parameter known to have more axes is rejected. Where the chain is one
//! `map` and a `sum` over an array that is not known to be 1-D, it becomes
//! `x.mapv(..).sum()`, which any dimension allows.

use proc_macro2::Span;
use quote::quote_spanned;
use syn::{Expr, Pat};

use super::*;

/// What a chain does to each item after its sources.
enum Stage<'a> {
    /// `map(f)` with a closure or a function path.
    Map(&'a Expr),
    /// `filter(|v| condition)`, whose closure sees a reference to the item.
    Filter(&'a syn::ExprClosure),
    /// `take_while(|v| condition)`: a filter that also ends the loop.
    TakeWhile(&'a syn::ExprClosure),
    /// `skip_while(|v| condition)`: a filter until the condition first
    /// fails.
    SkipWhile(&'a syn::ExprClosure),
    /// `copied()` or `cloned()` after a stage: the item dereferenced.
    Copied,
    /// `scan(init, |state, v| { ..; Some(item) })`: a state declared
    /// before the loop, which the closure's `*state` reads and assigns.
    Scan(&'a Expr, &'a syn::ExprClosure),
}

/// The loop a chain's items come from.
enum Items {
    /// Indexable sources read at the loop's index, over `0..len`.
    Indexed { len: Expr },
    /// An inactive iterator, looped over as written.
    Iterator(Expr),
}

/// A piece of the loop body: bindings, or a condition, which guards the
/// pieces after it.
enum Step {
    Lets(Vec<syn::Stmt>),
    Guard {
        condition: Expr,
        kind: Guard,
    },
    /// A `scan`'s state, declared before the loop from its start.
    State {
        name: Ident,
        init: Expr,
    },
}

/// What a condition that fails does.
enum Guard {
    /// `filter`: skips the item.
    Filter,
    /// `take_while`: sets the flag, and the loop ends after the iteration.
    TakeWhile(Ident),
    /// `skip_while`: skips the item while the flag (true at the start)
    /// holds; the first item that passes clears it, and the condition is
    /// not read again.
    SkipWhile(Ident),
}

/// How a chain ends: the accumulator's start and how an item updates it.
enum Terminal<'a> {
    Sum,
    Product,
    Fold {
        init: &'a Expr,
        f: &'a Expr,
    },
    /// `collect()` into a 1-D array, whose elements the loop writes.
    Collect,
    /// `reduce(f).unwrap()` (or `.expect(message)`, `.unwrap_or(d)`): a
    /// `fold` from the first item, over scalars. `max_by(compare)` and
    /// `min_by(compare)` are reductions that keep one of the two items,
    /// `last()` one that keeps the second, `next()` and `nth(k)` (after
    /// `skip(k)`) one that keeps the first.
    Reduce {
        f: Expr,
        empty: Empty<'a>,
    },
}

/// What a reduction of no items gives: a panic, with `expect`'s message
/// or `unwrap`'s, or `unwrap_or`'s default.
#[derive(Clone, Copy)]
enum Empty<'a> {
    Panics(Option<&'a Expr>),
    Default(&'a Expr),
}

impl<'a> Empty<'a> {
    /// How `m` takes the value out of an `Option`, if it does.
    fn of(m: &'a syn::ExprMethodCall) -> Option<Self> {
        match (m.method.to_string().as_str(), m.args.len()) {
            ("unwrap", 0) => Some(Empty::Panics(None)),
            ("expect", 1) => Some(Empty::Panics(m.args.first())),
            ("unwrap_or", 1) => Some(Empty::Default(&m.args[0])),
            _ => None,
        }
    }
}

/// `option.copied()` or `option.cloned()` taken off: the items of a
/// reduction are values already.
fn without_copy(e: &Expr) -> &Expr {
    match e {
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(m.method.to_string().as_str(), "copied" | "cloned") =>
        {
            &m.receiver
        }
        _ => e,
    }
}

impl Lowerer<'_> {
    /// `m` when it ends an iterator chain that carries a derivative, as the
    /// block that computes it; `Err` once an error has been reported.
    pub(super) fn iterator_chain(&mut self, m: &syn::ExprMethodCall) -> Option<Result<Expr, ()>> {
        // `reduce` gives an `Option`: it is differentiated with the
        // `unwrap`, `expect` or `unwrap_or` that takes the value out.
        let empty = Empty::of(m);
        let option = match without_copy(&m.receiver) {
            Expr::MethodCall(r) if empty.is_some() => Some(r),
            _ => None,
        };
        let item_of_chain = option.and_then(|r| self.item_of_chain(r));
        let (m, reduced) = match (empty, option, &item_of_chain) {
            (Some(empty), _, Some(reduction)) => (reduction, Some(empty)),
            (Some(empty), Some(r), None)
                if matches!(
                    r.method.to_string().as_str(),
                    "reduce" | "max_by" | "min_by"
                ) && r.args.len() == 1 =>
            {
                (r, Some(empty))
            }
            _ => (m, None),
        };
        let name = m.method.to_string();
        let terminal = match (name.as_str(), m.args.len(), reduced) {
            ("reduce", 1, Some(empty)) => Terminal::Reduce {
                f: m.args[0].clone(),
                empty,
            },
            // As the iterator's: the last of equal maxima, the first of
            // equal minima.
            ("max_by" | "min_by", 1, Some(empty)) => {
                let compare = &m.args[0];
                // Reserved names, which `compare` cannot mean.
                let (a, b) = (quote::quote!(__ad_kept), quote::quote!(__ad_next));
                let (greater, other) = match name.as_str() {
                    "max_by" => (&a, &b),
                    _ => (&b, &a),
                };
                Terminal::Reduce {
                    f: syn::parse_quote_spanned!(m.method.span()=> |#a, #b| {
                        if ::ad::__private::rules::compare(#compare, &#a, &#b) == ::core::cmp::Ordering::Greater {
                            #greater
                        } else {
                            #other
                        }
                    }),
                    empty,
                }
            }
            ("sum", 0, _) => Terminal::Sum,
            ("product", 0, _) => Terminal::Product,
            ("collect", 0, _) => Terminal::Collect,
            ("fold", 2, _) => Terminal::Fold {
                init: &m.args[0],
                f: &m.args[1],
            },
            _ => return None,
        };
        if let Some(receiver) = maps_moved_out(&m.receiver) {
            let mut moved = m.clone();
            *moved.receiver = receiver;
            return self.iterator_chain(&moved);
        }
        let (source, stages) = split_stages(&m.receiver);
        if let Some(flattened) = self.flat_mapped(m, source, &terminal) {
            return Some(flattened);
        }
        let chained = is_adaptor(source);
        // `x.sum()` and `x.map(f).sum()` on an array are ndarray's;
        // ndarray's `x.fold(..)` visits every element, as
        // `x.iter().fold(..)` does, and its `x.product()` multiplies them.
        let elementwise = matches!(terminal, Terminal::Fold { .. } | Terminal::Product);
        if !chained && (!stages.is_empty() || !elementwise) {
            return None;
        }
        let source = if chained {
            source.clone()
        } else {
            syn::parse_quote_spanned!(m.method.span()=> #source.iter())
        };
        let span = m.method.span();
        if let (Terminal::Sum, Some(mapped)) = (&terminal, self.as_mapv(&source, &stages, span)) {
            return Some(Ok(mapped));
        }
        if let (Terminal::Collect, None, Some(mapped)) = (
            &terminal,
            &m.turbofish,
            self.collected_mapv(&source, &stages, span),
        ) {
            return Some(Ok(mapped));
        }
        Some(self.chain_block(m, &source, &stages, terminal, span))
    }

    /// `chain.last()` (or `next_back()`), `chain.next()`, `chain.nth(k)`,
    /// `chain.find(p)` and `chain.rfind(p)` of a chain this file lowers, as
    /// the reduction that keeps that item: `chain.reduce(|_, b| b)`,
    /// `chain.skip(k).reduce(|a, _| a)`, `chain.filter(p).reduce(|a, _| a)`.
    fn item_of_chain(&self, r: &syn::ExprMethodCall) -> Option<syn::ExprMethodCall> {
        let chain = &r.receiver;
        if !is_adaptor(split_stages(chain).0) {
            return None;
        }
        let span = r.method.span();
        // Reserved names, which the chain cannot mean.
        let (a, b) = (quote::quote!(__ad_kept), quote::quote!(__ad_next));
        match (
            r.method.to_string().as_str(),
            &r.args.iter().collect::<Vec<_>>()[..],
        ) {
            ("last" | "next_back", []) => {
                Some(syn::parse_quote_spanned!(span=> #chain.reduce(|#a, #b| #b)))
            }
            ("next", []) => Some(syn::parse_quote_spanned!(span=> #chain.reduce(|#a, #b| #a))),
            ("find", [p]) => {
                Some(syn::parse_quote_spanned!(span=> #chain.filter(#p).reduce(|#a, #b| #a)))
            }
            ("rfind", [p]) => {
                Some(syn::parse_quote_spanned!(span=> #chain.filter(#p).reduce(|#a, #b| #b)))
            }
            ("nth", [k]) => {
                Some(syn::parse_quote_spanned!(span=> #chain.skip(#k).reduce(|#a, #b| #a)))
            }
            _ => None,
        }
    }

    /// The item's pattern and the inner iterator of `outer.flat_map(|p|
    /// inner)`, or of `outer.flatten()`, which is `flat_map(|p| p.iter())`;
    /// `None` when `flat` is neither.
    fn flattened(&mut self, flat: &syn::ExprMethodCall) -> Option<Result<(Pat, Expr), ()>> {
        match (
            flat.method.to_string().as_str(),
            &flat.args.iter().collect::<Vec<_>>()[..],
        ) {
            ("flat_map", [Expr::Closure(c)]) => Some(match single_param(c) {
                Some(pat) => Ok((strip_type(pat).clone(), (*c.body).clone())),
                None => {
                    self.errors.at(
                        c,
                        "a `flat_map` closure takes one item: `|inst| inst.iter()`",
                    );
                    Err(())
                }
            }),
            ("flatten", []) => {
                let span = flat.method.span();
                let item = self.fresh_local("flattened", span);
                let inner: Expr = syn::parse_quote_spanned!(span=> #item.iter());
                Some(Ok((syn::parse_quote!(#item), inner)))
            }
            _ => None,
        }
    }

    /// `for v in outer.flat_map(|p| inner).stages { body }` (or
    /// `outer.flatten()`, whose items' `iter()` is the inner iterator) as
    /// the two loops it is: `for p in outer { for v in inner.stages { body }
    /// }`. A `continue` means the same in the inner loop; a `break` would
    /// leave only the inner one, so a body that breaks is rejected. `None`
    /// when `f` is not over such a `flat_map`.
    pub(super) fn flat_map_for(&mut self, f: &syn::ExprForLoop) -> Option<Result<Expr, ()>> {
        let (source, _) = split_stages(&f.expr);
        let Expr::MethodCall(flat) = source else {
            return None;
        };
        if !self.carries_derivative(&f.expr) {
            return None;
        }
        let (param, body) = match self.flattened(flat)? {
            Ok(parts) => parts,
            Err(()) => return Some(Err(())),
        };
        if breaks(&f.body) {
            self.errors.at(
                &flat.method,
                format!("a `for` loop over a `{}` whose body breaks would leave only the inner loop: write the two loops out, with a flag for the `break`", flat.method),
            );
            return Some(Err(()));
        }
        let (outer, inner) = (&flat.receiver, replaced(&f.expr, source, &body));
        let (pat, block) = (&f.pat, &f.body);
        Some(Ok(
            syn::parse_quote_spanned!(f.for_token.span=> for #param in #outer {
                for #pat in #inner #block
            }),
        ))
    }

    /// A `for` loop over active sources (`for l in &p.layers`,
    /// `for (a, b) in x.iter().zip(&y)`), as a loop over their indices that
    /// binds each item.
    pub(super) fn indexed_for(&mut self, f: &syn::ExprForLoop) -> Option<Result<Expr, ()>> {
        if let Some(written) = self.written_items_for(f) {
            return Some(written);
        }
        if !self.carries_derivative(&f.expr) {
            return None;
        }
        if let Some(expr) = maps_moved_out(&f.expr) {
            let mut moved = f.clone();
            *moved.expr = expr;
            return self.indexed_for(&moved);
        }
        let index = self.fresh_numbered("item", |s| &mut s.consts);
        let mut lets = Vec::new();
        // `for a in x.iter().map(f)`: the stages applied to each item of
        // the source, a `filter` guarding the body.
        let (source, stages) = split_stages(&f.expr);
        let source = match self.source(source, true, &mut lets) {
            Ok(source) => source,
            Err(error) => {
                self.errors.push(error);
                return Some(Err(()));
            }
        };
        let (len, item) = (source.len(), source.item(&syn::parse_quote!(#index)));
        let (mut stmts, mut steps) = (Vec::new(), Vec::new());
        let mut binder = self.binder();
        let body_names = scan::token_names(&f.body.to_token_stream());
        let Ok(item) = self.scoped_stages(
            &stages,
            item,
            &body_names,
            &mut binder,
            &mut stmts,
            &mut steps,
        ) else {
            return Some(Err(()));
        };
        binder.bind(&f.pat, &item, &mut stmts);
        // A filter guards the body, but not the check that ends a body
        // whose exits were desugared: the loop reads it after each item.
        let mut body = f.body.stmts.clone();
        let exit_check = match body.last().map(super::exits::break_check) {
            Some(Some(_)) => body.pop(),
            _ => None,
        };
        stmts.extend(body);
        let guard_flags = flags(&steps);
        let mut stmts = guarded(steps, stmts);
        lets.extend(guard_flags.declarations());
        // The loop ends after an iteration that exits or stops.
        let exit = exit_check.as_ref().and_then(super::exits::break_check);
        stmts.extend(guard_flags.check(exit));
        binder.finish(&mut stmts);
        let label = &f.label;
        let looped: Expr = syn::parse_quote_spanned!(f.for_token.span=> #label for #index in 0..#len {
            #(#stmts)*
        });
        if lets.is_empty() {
            return Some(Ok(looped));
        }
        Some(Ok(syn::parse_quote_spanned!(f.for_token.span=> {
            #(#lets)*
            #looped
        })))
    }

    /// The item after a chain's stages (`map`, `copied`, `filter`), the
    /// statements that bind it going to `stmts`; each `filter` ends a run
    /// of them in `steps`, with the condition that guards what follows.
    fn apply_stages(
        &mut self,
        stages: &[Stage],
        mut item: Expr,
        binder: &mut Binder,
        stmts: &mut Vec<syn::Stmt>,
        steps: &mut Vec<Step>,
    ) -> Result<Expr, ()> {
        // Whether the item is a closure's value (a `map`'s, a `scan`'s),
        // which a later closure receives by reference.
        let mut owned = false;
        for stage in stages {
            match stage {
                Stage::Map(f) => {
                    item = self.apply(f, &[item], binder, stmts)?;
                    owned = true;
                }
                Stage::Copied => {
                    item = match item {
                        Expr::Reference(r) => *r.expr,
                        other => syn::parse_quote!(*#other),
                    }
                }
                Stage::Scan(init, c) => {
                    let (state, lets, value) = self.scan_closure(c)?;
                    let [_, item_pat] = [&c.inputs[0], &c.inputs[1]];
                    binder.bind(item_pat, &item, stmts);
                    stmts.extend(lets);
                    let init = self.typed_float(init).unwrap_or_else(|| (*init).clone());
                    binder.states.insert(state.to_string());
                    steps.push(Step::State { name: state, init });
                    item = value;
                    owned = true;
                }
                Stage::Filter(c) | Stage::TakeWhile(c) | Stage::SkipWhile(c) => {
                    let (name, kind) = match stage {
                        Stage::Filter(_) => ("filter", Guard::Filter),
                        Stage::TakeWhile(_) => (
                            "take_while",
                            Guard::TakeWhile(self.fresh_local("stop", c.span())),
                        ),
                        _ => (
                            "skip_while",
                            Guard::SkipWhile(self.fresh_local("skipping", c.span())),
                        ),
                    };
                    let pat = single_param(c).ok_or_else(|| {
                        self.errors.at(
                            &c.inputs,
                            format!("a `{name}` closure takes one parameter: `|v| ...`"),
                        );
                    })?;
                    self.plain_closure_body(c)?;
                    // The item is read again after the closure's
                    // parameter is bound, which may shadow a name the
                    // item's expression reads (`.map(|v| v * a).filter(|v|
                    // ..)`): a name of its own first.
                    if owned && !matches!(item, Expr::Path(_)) {
                        let kept = self.fresh_local("kept", c.span());
                        stmts.push(syn::parse_quote!(let #kept = #item;));
                        item = syn::parse_quote!(#kept);
                    }
                    let condition = match by_value_condition(pat, &c.body) {
                        // `.map(..).filter(|v| *v > 0.0)`: a reference to
                        // the mapped value, which the item stands for (a
                        // float, as the closure dereferences it).
                        Some((name, condition)) if owned => {
                            stmts.push(syn::parse_quote!(let #name = #item;));
                            condition
                        }
                        _ => {
                            binder.bind(pat, &syn::parse_quote!(&#item), stmts);
                            (*c.body).clone()
                        }
                    };
                    steps.push(Step::Lets(std::mem::take(stmts)));
                    steps.push(Step::Guard { condition, kind });
                }
            }
        }
        Ok(item)
    }

    /// `apply_stages` for a `for` loop's body, which reads `body_names`:
    /// a stage whose closure binds one of them (an outer name its
    /// parameter shadows) keeps its bindings in a block of their own.
    fn scoped_stages(
        &mut self,
        stages: &[Stage],
        mut item: Expr,
        body_names: &HashSet<String>,
        binder: &mut Binder,
        stmts: &mut Vec<syn::Stmt>,
        steps: &mut Vec<Step>,
    ) -> Result<Expr, ()> {
        for stage in stages {
            let (mut inner, mut guards) = (Vec::new(), Vec::new());
            let next = self.apply_stages(
                std::slice::from_ref(stage),
                item.clone(),
                binder,
                &mut inner,
                &mut guards,
            )?;
            let bound: HashSet<String> = guards
                .iter()
                .flat_map(|g| match g {
                    Step::Lets(lets) => lets.as_slice(),
                    Step::Guard { .. } | Step::State { .. } => &[],
                })
                .chain(&inner)
                .filter_map(|s| match s {
                    syn::Stmt::Local(l) => Some(scan::pattern_names(&l.pat)),
                    _ => None,
                })
                .flatten()
                .collect();
            if bound.is_disjoint(body_names) {
                stmts.append(&mut inner);
                steps.append(&mut guards);
                item = next;
                continue;
            }
            match guards.pop() {
                // A filter: its condition read in a block, after its lets;
                // a condition carries no derivative.
                Some(Step::Guard { condition, kind }) => {
                    if let Some(Step::Lets(lets)) = guards.pop() {
                        inner = lets;
                    }
                    steps.push(Step::Lets(std::mem::take(stmts)));
                    steps.push(Step::Guard {
                        condition: syn::parse_quote!(::ad::stop_gradient({
                            #(#inner)*
                            #condition
                        })),
                        kind,
                    });
                }
                _ => {
                    // A `scan`'s state, declared before the loop.
                    steps.append(&mut guards);
                    // A tuple's items are assigned one by one from the
                    // block, to names declared before it.
                    let parts: Vec<Expr> = match &next {
                        Expr::Tuple(t) => t.elems.iter().cloned().collect(),
                        other => vec![other.clone()],
                    };
                    let names: Vec<Ident> = parts
                        .iter()
                        .map(|_| self.fresh_local("mapped", Span::call_site()))
                        .collect();
                    stmts.extend(
                        names
                            .iter()
                            .map(|n| -> syn::Stmt { syn::parse_quote!(let #n;) }),
                    );
                    stmts.push(syn::parse_quote!({
                        #(#inner)*
                        #(#names = #parts;)*
                    }));
                    item = match &next {
                        Expr::Tuple(_) => syn::parse_quote!((#(#names),*)),
                        _ => syn::parse_quote!(#(#names)*),
                    };
                }
            }
        }
        Ok(item)
    }

    fn chain_block(
        &mut self,
        m: &syn::ExprMethodCall,
        source: &Expr,
        stages: &[Stage],
        terminal: Terminal,
        span: Span,
    ) -> Result<Expr, ()> {
        // Active sources are read by index, and so are inactive ones whose
        // items borrow a local (`v.iter()`), which the reverse sweep could
        // not keep; a parameter's items it can.
        let index = self.fresh_numbered("item", |s| &mut s.consts);
        let mut lets = Vec::new();
        let indexed = self.source(source, false, &mut lets);
        let borrows_local = indexed.is_ok() && self.mentions_locals(source);
        let mut binder = self.binder();
        // `index` is the loop variable: an index, or the iterator's item.
        let (items, mut item) = if self.carries_derivative(source) || borrows_local {
            let source = indexed.map_err(|error| self.errors.push(error))?;
            let item = source.item(&syn::parse_quote!(#index));
            (Items::Indexed { len: source.len() }, item)
        } else {
            lets.clear();
            (Items::Iterator(source.clone()), syn::parse_quote!(#index))
        };
        // Each filter's condition guards what follows it, in an `if`.
        let mut steps: Vec<Step> = Vec::new();
        let mut stmts = Vec::new();
        item = self.apply_stages(stages, item, &mut binder, &mut stmts, &mut steps)?;
        let acc = self.fresh_local("acc", span);
        let turbofish = m.turbofish.as_ref().and_then(|t| match t.args.first() {
            Some(syn::GenericArgument::Type(ty)) if t.args.len() == 1 => Some(ty.clone()),
            _ => None,
        });
        let collects = matches!(terminal, Terminal::Collect);
        // Statements before and after the loop, inside the block.
        let (mut before, mut after): (Vec<syn::Stmt>, Vec<syn::Stmt>) = (Vec::new(), Vec::new());
        // A collected item's position: the index, or a count of the
        // iterator's items.
        let position = match &items {
            Items::Indexed { .. } => index.clone(),
            Items::Iterator(_) => self.fresh_local("position", span),
        };
        // A `fold` from a tuple keeps one accumulator per item (`fold((0.0,
        // 0.0), |(s, q), &v| (s + v, q + v * v))`), as a loop carries
        // names, not tuples.
        let tuple_start = match &terminal {
            Terminal::Fold { init, .. } => match super::without_parens(init) {
                Expr::Tuple(t) if t.elems.len() > 1 => Some(t),
                _ => None,
            },
            _ => None,
        };
        // A reduction's value, or `unwrap_or`'s default for no items.
        let mut reduced_or: Option<Expr> = None;
        let (declaration, value): (proc_macro2::TokenStream, Expr) = if let (
            Some(start),
            Terminal::Fold { f, .. },
        ) = (tuple_start, &terminal)
        {
            self.tuple_fold(start, f, item, &mut binder, &mut stmts, span)?
        } else {
            let (init, update): (Expr, syn::Stmt) = match terminal {
                Terminal::Sum => (
                    self.float_literal(turbofish.as_ref(), 0.0, span),
                    syn::parse_quote!(#acc += #item;),
                ),
                Terminal::Product => (
                    self.float_literal(turbofish.as_ref(), 1.0, span),
                    syn::parse_quote!(#acc *= #item;),
                ),
                Terminal::Fold { init, f } => {
                    let acc_path: Expr = syn::parse_quote!(#acc);
                    let next = self.apply(f, &[acc_path, item], &mut binder, &mut stmts)?;
                    // An unsuffixed start (`fold(0.5, ..)`) would leave the
                    // accumulator's type to inference, which generic rules do
                    // not pin.
                    let init = self.typed_float(init).unwrap_or_else(|| (*init).clone());
                    (init, syn::parse_quote!(#acc = #next;))
                }
                Terminal::Reduce { f, empty } => {
                    // A flag says whether the accumulator holds an item yet.
                    let started = self.fresh_local("started", span);
                    let acc_path: Expr = syn::parse_quote!(#acc);
                    let next =
                        self.apply(&f, &[acc_path, item.clone()], &mut binder, &mut stmts)?;
                    before.push(syn::parse_quote!(let mut #started = false;));
                    match empty {
                        Empty::Panics(message) => {
                            let message = match message {
                                Some(message) => quote::quote!("{}", #message),
                                None => {
                                    quote::quote!("called `Option::unwrap()` on a `None` value")
                                }
                            };
                            after.push(syn::parse_quote!(::core::assert!(#started, #message);));
                        }
                        Empty::Default(default) => {
                            let default =
                                self.typed_float(default).unwrap_or_else(|| default.clone());
                            reduced_or = Some(syn::parse_quote!(
                                if #started { #acc } else { #default }
                            ));
                        }
                    }
                    (
                        self.float_literal(None, 0.0, span),
                        syn::parse_quote!(if #started {
                            #acc = #next;
                        } else {
                            #acc = #item;
                            #started = true;
                        }),
                    )
                }
                // Into a `Vec`: pushed item by item, so a `filter` may drop some.
                Terminal::Collect if turbofish.as_ref().is_some_and(is_vec_type) => (
                    syn::parse_quote_spanned!(span=> ::std::vec::Vec::new()),
                    syn::parse_quote!(#acc.push(#item);),
                ),
                Terminal::Collect => {
                    if !steps.is_empty() {
                        self.errors.at(
                            &m.method,
                            "a chain over active values collects into an array whose length is known before the loop, and `filter`, `take_while` or `skip_while` makes it unknown: collect the kept indices first (`let keep: Vec<usize> = (0..n).filter(..).collect();`), then `keep.iter().map(|&i| ..).collect()`",
                        );
                        return Err(());
                    }
                    let zeros = self.collected_zeros(turbofish.as_ref(), &m.method)?;
                    let len: Expr = match &items {
                        Items::Indexed { len } => len.clone(),
                        Items::Iterator(iter) => {
                            syn::parse_quote!(::core::iter::Iterator::count(#iter))
                        }
                    };
                    (
                        syn::parse_quote_spanned!(span=> #zeros(#len)),
                        syn::parse_quote!(#acc[#position] = #item;),
                    )
                }
            };
            stmts.push(update);
            (
                quote::quote!(let mut #acc = #init;),
                reduced_or.take().unwrap_or_else(|| syn::parse_quote!(#acc)),
            )
        };
        let guard_flags = flags(&steps);
        let mut stmts = guarded(steps, stmts);
        binder.finish(&mut stmts);
        before.extend(guard_flags.declarations());
        stmts.extend(guard_flags.check(None));
        let head = match items {
            Items::Indexed { len } => quote_spanned!(span=> for #index in 0..#len),
            Items::Iterator(iter) if collects => {
                quote_spanned!(span=> for (#position, #index) in ::core::iter::Iterator::enumerate(#iter))
            }
            Items::Iterator(iter) => quote_spanned!(span=> for #index in #iter),
        };
        Ok(syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #(#before)*
            #declaration
            #head {
                #(#stmts)*
            }
            #(#after)*
            #value
        }))
    }

    /// `outer.flat_map(|p| inner).stages.sum()` (or `product()`,
    /// `fold(init, f)`; `flatten()` is `flat_map(|p| p.iter())`) as a loop
    /// over `outer` that adds each item's inner chain, itself a chain this
    /// file lowers:
    ///
    /// ```text
    /// { let mut acc = 0.0; for p in outer { acc = acc + inner.stages.sum::<F>(); } acc }
    /// { let mut acc = init; for p in outer { acc = inner.stages.fold(acc, f); } acc }
    /// ```
    ///
    /// `None` when `source` is not such a `flat_map`.
    fn flat_mapped(
        &mut self,
        m: &syn::ExprMethodCall,
        source: &Expr,
        terminal: &Terminal,
    ) -> Option<Result<Expr, ()>> {
        let Expr::MethodCall(flat) = source else {
            return None;
        };
        let span = m.method.span();
        let (pat, body) = match self.flattened(flat)? {
            Ok(parts) => parts,
            Err(()) => return Some(Err(())),
        };
        let outer = &flat.receiver;
        let inner = replaced(&m.receiver, source, &body);
        let acc = self.fresh_local("acc", span);
        let turbofish = m.turbofish.as_ref().and_then(|t| match t.args.first() {
            Some(syn::GenericArgument::Type(ty)) if t.args.len() == 1 => Some(ty.clone()),
            _ => None,
        });
        let sum_type = turbofish
            .clone()
            .or_else(|| self.scalar_type.as_ref().map(|t| syn::parse_quote!(#t)));
        let (init, update): (Expr, Expr) = match (terminal, &sum_type) {
            (Terminal::Sum, Some(ty)) => (
                self.float_literal(turbofish.as_ref(), 0.0, span),
                syn::parse_quote_spanned!(span=> #acc + #inner.sum::<#ty>()),
            ),
            (Terminal::Product, Some(ty)) => (
                self.float_literal(turbofish.as_ref(), 1.0, span),
                syn::parse_quote_spanned!(span=> #acc * #inner.product::<#ty>()),
            ),
            (Terminal::Fold { init, f }, _) => (
                self.typed_float(init).unwrap_or_else(|| (*init).clone()),
                syn::parse_quote_spanned!(span=> #inner.fold(#acc, #f)),
            ),
            (Terminal::Sum | Terminal::Product, None) => {
                self.errors.at(
                    &m.method,
                    format!(
                        "the `{}` of a `flat_map` over active values needs its type: `{}::<f64>()`",
                        m.method, m.method
                    ),
                );
                return Some(Err(()));
            }
            _ => {
                self.errors.at(
                    &flat.method,
                    "a `flat_map` over active values ends in `sum()`, `product()` or `fold(init, f)`: write the loops out for other ends",
                );
                return Some(Err(()));
            }
        };
        Some(Ok(syn::parse_quote_spanned!(span=> {
            let mut #acc = #init;
            for #pat in #outer {
                #acc = #update;
            }
            #acc
        })))
    }

    /// `x.iter().map(f).sum()` as `x.mapv(f).sum()` where `x` is an array
    /// (a name that is not a slice or `Vec`, or a computed value, but not a
    /// struct field) that may have any number of axes; `x.iter().sum()` as
    /// `x.sum()`.
    fn as_mapv(&self, source: &Expr, stages: &[Stage], span: Span) -> Option<Expr> {
        let Expr::MethodCall(iter) = source else {
            return None;
        };
        if iter.method != "iter" || !iter.args.is_empty() {
            return None;
        }
        let array = &*iter.receiver;
        // A computed value is an array: functions return floats or arrays.
        let named_array = matches!(array, Expr::Path(_))
            && self.sequence_named(array).is_none()
            && !self.names_vec_local(array)
            && !self.one_axis(array);
        let is_array =
            (named_array || !super::expr::is_place(array)) && self.carries_derivative(array);
        if !is_array {
            return None;
        }
        match stages {
            [] => Some(syn::parse_quote_spanned!(span=> #array.sum())),
            [Stage::Map(Expr::Closure(c))] => {
                let closure = by_value(c)?;
                Some(syn::parse_quote_spanned!(span=> #array.mapv(#closure).sum()))
            }
            _ => None,
        }
    }

    /// `x.iter().map(f).collect()` as `x.mapv(f)` where `x` is a 1-D
    /// array parameter: one instruction, where the loop would write each
    /// element.
    fn collected_mapv(&self, source: &Expr, stages: &[Stage], span: Span) -> Option<Expr> {
        let Expr::MethodCall(iter) = source else {
            return None;
        };
        let array = &*iter.receiver;
        if iter.method != "iter" || !iter.args.is_empty() || self.array_rank(array) != Some(1) {
            return None;
        }
        let [Stage::Map(Expr::Closure(c))] = stages else {
            return None;
        };
        let closure = by_value(c)?;
        Some(syn::parse_quote_spanned!(span=> #array.mapv(#closure)))
    }

    fn binder(&self) -> Binder {
        let inactive_locals = self
            .env
            .iter()
            .filter(|(_, b)| matches!(b, Binding::Const { param: false, .. }))
            .map(|(n, _)| n.clone())
            .collect();
        Binder {
            inactive_locals,
            copied: Vec::new(),
            windows: Vec::new(),
            states: HashSet::new(),
        }
    }

    /// A `fold` from a tuple: one accumulator per item, declared from the
    /// tuple's items, and a loop body that binds the closure's next tuple
    /// and assigns its items to them. The declaration and the chain's
    /// value, the accumulators' tuple.
    fn tuple_fold(
        &mut self,
        start: &syn::ExprTuple,
        f: &Expr,
        item: Expr,
        binder: &mut Binder,
        stmts: &mut Vec<syn::Stmt>,
        span: Span,
    ) -> Result<(proc_macro2::TokenStream, Expr), ()> {
        let accs: Vec<Ident> = (0..start.elems.len())
            .map(|_| self.fresh_local("acc", span))
            .collect();
        let nexts: Vec<Ident> = (0..start.elems.len())
            .map(|_| self.fresh_local("next", span))
            .collect();
        let starts: Vec<Expr> = start
            .elems
            .iter()
            .map(|e| self.typed_float(e).unwrap_or_else(|| e.clone()))
            .collect();
        let accs_now: Expr = syn::parse_quote!((#(#accs),*));
        let next = self.apply(f, &[accs_now.clone(), item], binder, stmts)?;
        stmts.push(syn::parse_quote!(let (#(#nexts),*) = #next;));
        for (a, n) in accs.iter().zip(&nexts) {
            stmts.push(syn::parse_quote!(#a = #n;));
        }
        Ok((
            quote::quote!(let (#(mut #accs),*) = (#(#starts),*);),
            accs_now,
        ))
    }

    /// `f(args)` for a closure (its parameters bound to `args`) or a path.
    fn apply(
        &mut self,
        f: &Expr,
        args: &[Expr],
        binder: &mut Binder,
        stmts: &mut Vec<syn::Stmt>,
    ) -> Result<Expr, ()> {
        match f {
            Expr::Closure(c) => {
                if c.inputs.len() != args.len() {
                    self.errors.at(
                        &c.inputs,
                        format!("this closure takes {} parameter(s) here", args.len()),
                    );
                    return Err(());
                }
                self.plain_closure_body(c)?;
                // An argument that reads a name the closure's parameters
                // bind again (`.map(|q| q.cos())` before `.map(|((q, p),
                // b)| ..)`) is evaluated first, into a name of its own: the
                // parts of a tuple are bound one after another.
                let bound: HashSet<String> =
                    c.inputs.iter().flat_map(scan::pattern_names).collect();
                for (pat, arg) in c.inputs.iter().zip(args) {
                    let arg = self.unshadowed(arg, &bound, stmts);
                    binder.bind(pat, &arg, stmts);
                }
                let body = &c.body;
                Ok(syn::parse_quote!(#body))
            }
            Expr::Path(_) => Ok(syn::parse_quote!(#f(#(#args),*))),
            other => {
                self.errors.at(
                    other,
                    "give the iterator adaptor a closure `|v| ...` or a function's path",
                );
                Err(())
            }
        }
    }

    /// `arg` with each part (of a tuple, under a reference) that reads one
    /// of `bound` evaluated into a fresh local first.
    fn unshadowed(
        &mut self,
        arg: &Expr,
        bound: &HashSet<String>,
        stmts: &mut Vec<syn::Stmt>,
    ) -> Expr {
        match arg {
            Expr::Tuple(t) => {
                let mut t = t.clone();
                for e in t.elems.iter_mut() {
                    *e = self.unshadowed(e, bound, stmts);
                }
                Expr::Tuple(t)
            }
            Expr::Paren(p) => self.unshadowed(&p.expr, bound, stmts),
            Expr::Reference(r) if r.mutability.is_none() => {
                let inner = self.unshadowed(&r.expr, bound, stmts);
                syn::parse_quote!(&#inner)
            }
            Expr::Path(_) => arg.clone(),
            _ if scan::token_names(&quote::ToTokens::to_token_stream(arg)).is_disjoint(bound) => {
                arg.clone()
            }
            _ => {
                let name = self.fresh_local("argument", arg.span());
                stmts.push(syn::parse_quote!(let #name = #arg;));
                syn::parse_quote!(#name)
            }
        }
    }

    /// A `scan` closure `|st, v| { ..; Some(item) }` as a fresh state name,
    /// the body's statements with `*st` read as that name, and the item.
    /// The state is a name only through `*st`; the closure ends in
    /// `Some(..)` (to stop early, a `take_while` after the `scan` does).
    fn scan_closure(&mut self, c: &syn::ExprClosure) -> Result<(Ident, Vec<syn::Stmt>, Expr), ()> {
        let param = match c.inputs.iter().collect::<Vec<_>>().as_slice() {
            [state, _] => match strip_type(state) {
                Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => Some(p.ident.clone()),
                _ => None,
            },
            _ => None,
        };
        let Some(param) = param else {
            self.errors.at(
                &c.inputs,
                "a `scan` closure over active values takes its state by name and the item: `|state, v| { *state += v; Some(*state) }`",
            );
            return Err(());
        };
        self.plain_closure_body(c)?;
        let state = self.fresh_local("state", param.span());
        let mut body = (*c.body).clone();
        let mut renamed = StateReads {
            param: &param,
            state: &state,
            other_use: None,
        };
        syn::visit_mut::VisitMut::visit_expr_mut(&mut renamed, &mut body);
        if let Some(span) = renamed.other_use {
            self.errors.at_span(
                span,
                format!("a `scan` closure over active values reads and assigns its state as `*{param}`: the state is a value carried by the loop, not a reference to pass on"),
            );
            return Err(());
        }
        let (lets, tail) = match body {
            Expr::Block(b) if b.label.is_none() => {
                let mut stmts = b.block.stmts;
                match stmts.pop() {
                    Some(syn::Stmt::Expr(tail, None)) => (stmts, tail),
                    _ => (stmts, Expr::Verbatim(Default::default())),
                }
            }
            other => (Vec::new(), other),
        };
        match tail {
            Expr::Call(call)
                if call.args.len() == 1
                    && matches!(&*call.func, Expr::Path(f) if f.path.is_ident("Some")) =>
            {
                Ok((state, lets, call.args[0].clone()))
            }
            _ => {
                self.errors.at(
                    &c.body,
                    "a `scan` closure over active values ends in `Some(item)`: to stop early, put a `take_while` after the `scan`",
                );
                Err(())
            }
        }
    }

    /// A closure body spliced into a loop must not `return` (which would
    /// return from the function instead) or be `async`.
    fn plain_closure_body(&self, c: &syn::ExprClosure) -> Result<(), ()> {
        if contains_return(&c.body) || c.asyncness.is_some() {
            self.errors.at(
                c,
                "a closure given to an iterator adaptor over active values cannot `return`: write the loop out",
            );
            return Err(());
        }
        Ok(())
    }

    /// The constructor of the array `collect()` fills: of the turbofish's
    /// type, else of the signature's float type.
    fn collected_zeros(&self, turbofish: Option<&syn::Type>, at: &Ident) -> Result<Expr, ()> {
        match turbofish {
            Some(ty) => Ok(syn::parse_quote_spanned!(at.span()=> <#ty>::zeros)),
            None => Ok(match &self.scalar_type {
                Some(t) => {
                    syn::parse_quote_spanned!(at.span()=> ::ad::ndarray::Array1::<#t>::zeros)
                }
                None => syn::parse_quote_spanned!(at.span()=> ::ad::ndarray::Array1::zeros),
            }),
        }
    }

    /// An unsuffixed float literal (negated or not) as one of the
    /// signature's float type.
    fn typed_float(&self, e: &Expr) -> Option<Expr> {
        match e {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) if f.suffix().is_empty() => {
                Some(self.float_literal(None, f.base10_parse().ok()?, f.span()))
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                let inner = self.typed_float(&u.expr)?;
                Some(syn::parse_quote!(-#inner))
            }
            Expr::Paren(p) => self.typed_float(&p.expr),
            _ => None,
        }
    }

    /// `0.0` (or `1.0`) of the sum's type: the turbofish's, or the float
    /// type the signature names if it names one, else a literal.
    fn float_literal(&self, turbofish: Option<&syn::Type>, value: f64, span: Span) -> Expr {
        let literal = syn::LitFloat::new(&format!("{value:?}"), span);
        let ty = turbofish
            .cloned()
            .or_else(|| self.scalar_type.as_ref().map(|t| syn::parse_quote!(#t)));
        match ty {
            Some(ty) if super::is_float_type(&ty) => {
                let suffixed = format!("{value:?}{}", quote::ToTokens::to_token_stream(&ty));
                Expr::Lit(syn::ExprLit {
                    attrs: Vec::new(),
                    lit: syn::Lit::Float(syn::LitFloat::new(&suffixed, span)),
                })
            }
            Some(ty) => syn::parse_quote_spanned!(span=> <#ty as ::ad::Float>::of(#literal)),
            None => syn::parse_quote!(#literal),
        }
    }
}

/// The chain below a terminal: its source and its `map`/`filter` stages, in
/// order.
/// The chain with each `map` that a positional adaptor follows moved out
/// past it, so that the adaptors reach the source, which is read by
/// index: `src.map(f).skip(k)` is `src.skip(k).map(f)` (and so `take`,
/// `step_by`, `rev`), `src.map(f).enumerate()` is
/// `src.enumerate().map(|(i, v)| (i, f(v)))`, `src.map(f).zip(o)` is
/// `src.zip(o).map(|(v, w)| (f(v), w))`. A `map` maps item to item, and
/// its closure has no effects, so the items are the same. `None` when
/// nothing moves.
fn maps_moved_out(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    // The zipped side's `map` first: `src.zip(o.map(g))` is
    // `src.zip(o).map(|(v, w)| (v, g(w)))`.
    if let (true, [other]) = (
        outer.method == "zip",
        &outer.args.iter().collect::<Vec<_>>()[..],
    ) {
        let other = maps_moved_out(other).unwrap_or_else(|| (*other).clone());
        if let Expr::MethodCall(map) = &other {
            if let (true, [g]) = (
                map.method == "map",
                &map.args.iter().collect::<Vec<_>>()[..],
            ) {
                if let Some((pat, body)) = applied(g) {
                    let (src, o) = (&outer.receiver, &map.receiver);
                    let span = outer.method.span();
                    let zipped: Expr = syn::parse_quote_spanned!(span=> #src.zip(#o));
                    let zipped = maps_moved_out(&zipped).unwrap_or(zipped);
                    let src = maps_moved_out(src).unwrap_or_else(|| (**src).clone());
                    let (kept_pat, kept) = passed_through(&src, "__ad_zipping");
                    return Some(syn::parse_quote_spanned!(span=>
                        #zipped.map(|(#kept_pat, #pat)| (#kept, #body))
                    ));
                }
            }
        }
    }
    let inner = maps_moved_out(&outer.receiver);
    let receiver = inner.as_ref().unwrap_or(&outer.receiver);
    let moved = match receiver {
        Expr::MethodCall(map) if map.method == "map" && map.args.len() == 1 => {
            moved_past(outer, &map.receiver, &map.args[0])
        }
        _ => None,
    };
    match (moved, inner) {
        (Some(moved), _) => Some(moved),
        (None, Some(inner)) => {
            let mut outer = outer.clone();
            *outer.receiver = inner;
            Some(Expr::MethodCall(outer))
        }
        (None, None) => None,
    }
}

/// `outer` (a positional adaptor) applied to `src` before the `map(f)`
/// that it followed.
fn moved_past(outer: &syn::ExprMethodCall, src: &Expr, f: &Expr) -> Option<Expr> {
    let span = outer.method.span();
    let method = &outer.method;
    let args = &outer.args;
    let src = maps_moved_out(src).unwrap_or_else(|| src.clone());
    let (pat, body) = applied(f)?;
    match (method.to_string().as_str(), args.len()) {
        ("skip" | "take" | "step_by", 1) | ("rev", 0) => {
            Some(syn::parse_quote_spanned!(span=> #src.#method(#args).map(#f)))
        }
        ("enumerate", 0) => Some(syn::parse_quote_spanned!(span=>
            #src.enumerate().map(|(__ad_position, #pat)| (__ad_position, #body))
        )),
        ("zip", 1) => {
            let (other_pat, other) = passed_through(&outer.args[0], "__ad_zipped");
            Some(syn::parse_quote_spanned!(span=>
                #src.zip(#args).map(|(#pat, #other_pat)| (#body, #other))
            ))
        }
        _ => None,
    }
}

/// A pattern for the items of `chain` and the expression that passes
/// them on, as tuples of names where the chain's items are tuples
/// (`enumerate`, `zip`, a `map` to a tuple): a tuple with an index in it
/// is not a value to differentiate, its parts are.
fn passed_through(chain: &Expr, base: &str) -> (Pat, Expr) {
    fn shape(e: &Expr) -> Option<Vec<Option<Expr>>> {
        match e {
            Expr::Paren(p) => shape(&p.expr),
            Expr::MethodCall(m) => match (m.method.to_string().as_str(), m.args.len()) {
                ("enumerate", 0) => Some(vec![None, shape_item(&m.receiver)]),
                ("zip", 1) => Some(vec![shape_item(&m.receiver), shape_item(&m.args[0])]),
                ("skip" | "take" | "step_by", 1) | ("rev", 0) => shape(&m.receiver),
                ("map", 1) => match &m.args[0] {
                    Expr::Closure(c) => match &*c.body {
                        Expr::Tuple(t) => Some(t.elems.iter().map(tuple_of).collect()),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }
    // An item's shape, as an expression standing for it (`(_, _)`).
    fn shape_item(e: &Expr) -> Option<Expr> {
        shape(e).map(|parts| {
            let parts = parts
                .into_iter()
                .map(|p| p.unwrap_or_else(|| syn::parse_quote!(_)));
            syn::parse_quote!((#(#parts),*))
        })
    }
    fn tuple_of(e: &Expr) -> Option<Expr> {
        match e {
            Expr::Tuple(t) => {
                let parts = t
                    .elems
                    .iter()
                    .map(|p| tuple_of(p).unwrap_or_else(|| syn::parse_quote!(_)));
                Some(syn::parse_quote!((#(#parts),*)))
            }
            _ => None,
        }
    }
    // Names for a shape: `(_, (_, _))` is `(b_0, (b_1, b_2))`.
    fn named(shape: &Expr, base: &str, next: &mut usize) -> Expr {
        match shape {
            Expr::Tuple(t) => {
                let parts = t.elems.iter().map(|p| named(p, base, next));
                syn::parse_quote!((#(#parts),*))
            }
            _ => {
                let name = quote::format_ident!("{}_{}", base, *next);
                *next += 1;
                syn::parse_quote!(#name)
            }
        }
    }
    let names = match shape_item(chain) {
        Some(shape) => named(&shape, base, &mut 0),
        None => {
            let name = Ident::new(base, Span::call_site());
            syn::parse_quote!(#name)
        }
    };
    let pat: Pat = syn::parse_quote!(#names);
    (pat, names)
}

/// A `map`'s function as a parameter and the body that applies it: a
/// closure's own, or `__ad_mapped` and a call of a path.
fn applied(f: &Expr) -> Option<(Pat, Expr)> {
    match f {
        Expr::Closure(c) if c.inputs.len() == 1 && !contains_return(&c.body) => {
            Some((c.inputs[0].clone(), (*c.body).clone()))
        }
        Expr::Path(_) => Some((
            syn::parse_quote!(__ad_mapped),
            syn::parse_quote!(#f(__ad_mapped)),
        )),
        _ => None,
    }
}

fn split_stages(mut e: &Expr) -> (&Expr, Vec<Stage<'_>>) {
    let mut stages = Vec::new();
    loop {
        match e {
            Expr::MethodCall(m) if m.args.len() == 2 && m.method == "scan" => {
                let Expr::Closure(c) = &m.args[1] else { break };
                stages.push(Stage::Scan(&m.args[0], c));
                e = &m.receiver;
            }
            Expr::MethodCall(m) if m.args.len() == 1 && m.method == "map" => {
                stages.push(Stage::Map(&m.args[0]));
                e = &m.receiver;
            }
            Expr::MethodCall(m)
                if m.args.len() == 1
                    && matches!(
                        m.method.to_string().as_str(),
                        "filter" | "take_while" | "skip_while"
                    ) =>
            {
                match &m.args[0] {
                    Expr::Closure(c) if m.method == "filter" => stages.push(Stage::Filter(c)),
                    Expr::Closure(c) if m.method == "take_while" => {
                        stages.push(Stage::TakeWhile(c))
                    }
                    Expr::Closure(c) => stages.push(Stage::SkipWhile(c)),
                    _ => break,
                }
                e = &m.receiver;
            }
            // After a `filter` (or a `map` to references), a stage; else
            // part of the source, which reads the elements themselves.
            Expr::MethodCall(m)
                if m.args.is_empty()
                    && (m.method == "copied" || m.method == "cloned")
                    && split_stages(&m.receiver).1.last().is_some() =>
            {
                stages.push(Stage::Copied);
                e = &m.receiver;
            }
            _ => break,
        }
    }
    stages.reverse();
    (e, stages)
}

/// The chain `e` (stages over `source`) with `source` replaced by `with`:
/// the stages after a `flat_map`, over its closure's iterator.
fn replaced(e: &Expr, source: &Expr, with: &Expr) -> Expr {
    match e {
        // A chain stays one, for `split_stages` to read; anything else is
        // parenthesized before its stages.
        e if std::ptr::eq(e, source) => match with {
            Expr::MethodCall(_) | Expr::Path(_) => with.clone(),
            with => syn::parse_quote!((#with)),
        },
        Expr::MethodCall(call) => {
            let mut m = call.clone();
            *m.receiver = replaced(&call.receiver, source, with);
            Expr::MethodCall(m)
        }
        e => e.clone(),
    }
}

/// `std::iter::zip(a, b)` (or `core::iter::zip`, `iter::zip`, a bare
/// `zip` imported from there), which is `a.into_iter().zip(b)`: its two
/// arguments.
pub(super) fn zip_call(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Call(c) = e else { return None };
    let Expr::Path(f) = &*c.func else { return None };
    let names: Vec<String> = f
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let from_iter = match names.as_slice() {
        [zip] => zip == "zip",
        [.., module, zip] => module == "iter" && zip == "zip",
        [] => false,
    };
    match (from_iter && f.qself.is_none(), c.args.len()) {
        (true, 2) => Some((&c.args[0], &c.args[1])),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// `for o in y.iter_mut() { body }` over a local array (or `Vec` of
    /// floats) with active values in it or going in: a loop over `y`'s
    /// indices in which `*o` (and `o.method()`) is the element `y[index]`,
    /// so `*o = e` is an element write. `y.iter_mut().enumerate()` counts
    /// the indices.
    ///
    /// Input:  `for o in y.iter_mut() { *o = o.tanh(); }`
    /// Output: `for ix in indices(y.raw_dim()) { y[ix] = y[ix].tanh(); }`
    fn written_items_for(&mut self, f: &syn::ExprForLoop) -> Option<Result<Expr, ()>> {
        // `y.iter_mut().enumerate()`: the count bound too.
        let (m, pat) = match (&*f.expr, &*f.pat) {
            (Expr::MethodCall(e), Pat::Tuple(t))
                if e.method == "enumerate" && e.args.is_empty() && t.elems.len() == 2 =>
            {
                let Expr::MethodCall(m) = &*e.receiver else {
                    return None;
                };
                (m, Some((&t.elems[0], &t.elems[1])))
            }
            (Expr::MethodCall(m), _) => (m, None),
            _ => return None,
        };
        let Expr::Path(array) = &*m.receiver else {
            return None;
        };
        let array = array.path.get_ident()?;
        let body = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: f.body.clone(),
        });
        if m.method != "iter_mut"
            || !m.args.is_empty()
            || !(self.carries_derivative(&m.receiver) || self.carries_derivative(&body))
        {
            return None;
        }
        let (count, element) = match pat {
            Some((count, element)) => (Some(count), element),
            None => (None, &*f.pat),
        };
        let Pat::Ident(element) = strip_type(element) else {
            self.errors.at(&f.pat, "a loop over `iter_mut()` of active values takes each element by a name, `o`, and writes it as `*o`");
            return Some(Err(()));
        };
        let index = self.fresh_local("index", m.method.span());
        let mut writes = super::constructors::ElementWrites {
            element: &element.ident,
            place: syn::parse_quote_spanned!(m.method.span()=> #array[#index]),
            other_use: None,
        };
        let mut block = f.body.clone();
        syn::visit_mut::VisitMut::visit_block_mut(&mut writes, &mut block);
        if let Some(at) = writes.other_use {
            self.errors.at(at, format!("an element of `iter_mut()` over active values is used as `*{0}` (or `{0}.method()`) only: copy it, `let v = *{0};`", element.ident));
            return Some(Err(()));
        }
        let label = &f.label;
        let indices = if self.names_vec_local(&m.receiver) {
            quote::quote!(0..#array.len())
        } else {
            quote::quote!(::ad::ndarray::indices(#array.raw_dim()))
        };
        Some(Ok(match count {
            Some(count) => syn::parse_quote_spanned!(f.for_token.span=>
                #label for (#count, #index) in (#indices).enumerate() #block
            ),
            None => syn::parse_quote_spanned!(f.for_token.span=>
                #label for #index in #indices #block
            ),
        }))
    }
}

/// Whether `e` is an iterator: a range or an adaptor call.
pub(super) fn is_adaptor(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_adaptor(&p.expr),
        Expr::Range(_) => true,
        e if zip_call(e).is_some() => true,
        Expr::MethodCall(m) => matches!(
            m.method.to_string().as_str(),
            "iter"
                | "into_iter"
                | "scan"
                | "copied"
                | "cloned"
                | "zip"
                | "chain"
                | "enumerate"
                | "rev"
                | "step_by"
                | "skip"
                | "take"
                | "rows"
                | "columns"
                | "outer_iter"
                | "axis_iter"
                | "windows"
                | "exact_chunks"
                | "chunks"
                | "chunks_exact"
                | "axis_chunks_iter"
        ),
        _ => false,
    }
}

fn single_param(c: &syn::ExprClosure) -> Option<&Pat> {
    (c.inputs.len() == 1).then(|| &c.inputs[0])
}

pub(super) fn strip_type(p: &Pat) -> &Pat {
    match p {
        Pat::Type(t) => strip_type(&t.pat),
        Pat::Paren(p) => strip_type(&p.pat),
        p => p,
    }
}

/// How patterns are bound to items.
struct Binder {
    /// The body's inactive locals: a name bound to a reference into one
    /// (`&v[k]`) is bound to a copy instead, as the reverse sweep cannot
    /// keep a borrow of a local.
    inactive_locals: HashSet<String>,
    /// The names bound to copies: `*v` in the user's code reads `v`.
    copied: Vec<syn::Ident>,
    /// The names bound to windows or chunks of an array.
    windows: Vec<super::windows::Window>,
    /// The states of the chain's `scan`s: values, which a later stage's
    /// closure sees by reference.
    states: HashSet<String>,
}

impl Binder {
    /// `let pat = item;`, destructured where both are tuples or references
    /// so that `|(&a, &b)|` on `(&x[k], &y[k])` reads `a = x[k]`, `b = y[k]`.
    fn bind(&mut self, pat: &Pat, item: &Expr, out: &mut Vec<syn::Stmt>) {
        match (pat, item) {
            (Pat::Paren(p), _) => self.bind(&p.pat, item, out),
            (_, Expr::Paren(e)) => self.bind(pat, &e.expr, out),
            (Pat::Reference(r), Expr::Reference(e)) if r.mutability.is_none() => {
                self.bind(&r.pat, &e.expr, out)
            }
            // A chain's item, one of two references.
            (Pat::Reference(r), Expr::If(_)) if r.mutability.is_none() => {
                self.bind(&r.pat, &super::sources::dereferenced(item.clone()), out)
            }
            (Pat::Tuple(t), Expr::Tuple(e)) if t.elems.len() == e.elems.len() => {
                for (p, e) in t.elems.iter().zip(&e.elems) {
                    self.bind(p, e, out);
                }
            }
            (Pat::Wild(_), _) => {}
            // A window (`x.slice(s![a..b])`), which `finish` may read
            // element by element instead; of an inactive local, owned.
            (Pat::Ident(p), _)
                if p.subpat.is_none()
                    && p.by_ref.is_none()
                    && super::windows::window_item(item).is_some() =>
            {
                let (array, start, end) = super::windows::window_item(item).expect("matched");
                let value: Expr = if self.reads_inactive_local(&array) {
                    syn::parse_quote!(#item.to_owned())
                } else {
                    item.clone()
                };
                self.windows.push(super::windows::Window {
                    name: p.ident.clone(),
                    item: quote::ToTokens::to_token_stream(&value).to_string(),
                    array,
                    start,
                    end,
                });
                out.push(syn::parse_quote!(let #p = #value;));
            }
            // A lane of an inactive local (`v.row(k)`): owned.
            (Pat::Ident(p), Expr::MethodCall(m))
                if p.subpat.is_none()
                    && p.by_ref.is_none()
                    && self.reads_inactive_local(&m.receiver) =>
            {
                out.push(syn::parse_quote!(let #p = #item.to_owned();));
            }
            // An element of an inactive local: a copy if it is `Copy`,
            // else a reference (`rules::Kept`).
            (Pat::Ident(p), Expr::Reference(_))
                if p.subpat.is_none() && p.by_ref.is_none() && self.reads_inactive_local(item) =>
            {
                let mut value = item;
                while let Expr::Reference(r) = value {
                    value = &r.expr;
                }
                out.push(syn::parse_quote!(let #p = {
                    use ::ad::__private::rules::{KeptCopy as _, KeptRef as _};
                    (&&::ad::__private::rules::Kept(&#value)).kept()
                };));
                self.copied.push(p.ident.clone());
            }
            // A reference to a `scan`'s state, its item: the state's value,
            // which `*p` reads as `p` (a reference to it would stand for
            // the value itself, and `*p` dereference a float).
            (Pat::Ident(p), Expr::Reference(r))
                if p.subpat.is_none()
                    && p.by_ref.is_none()
                    && r.mutability.is_none()
                    && matches!(&*r.expr, Expr::Path(path)
                        if path.path.get_ident().is_some_and(|i| self.states.contains(&i.to_string()))) =>
            {
                let value = &r.expr;
                out.push(syn::parse_quote!(let #p = #value;));
                self.copied.push(p.ident.clone());
            }
            _ => out.push(syn::parse_quote!(let #pat = #item;)),
        }
    }

    /// Whether `item` is a reference into an inactive local (`&&v[k]`).
    fn reads_inactive_local(&self, item: &Expr) -> bool {
        super::place_root(item, false)
            .is_some_and(|i| self.inactive_locals.contains(&i.to_string()))
    }

    /// The loop body `stmts` reading `*v` as `v` for the names bound to
    /// copies, statement by statement (the body's own lets bind them).
    fn finish(&self, stmts: &mut Vec<syn::Stmt>) {
        for window in &self.windows {
            super::windows::read_by_element(stmts, window);
        }
        if self.copied.is_empty() {
            return;
        }
        let names: HashSet<String> = self.copied.iter().map(|n| n.to_string()).collect();
        for stmt in stmts {
            *stmt = scan::rename_stmt_with_values(stmt, &scan::Renames::new(), &names).0;
        }
    }
}

/// A closure over references to elements (`iter().map`'s, ndarray's
/// `map`'s) as one over their values, for `mapv`: `|&v| body` is
/// `|v| body`, and `|v| body` reads `*v` as `v`.
pub(super) fn by_value(c: &syn::ExprClosure) -> Option<Expr> {
    single_param(c)?;
    let (params, body) = params_by_value(c)?;
    Some(syn::parse_quote!(|#(#params)*| #body))
}

/// A closure whose parameters are references (`|&a, b|`), as names bound
/// to the values and a body that reads them so (`*b` is `b`); `None` if a
/// parameter is another pattern or the body returns.
pub(super) fn params_by_value(c: &syn::ExprClosure) -> Option<(Vec<Ident>, Expr)> {
    let mut params = Vec::new();
    let mut referenced = HashSet::new();
    for pat in &c.inputs {
        match strip_type(pat) {
            Pat::Reference(r) => match strip_type(&r.pat) {
                Pat::Ident(p) if p.subpat.is_none() => params.push(p.ident.clone()),
                _ => return None,
            },
            Pat::Ident(p) if p.subpat.is_none() => {
                params.push(p.ident.clone());
                referenced.insert(p.ident.to_string());
            }
            _ => return None,
        }
    }
    if contains_return(&c.body) {
        return None;
    }
    // An `iter()` closure's parameter is a reference, a `mapv` closure's
    // a value.
    let body = without_derefs(&c.body, &referenced).0;
    Some((params, body))
}

/// Whether `block` has a `break` of its own loop: one outside the loops
/// and closures inside it.
fn breaks(block: &syn::Block) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 = true;
        }
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_block(&mut finder, block);
    finder.0
}

pub(super) fn contains_return(e: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, e);
    finder.0
}

/// For a closure parameter that is a name (`|v|`) and a body that
/// dereferences it (`*v > 0.0`): the name, and the body reading `*v` as
/// `v`.
fn by_value_condition(pat: &Pat, body: &Expr) -> Option<(Ident, Expr)> {
    let Pat::Ident(p) = strip_type(pat) else {
        return None;
    };
    if p.subpat.is_some() || p.by_ref.is_some() {
        return None;
    }
    let names = HashSet::from([p.ident.to_string()]);
    let read = without_derefs(body, &names).0;
    let changed = quote::ToTokens::to_token_stream(&read).to_string()
        != quote::ToTokens::to_token_stream(body).to_string();
    changed.then(|| (p.ident.clone(), read))
}

/// `e` with `*v` and `**v` read as `v` for each of `names` (the renamer's
/// reading of values generated code holds, with nothing renamed).
fn without_derefs(e: &Expr, names: &HashSet<String>) -> (Expr, Vec<Ident>) {
    scan::rename_expr_with_values(e, &scan::Renames::new(), names)
}

/// The number of axes an array type names (`Array2<f64>`, `&Array1<F>`,
/// `ArrayView<F, Ix3>`), where it says.
pub(super) fn array_rank(ty: &syn::Type) -> Option<usize> {
    let ty = match ty {
        syn::Type::Reference(r) => &*r.elem,
        ty => ty,
    };
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let base = ["ArrayView", "ArcArray", "CowArray", "Array"]
        .into_iter()
        .find(|b| name.starts_with(b))?;
    match &name[base.len()..] {
        "" => {
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            let Some(syn::GenericArgument::Type(syn::Type::Path(d))) = args.args.iter().nth(1)
            else {
                return None;
            };
            let d = d.path.segments.last()?.ident.to_string();
            d.strip_prefix("Ix")?.parse().ok()
        }
        "D" => None,
        digits => digits.parse().ok(),
    }
}

/// `Vec<T>` (or `Vec<_>`), as a turbofish or annotation names it.
pub(super) fn is_vec_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Vec"))
}

/// The flags of a chain's `take_while`s and `skip_while`s.
struct Flags {
    stops: Vec<Ident>,
    skips: Vec<Ident>,
    states: Vec<(Ident, Expr)>,
}

impl Flags {
    /// `let mut stop = false;` and `let mut skipping = true;`, before the
    /// loop.
    fn declarations(&self) -> impl Iterator<Item = syn::Stmt> + '_ {
        let stops = self
            .stops
            .iter()
            .map(|f| syn::parse_quote!(let mut #f = false;));
        let states = self
            .states
            .iter()
            .map(|(s, init)| syn::parse_quote!(let mut #s = #init;));
        stops
            .chain(
                self.skips
                    .iter()
                    .map(|f| syn::parse_quote!(let mut #f = true;)),
            )
            .chain(states)
    }

    /// `if stop { break; }`, or `if exit || stop { break; }` with the
    /// check of a body whose exits were desugared: the last statement of
    /// the loop's body, read after each iteration as a desugared `break`
    /// is (`exits.rs`), so that every iteration that ran saves its record.
    fn check(&self, exit: Option<&Expr>) -> Option<syn::Stmt> {
        let stops = &self.stops;
        match exit {
            Some(exit) => Some(syn::parse_quote!(if #exit #(|| #stops)* { break; })),
            None if stops.is_empty() => None,
            None => Some(syn::parse_quote!(if #(#stops)||* { break; })),
        }
    }
}

fn flags(steps: &[Step]) -> Flags {
    let mut flags = Flags {
        stops: Vec::new(),
        skips: Vec::new(),
        states: Vec::new(),
    };
    for step in steps {
        match step {
            Step::Guard {
                kind: Guard::TakeWhile(f),
                ..
            } => flags.stops.push(f.clone()),
            Step::Guard {
                kind: Guard::SkipWhile(f),
                ..
            } => flags.skips.push(f.clone()),
            Step::State { name, init } => flags.states.push((name.clone(), init.clone())),
            _ => {}
        }
    }
    flags
}

/// `stmts` behind the runs of statements and the guards of a chain's
/// filters: each guard an `if` around what follows it.
fn guarded(steps: Vec<Step>, mut stmts: Vec<syn::Stmt>) -> Vec<syn::Stmt> {
    for step in steps.into_iter().rev() {
        match step {
            Step::Lets(mut lets) => {
                lets.append(&mut stmts);
                stmts = lets;
            }
            Step::State { .. } => {}
            Step::Guard { condition, kind } => {
                stmts = vec![match kind {
                    Guard::Filter => syn::parse_quote!(if #condition { #(#stmts)* }),
                    Guard::TakeWhile(stop) => {
                        syn::parse_quote!(if #condition { #(#stmts)* } else { #stop = true; })
                    }
                    Guard::SkipWhile(skipping) => syn::parse_quote!(
                        if #skipping && (#condition) {} else { #skipping = false; #(#stmts)* }
                    ),
                }];
            }
        }
    }
    stmts
}

/// A `scan` closure's body with `*param` read as the state's name; any
/// other use of `param` is noted.
struct StateReads<'a> {
    param: &'a Ident,
    state: &'a Ident,
    other_use: Option<Span>,
}

impl syn::visit_mut::VisitMut for StateReads<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let names_param = |e: &Expr| matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.param));
        match e {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && names_param(&u.expr) => {
                let state = self.state;
                *e = syn::parse_quote_spanned!(state.span()=> #state);
            }
            // A method call reads through the reference: `h.clone()`.
            Expr::MethodCall(m) if names_param(&m.receiver) => {
                let state = self.state;
                *m.receiver = syn::parse_quote_spanned!(state.span()=> #state);
                for arg in &mut m.args {
                    self.visit_expr_mut(arg);
                }
            }
            e if names_param(e) => {
                self.other_use.get_or_insert(e.span());
            }
            e => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}
