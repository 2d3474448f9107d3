//! The workloads in burn: `Autodiff<NdArray<f64>>` tensors created as
//! `f64` explicitly, parameters marked `require_grad` once, the gradient by
//! `backward`.

use burn_autodiff::Autodiff;
use burn_ndarray::{NdArray, NdArrayDevice};
use burn_tensor::activation::relu;
use burn_tensor::{Tensor, TensorData};

use super::{slice, Workload};

type B = Autodiff<NdArray<f64>>;

fn t1(data: &[f64]) -> Tensor<B, 1> {
    Tensor::from_data(
        TensorData::new(data.to_vec(), [data.len()]),
        &NdArrayDevice::Cpu,
    )
}

fn t2(data: &[f64], rows: usize, cols: usize) -> Tensor<B, 2> {
    Tensor::from_data(
        TensorData::new(data.to_vec(), [rows, cols]),
        &NdArrayDevice::Cpu,
    )
}

fn values<const D: usize>(t: Tensor<NdArray<f64>, D>) -> Vec<f64> {
    t.into_data().to_vec::<f64>().expect("f64 values")
}

/// A workload's tensors, made once (as a training loop keeps them); each
/// gradient clones the handles, which burn's operations consume.
pub struct Prepared<'a> {
    workload: &'a Workload,
    params: Vec<Tensor<B, 2>>,
    constants: Vec<Tensor<B, 2>>,
    vector: Option<Tensor<B, 1>>,
}

impl<'a> Prepared<'a> {
    pub fn new(workload: &'a Workload) -> Self {
        let (params, constants, vector) = match workload {
            Workload::Mlp { w1, b1, w2, x, y } => (
                vec![
                    t2(&slice(w1), 32, 16).require_grad(),
                    t2(&slice(b1), 1, 32).require_grad(),
                    t2(&slice(w2), 32, 1).require_grad(),
                ],
                vec![t2(&slice(x), x.nrows(), 16), t2(&slice(y), y.len(), 1)],
                None,
            ),
            Workload::Bag {
                w1,
                b1,
                w2,
                b2,
                bag,
                label,
            } => (
                vec![
                    t2(&slice(w1), w1.nrows(), w1.ncols()).require_grad(),
                    t2(&slice(b1), 1, b1.len()).require_grad(),
                    t2(&slice(w2), w2.len(), 1).require_grad(),
                    t2(&[*b2], 1, 1).require_grad(),
                ],
                vec![
                    t2(&slice(bag), bag.nrows(), bag.ncols()),
                    t2(&[*label], 1, 1),
                ],
                None,
            ),
            Workload::LogSumExp { x } | Workload::Rosenbrock { x } => {
                (Vec::new(), Vec::new(), Some(t1(&slice(x)).require_grad()))
            }
        };
        Prepared {
            workload,
            params,
            constants,
            vector,
        }
    }

    /// The loss and its flat gradient.
    pub fn gradient(&self) -> (f64, Vec<f64>) {
        let p = &self.params;
        let c = &self.constants;
        let vector = || self.vector.clone().expect("a vector input");
        let loss = match self.workload {
            Workload::Mlp { y, .. } => {
                let h = (c[0].clone().matmul(p[0].clone().transpose()) + p[1].clone()).tanh();
                let r = h.matmul(p[2].clone()) - c[1].clone();
                r.square().sum().div_scalar(y.len() as f64)
            }
            Workload::Bag { .. } => {
                let h = relu(c[0].clone().matmul(p[0].clone()) + p[1].clone());
                let z = h.mean_dim(0).matmul(p[2].clone()) + p[3].clone();
                let softplus = relu(z.clone()) + z.clone().abs().neg().exp().log1p();
                (softplus - z * c[1].clone()).sum()
            }
            Workload::LogSumExp { .. } => {
                let x = vector();
                let m = x.clone().max_dim(0).detach();
                (x - m.clone()).exp().sum().log() + m
            }
            #[allow(clippy::single_range_in_vec_init)] // burn slices by an array of ranges
            Workload::Rosenbrock { x } => {
                let n = x.len();
                let x = vector();
                let head = x.clone().slice([0..n - 1]);
                let tail = x.slice([1..n]);
                let a = head.clone().neg().add_scalar(1.0);
                let b = tail - head.square();
                (a.square() + b.square().mul_scalar(100.0)).sum()
            }
        };
        let grads = loss.backward();
        let flat = match &self.vector {
            Some(x) => values(x.grad(&grads).expect("a gradient")),
            None => p
                .iter()
                .flat_map(|t| values(t.grad(&grads).expect("a gradient")))
                .collect(),
        };
        (loss.into_scalar(), flat)
    }
}
