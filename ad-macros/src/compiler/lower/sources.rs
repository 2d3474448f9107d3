//! The sources of an iterator chain over active values, read by index.
//!
//! A source is parsed once into a [`Source`] tree, then asked for its
//! length and for its item at a position: `x.iter().skip(1).rev()` has
//! `x.len().saturating_sub(1)` items, the one at `k` being
//! `&x[x.len().saturating_sub(1) - 1 - k + 1]`. Every adaptor that only
//! chooses which elements come and in what order (`skip`, `take`,
//! `step_by`, `rev`) is a change of position, so the loop it becomes still
//! reads each element by index and its reverse sweep scatters into one
//! place. An adaptor's argument that is neither a literal nor a name is
//! bound once, before the loop, as Rust evaluates it once.

use syn::Expr;

use super::iterators::is_adaptor;
use super::*;

/// An indexable iterator over active values, or over inactive ones that
/// the loop reads again at each index.
pub(super) enum Source {
    /// `x.iter()`, `&x` or `x`: `&x[k]`, `x.len()` of them.
    Elements(Expr),
    /// The same of an array with more axes than one, or with a number the
    /// macro cannot see (a local): `&x[unravel(dims(&x), k)]`, in logical
    /// order (`dims` is `x.dim()`, or the length of a `Vec` item of a bag).
    NdElements(Expr),
    /// A matrix's rows or columns: `x.row(k)`, `x.nrows()` of them.
    Lanes {
        x: Expr,
        count: Ident,
        lane: Ident,
    },
    /// A 1-D array's `windows(size)`, `exact_chunks(size)` or
    /// `axis_chunks_iter(Axis(0), size)`: `x.slice(s![..])` views.
    Views {
        x: Expr,
        size: Expr,
        kind: Views,
        /// Of a slice parameter (or a bag's item): sub-slices `&x[a..b]`.
        slice: bool,
    },
    /// `copied()` or `cloned()` of items that are references.
    Copied(Box<Source>),
    Enumerate(Box<Source>),
    Zip(Box<Source>, Box<Source>),
    /// `a.chain(b)`: `a`'s items, then `b`'s; `a`'s length is bound once,
    /// so that `b`'s items (inactive, perhaps) do not read `a`.
    Chain(Box<Source>, Box<Source>, Expr),
    Skip(Box<Source>, Expr),
    Take(Box<Source>, Expr),
    StepBy(Box<Source>, Expr),
    Rev(Box<Source>),
}

#[derive(Clone, Copy)]
pub(super) enum Views {
    /// Every run of `size` neighbours, overlapping.
    Windows,
    /// Consecutive runs of `size`; a shorter remainder is left out.
    ExactChunks,
    /// Consecutive runs of `size`, the last one possibly shorter.
    Chunks,
}

impl Source {
    /// How many items the source yields.
    pub(super) fn len(&self) -> Expr {
        match self {
            Source::Elements(x) | Source::NdElements(x) => syn::parse_quote!(#x.len()),
            Source::Lanes { x, count, .. } => syn::parse_quote!(#x.#count()),
            Source::Views { x, size, kind, .. } => match kind {
                Views::Windows => syn::parse_quote!((#x.len() + 1).saturating_sub(#size)),
                Views::ExactChunks => syn::parse_quote!(#x.len() / #size),
                Views::Chunks => syn::parse_quote!(#x.len().div_ceil(#size)),
            },
            Source::Copied(s) | Source::Enumerate(s) | Source::Rev(s) => s.len(),
            Source::Zip(a, b) => {
                let (a, b) = (a.len(), b.len());
                syn::parse_quote!(::core::cmp::min(#a, #b))
            }
            Source::Chain(_, b, first) => {
                let b = b.len();
                syn::parse_quote!(#first + #b)
            }
            Source::Skip(s, n) => {
                let len = atom(s.len());
                syn::parse_quote!(#len.saturating_sub(#n))
            }
            Source::Take(s, n) => {
                let len = s.len();
                syn::parse_quote!(::core::cmp::min(#len, #n))
            }
            Source::StepBy(s, step) => {
                let len = atom(s.len());
                syn::parse_quote!(#len.div_ceil(#step))
            }
        }
    }

    /// The item at position `at` (an index below [`Source::len`]).
    pub(super) fn item(&self, at: &Expr) -> Expr {
        match self {
            Source::Elements(x) => syn::parse_quote!(&#x[#at]),
            Source::NdElements(x) => {
                syn::parse_quote!(&#x[::ad::__private::rules::unravel(
                    ::ad::stop_gradient(::ad::__private::rules::dims(&#x)),
                    #at
                )])
            }
            Source::Lanes { x, lane, .. } => syn::parse_quote!(#x.#lane(#at)),
            Source::Views {
                x,
                size,
                kind,
                slice,
            } => {
                let end: Expr = match kind {
                    Views::Windows => syn::parse_quote!(#at + #size),
                    Views::ExactChunks => syn::parse_quote!((#at + 1) * #size),
                    Views::Chunks => {
                        syn::parse_quote!(::core::cmp::min((#at + 1) * #size, #x.len()))
                    }
                };
                let start: Expr = match kind {
                    Views::Windows => syn::parse_quote!(#at),
                    Views::ExactChunks | Views::Chunks => {
                        let at = atom(at.clone());
                        syn::parse_quote!(#at * #size)
                    }
                };
                if *slice {
                    syn::parse_quote!(&#x[#start..#end])
                } else {
                    syn::parse_quote!(#x.slice(::ad::ndarray::s![#start..#end]))
                }
            }
            Source::Copied(s) => dereferenced(s.item(at)),
            Source::Enumerate(s) => {
                let item = s.item(at);
                syn::parse_quote!((#at, #item))
            }
            Source::Zip(a, b) => {
                let (a, b) = (a.item(at), b.item(at));
                syn::parse_quote!((#a, #b))
            }
            Source::Chain(a, b, first) => {
                let at = atom(at.clone());
                let (a, b) = (a.item(&at), b.item(&syn::parse_quote!(#at - #first)));
                syn::parse_quote!(if #at < #first { #a } else { #b })
            }
            Source::Skip(s, n) => s.item(&syn::parse_quote!(#at + #n)),
            Source::Take(s, _) => s.item(at),
            Source::StepBy(s, step) => {
                let at = atom(at.clone());
                s.item(&syn::parse_quote!(#at * #step))
            }
            Source::Rev(s) => {
                let (len, at) = (s.len(), atom(at.clone()));
                s.item(&syn::parse_quote!(#len - 1 - #at))
            }
        }
    }

    /// Whether the items are references (`&x[k]`), which `copied()` reads.
    fn yields_references(&self) -> bool {
        match self {
            Source::Elements(_) | Source::NdElements(_) => true,
            Source::Skip(s, _) | Source::Take(s, _) | Source::StepBy(s, _) | Source::Rev(s) => {
                s.yields_references()
            }
            Source::Chain(a, b, _) => a.yields_references() && b.yields_references(),
            _ => false,
        }
    }
}

/// The value an item that is a reference refers to: `x[k]` for `&x[k]`,
/// in each branch of a chain's `if`.
pub(super) fn dereferenced(item: Expr) -> Expr {
    match item {
        Expr::Reference(r) => *r.expr,
        Expr::If(mut i) => {
            dereference_value(&mut i.then_branch);
            if let Some((_, els)) = &mut i.else_branch {
                if let Expr::Block(b) = &mut **els {
                    dereference_value(&mut b.block);
                }
            }
            Expr::If(i)
        }
        other => other,
    }
}

/// The block's value, [`dereferenced`].
fn dereference_value(block: &mut syn::Block) {
    if let Some(syn::Stmt::Expr(value, None)) = block.stmts.last_mut() {
        *value = dereferenced(value.clone());
    }
}

impl Lowerer<'_> {
    /// `e` as an indexable source: `x.iter()`, `&x` and (where `bare`
    /// allows, as in a `for` loop or a `zip` argument) `x`; a matrix's
    /// lanes; a 1-D array's windows and chunks; and the adaptors above of
    /// those. Arguments to bind before the loop go to `lets`. The error
    /// says why `e` is not one.
    pub(super) fn source(
        &mut self,
        e: &Expr,
        bare: bool,
        lets: &mut Vec<syn::Stmt>,
    ) -> syn::Result<Source> {
        if let Some((a, b)) = super::iterators::zip_call(e) {
            let a = self.source(a, true, lets)?;
            let b = self.source(b, true, lets)?;
            return Ok(Source::Zip(Box::new(a), Box::new(b)));
        }
        let Expr::MethodCall(m) = e else {
            return match e {
                Expr::Paren(p) => self.source(&p.expr, bare, lets),
                Expr::Reference(r) if r.mutability.is_none() => self.elements(&r.expr, lets),
                e if bare && super::expr::is_place(e) => self.elements(e, lets),
                other => Err(not_indexable(other)),
            };
        };
        let method = m.method.to_string();
        let inner = |s: Source| Box::new(s);
        match (method.as_str(), m.args.len()) {
            ("iter", 0) => self.elements(&m.receiver, lets),
            // An iterator's, or ndarray's producer's (`windows`), or a
            // borrowed sequence's.
            ("into_iter", 0) if is_adaptor(&m.receiver) => self.source(&m.receiver, bare, lets),
            ("into_iter", 0) => self.elements(&m.receiver, lets),
            (_, 0) if lanes(e).is_some() => {
                let (count, lane) = lanes(e).expect("matched");
                Ok(self.lane_source(m, count, lane, lets))
            }
            ("axis_iter", 1) => {
                let (count, lane) = match axis_number(m.args.first()) {
                    Some(0) => ("nrows", "row"),
                    Some(1) => ("ncols", "column"),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &m.args[0],
                            "a matrix's `axis_iter` over active values is read by index: give it `Axis(0)` (rows) or `Axis(1)` (columns)",
                        ))
                    }
                };
                Ok(self.lane_source(m, count, lane, lets))
            }
            ("windows", 1) => self.views(m, &m.args[0], Views::Windows, lets),
            ("exact_chunks" | "chunks_exact", 1) => {
                self.views(m, &m.args[0], Views::ExactChunks, lets)
            }
            ("chunks", 1) => self.views(m, &m.args[0], Views::Chunks, lets),
            ("axis_chunks_iter", 2) if axis_number(m.args.first()) == Some(0) => {
                self.views(m, &m.args[1], Views::Chunks, lets)
            }
            ("copied" | "cloned", 0) => {
                let s = self.source(&m.receiver, false, lets)?;
                if !s.yields_references() {
                    return Err(syn::Error::new_spanned(
                        &m.method,
                        format!(
                            "`{method}` here applies to items that are not references: remove it"
                        ),
                    ));
                }
                Ok(Source::Copied(inner(s)))
            }
            ("enumerate", 0) => Ok(Source::Enumerate(inner(self.source(
                &m.receiver,
                false,
                lets,
            )?))),
            ("rev", 0) => Ok(Source::Rev(inner(self.source(&m.receiver, false, lets)?))),
            ("zip", 1) => {
                let a = self.source(&m.receiver, false, lets)?;
                let b = self.source(&m.args[0], true, lets)?;
                Ok(Source::Zip(inner(a), inner(b)))
            }
            ("chain", 1) => {
                let a = self.source(&m.receiver, false, lets)?;
                let b = self.source(&m.args[0], true, lets)?;
                let first = self.bound_once(&a.len(), lets);
                Ok(Source::Chain(inner(a), inner(b), first))
            }
            ("skip" | "take" | "step_by", 1) => {
                let s = inner(self.source(&m.receiver, false, lets)?);
                let n = self.bound_once(&m.args[0], lets);
                Ok(match method.as_str() {
                    "skip" => Source::Skip(s, n),
                    "take" => Source::Take(s, n),
                    _ => Source::StepBy(s, n),
                })
            }
            _ => Err(not_indexable(e)),
        }
    }

    /// The receiver's lanes, counted by `count` and read by `lane`.
    fn lane_source(
        &mut self,
        m: &syn::ExprMethodCall,
        count: &str,
        lane: &str,
        lets: &mut Vec<syn::Stmt>,
    ) -> Source {
        Source::Lanes {
            x: self.named(&m.receiver, lets),
            count: Ident::new(count, m.method.span()),
            lane: Ident::new(lane, m.method.span()),
        }
    }

    /// `x`'s elements, for a named value or a place `x` that has one axis.
    fn elements(&mut self, x: &Expr, lets: &mut Vec<syn::Stmt>) -> syn::Result<Source> {
        // A sub-slice's elements, `x[a..b]`, are `x`'s from `a` to `b`.
        if let Expr::Index(ix) = x {
            if let Expr::Range(range) = &*ix.index {
                let mut source = self.elements(&ix.expr, lets)?;
                let len = source.len();
                let start = match &range.start {
                    Some(start) => self.bound_once(start, lets),
                    None => syn::parse_quote!(0),
                };
                let end = match &range.end {
                    Some(end) => {
                        let end = self.bound_once(end, lets);
                        match range.limits {
                            syn::RangeLimits::Closed(_) => syn::parse_quote!(#end + 1),
                            syn::RangeLimits::HalfOpen(_) => end,
                        }
                    }
                    None => len.clone(),
                };
                // Where slicing would panic, so does the loop (`x[..]` cannot).
                let in_bounds: Option<Expr> = match (&range.start, &range.end) {
                    (Some(_), Some(_)) => Some(syn::parse_quote!(#start <= #end && #end <= #len)),
                    (None, Some(_)) => Some(syn::parse_quote!(#end <= #len)),
                    (Some(_), None) => Some(syn::parse_quote!(#start <= #len)),
                    (None, None) => None,
                };
                if let Some(in_bounds) = in_bounds {
                    lets.push(syn::parse_quote!(::core::assert!(
                        #in_bounds,
                        "range {}..{} out of bounds for a slice of length {}",
                        #start,
                        #end,
                        #len
                    );));
                }
                if range.end.is_some() {
                    source = Source::Take(Box::new(source), end);
                }
                if range.start.is_some() {
                    source = Source::Skip(Box::new(source), start);
                }
                return Ok(source);
            }
        }
        let x = &self.named(x, lets);
        if self.array_rank(x).is_some_and(|r| r > 1) || self.active_local_array(x) {
            return Ok(Source::NdElements(x.clone()));
        }
        Ok(Source::Elements(x.clone()))
    }

    /// Whether `x` names an active local that is not a `Vec`: an array the
    /// body made, of any number of axes. (A bag's item, bound to a place
    /// of a `&[Vec<f64>]`, is a `Vec`: one axis.)
    pub(super) fn active_local_array(&self, x: &Expr) -> bool {
        let Expr::Path(p) = x else { return false };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return false;
        };
        match self.env.get(&name) {
            Some(Binding::Active(v)) => {
                !self.borrowed_params.contains(v)
                    && !self.param_ranks.contains_key(&name)
                    && !self.vec_locals.contains(&name)
                    && self.sequence_named(x).is_none()
                    && self.bag_item(x).is_none()
            }
            _ => false,
        }
    }

    /// Windows or chunks of a 1-D array, as views `x.slice(s![a..b])`, or
    /// of a slice parameter of floats (or a bag's item), as sub-slices
    /// `&x[a..b]`; a `Vec` local's would be sub-slices of a list the
    /// reverse sweep keeps item by item, which carry no derivative.
    fn views(
        &mut self,
        m: &syn::ExprMethodCall,
        size: &Expr,
        kind: Views,
        lets: &mut Vec<syn::Stmt>,
    ) -> syn::Result<Source> {
        let x = &self.named(&m.receiver, lets);
        let slice =
            self.sequence_named(x).is_some_and(|s| !s.of_places) || self.bag_item(x).is_some();
        if !slice && self.sequence_named(x).is_some() {
            return Err(syn::Error::new_spanned(
                &m.method,
                format!("`{}` of a `Vec` local over active values would make sub-slices, which carry no derivative: index the elements (`(1..x.len()).map(|i| x[i] - x[i - 1])`), or make it an `Array1<f64>`, whose windows and chunks are views", m.method),
            ));
        }
        if let Some(rank) = self.array_rank(x).filter(|&r| r != 1) {
            return Err(syn::Error::new_spanned(
                &m.method,
                format!("`{}` over active values is read by index along one axis, and this array has {rank}: loop over `0..x.nrows()` with `x.slice(s![..])`", m.method),
            ));
        }
        let size = self.bound_once(size, lets);
        Ok(Source::Views {
            x: x.clone(),
            size,
            kind,
            slice,
        })
    }

    /// `x` where it names a value or a place, which the loop reads again at
    /// each index; else a name bound to it before the loop.
    fn named(&mut self, x: &Expr, lets: &mut Vec<syn::Stmt>) -> Expr {
        if super::expr::is_place(x) {
            return x.clone();
        }
        let name = self.fresh_local("source", x.span());
        lets.push(syn::parse_quote!(let #name = #x;));
        syn::parse_quote!(#name)
    }

    /// An adaptor's argument as the loop reads it: as written when it is a
    /// literal or a name, else a name bound to it before the loop.
    fn bound_once(&mut self, arg: &Expr, lets: &mut Vec<syn::Stmt>) -> Expr {
        if matches!(arg, Expr::Lit(_) | Expr::Path(_)) {
            return arg.clone();
        }
        let name = self.fresh_local("count", arg.span());
        lets.push(syn::parse_quote!(let #name: usize = #arg;));
        syn::parse_quote!(#name)
    }

    /// Whether the parameter `x` names is known to be 1-D (a slice, a
    /// `Vec`, `Array1`); fields and locals are not known.
    pub(super) fn one_axis(&self, x: &Expr) -> bool {
        self.sequence_named(x).is_some() || self.array_rank(x) == Some(1)
    }

    /// The number of axes of the array parameter `x` names, where its type
    /// says.
    pub(super) fn array_rank(&self, x: &Expr) -> Option<usize> {
        let Expr::Path(p) = x else { return None };
        let name = p.path.get_ident()?.to_string();
        if !matches!(self.env.get(&name), Some(Binding::Active(_))) {
            return None;
        }
        self.param_ranks.get(&name).copied()
    }
}

fn not_indexable(e: &Expr) -> syn::Error {
    syn::Error::new_spanned(
        e,
        "an iterator over active values is read by index: its sources must be `x.iter()`, `&x` or `x` (slices, `Vec`s, arrays), a matrix's `rows()` or `columns()`, or a 1-D array's `windows(n)` or `exact_chunks(n)`, with `zip`, `enumerate`, `copied`, `cloned`, `skip`, `take`, `step_by`, `rev` or `chain`; or `y.iter_mut()` of a local, alone or enumerated; or loop over `0..x.len()` and index",
    )
}

/// For `x.rows()`, `x.outer_iter()` and `x.columns()`: the count and the
/// lane read at an index (`nrows` and `row`, `ncols` and `column`).
pub(super) fn lanes(e: &Expr) -> Option<(&'static str, &'static str)> {
    let Expr::MethodCall(m) = e else { return None };
    if !m.args.is_empty() {
        return None;
    }
    match m.method.to_string().as_str() {
        "rows" | "outer_iter" => Some(("nrows", "row")),
        "columns" => Some(("ncols", "column")),
        _ => None,
    }
}

/// `e` where it can be an operand as written: parenthesized unless it is
/// a name, a literal or a call, which bind tighter than any operator.
pub(super) fn atom(e: Expr) -> Expr {
    match e {
        Expr::Path(_)
        | Expr::Lit(_)
        | Expr::Call(_)
        | Expr::MethodCall(_)
        | Expr::Paren(_)
        | Expr::Index(_)
        | Expr::Field(_) => e,
        e => syn::parse_quote!((#e)),
    }
}

/// `n` for `Axis(n)` (or `ndarray::Axis(n)`) with a literal `n`.
pub(super) fn axis_number(e: Option<&Expr>) -> Option<usize> {
    let Expr::Call(c) = e? else { return None };
    let Expr::Path(p) = &*c.func else { return None };
    if p.path.segments.last()?.ident != "Axis" || c.args.len() != 1 {
        return None;
    }
    match &c.args[0] {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}
