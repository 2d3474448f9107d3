//! Each eval's derivatives against finite differences on small inputs, and
//! against hand-worked values where they are short.

use ad::check::{assert_gradient, Rng};
use ad::ndarray::{Array1, Array2};
use ad_gradbench::evals::descent::Nesting;
use ad_gradbench::evals::descent::{Cost, Mode};
use ad_gradbench::evals::{
    ba, det, gmm, hello, ht, kmeans, llsq, lse, lstm, ode, particle, saddle,
};

/// What the nested evals take: forward and reverse over either mode.
const NESTINGS: [Nesting; 4] = [
    Nesting::ForwardOver(Mode::Forward),
    Nesting::ForwardOver(Mode::Reverse),
    Nesting::ReverseOver(Mode::Forward),
    Nesting::ReverseOver(Mode::Reverse),
];

fn random(n: usize, seed: u64) -> Array1<f64> {
    let mut rng = Rng::new(seed);
    Array1::from_shape_simple_fn(n, || rng.uniform() * 2.0)
}

#[test]
fn hello_double_is_the_derivative_of_square() {
    for x in [-1.5, 0.0, 2.0] {
        assert_eq!(hello::square_grad(x).1 .0, 2.0 * x);
    }
}

#[test]
fn lse_gradient_against_finite_differences() {
    for n in [1, 2, 10, 100] {
        let x = random(n, n as u64);
        let (value, (g,)) = lse::lse_grad(&x);
        assert_eq!(value, lse::lse(&x));
        assert_gradient(
            |x: &Array1<f64>| lse::lse(x),
            &x,
            g.as_slice().expect("contiguous"),
        );
    }
}

#[test]
fn llsq_gradient_against_finite_differences() {
    for (m, n) in [(1, 2), (3, 5), (8, 33)] {
        let x = random(m, 10 + m as u64);
        let (value, (g, _)) = llsq::llsq_grad(&x, n);
        assert_eq!(value, llsq::llsq(&x, n));
        assert_gradient(
            |x: &Array1<f64>| llsq::llsq(x, n),
            &x,
            g.as_slice().expect("contiguous"),
        );
    }
}

#[test]
fn ode_gradient_of_the_last_entry_against_finite_differences() {
    for (n, s) in [(1, 1), (2, 3), (6, 10)] {
        let x = random(n, 20 + n as u64);
        let g = ode::gradient(&x, s);
        assert_gradient(
            |x: &Array1<f64>| ode::ode(x, s)[n - 1],
            &x,
            g.as_slice().expect("contiguous"),
        );
    }
}

/// `alpha`, `mu`, `q` (the diagonals' logs), `l` (the lower triangles) and
/// the points `x` of a gmm input.
type GmmInput = (
    Array1<f64>,
    Array2<f64>,
    Array2<f64>,
    Array2<f64>,
    Array2<f64>,
);

/// A gmm input of `k` components in `d` dimensions and `n` points, uniform
/// in [0, 1).
fn random_gmm(rng: &mut Rng, d: usize, k: usize, n: usize) -> GmmInput {
    let mut m = |r: usize, c: usize| Array2::from_shape_simple_fn((r, c), || rng.uniform());
    (
        m(1, k).row(0).to_owned(),
        m(k, d),
        m(k, d),
        m(k, d * (d - 1) / 2),
        m(n, d),
    )
}

#[test]
fn gmm_gradient_against_finite_differences() {
    let mut rng = Rng::new(99);
    // Point by point below d = 8, component by component from it.
    for (d, k, n) in [(1, 1, 2), (2, 3, 4), (3, 2, 5), (8, 3, 4), (9, 2, 3)] {
        let (alpha, mu, q, l, x) = random_gmm(&mut rng, d, k, n);
        let (value, (ga, gm, gq, gl, ..)) = gmm::objective_grad(&alpha, &mu, &q, &l, &x, 1.5, 2);
        assert_eq!(value, gmm::objective(&alpha, &mu, &q, &l, &x, 1.5, 2));
        let params = (alpha.clone(), mu.clone(), q.clone(), l.clone());
        let flat: Vec<f64> = [
            ga.to_vec(),
            gm.iter().copied().collect(),
            gq.iter().copied().collect(),
            gl.iter().copied().collect(),
        ]
        .concat();
        assert_gradient(
            |p: &(Array1<f64>, Array2<f64>, Array2<f64>, Array2<f64>)| {
                gmm::objective(&p.0, &p.1, &p.2, &p.3, &x, 1.5, 2)
            },
            &params,
            &flat,
        );
    }
}

/// The mixture term's two forms, scalar steps point by point and matrix
/// products component by component: the same value and gradient.
#[test]
fn gmm_mixture_by_points_and_by_components_agree() {
    let mut rng = Rng::new(5);
    for (d, k, n) in [(1, 2, 3), (3, 4, 5), (9, 3, 6)] {
        let (alpha, mu, qd, l, x) = random_gmm(&mut rng, d, k, n);
        let sq = qd.sum_axis(ad::ndarray::Axis(1));
        let (a, ga) = gmm::mixture_by_points_grad(&alpha, &mu, &qd, &sq, &l, &x);
        let (b, gb) = gmm::mixture_by_components_grad(&alpha, &mu, &qd, &sq, &l, &x);
        assert!((a - b).abs() < 1e-12 * a.abs().max(1.0), "{a} against {b}");
        let close = |u: &Array2<f64>, v: &Array2<f64>| (u - v).iter().all(|e| e.abs() < 1e-12);
        assert!((&ga.0 - &gb.0).iter().all(|e| e.abs() < 1e-12));
        assert!(close(&ga.1, &gb.1) && close(&ga.2, &gb.2) && close(&ga.4, &gb.4));
        assert!((&ga.3 - &gb.3).iter().all(|e| e.abs() < 1e-12));
    }
}

#[test]
fn lstm_gradient_against_finite_differences() {
    use ad::ndarray::Array2;
    let mut rng = Rng::new(7);
    let mut m = |r: usize, c: usize| Array2::from_shape_simple_fn((r, c), || rng.uniform());
    for (l, c, b) in [(1, 2, 1), (2, 4, 3)] {
        let (main, extra, state) = (m(2 * l, 4 * b), m(3, b), m(2 * l, b));
        let sequence = m(c, b).mapv(|v| if v > 0.0 { 1.0 } else { 0.0 });
        let (value, (g_main, g_extra, ..)) = lstm::objective_grad(&main, &extra, &state, &sequence);
        assert_eq!(value, lstm::objective(&main, &extra, &state, &sequence));
        let flat: Vec<f64> = g_main.iter().chain(g_extra.iter()).copied().collect();
        assert_gradient(
            |p: &(Array2<f64>, Array2<f64>)| lstm::objective(&p.0, &p.1, &state, &sequence),
            &(main.clone(), extra.clone()),
            &flat,
        );
    }
}

/// The determinant by recursive expansion along the first row, as the
/// reference computes it: an independent check of the permutation sum.
fn det_by_minors(a: &[f64], n: usize, rows: &[usize], cols: &[usize]) -> f64 {
    if rows.len() == 1 {
        return a[rows[0] * n + cols[0]];
    }
    let mut total = 0.0;
    for (j, &c) in cols.iter().enumerate() {
        let rest: Vec<usize> = cols.iter().copied().filter(|&k| k != c).collect();
        let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
        total += sign * a[rows[0] * n + c] * det_by_minors(a, n, &rows[1..], &rest);
    }
    total
}

#[test]
fn det_by_minors_and_its_gradient() {
    for ell in [1, 2, 3, 4, 6] {
        let a = random(ell * ell, 40 + ell as u64);
        let all: Vec<usize> = (0..ell).collect();
        let expected = det_by_minors(a.as_slice().expect("contiguous"), ell, &all, &all);
        let (value, (g, _)) = det::det_grad(&a, ell);
        assert_eq!(value, det::det(&a, ell));
        assert!(
            (value - expected).abs() <= 1e-12 * expected.abs().max(1.0),
            "ell = {ell}: {value} against {expected}"
        );
        assert_gradient(
            |a: &Array1<f64>| det::det(a, ell),
            &a,
            g.as_slice().expect("contiguous"),
        );
    }
}

fn ba_problem(rotation: [f64; 3]) -> ba::Problem {
    let input = serde_json::json!({
        "n": 2, "m": 3, "p": 5,
        "cam": [rotation[0], rotation[1], rotation[2], 0.3, -0.2, 0.1, 400.0, 2.0, -3.0, 0.01, -0.002],
        "x": [0.5, -0.4, 3.0],
        "w": 0.8,
        "feat": [10.0, -20.0],
    });
    ba::Problem::from_input(&input).expect("a valid input")
}

#[test]
fn ba_jacobian_rows_against_finite_differences() {
    // A rotation, and none (the reference's other branch).
    for rotation in [[0.1, -0.3, 0.2], [0.0, 0.0, 0.0]] {
        let problem = ba_problem(rotation);
        let jac = problem.jacobian();
        // Each observation's two rows of 15 entries, then one per weight.
        assert_eq!(jac.rows.len(), 3 * 5 + 1);
        assert_eq!(jac.vals.len(), 31 * 5);
        for (i, &(c, q)) in problem.observations.iter().enumerate() {
            for k in 0..2 {
                let row = 2 * i + k;
                let (from, to) = (jac.rows[row] as usize, jac.rows[row + 1] as usize);
                let x = {
                    let (cam, p) = (&problem.cameras[c], &problem.points[q]);
                    Array1::from(vec![
                        cam.r0,
                        cam.r1,
                        cam.r2,
                        cam.c0,
                        cam.c1,
                        cam.c2,
                        cam.f,
                        cam.u0,
                        cam.u1,
                        cam.k0,
                        cam.k1,
                        p.x0,
                        p.x1,
                        p.x2,
                        problem.weights[i],
                    ])
                };
                let f = |x: &Array1<f64>| {
                    let cam = ba::Camera {
                        r0: x[0],
                        r1: x[1],
                        r2: x[2],
                        c0: x[3],
                        c1: x[4],
                        c2: x[5],
                        f: x[6],
                        u0: x[7],
                        u1: x[8],
                        k0: x[9],
                        k1: x[10],
                    };
                    let p = ba::Point {
                        x0: x[11],
                        x1: x[12],
                        x2: x[13],
                    };
                    ba::reprojection(&cam, &p, x[14], problem.features[i][k], k)
                };
                // At no rotation, finite differences step into the other
                // branch, which agrees with this one to first order.
                assert_gradient(f, &x, &jac.vals[from..to]);
            }
        }
        let last = jac.vals.last().copied().expect("entries");
        assert_eq!(last, -2.0 * 0.8, "d(1 - w²)/dw");
    }
}

#[test]
fn kmeans_gradient_against_finite_differences_and_dir_in_closed_form() {
    for (n, k, d) in [(1, 1, 1), (7, 3, 2), (30, 4, 5)] {
        let points =
            Array2::from_shape_vec((n, d), random(n * d, 60 + n as u64).to_vec()).expect("n × d");
        let centroids =
            Array2::from_shape_vec((k, d), random(k * d, 70 + k as u64).to_vec()).expect("k × d");
        // Generic over the float type, so no `cost_grad` (its result is `F`).
        let (value, pullback) = kmeans::cost_vjp(&points, &centroids);
        assert_eq!(value, kmeans::cost(&points, &centroids));
        let (_, g) = pullback(1.0);
        // Finite differences cross no boundary of the nearest-centroid
        // regions for these inputs (the cost is smooth inside each).
        assert_gradient(
            |c: &Array2<f64>| kmeans::cost(&points, c),
            &centroids,
            g.as_slice().expect("contiguous"),
        );
        // J / H is each centroid less the mean of its points.
        let closest = kmeans::nearest(&points, &centroids);
        let dir = kmeans::dir(&points, &centroids);
        for j in 0..k {
            let mine: Vec<usize> = (0..n).filter(|&i| closest[i] == j).collect();
            for l in 0..d {
                let mean = mine.iter().map(|&i| points[[i, l]]).sum::<f64>() / mine.len() as f64;
                let want = centroids[[j, l]] - mean;
                assert!(
                    (dir[[j, l]] - want).abs() < 1e-12 || mine.is_empty(),
                    "centroid {j}, coordinate {l}: {} against {want}",
                    dir[[j, l]]
                );
            }
        }
    }
}

/// The made-up hand of the recorded session (`sessions/ht.jsonl`), with
/// triangles and without: each Jacobian column against central
/// differences of the objective.
#[test]
fn ht_jacobian_against_finite_differences() {
    let path = format!("{}/tests/sessions/ht.jsonl", env!("CARGO_MANIFEST_DIR"));
    let session = std::fs::read_to_string(path).expect("the session");
    let inputs: Vec<serde_json::Value> = session
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .filter(|m| m["function"] == "jacobian")
        .map(|m| m["input"].clone())
        .collect();
    assert_eq!(inputs.len(), 2);
    for input in &inputs {
        let (hand, theta, us) = ht::Hand::new(input).expect("a valid input");
        let columns = ht::jacobian(&hand, &theta, &us);
        let us_columns = columns.nrows() - theta.len();
        assert_eq!(us_columns, if us.is_empty() { 0 } else { 2 });
        let h = 1e-6;
        for (j, column) in columns.rows().into_iter().enumerate() {
            let (mut theta_plus, mut theta_minus) = (theta.clone(), theta.clone());
            let (mut us_plus, mut us_minus) = (us.clone(), us.clone());
            if j < us_columns {
                // Each error reads only its own pair of `us`.
                for i in 0..us.len() / 2 {
                    us_plus[2 * i + j] += h;
                    us_minus[2 * i + j] -= h;
                }
            } else {
                theta_plus[j - us_columns] += h;
                theta_minus[j - us_columns] -= h;
            }
            let difference = (ht::objective(&theta_plus, &us_plus, &hand)
                - ht::objective(&theta_minus, &us_minus, &hand))
                / (2.0 * h);
            for (got, want) in column.iter().zip(&difference) {
                assert!(
                    (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
                    "column {j}: {got} against {want}"
                );
            }
        }
    }
}

/// The outer derivative, forward mode (the path on `ad::Dual`s, with the
/// generated gradient of the potential inside) or reverse over either
/// (`miss_over_grad`), against central differences of the path;
/// and the eval's expected control from every nesting.
#[test]
fn particle_derivative_of_the_path_against_finite_differences() {
    let central = |f: &dyn Fn(f64) -> f64, w: f64| {
        let h = 1e-7;
        (f(w + h) - f(w - h)) / (2.0 * h)
    };
    for w in [0.0, 0.15, 0.3] {
        let close = |got: f64, want: f64| {
            assert!(
                (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                "w = {w}: {got} against {want}"
            )
        };
        for inner in [Mode::Forward, Mode::Reverse] {
            let got = particle::miss(ad::Dual::new(w, 1.0), inner).tangent;
            close(got, central(&|w| particle::miss(w, inner), w));
            let (value, (got, _)) = particle::miss_over_grad(w, inner);
            assert_eq!(value, particle::miss_over(w, inner));
            close(value, particle::miss(w, inner));
            close(got, central(&|w| particle::miss_over(w, inner), w));
        }
    }
    for nesting in NESTINGS {
        let w = particle::particle(0.0, nesting);
        assert!((w - 0.2071918746486116).abs() < 1e-9, "{nesting:?}: {w}");
    }
}

/// The outer gradient, forward over either inner mode (the inner search
/// on `ad::Dual`s) or reverse over either (`max_over_grad`),
/// against the envelope theorem's `∂f/∂x = 2x` at the inner maximum, which
/// holds up to the inner search's tolerance; the differentiable search
/// against the generic one; and the eval's expected saddle point from
/// every nesting.
#[test]
fn saddle_outer_gradient_and_saddle_point() {
    for nesting in NESTINGS {
        let outer = saddle::Outer {
            start: [1.0, 1.0],
            nesting,
        };
        for x in [[0.5, -0.25], [1.0, 2.0]] {
            let g = outer.gradient(&x);
            for k in 0..2 {
                assert!(
                    (g[k] - 2.0 * x[k]).abs() < 1e-4,
                    "{nesting:?}: {g:?} at {x:?}"
                );
            }
        }
        for v in saddle::saddle([1.0, 1.0], nesting) {
            assert!(
                (v - 8.246324826140356e-06).abs() < 1e-12,
                "{nesting:?}: {v}"
            );
        }
    }
    for x in [[0.5, -0.25], [1.0, 2.0]] {
        let generic = saddle::Outer {
            start: [1.0, 1.0],
            nesting: Nesting::ForwardOver(Mode::Forward),
        };
        for inner in [Mode::Forward, Mode::Reverse] {
            let value = saddle::max_over(x[0], x[1], 1.0, 1.0, inner);
            assert_eq!(value, generic.objective(&x));
            assert_eq!(saddle::max_over_grad(x[0], x[1], 1.0, 1.0, inner).0, value);
        }
    }
}
