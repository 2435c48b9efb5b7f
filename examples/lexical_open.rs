//! A saved lexical index (`graph.lexical`) loaded, then searched twice, timed
//! apart, some rounds in one process: what reading the index costs against the
//! search proper.
//!
//! ```text
//! cargo run --release --example lexical_open -- <graph.lexical> [query] [rounds]
//! ```

use std::path::Path;
use std::time::Instant;

use _core::retrieve::{Bm25Params, LexicalIndex};

// With the `python` feature the library declares this allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1).map(Path::new) else {
        eprintln!("usage: lexical_open <graph.lexical> [query] [rounds]");
        std::process::exit(2);
    };
    let query = args
        .get(2)
        .map_or("queryset filter annotate", |q| q.as_str());
    let rounds: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(5);
    let params = Bm25Params::default();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    for _ in 0..rounds {
        let t = Instant::now();
        let index = match LexicalIndex::load(path) {
            Ok((index, _)) => index,
            Err(err) => {
                eprintln!("{}: {err}", path.display());
                std::process::exit(1);
            }
        };
        let load = ms(t);
        let t = Instant::now();
        let hits = index.search(query, &params, &[], 10).len();
        let first = ms(t);
        let t = Instant::now();
        index.search(query, &params, &[], 10);
        let second = ms(t);
        println!(
            "load {load:.1} ms, first search {first:.2} ms ({hits} hits), second {second:.2} ms"
        );
    }
}
