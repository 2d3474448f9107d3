//! Operations on a value nothing reads afterwards take over its buffer:
//! `(x.dot(&w) + &b).mapv(f64::tanh)` allocates once, not three times. The
//! macro passes such a value by value (`rules::add_in_place(t2, view(&b))`,
//! `rules::tanh(rules::in_place(t3))`); the result is the same as the
//! ordinary rule's, in the operand's memory when it has the result's shape.
//!
//! ```text
//! y = a op b      a has y's shape: a[i] = a[i] op b[i] (b broadcast), y = a
//!                 otherwise (a is broadcast): a new array, as `op` gives
//! y = a op b      (`op_in_place_rhs`, b by value, when a is read again)
//!                 b has y's shape: b[i] = a[i] op b[i], y = b
//! y = f(a)        a[i] = f(a[i]), y = a
//! ```

use ndarray::{Array, ArrayView, DimMax, Dimension, Ix0, Zip};

use super::arith::ArithOp;
use super::broadcast::co_dim;
use super::elementwise::Elementwise;
use crate::{Float, Operand};

/// An owned array an element-wise function may overwrite.
#[derive(Clone)]
pub struct InPlace<F, D>(Array<F, D>);

/// A value whose buffer an element-wise function may reuse: the array
/// itself, or a scalar (which has none).
pub trait Reusable {
    type InPlace: Elementwise<Owned = Self>;
    fn in_place(self) -> Self::InPlace;
}

impl<F: Float> Reusable for F {
    type InPlace = F;
    #[inline(always)]
    fn in_place(self) -> F {
        self
    }
}

impl<F: Float, D: Dimension> Reusable for Array<F, D> {
    type InPlace = InPlace<F, D>;
    #[inline(always)]
    fn in_place(self) -> InPlace<F, D> {
        InPlace(self)
    }
}

/// `x` as an operand an element-wise rule maps in place.
#[inline(always)]
pub fn in_place<T: Reusable>(x: T) -> T::InPlace {
    x.in_place()
}

impl<F: Float, D: Dimension> Operand for InPlace<F, D> {
    type Elem = F;
    type Dim = D;
    type Owned = Array<F, D>;
    fn as_array(&self) -> ArrayView<'_, F, D> {
        self.0.view()
    }
    fn from_array(a: Array<F, D>) -> Array<F, D> {
        a
    }
    fn to_owned(self) -> Array<F, D> {
        self.0
    }
}

impl<F: Float, D: Dimension> Elementwise for InPlace<F, D> {
    #[inline]
    fn map(self, f: impl Fn(F) -> F) -> Array<F, D> {
        self.0.mapv_into(f)
    }
    fn scale_by(self, dy: Array<F, D>, d: impl Fn(F) -> F) -> Array<F, D> {
        self.0.view().scale_by(dy, d)
    }
    fn push(self, dx: Self, d: impl Fn(F) -> F) -> Array<F, D> {
        self.0.view().push(dx.0.view(), d)
    }
}

/// `a op b` with `a` taken by value: the family of `Arith`, in `a`'s buffer
/// where it can; `b op a` when `flip` (`a` is then the right operand, as in
/// `y + t` for a temporary `t`).
#[diagnostic::on_unimplemented(
    message = "no derivative rule for arithmetic between `{Self}` and `{B}`",
    label = "`ad` differentiates `+ - * /` between scalars and ndarray arrays of one float type"
)]
pub trait ArithInPlace<B>: Sized {
    type Output;
    fn apply_in_place(op: ArithOp, a: Self, b: B, flip: bool) -> Self::Output;
}

/// Runs `$body` with `$f` the element-wise operation on `x`, the buffer's
/// element, and `y`, the other operand's: one closure per operation, so
/// each loop is compiled for one, whether the rule is inlined or not.
macro_rules! with_element {
    ($op:expr, $flip:expr, |$f:ident: $F:ty| $body:expr) => {
        match ($op, $flip) {
            (ArithOp::Add, _) => {
                let $f = |x: $F, y: $F| x + y;
                $body
            }
            (ArithOp::Mul, _) => {
                let $f = |x: $F, y: $F| x * y;
                $body
            }
            (ArithOp::Sub, false) => {
                let $f = |x: $F, y: $F| x - y;
                $body
            }
            (ArithOp::Sub, true) => {
                let $f = |x: $F, y: $F| y - x;
                $body
            }
            (ArithOp::Div, false) => {
                let $f = |x: $F, y: $F| x / y;
                $body
            }
            (ArithOp::Div, true) => {
                let $f = |x: $F, y: $F| y / x;
                $body
            }
        }
    };
}

pub(super) use with_element;

impl<F: Float> ArithInPlace<F> for F {
    type Output = F;
    #[inline(always)]
    fn apply_in_place(op: ArithOp, a: F, b: F, flip: bool) -> F {
        with_element!(op, flip, |f: F| f(a, b))
    }
}

/// A scalar has no buffer to give.
impl<'b, F: Float, E: Dimension> ArithInPlace<ArrayView<'b, F, E>> for F
where
    Ix0: DimMax<E, Output = E>,
{
    type Output = Array<F, E>;
    #[inline(always)]
    fn apply_in_place(op: ArithOp, a: F, b: ArrayView<'b, F, E>, flip: bool) -> Array<F, E> {
        with_element!(op, flip, |f: F| b.mapv(|y| f(a, y)))
    }
}

impl<F: Float, D: Dimension> ArithInPlace<F> for Array<F, D>
where
    D: DimMax<Ix0, Output = D>,
{
    type Output = Array<F, D>;
    #[inline(always)]
    fn apply_in_place(op: ArithOp, a: Array<F, D>, b: F, flip: bool) -> Array<F, D> {
        with_element!(op, flip, |f: F| a.mapv_into(|x| f(x, b)))
    }
}

impl<'b, F: Float, D: Dimension + DimMax<E>, E: Dimension> ArithInPlace<ArrayView<'b, F, E>>
    for Array<F, D>
{
    type Output = Array<F, <D as DimMax<E>>::Output>;
    #[inline(always)]
    fn apply_in_place(
        op: ArithOp,
        a: Array<F, D>,
        b: ArrayView<'b, F, E>,
        flip: bool,
    ) -> Array<F, <D as DimMax<E>>::Output> {
        let co = co_dim(&a.raw_dim(), &b.raw_dim());
        if co.slice() != a.shape() {
            // `a` is the side broadcast: the result is larger than it, a
            // new array made in one pass.
            let (a, b) = (
                a.broadcast(co.clone())
                    .expect("operands that broadcast together"),
                b.broadcast(co.clone())
                    .expect("operands that broadcast together"),
            );
            return with_element!(op, flip, |f: F| Zip::from(&a)
                .and(&b)
                .map_collect(|&x, &y| f(x, y)));
        }
        let mut y: Array<F, <D as DimMax<E>>::Output> = a
            .into_dimensionality()
            .expect("the result has the operand's shape, so its rank");
        with_element!(op, flip, |f: F| y.zip_mut_with(&b, |x, &y| *x = f(*x, y)));
        y
    }
}

macro_rules! in_place_fns {
    ($($op:ident $name:ident $rhs:ident;)*) => {$(
        #[doc = concat!("`a ", stringify!($op), " b` in `a`'s buffer where it can (see the module).")]
        #[inline(always)]
        pub fn $name<A: ArithInPlace<B>, B: Operand>(a: A, b: B) -> A::Output {
            A::apply_in_place(ArithOp::$op, a, b, false)
        }
        #[doc = concat!("`a ", stringify!($op), " b` in `b`'s buffer where it can (see the module).")]
        #[inline(always)]
        pub fn $rhs<A, B: ArithInPlace<A>>(a: A, b: B) -> B::Output {
            B::apply_in_place(ArithOp::$op, b, a, true)
        }
    )*};
}

in_place_fns! {
    Add add_in_place add_in_place_rhs;
    Sub sub_in_place sub_in_place_rhs;
    Mul mul_in_place mul_in_place_rhs;
    Div div_in_place div_in_place_rhs;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{add, tanh, view};
    use ndarray::{array, Array1, Array2};

    #[test]
    fn the_same_values_as_the_ordinary_rules() {
        let a: Array2<f64> = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b: Array1<f64> = array![0.5, -1.0, 2.0];
        let expected = add(view(&a), view(&b));
        let ptr = a.as_ptr();
        let got = add_in_place(a.clone(), view(&b));
        assert_eq!(got, expected);
        let reused = add_in_place(a, view(&b));
        assert_eq!(reused.as_ptr(), ptr, "the operand's buffer is reused");
        // The operand is the one broadcast: a new array.
        let wide = add_in_place(b.clone(), view(&expected));
        assert_eq!(wide, add(view(&b), view(&expected)));
        assert_eq!(mul_in_place(b.clone(), 2.0), &b * 2.0);
        assert_eq!(div_in_place(3.0, 2.0), 1.5);
        assert_eq!(tanh(in_place(b.clone())), b.mapv(f64::tanh));
        assert_eq!(tanh(in_place(0.5f64)), 0.5f64.tanh());
    }

    #[test]
    fn the_right_operand_gives_its_buffer_as_the_left_does() {
        use crate::rules::{div, sub};
        let a: Array2<f64> = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b: Array1<f64> = array![0.5, -1.0, 2.0];
        let wide = &a * 3.0;
        let ptr = wide.as_ptr();
        let got = sub_in_place_rhs(view(&a), wide.clone());
        assert_eq!(got, sub(view(&a), view(&wide)));
        let reused = div_in_place_rhs(view(&a), wide.clone());
        assert_eq!(reused, div(view(&a), view(&wide)));
        let reused = add_in_place_rhs(view(&a), wide);
        assert_eq!(reused.as_ptr(), ptr, "the operand's buffer is reused");
        // The operand is the one broadcast: a new array.
        assert_eq!(
            sub_in_place_rhs(view(&a), b.clone()),
            sub(view(&a), view(&b))
        );
        assert_eq!(sub_in_place_rhs(1.0, b.clone()), sub(1.0, view(&b)));
        assert_eq!(div_in_place_rhs(view(&b), 2.0), &b / 2.0);
        assert_eq!(sub_in_place_rhs(3.0, 2.0), 1.0);
    }
}
