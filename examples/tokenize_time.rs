//! Tokenizer throughput on real text: every retrieval document of a tree (as a
//! build makes them), each field tokenized once per round on one thread, best of
//! the rounds reported. For changes to `retrieve::tokenize`, which the lexical
//! index's bulk load spends most of its time in:
//!
//! ```text
//! cargo run --release --example tokenize_time -- "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
//! ```

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Instant;

use _core::graph::{discover, documents, parse, Progress};
use _core::retrieve::tokenize::for_each_token_with;

#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROUNDS: usize = 5;

fn main() {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: tokenize_time ROOT");
        std::process::exit(2);
    };
    let sources = discover(&root, 1_000_000).sources;
    let parsed = parse(&root, 1_000_000, &sources, &Progress::default());
    let mut texts: Vec<String> = Vec::new();
    for (source, parsed) in sources.iter().zip(parsed) {
        let Ok(parsed) = parsed else { continue };
        let bytes = std::fs::read(&source.path).unwrap_or_default();
        for doc in documents(&source.relative, &parsed.symbols, &bytes) {
            texts.extend(doc.fields.into_iter().map(|(_, text)| text));
        }
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut best = f64::INFINITY;
    let mut tokens = 0usize;
    for _ in 0..ROUNDS {
        tokens = 0;
        let start = Instant::now();
        for text in &texts {
            for_each_token_with(text, false, |token| {
                tokens += token.len();
                ControlFlow::Continue(())
            });
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{} fields, {:.1} MB: best of {ROUNDS} {:.0} ms ({:.0} MB/s), {tokens} token bytes",
        texts.len(),
        bytes as f64 / 1e6,
        best * 1000.0,
        bytes as f64 / 1e6 / best
    );
}
