//! Random `#[differentiable]` programs: a deterministic generator (a seed,
//! a count) of functions over scalars and arrays with branches, loops,
//! reassignment, element writes, calls and constants, written as one Rust
//! test file that checks each against finite differences and forward mode
//! against reverse mode (see `harness.rs`).
//!
//! `tests/generated/programs.rs` is the output for [`SEED`] and [`COUNT`]
//! (kept in sync by `tests/generator_sync.rs`); `cargo run --example
//! generate_programs -- --seed S --count N` writes and runs other sets.
//!
//! Every program has the signature
//! `f(x: f64, y: f64, a: &Array1<f64>, b: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64`,
//! with `a`, `b`, `c` of one length `n >= 1`. Values stay finite and smooth
//! enough for finite differences: `exp` only of `tanh`, divisions only by
//! `1 + z * z`, square roots and logarithms only of `1 + z * z`, and loop
//! state damped by `tanh` or a factor below one.

#![allow(dead_code)]

pub mod nested;
mod source;

use std::fmt::Write;

use source::{reads_source, Source};

/// The seed and count of the committed set that CI runs.
pub const SEED: u64 = 2026;
pub const COUNT: usize = 200;

/// A variable a program can read.
#[derive(Clone)]
struct Var {
    name: String,
    active: bool,
}

struct Program {
    source: Source,
    scalars: Vec<Var>,
    /// Arrays, each with how to borrow it (`a` for a parameter, `&v` for a
    /// local).
    arrays: Vec<(Var, String)>,
    /// Mutable active scalars the body may reassign.
    mutable: Vec<String>,
}

reads_source!(Program);

impl Program {
    fn new(seed: u64) -> Self {
        Program {
            source: Source::new(seed),
            scalars: vec![
                Var {
                    name: "x".into(),
                    active: true,
                },
                Var {
                    name: "y".into(),
                    active: true,
                },
            ],
            arrays: vec![
                (
                    Var {
                        name: "a".into(),
                        active: true,
                    },
                    "a".into(),
                ),
                (
                    Var {
                        name: "b".into(),
                        active: true,
                    },
                    "b".into(),
                ),
                (
                    Var {
                        name: "c".into(),
                        active: false,
                    },
                    "c".into(),
                ),
            ],
            mutable: Vec::new(),
        }
    }

    /// An index into the arrays: the first, the last, or `k % n`.
    fn index(&mut self) -> String {
        match self.pick(3) {
            0 => "0".into(),
            1 => "a.len() - 1".into(),
            _ => "k % a.len()".into(),
        }
    }

    fn array(&mut self) -> (Var, String) {
        let i = self.source.pick(self.arrays.len());
        self.arrays[i].clone()
    }

    /// A scalar expression of at most `depth` nested operations.
    fn scalar(&mut self, depth: usize) -> String {
        if depth == 0 || self.chance(0.25) {
            return match self.pick(6) {
                0..=2 => {
                    let i = self.source.pick(self.scalars.len());
                    self.scalars[i].name.clone()
                }
                3 => self.literal(),
                4 => "(k as f64 * 0.5)".into(),
                _ => {
                    let (v, _) = self.array();
                    let i = self.index();
                    format!("{}[{i}]", v.name)
                }
            };
        }
        let d = depth - 1;
        match self.pick(14) {
            0 => format!("({} + {})", self.scalar(d), self.scalar(d)),
            1 => format!("({} - {})", self.scalar(d), self.scalar(d)),
            2 => format!("({} * {})", self.scalar(d), self.scalar(d)),
            3 => {
                let (num, den) = (self.scalar(d), self.scalar(d));
                format!("({num} / (1.0 + {den} * {den}))")
            }
            4 => {
                let f = ["sin", "cos", "tanh"][self.pick(3)];
                let z = self.scalar(d);
                method(&z, f)
            }
            5 => {
                let z = self.scalar(d);
                let f = ["sqrt", "ln"][self.pick(2)];
                method(&format!("(1.0 + {z} * {z})"), f)
            }
            6 => {
                let z = self.scalar(d);
                format!("{}.exp()", method(&z, "tanh"))
            }
            7 => {
                let (v, _) = self.array();
                format!("{}.mapv(f64::tanh).sum()", v.name)
            }
            8 => {
                let ((v, _), (_, r)) = (self.array(), self.array());
                format!("{}.dot({r})", v.name)
            }
            9 => {
                let (v, _) = self.array();
                format!("{}.mean().unwrap()", v.name)
            }
            10 => format!("helper_scalar({}, {})", self.scalar(d), self.scalar(d)),
            11 => {
                let (_, r) = self.array();
                format!("helper_array({r}, {})", self.scalar(d))
            }
            12 => {
                let (_, r) = self.array();
                format!("helper_recursive({r}, {}, k % 3)", self.scalar(d))
            }
            _ => {
                let (_, r) = self.array();
                format!("helper_halving({r}, {}, 0, k + 1)", self.scalar(d))
            }
        }
    }

    /// An array expression, owned.
    fn array_expr(&mut self) -> String {
        let (v, r) = self.array();
        match self.pick(8) {
            6 => {
                // A branch in the closure, each arm reading a scalar of
                // the body.
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                format!(
                    "{}.mapv(|t| if t > 0.2 {{ t * {c} }} else {{ (t - {c}).tanh() }})",
                    v.name
                )
            }
            7 => {
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                format!("{}.mapv(|t| {{ let u = t * {c}; u * u - t }})", v.name)
            }
            0 => format!("{}.mapv(f64::sin)", v.name),
            1 => {
                let (_, r2) = self.array();
                format!("({r} * {r2}).mapv(f64::tanh)")
            }
            2 => format!("({r} * {})", self.scalar(1)),
            3 => {
                let (_, r2) = self.array();
                format!("({r} + {r2})")
            }
            4 => format!("{}.mapv(|t| t * t * 0.5 - t)", v.name),
            _ => {
                // The closure reads a scalar of the body, active or not.
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                format!("{}.mapv(|t| (t * {c}).sin() + {c} * 0.5)", v.name)
            }
        }
    }

    fn let_scalar(&mut self) {
        let e = self.scalar(3);
        let name = self.name("s");
        // A local bound to literals only needs its type named, as in Rust.
        let ty = if e.chars().any(|c| c.is_ascii_alphabetic()) {
            ""
        } else {
            ": f64"
        };
        self.line(format!("let mut {name}{ty} = {e};"));
        self.scalars.push(Var {
            name: name.clone(),
            active: true,
        });
        self.mutable.push(name);
    }

    fn let_array(&mut self) {
        let e = self.array_expr();
        let name = self.name("v");
        self.line(format!("let {name} = {e};"));
        let borrow = format!("&{name}");
        self.arrays.push((Var { name, active: true }, borrow));
    }

    /// A mutable active scalar, declared first if there is none.
    fn mutable_scalar(&mut self) -> String {
        if self.mutable.is_empty() {
            self.let_scalar();
        }
        let i = self.source.pick(self.mutable.len());
        self.mutable[i].clone()
    }

    fn reassign(&mut self) {
        let target = self.mutable_scalar();
        let e = self.scalar(2);
        match self.pick(3) {
            0 => self.line(format!("{target} = ({target} * 0.5 + {e}).tanh();")),
            1 => self.line(format!("{target} += {e};")),
            _ => self.line(format!("{target} = {e};")),
        }
    }

    fn branch(&mut self) {
        let cond = match self.pick(3) {
            0 => "k % 2 == 0".to_string(),
            1 => format!("{} > 0.1", self.scalar(1)),
            _ => "c[0] < 0.0".to_string(),
        };
        let target = self.mutable_scalar();
        self.line(format!("if {cond} {{"));
        self.depth += 1;
        let e = self.scalar(2);
        self.line(format!("{target} = {e};"));
        self.depth -= 1;
        if self.chance(0.7) {
            self.line("} else {");
            self.depth += 1;
            let e = self.scalar(2);
            self.line(format!("{target} = {target} * {e};"));
            self.depth -= 1;
        }
        self.line("}");
    }

    /// `for i in <one of ranges> {`, opening the body.
    fn for_header(&mut self, ranges: [&str; 3]) {
        let range = ranges[self.pick(3)];
        self.line(format!("for i in {range} {{"));
        self.depth += 1;
    }

    /// Sometimes `if i == 3 { break; }`, then the end of the loop.
    fn for_end(&mut self) {
        if self.chance(0.2) {
            self.line("if i == 3 {");
            self.line("    break;");
            self.line("}");
        }
        self.depth -= 1;
        self.line("}");
    }

    /// A loop over the arrays' length that carries a scalar.
    fn for_loop(&mut self) {
        let acc = self.mutable_scalar();
        self.for_header([
            "0..a.len()",
            "(0..a.len()).rev()",
            "(0..a.len()).step_by(2)",
        ]);
        let (v, _) = self.array();
        let e = self.scalar(1);
        if self.chance(0.3) {
            self.line("if i % 3 == 2 {");
            self.line("    continue;");
            self.line("}");
        }
        self.line(format!(
            "{acc} = ({acc} * 0.7 + {}[i] * {e}).tanh();",
            v.name
        ));
        if self.chance(0.25) {
            // The index bound again: the reverse sweep reads both.
            let (w, _) = self.array();
            self.line("let i = (i + 1) % c.len();");
            self.line(format!("{acc} = {acc} + {}[i] * 0.3;", w.name));
        }
        self.for_end();
    }

    /// A loop that only adds to a scalar (`s += ..`, in one or two steps),
    /// whose reverse code runs inside its forward sweep: reads of an
    /// element and its neighbour, a branch, an inner loop, `continue` and
    /// `break` in the body.
    fn sum_loop(&mut self) {
        let acc = self.mutable_scalar();
        self.for_header([
            "0..a.len()",
            "(0..a.len()).rev()",
            "(1..a.len()).step_by(2)",
        ]);
        // Mostly the sum is read only where it is added to (a loop that
        // reads it elsewhere is not fused).
        let hidden = self.chance(0.7);
        let all_scalars = self.scalars.clone();
        if hidden {
            self.scalars.retain(|s| s.name != acc);
        }
        let (v, _) = self.array();
        let t = self.name("t");
        let e = self.scalar(1);
        self.line(format!("let {t} = {}[i] * {e};", v.name));
        if self.chance(0.15) {
            self.line("if i % 3 == 1 {");
            self.line("    continue;");
            self.line("}");
        }
        let (w, _) = self.array();
        match self.pick(4) {
            0 => {
                let e = self.scalar(1);
                self.line(format!("{acc} += {t}.sin() * {e};"));
            }
            1 => {
                let e = self.scalar(1);
                self.line(format!("{acc} += {t} * {t} * 0.5;"));
                self.line(format!("{acc} -= {}[(i + 1) % a.len()] * {e};", w.name));
            }
            2 => {
                let u = self.name("u");
                self.line(format!("let mut {u} = {t};"));
                self.line(format!("if {t} > 0.1 {{"));
                self.line(format!("    {u} = {u} * {}[(i + 1) % a.len()];", w.name));
                self.line("}");
                self.line(format!("{acc} += {u};"));
            }
            _ => {
                let q = self.name("q");
                self.line(format!("let mut {q} = 0.0;"));
                self.line("for j in 0..a.len() {");
                self.line(format!("    {q} += {}[j] * {t};", w.name));
                self.line("}");
                self.line(format!("{acc} = {acc} + {q}.tanh();"));
            }
        }
        self.scalars = all_scalars;
        self.for_end();
    }

    fn while_loop(&mut self) {
        let acc = self.mutable_scalar();
        let counter = self.name("j");
        self.line(format!("let mut {counter} = 0;"));
        self.line(format!("while {counter} < a.len() {{"));
        self.depth += 1;
        self.line(format!("{counter} += 1;"));
        let (v, _) = self.array();
        let e = self.scalar(1);
        self.line(format!(
            "{acc} = {acc}.sin() * 0.9 + {}[{counter} - 1] * {e};",
            v.name
        ));
        self.depth -= 1;
        self.line("}");
    }

    /// A local array that a loop updates in place (`mapv_inplace`,
    /// `scaled_add`, `assign`) or reassigns, carried from one iteration
    /// to the next.
    fn array_loop(&mut self) {
        let (u, borrowed) = self.array();
        let u = u.name;
        let h = self.name("h");
        match self.pick(2) {
            0 => self.line(format!("let mut {h} = Array1::<f64>::zeros(a.len());")),
            _ => self.line(format!("let mut {h} = {u}.to_owned();")),
        }
        let i = self.source.pick(self.scalars.len());
        let c = self.scalars[i].name.clone();
        self.for_header(["0..3", "0..a.len()", "(0..a.len()).rev()"]);
        match self.pick(4) {
            0 => {
                self.line(format!("{h}.mapv_inplace(|t| (t * {c}).tanh());"));
                self.line(format!("{h}.scaled_add(0.5, {borrowed});"));
            }
            1 => {
                let e = self.scalar(1);
                self.line(format!("{h}.scaled_add({e}, {borrowed});"));
            }
            2 => {
                let next = self.name("n");
                self.line(format!(
                    "let {next} = (&{h} * {c} + {borrowed}).mapv(f64::tanh);"
                ));
                self.line(format!("{h}.assign(&{next});"));
            }
            _ => self.line(format!("{h} = (&{h} * 0.5 + {borrowed}).mapv(f64::sin);")),
        }
        self.for_end();
        self.push_local_array(&h);
    }

    fn element_writes(&mut self) {
        let name = self.name("w");
        let (v, _) = self.array();
        let e = self.scalar(1);
        self.line(format!("let mut {name} = Array1::<f64>::zeros(a.len());"));
        self.line("for i in 0..a.len() {");
        self.depth += 1;
        match self.pick(2) {
            0 => self.line(format!("{name}[i] = {}[i] * {e};", v.name)),
            _ => self.line(format!("{name}[i] += ({}[i] + {e}).sin();", v.name)),
        }
        self.depth -= 1;
        self.line("}");
        let borrow = format!("&{name}");
        self.arrays.push((Var { name, active: true }, borrow));
    }

    fn early_return(&mut self) {
        let e = self.scalar(2);
        self.line("if k == 3 {");
        self.line(format!("    return {e};"));
        self.line("}");
    }

    /// `match` on the constant `k`, each arm assigning the same scalar.
    fn match_on_constant(&mut self) {
        let target = self.mutable_scalar();
        self.line("match k % 3 {");
        self.depth += 1;
        let (e0, e1, e2) = (self.scalar(2), self.scalar(2), self.scalar(1));
        self.line(format!("0 => {target} = {e0},"));
        self.line(format!("1 => {target} = {target} * {e1},"));
        self.line(format!("_ => {target} += {e2},"));
        self.depth -= 1;
        self.line("}");
    }

    /// A copy of an active array changed element by element in a loop that
    /// reads its neighbour (the reverse sweep needs the old values).
    fn overwrite_a_copy(&mut self) {
        let name = self.name("u");
        let (v, _) = self.array();
        let e = self.scalar(1);
        self.line(format!("let mut {name} = {}.to_owned();", v.name));
        self.line(format!("for i in 1..{name}.len() {{"));
        self.line(format!(
            "    {name}[i] = {name}[i - 1] * 0.5 + {name}[i] * {e};"
        ));
        self.line("}");
        let borrow = format!("&{name}");
        self.arrays.push((Var { name, active: true }, borrow));
    }

    /// A branch or a loop body that binds an outer scalar's name again
    /// (and may assign the new binding): after the scope the outer value
    /// is read, unchanged.
    fn shadow_in_scope(&mut self) {
        let target = self.mutable_scalar();
        let i = self.source.pick(self.scalars.len());
        let shadowed = self.scalars[i].name.clone();
        let e = self.scalar(1);
        if self.chance(0.5) {
            self.line("if k % 2 == 1 {");
        } else {
            self.line("for i in 0..a.len() {");
        }
        let m = if shadowed == target { "mut " } else { "" };
        self.line(format!("    let {m}{shadowed} = {shadowed} * 0.5 + {e};"));
        self.line(format!(
            "    {target} = ({target} * 0.8 + {shadowed} * 0.3).tanh();"
        ));
        self.line("}");
        self.line(format!("{target} += {shadowed} * 0.2;"));
    }

    /// `let s = { let t = ..; .. };`: a block as a value.
    fn block_value(&mut self) {
        let (e1, e2) = (self.scalar(2), self.scalar(1));
        let t = self.name("t");
        let name = self.name("s");
        // Typed: with only literals inside, the block's type would not be
        // known where a method is called on it.
        self.line(format!("let mut {name}: f64 = {{"));
        self.line(format!("    let {t} = {e1};"));
        self.line(format!("    {t} * {t} * 0.5 + {e2}"));
        self.line("};");
        self.scalars.push(Var {
            name: name.clone(),
            active: true,
        });
        self.mutable.push(name);
    }

    /// A `match` with guards on the constant and on an active comparison.
    fn guarded_match(&mut self) {
        let target = self.mutable_scalar();
        let (e0, e1, e2, g) = (
            self.scalar(2),
            self.scalar(2),
            self.scalar(1),
            self.scalar(1),
        );
        self.line("match k % 4 {");
        self.line(format!("    j if j > 1 => {target} = {e0} * j as f64,"));
        self.line(format!("    _ if {g} > 0.2 => {target} = {target} * {e1},"));
        self.line(format!("    _ => {target} += {e2},"));
        self.line("}");
    }

    /// A `let` of a `match` or `if` with arms that exit: `continue`, a
    /// block that may `break`, and a `return` at the top level.
    fn exits_in_let_arms(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let (e, e2) = (self.scalar(1), self.scalar(1));
        let (u, w) = (v.name, self.name("w"));
        self.line("for i in 0..a.len() {");
        self.line(format!("    let {w} = match i % 3 {{"));
        self.line("        0 => continue,");
        self.line(format!("        1 => {u}[i] * {e},"));
        self.line("        _ => {");
        self.line(format!("            if {u}[i] > 0.8 {{"));
        self.line("                break;");
        self.line("            }");
        self.line(format!("            {u}[i].tanh()"));
        self.line("        }");
        self.line("    };");
        self.line(format!("    {acc} += {w} * {e2};"));
        self.line("}");
        let name = self.name("s");
        self.line(format!(
            "let {name} = if {acc} < 5.0 {{ {acc} * 0.5 }} else {{ return {acc} * {e2} }};"
        ));
        self.scalars.push(Var { name, active: true });
    }

    /// `let s;` assigned in the arms of a `match`: active values, and
    /// sometimes a literal in one arm.
    fn late_init(&mut self) {
        let name = self.name("s");
        let (e1, e2) = (self.scalar(2), self.scalar(2));
        let middle = if self.chance(0.5) {
            "0.5".to_string()
        } else {
            self.scalar(1)
        };
        // Typed: with literals in every arm, the float's type would be
        // ambiguous to a method called on it.
        self.line(format!("let {name}: f64;"));
        self.line("match k % 3 {");
        self.line(format!("    0 => {name} = {e1},"));
        self.line(format!("    1 => {{ {name} = {middle}; }}"));
        self.line(format!("    _ => {name} = {e2},"));
        self.line("}");
        self.scalars.push(Var { name, active: true });
    }

    /// A loop over an array's items nested in a counted loop: the outer
    /// loop carries what the inner one's items make active.
    fn nested_item_loops(&mut self) {
        // A sum that starts inactive is active only through the items.
        let acc = if self.chance(0.5) {
            let name = self.name("s");
            self.line(format!("let mut {name}: f64 = 0.0;"));
            self.mutable.push(name.clone());
            self.scalars.push(Var {
                name: name.clone(),
                active: true,
            });
            name
        } else {
            self.mutable_scalar()
        };
        let (v, _) = self.array();
        let e = self.scalar(1);
        let (item, head) = if self.chance(0.5) {
            ("v".to_string(), format!("for v in {}.iter() {{", v.name))
        } else {
            (
                "(v * j as f64)".to_string(),
                format!("for (j, v) in {}.iter().enumerate() {{", v.name),
            )
        };
        self.line("for k in 0..2 {");
        self.line(format!("    {head}"));
        if self.chance(0.5) {
            self.line(format!("        {acc} += {item} * {e};"));
        } else {
            self.line(format!(
                "        {acc} = ({acc} * 0.6 + {item} * {e} + k as f64 * 0.1).sin();"
            ));
        }
        self.line("    }");
        self.line("}");
    }

    /// A loop that starts a variable from an untyped float literal and
    /// tests it in inactive code (`(next - y).abs() < 0.05`, or after it
    /// is reassigned, `y.abs() > 0.6`).
    fn converging_loop(&mut self) {
        let (y, next) = (self.name("s"), self.name("n"));
        let (v, _) = self.array();
        let e = self.scalar(1);
        self.line(format!("let mut {y} = 1.0;"));
        self.line("for i in 0..a.len() {");
        self.line(format!(
            "    let {next} = ({y} * 0.5 + {}[i] * {e}).tanh();",
            v.name
        ));
        if self.chance(0.5) {
            self.line(format!("    if ({next} - {y}).abs() < 0.05 {{"));
            self.line("        break;");
            self.line("    }");
            self.line(format!("    {y} = {next};"));
        } else {
            // The test reads a value made from the literal's variable.
            self.line(format!("    {y} = {next};"));
            self.line(format!("    if {y}.abs() > 0.6 {{"));
            self.line(format!("        {y} = 0.6;"));
            self.line("    }");
        }
        self.line("}");
        self.mutable.push(y.clone());
        self.scalars.push(Var {
            name: y,
            active: true,
        });
    }

    /// A `for` loop over a chain with `filter` and `map` stages, whose
    /// closure parameter may shadow a scalar the body reads.
    fn chain_for_loop(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let e = self.scalar(1);
        let i = self.source.pick(self.scalars.len());
        let outer = self.scalars[i].name.clone();
        let param = if self.chance(0.5) {
            outer.clone()
        } else {
            "t".to_string()
        };
        let filter = match self.pick(3) {
            0 => ".filter(|q| **q > 0.1)",
            1 => ".take_while(|q| **q > -0.9)",
            _ => "",
        };
        self.line(format!(
            "for m in {}.iter(){filter}.map(|{param}| ({param} * 0.7).sin()) {{",
            v.name
        ));
        self.line(format!(
            "    {acc} = {acc} * 0.8 + m * {e} + {outer} * 0.1;"
        ));
        self.line("}");
    }

    /// A call that returns a pair, destructured (`let (p, q) = ..`) or
    /// assigned to names (`(p, q) = ..`), maybe in a loop.
    fn pair_call(&mut self) {
        let (v, r) = self.array();
        let e = self.scalar(1);
        let (p, q) = (self.name("s"), self.name("v"));
        if self.chance(0.5) {
            self.line(format!("let ({p}, {q}) = helper_pair({r}, {e});"));
        } else {
            self.line(format!("let mut {p} = {e};"));
            self.line(format!("let mut {q} = {}.to_owned();", v.name));
            self.line("for i in 0..2 {");
            self.line(format!(
                "    ({p}, {q}) = helper_pair(&{q}, {p} * 0.5 + 0.1);"
            ));
            self.line("}");
        }
        let sum = self.name("s");
        self.line(format!("let {sum} = {p} * {q}.sum();"));
        self.scalars.push(Var {
            name: sum,
            active: true,
        });
    }

    /// A `loop` used as a value: `break e` from its own body, or
    /// `break 'search e` from a `for` inside it.
    fn loop_value(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let (e, e2) = (self.scalar(1), self.scalar(1));
        let (n, name) = (self.name("n"), self.name("s"));
        self.line(format!("let mut {n} = 0;"));
        self.line(format!("let {name} = 'search: loop {{"));
        self.line(format!("    {n} += 1;"));
        self.line("    for j in 0..a.len() {");
        self.line(format!(
            "        {acc} = ({acc} * 0.8 + {}[j] * {e}).tanh();",
            v.name
        ));
        self.line(format!("        if {acc} > 0.3 && j > {n} {{"));
        self.line(format!("            break 'search {acc} * {e2};"));
        self.line("        }");
        self.line("    }");
        self.line(format!("    if {n} > 2 {{"));
        self.line(format!("        break {acc} + {e2};"));
        self.line("    }");
        self.line("};");
        self.scalars.push(Var { name, active: true });
    }

    /// Nested loops left by a labelled `continue` or `break` from the
    /// inner one.
    fn labelled_exit(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let e = self.scalar(1);
        let exit = if self.chance(0.5) {
            "continue"
        } else {
            "break"
        };
        self.line("'outer: for i in 0..a.len() {");
        self.line("    for j in 0..a.len() {");
        self.line(format!(
            "        {acc} = ({acc} * 0.8 + {}[j] * {e}).tanh();",
            v.name
        ));
        self.line(format!("        if {acc} > 0.3 && j > i {{"));
        self.line(format!("            {exit} 'outer;"));
        self.line("        }");
        self.line("    }");
        self.line(format!("    {acc} += {}[i] * 0.2;", v.name));
        self.line("}");
    }

    /// An iterator chain over the arrays: a `zip` and `map` summed, an
    /// `enumerate` with a reference pattern, a `filter`, a `fold`, a
    /// range's `map`, positions chosen by `rev`, `skip`, `step_by` and
    /// `take`, `windows`, a `reduce`, a `chain`, a `take_while`, a `scan`,
    /// a `fold` from a tuple, a `filter` whose parameter shadows the
    /// `map`'s before a `last()`, an `nth(k)` and a `reduce` with defaults,
    /// `enumerate`, `skip` and `zip` after `map`s; or a `for` loop over a
    /// `zip`.
    fn iterator_chain(&mut self) {
        let (u, _) = self.array();
        let (w, w_ref) = self.array();
        let (u, w) = (u.name, w.name);
        let e = self.scalar(1);
        let (p, q) = (self.name("p"), self.name("q"));
        let chain = match self.pick(19) {
            0 => format!("{u}.iter().zip({w}.iter()).map(|({p}, {q})| {p} * {q} * {e}).sum::<f64>()"),
            1 => format!(
                "{u}.iter().enumerate().map(|({q}, &{p})| ({p} * {e}).sin() * ({q} as f64 + 1.0)).sum::<f64>()"
            ),
            2 => format!("{u}.iter().filter(|{p}| **{p} > 0.0).map(|{p}| {p} * {e}).sum::<f64>()"),
            3 => format!("{u}.iter().fold(0.5, |{q}, {p}| ({q} * 0.8 + {p} * {e}).tanh())"),
            4 => format!("(0..a.len()).map(|{q}| {u}[{q}] * {w}[{q}] + {e}).sum::<f64>()"),
            5 => format!(
                "{u}.iter().rev().skip(1).zip({w}.iter().step_by(2)).map(|({p}, {q})| {p} * {q} + {e}).sum::<f64>()"
            ),
            6 => format!(
                "{u}.windows(2).into_iter().enumerate().map(|({q}, {p})| ({p}[1] - {p}[0] * {e}) * {q} as f64).sum::<f64>()"
            ),
            7 => format!(
                "{u}.iter().take(3).filter(|{p}| **{p} < 0.5).cloned().fold(-0.5, |{q}, {p}| {q} * {p} + {e})"
            ),
            8 => format!(
                "{u}.iter().zip({w}.iter()).map(|({p}, {q})| {p} * {e} - {q}).reduce(f64::max).unwrap()"
            ),
            9 => format!(
                "{u}.iter().map(|{p}| {p} * {e}).min_by(|{p}, {q}| ({p} - {e}).abs().total_cmp(&({q} - {e}).abs())).unwrap()"
            ),
            11 => format!(
                "{u}.iter().chain({w}.iter()).rev().enumerate().map(|({q}, {p})| {p} * {e} * ({q} as f64 * 0.1 + 1.0)).sum::<f64>()"
            ),
            12 => format!(
                "{u}.iter().take_while(|{p}| **{p} < 0.8).map(|{p}| ({p} * {e}).sin()).sum::<f64>()"
            ),
            13 => format!(
                "{u}.iter().scan(0.0, |{q}, {p}| {{ *{q} = *{q} * 0.5 + {p} * {e}; Some(*{q}) }}).take_while(|{p}| *{p} < 1.5).map(|{p}| {p}.tanh()).sum::<f64>()"
            ),
            14 => format!(
                "{{ let ({p}, {q}) = {u}.iter().zip({w}.iter()).fold((0.0, 1.0), |({p}, {q}), (a0, b0)| ({p} + a0 * {e}, {q} * 0.9 + b0)); {p} * {q} }}"
            ),
            15 => format!(
                "{u}.iter().map(|{p}| {p} * {e}).filter(|{p}| {p}.abs() > 0.2).last().unwrap_or({e})"
            ),
            16 => format!(
                "{u}.iter().copied().nth(1).unwrap_or(0.5) * {e} + {u}.iter().map(|{p}| {p} - {e}).filter(|{p}| *{p} > 0.3).reduce(f64::max).unwrap_or({e})"
            ),
            17 => format!(
                "{u}.iter().map(|{p}| {p} * {e}).enumerate().skip(1).zip({w}.iter().map(|{q}| {q}.cos())).map(|(({q}, {p}), b0)| {p} * b0 * {q} as f64).sum::<f64>()"
            ),
            10 => {
                let weights = self.name("v");
                self.line(format!("let {weights} = vec![0.25; {u}.len()];"));
                format!("{u}.iter().zip(&{weights}).map(|({p}, {q})| {p} * {q} * {e}).sum::<f64>()")
            }
            _ => {
                let acc = self.mutable_scalar();
                self.line(format!("for ({p}, &{q}) in {u}.iter().zip({w_ref}) {{"));
                self.line(format!("    {acc} = ({acc} * 0.7 + {p} * {q} * {e}).tanh();"));
                self.line("}");
                return;
            }
        };
        let name = self.name("s");
        self.line(format!("let mut {name} = {chain};"));
        self.scalars.push(Var {
            name: name.clone(),
            active: true,
        });
        self.mutable.push(name);
    }

    /// A `Vec` local that receives active values: floats or arrays pushed
    /// in a loop (also in its branches, maybe then sorted and truncated,
    /// inserted into and removed from, reversed, swapped in, cloned and
    /// retained, split, deduplicated or drained; also read while pushing), a `vec![..]` of arrays, element writes
    /// into `vec![0.0; n]`, or a chain collected into a `Vec`; then read by
    /// index, by loop or by chain.
    fn vec_local(&mut self) {
        let (u, u_ref) = self.array();
        let (w, w_ref) = self.array();
        let (u, w) = (u.name, w.name);
        let e = self.scalar(1);
        let (list, p) = (self.name("l"), self.name("p"));
        let i = self.source.pick(self.scalars.len());
        let c = self.scalars[i].name.clone();
        let value = match self.pick(6) {
            0 => {
                self.line(format!("let mut {list} = Vec::new();"));
                self.line(format!("for {p} in 0..a.len() {{"));
                self.line(format!("    if {u}[{p}] > {w}[{p}] {{"));
                self.line(format!("        {list}.push(({u}[{p}] * {e}).sin());"));
                self.line("    } else {");
                self.line(format!("        {list}.push({w}[{p}] * {c});"));
                self.line("    }");
                self.line("}");
                if self.chance(0.5) {
                    self.line(format!("{list}.sort_by(|{p}, b| b.total_cmp({p}));"));
                    self.line(format!("{list}.truncate(k % 3 + 1);"));
                }
                let removed = match self.pick(13) {
                    0 => {
                        let r = self.name("s");
                        self.line(format!("{list}.insert({list}.len() / 2, {e} * 0.5);"));
                        self.line(format!("let {r} = {list}.remove({list}.len() - 1);"));
                        format!(" + {r}")
                    }
                    1 => {
                        self.line(format!("{list}.reverse();"));
                        String::new()
                    }
                    2 => {
                        let last = self.name("n");
                        self.line(format!("let {last} = {list}.len() - 1;"));
                        self.line(format!("{list}.swap(0, {last});"));
                        String::new()
                    }
                    3 => {
                        let copy = self.name("l");
                        self.line(format!("let {copy} = {list}.clone();"));
                        self.line(format!("{list}.retain(|{p}| *{p} > -0.5);"));
                        self.line(format!("{list}.push({e});"));
                        format!(" + {copy}.iter().sum::<f64>()")
                    }
                    4 => {
                        let tail = self.name("l");
                        self.line(format!(
                            "let {tail} = {list}.split_off(({list}.len() + 1) / 2);"
                        ));
                        format!(" + {tail}.iter().sum::<f64>()")
                    }
                    5 => {
                        self.line(format!("{list}.dedup();"));
                        String::new()
                    }
                    6 => {
                        let refilled = self.name("l");
                        self.line(format!("let mut {refilled} = Vec::new();"));
                        self.line(format!("for {p} in {list}.drain(..) {{"));
                        self.line(format!("    {refilled}.push({p} * {e});"));
                        self.line("}");
                        self.line(format!("{list} = {refilled};"));
                        String::new()
                    }
                    7 => {
                        let (r, m) = (self.name("s"), self.name("n"));
                        self.line(format!("{list}.push({e});"));
                        self.line(format!("let {r} = {list}.swap_remove(0);"));
                        self.line(format!("let {m} = {list}.len() / 2;"));
                        self.line(format!("{list}.rotate_left({m});"));
                        format!(" + {r}")
                    }
                    8 => {
                        let d = self.name("s");
                        self.line(format!("{list}.push({e});"));
                        self.line(format!(
                            "let {d}: f64 = {list}.drain(..1).map(|{p}| {p} * {c}).sum();"
                        ));
                        format!(" + {d}")
                    }
                    9 => {
                        let n = self.name("n");
                        self.line(format!("let {n} = {list}.len() + 1 + k % 2;"));
                        self.line(format!("{list}.resize({n}, {e} * 0.5);"));
                        String::new()
                    }
                    10 => {
                        let g = self.name("s");
                        self.line(format!(
                            "let {g} = {list}.get(k % 4).copied().unwrap_or({e});"
                        ));
                        format!(" + {g}")
                    }
                    11 => {
                        let more = self.name("l");
                        self.line(format!("let mut {more} = vec![{e}, {c} * 0.5];"));
                        self.line(format!("{list}.append(&mut {more});"));
                        format!(" + {more}.len() as f64")
                    }
                    _ => String::new(),
                };
                format!("{list}.iter().map(|{p}| {p} * {p}).sum::<f64>() + {list}[0]{removed}")
            }
            1 => {
                let h = self.name("h");
                self.line(format!("let mut {list} = Vec::with_capacity(3);"));
                self.line(format!("let mut {h} = {u}.to_owned();"));
                self.for_header(["0..3", "0..a.len()", "(0..k % 3)"]);
                self.line(format!("{h} = (&{h} * {c} + {w_ref}).mapv(f64::tanh);"));
                self.line(format!("{list}.push({h}.clone());"));
                self.for_end();
                let acc = self.name("q");
                self.line(format!("let mut {acc} = {h}.sum();"));
                self.line(format!("for {p} in &{list} {{"));
                self.line(format!("    {acc} += {p}.dot({u_ref}) * 0.5;"));
                self.line("}");
                acc
            }
            2 => {
                self.line(format!("let mut {list} = vec![{u}.to_owned()];"));
                self.line(format!("for {p} in 0..2 {{"));
                self.line(format!(
                    "    let n = {list}[{p}].mapv(|t| (t * {c}).sin()) + {w_ref};"
                ));
                self.line(format!("    {list}.push(n);"));
                self.line("}");
                let last = self.name("v");
                self.line(format!("let {last} = {list}[{list}.len() - 1].to_owned();"));
                self.push_local_array(&last);
                format!("{list}[1][0] * {e}")
            }
            3 => {
                self.line(format!("let mut {list} = vec![0.0; a.len()];"));
                self.line(format!("for {p} in 0..a.len() {{"));
                self.line(format!("    {list}[{p}] = {u}[{p}] * {e};"));
                self.line("}");
                self.line(format!("{list}[0] += {c};"));
                let v = self.name("v");
                self.line(format!("let {v} = Array1::from({list});"));
                self.push_local_array(&v);
                format!("{v}[0] * 0.5")
            }
            4 => {
                self.line(format!(
                    "let {list}: Vec<f64> = {u}.iter().filter(|{p}| **{p} > 0.0).map(|{p}| ({p} * {e}).tanh()).collect();"
                ));
                format!("{list}.iter().sum::<f64>()")
            }
            _ => {
                self.line(format!(
                    "let {list} = vec![{u}.to_owned(), c.mapv(|t| t * 0.5), {u}.mapv(|t| t * {c})];"
                ));
                format!(
                    "{list}.iter().enumerate().map(|({p}, v)| v.sum() * {p} as f64).sum::<f64>() + {list}[2].dot({w_ref})"
                )
            }
        };
        let name = self.name("s");
        self.line(format!("let mut {name} = {value};"));
        self.scalars.push(Var {
            name: name.clone(),
            active: true,
        });
        self.mutable.push(name);
    }

    /// How an array is passed by reference (`a` for a parameter, `&v` for
    /// a local).
    fn borrow_of(&self, name: &str) -> String {
        self.arrays
            .iter()
            .find(|(v, _)| v.name == name)
            .map(|(_, b)| b.clone())
            .unwrap_or_else(|| format!("&{name}"))
    }

    /// A local array of the arrays' length, active, that later statements
    /// may read.
    fn push_local_array(&mut self, name: &str) {
        let borrow = format!("&{name}");
        self.arrays.push((
            Var {
                name: name.to_string(),
                active: true,
            },
            borrow,
        ));
    }

    /// A closure bound to a local and called, an `array![..]` of
    /// scalars, a `from_shape_fn` array, a collected chain, a
    /// concatenation, in-place updates, a diagonal, a matrix by rows from
    /// `sin_cos`, a named view of a local, or a standard deviation.
    fn constructed(&mut self) {
        let (u, _) = self.array();
        let u = u.name;
        let (e1, e2, e3) = (self.scalar(1), self.scalar(1), self.scalar(1));
        let name = self.name("s");
        match self.pick(12) {
            0 => {
                let (g, p) = (self.name("g"), self.name("p"));
                self.line(format!("let {g} = |{p}: f64| ({p} * {e1}).tanh();"));
                self.line(format!("let mut {name} = {g}({e2}) + {g}({u}[0]);"));
            }
            1 => self.line(format!(
                "let mut {name} = ad::ndarray::array![{e1}, {e2}, {e3}].mapv(f64::sin).sum();"
            )),
            2 => {
                let (v, i) = (self.name("f"), self.name("i"));
                self.line(format!(
                    "let {v} = Array1::from_shape_fn(a.len(), |{i}| {u}[{i}] * {e1} + {i} as f64 * 0.1);"
                ));
                self.push_local_array(&v);
                self.line(format!("let mut {name} = {v}.sum() * 0.3;"));
            }
            3 => {
                let (v, p) = (self.name("f"), self.name("p"));
                self.line(format!(
                    "let {v}: Array1<f64> = {u}.iter().rev().map(|{p}| ({p} * {e1}).tanh() + {e2}).collect();"
                ));
                self.push_local_array(&v);
                self.line(format!("let mut {name} = {v}.dot(&{v}) * 0.1;"));
            }
            4 => {
                let (_, w) = self.array();
                let v = self.name("f");
                self.line(format!(
                    "let {v} = ad::ndarray::concatenate(ad::ndarray::Axis(0), &[{u}.view(), ({w} * {e1}).view()]).unwrap();"
                ));
                self.line(format!(
                    "let mut {name} = {v}.mapv(f64::tanh).dot(&{v}) * 0.2;"
                ));
            }
            5 => {
                let v = self.name("f");
                self.line(format!("let mut {v} = {u}.to_owned();"));
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                self.line(format!("{v}.mapv_inplace(|t| (t * {c}).tanh());"));
                self.line(format!("{v}.scaled_add({e2}, &{u});"));
                self.push_local_array(&v);
                self.line(format!("let mut {name} = {v}.sum() * 0.3;"));
            }
            6 => {
                let (w, _) = self.array();
                let (w, m) = (w.name, self.name("m"));
                self.line(format!(
                    "let {m} = {u}.view().insert_axis(ad::ndarray::Axis(1)).dot(&{w}.view().insert_axis(ad::ndarray::Axis(0)));"
                ));
                // The closure reads a scalar of the body (one that reads an
                // array is rejected).
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                self.line(format!(
                    "let mut {name} = {m}.diag().mapv(|t| (t * {c}).sin()).sum() * {e1};"
                ));
            }
            7 => {
                let (sine, cosine, m) = (self.name("s"), self.name("c"), self.name("m"));
                // `x` names the type, where `e1` may be a literal.
                self.line(format!("let ({sine}, {cosine}) = (x * {e1}).sin_cos();"));
                self.line(format!(
                    "let {m} = ad::ndarray::array![[{cosine}, -{sine}, 0.5], [{sine}, {cosine}, {e2}]];"
                ));
                self.line(format!(
                    "let mut {name} = {m}.t().dot(&{m}).mapv(f64::tanh).sum() * {e3};"
                ));
            }
            8 => {
                // A named view of a local array, which a record or tape may
                // keep beyond the block that binds the array.
                let (w, _) = self.array();
                let (w, m, d) = (w.name, self.name("m"), self.name("d"));
                self.line(format!(
                    "let {m} = {u}.view().insert_axis(ad::ndarray::Axis(1)).dot(&{w}.view().insert_axis(ad::ndarray::Axis(0)));"
                ));
                self.line(format!("let {d} = {m}.diag();"));
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                self.line(format!(
                    "let mut {name} = {d}.mapv(|t| (t * {c}).sin()).sum() * {e1} + {d}[0] * {e2};"
                ));
            }
            9 => {
                let (w, w_ref) = self.array();
                let (z, p, q) = (self.name("z"), self.name("p"), self.name("q"));
                let i = self.source.pick(self.scalars.len());
                let c = self.scalars[i].name.clone();
                let u_ref = if w.name == u {
                    w_ref.clone()
                } else {
                    self.borrow_of(&u)
                };
                self.line(format!(
                    "let {z} = ad::ndarray::Zip::from({u_ref}).and({w_ref}).map_collect(|&{p}, &{q}| ({p} * {c} - {q}).sin());"
                ));
                self.line(format!("let mut {name} = {z}.sum() * {e1};"));
            }
            10 => {
                // Rows of a matrix assigned, then read.
                let (_, w_ref) = self.array();
                let (m, u_ref) = (self.name("m"), self.borrow_of(&u));
                self.line(format!("let mut {m} = Array2::<f64>::zeros((2, a.len()));"));
                self.line("for i in 0..2 {");
                self.line(format!(
                    "    {m}.row_mut(i).assign(&({u_ref} * ({e1} + i as f64)));"
                ));
                self.line("}");
                self.line(format!("let mut {name} = {m}.row(1).dot({w_ref}) * {e2};"));
            }
            _ => self.line(format!(
                "let mut {name} = ({u}.var(0.0) + 0.1).sqrt() * {e1};"
            )),
        }
        self.scalars.push(Var {
            name: name.clone(),
            active: true,
        });
        self.mutable.push(name);
    }

    /// A `while let` over a stack of indices that the body also pops,
    /// with a `let ... else { continue }` over a constant's element.
    fn while_let_walk(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let e = self.scalar(1);
        let stack = self.name("stack");
        self.line(format!(
            "let mut {stack}: Vec<usize> = (0..a.len()).collect();"
        ));
        self.line(format!("while let Some(j) = {stack}.pop() {{"));
        self.line("    let Some(&w) = c.get(j) else { continue };");
        self.line(format!(
            "    {acc} = ({acc} * 0.7 + {}[j] * {e} * w).tanh();",
            v.name
        ));
        self.line("    if j % 3 == 2 {");
        self.line(format!("        {stack}.pop();"));
        self.line("    }");
        self.line("}");
    }

    /// A labelled block used as a value, left from its body and from a
    /// loop inside it.
    fn labelled_block(&mut self) {
        let (v, _) = self.array();
        let (e, e2, e3) = (self.scalar(1), self.scalar(1), self.scalar(1));
        let name = self.name("s");
        self.line(format!("let {name} = 'blk: {{"));
        // Not a round threshold: `(k as f64 * 0.5) + y` is 0.4 at k = 2,
        // where the branch would flip inside the finite differences.
        self.line(format!("    if {e} > 0.437 {{"));
        self.line(format!("        break 'blk {e} * 2.0;"));
        self.line("    }");
        self.line("    for j in 0..a.len() {");
        self.line(format!("        if {}[j] > 0.6 {{", v.name));
        self.line(format!("            break 'blk {}[j] + {e2};", v.name));
        self.line("        }");
        self.line("    }");
        self.line(format!("    {e3} - {e2}"));
        self.line("};");
        self.scalars.push(Var { name, active: true });
    }

    /// A fixed-size array of scalars, indexed and summed.
    fn fixed_array(&mut self) {
        let (e1, e2, e3) = (self.scalar(1), self.scalar(1), self.scalar(1));
        let (array, name) = (self.name("arr"), self.name("s"));
        self.line(format!("let {array} = [{e1}, {e2}, {e3}];"));
        self.line(format!(
            "let {name} = {array}.iter().sum::<f64>() * {array}[k % 3];"
        ));
        self.scalars.push(Var { name, active: true });
    }

    /// A vector assembled from pieces (`slice_mut(..).assign(..)`, a pair
    /// per element), read by its ends through an array pattern, and by a
    /// `zip` call whose closure's parameters shadow the function's.
    fn assembled(&mut self) {
        let ((u, _), (_, w_ref)) = (self.array(), self.array());
        let (e1, e2) = (self.scalar(1), self.scalar(1));
        let (v, p, q) = (self.name("pieces"), self.name("p"), self.name("q"));
        let (u, name) = (u.name, self.name("s"));
        self.line(format!("let mut {v} = Array1::<f64>::zeros(2 * a.len());"));
        self.line("for i in 0..a.len() {");
        self.line(format!(
            "    {v}.slice_mut(ad::ndarray::s![2 * i..2 * i + 2]).assign(&ad::ndarray::array![{u}[i] * {e1}, ({u}[i] + {e2}).sin()]);"
        ));
        self.line("}");
        self.line(format!(
            "let [{p}, {q}] = [{v}.first().copied().unwrap(), *{v}.last().unwrap()];"
        ));
        self.line(format!(
            "let {name} = {p} * {q} + std::iter::zip(&{v}, {w_ref}).map(|(x, y)| x * y).sum::<f64>();"
        ));
        self.scalars.push(Var { name, active: true });
    }

    /// An active scalar that both branches overwrite with constants, then
    /// made active again.
    fn overwritten_by_constants(&mut self) {
        let target = self.mutable_scalar();
        let e = self.scalar(1);
        self.line("if k % 2 == 0 {");
        self.line(format!("    {target} = 0.5;"));
        self.line("} else {");
        self.line(format!("    {target} = k as f64 * 0.25;"));
        self.line("}");
        self.line(format!("{target} += {e};"));
    }

    /// A stack of arrays: pushed in a loop, its top two reduced by pops in a
    /// branch, drained by `while let`; then elements written in place, by
    /// `iter_mut()` and `Zip::for_each`.
    fn stack_and_in_place(&mut self) {
        let ((u, _), (_, w_ref)) = (self.array(), self.array());
        let (u, e) = (u.name, self.scalar(1));
        // A closure reads a scalar variable (an expression could read an
        // array, which `mapv` closures do not capture).
        let i = self.source.pick(self.scalars.len());
        let c = self.scalars[i].name.clone();
        let (stack, p, q, top, name) = (
            self.name("stack"),
            self.name("p"),
            self.name("q"),
            self.name("top"),
            self.name("s"),
        );
        self.line(format!("let mut {stack}: Vec<Array1<f64>> = Vec::new();"));
        self.line("for i in 0..a.len() {");
        self.line(format!(
            "    {stack}.push({u}.mapv(|t| (t * {c} + i as f64 * 0.1).sin()));"
        ));
        self.line("    if i % 2 == 1 && k % 2 == 0 {");
        self.line(format!("        let {p} = {stack}.pop().unwrap();"));
        self.line(format!("        let {q} = {stack}.pop().expect(\"two\");"));
        self.line(format!(
            "        {stack}.push((&{p} * 0.5 + &{q}).mapv(f64::tanh));"
        ));
        self.line("    }");
        self.line("}");
        self.line(format!("let mut {top} = ({w_ref}).to_owned();"));
        self.line(format!("while let Some({p}) = {stack}.pop() {{"));
        self.line(format!(
            "    {top} = (&{top} * 0.5 + &{p}).mapv(f64::tanh);"
        ));
        self.line("}");
        self.line(format!("for {q} in {top}.iter_mut() {{"));
        self.line(format!("    *{q} = ({q}.sin() + {e}) * 0.5;"));
        self.line("}");
        self.line(format!(
            "ad::ndarray::Zip::from(&mut {top}).and({w_ref}).for_each(|{p}, &{q}| *{p} += {q} * {p}.cos());"
        ));
        self.line(format!("let {name} = {top}.sum();"));
        self.scalars.push(Var { name, active: true });
    }

    /// An `Option` local across a loop: the previous item or one kept by a
    /// condition, emptied now and then, read by `if let`, `match`,
    /// `unwrap_or` and `map(..).unwrap_or(..)` inside and after the loop.
    fn optional_previous(&mut self) {
        let acc = self.mutable_scalar();
        let (v, _) = self.array();
        let v = v.name;
        let e = self.scalar(1);
        let (o, p, name) = (self.name("prev"), self.name("p"), self.name("s"));
        match self.pick(3) {
            0 => self.line(format!("let mut {o}: Option<f64> = None;")),
            1 => self.line(format!("let mut {o} = Some::<f64>({e});")),
            _ => self.line(format!(
                "let mut {o}: Option<f64> = if k % 2 == 0 {{ Some({e} * 0.5) }} else {{ None }};"
            )),
        }
        self.line("for j in 0..a.len() {");
        match self.pick(4) {
            0 => self.line(format!(
                "    if let Some({p}) = {o} {{ {acc} = {acc} * 0.6 + {p} * {v}[j]; }}"
            )),
            1 => self.line(format!(
                "    {acc} += match {o} {{ Some({p}) => ({p} * {e}).sin(), None => {v}[j] }};"
            )),
            2 => self.line(format!(
                "    {acc} = {acc} * 0.5 + {o}.unwrap_or({e}) * {v}[j];"
            )),
            _ => self.line(format!(
                "    {acc} += {o}.map(|{p}| ({p} * {e}).tanh()).unwrap_or({v}[j] * 0.5);"
            )),
        }
        match self.pick(3) {
            0 => self.line(format!("    {o} = Some({v}[j] * {e});")),
            1 => self.line(format!(
                "    {o} = if {v}[j] > 0.437 {{ Some({v}[j].tanh()) }} else {{ None }};"
            )),
            _ => self.line(format!(
                "    if j % 2 == 1 {{ {o} = None; }} else {{ {o} = Some({v}[j] + {e}); }}"
            )),
        }
        self.line("}");
        self.line(format!(
            "let {name} = if {o}.is_some() {{ {o}.unwrap() * {e} }} else {{ 0.25 }};"
        ));
        self.scalars.push(Var { name, active: true });
    }

    fn statement(&mut self) {
        match self.pick(35) {
            34 => self.optional_previous(),
            33 => self.stack_and_in_place(),
            32 => self.overwritten_by_constants(),
            31 => self.assembled(),
            30 => self.fixed_array(),
            29 => self.labelled_block(),
            28 => self.while_let_walk(),
            27 => self.pair_call(),
            26 => self.chain_for_loop(),
            25 => self.converging_loop(),
            24 => self.nested_item_loops(),
            23 => self.late_init(),
            22 => self.exits_in_let_arms(),
            21 => self.loop_value(),
            20 => self.vec_local(),
            19 => self.array_loop(),
            18 => self.constructed(),
            17 => self.iterator_chain(),
            16 => self.labelled_exit(),
            13 => self.shadow_in_scope(),
            14 => self.block_value(),
            15 => self.guarded_match(),
            0 | 1 => self.let_scalar(),
            2 => self.let_array(),
            3 => self.reassign(),
            4 => self.branch(),
            5 | 6 => self.for_loop(),
            7 => self.sum_loop(),
            8 => self.while_loop(),
            9 => self.element_writes(),
            10 => self.match_on_constant(),
            11 => self.overwrite_a_copy(),
            _ => self.early_return(),
        }
    }

    /// The body: statements, then a result that reads the last values.
    fn body(mut self) -> String {
        let statements = 2 + self.pick(6);
        for _ in 0..statements {
            self.statement();
        }
        let mut result = self.scalar(2);
        if let Some(s) = self.mutable.last().cloned() {
            result = format!("{result} + {s}");
        }
        if let Some((v, _)) = self.arrays.last().cloned() {
            if v.active {
                result = format!("{result} + {}.sum() * 0.3", v.name);
            }
        }
        self.line(result);
        self.lines.join("\n")
    }
}

/// `z.f()`, or `f64::f(z)` where `z` is made of literals only (a method
/// call on an unsuffixed literal does not compile in Rust).
fn method(z: &str, f: &str) -> String {
    if z.chars().any(|c| c.is_ascii_alphabetic()) {
        format!("{z}.{f}()")
    } else {
        format!("f64::{f}({z})")
    }
}

/// The module of `count` programs from `seed`, for a test crate that
/// declares `harness` (with `#[macro_use]`) before it.
pub fn file(seed: u64, count: usize) -> String {
    let mut out = format!(
        "//! Generated by `tests/generator` (seed {seed}, {count} programs): random\n\
         //! `#[differentiable]` functions, each checked against finite differences\n\
         //! and forward against reverse mode. Do not edit; see `tests/generator_sync.rs`.\n\n\
         #![allow(unused, unused_parens)]\n\
         #![allow(clippy::all)]\n\n\
         use crate::harness::{{helper_array, helper_array_grad, helper_array_jvp, helper_array_vjp}};\n\
         use crate::harness::{{helper_scalar, helper_scalar_grad, helper_scalar_jvp, helper_scalar_vjp}};\n\
         use crate::harness::{{helper_pair, helper_pair_jvp, helper_pair_vjp}};\n\
         use crate::harness::{{helper_recursive, helper_recursive_jvp, helper_recursive_vjp}};\n\
         use crate::harness::{{helper_halving, helper_halving_jvp, helper_halving_vjp}};\n"
    );
    for p in 0..count {
        let program = Program::new(seed.wrapping_mul(1_000_003).wrapping_add(p as u64 + 1));
        let body = program.body();
        let _ = write!(
            out,
            "\nmod p{p} {{\n    use super::*;\n    use ad::differentiable;\n    use ad::ndarray::{{Array1, Array2}};\n\n    \
             #[differentiable]\n    \
             pub fn f(x: f64, y: f64, a: &Array1<f64>, b: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {{\n\
             {body}\n    }}\n\n    \
             #[test]\n    fn gradients() {{\n        check_program!();\n    }}\n}}\n"
        );
    }
    out
}
