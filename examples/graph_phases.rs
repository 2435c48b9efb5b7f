//! Where the time of a graph build goes, phase by phase, against universal-ctags on
//! the same tree in the same run (rounds interleaved, medians reported):
//!
//! ```text
//! cargo run --release --example graph_phases -- "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
//! ```
//!
//! "parse only" is tree-sitter building every file's syntax tree on all cores, with
//! no query run and nothing kept: what any tree-sitter indexer pays before it
//! extracts anything. "parse + extract" includes making each file's retrieval
//! documents; "documents" times that step alone (sources already in memory) and
//! "lexical index" the bulk load of those documents, so that the retrieval index's
//! share of a full build is (documents + lexical index) / (the build without them).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use _core::graph::{
    discover, documents, lexical_of, load, parse, parse_tree, save, KnowledgeGraph, Progress,
    Saved, VENDORED,
};
use rayon::prelude::*;

#[path = "common/measure.rs"]
mod measure;
use measure::cpu_time;

// With the `python` feature the library declares this allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Rounds unless the second argument says otherwise.
const ROUNDS: usize = 3;

thread_local! {
    /// The CPU time of the last `timed` call.
    static LAST_CPU: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
}

/// Runs `work`; its wall time, and its CPU time in `LAST_CPU` (other processes'
/// load changes the first much more than the second).
fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let (start, cpu) = (Instant::now(), cpu_time());
    let out = work();
    LAST_CPU.set(cpu_time().saturating_sub(cpu));
    (out, start.elapsed())
}

fn ctags(root: &Path, out: &Path) -> Option<Duration> {
    let mut command = Command::new("ctags");
    command
        .args([
            "-R",
            "--languages=Python,Rust,JavaScript,TypeScript,Go,Java,C,C++,C#,Ruby,PHP",
            "-f",
        ])
        .arg(out);
    for folder in VENDORED {
        command.arg(format!("--exclude={folder}"));
    }
    let (status, took) = timed(|| command.arg(root).status());
    status.ok().filter(|s| s.success()).map(|_| took)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: graph_phases ROOT [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = match std::env::args().nth(2).map(|r| r.parse()) {
        None => ROUNDS,
        Some(Ok(rounds)) if rounds > 0 => rounds,
        Some(_) => {
            eprintln!("ROUNDS: a positive integer");
            std::process::exit(2);
        }
    };
    let scratch = std::env::temp_dir().join(format!("graph-phases-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let mut phases: Vec<(&str, Vec<Duration>)> = [
        "universal-ctags",
        "discover",
        "parse only",
        "parse + extract",
        "link",
        "save",
        "load",
        "documents",
        "lexical index",
    ]
    .into_iter()
    .map(|name| (name, Vec::new()))
    .collect();
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); phases.len()];
    let mut record = |phase: usize, took: Duration| {
        phases[phase].1.push(took);
        cpu[phase].push(LAST_CPU.get());
    };
    let mut size = (0usize, 0u64);
    for _ in 0..rounds {
        if let Some(took) = ctags(&root, &scratch.join("tags")) {
            record(0, took);
        }
        let (found, took) = timed(|| discover(&root, 1_000_000));
        let sources = found.sources;
        size = (sources.len(), sources.iter().map(|s| s.bytes).sum());
        record(1, took);
        let mut largest_first: Vec<_> = sources.iter().collect();
        largest_first.sort_by_key(|s| std::cmp::Reverse(s.bytes));
        let (_, took) = timed(|| {
            largest_first.par_iter().for_each(|s| {
                if let Ok(bytes) = std::fs::read(&s.path) {
                    drop(parse_tree(s.language, &bytes));
                }
            })
        });
        record(2, took);
        let (parsed, took) = timed(|| parse(&root, 1_000_000, &sources, &Progress::default()));
        record(3, took);
        let files: Vec<_> = sources
            .iter()
            .zip(parsed)
            .filter_map(|(s, p)| Some((s.relative.clone(), p.ok()?.symbols)))
            .collect();
        let texts: Vec<Vec<u8>> = files
            .iter()
            .map(|(path, _)| std::fs::read(root.join(path)).unwrap_or_default())
            .collect();
        let (docs, took) = timed(|| {
            files
                .par_iter()
                .zip(&texts)
                .flat_map_iter(|((path, symbols), bytes)| documents(path, symbols, bytes))
                .collect::<Vec<_>>()
        });
        record(7, took);
        let (_, took) = timed(|| lexical_of(docs));
        record(8, took);
        let (graph, took) = timed(|| KnowledgeGraph::from_files(files));
        record(4, took);
        let saved = Saved {
            root: root.display().to_string(),
            graph: graph.saved(),
            skipped: vec![],
            warnings: vec![],
        };
        let path = scratch.join("graph.bin");
        let (_, took) = timed(|| save(&path, &saved).expect("the graph saves"));
        record(5, took);
        drop((graph, saved));
        let (_, took) = timed(|| {
            KnowledgeGraph::from_saved(load(&path).expect("the graph loads").graph)
                .expect("its links fit")
        });
        record(6, took);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let seconds = |t: &Vec<Duration>| {
        if t.is_empty() {
            0.0
        } else {
            median(t.clone()).as_secs_f64()
        }
    };
    let medians: Vec<f64> = phases.iter().map(|(_, t)| seconds(t)).collect();
    let cpu_medians: Vec<f64> = cpu.iter().map(seconds).collect();
    // discover + parse + extract (documents included) + link, without the documents.
    let share = |m: &[f64]| (m[7] + m[8], m[1] + m[3] + m[4] - m[7]);
    let (retrieval, graph_only) = share(&medians);
    let retrieval_share = retrieval / graph_only;
    let (cpu_retrieval, cpu_graph) = share(&cpu_medians);
    let ctags = phases[0].1.clone();
    println!(
        "{}: {} cores, medians of {rounds} interleaved rounds",
        root.display(),
        rayon::current_num_threads()
    );
    let build = medians[1] + medians[3] + medians[4];
    println!(
        "{} files, {:.1} MB: build (discover + parse + extract + link) {:.0} files/s, {:.1} MB/s",
        size.0,
        size.1 as f64 / 1e6,
        size.0 as f64 / build,
        size.1 as f64 / 1e6 / build
    );
    if !ctags.is_empty() {
        let ctags_s = median(ctags.clone()).as_secs_f64();
        println!(
            "universal-ctags {:.0} files/s (one process)",
            size.0 as f64 / ctags_s
        );
    }
    println!(
        "{:<16} {:>10} {:>10} {:>10}",
        "phase", "median", "x ctags", "CPU"
    );
    for (i, (name, times)) in phases
        .into_iter()
        .enumerate()
        .filter(|(_, (_, t))| !t.is_empty())
    {
        let ratio = if ctags.is_empty() {
            String::new()
        } else {
            format!(
                "{:.2}",
                median(times.clone()).as_secs_f64() / median(ctags.clone()).as_secs_f64()
            )
        };
        // ctags runs in a child process: its CPU time is not ours to count.
        let cpu_ms = if i == 0 {
            String::new()
        } else {
            format!("{:.0}ms", cpu_medians[i] * 1000.0)
        };
        println!(
            "{name:<16} {:>8.0}ms {ratio:>10} {cpu_ms:>10}",
            median(times).as_secs_f64() * 1000.0
        );
    }
    println!(
        "retrieval index: {:.0} ms on top of a {:.0} ms graph build (+{:.0} %)",
        retrieval * 1000.0,
        graph_only * 1000.0,
        retrieval_share * 100.0
    );
    println!(
        "in CPU time: {:.0} ms on top of {:.0} ms (+{:.0} %)",
        cpu_retrieval * 1000.0,
        cpu_graph * 1000.0,
        cpu_retrieval / cpu_graph * 100.0
    );
}
