//! How a pullback receives the output cotangent: a value's last pullback
//! takes it by value (and may reuse its buffer), earlier ones borrow it, so
//! a pullback that only reads (a reduction, a matrix product) copies nothing.

/// An output cotangent, owned or borrowed.
pub enum Cot<'a, T> {
    Owned(T),
    Borrowed(&'a T),
}

impl<T: Clone> Cot<'_, T> {
    /// The cotangent to consume: moved if owned, cloned if borrowed.
    #[inline(always)]
    pub fn owned(self) -> T {
        match self {
            Cot::Owned(t) => t,
            Cot::Borrowed(t) => t.clone(),
        }
    }
}

impl<T> Cot<'_, T> {
    #[inline(always)]
    pub fn get(&self) -> &T {
        match self {
            Cot::Owned(t) => t,
            Cot::Borrowed(t) => t,
        }
    }
}

/// What generated code passes: `y_bar` or `&y_bar`.
pub trait IntoCot<'a, T> {
    fn into_cot(self) -> Cot<'a, T>;
}

impl<'a, T> IntoCot<'a, T> for T {
    #[inline(always)]
    fn into_cot(self) -> Cot<'a, T> {
        Cot::Owned(self)
    }
}

impl<'a, T> IntoCot<'a, T> for &'a T {
    #[inline(always)]
    fn into_cot(self) -> Cot<'a, T> {
        Cot::Borrowed(self)
    }
}
