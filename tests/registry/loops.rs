//! Loops whose trip counts come from the data, with state reassigned
//! across iterations (tapes), `while`, `break`, `continue`, stepped and
//! reversed ranges, nesting.

use ad::differentiable;
use ad::ndarray::{Array1, Array2};

use super::dual::{Dual64, DualNum};
use super::models::{rnn_by_hand, rosenbrock_by_hand};
use super::{random, Scenario};

scenario! {
    scalar rosenbrock in Loops, sizes [10, 100, 1000];
    pub use super::super::models::{
        rosenbrock as f, rosenbrock_grad as f_grad, rosenbrock_jvp as f_jvp, rosenbrock_vjp as f_vjp,
    };
    inputs(n) { ref x dx = random(n, 61) }
    hand { (rosenbrock_by_hand(x).1,) }
    dual {
        let mut total = Dual64::from(0.0);
        for i in 0..x.len() - 1 {
            let a = -x[i] + 1.0;
            let b = x[i + 1] - x[i] * x[i];
            total += a * a + b * b * 100.0;
        }
        total
    }
}

scenario! {
    scalar rnn in Loops, sizes [1, 10, 100];
    pub use super::super::models::{rnn as f, rnn_grad as f_grad, rnn_jvp as f_jvp, rnn_vjp as f_vjp};
    inputs(n) { ref w dw = random((8, 8), 62) * 0.5 }
    constants { ref xs = random((n, 8), 63) }
    hand { (rnn_by_hand(w, xs).1,) }
    dual {
        let mut h = Array1::from_elem(w.nrows(), Dual64::from(0.0));
        for t in 0..xs.nrows() {
            h = (w.dot(&h) + xs.row(t).mapv(Dual64::from)).mapv(|v| v.tanh());
        }
        h.sum()
    }
}

scenario! {
    scalar rnn_states_in_a_vec in Loops, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(w: &Array2<f64>, v: &Array1<f64>, #[constant] xs: &Array2<f64>) -> f64 {
        let mut hs = Vec::new();
        let mut h = Array1::zeros(w.nrows());
        for t in 0..xs.nrows() {
            h = (w.dot(&h) + xs.row(t)).mapv(f64::tanh);
            hs.push(h.clone());
        }
        let mut loss = 0.0;
        for h in &hs {
            loss += (h.dot(v) - 0.5).powi(2);
        }
        loss
    }
    inputs(n) { ref w dw = random((8, 8), 76) * 0.5, ref v dv = random(8, 77) }
    constants { ref xs = random((n, 8), 78) }
    hand {
        // Back-propagation through time, every state's loss term adding
        // into the state's cotangent.
        let mut hs = vec![Array1::<f64>::zeros(w.nrows())];
        for t in 0..xs.nrows() {
            let h = (w.dot(&hs[t]) + xs.row(t)).mapv(f64::tanh);
            hs.push(h);
        }
        let (mut gw, mut gv) = (Array2::zeros(w.raw_dim()), Array1::zeros(v.len()));
        let mut dh = Array1::<f64>::zeros(w.nrows());
        for t in (0..xs.nrows()).rev() {
            let r = 2.0 * (hs[t + 1].dot(v) - 0.5);
            gv.scaled_add(r, &hs[t + 1]);
            dh.scaled_add(r, v);
            let dz = &dh * &hs[t + 1].mapv(|h| 1.0 - h * h);
            gw += &dz
                .view()
                .insert_axis(ad::ndarray::Axis(1))
                .dot(&hs[t].view().insert_axis(ad::ndarray::Axis(0)));
            dh = w.t().dot(&dz);
        }
        (gw, gv)
    }
    dual {
        let mut h = Array1::from_elem(w.nrows(), Dual64::from(0.0));
        let mut loss = Dual64::from(0.0);
        for t in 0..xs.nrows() {
            h = (w.dot(&h) + xs.row(t).mapv(Dual64::from)).mapv(|v| v.tanh());
            loss += (h.dot(v) - 0.5).powi(2);
        }
        loss
    }
}

/// The shift-reduce transitions of a balanced binary tree over `n`
/// leaves: `false` shifts the next leaf, `true` reduces the top two states.
pub fn balanced_transitions(n: usize) -> Vec<bool> {
    if n == 1 {
        return vec![false];
    }
    let mut t = balanced_transitions(n / 2);
    t.extend(balanced_transitions(n - n / 2));
    t.push(true);
    t
}

// A tree encoded by shift-reduce over a stack of states (SPINN's way): each
// reduction pops two states and pushes their composition.
scenario! {
    scalar shift_reduce_over_a_stack in Loops, sizes [1, 8, 100];
    #[differentiable]
    pub fn f(w: &Array2<f64>, u: &Array2<f64>, #[constant] leaves: &Array2<f64>, #[constant] transitions: &Vec<bool>) -> f64 {
        let mut stack: Vec<Array1<f64>> = Vec::new();
        let mut next = 0;
        for &reduce in transitions {
            if reduce {
                let right = stack.pop().unwrap();
                let left = stack.pop().unwrap();
                stack.push((w.dot(&left) + u.dot(&right)).mapv(f64::tanh));
            } else {
                stack.push(leaves.row(next).to_owned());
                next += 1;
            }
        }
        stack.pop().unwrap().sum()
    }
    inputs(n) { ref w dw = random((8, 8), 80) * 0.5, ref u du = random((8, 8), 81) * 0.5 }
    constants { ref leaves = random((n, 8), 82), ref transitions = balanced_transitions(n) }
    hand {
        // Every state named: the leaves and each reduction's (left, right).
        let mut states: Vec<Array1<f64>> = Vec::new();
        let (mut stack, mut reductions): (Vec<usize>, Vec<(usize, usize, usize)>) = (Vec::new(), Vec::new());
        let mut next = 0;
        for &reduce in transitions.iter() {
            if reduce {
                let (r, l) = (stack.pop().unwrap(), stack.pop().unwrap());
                let h = (w.dot(&states[l]) + u.dot(&states[r])).mapv(f64::tanh);
                reductions.push((l, r, states.len()));
                stack.push(states.len());
                states.push(h);
            } else {
                stack.push(states.len());
                states.push(leaves.row(next).to_owned());
                next += 1;
            }
        }
        let mut d: Vec<Array1<f64>> = states.iter().map(|s| Array1::zeros(s.len())).collect();
        d[stack[0]].fill(1.0);
        let (mut gw, mut gu) = (Array2::zeros(w.raw_dim()), Array2::zeros(u.raw_dim()));
        let outer = |a: &Array1<f64>, b: &Array1<f64>| {
            a.view().insert_axis(ad::ndarray::Axis(1)).dot(&b.view().insert_axis(ad::ndarray::Axis(0)))
        };
        for &(l, r, id) in reductions.iter().rev() {
            let dz = &d[id] * &states[id].mapv(|h| 1.0 - h * h);
            gw += &outer(&dz, &states[l]);
            gu += &outer(&dz, &states[r]);
            d[l] = &d[l] + &w.t().dot(&dz);
            d[r] = &d[r] + &u.t().dot(&dz);
        }
        (gw, gu)
    }
    dual {
        let mut stack: Vec<Array1<Dual64>> = Vec::new();
        let mut next = 0;
        for &reduce in transitions.iter() {
            if reduce {
                let right = stack.pop().unwrap();
                let left = stack.pop().unwrap();
                stack.push((w.dot(&left) + u.dot(&right)).mapv(|v| v.tanh()));
            } else {
                stack.push(leaves.row(next).mapv(Dual64::from));
                next += 1;
            }
        }
        stack.pop().unwrap().sum()
    }
}

scenario! {
    scalar sorted_pooling in Loops, sizes [1, 6, 200];
    /// A bag of instances of any count encoded, sorted by score (the
    /// largest first) and pooled over the top four by rank, as SortPool
    /// readouts of graph networks do: `sort_by`, then `truncate`.
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] bag: &Array2<f64>) -> f64 {
        let mut hs: Vec<Array1<f64>> = Vec::new();
        for x in bag.rows() {
            hs.push(w.dot(&x).mapv(f64::tanh));
        }
        hs.sort_by(|a, b| b.sum().total_cmp(&a.sum()));
        hs.truncate(4);
        let mut total = 0.0;
        for (r, h) in hs.iter().enumerate() {
            total += h.sum() / (r as f64 + 1.0) + h[0] * h[0];
        }
        total
    }
    inputs(n) { ref w dw = random((6, 5), 86) }
    constants { ref bag = random((n, 5), 87) }
    hand {
        let hs: Vec<Array1<f64>> = bag.rows().into_iter().map(|x| w.dot(&x).mapv(f64::tanh)).collect();
        let mut order: Vec<usize> = (0..hs.len()).collect();
        order.sort_by(|&i, &j| hs[j].sum().total_cmp(&hs[i].sum()));
        let mut gw = Array2::zeros(w.raw_dim());
        for (r, &i) in order.iter().take(4).enumerate() {
            let mut dh = Array1::from_elem(6, 1.0 / (r as f64 + 1.0));
            dh[0] += 2.0 * hs[i][0];
            let dz = &dh * &hs[i].mapv(|h| 1.0 - h * h);
            gw += &dz.view().insert_axis(ad::ndarray::Axis(1)).dot(&bag.row(i).insert_axis(ad::ndarray::Axis(0)));
        }
        (gw,)
    }
    dual {
        let mut hs: Vec<Array1<Dual64>> = bag.rows().into_iter().map(|x| w.dot(&x.mapv(Dual64::from)).mapv(|v| v.tanh())).collect();
        hs.sort_by(|a, b| b.sum().re.total_cmp(&a.sum().re));
        hs.truncate(4);
        let mut total = Dual64::from(0.0);
        for (r, h) in hs.iter().enumerate() {
            total += h.sum() / (r as f64 + 1.0) + h[0] * h[0];
        }
        total
    }
}

scenario! {
    scalar pairwise_tree_reduction in Loops, sizes [1, 6, 200];
    /// A bag of instances of any count encoded, then reduced level by
    /// level into one root, neighbours combined pairwise (a balanced
    /// binary tree over the bag, as hierarchical pooling builds): each
    /// level drains the frontier into the next, an odd one out carried up.
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] bag: &Array2<f64>) -> f64 {
        let mut frontier: Vec<Array1<f64>> = Vec::new();
        for x in bag.rows() {
            frontier.push(w.dot(&x).mapv(f64::tanh));
        }
        while frontier.len() > 1 {
            let mut next: Vec<Array1<f64>> = Vec::new();
            let mut carry: Vec<Array1<f64>> = Vec::new();
            for h in frontier.drain(..) {
                if let Some(a) = carry.pop() {
                    next.push((&a + &h).mapv(f64::tanh));
                } else {
                    carry.push(h);
                }
            }
            if let Some(odd) = carry.pop() {
                next.push(odd);
            }
            frontier = next;
        }
        frontier[0].sum()
    }
    inputs(n) { ref w dw = random((6, 5), 88) }
    constants { ref bag = random((n, 5), 89) }
    hand {
        // The tree, built forward: each node's value and its children.
        let mut values: Vec<Array1<f64>> = bag.rows().into_iter().map(|x| w.dot(&x).mapv(f64::tanh)).collect();
        let mut children: Vec<Option<(usize, usize)>> = vec![None; values.len()];
        let mut frontier: Vec<usize> = (0..values.len()).collect();
        while frontier.len() > 1 {
            let mut next = Vec::new();
            for pair in frontier.chunks(2) {
                match pair {
                    [a, b] => {
                        values.push((&values[*a] + &values[*b]).mapv(f64::tanh));
                        children.push(Some((*a, *b)));
                        next.push(values.len() - 1);
                    }
                    [a] => next.push(*a),
                    _ => unreachable!(),
                }
            }
            frontier = next;
        }
        // Back down from the root, parents before their children.
        let mut bars: Vec<Array1<f64>> = values.iter().map(|v| Array1::zeros(v.len())).collect();
        bars[frontier[0]].fill(1.0);
        let mut gw = Array2::zeros(w.raw_dim());
        for i in (0..values.len()).rev() {
            let dz = &bars[i] * &values[i].mapv(|h| 1.0 - h * h);
            match children[i] {
                Some((a, b)) => {
                    bars[a] += &dz;
                    bars[b] += &dz;
                }
                None => gw += &dz.view().insert_axis(ad::ndarray::Axis(1)).dot(&bag.row(i).insert_axis(ad::ndarray::Axis(0))),
            }
        }
        (gw,)
    }
    dual {
        let mut frontier: Vec<Array1<Dual64>> = bag.rows().into_iter().map(|x| w.dot(&x.mapv(Dual64::from)).mapv(|v| v.tanh())).collect();
        while frontier.len() > 1 {
            let mut next: Vec<Array1<Dual64>> = Vec::new();
            for pair in frontier.chunks(2) {
                match pair {
                    [a, b] => next.push((a + b).mapv(|v| v.tanh())),
                    [a] => next.push(a.clone()),
                    _ => unreachable!(),
                }
            }
            frontier = next;
        }
        frontier[0].sum()
    }
}

scenario! {
    scalar horner_polynomial in Loops, sizes [1, 5, 40];
    #[differentiable]
    pub fn f(coefficients: &Array1<f64>, x: f64) -> f64 {
        let mut p = 0.0;
        for i in (0..coefficients.len()).rev() {
            p = p * x + coefficients[i];
        }
        p
    }
    inputs(n) { ref coefficients dc = random(n, 64), val x dx = 0.8 }
    hand {
        let powers = Array1::from_shape_fn(coefficients.len(), |i| x.powi(i as i32));
        let slope: f64 = (1..coefficients.len()).map(|i| i as f64 * coefficients[i] * x.powi(i as i32 - 1)).sum();
        (powers, slope)
    }
    dual {
        let mut p = Dual64::from(0.0);
        for i in (0..coefficients.len()).rev() {
            p = p * *x + coefficients[i];
        }
        p
    }
}

scenario! {
    scalar while_with_break_and_continue in Loops, sizes [3, 12];
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut acc = s;
        let mut i = 0;
        while i < x.len() {
            i += 1;
            if i % 4 == 0 {
                continue;
            }
            acc = (acc * x[i - 1]).sin() + s;
            if i == 10 {
                break;
            }
        }
        acc
    }
    inputs(n) { ref x dx = random(n, 65), val s ds = 0.4 }
    dual {
        let mut acc = *s;
        for i in 1..=x.len().min(10) {
            if i % 4 != 0 {
                acc = (acc * x[i - 1]).sin() + *s;
            }
        }
        acc
    }
}

scenario! {
    scalar stepped_and_reversed_ranges in Loops, sizes [2, 9];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut acc = 1.0;
        for i in (0..x.len()).step_by(2) {
            acc = acc * x[i] + 0.3;
        }
        for i in (1..x.len()).rev() {
            acc = acc.tanh() + x[i - 1] * x[i];
        }
        for i in 0..=1 {
            acc = acc * 0.5 + x[i];
        }
        acc
    }
    inputs(n) { ref x dx = random(n, 66) }
    dual {
        let mut acc = Dual64::from(1.0);
        for i in (0..x.len()).step_by(2) {
            acc = acc * x[i] + 0.3;
        }
        for i in (1..x.len()).rev() {
            acc = acc.tanh() + x[i - 1] * x[i];
        }
        for i in 0..=1 {
            acc = acc * 0.5 + x[i];
        }
        acc
    }
}

scenario! {
    scalar nested_loops_with_exits in Loops, sizes [2, 6];
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] limit: f64) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            for j in 0..=i {
                if (i + j) % 3 == 2 {
                    continue;
                }
                acc = acc + x[i] * x[j].cos();
                if acc > limit {
                    return acc.sqrt();
                }
            }
            if i > 4 {
                break;
            }
        }
        acc * acc
    }
    inputs(n) { ref x dx = random(n, 67) + 1.0 }
    constants { val limit = 4.0 }
}

scenario! {
    scalar matrix_power_iteration in Loops, sizes [2, 5];
    #[differentiable]
    pub fn f(a: &Array2<f64>, #[constant] steps: usize) -> f64 {
        let mut v = Array1::<f64>::ones(a.nrows());
        for _ in 0..steps {
            let w = a.dot(&v);
            v = &w / w.dot(&w).sqrt();
        }
        v.dot(&a.dot(&v))
    }
    inputs(n) { ref a da = random((n, n), 68) + 2.0 }
    constants { val steps = 3 * n }
}

scenario! {
    scalar max_pooling_by_elements in Loops, sizes [1, 4, 16];
    // Max pooling written as updates element by element (the showcase
    // finds each column's argmax with inactive comparisons instead): every
    // element's branch is recorded and replayed.
    #[differentiable]
    pub fn f(h: &Array2<f64>, w: &Array1<f64>) -> f64 {
        let mut mx = Array1::zeros(h.ncols());
        for i in 0..h.nrows() {
            for j in 0..h.ncols() {
                if h[[i, j]] > mx[j] {
                    mx[j] = h[[i, j]];
                }
            }
        }
        mx.dot(w)
    }
    inputs(n) { ref h dh = random((n, 12), 69), ref w dw = random(12, 70) }
    hand {
        let mut gh = Array2::zeros(h.raw_dim());
        let mut mx = Array1::zeros(h.ncols());
        for j in 0..h.ncols() {
            for i in 0..h.nrows() {
                if h[[i, j]] > mx[j] {
                    mx[j] = h[[i, j]];
                    gh.column_mut(j).fill(0.0);
                    gh[[i, j]] = w[j];
                }
            }
        }
        (gh, mx)
    }
}

// Iterator chains, rewritten as the loops they stand for: a `zip` of the
// active weights with the constant data summed, and a sum of squares.
scenario! {
    scalar iterator_chains in Loops, sizes [1, 10, 1000];
    #[differentiable]
    pub fn f(w: &[f64], #[constant] x: &[f64]) -> f64 {
        let score: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
        let penalty = w.iter().map(|v| v * v).sum::<f64>();
        score.tanh() + 0.1 * penalty
    }
    inputs(n) { ref w dw = random(n, 69).to_vec() }
    constants { ref x = random(n, 70).to_vec() }
    hand {
        let score: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
        let slope = 1.0 - score.tanh().powi(2);
        (w.iter().zip(x).map(|(a, b)| slope * b + 0.2 * a).collect::<Vec<f64>>(),)
    }
    dual {
        let score: Dual64 = w.iter().zip(x.iter()).map(|(a, b)| *a * *b).sum();
        let penalty: Dual64 = w.iter().map(|v| *v * *v).sum();
        score.tanh() + penalty * 0.1
    }
}

// A smoothness penalty over neighbouring windows, read element by
// element, with a fit to constant data over consecutive pairs (chunks
// summed as views).
scenario! {
    scalar windows_and_chunks in Loops, sizes [2, 10, 1000];
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] y: &Array1<f64>) -> f64 {
        let rough = x.windows(2).into_iter().map(|w| (w[1] - w[0]).powi(2)).sum::<f64>();
        let fit = x
            .iter()
            .zip(y)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>();
        let pairs = x.exact_chunks(2).into_iter().map(|c| c.sum().tanh()).sum::<f64>();
        fit + 0.5 * rough + pairs
    }
    inputs(n) { ref x dx = random(n, 71) }
    constants { ref y = random(n, 72) }
    hand {
        let n = x.len();
        let mut g = Array1::from_shape_fn(n, |i| 2.0 * (x[i] - y[i]));
        for i in 1..n {
            let d = x[i] - x[i - 1];
            g[i] += d;
            g[i - 1] -= d;
        }
        for k in 0..n / 2 {
            let slope = 1.0 - (x[2 * k] + x[2 * k + 1]).tanh().powi(2);
            g[2 * k] += slope;
            g[2 * k + 1] += slope;
        }
        (g,)
    }
    dual {
        let n = x.len();
        let mut total = Dual64::from(0.0);
        for i in 0..n {
            total += (x[i] - y[i]).powi(2);
        }
        for i in 1..n {
            total += (x[i] - x[i - 1]).powi(2) * 0.5;
        }
        for k in 0..n / 2 {
            total += (x[2 * k] + x[2 * k + 1]).tanh();
        }
        total
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        rosenbrock::scenario(),
        rnn::scenario(),
        rnn_states_in_a_vec::scenario(),
        shift_reduce_over_a_stack::scenario(),
        sorted_pooling::scenario(),
        pairwise_tree_reduction::scenario(),
        horner_polynomial::scenario(),
        while_with_break_and_continue::scenario(),
        stepped_and_reversed_ranges::scenario(),
        nested_loops_with_exits::scenario(),
        matrix_power_iteration::scenario(),
        max_pooling_by_elements::scenario(),
        iterator_chains::scenario(),
        windows_and_chunks::scenario(),
    ]
}
