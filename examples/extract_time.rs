//! Extraction time per file, one thread: parse alone, then parse + extract, over a
//! list of files of one language (one path a line), and the slowest files. Then
//! parse + extract with the query cursor for every pattern (`extract_by_query`:
//! what C's own walk replaces), and the files whose symbols differ between the two.
//! For comparing two builds without the noise of a parallel build:
//!
//! ```text
//! find Lib -name '*.py' > files.txt
//! cargo run --release --example extract_time -- python files.txt
//! ```

use std::time::{Duration, Instant};

use _core::graph::{extract, extract_by_query, parse_tree, Language};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(name), Some(list)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: extract_time LANGUAGE FILE_LIST");
        std::process::exit(2);
    };
    let Some(language) = Language::ALL.into_iter().find(|l| l.name() == name) else {
        eprintln!("unknown language {name}");
        std::process::exit(2);
    };
    let paths: Vec<String> = std::fs::read_to_string(list)
        .expect("a file list")
        .lines()
        .map(str::to_string)
        .collect();
    let files: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_default())
        .collect();
    let start = Instant::now();
    for bytes in &files {
        drop(parse_tree(language, bytes));
    }
    let parse = start.elapsed();
    let mut times: Vec<(Duration, usize)> = Vec::new();
    let start = Instant::now();
    for (i, bytes) in files.iter().enumerate() {
        let one = Instant::now();
        drop(extract(language, bytes));
        times.push((one.elapsed(), i));
    }
    let total = start.elapsed();
    let bytes: usize = files.iter().map(Vec::len).sum();
    println!(
        "{} files, {:.1} MB: parse {:.2} s, parse + extract {:.2} s ({:.2}x parse)",
        files.len(),
        bytes as f64 / 1e6,
        parse.as_secs_f64(),
        total.as_secs_f64(),
        total.as_secs_f64() / parse.as_secs_f64()
    );
    // Interleaved, file by file (which goes first alternates): the two paths see
    // the same noise.
    let (mut walked, mut queried) = (Duration::ZERO, Duration::ZERO);
    let mut differ = Vec::new();
    for (i, bytes) in files.iter().enumerate() {
        let time = |query: bool| {
            let one = Instant::now();
            let symbols = if query {
                extract_by_query(language, bytes)
            } else {
                extract(language, bytes)
            };
            (one.elapsed(), symbols)
        };
        let ((a, first), (b, second)) = if i % 2 == 0 {
            (time(false), time(true))
        } else {
            let (b, second) = time(true);
            (time(false), (b, second))
        };
        walked += a;
        queried += b;
        if first != second {
            differ.push(i);
        }
    }
    println!(
        "interleaved: parse + extract {:.2} s, with the query cursor {:.2} s ({:.2}x); {} of {} files' symbols differ",
        walked.as_secs_f64(),
        queried.as_secs_f64(),
        queried.as_secs_f64() / walked.as_secs_f64(),
        differ.len(),
        files.len(),
    );
    for &i in differ.iter().take(10) {
        println!("  differs: {}", paths[i]);
    }
    times.sort_by(|a, b| b.cmp(a));
    for (took, i) in times.iter().take(5) {
        println!(
            "  {:>8.1} ms {} ({} bytes)",
            took.as_secs_f64() * 1000.0,
            paths[*i],
            files[*i].len()
        );
    }
}
