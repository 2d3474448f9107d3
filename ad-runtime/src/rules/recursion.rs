//! Pullbacks of a function's calls of itself.

/// The pullback of a recursive call, behind a pointer: a pullback that kept
/// its own callee's pullback by value would be a type containing itself,
/// which Rust rejects ("opaque type expands to a recursive type"). Boxed,
/// it is a `dyn FnOnce`, whose type does not depend on what it holds. The
/// marker names the box's lifetime: a lifetime the derivative function
/// declares, as the pullback it returns may only hold those.
#[inline(always)]
pub fn boxed_pullback<'a, C, G>(
    pullback: impl FnOnce(C) -> G + 'a,
    _lifetime: core::marker::PhantomData<&'a ()>,
) -> Box<dyn FnOnce(C) -> G + 'a> {
    Box::new(pullback)
}
