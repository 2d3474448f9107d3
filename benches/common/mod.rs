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

/// A criterion configuration that regenerates the tables in minutes.
pub fn config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
        .configure_from_args()
}
