//! Which values leaving a block may be moved rather than cloned.
//!
//! A branch's value and a loop's initial value are often a variable from an
//! enclosing block: the array an `if` leaves unchanged in one branch
//! (`if h[i] > mx[j] { mx[j] = h[i]; }`), or the array a loop starts from.
//! Cloning it is always correct but costs an allocation per branch taken;
//! moving it is correct when nothing reads the variable afterwards. The
//! same holds for an instruction's operand (`t2 + b` may add into `t2`'s
//! buffer). This pass walks the reads in program order and marks a leaving
//! site a move when no read of its variable can follow it, on any path
//! (the two branches of an `if` are alternatives: a read in the else branch
//! does not follow one in the then branch), and when it runs once per
//! definition (not inside a loop, or a closure, that the definition is
//! outside of). The reverse sweep's own reads are checked by its caller.

use std::collections::{HashMap, HashSet};

use proc_macro2::{TokenStream, TokenTree};

use super::ir::{Body, Function, LoopHead, Op, Operand, Stmt, VarId};

/// A place where a value leaves a block.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Site {
    /// The value of the phi `dest` at the end of its then or else branch.
    Phi { dest: VarId, then: bool },
    /// The initial value of the loop variable whose per-iteration input is
    /// `input`.
    Init { input: VarId },
    /// Operand `pos` of the instruction defining `inst`: an operation that
    /// may take its operand's buffer over (`in_place.rs` in the runtime).
    Operand { inst: VarId, pos: usize },
}

/// The leaving sites that may move their variable.
pub fn moves(f: &Function) -> HashSet<Site> {
    let mut names: HashMap<String, Vec<VarId>> = HashMap::new();
    for (i, v) in f.vars.iter().enumerate() {
        names.entry(v.ident.to_string()).or_default().push(VarId(i));
    }
    let mut w = Walk {
        names,
        scope: vec![0],
        next_scope: 1,
        defs: HashMap::new(),
        unread: HashMap::new(),
        read_later: HashSet::new(),
        sites: Vec::new(),
    };
    w.body(&f.body);
    w.sites
        .iter()
        .enumerate()
        .filter(|(n, (_, v, scope))| {
            !f.vars[v.0].is_view
                && !w.read_later.contains(n)
                && w.defs.get(v).is_none_or(|d| d == scope)
        })
        .map(|(_, (site, ..))| *site)
        .collect()
}

struct Walk {
    /// The variables each name may refer to, for reads in inactive code.
    names: HashMap<String, Vec<VarId>>,
    /// The loops and closures around the current point, innermost last
    /// (`0` is the function body).
    scope: Vec<usize>,
    next_scope: usize,
    /// The innermost scope of each variable's definition (parameters have
    /// none: they are defined once, outside everything).
    defs: HashMap<VarId, usize>,
    /// The sites (indices into `sites`) after which, on the path walked so
    /// far, their variable has not been read again.
    unread: HashMap<VarId, Vec<usize>>,
    /// The sites some later read of their variable follows.
    read_later: HashSet<usize>,
    /// Each site, its variable and the scope it is in.
    sites: Vec<(Site, VarId, usize)>,
}

impl Walk {
    fn here(&self) -> usize {
        *self.scope.last().unwrap_or(&0)
    }

    fn define(&mut self, v: VarId) {
        let here = self.here();
        self.defs.insert(v, here);
    }

    fn read(&mut self, v: VarId) {
        if let Some(sites) = self.unread.remove(&v) {
            self.read_later.extend(sites);
        }
    }

    fn operand(&mut self, o: &Operand) {
        match o {
            Operand::Var(v) => {
                self.read(*v);
            }
            Operand::Const(c) => self.tokens(&c.tokens),
        }
    }

    /// Inactive code may name an active variable (`0..h.ncols()`).
    fn tokens(&mut self, t: &TokenStream) {
        for tree in t.clone() {
            match tree {
                TokenTree::Ident(i) => {
                    for v in self.names.get(&i.to_string()).cloned().unwrap_or_default() {
                        self.read(v);
                    }
                }
                TokenTree::Group(g) => self.tokens(&g.stream()),
                _ => {}
            }
        }
    }

    fn leave(&mut self, site: Site, o: &Operand) {
        match o {
            Operand::Var(v) => {
                self.read(*v);
                let here = self.here();
                self.unread.entry(*v).or_default().push(self.sites.len());
                self.sites.push((site, *v, here));
            }
            Operand::Const(c) => self.tokens(&c.tokens),
        }
    }

    fn enter(&mut self) {
        self.scope.push(self.next_scope);
        self.next_scope += 1;
    }

    fn body(&mut self, b: &Body) {
        self.stmts(&b.stmts);
        self.operand(&b.result);
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Inst(inst) => {
                self.op(inst.dest, &inst.op);
                self.define(inst.dest);
            }
            Stmt::Verbatim(t) => self.tokens(t),
            Stmt::Const { expr, .. } => self.tokens(expr),
            Stmt::InactiveLet { tokens, .. } => self.tokens(tokens),
            Stmt::If(i) => {
                self.tokens(&i.cond);
                // Each branch starts from what was unread before the `if`;
                // after it, what either left unread is.
                let before = self.unread.clone();
                let mut after_then = HashMap::new();
                for then in [true, false] {
                    if !then {
                        after_then = std::mem::replace(&mut self.unread, before.clone());
                    }
                    self.stmts(if then { &i.then } else { &i.els });
                    if let Some(c) = &i.value {
                        self.tokens(if then { &c.then } else { &c.els });
                    }
                    for p in &i.phis {
                        let o = if then { &p.then } else { &p.els };
                        self.leave(Site::Phi { dest: p.dest, then }, o);
                    }
                }
                for (v, sites) in after_then {
                    let all = self.unread.entry(v).or_default();
                    for n in sites {
                        if !all.contains(&n) {
                            all.push(n);
                        }
                    }
                }
                for p in &i.phis {
                    self.define(p.dest);
                }
            }
            Stmt::Loop(l) => {
                for c in &l.carried {
                    self.leave(Site::Init { input: c.input }, &c.init);
                }
                // A `for` iterator is made once, before the loop; a `while`
                // condition is read in every iteration.
                if let LoopHead::For { iter, .. } = &l.head {
                    self.tokens(iter);
                }
                self.enter();
                if let LoopHead::While { cond } = &l.head {
                    self.tokens(cond);
                }
                for c in &l.carried {
                    self.define(c.input);
                }
                self.stmts(&l.body);
                for c in &l.carried {
                    self.operand(&c.next);
                }
                if let Some(exit) = &l.exit {
                    self.tokens(exit);
                }
                self.scope.pop();
                for c in &l.carried {
                    self.define(c.output);
                }
            }
        }
    }

    fn op(&mut self, inst: VarId, op: &Op) {
        for (pos, o) in op.operands().into_iter().enumerate() {
            self.leave(Site::Operand { inst, pos }, o);
        }
        for tokens in op.inline_tokens() {
            self.tokens(tokens);
        }
        match op {
            Op::Call(_, args) => {
                for a in args {
                    self.tokens(&a.source);
                }
            }
            Op::Mapv(_, closure) => {
                self.tokens(&closure.source);
                // The closure runs once per element: its own variables
                // live in a scope of their own.
                self.enter();
                self.define(closure.param);
                self.body(&closure.body);
                self.scope.pop();
            }
            _ => {}
        }
    }
}
