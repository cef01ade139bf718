//! `include/linux/jiffies.h`: comparing times.

/// `time_after64(a, b)`: whether time `a` is after time `b`, by the sign of
/// `b - a` as the kernel computes it, so that it stays right across a
/// wrap of the counter.
pub fn time_after64(a: i64, b: i64) -> bool {
    b.wrapping_sub(a) < 0
}
