//! `ht`: hand tracking. A hand model of bones posed by 26 parameters
//! `theta` (a global rotation and translation, then finger angles) skins
//! the model's vertices; the errors are each observed point less the hand
//! point it corresponds to: a vertex, or, when `us` is not empty, a point
//! of a triangle at barycentric coordinates `us`. The Jacobian is of the
//! errors with respect to `us` and `theta`.
//!
//! The objective is one `#[differentiable(forward)]` function, and the
//! Jacobian its forward derivative along each column's direction: one
//! `_jvp` per parameter of `theta`. Each error depends only on its own pair
//! of `us`, so the two `us` columns of the reference's compressed Jacobian
//! are two `_jvp`s as well, along all first and all second coordinates.
//!
//! Two things the reference computes are left out because the errors do
//! not read them: vertices no correspondence reaches, and the zero weights
//! of the weight matrix (a vertex has about two bones; the model has 22).
//! `Hand::new` keeps only the vertices the errors read, and the skin as
//! each bone's list of vertices with a weight.

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use serde_json::Value;

use super::{matrix, unknown, vector, Evaluated};
use crate::runs::repeat;

/// The model and observations, arranged for the objective.
pub struct Hand {
    /// Each bone's parent, if any (parents come before their children).
    pub parents: Vec<Option<usize>>,
    /// Each bone's base relative transform, then its inverse base absolute
    /// one: the top three rows of 4×4 affine matrices (the last row is
    /// 0 0 0 1, checked), stacked three rows per bone.
    pub base_relatives: Array2<f64>,
    pub inverse_base_absolutes: Array2<f64>,
    /// The `theta` index of each bone's first and second Euler angle
    /// (`to_pose_params` in the reference; the third is always zero).
    pub angles: Vec<[Option<usize>; 2]>,
    pub mirrored: bool,
    /// The homogeneous base positions of the vertices the errors read.
    pub base: Array2<f64>,
    /// Bone `b`'s skin: entries `skin_start[b]..skin_start[b + 1]` of
    /// `skin_vertex` (indices into `base`) and `skin_weight`.
    pub skin_start: Vec<usize>,
    pub skin_vertex: Vec<usize>,
    pub skin_weight: Vec<f64>,
    /// Each error's corners (indices into `base`): one vertex, or a
    /// triangle's three with `us`.
    pub corners: Vec<[usize; 3]>,
    pub triangles: bool,
    /// The observed points, one row each.
    pub points: Array2<f64>,
}

/// Fixed by the model GradBench uses: the global rotation and translation,
/// then four angles for each of five fingers.
const THETA_LEN: usize = 26;

impl Hand {
    pub fn new(input: &Value) -> Result<(Self, Array1<f64>, Array1<f64>), String> {
        let theta = vector(input, "theta")?;
        let data = input.get("data").ok_or("the input has no `data`")?;
        let model = data.get("model").ok_or("the input has no `data.model`")?;
        let parents: Vec<Option<usize>> = integers(model, "parents")?
            .into_iter()
            .map(|p| usize::try_from(p).ok())
            .collect();
        let nb = parents.len();
        if parents
            .iter()
            .enumerate()
            .any(|(b, p)| p.is_some_and(|p| p >= b))
        {
            return Err("a bone's parent must come before it".into());
        }
        let base_relatives = affine_stack(model, "base_relatives", nb)?;
        let inverse_base_absolutes = affine_stack(model, "inverse_base_absolutes", nb)?;
        let angles = pose_angles(nb)?;
        if theta.len() != THETA_LEN {
            return Err(format!("`theta` needs {THETA_LEN} numbers"));
        }
        let positions = matrix(model, "base_positions")?;
        let weights = matrix(model, "weights")?;
        if positions.ncols() != 4 || weights.nrows() != positions.nrows() || weights.ncols() != nb {
            return Err("`base_positions` needs 4 columns and `weights` one per bone".into());
        }
        let correspondences = integers(data, "correspondences")?;
        let points = matrix(data, "points")?;
        let us = matrix(input, "us")?;
        let triangles = !us.is_empty();
        if points.nrows() != correspondences.len()
            || (points.ncols() != 3 && !points.is_empty())
            || (triangles && us.dim() != (points.nrows(), 2))
        {
            return Err("one point of 3 coordinates (and two `us`) per correspondence".into());
        }
        let faces = if triangles {
            integers(model, "triangles")?
        } else {
            Vec::new()
        };
        // The vertices the errors read, numbered in order of first use.
        let mut local = vec![usize::MAX; positions.nrows()];
        let mut used = Vec::new();
        let mut corners = Vec::with_capacity(correspondences.len());
        for &c in &correspondences {
            let global = if triangles {
                let t = usize::try_from(c).map_err(|_| "a negative triangle")?;
                faces
                    .get(3 * t..3 * t + 3)
                    .ok_or("a correspondence past the triangles")?
                    .to_vec()
            } else {
                vec![c; 3]
            };
            let mut corner = [0; 3];
            for (slot, &v) in corner.iter_mut().zip(&global) {
                let v = usize::try_from(v)
                    .ok()
                    .filter(|&v| v < positions.nrows())
                    .ok_or("a vertex index past the vertices")?;
                if local[v] == usize::MAX {
                    local[v] = used.len();
                    used.push(v);
                }
                *slot = local[v];
            }
            corners.push(corner);
        }
        let base = positions.select(ad::ndarray::Axis(0), &used);
        let (mut skin_start, mut skin_vertex, mut skin_weight) = (vec![0], Vec::new(), Vec::new());
        for b in 0..nb {
            for (k, &v) in used.iter().enumerate() {
                if weights[[v, b]] != 0.0 {
                    skin_vertex.push(k);
                    skin_weight.push(weights[[v, b]]);
                }
            }
            skin_start.push(skin_vertex.len());
        }
        let hand = Hand {
            parents,
            base_relatives,
            inverse_base_absolutes,
            angles,
            mirrored: model.get("is_mirrored").and_then(Value::as_bool) == Some(true),
            base,
            skin_start,
            skin_vertex,
            skin_weight,
            corners,
            triangles,
            points,
        };
        let us = Array1::from_iter(us.iter().copied());
        Ok((hand, theta, us))
    }
}

/// `value[key]` as integers, nested arrays flattened.
fn integers(value: &Value, key: &str) -> Result<Vec<i64>, String> {
    fn flatten(v: &Value, out: &mut Vec<i64>) -> bool {
        match v {
            Value::Array(items) => items.iter().all(|i| flatten(i, out)),
            other => other.as_i64().map(|i| out.push(i)).is_some(),
        }
    }
    let mut out = Vec::new();
    let v = value
        .get(key)
        .ok_or_else(|| format!("the input has no `{key}`"))?;
    if flatten(v, &mut out) {
        Ok(out)
    } else {
        Err(format!("`{key}` holds a non-integer"))
    }
}

/// `nb` 4×4 matrices (rows of columns) as their top three rows, stacked.
fn affine_stack(model: &Value, key: &str, nb: usize) -> Result<Array2<f64>, String> {
    let bones = model
        .get(key)
        .and_then(Value::as_array)
        .filter(|b| b.len() == nb)
        .ok_or_else(|| format!("`{key}` needs one matrix per bone"))?;
    let mut out = Array2::zeros((3 * nb, 4));
    for (b, m) in bones.iter().enumerate() {
        let m = matrix(&serde_json::json!({ "m": m }), "m")?;
        if m.dim() != (4, 4) || m.row(3).to_vec() != [0.0, 0.0, 0.0, 1.0] {
            return Err(format!("`{key}` holds a matrix that is not 4×4 affine"));
        }
        for r in 0..3 {
            out.row_mut(3 * b + r).assign(&m.row(r));
        }
    }
    Ok(out)
}

/// Where each bone's Euler angles come from in `theta`, as the reference's
/// `to_pose_params` lays them out: bone `b` reads pose column `b + 3`; the
/// columns from 5 on take, finger by finger, two angles for the first
/// bone, one for the next two, none for the tip.
fn pose_angles(nb: usize) -> Result<Vec<[Option<usize>; 2]>, String> {
    let mut angles = vec![[None, None]; nb];
    let (mut i_theta, mut column) = (6, 5);
    for _finger in 0..5 {
        for joint in 2..=4 {
            let bone = column - 3;
            let slot = angles
                .get_mut(bone)
                .ok_or("the model has too few bones for five fingers")?;
            slot[0] = Some(i_theta);
            i_theta += 1;
            if joint == 2 {
                slot[1] = Some(i_theta);
                i_theta += 1;
            }
            column += 1;
        }
        column += 1;
    }
    Ok(angles)
}

/// The errors, three per correspondence.
#[differentiable(forward)]
pub fn objective(theta: &Array1<f64>, us: &Array1<f64>, #[constant] hand: &Hand) -> Array1<f64> {
    let nb = hand.parents.len();
    // Each bone's posed transform (top three rows): the base relative one
    // turned by the bone's angles, chained to its parent's, then taken
    // back by the inverse base absolute.
    let mut absolutes: Array2<f64> = Array2::zeros((3 * nb, 4));
    let mut transforms: Array2<f64> = Array2::zeros((3 * nb, 4));
    for b in 0..nb {
        let [first, second] = hand.angles[b];
        let mut tx = 0.0;
        let mut tz = 0.0;
        if let Some(i) = first {
            tx = theta[i];
        }
        if let Some(i) = second {
            tz = theta[i];
        }
        // R = Rz Rx (the middle angle, for Ry, is zero).
        let cx = tx.cos();
        let sx = tx.sin();
        let cz = tz.cos();
        let sz = tz.sin();
        let mut rotation: Array2<f64> = Array2::zeros((3, 3));
        rotation[[0, 0]] = cz;
        rotation[[0, 1]] = -sz * cx;
        rotation[[0, 2]] = sz * sx;
        rotation[[1, 0]] = sz;
        rotation[[1, 1]] = cz * cx;
        rotation[[1, 2]] = -cz * sx;
        rotation[[2, 1]] = sx;
        rotation[[2, 2]] = cx;
        let mut relative: Array2<f64> = Array2::zeros((3, 4));
        for r in 0..3 {
            for c in 0..3 {
                let mut v = 0.0;
                for m in 0..3 {
                    v += hand.base_relatives[[3 * b + r, m]] * rotation[[m, c]];
                }
                relative[[r, c]] = v;
            }
            relative[[r, 3]] = hand.base_relatives[[3 * b + r, 3]];
        }
        for r in 0..3 {
            for c in 0..4 {
                let mut v = 0.0;
                match hand.parents[b] {
                    Some(p) => {
                        for m in 0..3 {
                            v += absolutes[[3 * p + r, m]] * relative[[m, c]];
                        }
                        if c == 3 {
                            v += absolutes[[3 * p + r, 3]];
                        }
                    }
                    None => {
                        v = relative[[r, c]];
                    }
                }
                absolutes[[3 * b + r, c]] = v;
            }
        }
        for r in 0..3 {
            for c in 0..4 {
                let mut v = 0.0;
                for m in 0..3 {
                    v += absolutes[[3 * b + r, m]] * hand.inverse_base_absolutes[[3 * b + m, c]];
                }
                if c == 3 {
                    v += absolutes[[3 * b + r, 3]];
                }
                transforms[[3 * b + r, c]] = v;
            }
        }
    }
    // Skinning: each vertex moved by its bones, weighted.
    let nv = hand.base.nrows();
    let mut positions: Array2<f64> = Array2::zeros((nv, 3));
    for b in 0..nb {
        for r in 0..3 {
            let t0 = transforms[[3 * b + r, 0]];
            let t1 = transforms[[3 * b + r, 1]];
            let t2 = transforms[[3 * b + r, 2]];
            let t3 = transforms[[3 * b + r, 3]];
            for e in hand.skin_start[b]..hand.skin_start[b + 1] {
                let k = hand.skin_vertex[e];
                let w = hand.skin_weight[e];
                let x = &hand.base;
                positions[[k, r]] +=
                    w * (t0 * x[[k, 0]] + t1 * x[[k, 1]] + t2 * x[[k, 2]] + t3 * x[[k, 3]]);
            }
        }
    }
    if hand.mirrored {
        for k in 0..nv {
            positions[[k, 0]] = -positions[[k, 0]];
        }
    }
    // The global rotation (angle and axis) and translation.
    let norm = (theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2]).sqrt();
    let mut global: Array2<f64> = Array2::zeros((3, 3));
    if norm < 0.0001 {
        for r in 0..3 {
            global[[r, r]] = 1.0;
        }
    } else {
        let x = theta[0] / norm;
        let y = theta[1] / norm;
        let z = theta[2] / norm;
        let s = norm.sin();
        let c = norm.cos();
        global[[0, 0]] = x * x + (1.0 - x * x) * c;
        global[[0, 1]] = x * y * (1.0 - c) - z * s;
        global[[0, 2]] = x * z * (1.0 - c) + y * s;
        global[[1, 0]] = x * y * (1.0 - c) + z * s;
        global[[1, 1]] = y * y + (1.0 - y * y) * c;
        global[[1, 2]] = y * z * (1.0 - c) - x * s;
        global[[2, 0]] = x * z * (1.0 - c) - y * s;
        global[[2, 1]] = z * y * (1.0 - c) + x * s;
        global[[2, 2]] = z * z + (1.0 - z * z) * c;
    }
    let mut world: Array2<f64> = Array2::zeros((nv, 3));
    for r in 0..3 {
        let g0 = global[[r, 0]];
        let g1 = global[[r, 1]];
        let g2 = global[[r, 2]];
        let t = theta[3 + r];
        for k in 0..nv {
            world[[k, r]] =
                g0 * positions[[k, 0]] + g1 * positions[[k, 1]] + g2 * positions[[k, 2]] + t;
        }
    }
    let n = hand.corners.len();
    let mut err: Array1<f64> = Array1::zeros(3 * n);
    for i in 0..n {
        let [a, b, c] = hand.corners[i];
        if hand.triangles {
            let u0 = us[2 * i];
            let u1 = us[2 * i + 1];
            let u2 = 1.0 - u0 - u1;
            for j in 0..3 {
                err[3 * i + j] = hand.points[[i, j]]
                    - (u0 * world[[a, j]] + u1 * world[[b, j]] + u2 * world[[c, j]]);
            }
        } else {
            for j in 0..3 {
                err[3 * i + j] = hand.points[[i, j]] - world[[a, j]];
            }
        }
    }
    err
}

/// The Jacobian, column by column (the `us` columns first when there are
/// triangles, then one per parameter of `theta`): row `j` of the result is
/// column `j` of the Jacobian.
pub fn jacobian(hand: &Hand, theta: &Array1<f64>, us: &Array1<f64>) -> Array2<f64> {
    let rows = 3 * hand.corners.len();
    let us_columns = if hand.triangles { 2 } else { 0 };
    let mut columns = Array2::zeros((us_columns + theta.len(), rows));
    let mut theta_dot = Array1::zeros(theta.len());
    let mut us_dot = Array1::zeros(us.len());
    for j in 0..us_columns {
        us_dot.fill(0.0);
        for i in 0..hand.corners.len() {
            us_dot[2 * i + j] = 1.0;
        }
        let (_, d) = objective_jvp(theta, us, hand, &theta_dot, &us_dot, ad::NoTangent);
        columns.row_mut(j).assign(&d);
    }
    us_dot.fill(0.0);
    for p in 0..theta.len() {
        theta_dot.fill(0.0);
        theta_dot[p] = 1.0;
        let (_, d) = objective_jvp(theta, us, hand, &theta_dot, &us_dot, ad::NoTangent);
        columns.row_mut(us_columns + p).assign(&d);
    }
    columns
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (hand, theta, us) = Hand::new(input)?;
    match function {
        "objective" => {
            let (err, t) = repeat(input, || objective(&theta, &us, &hand));
            Ok((Value::from(err.to_vec()), t))
        }
        "jacobian" => {
            let (columns, t) = repeat(input, || jacobian(&hand, &theta, &us));
            let rows: Vec<Vec<f64>> = columns.columns().into_iter().map(|c| c.to_vec()).collect();
            Ok((Value::from(rows), t))
        }
        other => Err(unknown("ht", other)),
    }
}
