//! The backstop behind "the macro never panics": a panic inside the
//! compiler is a bug in `ad`, not in the user's code, so it becomes an
//! error at the function's name. The function itself is still emitted as
//! written and its derivatives as stubs, so the crate reports every other
//! error in the same build.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// `f()`, or the message it panicked with.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into())
    })
}

/// What the user reads when the compiler panicked on their function.
pub fn internal_error(panic: &str) -> String {
    format!(
        "`#[differentiable]` failed on this function with an internal error ({panic}): \
         this is a bug in `ad`, please report it with the function. Meanwhile, move the \
         part it fails on into a function with hand-written `_vjp` and `_jvp` (a custom rule)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_its_message() {
        assert_eq!(guarded(|| 1 + 1), Ok(2));
        assert_eq!(guarded(|| -> () { panic!("static") }), Err("static".into()));
        let n = 3;
        assert_eq!(
            guarded(|| -> () { panic!("formatted {n}") }),
            Err("formatted 3".into())
        );
    }
}
