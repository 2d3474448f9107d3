//! Per-sample gradients in parallel: samples of different sizes go to
//! different threads, each gradient is an ordinary call (no shared tape, no
//! cache to resize), and the results are summed in sample order, so the sum
//! is the same, bit for bit, whatever the number of threads.
//!
//! ```
//! use ad_runtime::parallel::sum_gradients;
//!
//! let samples = vec![1.0, 2.0, 3.0];
//! // d/dw (w x)^2 = 2 w x^2 at w = 0.5
//! let (loss, grad) = sum_gradients(&samples, |x| (0.25 * x * x, x * x)).unwrap();
//! assert_eq!((loss, grad), (0.25 * 14.0, 14.0));
//! ```

use rayon::prelude::*;

use crate::TangentSpace;

/// The sum of `f`'s (loss, gradient) over `samples`, computed in parallel
/// and added in order; `None` for no samples.
pub fn sum_gradients<S, T, F>(samples: &[S], f: F) -> Option<(f64, T)>
where
    S: Sync,
    T: TangentSpace + Send,
    F: Fn(&S) -> (f64, T) + Sync,
{
    let parts: Vec<(f64, T)> = samples.par_iter().map(&f).collect();
    let mut parts = parts.into_iter();
    let (mut loss, mut grad) = parts.next()?;
    for (l, g) in parts {
        loss += l;
        grad.add_assign(&g);
    }
    Some((loss, grad))
}
