//! The workloads in candle: parameters as `Var`s, the loss as tensor
//! operations, the gradient by `backward`.

use candle_core::{DType, Device, Tensor, Var};

use super::{slice, Workload};

fn tensor(data: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape, &Device::Cpu).expect("a tensor")
}

fn var(data: &[f64], shape: &[usize]) -> Var {
    Var::from_tensor(&tensor(data, shape)).expect("a variable")
}

/// A workload's tensors, made once (as a training loop would keep them).
pub struct Prepared<'a> {
    workload: &'a Workload,
    vars: Vec<Var>,
    constants: Vec<Tensor>,
}

impl<'a> Prepared<'a> {
    pub fn new(workload: &'a Workload) -> Self {
        let (vars, constants) = match workload {
            Workload::Mlp { w1, b1, w2, x, y } => (
                vec![
                    var(&slice(w1), &[32, 16]),
                    var(&slice(b1), &[32]),
                    var(&slice(w2), &[32, 1]),
                ],
                vec![
                    tensor(&slice(x), &[x.nrows(), 16]),
                    tensor(&slice(y), &[y.len(), 1]),
                ],
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
                    var(&slice(w1), &[w1.nrows(), w1.ncols()]),
                    var(&slice(b1), &[b1.len()]),
                    var(&slice(w2), &[w2.len(), 1]),
                    var(&[*b2], &[1]),
                ],
                vec![
                    tensor(&slice(bag), &[bag.nrows(), bag.ncols()]),
                    tensor(&[*label], &[1]),
                ],
            ),
            Workload::LogSumExp { x } | Workload::Rosenbrock { x } => {
                (vec![var(&slice(x), &[x.len()])], vec![])
            }
        };
        Prepared {
            workload,
            vars,
            constants,
        }
    }

    fn loss(&self) -> candle_core::Result<Tensor> {
        let v: Vec<&Tensor> = self.vars.iter().map(|v| v.as_tensor()).collect();
        let c = &self.constants;
        match self.workload {
            Workload::Mlp { y, .. } => {
                let h = c[0].matmul(&v[0].t()?)?.broadcast_add(v[1])?.tanh()?;
                let r = (h.matmul(v[2])? - &c[1])?;
                r.sqr()?.sum_all()? / y.len() as f64
            }
            Workload::Bag { .. } => {
                let h = c[0].matmul(v[0])?.broadcast_add(v[1])?.relu()?;
                let pooled = h.mean_keepdim(0)?;
                let z = (pooled.matmul(v[2])?.squeeze(1)? + v[3])?;
                let softplus = (z.relu()? + (z.abs()?.neg()?.exp()? + 1.0)?.log()?)?;
                (softplus - (z * &c[1])?)?.sum_all()
            }
            Workload::LogSumExp { .. } => {
                let m = v[0].max_keepdim(0)?.detach();
                v[0].broadcast_sub(&m)?.exp()?.sum_all()?.log()? + m.squeeze(0)?
            }
            Workload::Rosenbrock { x } => {
                let n = x.len();
                let (head, tail) = (v[0].narrow(0, 0, n - 1)?, v[0].narrow(0, 1, n - 1)?);
                let a = head.affine(-1.0, 1.0)?;
                let b = (tail - head.sqr()?)?;
                (a.sqr()? + (b.sqr()? * 100.0)?)?.sum_all()
            }
        }
    }

    /// The loss and its flat gradient.
    pub fn gradient(&self) -> (f64, Vec<f64>) {
        let loss = self.loss().expect("the loss");
        let grads = loss.backward().expect("backward");
        let mut flat = Vec::new();
        for v in &self.vars {
            let g = grads.get(v.as_tensor()).expect("a gradient");
            flat.extend(
                g.flatten_all()
                    .and_then(|g| g.to_dtype(DType::F64))
                    .and_then(|g| g.to_vec1::<f64>())
                    .expect("values"),
            );
        }
        (loss.to_scalar::<f64>().expect("a scalar loss"), flat)
    }
}
