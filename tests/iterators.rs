//! Iterator chains over active values (`x.iter().map(..).sum()`, `zip`,
//! `enumerate`, `filter`, `take_while`, `skip_while`, `skip`, `take`, `step_by`, `rev`, `chain`, windows and
//! chunks, `fold`, `reduce`, `max_by`, `product`, `collect`, a range's `map`) and `for` loops
//! over `zip`s, each against finite differences and forward mode.
//! The macro rewrites them as the loops they stand for
//! (`ad-macros/src/compiler/lower/iterators.rs`).

#![allow(clippy::ptr_arg)] // `&Vec<f64>` is one of the parameter forms under test

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::random;

/// A sum over an array's elements, of any dimension (`mapv` underneath),
/// with the closure's parameter as a reference (`*v`) or by pattern (`&v`).
mod map_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let squares: f64 = x.iter().map(|v| *v * v).sum();
        let sines = m.iter().map(|&v| v.sin()).sum::<f64>();
        squares * sines + m.iter().sum::<f64>()
    }
}

/// `zip` of a slice, a `Vec` and an array, by `iter()`, by reference and by
/// value, with reference patterns, `copied`, and `enumerate`.
mod zipped {
    use super::*;
    #[differentiable]
    pub fn f(a: &[f64], b: &Vec<f64>, c: &Array1<f64>) -> f64 {
        let dot: f64 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
        let cubes: f64 = a.iter().zip(b).map(|(&x, &y)| x * y * y).sum();
        let three: f64 = a
            .iter()
            .copied()
            .zip(c.iter())
            .enumerate()
            .map(|(i, (x, y))| (i as f64 + 1.0) * x * y.exp())
            .sum();
        dot + cubes.tanh() + three
    }
}

/// `std::iter::zip(a, b)`, which is `a.into_iter().zip(b)`: in a chain,
/// in a `for` loop, and imported as a bare `zip`.
mod zip_calls {
    use super::*;
    use std::iter::zip;
    #[differentiable]
    pub fn f(a: &[f64], c: &Array1<f64>) -> f64 {
        let dot: f64 = std::iter::zip(a, c).map(|(x, y)| x * y).sum();
        let mut cubes = 0.0;
        for (x, &y) in zip(a.iter(), c) {
            cubes += x * y * y;
        }
        dot + cubes.tanh()
            + core::iter::zip(c, a)
                .map(|(y, x)| (x - y).powi(2))
                .sum::<f64>()
    }
}

/// `fold` with a closure and with a path, `product`, and ndarray's own
/// `fold` on an array.
mod folds {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], y: &Array1<f64>) -> f64 {
        let product: f64 = x.iter().product();
        let running = x.iter().fold(1.0, |acc, v| acc * 0.5 + v * v);
        let largest = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps = y.fold(0.0, |m, &v| m + v.exp());
        product + running + largest * exps
    }
}

/// `filter` (inactive conditions on active items, `**v`, and `*v` against
/// a reference), two `map`s, a path in `map`, and a chain nested in
/// another's closure.
mod filtered_and_nested {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], y: &Array1<f64>) -> f64 {
        let logs: f64 = x.iter().filter(|v| **v > 0.0).map(|v| v.ln()).sum();
        let small: f64 = x.iter().filter(|v| *v < &0.5).map(|v| v * v).sum();
        #[allow(clippy::op_ref)] // the borrowed comparison is the form under test
        let bounded: f64 = y.iter().filter(|&&v| &v <= &0.5).sum();
        let twice: f64 = x.iter().map(|v| v * 2.0).map(f64::exp).sum();
        let pairs: f64 = x
            .iter()
            .map(|a| y.iter().map(|b| (a - b).powi(2)).sum::<f64>())
            .sum();
        logs + twice * 0.01 + pairs + small + bounded
    }
}

/// A range's `map`, whose iterator is inactive, over active and constant
/// slices; a chain over a local array.
mod range_and_local {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], w: &Array2<f64>, #[constant] c: &[f64]) -> f64 {
        let weighted = (0..x.len()).map(|i| x[i] * c[i]).sum::<f64>();
        let h = w.dot(&Array1::from(ad::stop_gradient(c.to_vec())));
        let hidden: f64 = h.iter().map(|v| v.tanh()).sum();
        let paired = h.iter().zip(x).map(|(p, q)| p * q).sum::<f64>();
        weighted.tanh() + hidden + paired
    }
}

/// Inactive sources: a local's items are read by index into copies (the
/// pullback cannot borrow the local), also zipped with an active source in
/// a `for` loop; a `#[constant]` parameter's as written, also where it has
/// two axes.
mod inactive_sources {
    use super::*;
    #[differentiable]
    pub fn f(
        x: f64,
        a: &Array1<f64>,
        #[constant] c: &Array1<f64>,
        #[constant] m: &Array2<f64>,
    ) -> f64 {
        let squashed = (c * c).mapv(f64::tanh);
        let kept = squashed
            .iter()
            .filter(|v| **v > 0.1)
            .map(|v| v * a.mean().unwrap())
            .sum::<f64>();
        let scaled: f64 = m.iter().map(|v| v * x).sum();
        let folded = squashed.iter().fold(x, |acc, &v| (acc * v).sin());
        let mut zipped = 0.0;
        for (p, &q) in squashed.iter().zip(a) {
            if *p > 0.1 {
                zipped = (zipped * 0.7 + p * q).tanh();
            }
        }
        kept + scaled + folded + zipped
    }
}

/// A matrix's rows and columns: `rows()`, `outer_iter()`, `columns()`, in
/// `for` loops and chains, of active and constant matrices and of a local
/// one, zipped with a vector.
mod rows_and_columns {
    use super::*;
    #[differentiable]
    pub fn f(
        w: &Array1<f64>,
        m: &Array2<f64>,
        #[constant] xs: &Array2<f64>,
        #[constant] ys: &Array1<f64>,
    ) -> f64 {
        let mut loss = 0.0;
        for (row, &y) in xs.rows().into_iter().zip(ys) {
            loss += (1.0 + (-y * row.dot(w)).exp()).ln();
        }
        for r in m.outer_iter() {
            loss += r.dot(w).tanh();
        }
        let local = xs * 2.0;
        let columns: f64 = local.columns().into_iter().map(|c| c.sum() * w[0]).sum();
        let squares = m.rows().into_iter().map(|r| r.sum().powi(2)).sum::<f64>();
        loss + columns + squares
    }
}

/// `for` loops over zipped and enumerated sources, and over an array.
mod for_loops {
    use super::*;
    #[differentiable]
    pub fn f(a: &[f64], b: &Array1<f64>) -> f64 {
        let mut s = 0.0;
        for (x, y) in a.iter().zip(b.iter()) {
            s += x * y.exp();
        }
        for v in b.iter() {
            if *v > 0.0 {
                s += v * v;
            }
        }
        for (i, &v) in b.iter().enumerate() {
            s += v * (i as f64);
        }
        s
    }
}

/// `for` loops over chains with `map` and `filter` stages: each stage's
/// closure binds its parameter in a scope of its own (here `v` and `t`
/// shadow the body's names, which the loop body reads), and a filter
/// guards the body but not the check a `break` leaves.
mod for_loops_over_stages {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &[f64]) -> f64 {
        let v = 2.0;
        let t = x[0];
        let mut s = 0.0;
        for a in x.iter().map(|v| v.exp()) {
            s += a * v + t;
        }
        for (a, b) in x
            .iter()
            .zip(w)
            .filter(|t| *t.1 > 0.0)
            .map(|(p, v)| (p * v, v.sin()))
        {
            s += a * b * t * v;
            if s > 40.0 {
                break;
            }
        }
        for a in w.iter().filter(|t| **t < 0.5).copied() {
            s = s * 0.5 + a * v;
        }
        s
    }
}

/// Chains over matrices, parameters and locals whose number of axes the
/// macro does not see (made by `dot`), read element by element in
/// logical order.
mod over_local_matrices {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>, w: &Array2<f64>) -> f64 {
        let logits = x.dot(w);
        let mx = logits.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let s = logits
            .iter()
            .map(|v| (v - mx).exp())
            .fold(0.0, |a, b| a + b);
        let h = logits.mapv(f64::tanh);
        let weighted = h.iter().enumerate().map(|(i, v)| v * i as f64).sum::<f64>();
        // A matrix parameter's elements, zipped with another's.
        let direct = x.iter().zip(w.iter()).map(|(a, b)| a * b).sum::<f64>();
        // A filter over an `enumerate`, its closure destructuring the pair.
        let evens = x
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, v)| v * v)
            .sum::<f64>();
        s.ln() + mx + weighted + direct + evens
    }
}

/// A sum over a `Vec` of arrays: each item is a place, read by reference.
mod over_arrays {
    use super::*;
    #[differentiable]
    pub fn f(vs: &[Array1<f64>], w: &Array1<f64>) -> f64 {
        vs.iter().map(|v| v.dot(w).tanh()).sum::<f64>()
            + vs.iter()
                .enumerate()
                .map(|(i, v)| v[i % v.len()])
                .product::<f64>()
    }
}

/// A bag of instances of different lengths, as `Vec`s of floats (the
/// shape structured data arrives in): each item reads as a 1-D array in
/// chains (`inst.iter().zip(w.iter())`, `y.iter().sum()`), loops
/// (`for &v in inst.iter()`, `for j in 0..inst.len()`), indexing
/// (`inst[j]`, `xs[0][0]`, `inst.last()`), `Array1::from(inst.clone())`
/// and folds over the bag. The gradient is a
/// `Vec<Vec<f64>>` of the bag's own ragged shape.
#[allow(clippy::needless_range_loop)] // the index loop is a form under test
mod over_vecs {
    use super::*;
    #[differentiable]
    pub fn f(xs: &[Vec<f64>], w: &Array1<f64>, ys: &Vec<Vec<f64>>) -> f64 {
        let mut s = 0.0;
        for (k, inst) in xs.iter().enumerate() {
            let z: f64 = inst.iter().zip(w.iter()).map(|(a, b)| a * b).sum();
            s += z.tanh() * (k as f64 + 1.0);
            for &v in inst.iter() {
                s += v * v * 0.1;
            }
            for j in 0..inst.len() {
                s += inst[j] * xs[0][0];
            }
            let mean = inst.iter().map(|v| v.sin()).sum::<f64>() / inst.len() as f64;
            let a = Array1::from(inst.clone());
            s += mean + a.dot(&a) * *inst.last().unwrap();
        }
        let m = ys
            .iter()
            .map(|y| y.iter().sum::<f64>())
            .fold(f64::NEG_INFINITY, f64::max);
        let flat: f64 = ys.iter().flatten().map(|v| v * v).sum();
        s + m + ys[0][1] * w[0] + flat
    }
}

/// `flat_map` (and `flatten`) over the items of a slice of arrays and a
/// matrix's rows, with stages before and after it, ending in `sum`,
/// `product` and `fold` (a loop over the outer items that adds each
/// item's inner chain), and `for` loops over them (two loops, one in the
/// other).
mod flat_mapped {
    use super::*;
    #[differentiable]
    pub fn f(xs: &[Array1<f64>], m: &Array2<f64>, w: &Array1<f64>) -> f64 {
        let total: f64 = xs.iter().flat_map(|x| x.iter()).map(|v| v * v).sum();
        let weighted = xs
            .iter()
            .enumerate()
            .flat_map(|(k, x)| x.iter().map(move |v| v * (k as f64 + 1.0)))
            .sum::<f64>();
        let rows = m
            .outer_iter()
            .flat_map(|r| r.into_iter().zip(w.iter()).map(|(a, b)| a * b))
            .fold(0.0, |acc, p| acc + p.tanh());
        let product: f64 = xs
            .iter()
            .take(2)
            .flat_map(|x| x.iter().take(2))
            .map(|v| 1.0 + 0.1 * v)
            .product();
        let flat: f64 = xs.iter().flatten().map(|v| v.sin()).sum();
        let mut looped = 0.0;
        for v in xs.iter().flat_map(|x| x.iter().map(|v| v * 2.0)) {
            if v < 0.0 {
                continue;
            }
            looped += v.tanh();
        }
        for v in xs.iter().flatten() {
            looped += v * v * v;
        }
        total + weighted + rows + product + flat + looped
    }
}

/// `position`, `rposition`, `any` and `all` over active values give
/// indices and booleans, which carry no derivative: an argmax read back
/// by index, and tests that choose a branch.
mod positions_and_tests {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], w: &Array1<f64>) -> f64 {
        let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let i = x.iter().position(|&v| v == m).unwrap();
        let k = x.iter().rposition(|&v| v < m).unwrap_or(0);
        let scale = if x.iter().any(|v| *v > 0.5) && w.iter().all(|v| v.abs() < 1.0) {
            2.0
        } else {
            0.5
        };
        m * x[i] * scale + x[k] * w[k % w.len()]
    }
}

/// A flat parameter vector split into parts (`&theta[..k]`,
/// `theta.split_at(k)`) and a bag's item sub-sliced: each part reads as a
/// 1-D view of the slice, whose cotangent adds into that part of the
/// slice's gradient.
mod sub_slices {
    use super::*;
    #[differentiable]
    pub fn f(theta: &[f64], x: &Array1<f64>, xs: &[Vec<f64>]) -> f64 {
        let k = x.len();
        let w = &theta[..k];
        let (_, rest) = theta.split_at(k);
        let scale = &theta[k + 1..];
        let mut s = rest[0];
        for i in 0..k {
            s += w[i] * x[i];
        }
        let mut tails = 0.0;
        for inst in xs {
            let tail = &inst[1..];
            tails += tail.iter().map(|v| v * v).sum::<f64>() * inst[0];
        }
        s.tanh() * scale[scale.len() - 1] + w.iter().sum::<f64>() * tails
    }
}

/// Generic precision: the sum's zero is the signature's float type.
mod generic {
    use super::*;
    #[differentiable]
    pub fn f<F: ad::Float>(x: &[F], y: &Array1<F>) -> F {
        x.iter().zip(y).map(|(a, b)| *a * *b).sum::<F>() + x.iter().copied().sum()
    }
}

/// Adaptors that choose positions: `skip`, `take`, `step_by` and `rev`,
/// composed with each other, with `enumerate` and `zip`, with counts
/// computed from a constant, in chains and a `for` loop; a sub-slice's
/// elements (`y[1..].iter()`).
mod positions {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &[f64], #[constant] k: usize) -> f64 {
        let inner = x.iter().skip(1).take(k + 1).map(|v| v * v).sum::<f64>();
        let weighted: f64 = y
            .iter()
            .rev()
            .enumerate()
            .map(|(i, v)| v * (i as f64 + 1.0))
            .sum();
        let strided: f64 = y
            .iter()
            .skip(k - 1)
            .step_by(k + 1)
            .rev()
            .map(|v| v.sin())
            .product();
        let mut crossed = 0.0;
        for (a, b) in x.iter().zip(y.iter().rev()).skip(1).step_by(2) {
            crossed = crossed * 0.5 + a * b.exp();
        }
        let ranged = y[1..].iter().zip(&y[..k]).map(|(a, b)| a * b).sum::<f64>();
        inner + weighted * strided + crossed + ranged
    }
}

/// A 1-D array's `windows` and chunks (`exact_chunks`,
/// `axis_chunks_iter(Axis(0), n)`), each item a view, or read from the
/// array where the body only indexes it; a matrix's `axis_iter`.
mod views {
    use super::*;
    use ad::ndarray::Axis;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let mut curvature = 0.0;
        for (i, w) in x.windows(3).into_iter().enumerate() {
            curvature += (w[2] - 2.0 * w[1] + w[0]).powi(2) * (i + w.len()) as f64;
        }
        let pairs = x
            .exact_chunks(2)
            .into_iter()
            .map(|c| c.sum().tanh())
            .sum::<f64>();
        let chunks = x
            .axis_chunks_iter(Axis(0), 2)
            .rev()
            .map(|c| c.product())
            .sum::<f64>();
        let rows = m.axis_iter(Axis(0)).map(|r| r.sum().powi(2)).sum::<f64>();
        let columns = m
            .axis_iter(Axis(1))
            .map(|c| c[0] * c[c.len() - 1])
            .sum::<f64>();
        curvature + pairs + chunks + rows + columns
    }
}

/// `collect()` into a 1-D array, from active sources and from a range;
/// a chain over indices kept by an inactive `filter`; over a computed
/// value; ndarray's `product()`; a `fold` from an unsuffixed literal;
/// `cloned()` after a `filter`.
mod collected {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &[f64], m: &Array2<f64>) -> f64 {
        let y: Array1<f64> = x.iter().zip(w).map(|(a, b)| (a * b).exp()).collect();
        let z = (0..x.len())
            .map(|i| x[i] * i as f64)
            .collect::<Array1<f64>>();
        let keep: Vec<usize> = (0..x.len()).filter(|i| i % 2 == 0).collect();
        let kept: Array1<f64> = keep.iter().map(|&i| x[i].sin()).collect();
        let reversed = x.iter().rev().cloned().collect::<Array1<f64>>();
        let norms: Array1<f64> = m.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
        let computed = (x * 2.0).iter().map(|v| v.tanh()).sum::<f64>();
        let started = x.iter().fold(0.5, |acc, v| (acc * 0.8 + v).tanh());
        let scaled = w[0] * started;
        let positive = x
            .iter()
            .filter(|v| **v > 0.0)
            .cloned()
            .map(f64::exp)
            .sum::<f64>();
        y.dot(&z) + kept.sum() + reversed.dot(x) + norms.product() + computed + scaled + positive
    }
}

/// `reduce(f).unwrap()` and `.expect(..)`: a path and closures, after
/// `zip` and `map`, after a `filter`, over a range.
mod reductions {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &[f64]) -> f64 {
        let smallest = x
            .iter()
            .zip(w)
            .map(|(a, b)| a * b)
            .reduce(|p, q| p.min(q))
            .expect("one item at least");
        let largest = x.iter().cloned().reduce(f64::max).unwrap();
        let kept = w
            .iter()
            .filter(|v| v.abs() < 2.0)
            .copied()
            .reduce(|p, q| p * q + 0.1)
            .unwrap();
        let over = (0..x.len())
            .map(|i| x[i] - w[i])
            .reduce(|p, q| p + q * 0.5)
            .unwrap();
        largest + smallest * kept + over
    }
}

/// `max_by` and `min_by` with a comparator, which may read active values
/// (`a`): reductions that keep one of the two items.
mod extremes {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, a: f64) -> f64 {
        let hi = x
            .iter()
            .copied()
            .max_by(|p, q| p.partial_cmp(q).unwrap())
            .unwrap();
        let lo = x
            .iter()
            .map(|v| v * a)
            .min_by(|p, q| p.total_cmp(q))
            .expect("one item at least");
        let nearest = x
            .iter()
            .copied()
            .min_by(|p, q| (p - a).abs().total_cmp(&(q - a).abs()))
            .unwrap();
        hi * lo + nearest * a
    }
}

/// `last()`, `next()` and `nth(k)` of chains, and reductions taken out
/// with `unwrap_or(d)`: the default where no item is left (a `filter`
/// keeps none, `nth` runs past the end), the item where one is. A
/// `filter` after a `map` dereferences the mapped value (`*v > cut`), or
/// names its parameter as the `map`'s, which the mapped value reads.
mod chosen_items {
    use super::*;
    #[differentiable]
    #[allow(clippy::double_ended_iterator_last)]
    pub fn f(x: &Array1<f64>, a: f64, #[constant] cut: f64) -> f64 {
        let last = x.iter().last().copied().unwrap_or(0.0);
        let first = *x.iter().next().unwrap();
        let found = x.iter().map(|v| v * a).find(|v| *v < cut).unwrap_or(1.0);
        let back = x.iter().copied().rfind(|v| v.abs() > cut).unwrap_or(a);
        let tail = x.iter().map(|v| v.cos()).next_back().unwrap();
        let second = x.iter().copied().nth(1).unwrap_or(a);
        let kept = x
            .iter()
            .map(|v| v * a)
            .filter(|v| *v > cut)
            .last()
            .unwrap_or(a);
        let largest = x.iter().copied().reduce(f64::max).unwrap_or(0.0);
        let big = x
            .iter()
            .filter(|v| v.abs() > cut)
            .copied()
            .reduce(|p, q| p + q)
            .unwrap_or(a * 2.0);
        let head = x.iter().map(|v| v.sin()).next().expect("one item at least");
        let top = x
            .iter()
            .max_by(|p, q| p.total_cmp(q))
            .copied()
            .unwrap_or(1.0);
        // The filter's parameter shadows the map's, which the item reads.
        let shadowed = x
            .iter()
            .map(|v| v * a)
            .filter(|v| v.abs() > cut)
            .sum::<f64>();
        let prefix = x
            .iter()
            .map(|v| v + a)
            .take_while(|v| *v < cut + 1.0)
            .sum::<f64>();
        last * first + second * kept + largest * big + head + top * a + shadowed * prefix
            - found * back * tail
    }
}

/// Positional adaptors after a `map` (`enumerate`, `skip`, `step_by`,
/// `rev`, `zip`, also of a mapped chain), in chains and in a `for` loop:
/// the `map` moves out past them, to where the source is read by index.
mod maps_before_positions {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, a: f64) -> f64 {
        let weighted = x
            .iter()
            .map(|v| v * a)
            .enumerate()
            .map(|(i, v)| v * (i as f64 + 1.0))
            .sum::<f64>();
        let tail = x
            .iter()
            .map(|v| v * a)
            .skip(1)
            .filter(|v| v.abs() > 0.1)
            .sum::<f64>();
        let paired = x
            .iter()
            .map(|v| v * a)
            .rev()
            .skip(1)
            .step_by(2)
            .zip(x.iter().map(|w| w.sin()))
            .map(|(p, q)| p * q)
            .sum::<f64>();
        let mut s = 0.0;
        for (i, v) in x.iter().copied().map(f64::cos).enumerate().rev() {
            s = s * 0.5 + v * a * i as f64;
        }
        weighted + tail * paired + s
    }
}

/// `windows`, `chunks` and `chunks_exact` of a slice parameter (each
/// item a sub-slice, indexed, iterated and reduced, in chains and a `for`
/// loop), and `windows` of a `Vec` local.
mod slice_windows {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], a: f64) -> f64 {
        let steps = x.windows(2).map(|w| (w[1] - w[0] * a).powi(2)).sum::<f64>();
        let ends = x.chunks(2).map(|c| c[0] * c[c.len() - 1]).sum::<f64>();
        let pairs = x
            .chunks_exact(2)
            .map(|c| c.iter().sum::<f64>().sin())
            .sum::<f64>();
        let mut h = 0.0;
        for w in x.windows(3) {
            h = (h * a + w[0] * w[2] - w[1]).tanh();
        }
        let ys: Vec<f64> = x.iter().map(|v| v * a).collect();
        let local = ys.windows(2).map(|w| w[1] * w[0]).sum::<f64>();
        steps + ends * pairs + h + local
    }
}

/// `chain`: of two active arrays, of an active array and a constant one
/// (a parameter, and a local; either first), of two `Vec`s the body fills, in chains
/// and in `for` loops, under `rev`, `enumerate`, `zip` and `copied`.
mod chained {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &[f64], #[constant] c: &Array1<f64>) -> f64 {
        let squares: f64 = x.iter().chain(y.iter()).map(|v| v * v).sum();
        let mut h = 0.0;
        for (i, &v) in x.iter().chain(c.iter()).rev().enumerate() {
            h = (h + v * (i as f64 + 1.0)).sin();
        }
        let table = c.mapv(|v| v * 2.0);
        let mut g = 0.0;
        for v in y.iter().chain(table.iter()) {
            g = (g * v).tanh() + v;
        }
        let mut hs: Vec<f64> = Vec::new();
        let mut gs: Vec<f64> = Vec::new();
        for v in x.iter() {
            hs.push(v.sin());
            gs.push(v.cos());
        }
        let rotated: f64 = hs
            .iter()
            .chain(gs.iter())
            .copied()
            .zip(y.iter().skip(1).chain(y.iter().take(1)))
            .map(|(a, b)| a * b)
            .sum();
        let flipped: f64 = c
            .iter()
            .chain(x.iter())
            .rev()
            .enumerate()
            .map(|(k, v)| v * (k as f64 + 0.5))
            .sum();
        squares + h + g + rotated + flipped
    }
}

/// `take_while`: in a chain (before and after a `map`, with a `filter`),
/// in a `for` loop, and in a `for` loop whose body also `break`s; and
/// `skip_while`, in a chain and in a `for` loop.
mod taken_while {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] limit: f64) -> f64 {
        let prefix: f64 = x.iter().take_while(|v| **v < limit).map(|v| v * v).sum();
        let mapped: f64 = x
            .iter()
            .map(|v| v.sin())
            .take_while(|s| *s > -0.9)
            .filter(|s| *s < 0.5)
            .fold(1.0, |acc, s| acc * 0.5 + s);
        let mut h = 0.0;
        for (i, v) in x.iter().enumerate().take_while(|(_, v)| v.abs() < 1.5) {
            h = (h + v * (i as f64 + 1.0)).tanh();
        }
        let mut g = 0.0;
        for v in x.iter().rev().take_while(|v| **v > -limit) {
            if g > 1.0 {
                break;
            }
            g += v.exp();
        }
        let tail: f64 = x.iter().skip_while(|v| **v < limit).map(|v| v.sin()).sum();
        let mut t = 0.0;
        for (i, v) in x.iter().enumerate().skip_while(|(_, v)| **v > -limit) {
            t = (t * 0.5 + v * i as f64).tanh();
        }
        prefix + mapped + h + g + tail + t
    }
}

fn vector(n: usize, seed: u64) -> Vec<f64> {
    random(n, seed).to_vec()
}

#[test]
fn sums_over_elements() {
    for n in [0, 1, 5] {
        check_scalar!(map_sum; ref x dx = random(n, 3), ref m dm = random((3, 2), 4););
    }
}

#[test]
fn zipped_and_enumerated_sources() {
    for n in [0, 1, 6] {
        check_scalar!(zipped; ref a da = vector(n, 5), ref b db = vector(n, 6), ref c dc = random(n, 7););
    }
}

#[test]
fn zip_called_as_a_function() {
    for n in [0, 1, 6] {
        check_scalar!(zip_calls; ref a da = vector(n, 8), ref c dc = random(n, 9););
    }
}

#[test]
fn chains_of_two_sources() {
    for n in [0, 1, 5] {
        let c = random(n + 2, 12);
        check_scalar!(chained; ref x dx = random(n, 10), ref y dy = vector(2 * n + 1, 11); &c);
    }
}

#[test]
fn chains_taken_while_a_condition_holds() {
    for n in [0, 1, 7] {
        for limit in [0.5, 1.2, 9.0] {
            check_scalar!(taken_while; ref x dx = random(n, 13) * 2.0; limit);
        }
    }
}

#[test]
fn folds_and_products() {
    for n in [1, 4] {
        check_scalar!(folds; ref x dx = vector(n, 8), ref y dy = random(n, 9););
    }
}

#[test]
fn filters_paths_and_nested_chains() {
    // Keep the positive items away from 0, where `ln` is steep.
    let x: Vec<f64> = vector(7, 10).iter().map(|v| v + v.signum() * 0.5).collect();
    check_scalar!(filtered_and_nested; ref x dx = x.clone(), ref y dy = random(3, 11););
}

#[test]
fn ranges_and_local_arrays() {
    let c = vector(4, 12);
    check_scalar!(range_and_local; ref x dx = vector(4, 13), ref w dw = random((4, 4), 14); &c);
}

#[test]
fn inactive_sources() {
    let (c, m) = (random(5, 30) * 2.0, random((2, 3), 31));
    check_scalar!(inactive_sources; val x dx = 0.7, ref a da = random(4, 32); &c, &m);
}

#[test]
fn rows_and_columns() {
    for n in [1, 3] {
        let (xs, ys) = (random((n, 2), 33), random(n, 34));
        check_scalar!(rows_and_columns; ref w dw = random(2, 35), ref m dm = random((n, 2), 36); &xs, &ys);
    }
}

#[test]
fn chains_over_local_matrices() {
    for (n, m) in [(1, 1), (3, 2)] {
        check_scalar!(over_local_matrices; ref x dx = random((n, 2), 52), ref w dw = random((2, m), 53););
    }
}

#[test]
fn for_loops_over_maps_and_filters() {
    for n in [1, 3, 6] {
        check_scalar!(for_loops_over_stages; ref x dx = random(n, 50), ref w dw = vector(n, 51););
    }
}

#[test]
fn for_loops_over_zips() {
    for n in [0, 3] {
        check_scalar!(for_loops; ref a da = vector(n, 15), ref b db = random(n, 16););
    }
}

#[test]
fn items_that_are_arrays() {
    let vs: Vec<Array1<f64>> = (0..3).map(|k| random(4, 20 + k) + 1.5).collect();
    check_scalar!(over_arrays; ref vs dvs = vs.clone(), ref w dw = random(4, 17););
}

#[test]
fn positions_and_tests_are_inactive() {
    for (n, seed) in [(1, 68), (5, 69), (5, 70)] {
        check_scalar!(positions_and_tests; ref x dx = random(n, seed).to_vec(), ref w dw = random(3, 71););
    }
}

#[test]
fn sub_slices_of_slices() {
    for n in [1, 4] {
        let theta = random(n + 3, 72).to_vec();
        let xs: Vec<Vec<f64>> = (0..3)
            .map(|k| random(2 + k, 73 + k as u64).to_vec())
            .collect();
        check_scalar!(sub_slices; ref theta dtheta = theta.clone(), ref x dx = random(n, 76), ref xs dxs = xs.clone(););
    }
}

#[test]
fn flat_mapped_chains() {
    for (count, n) in [(1, 1), (3, 4)] {
        let xs: Vec<Array1<f64>> = (0..count).map(|k| random(n, 63 + k as u64)).collect();
        check_scalar!(flat_mapped; ref xs dxs = xs.clone(), ref m dm = random((2, n), 66), ref w dw = random(n, 67););
    }
}

#[test]
fn sums_over_a_bag_of_vecs() {
    // Instances of 2 to 5 features, fewer than `w` has (`zip` stops at
    // the shorter) and as many; every size served by one compiled gradient.
    for (count, seed) in [(1, 60), (4, 61)] {
        let bag = |seed: u64| -> Vec<Vec<f64>> {
            (0..count)
                .map(|k| random(2 + (k * 2 + seed as usize) % 4, seed + k as u64).to_vec())
                .collect()
        };
        let (xs, ys) = (bag(seed), bag(seed + 10));
        check_scalar!(over_vecs; ref xs dxs = xs.clone(), ref w dw = random(3, 62), ref ys dys = ys.clone(););
    }
}

#[test]
fn generic_sums() {
    check_scalar!(generic; ref x dx = vector(5, 18), ref y dy = random(5, 19););
    // And at f32, against f64.
    let (x, y) = (vector(5, 18), random(5, 19));
    let (x32, y32): (Vec<f32>, Array1<f32>) =
        (x.iter().map(|&v| v as f32).collect(), y.mapv(|v| v as f32));
    let (_, (g64, _)) = generic::f_grad(&x, &y);
    let (_, (g32, _)) = generic::f_grad(&x32, &y32);
    for (a, b) in g64.iter().zip(&g32) {
        assert!((a - *b as f64).abs() < 1e-5, "{a} vs {b}");
    }
}

#[test]
fn adaptors_that_choose_positions() {
    for (n, k) in [(1, 1), (5, 1), (6, 2), (7, 3)] {
        check_scalar!(positions; ref x dx = random(n, 40), ref y dy = vector(n, 41); k);
    }
}

#[test]
fn windows_chunks_and_axes() {
    for n in [1, 2, 5, 6] {
        check_scalar!(views; ref x dx = random(n, 42), ref m dm = random((n, 3), 43););
    }
}

#[test]
fn collected_arrays() {
    for n in [1, 4] {
        check_scalar!(collected; ref x dx = random(n, 44), ref w dw = vector(n, 45), ref m dm = random((3, n), 46) + 1.5;);
    }
}

#[test]
fn reductions_from_the_first_item() {
    for n in [1, 5] {
        check_scalar!(reductions; ref x dx = random(n, 47), ref w dw = vector(n, 48););
    }
}

#[test]
fn maxima_and_minima_by_a_comparator() {
    for n in [1, 5] {
        check_scalar!(extremes; ref x dx = random(n, 49), val a da = 0.3;);
    }
}

#[test]
fn items_chosen_from_chains_and_defaults() {
    for n in [1, 2, 5] {
        for cut in [0.1, 10.0] {
            check_scalar!(chosen_items; ref x dx = random(n, 50), val a da = 0.7; cut);
        }
    }
}

#[test]
fn maps_moved_past_positional_adaptors() {
    for n in [1, 2, 7] {
        check_scalar!(maps_before_positions; ref x dx = random(n, 51), val a da = 0.7;);
    }
}

#[test]
fn windows_and_chunks_of_slices() {
    for n in [1, 2, 3, 6, 7] {
        check_scalar!(slice_windows; ref x dx = vector(n, 52), val a da = 0.7;);
    }
}

#[test]
#[should_panic(expected = "one item at least")]
fn reducing_nothing_panics_as_unwrap_does() {
    let _ = reductions::f_grad(&Array1::zeros(0), &Vec::new());
}

/// A `fold` from a tuple keeps one accumulator per item: the mean and
/// variance in one pass, three accumulators behind a `filter`, and a pair
/// of a float and an array.
mod tuple_folds {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let n = x.len() as f64;
        let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
        let variance = q / n - (s / n).powi(2);
        let (lo, hi, count) = x
            .iter()
            .filter(|v| v.abs() < 1.5)
            .fold((0.0, 0.0, 0.0), |(lo, hi, c), v| {
                (lo + v.min(0.0), hi + v.max(0.0), c + 1.0)
            });
        let (weight, total) = m
            .rows()
            .into_iter()
            .fold((1.0, Array1::<f64>::zeros(m.ncols())), |(w, t), r| {
                (w * 0.5, t + &r * w)
            });
        variance + lo * hi + count * 0.1 + total.mapv(f64::tanh).sum() * weight
    }
}

#[test]
fn folds_from_tuples() {
    for n in [1, 4, 7] {
        check_scalar!(tuple_folds; ref x dx = random(n, 50), ref m dm = random((3, n), 51););
    }
}

/// `scan`: a running sum collected, an exponential moving average summed,
/// a running product in a `for` loop, a `take_while` after a `scan`
/// (whose closure sees the state by reference), and a state that is an
/// array.
mod scans {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let c: Vec<f64> = x
            .iter()
            .scan(0.0, |acc, &v| {
                *acc += v;
                Some(*acc)
            })
            .collect();
        let running = c.iter().map(|v| v.sin()).sum::<f64>();
        let smoothed: f64 = x
            .iter()
            .scan(x[0], |m, v| {
                *m = 0.8 * *m + 0.2 * v;
                Some(*m * *m)
            })
            .sum();
        let mut out = 0.0;
        for p in x.iter().scan(1.0, |prod, &v| {
            *prod *= v.tanh();
            Some(*prod)
        }) {
            out = out * 0.5 + p;
        }
        let bounded: f64 = x
            .iter()
            .map(|v| v.exp())
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .take_while(|s| *s < 4.0)
            .map(|s| s.ln())
            .sum();
        let states: Vec<Array1<f64>> = m
            .rows()
            .into_iter()
            .scan(Array1::<f64>::zeros(m.ncols()), |h, r| {
                *h = (&*h * 0.5 + r).mapv(f64::tanh);
                Some(h.clone())
            })
            .collect();
        let last = states.iter().map(|h| h.sum()).sum::<f64>();
        running + smoothed + out + bounded + last
    }
}

#[test]
fn scans() {
    for n in [1, 4, 7] {
        check_scalar!(scans; ref x dx = random(n, 52), ref m dm = random((3, n), 53););
    }
}
