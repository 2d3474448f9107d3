//! Reverse mode: each instruction gives forward code (its primal, keeping
//! what the reverse sweep reads) and reverse code (one pullback per active
//! operand); the reverse sweep is the reverse code in reverse order.
//!
//! Adjoints are named after their variable (`h_bar`). The first contribution
//! to an adjoint moves in (`let h_bar = ...`), later ones add in place
//! (`rules::accumulate(&mut h_bar, ...)`). An adjoint is consumed by the
//! pullbacks of the instruction that defined its variable: the last one takes
//! it by value, earlier ones borrow it.

use std::collections::{BTreeSet, HashMap, HashSet};

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::activity;
use super::forward;
use super::ir::{self, Arith, Const, Inst, Op, Operand, Reduce, Stmt, VarId};
use super::ops;
use super::primal::{arith_name, Gen};
use super::recursion;
use super::scan;

/// How a contribution joins an adjoint.
pub(super) enum Kind {
    /// A full cotangent of the variable's shape.
    Dense,
    /// A scatter (`x[i]`) or a callee's gradient entry (maybe `NoTangent`):
    /// the first one needs a zero of the right shape.
    Sparse,
    /// As `Sparse`, into an array or a `Vec` of floats (an element, a fill,
    /// a spread, a row, a slice): the zero is made from the shape, so a
    /// loop saves only that, and a loop that writes the array after reading
    /// it need not copy it to keep the value.
    Shaped,
}

pub struct Sweeps {
    pub forward: Vec<TokenStream>,
    pub reverse: Vec<TokenStream>,
    /// The seed's name, when the result is active.
    pub seed: Option<Ident>,
    /// The result as returned (a variable or constant tokens).
    pub result: TokenStream,
    /// The result variable, if the reverse sweep reads it.
    pub result_read_by_reverse: bool,
    /// Each parameter's gradient expression, in order.
    pub gradients: Vec<TokenStream>,
    /// Forward statements a pullback closure must recompute (views and
    /// constants that may borrow locals), in forward order.
    pub recompute: Vec<TokenStream>,
    /// The reverse sweep adds into adjoints its caller passes (one
    /// `&mut Option<_>` per active parameter, see [`recursion`]), which
    /// then leaves `gradients` to the caller.
    pub accumulating: bool,
    /// What that caller runs between the pullback and `gradients`: a
    /// struct parameter's adjoint out of its `Option`.
    pub settled: Vec<TokenStream>,
}

pub(super) struct Builder<'g, 'f> {
    pub(super) g: &'g Gen<'f>,
    /// The function's calls of itself add into its adjoints
    /// ([`recursion`]).
    pub(super) accumulating: bool,
    /// Adjoints are `Option`s (the function branches or loops), except
    /// those of `static_vars`.
    pub(super) optional: bool,
    /// In a function with branches or loops, the temporaries whose every
    /// use is in their own block: their adjoints are plain locals.
    pub(super) static_vars: HashSet<VarId>,
    /// Variables known to hold scalars (cheap to recompute).
    pub(super) scalars: HashSet<VarId>,
    /// Adjoints of outer variables a loop's reverse sweep holds as values
    /// while it runs (no `Option` check, no allocation path in the loop).
    pub(super) dense_vars: HashSet<VarId>,
    /// Adjoints of an array a loop carries through element writes, held
    /// as values in the loop's reverse sweep ([`super::valued`]), and
    /// those of them not yet bound by their first contribution.
    pub(super) valued: HashSet<VarId>,
    pub(super) unbound: HashSet<VarId>,
    /// Items of bags (`xs: &[Vec<f64>]`): read as 1-D arrays, so a dense
    /// array cotangent is converted into their `Vec` adjoints, as a
    /// shaped one is.
    pub(super) bag_items: HashSet<VarId>,
    /// Structs whose fields are read: their adjoints are whole tangent
    /// structs, zero from the start, that field cotangents add into.
    pub(super) eager: HashSet<VarId>,
    pub(super) useful: HashSet<VarId>,
    /// Calls whose pullback closure the reverse sweep calls.
    pub(super) read_pullbacks: HashSet<VarId>,
    /// Items of lists that the records of their blocks save as owned
    /// copies (`reverse_flow.rs`): the reverse sweep reads them there, not
    /// through the list.
    pub(super) owned_items: HashSet<VarId>,
    /// The names each nested block saves for the reverse sweep, by block.
    pub(super) records: HashMap<(usize, usize), Vec<TokenStream>>,
    /// What the forward sweep saves for each record entry: the value, or
    /// `rules::shape_of(&x)` for a value read only for its shape.
    pub(super) saves: HashMap<(usize, usize), Vec<TokenStream>>,
    /// The record variable of each `if` and loop that has a reverse sweep.
    pub(super) record_idents: HashMap<usize, Ident>,
    pub(super) counts: HashMap<VarId, usize>,
    /// Constant multiples read only by a sum (`scaled.rs`), and those whose
    /// cotangent the sum has sent straight to their operand: their own
    /// pullback is left out.
    scaled_terms: HashMap<VarId, super::scaled::Scaled>,
    folded: HashSet<VarId>,
    defined: HashSet<VarId>,
    pub(super) reverse: Vec<TokenStream>,
    /// Forward names the reverse code reads.
    pub(super) read_vars: BTreeSet<VarId>,
    /// Forward names the reverse code reads only for their shape.
    pub(super) read_shapes: BTreeSet<VarId>,
    /// Arrays and lists that move into an update inside a branch while
    /// the reverse sweep reads their shape: the statement holding the
    /// branch keeps the shape under their name (`reverse_flow.rs`), so the
    /// update need not copy them.
    pub(super) shapes_kept_around: HashSet<VarId>,
    pub(super) read_consts: HashSet<String>,
    /// How many loops enclose the block being differentiated.
    pub(super) loop_depth: usize,
    /// Loops nested in other loops push their records onto one stack per
    /// loop, declared once for the function: one growing buffer instead of
    /// a tape allocated per run of the inner loop. (A list, not a map: the
    /// declarations come out in a stable order.)
    pub(super) stacks: Vec<(usize, Ident)>,
    /// The loops of `stacks` inside fused loops: they empty their stacks in
    /// the forward sweep, so the reverse sweep does not take them over.
    pub(super) forward_stacks: HashSet<usize>,
    /// Loops whose reverse code runs in their forward sweep (`fused.rs`),
    /// by loop.
    pub(super) fused: HashMap<usize, super::fused::Fused>,
    /// Sum loops inside fused loops, by loop: their reverse code runs in
    /// their own iterations (`fused.rs`).
    pub(super) inline_sums: HashSet<usize>,
    /// A variable whose adjoint nothing reads: the per-iteration input of a
    /// fused sum, whose cotangent is the sum's (`fused.rs`).
    pub(super) dropped: Option<VarId>,
    /// The arrays an element read of the block being differentiated has
    /// scattered into so far: a second scatter into one is fenced off from
    /// the first (`rules::scatter_fence`).
    pub(super) scattered: HashSet<VarId>,
    /// `Option` adjoints declared `None` at the top of the block whose
    /// straight-line reverse code is being emitted, with no contribution
    /// yet: the first one is a plain assignment (`x_bar = Some(..)`), not a
    /// `match` through `&mut`, which would keep the adjoint in memory.
    pub(super) fresh: HashSet<VarId>,
    /// The range each replayed loop keeps for its reverse sweep, by loop
    /// (`replay.rs`).
    pub(super) replays: HashMap<usize, Ident>,
    /// The indices of the loops around the block being differentiated,
    /// innermost last, and whether the reverse sweep has them too.
    pub(super) loop_indices: Vec<(String, bool)>,
    /// The names the body binds or may change (`replay::body_names`).
    pub(super) body_names: HashSet<String>,
    /// In the forward sweep of a replayed loop's body: its iteration count,
    /// for inner loops' stacks to reserve.
    pub(super) enclosing_runs: Option<TokenStream>,
    /// In the forward sweep of a loop's body: statements for the top of
    /// each iteration (inner loops' ranges and stack room, `replay.rs`).
    pub(super) prologue: Option<Vec<TokenStream>>,
    /// In the forward sweep of a loop's body: what that body binds, and
    /// the loops among its own statements.
    pub(super) enclosing_body: Option<super::replay::Enclosing>,
}

/// The forward and reverse sweeps; `may_accumulate` when the signature lets
/// a recursive function's pullbacks add into their caller's adjoints
/// ([`recursion`]).
pub fn sweeps(g: &Gen<'_>, may_accumulate: bool) -> Sweeps {
    let f = g.f;
    let useful = activity::useful(&f.body);
    let counts = activity::contributions(&f.body, &useful);
    let optional = activity::has_control_flow(&f.body);
    let mut b = Builder {
        g,
        accumulating: false,
        optional,
        static_vars: HashSet::new(),
        scalars: activity::scalars(f),
        dense_vars: HashSet::new(),
        valued: HashSet::new(),
        unbound: HashSet::new(),
        bag_items: items_of(&f.body.stmts, &f.bags),
        eager: place_roots(&f.body.stmts),
        useful: useful.clone(),
        read_pullbacks: HashSet::new(),
        owned_items: HashSet::new(),
        records: HashMap::new(),
        saves: HashMap::new(),
        record_idents: HashMap::new(),
        counts,
        scaled_terms: super::scaled::scaled_terms(f, &useful),
        folded: HashSet::new(),
        defined: HashSet::new(),
        reverse: Vec::new(),
        read_vars: BTreeSet::new(),
        read_shapes: BTreeSet::new(),
        shapes_kept_around: HashSet::new(),
        read_consts: HashSet::new(),
        loop_depth: 0,
        stacks: Vec::new(),
        forward_stacks: HashSet::new(),
        fused: HashMap::new(),
        inline_sums: HashSet::new(),
        dropped: None,
        scattered: HashSet::new(),
        fresh: HashSet::new(),
        replays: HashMap::new(),
        loop_indices: Vec::new(),
        body_names: super::replay::body_names(f),
        enclosing_runs: None,
        prologue: None,
        enclosing_body: None,
    };

    b.accumulating = may_accumulate && recursion::adds_into_callers(&b);
    if optional {
        return b.structured_sweeps();
    }
    for v in b.eager.clone() {
        b.reverse.push(b.eager_start(v));
        b.defined.insert(v);
    }

    let (seed, result) = match &f.body.result {
        Operand::Var(v) => {
            let seed = g.bar(*v);
            b.defined.insert(*v);
            let x = g.ident(*v);
            (Some(seed), quote!(#x))
        }
        Operand::Const(c) => (None, c.tokens.clone()),
    };

    for stmt in f.body.stmts.iter().rev() {
        if let Stmt::Inst(inst) = stmt {
            if useful.contains(&inst.dest) {
                b.reverse_inst(inst);
            }
        }
    }

    // After the reverse sweep: the forward sweep copies an array before an
    // element write only when the reverse sweep reads the old one.
    let mut forward = Vec::new();
    for stmt in &f.body.stmts {
        match stmt {
            Stmt::Inst(inst) => forward.push(b.forward_inst(inst, useful.contains(&inst.dest))),
            other => forward.extend(g.shared_stmt(other)),
        }
    }

    let gradients = f
        .params
        .iter()
        .map(|p| match p {
            Some(v) if b.defined.contains(v) => b.eager_end(*v),
            Some(v) => {
                let (r, x) = (&g.rules, g.ident(*v));
                quote!(#r::zero_tangent(&#x))
            }
            None => quote!(::ad::NoTangent),
        })
        .collect();

    let result_read_by_reverse = matches!(&f.body.result, Operand::Var(v) if b.reads(*v));
    let recompute = b.recompute_list();
    Sweeps {
        forward,
        reverse: b.reverse,
        seed,
        result,
        result_read_by_reverse,
        gradients,
        recompute,
        accumulating: false,
        settled: Vec::new(),
    }
}

impl Builder<'_, '_> {
    /// `let mut p_bar = ..;` for a variable whose fields the body reads: a
    /// whole tangent struct from the start. A parameter's starts unset (its
    /// arrays empty, each moved in by its first contribution) and is
    /// completed with zeros where nothing arrived (`eager_end`); the others
    /// flow on to pullbacks, so they start as zeros.
    pub(super) fn eager_start(&self, v: VarId) -> TokenStream {
        let (r, bar, x) = (&self.g.rules, self.g.bar(v), self.g.ident(v));
        if self.g.f.params.contains(&Some(v)) {
            quote!(let mut #bar = #r::unset_tangent(&#x);)
        } else {
            quote!(let mut #bar = #r::zero_tangent(&#x);)
        }
    }

    /// The gradient of an eager parameter, or the adjoint of another
    /// variable, as returned.
    pub(super) fn eager_end(&self, v: VarId) -> TokenStream {
        let (r, bar, x) = (&self.g.rules, self.g.bar(v), self.g.ident(v));
        if self.eager.contains(&v) {
            quote!(#r::completed(#bar, &#x))
        } else {
            quote!(#bar)
        }
    }

    pub(super) fn forward_inst(&mut self, inst: &Inst, useful: bool) -> TokenStream {
        let g = self.g;
        if let Some(code) = self.in_place(inst) {
            return code;
        }
        if let Op::Call(func, args) = &inst.op {
            if useful && !g.borrows_local(inst) {
                let suffix = self.pullback_suffix(func);
                let vjp = func.call(Some(suffix), args.iter().map(|a| g.call_arg(a)).collect());
                let (x, pb) = (g.ident(inst.dest), g.pullback(inst.dest));
                let call = quote_spanned!(inst.span=> let (#x, #pb) = #vjp;);
                if g.f.calls_itself(func) && !self.accumulating {
                    let (r, lt) = (&g.rules, &g.f.pullback_lifetime);
                    return quote! {
                        #call
                        let #pb = #r::boxed_pullback(#pb, ::core::marker::PhantomData::<&#lt ()>);
                    };
                }
                return call;
            }
        }
        if let Op::Push(list, _) = &inst.op {
            return self.forward_push(inst, list);
        }
        if let Op::Pop(list) = &inst.op {
            return self.forward_pop(inst, list);
        }
        if self.owned_items.contains(&inst.dest) && self.reads(inst.dest) {
            // Saved for the reverse sweep: an owned copy from the start, as
            // the list moves on before the record is written.
            let r = g.rules_at(inst.span);
            let item = g.primal(inst);
            return g.bind(inst, quote_spanned!(inst.span=> #r::to_owned(#item)));
        }
        if let Some(base) = inst.op.written() {
            if let Operand::Var(v) = base {
                if self.shapes_kept_around.contains(v) {
                    return g.bind(inst, g.element_write(inst, false));
                }
                if self.read_shapes.contains(v)
                    && !self.read_vars.contains(v)
                    && g.blocks.get(v) == g.blocks.get(&inst.dest)
                {
                    // Only the old array's shape is read again, and a write
                    // keeps the shape: the array moves.
                    let write = g.bind(inst, g.element_write(inst, false));
                    return self.keeping_shape(*v, write);
                }
            }
            // The reverse sweep reads the old array: keep it.
            let copy = matches!(base, Operand::Var(v)
                if self.read_vars.contains(v) || self.read_shapes.contains(v));
            return g.bind(inst, g.element_write(inst, copy));
        }
        g.bind(inst, g.primal(inst))
    }

    /// An operation on a temporary nothing reads afterwards (the reverse
    /// sweep included, but for its shape) takes over the temporary's buffer:
    ///
    /// ```text
    /// let t4 = rules::add(view(&t2), view(&b));   let t2_shape = rules::shape_of(&t2);
    ///                                             let t4 = rules::add_in_place(t2, view(&b));
    ///                                             let t2 = t2_shape;
    /// ```
    ///
    /// The left operand's first; else, for `+ - * /`, the right one's
    /// (`rules::add_in_place_rhs(view(&y), t2)` for `y + t2`).
    fn in_place(&self, inst: &Inst) -> Option<TokenStream> {
        let g = self.g;
        let left = match &inst.op {
            Op::Arith(_, Operand::Var(a), _)
            | Op::Unary(_, Operand::Var(a))
            | Op::Neg(Operand::Var(a))
            | Op::Powi(Operand::Var(a), _)
            | Op::Mapv(Operand::Var(a), _) => Some(*a),
            _ => None,
        };
        let (s, r) = (inst.span, g.rules_at(inst.span));
        let (taken, value) = match (left, &inst.op) {
            (Some(a), op) if self.reusable(inst, 0, a) => {
                let x = g.ident(a);
                let value = match op {
                    Op::Arith(op, _, b) => {
                        let f = format_ident!("{}_in_place", arith_name(*op, s), span = s);
                        let b = g.operand(b);
                        quote_spanned!(s=> #r::#f(#x, #b))
                    }
                    _ => g.apply(inst, quote_spanned!(s=> #r::in_place(#x))),
                };
                (a, value)
            }
            (_, Op::Arith(op, a, Operand::Var(b)))
                if !matches!(a, Operand::Var(a) if a == b) && self.reusable(inst, 1, *b) =>
            {
                let f = format_ident!("{}_in_place_rhs", arith_name(*op, s), span = s);
                let (a, x) = (g.operand(a), g.ident(*b));
                (*b, quote_spanned!(s=> #r::#f(#a, #x)))
            }
            _ => return None,
        };
        let bind = g.bind(inst, value);
        Some(if self.read_shapes.contains(&taken) {
            self.keeping_shape(taken, bind)
        } else {
            bind
        })
    }

    /// Whether `inst` may take over the buffer of `v`, its operand `pos`:
    /// its last read, nothing reads its value in the reverse sweep, and
    /// it is an array the block itself made.
    fn reusable(&self, inst: &Inst, pos: usize, v: VarId) -> bool {
        let g = self.g;
        let site = super::moves::Site::Operand {
            inst: inst.dest,
            pos,
        };
        // (A scalar has no buffer to reuse.)
        g.moves.contains(&site)
            && !self.read_vars.contains(&v)
            && g.owned_temporaries.contains(&v)
            && g.blocks.get(&v) == g.blocks.get(&inst.dest)
            && !self.scalars.contains(&v)
    }

    /// `code`, which moves `v`'s value away, with `v`'s name holding its
    /// shape afterwards (what the reverse sweep reads of it).
    pub(super) fn keeping_shape(&self, v: VarId, code: TokenStream) -> TokenStream {
        self.keeping_shape_of(self.g.ident(v), code)
    }

    /// `keeping_shape` for any name: an inactive local included.
    pub(super) fn keeping_shape_of(&self, x: &Ident, code: TokenStream) -> TokenStream {
        let r = &self.g.rules;
        let shape = format_ident!("{}_shape", x, span = proc_macro2::Span::mixed_site());
        quote!(let #shape = #r::shape_of(&#x); #code let #x = #shape;)
    }

    /// Records a forward name read by the reverse sweep.
    pub(super) fn read(&mut self, o: &Operand) -> TokenStream {
        match o {
            Operand::Var(v) => {
                self.read_vars.insert(*v);
            }
            Operand::Const(c) => self.read_const(c),
        }
        self.g.operand(o)
    }

    /// Records a forward name whose shape the reverse sweep reads:
    /// `rules::shape_of(&x)`, which a loop saves instead of `x`. The shape
    /// is read from the earliest value that has it (`shapes.rs`).
    pub(super) fn read_shape(&mut self, o: &Operand) -> TokenStream {
        let r = &self.g.rules;
        let source = match o {
            Operand::Var(v) => self.g.shape_sources.get(v),
            Operand::Const(_) => None,
        };
        match source.unwrap_or(o) {
            Operand::Var(v) => {
                self.read_shapes.insert(*v);
                let x = self.g.ident(*v);
                quote!(#r::shape_of(&#x))
            }
            Operand::Const(c) if c.literal || c.scalar => quote!(#r::ScalarShape::new()),
            Operand::Const(c) => {
                self.read_const(c);
                let t = &c.tokens;
                quote!(#r::shape_of(&#t))
            }
        }
    }

    /// Whether the reverse sweep reads `v`, for its value or its shape.
    pub(super) fn reads(&self, v: VarId) -> bool {
        self.read_vars.contains(&v) || self.read_shapes.contains(&v)
    }

    /// Records a constant the reverse sweep reads, and every name in it
    /// (`s * 0.5` reads `s`), so the blocks that define them save them.
    fn read_const(&mut self, c: &Const) {
        self.read_consts.insert(c.tokens.to_string());
        self.read_consts.extend(super::scan::token_names(&c.tokens));
    }

    /// The names a `mapv` closure's derivative reads from around it: the
    /// constants moved out of it and the inactive values it names.
    fn read_closure_constants(&mut self, stmts: &[Stmt]) {
        let opaque = |tokens: &TokenStream| Const::opaque(tokens.clone());
        for stmt in stmts {
            match stmt {
                Stmt::Inst(inst) => {
                    for o in inst.op.operands() {
                        if let Operand::Const(c) = o {
                            self.read_const(c);
                        }
                    }
                    for tokens in inst.op.inline_tokens() {
                        self.read_const(&opaque(tokens));
                    }
                }
                Stmt::Const { expr: t, .. }
                | Stmt::Verbatim(t)
                | Stmt::InactiveLet { tokens: t, .. } => self.read_const(&opaque(t)),
                Stmt::If(i) => {
                    self.read_closure_constants(&i.then);
                    self.read_closure_constants(&i.els);
                }
                Stmt::Loop(l) => self.read_closure_constants(&l.body),
            }
        }
    }

    fn read_tokens(&mut self, c: &Const) -> TokenStream {
        self.read_const(c);
        c.tokens.clone()
    }

    pub(super) fn reverse_inst(&mut self, inst: &Inst) {
        if self.folded.contains(&inst.dest) {
            return;
        }
        // A tuple's adjoint (`eager`) is whole from the start, not an
        // `Option`: its items' reads add into it.
        if !self.optional
            || self.static_vars.contains(&inst.dest)
            || self.eager.contains(&inst.dest)
            || self.valued.contains(&inst.dest)
        {
            self.reverse_inst_body(inst);
            return;
        }
        let bar = self.g.bar(inst.dest);
        if inst
            .op
            .var_operands()
            .iter()
            .any(|v| self.static_vars.contains(v))
        {
            // A plain adjoint downstream must receive its contribution on
            // every path: a missing cotangent becomes zero.
            let r = &self.g.rules;
            let shape = self.read_shape(&Operand::Var(inst.dest));
            self.reverse
                .push(quote!(let #bar = #r::materialize(#bar, #shape);));
            self.reverse_inst_body(inst);
        } else {
            // `if let Some(t_bar) = t_bar { .. }`: nothing to do where no
            // cotangent arrived.
            let saved = std::mem::take(&mut self.reverse);
            self.reverse_inst_body(inst);
            let body = std::mem::replace(&mut self.reverse, saved);
            self.reverse
                .push(quote!(if let ::core::option::Option::Some(#bar) = #bar { #(#body)* }));
        }
    }

    fn reverse_inst_body(&mut self, inst: &Inst) {
        let g = self.g;
        let dest_bar = g.bar(inst.dest);
        let active: Vec<(usize, VarId)> = inst
            .op
            .operands()
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Operand::Var(v) if Some(*v) != self.dropped => Some((i, *v)),
                _ => None,
            })
            .collect();
        if let Op::Call(..) = &inst.op {
            self.reverse_call(inst, &active);
            return;
        }
        if let Op::Push(..) = &inst.op {
            self.reverse_push(inst, &active);
            return;
        }
        if let Op::Place(Operand::Var(root), path) = &inst.op {
            // The root's adjoint is a whole tangent struct from the start:
            // the field's cotangent adds into the same field of it.
            // An element of a field (`p.w[i]`) adds into the field, which
            // drops it if the field is `#[constant]`.
            let (r, root_bar, root) = (&g.rules, g.bar(*root), g.ident(*root));
            let add = match ir::split_place(path) {
                (field, Some(index)) => {
                    // The index is read here: a record keeps it.
                    self.read_consts.extend(super::scan::token_names(&index));
                    // An element of a slice or `Vec` parameter (`xs[i]`)
                    // indexes what the parameter points to.
                    let primal = if field.is_empty() {
                        quote!(&*#root)
                    } else {
                        quote!(&#root #field)
                    };
                    quote!(#r::accumulate_element(&mut #root_bar #field, #primal, #index, #dest_bar);)
                }
                (_, None) => quote!(#r::accumulate(&mut #root_bar #path, #dest_bar);),
            };
            self.reverse.push(add);
            return;
        }
        // Last operand first: broadcasting usually happens on the right
        // (`x + b`), so the pullback that only reads the cotangent (a sum
        // over the broadcast axes) borrows it, and the left one, which can
        // take its buffer, gets it by value.
        for (k, &(pos, v)) in active.iter().rev().enumerate() {
            let dy = if k + 1 == active.len() {
                quote!(#dest_bar)
            } else {
                quote!(&#dest_bar)
            };
            if let Some((u, contribution)) = self.scaled_pullback(inst, pos, v, &dy) {
                self.accumulate(u, contribution, Kind::Shaped);
                continue;
            }
            let (contribution, kind) = self.pullback(inst, pos, dy);
            if matches!(inst.op, Op::Index(..)) && !self.scattered.insert(v) {
                let r = &g.rules;
                self.reverse.push(quote!(#r::scatter_fence();));
            }
            self.accumulate(v, contribution, kind);
        }
    }

    /// For a sum `inst` whose operand number `pos` is a constant multiple
    /// `t = u * c` read nowhere else (`scaled.rs`): `u` and the cotangent
    /// the sum sends it through `t`, which then needs no adjoint.
    fn scaled_pullback(
        &mut self,
        inst: &Inst,
        pos: usize,
        t: VarId,
        dy: &TokenStream,
    ) -> Option<(VarId, TokenStream)> {
        let Op::Arith(op @ (Arith::Add | Arith::Sub), a, b) = &inst.op else {
            return None;
        };
        let scaled = self.scaled_terms.get(&t)?.clone();
        // A scalar `u` gains nothing (its cotangent is a number, or a
        // reduction the rules make anyway): the rules stay as they read.
        // Where adjoints are `Option`s, `t`'s must be a plain local (made
        // by its first contribution, so none is left declared and unused).
        // A bag item's or a struct's adjoint takes only the contributions
        // of its own rules.
        if self.scalars.contains(&scaled.u)
            || (self.optional && !self.static_vars.contains(&t))
            || Some(scaled.u) == self.dropped
            || self.bag_items.contains(&scaled.u)
            || self.eager.contains(&scaled.u)
        {
            return None;
        }
        let s = inst.span;
        let r = &self.g.rules_at(s);
        let side = if pos == 0 { "lhs" } else { "rhs" };
        let f = format_ident!("{}_scaled_pullback_{}", arith_name(*op, s), side, span = s);
        let (a, b) = (self.read_shape(a), self.read_shape(b));
        let u = self.read_shape(&Operand::Var(scaled.u));
        let c = self.read(&scaled.factor);
        let divide = scaled.divide;
        self.folded.insert(t);
        Some((
            scaled.u,
            quote_spanned!(s=> #r::#f(#dy, #a, #b, #u, #c, #divide)),
        ))
    }

    /// The cotangent `inst` sends to its operand number `pos`.
    fn pullback(&mut self, inst: &Inst, pos: usize, dy: TokenStream) -> (TokenStream, Kind) {
        let g = self.g;
        let s = inst.span;
        let r = &g.rules_at(s);
        let side = if pos == 0 { "lhs" } else { "rhs" };
        let dense = |t| (t, Kind::Dense);
        match &inst.op {
            Op::Arith(op @ (Arith::Add | Arith::Sub), a, b) => {
                // Only the operands' shapes matter (to un-broadcast).
                let f = format_ident!("{}_pullback_{}", arith_name(*op, s), side, span = s);
                let (a, b) = (self.read_shape(a), self.read_shape(b));
                dense(quote_spanned!(s=> #r::#f(#dy, #a, #b)))
            }
            Op::Arith(op, a, b) => {
                // `a * b`: each side needs the other's value and its own
                // shape; `a / b`: the left side needs `b` and its own shape,
                // the right side both values.
                let f = format_ident!("{}_pullback_{}", arith_name(*op, s), side, span = s);
                let (a, b) = match (op, pos) {
                    (Arith::Div, 1) => (self.read(a), self.read(b)),
                    (_, 0) => (self.read_shape(a), self.read(b)),
                    _ => (self.read(a), self.read_shape(b)),
                };
                dense(quote_spanned!(s=> #r::#f(#dy, #a, #b)))
            }
            Op::Binary(name, a, b) => {
                let f = format_ident!("{}_pullback_{}", name, side, span = s);
                let (a, b) = (self.read(a), self.read(b));
                dense(quote_spanned!(s=> #r::#f(#dy, #a, #b)))
            }
            Op::MulAdd(a, b, _) => {
                let f = format_ident!("mul_add_pullback_{}", ["a", "b", "c"][pos], span = s);
                let (a, b) = (self.read(a), self.read(b));
                dense(quote_spanned!(s=> #r::#f(#dy, #a, #b)))
            }
            Op::Dot(a, b) => {
                let f = format_ident!("dot_pullback_{}", side, span = s);
                let (a, b) = (self.read(a), self.read(b));
                dense(quote_spanned!(s=> #r::#f(#dy, #a, #b)))
            }
            Op::Neg(a) => {
                let a = self.read(a);
                dense(quote_spanned!(s=> #r::neg_pullback(#dy, #a)))
            }
            Op::Unary(name, a) => {
                let f = format_ident!("{}_pullback", name, span = s);
                let v = if ops::uses_output(name) {
                    self.read(&Operand::Var(inst.dest))
                } else {
                    self.read(a)
                };
                dense(quote_spanned!(s=> #r::#f(#dy, #v)))
            }
            Op::Powi(a, n) => {
                let a = self.read(a);
                let n = self.read_tokens(n);
                dense(quote_spanned!(s=> #r::powi_pullback(#dy, #a, #n)))
            }
            Op::Cast(a, _) => {
                let a = self.read(a);
                dense(quote_spanned!(s=> #r::cast_pullback(#dy, #a)))
            }
            // Only the operand's shape: a loop saves no copy of it.
            Op::Reduce(red, a) => {
                let a = self.read_shape(a);
                match red {
                    // Fills and spreads add into the adjoint in place.
                    Reduce::Sum => (quote_spanned!(s=> #r::sum_pullback(#dy, #a)), Kind::Shaped),
                    Reduce::Mean => (quote_spanned!(s=> #r::mean_pullback(#dy, #a)), Kind::Shaped),
                }
            }
            Op::ReduceAxis(red, a, k) => {
                let a = self.read_shape(a);
                let k = self.read_tokens(k);
                match red {
                    Reduce::Sum => (
                        quote_spanned!(s=> #r::sum_axis_pullback(#dy, #a, #k)),
                        Kind::Shaped,
                    ),
                    Reduce::Mean => (
                        quote_spanned!(s=> #r::mean_axis_pullback(#dy, #a, #k)),
                        Kind::Shaped,
                    ),
                }
            }
            Op::Transpose(_) => dense(quote_spanned!(s=> #r::t_pullback(#dy))),
            Op::Diag(_) => (quote_spanned!(s=> #r::diag_pullback(#dy)), Kind::Shaped),
            Op::Place(..) => unreachable!("field reads are handled by reverse_inst_body"),
            Op::IndexWrite(_, idx, _) | Op::IndexAdd(_, idx, _) => {
                let idx = self.read_tokens(idx);
                match (&inst.op, pos) {
                    (_, 1) => dense(quote_spanned!(s=> #r::index_write_pullback_value(#dy, #idx))),
                    (Op::IndexWrite(..), _) => {
                        dense(quote_spanned!(s=> #r::index_write_pullback_array(#dy, #idx)))
                    }
                    _ => dense(dy),
                }
            }
            Op::SliceWrite(_, info, _) => {
                let info = self.read_tokens(info);
                match pos {
                    0 => dense(quote_spanned!(s=> #r::slice_cleared(#dy, #info))),
                    _ => dense(quote_spanned!(s=> #r::slice_write_pullback_value(#dy, #info))),
                }
            }
            Op::FromElem(..) => dense(quote_spanned!(s=> #r::from_elem_pullback(#dy))),
            Op::Stack(_) => dense(quote_spanned!(s=> #r::stack_pullback(#dy, #pos))),
            Op::Tuple(_) => {
                let part = syn::Index::from(pos);
                dense(quote_spanned!(s=> ::core::clone::Clone::clone(&(#dy).#part)))
            }
            Op::Join {
                axis,
                parts,
                new_axis,
            } => {
                let f = super::primal::join_rule(*new_axis, "_pullback", s);
                let axis = self.read_tokens(axis);
                if *new_axis {
                    dense(quote_spanned!(s=> #r::#f(#dy, #axis, #pos)))
                } else {
                    let shapes: Vec<TokenStream> =
                        parts.iter().map(|p| self.read_shape(p)).collect();
                    dense(quote_spanned!(s=> #r::#f(#dy, #axis, [#(#shapes),*], #pos)))
                }
            }
            Op::View(_) | Op::ToOwned(_) | Op::Unwrap(..) => dense(dy),
            Op::SomeOf(_) => dense(quote_spanned!(s=> ::core::option::Option::Some(#dy))),
            Op::InsertAxis(_, k) => {
                let k = self.read_tokens(k);
                dense(quote_spanned!(s=> #r::insert_axis_pullback(#dy, #k)))
            }
            Op::IntoShape(a, _) => {
                let a = self.read(a);
                dense(quote_spanned!(s=> #r::into_shape_with_order_pullback(#dy, #a)))
            }
            Op::Row(_, i) => {
                let i = self.read_tokens(i);
                (quote_spanned!(s=> #r::row_pullback(#dy, #i)), Kind::Shaped)
            }
            Op::Column(_, j) => {
                let j = self.read_tokens(j);
                (
                    quote_spanned!(s=> #r::column_pullback(#dy, #j)),
                    Kind::Shaped,
                )
            }
            Op::Slice(_, info) => {
                let info = self.read_tokens(info);
                (
                    quote_spanned!(s=> #r::slice_pullback(#dy, #info)),
                    Kind::Shaped,
                )
            }
            Op::Index(_, idx) => {
                let idx = self.read_tokens(idx);
                (
                    quote_spanned!(s=> #r::index_pullback(#dy, #idx)),
                    Kind::Shaped,
                )
            }
            Op::Mapv(a, closure) => {
                let x = self.read(a);
                for capture in &closure.captures {
                    self.read(capture);
                }
                self.read_closure_constants(&closure.body.stmts);
                if pos == 0 {
                    let df = forward::derivative_closure(g, closure, None, s);
                    dense(quote_spanned!(s=> #r::mapv_pullback(#dy, #x, #df)))
                } else {
                    // A captured scalar: the sum over the elements.
                    let ds = forward::derivative_closure(g, closure, Some(pos - 1), s);
                    dense(quote_spanned!(s=> #r::mapv_capture_pullback(#dy, #x, #ds)))
                }
            }
            Op::Item(_, idx) => {
                let idx = self.read_tokens(idx);
                (
                    quote_spanned!(s=> #r::item_pullback(#dy, #idx)),
                    Kind::Shaped,
                )
            }
            Op::FromList(_) => dense(quote_spanned!(s=> #r::from_list_pullback(#dy))),
            Op::Call(..) => unreachable!("calls are handled by reverse_call"),
            Op::Push(..) => unreachable!("pushes are handled by reverse_push"),
            Op::Pop(_) => dense(quote_spanned!(s=> #r::pop_pullback(#dy))),
        }
    }

    /// `let (hs_bar_list, hs_bar_item) = rules::push_pullback(hs_bar);`: the
    /// list's adjoint without its last entry, and that entry (for a list of
    /// arrays, `None` if no cotangent reached the item).
    fn reverse_push(&mut self, inst: &Inst, active: &[(usize, VarId)]) {
        let (r, dest_bar) = (&self.g.rules_at(inst.span), self.g.bar(inst.dest));
        let names = [
            format_ident!("{}_list", dest_bar),
            format_ident!("{}_item", dest_bar),
        ];
        let pats = (0..2).map(|pos| {
            if active.iter().any(|(p, _)| *p == pos) {
                let n = &names[pos];
                quote!(#n)
            } else {
                quote!(_)
            }
        });
        self.reverse
            .push(quote_spanned!(inst.span=> let (#(#pats),*) = #r::push_pullback(#dest_bar);));
        for &(pos, v) in active {
            let n = &names[pos];
            // The list's adjoint is whole; the item's may be missing.
            let kind = if pos == 0 { Kind::Dense } else { Kind::Shaped };
            self.accumulate(v, quote!(#n), kind);
        }
    }

    /// A push in the forward sweep. The list moves on with the item, unless
    /// the reverse sweep reads the list (or a view of it) as it was; the
    /// item moves in if nothing reads its value again. A value moved away
    /// whose shape the reverse sweep reads leaves its shape under its name.
    fn forward_push(&self, inst: &Inst, list: &Operand) -> TokenStream {
        let g = self.g;
        let item = g.movable_item(inst).filter(|v| !self.read_vars.contains(v));
        let (copy_list, mut kept_shapes) = self.list_moves_on(inst, list);
        kept_shapes.extend(item.filter(|v| self.read_shapes.contains(v)));
        let mut code = g.bind(inst, g.push(inst, copy_list, item.is_some()));
        for v in kept_shapes {
            code = self.keeping_shape(v, code);
        }
        code
    }

    /// A pop in the forward sweep: the list moves on without its last item,
    /// or a copy of it when the reverse sweep reads the list as it was.
    fn forward_pop(&self, inst: &Inst, list: &Operand) -> TokenStream {
        let g = self.g;
        let (copy, kept_shapes) = self.list_moves_on(inst, list);
        let list = match list {
            Operand::Var(v) if copy => {
                let x = g.ident(*v);
                quote!(::core::clone::Clone::clone(&#x))
            }
            other => g.updated(inst, g.place(other)),
        };
        let r = g.rules_at(inst.span);
        let mut code = g.bind(inst, quote_spanned!(inst.span=> #r::popped(#list)));
        for v in kept_shapes {
            code = self.keeping_shape(v, code);
        }
        code
    }

    /// Whether a push or pop must copy the list (the reverse sweep reads it,
    /// or a view of it, as it was), and the lists whose shape stays under
    /// their name when they move on.
    fn list_moves_on(&self, inst: &Inst, list: &Operand) -> (bool, Vec<VarId>) {
        match list {
            Operand::Var(list) if self.shapes_kept_around.contains(list) => (false, Vec::new()),
            Operand::Var(list) if self.read_vars.contains(list) || self.reads_view_of(*list) => {
                (true, Vec::new())
            }
            Operand::Var(list) if self.read_shapes.contains(list) => {
                let here = self.g.blocks.get(list) == self.g.blocks.get(&inst.dest);
                (!here, if here { vec![*list] } else { Vec::new() })
            }
            _ => (false, Vec::new()),
        }
    }

    /// Whether the reverse sweep reads a view of `v` (an item of a list,
    /// a row of an item), which borrows `v`.
    pub(super) fn reads_view_of(&self, v: VarId) -> bool {
        ir::instructions(&self.g.f.body.stmts).iter().any(|i| {
            i.op.makes_view()
                && matches!(i.op.operands().first(), Some(Operand::Var(a)) if *a == v)
                && !self.owned_items.contains(&i.dest)
                && (self.reads(i.dest) || self.reads_view_of(i.dest))
        })
    }

    /// `let (a_bar_0, _, ...) = t_pullback(t_bar);` then one contribution per
    /// active argument.
    fn reverse_call(&mut self, inst: &Inst, active: &[(usize, VarId)]) {
        let g = self.g;
        let Op::Call(_, args) = &inst.op else {
            unreachable!()
        };
        let (dest_bar, pb) = (g.bar(inst.dest), g.pullback(inst.dest));
        if g.borrows_local(inst) {
            // Recomputed here: the arguments are read like any value.
            let Op::Call(func, _) = &inst.op else {
                unreachable!()
            };
            for a in args {
                self.read(&a.operand);
            }
            let suffix = self.pullback_suffix(func);
            let vjp = func.call(Some(suffix), args.iter().map(|a| g.call_arg(a)).collect());
            self.reverse
                .push(quote_spanned!(inst.span=> let (_, #pb) = #vjp;));
        } else {
            self.read_pullbacks.insert(inst.dest);
        }
        if let Op::Call(func, _) = &inst.op {
            if self.accumulating && g.f.calls_itself(func) {
                self.pullback_into_adjoints(inst, &pb, &dest_bar);
                return;
            }
        }
        let names: Vec<Ident> = (0..args.len())
            .map(|i| format_ident!("{}_{}", dest_bar, i))
            .collect();
        let pats = names.iter().enumerate().map(|(i, n)| {
            if active.iter().any(|(p, _)| *p == i) {
                quote!(#n)
            } else {
                quote!(_)
            }
        });
        self.reverse
            .push(quote_spanned!(inst.span=> let (#(#pats,)*) = #pb(#dest_bar);));
        for &(pos, v) in active {
            let n = &names[pos];
            self.accumulate(v, quote!(#n), Kind::Sparse);
        }
    }

    /// An adjoint's first contribution as the adjoint's value.
    fn first_contribution(
        &mut self,
        v: VarId,
        contribution: TokenStream,
        kind: Kind,
    ) -> TokenStream {
        let g = self.g;
        let (r, x) = (&g.rules, g.ident(v));
        match kind {
            Kind::Dense => contribution,
            Kind::Sparse => {
                self.read_vars.insert(v);
                quote!(#r::first(#contribution, &#x))
            }
            Kind::Shaped => {
                let shape = self.read_shape(&Operand::Var(v));
                quote!(#r::first_shaped(#contribution, #shape))
            }
        }
    }

    pub(super) fn accumulate(&mut self, v: VarId, contribution: TokenStream, kind: Kind) {
        let kind = match kind {
            Kind::Dense if self.bag_items.contains(&v) => Kind::Shaped,
            kind => kind,
        };
        let g = self.g;
        let (r, bar) = (&g.rules, g.bar(v));
        if self.unbound.remove(&v) {
            let first = self.first_contribution(v, contribution, kind);
            self.reverse.push(quote!(let mut #bar = #first;));
            return;
        }
        if self.dense_vars.contains(&v) || self.valued.contains(&v) {
            self.reverse
                .push(quote!(#r::accumulate(&mut #bar, #contribution);));
            return;
        }
        if self.optional && !self.static_vars.contains(&v) {
            if self.fresh.remove(&v) {
                let first = self.first_contribution(v, contribution, kind);
                self.reverse
                    .push(quote!(#bar = ::core::option::Option::Some(#first);));
                return;
            }
            match kind {
                Kind::Dense => self
                    .reverse
                    .push(quote!(#r::accumulate_dense(&mut #bar, #contribution);)),
                Kind::Sparse => {
                    self.read_vars.insert(v);
                    let x = g.ident(v);
                    self.reverse
                        .push(quote!(#r::accumulate_into(&mut #bar, #contribution, &#x);));
                }
                Kind::Shaped => {
                    let shape = self.read_shape(&Operand::Var(v));
                    self.reverse.push(
                        quote!(#r::accumulate_into_shaped(&mut #bar, #contribution, #shape);),
                    );
                }
            }
            return;
        }
        if self.defined.insert(v) {
            let m = if self.counts.get(&v).copied().unwrap_or(0) > 1 {
                quote!(mut)
            } else {
                quote!()
            };
            match kind {
                Kind::Dense => self.reverse.push(quote!(let #m #bar = #contribution;)),
                Kind::Sparse => {
                    self.read_vars.insert(v);
                    let x = g.ident(v);
                    self.reverse
                        .push(quote!(let #m #bar = #r::first(#contribution, &#x);));
                }
                Kind::Shaped => {
                    let shape = self.read_shape(&Operand::Var(v));
                    self.reverse
                        .push(quote!(let #m #bar = #r::first_shaped(#contribution, #shape);));
                }
            }
        } else {
            self.reverse
                .push(quote!(#r::accumulate(&mut #bar, #contribution);));
        }
    }

    /// The forward statements a pullback closure recomputes: the views it
    /// reads (they borrow values the closure also owns) and constants that
    /// may borrow locals, with what they depend on.
    pub(super) fn recompute_list(&self) -> Vec<TokenStream> {
        let g = self.g;
        let mut need_vars: HashSet<VarId> = self
            .read_vars
            .iter()
            .chain(&self.read_shapes)
            .copied()
            .filter(|v| g.f.vars[v.0].is_view)
            .collect();
        let mut need_consts: HashSet<String> = self.read_consts.clone();
        let mut out = Vec::new();
        // Walk backwards so a recomputed view pulls in what it reads.
        for stmt in g.f.body.stmts.iter().rev() {
            match stmt {
                Stmt::Inst(inst) if need_vars.contains(&inst.dest) => {
                    for o in inst.op.operands() {
                        match o {
                            Operand::Var(v) if g.f.vars[v.0].is_view => {
                                need_vars.insert(*v);
                            }
                            Operand::Const(c) => {
                                need_consts.insert(c.tokens.to_string());
                            }
                            Operand::Var(_) => {}
                        }
                    }
                    out.push(g.bind(inst, g.primal(inst)));
                }
                Stmt::Const {
                    ident,
                    expr,
                    local: true,
                } if need_consts.contains(&ident.to_string()) => {
                    out.push(quote!(let #ident = #expr;));
                }
                // A named view of a local (`let d = m.diag();`), which the
                // closure cannot take along: it owns `m` and views it again.
                Stmt::InactiveLet { tokens, views, .. }
                    if views.iter().any(|v| need_consts.contains(&v.to_string())) =>
                {
                    need_consts.extend(scan::token_names(tokens));
                    out.push(tokens.clone());
                }
                _ => {}
            }
        }
        out.reverse();
        out
    }
}

/// The variables whose fields the body reads (`p` in `p.layers[i].w`).
/// The places read from `containers` (`let inst = &xs[k];`).
fn items_of(stmts: &[Stmt], containers: &[VarId]) -> HashSet<VarId> {
    super::ir::instructions(stmts)
        .into_iter()
        .filter_map(|i| match &i.op {
            Op::Place(Operand::Var(root), _) if containers.contains(root) => Some(i.dest),
            _ => None,
        })
        .collect()
}

pub(super) fn place_roots(stmts: &[Stmt]) -> HashSet<VarId> {
    super::ir::instructions(stmts)
        .into_iter()
        .filter_map(|i| match &i.op {
            Op::Place(Operand::Var(v), _) => Some(*v),
            _ => None,
        })
        .collect()
}
