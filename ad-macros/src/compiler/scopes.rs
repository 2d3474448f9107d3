//! Long blocks of the generated code declare their `let`s together.
//!
//! rustc's debug info nests one lexical scope per `let` statement, and
//! LLVM walks that nesting recursively when it writes the DWARF: a debug
//! build of a function with about 3000 `let`s in a row overflows rustc's
//! stack (plain Rust does too). The derivative code has several `let`s for
//! each statement of the user's, forward and back, so a user function of a
//! few hundred statements would crash `cargo build`.
//!
//! In a block with more than [`LONG`] `let`s, each run of up to [`RUN`]
//! statements has its simple `let name = value;` statements declared by one
//! `let (a, mut b, ..);` at the run's start, and each `let` becomes the
//! assignment `name = value;` where it stood: one scope per run. The order
//! of evaluation, the moves, borrows and drops are those of the `let`s.
//! Short blocks, which are all that the snapshots show, are left as they
//! are.

use std::collections::HashSet;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Local, Pat, Stmt};

use super::scan;

/// More `let`s than this in one block and the block's runs are declared
/// together. Far below where rustc overflows, so that blocks nested in
/// blocks stay below it too.
const LONG: usize = 100;

/// At most this many statements to a run. One declaration of thousands of
/// names costs LLVM more, not less: a debug build of 192 statements that
/// macro_rules wrote out took 71 s with runs of any length, 34 s with runs
/// of 32 and 39 s with no runs at all (all its statements share one source
/// line, which LLVM's variable-location analysis handles slowly).
const RUN: usize = 32;

/// The generated items, with the long blocks' `let`s declared together.
/// Items that do not parse back (they always do) are returned as they are.
pub fn declared_together(items: TokenStream) -> TokenStream {
    if !has_long_block(items.clone(), LONG) {
        return items;
    }
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(mut file) => {
            LongBlocks { long: LONG }.visit_file_mut(&mut file);
            file.into_token_stream()
        }
        Err(_) => items,
    }
}

/// Whether a group of `tokens` has more than `long` `let`s of its own: a
/// look at the tokens, which spares the parse for the usual function.
fn has_long_block(tokens: TokenStream, long: usize) -> bool {
    let mut lets = 0;
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) if ident == "let" => lets += 1,
            TokenTree::Group(group) if has_long_block(group.stream(), long) => return true,
            _ => {}
        }
    }
    lets > long
}

struct LongBlocks {
    long: usize,
}

impl VisitMut for LongBlocks {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, block);
        let lets = block
            .stmts
            .iter()
            .filter(|s| matches!(s, Stmt::Local(_)))
            .count();
        if lets > self.long {
            block.stmts = hoisted(std::mem::take(&mut block.stmts));
        }
    }
}

/// A statement of the run being collected: kept as it is, or a simple
/// `let` (see [`simple`]).
enum Entry {
    Kept(Stmt),
    Simple(Stmt),
}

/// The run of statements whose simple `let`s are to be declared at its
/// start, with every identifier its statements name so far: a `let` whose
/// name one of them already used would, declared at the start, capture
/// that use.
#[derive(Default)]
struct Run {
    entries: Vec<Entry>,
    named: HashSet<String>,
}

impl Run {
    fn push(&mut self, entry: Entry) {
        let (Entry::Kept(stmt) | Entry::Simple(stmt)) = &entry;
        Identifiers(&mut self.named).visit_stmt(stmt);
        self.entries.push(entry);
    }

    /// The run's statements: its declaration, then its statements in order.
    /// A run of one `let` keeps it as written.
    fn close_into(&mut self, out: &mut Vec<Stmt>) {
        let entries = std::mem::take(&mut self.entries);
        self.named.clear();
        let names: Vec<syn::PatIdent> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Simple(Stmt::Local(local)) => simple(local).map(|(name, _)| name),
                _ => None,
            })
            .collect();
        let together = names.len() > 1;
        if together {
            out.push(declaration(names));
        }
        out.extend(entries.into_iter().map(|e| match e {
            Entry::Simple(Stmt::Local(local)) if together => {
                assignment(&local).unwrap_or(Stmt::Local(local))
            }
            Entry::Kept(s) | Entry::Simple(s) => s,
        }));
    }
}

fn hoisted(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len() + 8);
    let mut run = Run::default();
    for stmt in stmts {
        match &stmt {
            // An item or a statement macro (which may expand to `let`s of
            // its own) ends the run.
            Stmt::Item(_) | Stmt::Macro(_) => {
                run.close_into(&mut out);
                out.push(stmt);
            }
            Stmt::Local(local) => match simple(local) {
                Some((name, value)) => {
                    let key = name.ident.to_string();
                    let mut in_value = HashSet::new();
                    Identifiers(&mut in_value).visit_expr(value);
                    if in_value.contains(&key) {
                        // `let y = f(y);` reads the binding it shadows.
                        run.close_into(&mut out);
                        out.push(stmt);
                    } else {
                        if run.named.contains(&key) || run.entries.len() >= RUN {
                            run.close_into(&mut out);
                        }
                        run.push(Entry::Simple(stmt));
                    }
                }
                None => run.push(Entry::Kept(stmt)),
            },
            Stmt::Expr(..) => run.push(Entry::Kept(stmt)),
        }
    }
    run.close_into(&mut out);
    out
}

/// `let name = value;` or `let mut name = value;`, without attributes, a
/// type or `else`, and with a value that does not extend the lifetime of a
/// temporary (`let r = &f();` does, `r = &f();` would not).
fn simple(local: &Local) -> Option<(syn::PatIdent, &Expr)> {
    let Pat::Ident(name) = &local.pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    let plain = local.attrs.is_empty()
        && name.attrs.is_empty()
        && name.by_ref.is_none()
        && name.subpat.is_none()
        && init.diverge.is_none();
    let keeps_no_temporary = matches!(
        &*init.expr,
        Expr::Call(_)
            | Expr::MethodCall(_)
            | Expr::Path(_)
            | Expr::Lit(_)
            | Expr::Binary(_)
            | Expr::Unary(_)
            | Expr::Index(_)
            | Expr::Field(_)
    );
    (plain && keeps_no_temporary).then(|| (name.clone(), &*init.expr))
}

/// A simple `let name = value;` as the assignment `name = value;`, spanned
/// as the `let` was.
fn assignment(local: &Local) -> Option<Stmt> {
    let (name, value) = simple(local)?;
    let eq_token = local.init.as_ref()?.eq_token;
    let left = Expr::Path(syn::ExprPath {
        attrs: Vec::new(),
        qself: None,
        path: name.ident.into(),
    });
    let assign = Expr::Assign(syn::ExprAssign {
        attrs: Vec::new(),
        left: Box::new(left),
        eq_token,
        right: Box::new(value.clone()),
    });
    Some(Stmt::Expr(assign, Some(local.semi_token)))
}

/// `let (a, mut b, ..);`
fn declaration(names: Vec<syn::PatIdent>) -> Stmt {
    let elems = names
        .into_iter()
        .map(|mut name| {
            name.attrs.clear();
            Pat::Ident(name)
        })
        .collect();
    Stmt::Local(Local {
        attrs: Vec::new(),
        let_token: Default::default(),
        pat: Pat::Tuple(syn::PatTuple {
            attrs: Vec::new(),
            paren_token: Default::default(),
            elems,
        }),
        init: None,
        semi_token: Default::default(),
    })
}

/// Collects every identifier a piece of syntax names, inside macro
/// invocations too.
struct Identifiers<'s>(&'s mut HashSet<String>);

impl<'ast> Visit<'ast> for Identifiers<'_> {
    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        self.0.insert(ident.to_string());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        syn::visit::visit_macro(self, mac);
        self.0.extend(scan::token_names(&mac.tokens));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn hoist(block: TokenStream) -> String {
        let mut file: syn::File = syn::parse2(quote!(fn f() #block)).unwrap();
        LongBlocks { long: 0 }.visit_file_mut(&mut file);
        let syn::Item::Fn(f) = &file.items[0] else {
            unreachable!()
        };
        f.block
            .stmts
            .iter()
            .map(|s| s.to_token_stream().to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn a_run_is_declared_at_its_start() {
        let got = hoist(quote!({
            let a = g(x);
            h(a);
            let mut b = a * 2.0;
            b += 1.0;
            b
        }));
        assert_eq!(
            got,
            "let (a , mut b) ; | a = g (x) ; | h (a) ; | b = a * 2.0 ; | b += 1.0 ; | b"
        );
    }

    #[test]
    fn shadowing_starts_a_new_run() {
        // `t` was used before its second `let`: declared at the start, the
        // second `t` would capture that use.
        let got = hoist(quote!({
            let t = g(x);
            let s = shape(&t);
            let t = s;
            let u = k(t);
            u
        }));
        assert_eq!(
            got,
            "let (t , s) ; | t = g (x) ; | s = shape (& t) ; | let (t , u) ; | t = s ; | u = k (t) ; | u"
        );
    }

    #[test]
    fn a_let_reading_what_it_shadows_stays() {
        let got = hoist(quote!({
            let a = g(y);
            let b = h(a);
            let y = f(y);
            let c = y + b;
            let d = c * c;
            d
        }));
        assert_eq!(
            got,
            "let (a , b) ; | a = g (y) ; | b = h (a) ; | let y = f (y) ; | let (c , d) ; | c = y + b ; | d = c * c ; | d"
        );
    }

    #[test]
    fn lets_that_are_not_simple_stay_in_place() {
        let got = hoist(quote!({
            let a = g(x);
            let r = &make();
            let t: f64 = 1.0;
            let (p, q) = pair();
            let b = a + t;
            b
        }));
        assert_eq!(
            got,
            "let (a , b) ; | a = g (x) ; | let r = & make () ; | let t : f64 = 1.0 ; | let (p , q) = pair () ; | b = a + t ; | b"
        );
    }

    #[test]
    fn macros_and_items_end_a_run() {
        let got = hoist(quote!({
            let a = g(x);
            let b = g(a);
            println!("{}", b);
            let c = g(b);
            use std::f64;
            let d = g(c);
            d
        }));
        assert_eq!(
            got,
            "let (a , b) ; | a = g (x) ; | b = g (a) ; | println ! (\"{}\" , b) ; | let c = g (b) ; | use std :: f64 ; | let d = g (c) ; | d"
        );
    }

    #[test]
    fn runs_are_at_most_run_statements_long() {
        let lets = (0..2 * RUN).map(|k| {
            let name = quote::format_ident!("v{k}");
            quote!(let #name = g(x);)
        });
        let got = hoist(quote!({ #(#lets)* x }));
        let declarations = got.matches("let (").count();
        assert_eq!(declarations, 2, "{got}");
        assert!(!got.contains("let v"), "{got}");
    }

    #[test]
    fn short_blocks_are_left_as_they_are() {
        let items = quote!(
            fn f(x: f64) -> f64 {
                let a = x * 2.0;
                let b = a + 1.0;
                b
            }
        );
        assert_eq!(
            declared_together(items.clone()).to_string(),
            items.to_string()
        );
    }
}
