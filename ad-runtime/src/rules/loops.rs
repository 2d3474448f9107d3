//! What loops keep for the reverse sweep: tapes of known length, stacks
//! shared by every run of an inner loop, and ranges replayed backwards
//! instead of saving the index of every iteration.

/// A loop's tape when the macro sees the loop runs over a range, whose
/// length is known before the first iteration: filled without a growth
/// path, so the loop body makes no call that would spill its registers. A
/// range that yields more items than it said panics; it never writes out of
/// bounds.
pub struct Tape<T> {
    items: Vec<T>,
}

impl<T> Tape<T> {
    /// A tape for an iterator with this size hint: room for the exact
    /// length when the hint gives one, growing from the lower bound otherwise.
    #[inline]
    pub fn with_hint((lower, upper): (usize, Option<usize>)) -> Self {
        Tape {
            items: Vec::with_capacity(upper.unwrap_or(lower).max(lower)),
        }
    }

    #[inline(always)]
    pub fn push(&mut self, item: T) {
        let len = self.items.len();
        if len == self.items.capacity() {
            tape_overflow();
        }
        // SAFETY: `len < capacity`, so the slot is allocated and unused; the
        // length grows only after the write.
        unsafe {
            self.items.as_mut_ptr().add(len).write(item);
            self.items.set_len(len + 1);
        }
    }
}

impl<T> IntoIterator for Tape<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// The last `n` records on a loop's stack, last first: the entries one run
/// of an inner loop pushed, for its reverse sweep.
#[inline(always)]
pub fn pop_n<T>(stack: &mut Vec<T>, n: usize) -> std::iter::Rev<std::vec::Drain<'_, T>> {
    let start = stack.len() - n;
    stack.drain(start..).rev()
}

#[cold]
#[inline(never)]
fn tape_overflow() -> ! {
    panic!("a loop ran more iterations than its iterator's size hint promised")
}

/// Room on an inner loop's stack for a run of `hint` records. The first run
/// reserves for `runs` of them (the enclosing loop's iteration count), so
/// the stack grows once rather than doubling through the outer loop.
#[inline(always)]
pub fn reserve_runs<T>(stack: &mut Vec<T>, hint: usize, runs: usize) {
    if stack.capacity() == 0 {
        stack.reserve(hint.saturating_mul(runs.max(1)));
    } else {
        stack.reserve(hint);
    }
}

/// Pushes a record onto an inner loop's stack that `reserve_runs` made
/// room for (the loop runs over a range, whose length is exact): no growth
/// path, so the loop body makes no call that would make it spill the values
/// it carries to memory. A range that yields more items than it said panics;
/// it never writes out of bounds.
#[inline(always)]
pub fn push_reserved<T>(stack: &mut Vec<T>, item: T) {
    let len = stack.len();
    if len == stack.capacity() {
        tape_overflow();
    }
    // SAFETY: `len < capacity`, so the slot is allocated and unused; the
    // length grows only after the write.
    unsafe {
        stack.as_mut_ptr().add(len).write(item);
        stack.set_len(len + 1);
    }
}

/// The values a range loop ran over, last first: the reverse sweep of a
/// loop over `a..b` (or `a..=b`, reversed, stepped) that ran to its end
/// iterates this instead of saving each index.
#[inline(always)]
pub fn replay<R: Replay>(range: R) -> R::Backwards {
    range.backwards()
}

/// An iterator the reverse sweep can run backwards.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be iterated backwards for the reverse sweep",
    note = "this is a bug in `ad`: the loop was taken for a range; please report it"
)]
pub trait Replay: Iterator {
    type Backwards: Iterator<Item = Self::Item>;
    fn backwards(self) -> Self::Backwards;
}

impl<I> Replay for std::ops::Range<I>
where
    std::ops::Range<I>: DoubleEndedIterator,
{
    type Backwards = std::iter::Rev<Self>;
    #[inline(always)]
    fn backwards(self) -> Self::Backwards {
        self.rev()
    }
}

impl<I> Replay for std::ops::RangeInclusive<I>
where
    std::ops::RangeInclusive<I>: DoubleEndedIterator,
{
    type Backwards = std::iter::Rev<Self>;
    #[inline(always)]
    fn backwards(self) -> Self::Backwards {
        self.rev()
    }
}

impl<I: DoubleEndedIterator> Replay for std::iter::Rev<I> {
    type Backwards = std::iter::Rev<Self>;
    #[inline(always)]
    fn backwards(self) -> Self::Backwards {
        self.rev()
    }
}

/// A stepped range runs backwards only where its length is known
/// (`usize` ranges, say); the values are collected instead, which serves
/// every integer type.
impl<I: Iterator> Replay for std::iter::StepBy<I> {
    type Backwards = std::iter::Rev<std::vec::IntoIter<I::Item>>;
    fn backwards(self) -> Self::Backwards {
        self.collect::<Vec<_>>().into_iter().rev()
    }
}
