//! `ba`: bundle adjustment (ADBench's): the reprojection error of each
//! observation of a point by a camera, a weight error per observation, and
//! the Jacobian of both as a sparse matrix in GradBench's COO order.
//!
//! Each observation's reprojection error depends on one camera's 11
//! parameters, one point's 3 coordinates and its weight: its two rows of the
//! Jacobian are two gradients of `reprojection` (one per image coordinate).
//! Cameras and points are `#[derive(Differentiable)]` structs of scalars, so
//! a gradient allocates nothing.

use ad::{differentiable, Differentiable};
use serde_json::{json, Value};

use super::{count, unknown, vector, Evaluated};
use crate::runs::repeat;

/// Rotation (angle-axis `r`), centre `c`, focal length `f`, principal
/// point `u`, radial distortion `k`.
#[derive(Clone, Debug, Differentiable)]
pub struct Camera {
    pub r0: f64,
    pub r1: f64,
    pub r2: f64,
    pub c0: f64,
    pub c1: f64,
    pub c2: f64,
    pub f: f64,
    pub u0: f64,
    pub u1: f64,
    pub k0: f64,
    pub k1: f64,
}

#[derive(Clone, Debug, Differentiable)]
pub struct Point {
    pub x0: f64,
    pub x1: f64,
    pub x2: f64,
}

impl Camera {
    fn from_slice(v: &[f64]) -> Self {
        Camera {
            r0: v[0],
            r1: v[1],
            r2: v[2],
            c0: v[3],
            c1: v[4],
            c2: v[5],
            f: v[6],
            u0: v[7],
            u1: v[8],
            k0: v[9],
            k1: v[10],
        }
    }
}

impl CameraTangent {
    fn to_array(&self) -> [f64; 11] {
        [
            self.r0, self.r1, self.r2, self.c0, self.c1, self.c2, self.f, self.u0, self.u1,
            self.k0, self.k1,
        ]
    }
}

/// Coordinate `k` (0 or 1) of the weighted reprojection error: the point
/// moved to the camera's frame (`R (X - C)`, R by Rodrigues' formula),
/// projected, distorted radially, scaled and shifted onto the image, less
/// the observed feature.
#[allow(unused_assignments)] // both branches set the rotated point
#[differentiable]
pub fn reprojection(
    cam: &Camera,
    p: &Point,
    w: f64,
    #[constant] feature: f64,
    #[constant] k: usize,
) -> f64 {
    let x0 = p.x0 - cam.c0;
    let x1 = p.x1 - cam.c1;
    let x2 = p.x2 - cam.c2;
    let squared_angle = cam.r0 * cam.r0 + cam.r1 * cam.r1 + cam.r2 * cam.r2;
    let mut y0 = x0;
    let mut y1 = x1;
    let mut y2 = x2;
    if squared_angle != 0.0 {
        let angle = squared_angle.sqrt();
        let cos = angle.cos();
        let sin = angle.sin();
        let w0 = cam.r0 / angle;
        let w1 = cam.r1 / angle;
        let w2 = cam.r2 / angle;
        let along = (w0 * x0 + w1 * x1 + w2 * x2) * (1.0 - cos);
        y0 = x0 * cos + (w1 * x2 - w2 * x1) * sin + w0 * along;
        y1 = x1 * cos + (w2 * x0 - w0 * x2) * sin + w1 * along;
        y2 = x2 * cos + (w0 * x1 - w1 * x0) * sin + w2 * along;
    } else {
        y0 = x0 + (cam.r1 * x2 - cam.r2 * x1);
        y1 = x1 + (cam.r2 * x0 - cam.r0 * x2);
        y2 = x2 + (cam.r0 * x1 - cam.r1 * x0);
    }
    let p0 = y0 / y2;
    let p1 = y1 / y2;
    let squared_radius = p0 * p0 + p1 * p1;
    let distortion = 1.0 + cam.k0 * squared_radius + cam.k1 * squared_radius * squared_radius;
    let projected = if k == 0 {
        p0 * distortion * cam.f + cam.u0
    } else {
        p1 * distortion * cam.f + cam.u1
    };
    w * (projected - feature)
}

/// The weight error, `1 - w²`.
#[differentiable]
pub fn weight_error(w: f64) -> f64 {
    1.0 - w * w
}

/// The eval's input, expanded as the reference tool does: `n` copies of the
/// camera, `m` of the point, `p` observations of camera `i mod n` and point
/// `i mod m`, each with the weight and the feature.
pub struct Problem {
    pub cameras: Vec<Camera>,
    pub points: Vec<Point>,
    pub weights: Vec<f64>,
    pub features: Vec<[f64; 2]>,
    pub observations: Vec<(usize, usize)>,
}

impl Problem {
    pub fn from_input(input: &Value) -> Result<Self, String> {
        let (n, m, p) = (count(input, "n")?, count(input, "m")?, count(input, "p")?);
        let (cam, x, feat) = (
            vector(input, "cam")?,
            vector(input, "x")?,
            vector(input, "feat")?,
        );
        let w = input
            .get("w")
            .and_then(Value::as_f64)
            .ok_or("the input has no `w`")?;
        if cam.len() != 11 || x.len() != 3 || feat.len() != 2 || n == 0 || m == 0 {
            return Err("`cam` needs 11 numbers, `x` 3, `feat` 2, and n and m one at least".into());
        }
        let camera = Camera::from_slice(cam.as_slice().expect("contiguous"));
        let point = Point {
            x0: x[0],
            x1: x[1],
            x2: x[2],
        };
        Ok(Problem {
            cameras: vec![camera; n],
            points: vec![point; m],
            weights: vec![w; p],
            features: vec![[feat[0], feat[1]]; p],
            observations: (0..p).map(|i| (i % n, i % m)).collect(),
        })
    }

    /// The reprojection errors (two per observation) and weight errors.
    pub fn objective(&self) -> (Vec<f64>, Vec<f64>) {
        let mut reprojection_errors = Vec::with_capacity(2 * self.weights.len());
        for (i, &(c, p)) in self.observations.iter().enumerate() {
            for k in 0..2 {
                reprojection_errors.push(reprojection(
                    &self.cameras[c],
                    &self.points[p],
                    self.weights[i],
                    self.features[i][k],
                    k,
                ));
            }
        }
        let weight_errors = self.weights.iter().map(|&w| weight_error(w)).collect();
        (reprojection_errors, weight_errors)
    }

    /// The Jacobian of the errors with respect to every camera parameter,
    /// point coordinate and weight, in compressed rows: each observation's
    /// two rows (its camera's 11 columns, its point's 3, its weight's), then
    /// one row per weight error.
    pub fn jacobian(&self) -> Sparse {
        let (n, m, p) = (self.cameras.len(), self.points.len(), self.weights.len());
        let mut jac = Sparse::with_capacity(3 * p, 31 * p);
        let index = |i: usize| u32::try_from(i).expect("fewer than 2^32 columns");
        for (i, &(c, q)) in self.observations.iter().enumerate() {
            let mut columns = [0; 15];
            for (j, col) in columns.iter_mut().enumerate() {
                *col = match j {
                    0..11 => index(11 * c + j),
                    11..14 => index(11 * n + 3 * q + j - 11),
                    _ => index(11 * n + 3 * m + i),
                };
            }
            for k in 0..2 {
                let (_, (cam, point, w, ..)) = reprojection_grad(
                    &self.cameras[c],
                    &self.points[q],
                    self.weights[i],
                    self.features[i][k],
                    k,
                );
                let mut values = [0.0; 15];
                values[..11].copy_from_slice(&cam.to_array());
                values[11..].copy_from_slice(&[point.x0, point.x1, point.x2, w]);
                jac.push_row(&columns, &values);
            }
        }
        for (i, &w) in self.weights.iter().enumerate() {
            let (_, (d,)) = weight_error_grad(w);
            jac.push_row(&[index(11 * n + 3 * m + i)], &[d]);
        }
        jac
    }
}

/// A sparse matrix in compressed rows: `rows[r]..rows[r + 1]` index the
/// entries of row `r` in `cols` and `vals` (32-bit indices, as the
/// reference tool's).
pub struct Sparse {
    pub rows: Vec<u32>,
    pub cols: Vec<u32>,
    pub vals: Vec<f64>,
}

impl Sparse {
    fn with_capacity(rows: usize, entries: usize) -> Self {
        let mut r = Vec::with_capacity(rows + 1);
        r.push(0);
        Sparse {
            rows: r,
            cols: Vec::with_capacity(entries),
            vals: Vec::with_capacity(entries),
        }
    }

    fn push_row(&mut self, cols: &[u32], vals: &[f64]) {
        self.cols.extend_from_slice(cols);
        self.vals.extend_from_slice(vals);
        self.rows
            .push(u32::try_from(self.cols.len()).expect("fewer than 2^32 entries"));
    }
}

/// The first 30 entries of `v` and its last, as the eval compares them.
fn head_and_last<T: Copy + Into<Value>>(v: &[T]) -> Value {
    let mut out: Vec<Value> = v.iter().take(30).map(|&x| x.into()).collect();
    out.extend(v.last().map(|&x| x.into()));
    Value::from(out)
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let problem = Problem::from_input(input)?;
    match function {
        "objective" => {
            let ((reprojection, weight), t) = repeat(input, || problem.objective());
            let output = json!({
                "reproj_error": { "elements": &reprojection[..2.min(reprojection.len())], "repeated": reprojection.len() / 2 },
                "w_err": { "element": weight.first(), "repeated": weight.len() },
            });
            Ok((output, t))
        }
        "jacobian" => {
            let (jac, t) = repeat(input, || problem.jacobian());
            let output = json!({
                "rows": head_and_last(&jac.rows),
                "cols": head_and_last(&jac.cols),
                "vals": head_and_last(&jac.vals),
            });
            Ok((output, t))
        }
        other => Err(unknown("ba", other)),
    }
}
