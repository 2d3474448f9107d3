//! An item of an inactive local that a differentiated chain reads by index
//! (`names.iter().map(|c| ..)` over a `Vec` the body made, or over a
//! `match` arm's binding): a copy where the item is `Copy` (a float or an
//! index, which the reverse sweep may keep beyond the local's borrow),
//! else a reference, the item as the closure would receive it (`&Node`,
//! passed on to a call of a recursive function).
//!
//! The choice is by autoref specialisation: `(&&Kept(&item)).kept()`
//! finds [`KeptCopy`]'s method first where `T: Copy`, else derefs once to
//! [`KeptRef`]'s.

/// A reference to the item, for [`KeptCopy`] and [`KeptRef`] to take.
pub struct Kept<'a, T: ?Sized>(pub &'a T);

/// The item copied.
pub trait KeptCopy<T> {
    fn kept(self) -> T;
}

impl<T: Copy> KeptCopy<T> for &&Kept<'_, T> {
    #[inline(always)]
    fn kept(self) -> T {
        *self.0
    }
}

/// The item by reference.
pub trait KeptRef<'a, T: ?Sized> {
    fn kept(self) -> &'a T;
}

impl<'a, T: ?Sized> KeptRef<'a, T> for &Kept<'a, T> {
    #[inline(always)]
    fn kept(self) -> &'a T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Node(usize);

    #[test]
    // The borrows are the dispatch, not needless.
    #[allow(clippy::needless_borrow)]
    fn copies_a_copy_item_and_borrows_another() {
        let (x, node) = (2.5_f64, Node(3));
        let copied: f64 = (&&Kept(&x)).kept();
        let borrowed: &Node = (&&Kept(&node)).kept();
        assert_eq!(copied, 2.5);
        assert_eq!(borrowed.0, 3);
    }
}
