//! What tests share: a small deterministic generator and the noise it makes.

/// Marsaglia's xorshift64: the same sequence for the same (nonzero) `state`.
pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Numbers from `xorshift(state)`: `next(m)` is in 0..m.
pub(crate) fn test_rng(state: u64) -> impl FnMut(u64) -> u64 {
    let mut next = xorshift(state);
    move |m| next() % m
}

/// `len` random bytes, none of them NUL (the top byte of each step of
/// `xorshift(state)`, its low bit set).
pub(crate) fn noise(state: u64, len: usize) -> Vec<u8> {
    let mut next = xorshift(state);
    (0..len).map(|_| (next() >> 56) as u8 | 1).collect()
}
