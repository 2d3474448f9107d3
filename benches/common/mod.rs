//! What the benchmarks (and the tape memory test) share: a counting
//! allocator, deterministic inputs, and criterion's mean times.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ad::check::Rng;
use ad::ndarray::{Array, ShapeBuilder};

/// Counts allocations and allocated bytes (reallocation growth included).
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size.saturating_sub(layout.size()), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, bytes) that `f` makes.
pub fn allocated(f: impl FnOnce()) -> (usize, usize) {
    let (a, b) = (
        ALLOCATIONS.load(Ordering::SeqCst),
        BYTES.load(Ordering::SeqCst),
    );
    f();
    (
        ALLOCATIONS.load(Ordering::SeqCst) - a,
        BYTES.load(Ordering::SeqCst) - b,
    )
}

/// A deterministic array of the given shape with entries in [-1, 1).
pub fn random<Sh: ShapeBuilder>(shape: Sh, seed: u64) -> Array<f64, Sh::Dim> {
    let mut rng = Rng::new(seed);
    Array::from_shape_simple_fn(shape, || rng.uniform())
}

/// The mean time of one benchmark in nanoseconds, from criterion's estimates.
pub fn mean_ns(group: &str, function: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!(
        "target/criterion/{group}/{function}/new/estimates.json"
    ))
    .ok()?;
    let rest = &text[text.find("\"mean\"")?..];
    let p = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let end = rest[p..].find([',', '}'])?;
    rest[p..p + end].trim().parse().ok()
}

/// The (primal, generated, hand-written) mean times of a group.
pub fn group_times(group: &str) -> Option<(f64, f64, f64)> {
    Some((
        mean_ns(group, "primal")?,
        mean_ns(group, "generated")?,
        mean_ns(group, "hand-written")?,
    ))
}

/// The ratio of `a`'s time to `b`'s, measured in alternation: batches of
/// `a` and of `b` (each about a millisecond) take turns for `rounds` rounds,
/// and the ratio of each pair is one sample. Criterion times one function
/// after the other, so a machine whose speed drifts during a run (a shared
/// virtual machine) skews the ratio of two means; a pair measured within a
/// few milliseconds of each other is not skewed. Returns the median and the
/// quartiles of the per-round ratios.
pub fn interleaved_ratio(mut a: impl FnMut(), mut b: impl FnMut(), rounds: usize) -> Ratio {
    use std::time::Instant;
    let batch = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed().as_micros() < 1000 {
            f();
            n += 1;
        }
        n.max(1)
    };
    let (na, nb) = (batch(&mut a), batch(&mut b));
    let time = |f: &mut dyn FnMut(), n: u32| {
        let start = Instant::now();
        for _ in 0..n {
            f();
        }
        start.elapsed().as_secs_f64() / n as f64
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| time(&mut a, na) / time(&mut b, nb))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    Ratio {
        median: at(0.5),
        low: at(0.25),
        high: at(0.75),
    }
}

/// A ratio's median and quartiles over rounds.
pub struct Ratio {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} ({:.2}–{:.2})", self.median, self.low, self.high)
    }
}

/// A criterion configuration that regenerates the tables in minutes.
pub fn config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
        .configure_from_args()
}
