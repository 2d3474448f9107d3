//! The adjoints of a loop in `f_grad` written as IR: a second loop, over
//! the first one's iterations in reverse, whose body pulls back one
//! iteration of the first.
//!
//! Input:  `for i in 0..n { q = sin(acc); acc = acc * q + c1 }` (`c1`
//! an inactive value of the iteration, `i as f64`)
//! Output: before the loop, an empty record and an empty tape (sized
//! from the range's length); in its body, `record_1.push((i, c1))` and
//! the values the adjoints read pushed onto the tape, which the loop
//! carries (`acc` itself, and `q`: two per iteration); after it, `for k_1
//! in (0..record_1.len()).rev() { let (i, c1) = record_1[k_1].clone(); acc
//! = tape[2 * k_1]; q = tape[2 * k_1 + 1]; .. }`, which carries the
//! adjoint of `acc` back from its last value to its first, and the
//! adjoints of the values from before the loop that the body reads.
//!
//! A loop inside another (one level, `branches::covered`) shares its
//! record and tape across the outer loop's iterations: the outer one
//! records where each run starts and ends, and carries the tape.

use std::collections::HashSet;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use super::super::ir::{Carried, Const, Inst, Loop, LoopHead, Op, Operand, Stmt, VarId};
use super::adjoints::Adjoints;
use super::branches::{self, made_at, made_in, same, Scope};
use super::tangents::Tangents;

impl Tangents<'_> {
    /// The reverse loop of `l`, and after it the adjoints of the carried
    /// values' starts, pushed to `out`; `l` gains its record and tape,
    /// declared empty in the prologue (a loop in a branch runs at most
    /// once, so they hold its iterations only; a loop inside another
    /// loop notes where each run starts and ends in them). Returns the
    /// statements to put before and after `l`; `None` where the body is
    /// outside what the pass covers.
    pub(super) fn pull_back_loop(
        &mut self,
        l: &mut Loop,
        scopes: &mut Vec<Scope>,
        adjoints: &mut Adjoints,
        out: &mut Vec<Stmt>,
    ) -> Option<(Vec<Stmt>, Vec<Stmt>)> {
        self.type_literal_starts(&mut l.carried);
        self.loops += 1;
        // This loop's number (the loops inside it take the next ones).
        let n = self.loops;
        let site = Span::mixed_site();
        let record = format_ident!("record_{}", n, span = site);
        let k = format_ident!("k_{}", n, span = site);
        // The loop this one is inside (`covered` admits one level).
        let around = scopes.iter().rposition(|s| s.looped);
        let mut inside = HashSet::new();
        made_in(&l.body, &mut inside);
        inside.extend(l.carried.iter().map(|c| c.input));

        // The adjoints the reverse loop carries: of each carried value
        // (from its next value back to its input), and of each value from
        // before the loop that the body reads.
        let mut body_adjoints = Adjoints::new();
        let mut code = Vec::new();
        let carried_adjoints: Vec<VarId> = l.carried.iter().map(|_| self.temp(site)).collect();
        let outer = self.outer_reads(l, &inside);
        let outer_adjoints: Vec<(VarId, VarId)> = outer
            .into_iter()
            .map(|w| {
                let input = self.temp(site);
                body_adjoints.insert(w, Operand::Var(input));
                (w, input)
            })
            .collect();
        for (c, bar) in l.carried.iter().zip(&carried_adjoints) {
            if let Operand::Var(next) = c.next {
                self.add_adjoint(
                    &mut body_adjoints,
                    next,
                    Operand::Var(*bar),
                    site,
                    &mut code,
                );
            }
        }
        let original = l.carried.len();
        let mut defined = made_at(&l.body);
        defined.extend(l.carried.iter().map(|c| c.input));
        scopes.push(Scope {
            defined,
            exports: Default::default(),
            added: Vec::new(),
            hidden: inside.clone(),
            looped: true,
            declared: Vec::new(),
            threads: Vec::new(),
        });
        let pulled = self.pull_back_stmts(&mut l.body, scopes, &mut body_adjoints, &mut code);
        let scope = scopes.pop();
        pulled?;
        let scope = scope?;
        // Inner loops' bounds, declared per iteration, and their tapes,
        // carried through this loop.
        l.body.splice(0..0, scope.declared);
        l.carried.extend(scope.threads);
        let names = iteration_names(l)?;

        // The first loop records its iterations' inactive values, and
        // tapes the values the adjoints read, `m` per iteration on one
        // tape; the second reads them back.
        let m = scope.added.len();
        let tape = format_ident!("tape_{}", n, span = site);
        self.prologue.push(empty_list(&record));
        let (mut before, mut after) = (Vec::new(), Vec::new());
        let mut iterations = quote!((0..#record.len()).rev());
        if let Some(around) = around {
            // This run's iterations in the record: from `start` to `end`,
            // set where the loop is and recorded by the loop around it.
            let (start, end) = (
                format_ident!("start_{}", n, span = site),
                format_ident!("end_{}", n, span = site),
            );
            for bound in [&start, &end] {
                let declared = inactive_let(quote!(let mut #bound: usize = 0;), bound);
                scopes[around].declared.push(declared);
            }
            before.push(Stmt::Verbatim(quote!(#start = #record.len();)));
            after.push(Stmt::Verbatim(quote!(#end = #record.len();)));
            iterations = quote!((#start..#end).rev());
        }
        if let LoopHead::For {
            exact: true, iter, ..
        } = &l.head
        {
            // A range: evaluating it once more reads nothing the loop
            // changes.
            let length = format_ident!("length_{}", n, span = site);
            before.push(inactive_let(
                quote!(let #length = ::core::iter::Iterator::size_hint(&::core::iter::IntoIterator::into_iter(#iter)).0;),
                &length,
            ));
            let per_iteration = Literal::usize_unsuffixed(m);
            before.push(Stmt::Verbatim(quote!(#record.reserve(#length);)));
            // (The loop around carries an inner loop's tape.)
            if m > 0 && around.is_none() {
                before.push(Stmt::Verbatim(
                    quote!(#tape.reserve(#per_iteration * #length);),
                ));
            }
        }
        let mut reverse_body = Vec::new();
        if m > 0 {
            let empty = self.empty_tape();
            self.prologue
                .push(inactive_let(quote!(let mut #tape = #empty;), &tape));
            let (input, output) = (self.temp(site), self.temp(site));
            if let Some(here) = scopes.last_mut() {
                here.defined.insert(output);
            }
            let (init, taped) = match around {
                // Made where the loop is: a branch carries it out to the
                // second `if`, as an empty list from the other branch.
                None => {
                    self.lists
                        .insert(output, Operand::Const(Const::opaque(empty)));
                    (
                        Operand::Const(Const::opaque(quote!(#tape))),
                        self.read(output, scopes),
                    )
                }
                // Carried through the loop around, which starts each run
                // from the tape so far (and passes it on unchanged from a
                // branch that does not run this loop).
                Some(around) => {
                    let (so_far, after_all) = (self.temp(site), self.temp(site));
                    self.lists.insert(output, Operand::Var(so_far));
                    let next = self.read(output, &mut scopes[around + 1..]);
                    scopes[around].threads.push(Carried {
                        input: so_far,
                        init: Operand::Const(Const::opaque(quote!(#tape))),
                        next: Operand::Var(next),
                        output: after_all,
                    });
                    self.lists
                        .insert(after_all, Operand::Const(Const::opaque(self.empty_tape())));
                    if around > 0 {
                        scopes[around - 1].defined.insert(after_all);
                    }
                    (
                        Operand::Var(so_far),
                        self.read(after_all, &mut scopes[..around]),
                    )
                }
            };
            let taped = Operand::Var(taped);
            let mut list = input;
            for (j, (value, read)) in scope.added.into_iter().enumerate() {
                let pushed = self.temp(site);
                l.body.push(inst(
                    pushed,
                    Op::Push(Operand::Var(list), Operand::Var(value)),
                ));
                list = pushed;
                let (m, j) = (Literal::usize_unsuffixed(m), Literal::usize_unsuffixed(j));
                let index = Const::opaque(quote!(#k * #m + #j));
                reverse_body.push(inst(read, Op::Item(taped.clone(), index)));
            }
            l.carried.push(Carried {
                input,
                init,
                next: Operand::Var(list),
                output,
            });
        }
        reverse_body.extend(code);
        // Recorded: the names the reverse body reads.
        let read = branches::named_in(&reverse_body);
        let names: Vec<Ident> = names
            .into_iter()
            .filter(|n| read.contains(&n.to_string()))
            .collect();
        l.body.push(Stmt::Verbatim(
            quote!(#record.push(::core::clone::Clone::clone(&(#(#names,)*)));),
        ));
        if !names.is_empty() {
            let restore = quote!(let (#(#names,)*) = ::core::clone::Clone::clone(&#record[#k]););
            reverse_body.insert(0, inactive_let_of(restore, names));
        }

        let mut carried = Vec::new();
        for (w, input) in outer_adjoints {
            let next = body_adjoints.get(&w);
            if same(next, Some(&Operand::Var(input))) {
                continue;
            }
            let output = self.temp(site);
            carried.push(Carried {
                input,
                init: adjoints
                    .get(&w)
                    .cloned()
                    .unwrap_or_else(|| self.constant(0.0)),
                next: next.cloned().unwrap_or_else(|| self.constant(0.0)),
                output,
            });
            adjoints.insert(w, Operand::Var(output));
        }
        let mut starts = Vec::new();
        for (c, input) in l.carried[..original].iter().zip(carried_adjoints) {
            let output = self.temp(site);
            carried.push(Carried {
                input,
                init: adjoints
                    .remove(&c.output)
                    .unwrap_or_else(|| self.constant(0.0)),
                next: body_adjoints
                    .get(&c.input)
                    .cloned()
                    .unwrap_or_else(|| self.constant(0.0)),
                output,
            });
            if let Operand::Var(start) = c.init {
                starts.push((start, output));
            }
        }
        out.push(Stmt::Loop(Box::new(Loop {
            head: LoopHead::For {
                pat: quote!(#k),
                names: vec![k.clone()],
                iter: iterations,
                exact: true,
                borrows_local: false,
            },
            body: reverse_body,
            carried,
            exit: None,
        })));
        for (start, bar) in starts {
            self.add_adjoint(adjoints, start, Operand::Var(bar), site, out);
        }
        Some((before, after))
    }

    /// An empty tape, of the function's floats (a branch that leaves one
    /// out passes it, and the tangent passes need its type).
    pub(super) fn empty_tape(&self) -> TokenStream {
        let scalar = self.scalar;
        quote!(::std::vec::Vec::<#scalar>::new())
    }

    /// The variables from before the loop that its body (loops inside it
    /// included) or its carried values read, in order.
    fn outer_reads(&self, l: &Loop, inside: &HashSet<VarId>) -> Vec<VarId> {
        fn walk(stmts: &[Stmt], out: &mut Vec<VarId>) {
            for stmt in stmts {
                match stmt {
                    Stmt::Inst(i) => out.extend(i.op.var_operands()),
                    Stmt::If(i) => {
                        walk(&i.then, out);
                        walk(&i.els, out);
                        for p in &i.phis {
                            out.extend(vars(&[&p.then, &p.els]));
                        }
                    }
                    Stmt::Loop(l) => {
                        walk(&l.body, out);
                        for c in &l.carried {
                            out.extend(vars(&[&c.init, &c.next]));
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut reads = Vec::new();
        walk(&l.body, &mut reads);
        reads.extend(l.carried.iter().flat_map(|c| vars(&[&c.next])));
        reads.retain(|v| !inside.contains(v));
        reads.sort();
        reads.dedup();
        reads
    }
}

/// The inactive values an iteration binds at the body's level, which the
/// reverse loop reads back from the record: the loop pattern's names, the
/// body's inactive `let`s and constants. `None` for a `let` that views
/// an array.
fn iteration_names(l: &Loop) -> Option<Vec<Ident>> {
    let mut names = match &l.head {
        LoopHead::For { names, .. } => names.clone(),
        LoopHead::While { .. } => Vec::new(),
    };
    for stmt in &l.body {
        match stmt {
            Stmt::InactiveLet {
                names: bound,
                views,
                ..
            } => {
                if !views.is_empty() {
                    return None;
                }
                names.extend(bound.iter().cloned());
            }
            Stmt::Const { ident, .. } => names.push(ident.clone()),
            _ => {}
        }
    }
    Some(names)
}

/// `let` of inactive values the reverse sweeps may read.
fn inactive_let_of(tokens: TokenStream, names: Vec<Ident>) -> Stmt {
    Stmt::InactiveLet {
        tokens,
        names,
        views: Vec::new(),
    }
}

fn inactive_let(tokens: TokenStream, name: &Ident) -> Stmt {
    inactive_let_of(tokens, vec![name.clone()])
}

fn empty_list(name: &Ident) -> Stmt {
    inactive_let(quote!(let mut #name = ::std::vec::Vec::new();), name)
}

fn inst(dest: VarId, op: Op) -> Stmt {
    Stmt::Inst(Inst {
        dest,
        op,
        span: Span::call_site(),
        ty: None,
    })
}

fn vars(operands: &[&Operand]) -> Vec<VarId> {
    operands
        .iter()
        .filter_map(|o| match o {
            Operand::Var(v) => Some(*v),
            Operand::Const(_) => None,
        })
        .collect()
}
