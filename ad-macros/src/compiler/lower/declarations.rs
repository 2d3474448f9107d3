//! Declarations that active assignments have taken over.
//!
//! `let y;` declares a local that later assignments initialise. When those
//! assignments are active (`y = x * x;` in each branch of an `if`), the
//! derivative code binds each assigned value under a name of its own, and
//! the declaration is left with no assignment and no reader: rustc cannot
//! infer its type (E0282). Such a declaration is dropped; one that any
//! inactive code still names (`y = 0.0;` in another branch) stays.

use std::collections::HashSet;

use proc_macro2::{Ident, TokenStream, TokenTree};

use crate::compiler::ir::{self, Body, Stmt};
use crate::compiler::scan;

/// Removes from `body` every bare `let y;` / `let mut y;` whose name no
/// other inactive code of the body mentions.
pub(super) fn drop_taken_over(body: &mut Body) {
    let declared: Vec<Ident> = declarations(&body.stmts);
    if declared.is_empty() {
        return;
    }
    let mentioned: HashSet<String> = ir::token_streams(body)
        .into_iter()
        .filter(|t| bare_declaration(t).is_none())
        .flat_map(free_names)
        .collect();
    let unused: HashSet<String> = declared
        .iter()
        .map(Ident::to_string)
        .filter(|n| !mentioned.contains(n))
        .collect();
    if !unused.is_empty() {
        remove(&mut body.stmts, &unused);
    }
}

/// The names `tokens` may read: every identifier, but for a closure's
/// parameters inside its body (`c.iter().map(|y| y * 0.7)` does not read
/// `y`). Tokens that do not parse as a block's contents count whole.
fn free_names(tokens: &TokenStream) -> HashSet<String> {
    struct Free {
        bound: Vec<HashSet<String>>,
        out: HashSet<String>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Free {
        fn visit_ident(&mut self, i: &'ast Ident) {
            let name = i.to_string();
            if !self.bound.iter().any(|b| b.contains(&name)) {
                self.out.insert(name);
            }
        }
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            let params = c.inputs.iter().flat_map(scan::pattern_names).collect();
            self.bound.push(params);
            self.visit_expr(&c.body);
            self.bound.pop();
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.out.extend(scan::token_names(&m.tokens));
        }
    }
    match syn::parse2::<syn::Block>(quote::quote!({ #tokens })) {
        Ok(block) => {
            let mut free = Free {
                bound: Vec::new(),
                out: HashSet::new(),
            };
            syn::visit::Visit::visit_block(&mut free, &block);
            free.out
        }
        Err(_) => scan::token_names(tokens),
    }
}

/// The name `tokens` declares, if they are `let y;` or `let mut y;`.
fn bare_declaration(tokens: &TokenStream) -> Option<Ident> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let (TokenTree::Ident(first), Some(TokenTree::Punct(last))) = (trees.first()?, trees.last())
    else {
        return None;
    };
    if first != "let" || last.as_char() != ';' {
        return None;
    }
    match &trees[1..trees.len() - 1] {
        [TokenTree::Ident(n)] if n != "mut" => Some(n.clone()),
        [TokenTree::Ident(m), TokenTree::Ident(n)] if m == "mut" => Some(n.clone()),
        _ => None,
    }
}

fn declarations(stmts: &[Stmt]) -> Vec<Ident> {
    let mut out = Vec::new();
    for stmt in stmts {
        match stmt {
            Stmt::InactiveLet { tokens, .. } => out.extend(bare_declaration(tokens)),
            Stmt::If(i) => {
                out.extend(declarations(&i.then));
                out.extend(declarations(&i.els));
            }
            Stmt::Loop(l) => out.extend(declarations(&l.body)),
            _ => {}
        }
    }
    out
}

fn remove(stmts: &mut Vec<Stmt>, unused: &HashSet<String>) {
    stmts.retain(|s| {
        !matches!(s, Stmt::InactiveLet { tokens, .. }
            if bare_declaration(tokens).is_some_and(|n| unused.contains(&n.to_string())))
    });
    for stmt in stmts {
        match stmt {
            Stmt::If(i) => {
                remove(&mut i.then, unused);
                remove(&mut i.els, unused);
            }
            Stmt::Loop(l) => remove(&mut l.body, unused),
            _ => {}
        }
    }
}
