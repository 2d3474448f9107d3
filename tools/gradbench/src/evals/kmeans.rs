//! `kmeans`: the k-means cost `f(P, C) = Σᵢ minⱼ |Cⱼ - Pᵢ|²` and the Newton
//! direction `J / H` of the centroids, where `H` is the Hessian's diagonal.
//!
//! The cost is generic over the float type, so its generated derivative
//! code is too. `dir` runs the pullback on `ad::Dual`s whose tangents are
//! all 1: the pullback's values are the gradient `J` and its tangents are
//! `H 1`, which is the diagonal because `H` is diagonal (each centroid's
//! coordinates enter only their own squared distances).
//!
//! The nearest centroid of each point is found once, on the plain values,
//! under `ad::stop_gradient` (a search, not differentiated code): `min` has
//! the derivative of its chosen argument, so summing the distances to the
//! chosen centroids has the same derivative as summing the minima, and the
//! derivative code need not keep a record of the `k` comparisons per point.
//! The sum over points and coordinates is fused (`fused.rs`): the gradient
//! is built in the same pass, with nothing saved.

use ad::ndarray::Array2;
use ad::{differentiable, Dual, Float};
use serde_json::Value;

use super::{matrix, unknown, Evaluated};
use crate::runs::repeat;

/// The index of the centroid nearest to each point (the first of equals).
///
/// The centroids are copied to plain `f64`s, transposed (coordinate by
/// coordinate), so each point's distances to all of them are built up one
/// coordinate at a time in a buffer: the inner loop runs along the
/// centroids and vectorises, where a loop along one distance's `d` terms
/// would be a chain of dependent additions. Each distance still adds its
/// terms in coordinate order, as a direct loop would.
pub fn nearest<F: Float>(points: &Array2<f64>, centroids: &Array2<F>) -> Vec<usize> {
    let (k, d) = centroids.dim();
    let mut by_coordinate = vec![0.0; k * d];
    for ((j, l), c) in centroids.indexed_iter() {
        by_coordinate[l * k + j] = c.to_f64().unwrap_or(f64::NAN);
    }
    let mut distances = vec![0.0; k];
    points
        .rows()
        .into_iter()
        .map(|p| {
            distances.fill(0.0);
            if k > 0 {
                for (&a, column) in p.iter().zip(by_coordinate.chunks_exact(k)) {
                    for (dist, c) in distances.iter_mut().zip(column) {
                        let e = a - c;
                        *dist += e * e;
                    }
                }
            }
            let mut best = (f64::INFINITY, 0);
            for (j, &dist) in distances.iter().enumerate() {
                if dist < best.0 {
                    best = (dist, j);
                }
            }
            best.1
        })
        .collect()
}

#[differentiable]
pub fn cost<F: Float>(#[constant] points: &Array2<f64>, centroids: &Array2<F>) -> F {
    let closest = ad::stop_gradient(nearest(points, centroids));
    let mut total = F::zero();
    for i in 0..points.nrows() {
        let j = closest[i];
        for l in 0..points.ncols() {
            let diff = centroids[[j, l]] - F::of(points[[i, l]]);
            total += diff * diff;
        }
    }
    total
}

/// `J / H`: the gradient of the cost over its Hessian's diagonal.
pub fn dir(points: &Array2<f64>, centroids: &Array2<f64>) -> Array2<f64> {
    let seeded = centroids.mapv(|c| Dual::new(c, 1.0));
    let (_, pullback) = cost_vjp(points, &seeded);
    let (_, j_and_h) = pullback(Dual::constant(1.0));
    j_and_h.mapv(|g| g.value / g.tangent)
}

fn json_matrix(m: &Array2<f64>) -> Value {
    Value::from(m.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>())
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (points, centroids) = (matrix(input, "points")?, matrix(input, "centroids")?);
    if points.ncols() != centroids.ncols() {
        return Err("points and centroids differ in dimension".into());
    }
    match function {
        "cost" => {
            let (y, t) = repeat(input, || cost(&points, &centroids));
            Ok((Value::from(y), t))
        }
        "dir" => {
            let (m, t) = repeat(input, || dir(&points, &centroids));
            Ok((json_matrix(&m), t))
        }
        other => Err(unknown("kmeans", other)),
    }
}
