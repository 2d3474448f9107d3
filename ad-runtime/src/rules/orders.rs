//! The positions a reordered `Vec` of active values reads its items from.
//!
//! `hs.sort_by(compare)`, `hs.swap(i, j)`, `hs.swap_remove(i)`,
//! `hs.rotate_left(k)`, `hs.retain(keep)`, `hs.dedup()` and what
//! `hs.drain(a..b)` leaves are differentiated as `hs =
//! order.iter().map(|&i| hs[i].to_owned()).collect()`: the new list
//! gathers items of the old
//! one, so its reverse sweep scatters each cotangent back to where its
//! item came from. The positions are found here, on the values alone, and
//! carry no derivative (like a comparison).

use core::cmp::Ordering;

/// The order `list.sort_by(compare)` (`stable`) or
/// `list.sort_unstable_by(compare)` puts the items in: their positions,
/// sorted by comparing the items.
pub fn sort_order<T>(
    list: &[T],
    stable: bool,
    mut compare: impl FnMut(&T, &T) -> Ordering,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..list.len()).collect();
    let by = |&i: &usize, &j: &usize| compare(&list[i], &list[j]);
    if stable {
        order.sort_by(by);
    } else {
        order.sort_unstable_by(by);
    }
    order
}

/// The positions of `list.swap(i, j)`: every item in place but `i` and
/// `j`, exchanged. Panics, as `swap` does, if either is out of bounds.
pub fn swapped_order<T>(list: &[T], i: usize, j: usize) -> Vec<usize> {
    let len = list.len();
    for at in [i, j] {
        assert!(
            at < len,
            "index out of bounds: the len is {len} but the index is {at}"
        );
    }
    let mut order: Vec<usize> = (0..len).collect();
    order.swap(i, j);
    order
}

/// The positions left by `list.swap_remove(at)`: the last item moved
/// into `at`'s place, every other item in place. Panics, as `swap_remove`
/// does, if `at` is out of bounds.
pub fn swap_removed_order<T>(list: &[T], at: usize) -> Vec<usize> {
    let len = list.len();
    assert!(
        at < len,
        "swap_remove index (is {at}) should be < len (is {len})"
    );
    let mut order: Vec<usize> = (0..len - 1).collect();
    if at < len - 1 {
        order[at] = len - 1;
    }
    order
}

/// The positions of `list.rotate_left(by)` (`left`) or
/// `list.rotate_right(by)`. Panics, as they do, if `by` exceeds the
/// length.
pub fn rotated_order<T>(list: &[T], by: usize, left: bool) -> Vec<usize> {
    let len = list.len();
    assert!(
        by <= len,
        "rotation by {by} exceeds the length {len}: `rotate_left` and `rotate_right` take at most the length"
    );
    let start = if left { by } else { len - by };
    (0..len).map(|i| (start + i) % len).collect()
}

/// The positions `list.drain(start..end)` leaves: those before `start`,
/// then those from `end` on. Panics, as `drain` does, on a range out of
/// order or past the length.
pub fn drained_order<T>(list: &[T], start: usize, end: usize) -> Vec<usize> {
    let len = list.len();
    assert!(
        start <= end && end <= len,
        "drain range {start}..{end} out of bounds for a list of length {len}"
    );
    (0..start).chain(end..len).collect()
}

/// The positions `list.retain(keep)` keeps, in order: `keep` sees each
/// item once, first to last, as `retain`'s does.
pub fn kept_positions<T>(list: &[T], mut keep: impl FnMut(&T) -> bool) -> Vec<usize> {
    (0..list.len()).filter(|&i| keep(&list[i])).collect()
}

/// The positions `list.dedup_by(same)` keeps: the first of each run of
/// items `same` as the last one kept. `same(item, kept)` takes the later
/// item first, as `dedup_by`'s does, but by shared reference.
pub fn deduplicated_positions<T>(list: &[T], mut same: impl FnMut(&T, &T) -> bool) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::with_capacity(list.len());
    for i in 0..list.len() {
        match kept.last() {
            Some(&last) if same(&list[i], &list[last]) => {}
            _ => kept.push(i),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_agree_with_the_vec_methods() {
        let list = [3.0, 1.0, 1.0, 2.0, 2.0, 2.0, 5.0, 1.0];
        let gathered = |order: Vec<usize>| order.iter().map(|&i| list[i]).collect::<Vec<f64>>();

        let mut sorted = list.to_vec();
        sorted.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(
            gathered(sort_order(&list, true, |a, b| b.total_cmp(a))),
            sorted
        );

        let mut swapped = list.to_vec();
        swapped.swap(0, 6);
        assert_eq!(gathered(swapped_order(&list, 0, 6)), swapped);

        for at in [0, 3, 7] {
            let mut removed = list.to_vec();
            removed.swap_remove(at);
            assert_eq!(gathered(swap_removed_order(&list, at)), removed);
        }

        for by in [0, 3, 8] {
            let (mut left, mut right) = (list.to_vec(), list.to_vec());
            left.rotate_left(by);
            right.rotate_right(by);
            assert_eq!(gathered(rotated_order(&list, by, true)), left);
            assert_eq!(gathered(rotated_order(&list, by, false)), right);
        }

        for (start, end) in [(0, 0), (2, 5), (0, 8), (8, 8)] {
            let mut kept = list.to_vec();
            kept.drain(start..end);
            assert_eq!(gathered(drained_order(&list, start, end)), kept);
        }

        let mut retained = list.to_vec();
        retained.retain(|&a| a > 1.5);
        assert_eq!(gathered(kept_positions(&list, |&a| a > 1.5)), retained);

        let mut deduplicated = list.to_vec();
        deduplicated.dedup();
        assert_eq!(
            gathered(deduplicated_positions(&list, |a, b| a == b)),
            deduplicated
        );

        let mut close = list.to_vec();
        close.dedup_by(|a, b| (*a - *b).abs() < 1.5);
        assert_eq!(
            gathered(deduplicated_positions(&list, |a, b| (*a - *b).abs() < 1.5)),
            close
        );
    }

    #[test]
    #[should_panic(expected = "the len is 2 but the index is 2")]
    fn a_swap_out_of_bounds_panics() {
        swapped_order(&[1.0, 2.0], 0, 2);
    }

    #[test]
    #[should_panic(expected = "swap_remove index (is 2) should be < len (is 2)")]
    fn a_swap_remove_out_of_bounds_panics() {
        swap_removed_order(&[1.0, 2.0], 2);
    }

    #[test]
    #[should_panic(expected = "rotation by 3 exceeds the length 2")]
    fn a_rotation_past_the_length_panics() {
        rotated_order(&[1.0, 2.0], 3, true);
    }
}
