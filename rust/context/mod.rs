//! Working memory (seed 002): the context window, relevance scoring and pruning.
//! Plain Rust, no Python: `cargo test` exercises all of it.

mod index;
mod item;
mod policy;
mod window;

pub use item::{ContextItem, ContextItemType, UserIntent};
pub use policy::ContextPolicy;
pub use window::{ContextWindow, PruneReason, PruneResult};

/// A small deterministic generator for tests: `next(m)` is in 0..m.
#[cfg(test)]
pub(crate) fn test_rng(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |m| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    }
}
