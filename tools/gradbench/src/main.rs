//! The GradBench tool binary: answers each message line on stdin with one
//! response line on stdout, until stdin closes.

use std::io::{BufRead, Write};

fn main() {
    keep_freed_memory();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let response = ad_gradbench::protocol::respond(&line);
        if writeln!(stdout, "{response}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            break;
        }
    }
}

/// Keeps the memory the process frees for its next allocations.
///
/// glibc's `malloc` hands the top of its heap back to the kernel whenever
/// more than 128 KiB of it is free, and serves blocks from 128 KiB up (a
/// threshold it raises as they are freed) with fresh mappings of their own.
/// A reverse-mode derivative frees its whole tape when it returns, so on
/// every call after the first the memory went back and the next call takes a
/// page fault per page it touches again: two thirds of `ode`'s gradient at
/// n = 100,000, a fifth of `gmm`'s Jacobian (docs/gradbench.md). Trimming
/// off, and blocks up to glibc's largest threshold (32 MiB) from the heap,
/// as a program that calls a derivative many times would choose. Elsewhere (no
/// glibc) the allocator is left as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // glibc's `mallopt` parameters (<malloc.h>).
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_MMAP_THRESHOLD: i32 = -3;
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // SAFETY: `mallopt` only sets allocator parameters; it is called before
    // any thread starts, and a rejected value leaves the default in place.
    unsafe {
        mallopt(M_TRIM_THRESHOLD, -1);
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
