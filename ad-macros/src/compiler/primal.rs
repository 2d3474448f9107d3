//! The primal side of code generation, shared by both modes: operands, the
//! value of each instruction, and the names derived from a variable.
//!
//! Every operand goes through `view(&x)`, which turns `&Array2<f64>`,
//! `Array2<f64>`, views and scalars into the canonical forms the rules are
//! written for. Unsuffixed literals are passed as they are, so the active
//! operand beside them fixes their type.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};

use super::ir::{Arith, Const, Function, Inst, Op, Operand, Reduce, Stmt, VarId};
use super::moves::Site;

pub struct Gen<'f> {
    pub f: &'f Function,
    /// `rules` and `view`, imported at the top of each generated function
    /// under mixed-site names the user's code cannot see.
    pub rules: Ident,
    pub view: Ident,
    /// Leaving sites that move their variable (see `moves.rs`).
    pub moves: std::collections::HashSet<super::moves::Site>,
    /// Instruction results that own their memory (arrays or scalars an
    /// operation made, not views) and that no view borrows: a later
    /// operation of the block defining them may take them over (in another
    /// block, the name it leaves for the shape would not reach the code
    /// after that block).
    pub owned_temporaries: std::collections::HashSet<VarId>,
    /// The block (statement list) that defines each instruction's result.
    pub blocks: std::collections::HashMap<VarId, usize>,
    /// Results of tuple expressions: an item of an enclosing tuple, as
    /// `(v, (g1, g2))` has, is taken as it is rather than viewed.
    pub tuples: std::collections::HashSet<VarId>,
    /// The earlier value whose shape each variable has (`shapes.rs`).
    pub shape_sources: std::collections::HashMap<VarId, Operand>,
    /// Arrays written in place after they are read: the reverse sweep
    /// saves the elements it reads of them (`rewritten.rs`).
    pub rewritten: std::collections::HashSet<VarId>,
}

impl<'f> Gen<'f> {
    pub fn new(f: &'f Function) -> Self {
        Gen {
            f,
            rules: Ident::new("rules", Span::mixed_site()),
            view: Ident::new("view", Span::mixed_site()),
            moves: super::moves::moves(f),
            owned_temporaries: owned_temporaries(f),
            blocks: blocks(&f.body.stmts),
            tuples: super::ir::instructions(&f.body.stmts)
                .iter()
                .filter(|i| matches!(i.op, Op::Tuple(_)))
                .map(|i| i.dest)
                .collect(),
            shape_sources: super::shapes::shape_sources(f),
            rewritten: super::rewritten::rewritten(f),
        }
    }

    /// `use ::ad::__private::rules::{self, view};`, both names mixed-site.
    pub fn prelude(&self) -> TokenStream {
        let (rules, view) = (&self.rules, &self.view);
        quote! {
            #[allow(unused_imports)]
            use ::ad::__private::#rules::{self, #view};
        }
    }

    /// `rules` pointing at the user's expression, so a missing rule (an
    /// unsupported type) is reported there.
    pub fn rules_at(&self, span: Span) -> Ident {
        let mut r = self.rules.clone();
        r.set_span(self.rules.span().located_at(span));
        r
    }

    pub fn ident(&self, v: VarId) -> &Ident {
        self.f.ident(v)
    }

    pub fn bar(&self, v: VarId) -> Ident {
        suffixed(self.ident(v), "bar")
    }

    pub fn dot(&self, v: VarId) -> Ident {
        suffixed(self.ident(v), "dot")
    }

    pub fn pullback(&self, v: VarId) -> Ident {
        suffixed(self.ident(v), "pullback")
    }

    /// An operand as the rules take it.
    pub fn operand(&self, o: &Operand) -> TokenStream {
        let view = &self.view;
        match o {
            Operand::Var(v) => {
                let x = self.ident(*v);
                let at = self.f.vars[v.0].span;
                let mut view = view.clone();
                view.set_span(self.view.span().located_at(at));
                quote_spanned!(at=> #view(&#x))
            }
            Operand::Const(Const {
                tokens,
                literal: true,
                ..
            }) => tokens.clone(),
            Operand::Const(Const { tokens, .. }) => quote!(#view(&#tokens)),
        }
    }

    /// Whether the list or array an update takes by value (operand 0 of a
    /// push, a pop or an element write) is read again after it: a `Vec`'s
    /// clone names the same value as the original (`lower/call.rs`), so
    /// an update of either copies it.
    fn read_again(&self, inst: &Inst) -> bool {
        matches!(inst.op.operands().first(), Some(Operand::Var(_)))
            && !self.moves.contains(&Site::Operand {
                inst: inst.dest,
                pos: 0,
            })
    }

    /// `x`, the operand an update takes by value, or a copy of it where
    /// it is read again (`read_again`).
    pub fn updated(&self, inst: &Inst, x: TokenStream) -> TokenStream {
        if self.read_again(inst) {
            quote!(::core::clone::Clone::clone(&#x))
        } else {
            x
        }
    }

    /// The name or tokens of an operand, for native syntax (`x[i]`).
    pub fn place(&self, o: &Operand) -> TokenStream {
        match o {
            Operand::Var(v) => {
                let x = self.ident(*v);
                quote!(#x)
            }
            Operand::Const(c) => c.tokens.clone(),
        }
    }

    /// The tangent of an active operand, as the rules take it.
    pub fn tangent(&self, v: VarId) -> TokenStream {
        let (view, d) = (&self.view, self.dot(v));
        quote!(#view(&#d))
    }

    /// The value of a linear or unary instruction with operand `a` replaced
    /// by `a_tokens` (the primal operand, or a tangent for linear ops).
    pub fn apply(&self, inst: &Inst, a: TokenStream) -> TokenStream {
        let s = inst.span;
        let r = &self.rules_at(s);
        match &inst.op {
            Op::Neg(_) => quote_spanned!(s=> #r::neg(#a)),
            Op::Unary(f, _) => {
                let f = Ident::new(f, s);
                quote_spanned!(s=> #r::#f(#a))
            }
            Op::Powi(_, n) => {
                let n = &n.tokens;
                quote_spanned!(s=> #r::powi(#a, #n))
            }
            Op::Cast(_, ty) => quote_spanned!(s=> #r::cast::<#ty, _>(#a)),
            Op::Reduce(Reduce::Sum, _) => quote_spanned!(s=> #r::sum(#a)),
            Op::Reduce(Reduce::Mean, _) => quote_spanned!(s=> #r::mean(#a)),
            Op::ReduceAxis(red, _, k) => {
                let k = &k.tokens;
                match red {
                    Reduce::Sum => quote_spanned!(s=> #r::sum_axis(#a, #k)),
                    Reduce::Mean => quote_spanned!(s=> #r::mean_axis(#a, #k)),
                }
            }
            Op::Transpose(_) => quote_spanned!(s=> #r::t(#a)),
            Op::Diag(_) => quote_spanned!(s=> #r::diag(#a)),
            Op::Row(_, i) => {
                let i = &i.tokens;
                quote_spanned!(s=> #r::row(#a, #i))
            }
            Op::Column(_, j) => {
                let j = &j.tokens;
                quote_spanned!(s=> #r::column(#a, #j))
            }
            Op::Slice(_, info) => {
                let info = &info.tokens;
                quote_spanned!(s=> #r::slice(#a, #info))
            }
            Op::View(_) => quote_spanned!(s=> #r::view_of(#a)),
            Op::ToOwned(_) => quote_spanned!(s=> #r::to_owned(#a)),
            Op::InsertAxis(_, k) => {
                let k = &k.tokens;
                quote_spanned!(s=> #r::insert_axis(#a, #k))
            }
            Op::IntoShape(_, k) => {
                let k = &k.tokens;
                quote_spanned!(s=> #r::into_shape_with_order(#a, #k))
            }
            Op::Index(_, idx) => {
                let idx = &idx.tokens;
                quote_spanned!(s=> #a[#idx])
            }
            Op::Item(_, idx) => {
                let idx = &idx.tokens;
                quote_spanned!(s=> #r::item(&#a, #idx))
            }
            Op::FromList(_) => quote_spanned!(s=> #r::from_list(&#a)),
            Op::Pop(_) => quote_spanned!(s=> #r::popped(#a)),
            Op::FromElem(shape, _) => {
                let shape = &shape.tokens;
                quote_spanned!(s=> #r::from_elem(#shape, #a))
            }
            Op::Place(_, path) => quote_spanned!(s=> &#a #path),
            Op::Unwrap(_, None) => quote_spanned!(s=> #a.unwrap()),
            Op::SomeOf(_) => quote_spanned!(s=> #r::some_of(#a)),
            Op::Unwrap(_, Some(msg)) => {
                let msg = &msg.tokens;
                quote_spanned!(s=> #a.expect(#msg))
            }
            Op::Mapv(_, c) => {
                let source = &c.source;
                quote_spanned!(s=> #r::mapv(#a, #source))
            }
            Op::Arith(..)
            | Op::Binary(..)
            | Op::MulAdd(..)
            | Op::Dot(..)
            | Op::Stack(..)
            | Op::Tuple(..)
            | Op::Join { .. }
            | Op::Call(..)
            | Op::IndexWrite(..)
            | Op::IndexAdd(..)
            | Op::SliceWrite(..)
            | Op::Push(..) => {
                unreachable!("apply() is for one-operand instructions")
            }
        }
    }

    /// `{ let mut array = y; array[idx] = v; array }`, or
    /// `rules::slice_write(y, info, v)`: the array is updated in place, or a
    /// copy of it when `copy` (the reverse sweep reads the old one).
    pub fn element_write(&self, inst: &Inst, copy: bool) -> TokenStream {
        let (Op::IndexWrite(base, idx, value)
        | Op::IndexAdd(base, idx, value)
        | Op::SliceWrite(base, idx, value)) = &inst.op
        else {
            unreachable!("element_write is for element and slice writes")
        };
        let array = Ident::new("array", Span::mixed_site());
        let base = match base {
            Operand::Var(v) if copy => {
                let x = self.ident(*v);
                quote!(::core::clone::Clone::clone(&#x))
            }
            other => self.updated(inst, self.place(other)),
        };
        if let Op::SliceWrite(..) = inst.op {
            let (r, value) = (self.rules_at(inst.span), self.operand(value));
            let info = &idx.tokens;
            return quote_spanned!(inst.span=> #r::slice_write(#base, #info, #value));
        }
        let (idx, value) = (&idx.tokens, self.place(value));
        let assign = match &inst.op {
            Op::IndexAdd(..) => quote!(+=),
            _ => quote!(=),
        };
        quote_spanned!(inst.span=> { let mut #array = #base; #array[#idx] #assign #value; #array })
    }

    /// `rules::push(list, item)`: the list moves on with the item, or a
    /// copy of the list when `copy` (the reverse sweep reads the list before
    /// the push). The item moves in when `move_item`, and is copied
    /// otherwise.
    pub fn push(&self, inst: &Inst, copy: bool, move_item: bool) -> TokenStream {
        let Op::Push(list, item) = &inst.op else {
            unreachable!("push is for pushes")
        };
        let s = inst.span;
        let r = &self.rules_at(s);
        let list = match list {
            Operand::Var(v) if copy => {
                let x = self.ident(*v);
                quote!(::core::clone::Clone::clone(&#x))
            }
            other => self.updated(inst, self.place(other)),
        };
        let item = if move_item {
            self.place(item)
        } else {
            self.owned(item, s)
        };
        quote_spanned!(s=> #r::push(#list, #item))
    }

    /// The item of a push that may move into the list: an owned value
    /// made in the push's block, which nothing reads afterwards (the
    /// reverse sweep aside, which the caller checks).
    pub fn movable_item(&self, inst: &Inst) -> Option<VarId> {
        let Op::Push(_, Operand::Var(item)) = &inst.op else {
            return None;
        };
        let site = super::moves::Site::Operand {
            inst: inst.dest,
            pos: 1,
        };
        (self.owned_temporaries.contains(item)
            && self.moves.contains(&site)
            && self.blocks.get(item) == self.blocks.get(&inst.dest))
        .then_some(*item)
    }

    /// An owned copy of an operand's value: a float, or an owned array.
    pub fn owned(&self, o: &Operand, s: Span) -> TokenStream {
        if let Operand::Var(v) = o {
            if self.tuples.contains(v) {
                let x = self.ident(*v);
                return quote_spanned!(s=> ::core::clone::Clone::clone(&#x));
            }
        }
        if let Operand::Const(c) = o {
            if c.is_no_tangent() {
                return c.tokens.clone();
            }
        }
        let r = &self.rules_at(s);
        let o = self.operand(o);
        quote_spanned!(s=> #r::to_owned(#o))
    }

    /// Whether the instruction reads its operand natively (`x[i]`,
    /// `x.unwrap()`) rather than through `view`.
    pub fn native(op: &Op) -> bool {
        matches!(
            op,
            Op::Index(..)
                | Op::Item(..)
                | Op::Pop(_)
                | Op::FromList(_)
                | Op::Unwrap(..)
                | Op::Place(..)
                | Op::SomeOf(_)
        )
    }

    /// The primal value of an instruction (calls excepted: each mode calls
    /// its own derivative of the callee).
    pub fn primal(&self, inst: &Inst) -> TokenStream {
        let s = inst.span;
        let r = &self.rules_at(s);
        match &inst.op {
            Op::Arith(op, a, b) => {
                let f = arith_name(*op, s);
                let (a, b) = (self.operand(a), self.operand(b));
                quote_spanned!(s=> #r::#f(#a, #b))
            }
            Op::Binary(f, a, b) => {
                let f = Ident::new(f, s);
                let (a, b) = (self.operand(a), self.operand(b));
                quote_spanned!(s=> #r::#f(#a, #b))
            }
            Op::MulAdd(a, b, c) => {
                let (a, b, c) = (self.operand(a), self.operand(b), self.operand(c));
                quote_spanned!(s=> #r::mul_add(#a, #b, #c))
            }
            Op::Dot(a, b) => {
                let (a, b) = (self.operand(a), self.operand(b));
                quote_spanned!(s=> #r::dot(#a, #b))
            }
            Op::Stack(items) => {
                let items = items.iter().map(|a| self.operand(a));
                quote_spanned!(s=> #r::stack([#(#items),*]))
            }
            // Each item owned, as the function's result type has it.
            Op::Tuple(items) => {
                let items = items.iter().map(|a| self.owned(a, s));
                quote_spanned!(s=> (#(#items,)*))
            }
            Op::Join {
                axis,
                parts,
                new_axis,
            } => {
                let f = join_rule(*new_axis, "", s);
                let (axis, parts) = (&axis.tokens, parts.iter().map(|a| self.operand(a)));
                quote_spanned!(s=> #r::#f(#axis, [#(#parts),*]))
            }
            Op::Call(func, args) => {
                let call = func.call(None, args.iter().map(|a| self.call_arg(a)).collect());
                quote_spanned!(s=> #call)
            }
            Op::IndexWrite(..) | Op::IndexAdd(..) | Op::SliceWrite(..) => {
                self.element_write(inst, false)
            }
            Op::Push(..) => self.push(inst, false, self.movable_item(inst).is_some()),
            op => {
                let a = &op.operands()[0];
                let a = if let Op::Pop(_) = op {
                    self.updated(inst, self.place(a))
                } else if Self::native(op) {
                    self.place(a)
                } else {
                    self.operand(a)
                };
                self.apply(inst, a)
            }
        }
    }

    /// Whether a call passes a reference to a value of the body (`g(&h)`):
    /// the callee's pullback would borrow it past the forward sweep, so
    /// reverse mode calls the callee's `_vjp` again in the reverse sweep
    /// (the value travels there like any other) instead of keeping the
    /// pullback.
    pub fn borrows_local(&self, inst: &Inst) -> bool {
        let Op::Call(_, args) = &inst.op else {
            return false;
        };
        args.iter().any(|a| {
            a.by_ref
                && match a.operand {
                    Operand::Var(v) => !self.f.caller_refs.contains(&v),
                    Operand::Const(_) => a.local,
                }
        })
    }

    /// An argument of a call as the callee expects it: as written for
    /// constants, `&x` or a clone of `x` for active values. A reference
    /// into the caller's data is passed as it is (it is `Copy`), so that
    /// Rust coerces it as in the user's call (`&Vec<f64>` to `&[f64]`).
    pub fn call_arg(&self, arg: &super::ir::CallArg) -> TokenStream {
        match &arg.operand {
            Operand::Const(_) => arg.source.clone(),
            Operand::Var(v) => self.passed(*v, self.ident(*v), arg.by_ref),
        }
    }

    /// `x` (or its tangent) as a call argument: `&x` where the call
    /// borrows it, `x` for a reference, otherwise a clone.
    pub fn passed(&self, v: VarId, x: impl ToTokens, by_ref: bool) -> TokenStream {
        if by_ref {
            quote!(&#x)
        } else if self.f.caller_refs.contains(&v) {
            quote!(#x)
        } else {
            quote!(::core::clone::Clone::clone(&#x))
        }
    }

    /// `let x: T = value;`
    pub fn bind(&self, inst: &Inst, value: TokenStream) -> TokenStream {
        let x = self.ident(inst.dest);
        match &inst.ty {
            Some(ty) => quote!(let #x: #ty = #value;),
            None => quote!(let #x = #value;),
        }
    }

    /// A statement that is the same in every mode: inactive code and
    /// constants.
    pub fn shared_stmt(&self, stmt: &Stmt) -> Option<TokenStream> {
        match stmt {
            Stmt::Verbatim(t) => Some(t.clone()),
            Stmt::Const { ident, expr, .. } => Some(quote!(let #ident = #expr;)),
            Stmt::InactiveLet { tokens, .. } => Some(tokens.clone()),
            Stmt::Inst(_) | Stmt::If(_) | Stmt::Loop(_) => None,
        }
    }
}

/// The block each value is defined in, by address: an instruction's result,
/// a branch's or a loop's result (the enclosing block), a loop variable's
/// value in an iteration (the body).
fn blocks(stmts: &[Stmt]) -> std::collections::HashMap<VarId, usize> {
    let mut out = std::collections::HashMap::new();
    fn walk(stmts: &[Stmt], out: &mut std::collections::HashMap<VarId, usize>) {
        let here = stmts.as_ptr() as usize;
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    out.insert(i.dest, here);
                }
                Stmt::If(i) => {
                    walk(&i.then, out);
                    walk(&i.els, out);
                    for p in &i.phis {
                        out.insert(p.dest, here);
                    }
                }
                Stmt::Loop(l) => {
                    walk(&l.body, out);
                    for c in &l.carried {
                        out.insert(c.input, l.body.as_ptr() as usize);
                        out.insert(c.output, here);
                    }
                }
                _ => {}
            }
        }
    }
    walk(stmts, &mut out);
    out
}

fn owned_temporaries(f: &Function) -> std::collections::HashSet<VarId> {
    let insts = super::ir::instructions(&f.body.stmts);
    let borrowed: std::collections::HashSet<VarId> = insts
        .iter()
        .filter(|i| i.op.makes_view())
        .flat_map(|i| i.op.var_operands())
        .collect();
    insts
        .iter()
        .filter(|i| {
            matches!(
                i.op,
                Op::Arith(..)
                    | Op::Neg(_)
                    | Op::Unary(..)
                    | Op::Powi(..)
                    | Op::Binary(..)
                    | Op::MulAdd(..)
                    | Op::Dot(..)
                    | Op::ReduceAxis(super::ir::Reduce::Sum, ..)
                    | Op::Mapv(..)
                    | Op::ToOwned(_)
            ) && !borrowed.contains(&i.dest)
        })
        .map(|i| i.dest)
        .collect()
}

pub fn arith_name(op: Arith, span: Span) -> Ident {
    let name = match op {
        Arith::Add => "add",
        Arith::Sub => "sub",
        Arith::Mul => "mul",
        Arith::Div => "div",
    };
    Ident::new(name, span)
}

fn suffixed(base: &Ident, suffix: &str) -> Ident {
    let name = base.to_string();
    let name = name.trim_start_matches("r#");
    format_ident!("{}_{}", name, suffix, span = Span::mixed_site())
}

/// The rule for `concatenate` or `stack` (`stack_along`, as `stack` is
/// `array![..]`'s), with `suffix`.
pub(super) fn join_rule(
    new_axis: bool,
    suffix: &str,
    span: proc_macro2::Span,
) -> proc_macro2::Ident {
    let name = if new_axis {
        "stack_along"
    } else {
        "concatenate"
    };
    quote::format_ident!("{name}{suffix}", span = span)
}
