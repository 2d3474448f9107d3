//! Random `#[differentiable(nested)]` programs: scalar functions with
//! branches on constants and on active comparisons, `match`, early
//! `return`, `for` and `while` loops (one inside another, too) with
//! `continue` and `break`, and calls of nested helpers: the bodies whose `f_grad` the
//! compiler writes as code to differentiate again. `nested_harness.rs`
//! checks each program's first and second derivatives.
//!
//! Every program has the signature
//! `f(x: f64, y: f64, #[constant] k: usize) -> f64`. Values stay finite and
//! smooth, as in the array generator: `exp` only of `tanh`, divisions and
//! logarithms only of `1 + z * z`, loop state damped by `tanh` or a factor
//! below one. Loops nest one level deep at most (what `f_grad` as code
//! covers), and branches set active values only (no inactive `let`s,
//! which the second `if` would run again).

use std::fmt::Write;

use super::source::{reads_source, Source};

/// The seed and count of the committed set that CI runs.
pub const SEED: u64 = 2027;
pub const COUNT: usize = 48;

struct Program {
    source: Source,
    /// The active scalars a statement may read.
    values: Vec<String>,
    /// Those the body may reassign.
    mutable: Vec<String>,
}

reads_source!(Program);

impl Program {
    fn new(seed: u64) -> Self {
        Program {
            source: Source::new(seed),
            values: vec!["x".into(), "y".into()],
            mutable: Vec::new(),
        }
    }

    fn value(&mut self) -> String {
        let at = self.source.pick(self.values.len());
        self.values[at].clone()
    }

    /// An active scalar expression (it reads at least one active value).
    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 {
            return self.value();
        }
        let a = self.expr(depth - 1);
        match self.pick(13) {
            0 => format!("{a}.sin()"),
            1 => format!("({a} * {}).cos()", self.literal()),
            2 => format!("{a}.tanh()"),
            3 => format!("{a}.tanh().exp()"),
            4 => format!("(1.0 + {a} * {a}).ln()"),
            5 => format!("(1.0 + {a} * {a}).sqrt()"),
            6 => format!("{a}.atan()"),
            7 => format!("({a}.powi(2) * {})", self.literal()),
            8 => {
                let b = self.expr(depth - 1);
                format!("({a} * {b})")
            }
            9 => {
                let b = self.expr(depth - 1);
                format!("({a} - {b} / (1.0 + {b} * {b}))")
            }
            10 => {
                let b = self.expr(depth - 1);
                format!("nested_helper({a}, {b})")
            }
            11 => format!("nested_scaled({a}, k)"),
            _ => format!("({a} + k as f64 * {})", self.literal()),
        }
    }

    fn let_value(&mut self) {
        let e = self.expr(2);
        let name = self.name("s");
        self.line(format!("let {name} = {e};"));
        self.values.push(name);
    }

    fn let_mutable(&mut self) -> String {
        let e = self.expr(1);
        let name = self.name("m");
        self.line(format!("let mut {name} = {e};"));
        self.values.push(name.clone());
        self.mutable.push(name.clone());
        name
    }

    fn mutable(&mut self) -> String {
        match self.mutable.len() {
            0 => self.let_mutable(),
            n => {
                let at = self.pick(n);
                self.mutable[at].clone()
            }
        }
    }

    /// `m = ..`: damped, so that loops stay bounded.
    fn reassign(&mut self) {
        let m = self.mutable();
        let (e, factor) = (self.expr(1), self.literal());
        self.line(format!("{m} = ({m} * {factor} + {e}).tanh();"));
    }

    fn condition(&mut self) -> String {
        match self.pick(3) {
            0 => "k % 2 == 0".into(),
            1 => format!("k > {}", self.pick(3)),
            // A threshold with a third decimal of 5, which no checked
            // point's coordinate equals (a point on the boundary has no
            // derivative there).
            _ => {
                let v = self.value();
                format!("{v} > {}5", self.literal())
            }
        }
    }

    /// `if c { m = ..; } else { m = ..; }`, maybe with an `else if`, maybe
    /// another `if` inside.
    fn branch(&mut self, nested: bool) {
        let m = self.mutable();
        let c = self.condition();
        self.line(format!("if {c} {{"));
        self.depth += 1;
        self.reassign();
        if nested && self.chance(0.4) {
            self.branch(false);
        }
        self.depth -= 1;
        if self.chance(0.4) {
            let c = self.condition();
            self.line(format!("}} else if {c} {{"));
            self.depth += 1;
            self.reassign();
            self.depth -= 1;
        }
        self.line("} else {");
        self.depth += 1;
        let e = self.expr(1);
        self.line(format!("{m} = {m} * 0.5 + {e} * 0.25;"));
        self.depth -= 1;
        self.line("}");
    }

    fn match_on_constant(&mut self) {
        let name = self.name("s");
        let (a, b, c) = (self.expr(1), self.expr(1), self.expr(1));
        self.line(format!("let {name} = match k % 3 {{"));
        self.line(format!("    0 => {a},"));
        self.line(format!("    1 => {b},"));
        self.line(format!("    _ => {c},"));
        self.line("};");
        self.values.push(name);
    }

    fn early_return(&mut self) {
        let (e, at) = (self.expr(2), self.pick(4));
        self.line(format!("if k == {at} {{"));
        self.line(format!("    return {e};"));
        self.line("}");
    }

    /// `for i in 0..k + 2 { .. }` reassigning a damped accumulator, with
    /// an inactive value of the iteration, and maybe a branch,
    /// `continue` or `break`.
    fn for_loop(&mut self) {
        let acc = self.let_mutable();
        let i = self.name("i");
        let c = self.name("c");
        self.line(format!("for {i} in 0..k + 2 {{"));
        self.depth += 1;
        self.line(format!("let {c} = {i} as f64 * 0.1;"));
        if self.chance(0.3) {
            self.line(format!("if {i} == 1 {{"));
            self.line("    continue;");
            self.line("}");
        }
        let e = self.expr(1);
        self.line(format!("{acc} = ({acc} * 0.7 + {e} * {c}).tanh();"));
        if self.chance(0.4) {
            self.branch(false);
        }
        if self.chance(0.3) {
            self.inner_loop(&acc, &i);
        }
        if self.chance(0.3) {
            self.line(format!("if {acc} > 0.6 {{"));
            self.line("    break;");
            self.line("}");
        }
        self.depth -= 1;
        self.line("}");
    }

    /// A loop inside the `for` loop over `i`: over `0..=i`, or a `while`
    /// with its own counter, maybe in a branch.
    fn inner_loop(&mut self, acc: &str, i: &str) {
        let in_branch = self.chance(0.4);
        if in_branch {
            let c = self.condition();
            self.line(format!("if {c} {{"));
            self.depth += 1;
        }
        let e = self.expr(1);
        if self.chance(0.5) {
            let j = self.name("j");
            self.line(format!("for {j} in 0..{i} + 1 {{"));
            self.line(format!(
                "    {acc} = ({acc} * 0.8 + {e} * ({j} as f64 * 0.2)).tanh();"
            ));
        } else {
            let n = self.name("n");
            self.line(format!("let mut {n} = 0;"));
            self.line(format!("while {n} < 2 {{"));
            self.line(format!("    {n} += 1;"));
            self.line(format!("    {acc} = {acc} * 0.6 + {e}.sin() * 0.3;"));
        }
        self.line("}");
        if in_branch {
            self.depth -= 1;
            self.line("}");
        }
    }

    /// `while n < k + 1 { n += 1; w = .. }` with its own counter.
    fn while_loop(&mut self) {
        let w = self.let_mutable();
        let n = self.name("n");
        self.line(format!("let mut {n} = 0;"));
        self.line(format!("while {n} < k + 1 {{"));
        self.depth += 1;
        self.line(format!("{n} += 1;"));
        let e = self.expr(1);
        self.line(format!("{w} = {w} * 0.6 + {e}.sin() * 0.3;"));
        self.depth -= 1;
        self.line("}");
    }

    fn statement(&mut self) {
        match self.pick(8) {
            0 | 1 => self.let_value(),
            2 => self.reassign(),
            3 => self.branch(true),
            4 => self.match_on_constant(),
            5 => self.early_return(),
            6 => self.for_loop(),
            _ => self.while_loop(),
        }
    }

    fn body(mut self) -> String {
        let statements = 2 + self.pick(5);
        for _ in 0..statements {
            self.statement();
        }
        let mut result = self.expr(2);
        if let Some(m) = self.mutable.last().cloned() {
            result = format!("{result} + {m}");
        }
        self.line(format!("{result} + x * y * 0.1"));
        self.lines.join("\n")
    }
}

/// The module of `count` programs from `seed`, for a test crate that
/// declares `nested_harness` (with `#[macro_use]`) before it.
pub fn file(seed: u64, count: usize) -> String {
    let mut out = format!(
        "//! Generated by `tests/generator/nested.rs` (seed {seed}, {count} programs):\n\
         //! random `#[differentiable(nested)]` scalar functions, each checked to\n\
         //! second order. Do not edit; see `tests/generator_sync.rs`.\n\n\
         #![allow(unused, unused_parens, unused_assignments)]\n\
         #![allow(clippy::all)]\n\n\
         use crate::nested_harness::{{nested_helper, nested_helper_jvp, nested_helper_jvp_jvp, nested_helper_jvp_vjp, nested_helper_vjp}};\n\
         use crate::nested_harness::{{nested_scaled, nested_scaled_jvp, nested_scaled_jvp_jvp, nested_scaled_jvp_vjp, nested_scaled_vjp}};\n"
    );
    for p in 0..count {
        let program = Program::new(seed.wrapping_mul(1_000_003).wrapping_add(p as u64 + 1));
        let body = program.body();
        let _ = write!(
            out,
            "\nmod p{p} {{\n    use super::*;\n    use ad::{{differentiable, NoTangent}};\n\n    \
             #[differentiable(nested)]\n    \
             pub fn f(x: f64, y: f64, #[constant] k: usize) -> f64 {{\n\
             {body}\n    }}\n\n    \
             #[test]\n    fn second_order() {{\n        check_nested_program!();\n    }}\n}}\n"
        );
    }
    out
}
