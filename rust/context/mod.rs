//! Working memory: the context window, relevance scoring and pruning.
//! Plain Rust, no Python: `cargo test` exercises all of it.

mod index;
mod item;
mod policy;
mod window;

pub use item::{ContextItem, ContextItemType, UserIntent};
pub use policy::ContextPolicy;
pub use window::{ContextWindow, PruneReason, PruneResult};
