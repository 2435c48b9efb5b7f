//! A generic retrieval engine, plain Rust: a code-aware tokenizer, a BM25F inverted
//! index over documents of any kind (code definitions, memories), dense vectors
//! searched by brute force, near-duplicate texts (an all-pairs similarity join), topical runs of
//! a conversation,
//! and the fusion of several channels' scores into one
//! ranking that explains itself. Knows nothing of the graph or of Python.

pub mod fuse;
pub mod lexical;
mod persist;
mod postings;
pub mod segment;
pub mod similar;
pub mod tokenize;
pub mod vectors;

pub use fuse::{fuse, Channel, ChannelScore, Fused, Normalization};
pub use lexical::{
    Bm25Params, DocRef, Document, LexicalFile, LexicalHit, LexicalIndex, Meta, QueryTerms,
    Unfinished, MAX_FIELDS, MAX_FIELD_TOKENS,
};
pub use segment::{segment, Break, Rule};
pub use similar::{similar_pairs, SimilarPair};
pub use tokenize::{for_each_token, tokens, CODE_NOISE, FILLER_WORDS, STOP_WORDS};
pub use vectors::VectorIndex;
