//! `Vec` locals that hold active values: pushed onto (`hs.push(h)`), read
//! by index (`hs[t]`) and iterated (`for h in &hs`), as back-propagation
//! through time and bags of instances keep them. Each case against finite
//! differences and forward mode.

#![allow(clippy::needless_range_loop)]

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::random;

/// Floats pushed in a loop, then read back by index and by iterator.
mod floats {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, a: f64) -> f64 {
        let mut ys = Vec::new();
        for i in 0..x.len() {
            ys.push((x[i] * a).sin());
        }
        let mut total = 0.0;
        for i in 1..ys.len() {
            total += ys[i] * ys[i - 1];
        }
        total + ys.iter().sum::<f64>()
    }
}

/// Every hidden state of an RNN kept in a `Vec`, the loss read from them
/// after the recurrence (back-propagation through time).
mod hidden_states {
    use super::*;
    #[differentiable]
    pub fn f(
        w: &Array2<f64>,
        u: &Array2<f64>,
        v: &Array1<f64>,
        #[constant] xs: &Array2<f64>,
    ) -> f64 {
        let mut hs = Vec::new();
        let mut h = Array1::zeros(w.nrows());
        for t in 0..xs.nrows() {
            h = (w.dot(&h) + u.dot(&xs.row(t))).mapv(f64::tanh);
            hs.push(h.clone());
        }
        let mut loss = 0.0;
        for h in &hs {
            loss += (h.dot(v) - 0.5).powi(2);
        }
        loss
    }
}

/// The recurrence reads the list it pushes onto: each state from the one
/// before, by index.
mod reads_while_pushing {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, h0: &Array1<f64>) -> f64 {
        let mut hs = vec![h0.to_owned()];
        for t in 0..3 {
            let next = w.dot(&hs[t]).mapv(f64::tanh);
            hs.push(next);
        }
        hs[3].sum() + hs[1][0]
    }
}

/// A `vec![..]` of active and constant items (a constant first), pushed
/// onto after.
mod straight_line {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut parts = vec![c.to_owned(), x * 2.0];
        for k in 0..2 {
            parts.push(x.mapv(f64::exp) * k as f64);
        }
        let mut s = 0.0;
        for p in parts.iter() {
            s += p.dot(x);
        }
        s + parts[3][1] * parts[1][0] + parts[0][2]
    }
}

/// A `Vec` of floats written by element, as `vec![0.0; n]` is filled.
mod written {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut v = vec![0.0; x.len()];
        for i in 0..x.len() {
            v[i] = x[i] * x[i];
        }
        v[0] += x[1].sin();
        v[1] *= x[0];
        v.iter().map(|t| t.exp()).sum::<f64>()
    }
}

/// Pushes in the branches of an `if`, in a loop nested in another, and a
/// chain over the list that enumerates and zips it.
mod branches_and_chains {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] flags: &[bool]) -> f64 {
        let mut hs = Vec::new();
        for (k, &flag) in flags.iter().enumerate() {
            if flag {
                hs.push(x.mapv(|t| (t * k as f64).sin()));
            } else {
                for j in 0..2 {
                    hs.push(x * (j as f64 + 1.0));
                }
            }
        }
        let weights = Array1::linspace(0.5, 1.5, hs.len());
        hs.iter()
            .zip(weights.iter())
            .enumerate()
            .map(|(i, (h, w))| h.sum() * w * i as f64 + h[0])
            .sum::<f64>()
    }
}

/// A bag's scores pushed one per instance, then a log-sum-exp over them
/// and an array made of them.
mod bag_scores {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array1<f64>, #[constant] bag: &Array2<f64>) -> f64 {
        let mut scores: Vec<f64> = Vec::new();
        for i in 0..bag.nrows() {
            scores.push(w.dot(&bag.row(i)));
        }
        let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = scores.iter().map(|s| (s - m).exp()).sum();
        let a = Array1::from(scores);
        m + z.ln() + a.mapv(f64::tanh).sum()
    }
}

#[test]
fn bag_scores_pushed() {
    for (n, seed) in [(1, 13), (4, 14), (7, 15)] {
        let bag = random((n, 3), seed);
        check_scalar!(bag_scores; ref w dw = random(3, 16); &bag);
    }
}

#[test]
fn floats_written_by_element() {
    check_scalar!(written; ref x dx = random(4, 10););
}

#[test]
fn pushes_in_branches_and_nested_loops() {
    let flags = [true, false, true, false];
    check_scalar!(branches_and_chains; ref x dx = random(3, 11); &flags[..]);
    check_scalar!(branches_and_chains; ref x dx = random(2, 12); &[][..]);
}

#[test]
fn floats_pushed_and_read() {
    check_scalar!(floats; ref x dx = random(5, 1), val a da = 0.7;);
}

#[test]
fn hidden_states_in_a_vec() {
    let xs = random((4, 2), 5);
    check_scalar!(hidden_states; ref w dw = random((3, 3), 2), ref u du = random((3, 2), 3), ref v dv = random(3, 4); &xs);
}

#[test]
fn reading_the_list_being_pushed() {
    check_scalar!(reads_while_pushing; ref w dw = random((3, 3), 6), ref h0 dh0 = random(3, 7););
}

#[test]
fn pushes_in_straight_line_code() {
    let c = random(3, 9);
    check_scalar!(straight_line; ref x dx = random(3, 8); &c);
}

/// Chains collected into `Vec`s, by turbofish and by annotation, with a
/// `filter` that keeps some of the items.
mod collected {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &Array2<f64>) -> f64 {
        let squares = x.iter().map(|v| v * v).collect::<Vec<_>>();
        let kept: Vec<f64> = x.iter().filter(|v| **v > 0.0).map(|v| v.exp()).collect();
        let rows: Vec<Array1<f64>> = w.rows().into_iter().map(|r| r.mapv(f64::sin)).collect();
        let mut s = squares[0] + kept.iter().sum::<f64>();
        for r in &rows {
            s += r.dot(x);
        }
        s
    }
}

#[test]
fn chains_collected_into_vecs() {
    check_scalar!(collected; ref x dx = random(3, 17), ref w dw = random((2, 3), 18););
}

/// Items read before a later push, in straight-line code (the list is kept
/// for the reverse sweep) and in a loop over floats that reads the list it
/// pushes onto (each item saved on the tape instead).
mod read_then_pushed {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut hs = vec![x.mapv(f64::sin)];
        let first = hs[0].dot(x);
        hs.push(&hs[0] * s);
        let mut ys = vec![s];
        for i in 0..x.len() {
            let next = (ys[i] * x[i]).tanh() + ys[0];
            ys.push(next);
        }
        first * hs[1].sum() + ys[x.len()] * ys[1] + *ys.last().unwrap() * hs.first().unwrap().sum()
    }
}

#[test]
fn items_read_before_a_push() {
    check_scalar!(read_then_pushed; ref x dx = random(4, 19), val s ds = 0.6;);
    check_scalar!(read_then_pushed; ref x dx = random(1, 20), val s ds = -0.3;);
}

/// `first()` and `last()` of active arrays and slices, unwrapped (with
/// `copied()`, `*`, or `expect`), matched or tested by `if let`: the
/// elements `x[0]` and `x[x.len() - 1]`.
mod ends_of_arrays {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &[f64]) -> f64 {
        let h = x.mapv(f64::tanh);
        let a = *h.last().unwrap();
        let b = h.first().copied().expect("a state");
        let c = match x.first() {
            Some(v) => v * 3.0,
            None => 0.0,
        };
        let d = if let Some(l) = h.last() { *l } else { 1.0 };
        a * b + x.first().unwrap() * w.last().unwrap() + w.first().unwrap().sin() + c * d
    }
}

#[test]
fn ends_of_arrays_and_slices() {
    for n in [1, 4] {
        check_scalar!(ends_of_arrays; ref x dx = random(n, 21), ref w dw = random(n + 1, 22).to_vec(););
    }
}

/// `pop` of a `Vec` of active values: `hs.pop().unwrap()`, a dropped
/// `hs.pop();`, `while let Some(v) = hs.pop()` (a loop draining a stack),
/// `match hs.pop()` and `if let Some(v) = hs.pop()`, over floats and
/// arrays, in loops that push and pop.
mod popped {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut st = Vec::new();
        let mut hs = Vec::new();
        for i in 0..x.len() {
            st.push(x[i] * s);
            hs.push(x.mapv(|v| v * (i as f64 + 1.0)));
            if i % 2 == 1 {
                let a = st.pop().unwrap();
                let b = st.pop().expect("two values");
                st.push(a * b + 1.0);
                let h = hs.pop().unwrap();
                hs.push(h.mapv(f64::tanh) * s);
            }
        }
        hs.push(x.to_owned());
        hs.pop();
        let first = match st.pop() {
            Some(v) => v * v,
            None => s,
        };
        let second = if let Some(h) = hs.pop() { h.sum() } else { 0.0 };
        let mut total = 0.0;
        while let Some(v) = st.pop() {
            total += v.sin();
        }
        first + second + total
    }
}

/// `vec![x; n]` of an active float and of an active array: `x`
/// evaluated once, `n` copies.
mod repeated {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let v = vec![x[0] * s; x.len()];
        let hs = vec![x.mapv(f64::sin); 3];
        let mut t = v[0] * v[v.len() - 1];
        for a in &v {
            t += a.cos();
        }
        t + hs[2].dot(&hs[0])
    }
}

#[test]
fn items_repeated() {
    for n in [1, 4] {
        check_scalar!(repeated; ref x dx = random(n, 24), val s ds = 0.4;);
    }
}

#[test]
fn items_popped() {
    for n in [1, 2, 5] {
        check_scalar!(popped; ref x dx = random(n, 23), val s ds = 0.7;);
    }
}

/// `to_vec` of an active array, slice and `Vec` of arrays: the items
/// collected into a `Vec` local, pushed onto, extended by a chain,
/// iterated, and made an array again (`Array1::from(x.to_vec())`).
mod copied_to_vecs {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &[f64]) -> f64 {
        let mut v = x.to_vec();
        v.push(w[0] * 3.0);
        let mut s = v[v.len() - 1] * v[0];
        for a in &v {
            s += a.sin();
        }
        let mut ws = w.to_vec();
        ws.extend(x.iter().map(|a| a.sin()));
        let mut hs = Vec::new();
        for k in 0..2 {
            hs.push(x.mapv(|v| (v * (k as f64 + 1.0)).exp()));
        }
        let ks = hs.to_vec();
        s + ws.iter().map(|a| a * a).sum::<f64>()
            + ks[0].dot(&ks[1])
            + Array1::from(x.to_vec()).mapv(f64::tanh).sum()
    }
}

#[test]
fn copied_to_vecs() {
    for n in [1, 4] {
        let w = random(n + 1, 41).to_vec();
        check_scalar!(copied_to_vecs; ref x dx = random(n, 42), ref w dw = w.clone(););
    }
}

/// `sort_by` and `sort_unstable_by` of floats and of arrays (a sorted
/// pooling: the largest first, weighted by rank), then `truncate` to the
/// top `k`, and a truncation inside a loop.
mod sorted_and_truncated {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut v = x.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        let mut ranked = 0.0;
        for (r, a) in v.iter().enumerate() {
            ranked += a * (r as f64 + 1.0).recip();
        }
        v.truncate(k);
        let top: f64 = v.iter().map(|a| a * a).sum();
        let mut sines: Vec<f64> = x.iter().map(|a| a.sin()).collect::<Vec<f64>>();
        sines.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..x.len() {
            hs.push(x.mapv(|a| (a * (i as f64 + 1.0)).tanh()));
        }
        hs.sort_by(|a, b| a.sum().total_cmp(&b.sum()));
        let mut kept: Vec<f64> = Vec::new();
        let mut s = 0.0;
        for a in x.iter() {
            kept.push(a.cos());
            if kept.len() > 2 {
                kept.truncate(1);
            }
            s += kept.iter().sum::<f64>();
        }
        ranked + top + sines[sines.len() / 2] * 2.0 + hs[0].dot(&hs[hs.len() - 1]) + s
    }
}

#[test]
fn sorted_and_truncated() {
    for n in [1, 4, 7] {
        for k in [0, 2, 9] {
            check_scalar!(sorted_and_truncated; ref x dx = random(n, 43); k);
        }
    }
}

/// `insert` (at the front, as a backward pass keeps its states, and in the
/// middle, of arrays) and `reverse`; and a loop that only sorts, reverses
/// or truncates a list, which it carries to its next iteration.
mod inserted_and_reversed {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut backward: Vec<f64> = Vec::new();
        let mut h = 0.0;
        for i in 0..x.len() {
            h = (h + x[i]).tanh();
            backward.insert(0, h);
        }
        let mut s = 0.0;
        for (k, v) in backward.iter().enumerate() {
            s += v * (k as f64 + 1.0);
        }
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..3 {
            hs.push(x.mapv(|v| (v * (i as f64 + 1.0)).sin()));
        }
        hs.insert(1, x.mapv(f64::cos));
        hs.reverse();
        s += hs[1].dot(&hs[2]) + hs[3].sum() * hs[0][0];
        let mut sines: Vec<f64> = x.iter().map(|v| v.sin()).collect::<Vec<f64>>();
        for i in 0..3 {
            sines.sort_by(|a, b| a.total_cmp(b));
            s += sines[0] * (i as f64 + 1.0);
            sines[0] += 1.5;
        }
        for i in 0..3 {
            sines.reverse();
            s += sines[0] * (i as f64 + 1.0);
        }
        for i in 0..3 {
            sines.truncate(4 - i);
            s += sines.iter().sum::<f64>();
        }
        s
    }
}

#[test]
fn inserted_and_reversed() {
    for n in [1, 4, 7] {
        check_scalar!(inserted_and_reversed; ref x dx = random(n, 44););
    }
}

/// `remove(i)` read as a value: a queue of states combined pairwise from
/// the front (also in a loop that only removes), and an array removed
/// from the middle.
mod removed {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut q: Vec<f64> = x.iter().map(|v| v.sin()).collect::<Vec<f64>>();
        let mut s = 0.0;
        while q.len() > 1 {
            let a = q.remove(0);
            let b = q.remove(0);
            q.push((a * b + s).tanh());
            s += a;
        }
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..3 {
            hs.push(x.mapv(|v| (v * (i as f64 + 1.0)).sin()));
        }
        let m = hs.remove(1);
        let mut rest: Vec<f64> = x.to_vec();
        for _ in 0..rest.len() / 2 {
            s += rest.remove(rest.len() / 2) * 0.5;
        }
        s + q[0] + m.dot(&hs[1]) + hs[0].sum() + rest.iter().sum::<f64>()
    }
}

#[test]
fn removed() {
    for n in [1, 4, 7] {
        check_scalar!(removed; ref x dx = random(n, 45););
    }
}

/// `swap_remove(i)` read as a value (a queue drained from a moving
/// position, an array taken from the front) and `rotate_left`,
/// `rotate_right`, of floats and arrays, outside loops and in a loop that
/// only rotates.
mod swap_removed_and_rotated {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut q: Vec<f64> = x.iter().map(|v| v.sin()).collect::<Vec<f64>>();
        let mut s = 0.0;
        while q.len() > 1 {
            let a = q.swap_remove(q.len() / 2);
            s += a * (q.len() as f64 + 1.0) + q[0] * a;
        }
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..3 {
            hs.push(x.mapv(|v| (v * (i as f64 + 1.0)).cos()));
        }
        let first = hs.swap_remove(0);
        hs.rotate_right(1);
        s += first.dot(&hs[0]) + hs[1].sum();
        let mut v: Vec<f64> = x.to_vec();
        let half = v.len() / 2;
        v.rotate_left(half);
        for (k, a) in v.iter().enumerate() {
            s += a * a * (k as f64 + 1.0);
        }
        for i in 0..3 {
            let by = i % v.len();
            v.rotate_right(by);
            s += v[0] * (i as f64 + 1.0);
        }
        s + q[0]
    }
}

#[test]
fn swap_removed_and_rotated() {
    for n in [1, 4, 7] {
        check_scalar!(swap_removed_and_rotated; ref x dx = random(n, 49););
    }
}

/// `resize`, `fill`, `extend_from_slice` and `append`, of floats and of
/// arrays, outside loops and in a loop that appends a fresh list each
/// round (which `append` empties, so the loop carries both).
mod resized_filled_and_appended {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a.sin()).collect::<Vec<f64>>();
        v.resize(v.len() + 2, x[0] * 2.0);
        let mut s = v
            .iter()
            .enumerate()
            .map(|(k, a)| a * (k as f64 + 1.0))
            .sum::<f64>();
        v.resize(1, 0.0);
        v.extend_from_slice(&[x[0], s]);
        s += v[0] * v[2];
        let mut w: Vec<f64> = vec![0.0; x.len()];
        w.fill(s.tanh());
        let mut hs: Vec<Array1<f64>> = Vec::new();
        let mut fresh: Vec<Array1<f64>> = Vec::new();
        for i in 0..3 {
            fresh.push(x.mapv(|a| (a * (i as f64 + 1.0)).cos()));
            fresh.push(x * w[0]);
            hs.append(&mut fresh);
        }
        let mut gs: Vec<Array1<f64>> = vec![x.to_owned()];
        gs.extend_from_slice(&hs);
        gs.resize(gs.len() + 1, x * s);
        let g = gs[1].clone();
        gs.fill(g);
        s + w.iter().sum::<f64>() + gs[0].dot(&hs[3]) + gs[2].sum() + fresh.len() as f64
    }
}

#[test]
fn resized_filled_and_appended() {
    for n in [1, 4, 7] {
        check_scalar!(resized_filled_and_appended; ref x dx = random(n, 50););
    }
}

/// `swap`, `retain`, `dedup`, `dedup_by` and `split_off`, of floats and of
/// arrays, outside loops and in loops that only reorder the list (a
/// bubble pass of swaps; a retain that drops the smallest each round).
mod swapped_retained_and_split {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a.sin()).collect::<Vec<f64>>();
        for i in 1..v.len() {
            if v[i - 1] > v[i] {
                v.swap(i - 1, i);
            }
        }
        let mut s = 0.0;
        for (k, a) in v.iter().enumerate() {
            s += a * (k as f64 + 1.0);
        }
        let mut kept = v.clone();
        kept.retain(|a| *a > -0.2);
        s += kept.iter().map(|a| a * a).sum::<f64>();
        let mut pool: Vec<f64> = x.to_vec();
        for _ in 0..2 {
            let least = pool.iter().cloned().fold(f64::INFINITY, f64::min);
            pool.retain(|a| *a > least);
            s += pool.iter().sum::<f64>();
        }
        let mut steps: Vec<f64> = x
            .iter()
            .map(|a| (a * 2.0).round() * 0.5 + a * 0.0)
            .collect::<Vec<f64>>();
        steps.push(x[0] * 3.0);
        steps.dedup();
        s += steps.iter().sum::<f64>() * steps.len() as f64;
        let mut near: Vec<f64> = v.clone();
        near.dedup_by(|a, b| (*a - *b).abs() < 0.3);
        s += near.iter().map(|a| a.exp()).sum::<f64>();
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..4 {
            hs.push(x.mapv(|a| (a * (i as f64 + 1.0)).tanh()));
        }
        hs.swap(0, 3);
        hs.retain(|h| h.sum() > -1.0);
        let tail = hs.split_off(hs.len() / 2);
        let mut t = 0.0;
        for h in &tail {
            t += h.dot(&hs[0]);
        }
        let back = v.split_off(1);
        s + t + back.iter().sum::<f64>() * v[0]
    }
}

#[test]
fn swapped_retained_and_split() {
    for n in [1, 4, 7] {
        check_scalar!(swapped_retained_and_split; ref x dx = random(n, 46););
    }
}

/// A clone of a `Vec` names the same value as the original; a push, pop,
/// `clear` or element write into either copies it where the other is read
/// again (in a loop too), and a `split_off` in a loop that halves a queue;
/// constants made by expressions pushed and inserted among active items.
mod cloned {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut v: Vec<f64> = x.iter().map(|a| a.sin()).collect::<Vec<f64>>();
        let mut s = 0.0;
        for i in 0..3 {
            let mut w = v.clone();
            w.push(x[i % x.len()] * 2.0);
            let last = w.len() - 1;
            w.swap(0, last);
            w[last] *= 3.0;
            s += w[0] * w[last];
            let mut u = v.clone();
            u.pop();
            s += u.iter().sum::<f64>();
            u.clear();
            u.push(s * 0.5);
            u.insert(0, 0.25 * 2.0);
            u.push(0.5 - 0.25);
            s += u[1] * u[0] + u[2];
            v.push(s.tanh());
        }
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..3 {
            hs.push(x.mapv(|a| (a * (i as f64 + 1.0)).sin()));
        }
        let snapshot = hs.clone();
        hs.retain(|h| h.sum() < 10.0);
        hs.pop();
        for h in &snapshot {
            s += h.dot(&hs[0]);
        }
        let mut q: Vec<f64> = x.to_vec();
        while q.len() > 1 {
            let rest = q.split_off(q.len() / 2);
            s += rest.iter().map(|a| a.cos()).sum::<f64>() * q[0];
            let last = q.len() - 1;
            q.swap(0, last);
        }
        s + q[0] + v.iter().sum::<f64>()
    }
}

#[test]
fn cloned() {
    for n in [1, 4, 7] {
        check_scalar!(cloned; ref x dx = random(n, 47););
    }
}

/// `drain(..)` reads the items, then clears the list: frontiers combined
/// pairwise until one is left (a `for` over a drain in a loop), a chain
/// over a drain, and a drain of arrays in a branch.
mod drained {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
        let mut frontier: Vec<f64> = x.to_vec();
        let mut total = 0.0;
        while frontier.len() > 1 {
            let mut next = Vec::new();
            let mut carry = 1.0;
            for h in frontier.drain(..) {
                carry = (carry * h).tanh();
                next.push(carry + h);
            }
            next.pop();
            total += next.iter().sum::<f64>();
            frontier = next;
        }
        let s: f64 = frontier.drain(..).map(|v| v * 3.0).sum();
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for r in m.rows() {
            hs.push(r.mapv(f64::sin));
        }
        let mut out: Vec<Array1<f64>> = Vec::new();
        if m.nrows() > 2 {
            for h in hs.drain(..) {
                out.push(h.mapv(|v| v * v));
            }
        }
        let mut t = 0.0;
        for h in &out {
            t += h.sum();
        }
        let left = if hs.is_empty() { 0.0 } else { hs[0].sum() };
        total + s + frontier.len() as f64 + t + left
    }
}

#[test]
fn drained() {
    for n in [1, 4, 7] {
        for rows in [2, 3] {
            check_scalar!(drained; ref x dx = random(n, 48), ref m dm = random((rows, n), 49););
        }
    }
}

/// `x.get(i).copied().unwrap_or(d)` (and `*x.get(i).unwrap_or(&d)`,
/// `cloned()`) reads the element or the default at the boundary: a
/// convolution zero-padded over a sequence of any length, on a slice, a
/// `Vec` local and an array, and a `Vec` of arrays with a default array.
mod read_or_default {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], k: &Array1<f64>) -> f64 {
        let v: Vec<f64> = x.iter().map(|a| a.sin()).collect::<Vec<f64>>();
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..2 {
            hs.push(k * (i as f64 + x[0]));
        }
        let mut s = 0.0;
        for i in 0..x.len() + 1 {
            let left = if i > 0 {
                x.get(i - 1).copied().unwrap_or(0.0)
            } else {
                0.0
            };
            let right = v.get(i + 1).copied().unwrap_or(0.0);
            let y = k[0] * left + k[1] * *x.get(i).unwrap_or(&0.25) + k[2] * right;
            s += y.tanh() + k.get(i).cloned().unwrap_or(0.5) * v.get(i).copied().unwrap_or(1.0);
            let h = hs.get(i).cloned().unwrap_or(k.mapv(|a| a * a));
            s += h.sum() * 0.1;
        }
        s
    }
}

#[test]
fn read_or_default() {
    for n in [1, 3, 6] {
        check_scalar!(read_or_default; ref x dx = random(n, 52).to_vec(), ref k dk = random(3, 53););
    }
}

/// A drain of part of the list (`..k`, `a..=b`, `k..`) reads those items,
/// then leaves the rest: a queue consumed two at a time in a loop that
/// pushes each pair's combination back, and arrays drained from the
/// middle and the end.
mod partly_drained {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut q: Vec<f64> = x.iter().map(|v| v.sin()).collect::<Vec<f64>>();
        let mut s = 0.0;
        while q.len() > 2 {
            let pair: f64 = q.drain(..2).map(|a| a * a).sum();
            q.push((pair + s).tanh());
            s += pair * 0.5;
        }
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for i in 0..5 {
            hs.push(x.mapv(|v| (v * (i as f64 + 1.0)).cos()));
        }
        let middle: Vec<Array1<f64>> = hs.drain(1..=2).collect();
        let mut t = middle[0].dot(&middle[1]);
        let from = hs.len() - 1;
        for h in hs.drain(from..) {
            t += h.sum() * 2.0;
        }
        s + q[0] + t + hs[0].sum() + hs[1].sum() * (hs.len() as f64)
    }
}

#[test]
fn partly_drained() {
    for n in [1, 4, 7] {
        check_scalar!(partly_drained; ref x dx = random(n, 51););
    }
}
