//! The body in A-normal form: one operation per instruction, each active
//! value a numbered variable, every instruction keeping the span of the user
//! expression it came from. Inactive code stays as tokens.

use std::fmt::Write;

use proc_macro2::{Ident, Span, TokenStream};
use syn::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub usize);

pub struct VarInfo {
    /// The name generated code uses: the user's for parameters, a mixed-site
    /// name after the user's binding (or `t1`, `t2`, ... for temporaries).
    pub ident: Ident,
    /// Where the user's code makes the value, for diagnostics about it.
    pub span: Span,
    /// The value borrows another (`w.t()`, `x.row(i)`): a pullback closure
    /// recomputes it instead of capturing it.
    pub is_view: bool,
}

#[derive(Clone)]
pub enum Operand {
    Var(VarId),
    Const(Const),
}

/// An inactive value: a literal, a name, or a constant bound once.
#[derive(Clone)]
pub struct Const {
    pub tokens: TokenStream,
    /// An unsuffixed float literal (or a name bound to one): passed as it is,
    /// so its type is inferred from the active operand beside it.
    pub literal: bool,
    /// Known to hold one float (a literal, `F::of(x)`, `i as f64`): its
    /// shape needs no reading.
    pub scalar: bool,
}

impl Const {
    /// Tokens of no known kind.
    pub fn opaque(tokens: proc_macro2::TokenStream) -> Const {
        Const {
            tokens,
            literal: false,
            scalar: false,
        }
    }

    /// `ad::NoTangent`: the gradient entry of a `#[constant]` parameter.
    pub fn no_tangent() -> Const {
        Const::opaque(quote::quote!(::ad::NoTangent))
    }

    /// Whether this is [`Const::no_tangent`], a value that is no float
    /// (the rules' `view` does not take it).
    pub fn is_no_tangent(&self) -> bool {
        self.tokens.to_string() == Const::no_tangent().tokens.to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Sum,
    Mean,
}

pub enum Op {
    Arith(Arith, Operand, Operand),
    Neg(Operand),
    /// `x.exp()`, `f64::tanh(x)`, `x.mapv(f64::tanh)`.
    Unary(&'static str, Operand),
    Powi(Operand, Const),
    /// `a.atan2(b)`, `a.powf(b)`, `a.hypot(b)`, `a.max(b)`, `a.min(b)`, `a.log(b)`.
    Binary(&'static str, Operand, Operand),
    MulAdd(Operand, Operand, Operand),
    /// `x as f64`.
    Cast(Operand, Box<Type>),
    Dot(Operand, Operand),
    Reduce(Reduce, Operand),
    ReduceAxis(Reduce, Operand, Const),
    /// `t()` and `reversed_axes()`.
    Transpose(Operand),
    Row(Operand, Const),
    Column(Operand, Const),
    /// `diag()`: a matrix's diagonal, a view.
    Diag(Operand),
    Slice(Operand, Const),
    /// `view()`.
    View(Operand),
    /// `to_owned()` and `clone()`.
    ToOwned(Operand),
    InsertAxis(Operand, Const),
    IntoShape(Operand, Const),
    /// `x[i]`, `x[[i, j]]`.
    Index(Operand, Const),
    /// `Array::from_elem(shape, x)` with `x` active.
    FromElem(Const, Operand),
    /// `array![a, b, c]`, `Array1::from(vec![a, b, c])`: a 1-D array of
    /// scalars.
    Stack(Vec<Operand>),
    /// `(a, b)`: several values as one, as a function returns them.
    Tuple(Vec<Operand>),
    /// `concatenate(axis, &[a, b])` (`new_axis` false) or
    /// `stack(axis, &[a, b])`: a `Result`, as ndarray's.
    Join {
        axis: Const,
        parts: Vec<Operand>,
        new_axis: bool,
    },
    /// `y[idx] = value`: `y` with one element replaced (in place when the
    /// reverse sweep does not read the old `y`).
    IndexWrite(Operand, Const, Operand),
    /// `y[idx] += value`.
    IndexAdd(Operand, Const, Operand),
    /// `y.slice_mut(info).assign(&value)`: `y` with a part replaced, as
    /// `IndexWrite` replaces one element.
    SliceWrite(Operand, Const, Operand),
    /// `&p.layers[i].w`: a field of a `Differentiable` struct, by reference;
    /// the path (`.layers[i].w`) is the same in the tangent struct.
    Place(Operand, TokenStream),
    /// `.unwrap()` or `.expect(msg)` on an `Option` or `Result` an ndarray
    /// method returned.
    Unwrap(Operand, Option<Const>),
    /// `if let Some(b) = &p.bias`: the value inside an `Option` field of
    /// a `Differentiable` struct, by reference (its cotangent adds into
    /// the field's `Some`).
    SomeOf(Operand),
    /// `list.push(item)` on a `Vec` local: the list with the item added
    /// (`lists.rs` in the runtime).
    Push(Operand, Operand),
    /// `list.pop()` on such a `Vec`, its last item read (`Item`) before:
    /// the list without it.
    Pop(Operand),
    /// `list[i]` of such a `Vec`: a float, or a view of an array.
    Item(Operand, Const),
    /// `Array1::from(list)` of such a `Vec` of floats.
    FromList(Operand),
    /// `x.mapv(|v| body)`: the closure as written, and its body lowered.
    Mapv(Operand, Box<Closure>),
    /// `g(args)` for `g` with `g_vjp`/`g_jvp`, or `r.g(args)`, a method of
    /// a struct with `#[differentiable]` on `g(&self, ..)`, whose receiver
    /// `&r` is the first argument.
    Call(Box<Callee>, Vec<CallArg>),
}

/// What a call calls.
#[derive(Clone)]
pub enum Callee {
    /// `g(args)`, `Self::g(self, args)`, `module::g::<T>(args)`.
    Path(syn::ExprPath),
    /// `r.g(args)`: method syntax, as the receiver's type is not known.
    Method(Ident),
}

impl Callee {
    /// The call of the function's derivative `suffix` (`vjp`, `jvp`), or of
    /// the function itself, with `args` (a method's receiver first).
    pub fn call(&self, suffix: Option<&str>, args: Vec<TokenStream>) -> TokenStream {
        let named = |name: &Ident| match suffix {
            Some(suffix) => quote::format_ident!("{}_{}", name, suffix, span = name.span()),
            None => name.clone(),
        };
        match self {
            Callee::Path(path) => {
                let mut path = path.clone();
                if let Some(last) = path.path.segments.last_mut() {
                    last.ident = named(&last.ident);
                }
                quote::quote!(#path(#(#args),*))
            }
            Callee::Method(method) => {
                let method = named(method);
                let (receiver, rest) = args.split_first().expect("a method call has a receiver");
                quote::quote!((#receiver).#method(#(#rest),*))
            }
        }
    }
}

pub struct Closure {
    /// The closure as the user wrote it.
    pub source: TokenStream,
    pub param: VarId,
    pub body: Body,
    /// The active values of the enclosing body that it reads (`mu` in
    /// `x.mapv(|v| (v - mu).powi(2))`): operands of the `mapv` after the
    /// array.
    pub captures: Vec<Operand>,
}

#[derive(Clone)]
pub struct CallArg {
    pub operand: Operand,
    /// Written `&x` at the call.
    pub by_ref: bool,
    /// The argument as written (for inactive arguments).
    pub source: TokenStream,
    /// An inactive argument that reads the body's own variables.
    pub local: bool,
}

pub struct Inst {
    pub dest: VarId,
    pub op: Op,
    pub span: Span,
    /// The user's annotation, `let h: Array1<f64> = ...`.
    pub ty: Option<Box<Type>>,
}

pub enum Stmt {
    Inst(Inst),
    /// Inactive code, emitted as written (with active names renamed).
    Verbatim(TokenStream),
    /// A constant operand bound once: `let c1 = expr;`. `local` when the
    /// expression reads local variables, so a pullback closure recomputes
    /// it rather than capture what may borrow them.
    Const {
        ident: Ident,
        expr: TokenStream,
        local: bool,
    },
    /// A `let` of inactive values (kept as written) that binds `names`,
    /// which the reverse sweep may read (an index computed in a loop).
    InactiveLet {
        tokens: TokenStream,
        names: Vec<Ident>,
        /// Those of `names` that view an array the body binds (`let d =
        /// m.diag();`): a record saves an owned copy, as it may outlive
        /// the array.
        views: Vec<Ident>,
    },
    If(Box<If>),
    Loop(Box<Loop>),
}

/// `if cond { then } else { els }` with an inactive condition. Variables the
/// branches assign, and the value of the `if` itself, meet in `phis`.
pub struct If {
    pub cond: TokenStream,
    pub then: Vec<Stmt>,
    pub els: Vec<Stmt>,
    pub phis: Vec<Phi>,
    /// The value of the `if` when it is inactive in both branches.
    pub value: Option<ConstPhi>,
}

/// `dest` is `then` after the then branch and `els` after the else branch.
pub struct Phi {
    pub dest: VarId,
    pub then: Operand,
    pub els: Operand,
}

pub struct ConstPhi {
    pub ident: Ident,
    pub then: TokenStream,
    pub els: TokenStream,
}

/// `for pat in iter { body }` or `while cond { body }` over inactive
/// iterators and conditions. Variables the body reassigns are `carried`.
pub struct Loop {
    pub head: LoopHead,
    pub body: Vec<Stmt>,
    pub carried: Vec<Carried>,
    /// Checked after each iteration: `if exit { break; }`.
    pub exit: Option<TokenStream>,
}

#[derive(Clone)]
pub enum LoopHead {
    /// The pattern's names are inactive values the body may read.
    For {
        pat: TokenStream,
        names: Vec<Ident>,
        iter: TokenStream,
        /// The iterator is a range (possibly reversed or stepped), whose
        /// length is known before the loop.
        exact: bool,
        /// The iterator borrows a value the body binds (`for v in
        /// table.iter()`): a record saves owned copies of the items, as it
        /// outlives that value.
        borrows_local: bool,
    },
    While {
        cond: TokenStream,
    },
}

/// A variable the loop body reassigns: `input` at the start of an
/// iteration (`init` before the first), `next` at its end, `output` after
/// the loop.
pub struct Carried {
    pub input: VarId,
    pub init: Operand,
    pub next: Operand,
    pub output: VarId,
}

pub struct Body {
    pub stmts: Vec<Stmt>,
    pub result: Operand,
}

pub struct Function {
    /// The function's name, for its calls of itself.
    pub name: String,
    /// The lifetime the boxed pullbacks of those calls live for
    /// (`Signature::pullback_lifetime`).
    pub pullback_lifetime: syn::Lifetime,
    pub vars: Vec<VarInfo>,
    /// The variable of each active parameter, in order.
    pub params: Vec<Option<VarId>>,
    /// The active parameters declared `f64` or `f32`.
    pub scalar_params: Vec<VarId>,
    /// The active values that are references into the caller's data:
    /// parameters `&T` and the fields reached through them. A callee's
    /// pullback may borrow them past the function's end.
    pub caller_refs: Vec<VarId>,
    /// The active parameters that are bags: slices or `Vec`s of `Vec`s of
    /// floats (`xs: &[Vec<f64>]`). Their items read as 1-D arrays, but
    /// their adjoints are `Vec`s.
    pub bags: Vec<VarId>,
    pub body: Body,
}

impl Op {
    /// The array (or `Vec`) an element or slice write updates, which keeps
    /// its shape.
    pub fn written(&self) -> Option<&Operand> {
        match self {
            Op::IndexWrite(base, ..) | Op::IndexAdd(base, ..) | Op::SliceWrite(base, ..) => {
                Some(base)
            }
            _ => None,
        }
    }

    /// The operands, in order.
    pub fn operands(&self) -> Vec<&Operand> {
        match self {
            Op::Arith(_, a, b) | Op::Binary(_, a, b) | Op::Dot(a, b) => vec![a, b],
            Op::IndexWrite(a, _, b)
            | Op::IndexAdd(a, _, b)
            | Op::SliceWrite(a, _, b)
            | Op::Push(a, b) => vec![a, b],
            Op::MulAdd(a, b, c) => vec![a, b, c],
            Op::Stack(items) | Op::Tuple(items) | Op::Join { parts: items, .. } => {
                items.iter().collect()
            }
            Op::Neg(a)
            | Op::Unary(_, a)
            | Op::Powi(a, _)
            | Op::Cast(a, _)
            | Op::Reduce(_, a)
            | Op::ReduceAxis(_, a, _)
            | Op::Transpose(a)
            | Op::Diag(a)
            | Op::Row(a, _)
            | Op::Column(a, _)
            | Op::Slice(a, _)
            | Op::View(a)
            | Op::ToOwned(a)
            | Op::InsertAxis(a, _)
            | Op::IntoShape(a, _)
            | Op::Index(a, _)
            | Op::Item(a, _)
            | Op::Pop(a)
            | Op::FromList(a)
            | Op::FromElem(_, a)
            | Op::Place(a, _)
            | Op::Unwrap(a, _)
            | Op::SomeOf(a) => vec![a],
            Op::Mapv(a, c) => std::iter::once(a).chain(&c.captures).collect(),
            Op::Call(_, args) => args.iter().map(|a| &a.operand).collect(),
        }
    }

    /// The inactive code the instruction carries besides its operands:
    /// an index, an axis, an exponent, a shape, a field's path.
    pub fn inline_tokens(&self) -> Vec<&TokenStream> {
        match self {
            Op::Powi(_, c)
            | Op::ReduceAxis(_, _, c)
            | Op::Row(_, c)
            | Op::Column(_, c)
            | Op::Slice(_, c)
            | Op::InsertAxis(_, c)
            | Op::IntoShape(_, c)
            | Op::Index(_, c)
            | Op::Item(_, c)
            | Op::FromElem(c, _)
            | Op::IndexWrite(_, c, _)
            | Op::IndexAdd(_, c, _)
            | Op::SliceWrite(_, c, _)
            | Op::Unwrap(_, Some(c))
            | Op::Join { axis: c, .. } => vec![&c.tokens],
            Op::Place(_, path) => vec![path],
            _ => Vec::new(),
        }
    }

    pub fn var_operands(&self) -> Vec<VarId> {
        self.operands()
            .into_iter()
            .filter_map(|o| match o {
                Operand::Var(v) => Some(*v),
                Operand::Const(_) => None,
            })
            .collect()
    }

    /// The result borrows its first operand.
    pub fn makes_view(&self) -> bool {
        matches!(
            self,
            Op::Transpose(_)
                | Op::Diag(_)
                | Op::Row(..)
                | Op::Column(..)
                | Op::Slice(..)
                | Op::View(_)
                | Op::InsertAxis(..)
                | Op::IntoShape(..)
                | Op::Place(..)
                | Op::Item(..)
                | Op::SomeOf(_)
        )
    }

    pub fn name(&self) -> String {
        match self {
            Op::Arith(a, ..) => format!("{a:?}").to_lowercase(),
            Op::Neg(_) => "neg".into(),
            Op::Unary(f, _) => (*f).into(),
            Op::Powi(..) => "powi".into(),
            Op::Binary(f, ..) => (*f).into(),
            Op::MulAdd(..) => "mul_add".into(),
            Op::Cast(..) => "cast".into(),
            Op::Dot(..) => "dot".into(),
            Op::Reduce(r, _) => format!("{r:?}").to_lowercase(),
            Op::ReduceAxis(r, ..) => format!("{r:?}_axis").to_lowercase(),
            Op::Transpose(_) => "t".into(),
            Op::Row(..) => "row".into(),
            Op::Diag(_) => "diag".into(),
            Op::Column(..) => "column".into(),
            Op::Slice(..) => "slice".into(),
            Op::View(_) => "view".into(),
            Op::ToOwned(_) => "to_owned".into(),
            Op::InsertAxis(..) => "insert_axis".into(),
            Op::IntoShape(..) => "into_shape_with_order".into(),
            Op::Index(..) => "index".into(),
            Op::Push(..) => "push".into(),
            Op::Pop(_) => "pop".into(),
            Op::Item(..) => "item".into(),
            Op::FromList(_) => "from_list".into(),
            Op::FromElem(..) => "from_elem".into(),
            Op::Stack(..) => "array".into(),
            Op::Tuple(..) => "tuple".into(),
            Op::Join { new_axis, .. } => if *new_axis { "stack" } else { "concatenate" }.into(),
            Op::IndexWrite(..) => "index_write".into(),
            Op::IndexAdd(..) => "index_add".into(),
            Op::SliceWrite(..) => "slice_write".into(),
            Op::Place(_, path) => format!("place{}", path.to_string().replace(' ', "")),
            Op::Unwrap(..) => "unwrap".into(),
            Op::SomeOf(_) => "some".into(),
            Op::Mapv(..) => "mapv".into(),
            Op::Call(callee, _) => match &**callee {
                Callee::Path(p) => {
                    let p = &p.path;
                    quote::quote!(#p).to_string().replace(' ', "")
                }
                Callee::Method(m) => format!(".{m}"),
            },
        }
    }
}

/// Every instruction of a block, nested blocks included, in program order.
pub fn instructions(stmts: &[Stmt]) -> Vec<&Inst> {
    fn walk<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Inst>) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => out.push(i),
                Stmt::If(i) => {
                    walk(&i.then, out);
                    walk(&i.els, out);
                }
                Stmt::Loop(l) => walk(&l.body, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(stmts, &mut out);
    out
}

/// Every stretch of inactive code in statements, nested blocks and
/// closure bodies included: what may name a local by its written name.
pub fn stmt_token_streams(stmts: &[Stmt]) -> Vec<&TokenStream> {
    fn operand<'a>(o: &'a Operand, out: &mut Vec<&'a TokenStream>) {
        if let Operand::Const(c) = o {
            out.push(&c.tokens);
        }
    }
    fn walk<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a TokenStream>) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    for o in i.op.operands() {
                        operand(o, out);
                    }
                    out.extend(i.op.inline_tokens());
                    match &i.op {
                        Op::Call(_, args) => out.extend(args.iter().map(|a| &a.source)),
                        Op::Mapv(_, c) => {
                            out.push(&c.source);
                            walk(&c.body.stmts, out);
                            operand(&c.body.result, out);
                        }
                        _ => {}
                    }
                }
                Stmt::Verbatim(t) | Stmt::InactiveLet { tokens: t, .. } => out.push(t),
                Stmt::Const { expr, .. } => out.push(expr),
                Stmt::If(i) => {
                    out.push(&i.cond);
                    walk(&i.then, out);
                    walk(&i.els, out);
                    if let Some(c) = &i.value {
                        out.extend([&c.then, &c.els]);
                    }
                    for p in &i.phis {
                        operand(&p.then, out);
                        operand(&p.els, out);
                    }
                }
                Stmt::Loop(l) => {
                    match &l.head {
                        LoopHead::For { pat, iter, .. } => out.extend([pat, iter]),
                        LoopHead::While { cond } => out.push(cond),
                    }
                    walk(&l.body, out);
                    for c in &l.carried {
                        operand(&c.init, out);
                        operand(&c.next, out);
                    }
                    out.extend(&l.exit);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(stmts, &mut out);
    out
}

/// Every stretch of inactive code in a body, its result included.
pub fn token_streams(body: &Body) -> Vec<&TokenStream> {
    let mut out = stmt_token_streams(&body.stmts);
    if let Operand::Const(c) = &body.result {
        out.push(&c.tokens);
    }
    out
}

impl Function {
    pub fn ident(&self, v: VarId) -> &Ident {
        &self.vars[v.0].ident
    }

    /// Whether a call's function is this one (`f(..)` or `f::<T>(..)` in
    /// `f`'s body; `Self::f(..)`, which `self.f(..)` is, in a method's).
    /// A method of the same name on another receiver (`self.left.value()`)
    /// may be this one too, on a field of the same type: counted.
    pub fn calls_itself(&self, callee: &Callee) -> bool {
        let func = match callee {
            Callee::Path(func) => func,
            Callee::Method(method) => return *method == self.name,
        };
        let segments: Vec<&syn::Ident> = func.path.segments.iter().map(|s| &s.ident).collect();
        func.qself.is_none()
            && match segments.as_slice() {
                [name] => *name == &self.name,
                [ty, name] => *ty == "Self" && *name == &self.name,
                _ => false,
            }
    }

    /// Whether the body calls this function anywhere.
    pub fn is_recursive(&self) -> bool {
        instructions(&self.body.stmts)
            .iter()
            .any(|i| matches!(&i.op, Op::Call(func, _) if self.calls_itself(func)))
    }

    /// A stable text form for snapshots and debugging:
    /// `%2 h = tanh(%1)`, constants in braces.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| match p {
                Some(v) => format!("%{} {}", v.0, self.ident(*v)),
                None => "const".into(),
            })
            .collect();
        let _ = writeln!(out, "params: {}", params.join(", "));
        self.dump_body(&self.body, 0, &mut out);
        out
    }

    fn dump_body(&self, body: &Body, depth: usize, out: &mut String) {
        self.dump_stmts(&body.stmts, depth, out);
        let pad = "  ".repeat(depth);
        let _ = writeln!(out, "{pad}return {}", self.dump_operand(&body.result));
    }

    fn dump_stmts(&self, stmts: &[Stmt], depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    let args: Vec<String> =
                        i.op.operands()
                            .iter()
                            .map(|o| self.dump_operand(o))
                            .collect();
                    let _ = writeln!(
                        out,
                        "{pad}%{} {} = {}({})",
                        i.dest.0,
                        self.ident(i.dest),
                        i.op.name(),
                        args.join(", ")
                    );
                    if let Op::Mapv(_, c) = &i.op {
                        let _ = writeln!(out, "{pad}  |%{}|", c.param.0);
                        self.dump_body(&c.body, depth + 2, out);
                    }
                }
                Stmt::Verbatim(t) => {
                    let _ = writeln!(out, "{pad}verbatim {{{t}}}");
                }
                Stmt::InactiveLet { tokens, .. } => {
                    let _ = writeln!(out, "{pad}inactive {{{tokens}}}");
                }
                Stmt::Const { ident, expr, local } => {
                    let local = if *local { " local" } else { "" };
                    let _ = writeln!(out, "{pad}const {ident} = {{{expr}}}{local}");
                }
                Stmt::If(i) => {
                    let _ = writeln!(out, "{pad}if {{{}}}", i.cond);
                    self.dump_stmts(&i.then, depth + 1, out);
                    let _ = writeln!(out, "{pad}else");
                    self.dump_stmts(&i.els, depth + 1, out);
                    for phi in &i.phis {
                        let (t, e) = (self.dump_operand(&phi.then), self.dump_operand(&phi.els));
                        let _ = writeln!(
                            out,
                            "{pad}%{} {} = phi({t}, {e})",
                            phi.dest.0,
                            self.ident(phi.dest)
                        );
                    }
                }
                Stmt::Loop(l) => {
                    match &l.head {
                        LoopHead::For { pat, iter, .. } => {
                            let _ = writeln!(out, "{pad}for {{{pat}}} in {{{iter}}}");
                        }
                        LoopHead::While { cond } => {
                            let _ = writeln!(out, "{pad}while {{{cond}}}");
                        }
                    }
                    for c in &l.carried {
                        let (init, next) = (self.dump_operand(&c.init), self.dump_operand(&c.next));
                        let _ = writeln!(
                            out,
                            "{pad}  carried %{} {} = {init} then {next}, after: %{} {}",
                            c.input.0,
                            self.ident(c.input),
                            c.output.0,
                            self.ident(c.output)
                        );
                    }
                    self.dump_stmts(&l.body, depth + 1, out);
                    if let Some(exit) = &l.exit {
                        let _ = writeln!(out, "{pad}  exit if {{{exit}}}");
                    }
                }
            }
        }
    }

    fn dump_operand(&self, o: &Operand) -> String {
        match o {
            Operand::Var(v) => format!("%{}", v.0),
            Operand::Const(c) => format!("{{{}}}", c.tokens),
        }
    }
}

/// A place's path split before its last index, `.layers[i].w[j]` into
/// `.layers[i].w` and the index `j` (`[k][0]` into `[k]` and `0`), or
/// `None` for the index when it ends in a field: the field may be
/// `#[constant]` (its tangent `NoTangent`, which cannot be indexed), and
/// an element's adjoint may not be sized yet, so generated code reaches the
/// field or element first and indexes what the types give.
pub fn split_place(path: &TokenStream) -> (TokenStream, Option<TokenStream>) {
    use proc_macro2::{Delimiter, TokenTree};
    let mut tokens: Vec<TokenTree> = path.clone().into_iter().collect();
    let index = match tokens.last() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => Some(g.stream()),
        _ => None,
    };
    if index.is_some() {
        tokens.pop();
    }
    (tokens.into_iter().collect(), index)
}

/// The variables `body` reads that it does not define (nor is `param`):
/// what a closure with that body and parameter captures.
pub fn reads_outside(body: &Body, param: VarId) -> Vec<VarId> {
    fn walk(stmts: &[Stmt], defined: &mut Vec<VarId>, read: &mut Vec<VarId>) {
        let note = |o: &Operand, read: &mut Vec<VarId>| {
            if let Operand::Var(v) = o {
                if !read.contains(v) {
                    read.push(*v);
                }
            }
        };
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    i.op.operands().into_iter().for_each(|o| note(o, read));
                    defined.push(i.dest);
                }
                Stmt::If(i) => {
                    walk(&i.then, defined, read);
                    walk(&i.els, defined, read);
                    for phi in &i.phis {
                        note(&phi.then, read);
                        note(&phi.els, read);
                        defined.push(phi.dest);
                    }
                }
                Stmt::Loop(l) => {
                    for c in &l.carried {
                        note(&c.init, read);
                        note(&c.next, read);
                        defined.extend([c.input, c.output]);
                    }
                    walk(&l.body, defined, read);
                }
                _ => {}
            }
        }
    }
    let (mut defined, mut read) = (vec![param], Vec::new());
    walk(&body.stmts, &mut defined, &mut read);
    if let Operand::Var(v) = &body.result {
        if !read.contains(v) {
            read.push(*v);
        }
    }
    read.retain(|v| !defined.contains(v));
    read
}
