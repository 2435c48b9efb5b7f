//! Where a full build's time and memory go, phase by phase, as `Project::build`
//! (what `KnowledgeGraph.build` and `aircher-mem index` run) does it: the scan, the
//! parallel parse (read, parse, extract, documents, each file's documents indexed
//! into its thread's shard of the lexical index), then the shards' merge and the
//! link, one after the other. For each phase: wall time, CPU time and their ratio (how
//! many of the cores it kept busy), resident memory after it; for the parse, when
//! the last files finished (a serial tail shows as a low ratio there).
//!
//! ```text
//! cargo run --release --example build_profile -- /work/linux/linux-source-6.1/fs
//! ```

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use _core::graph::{parse_indexed, Parsed, Progress, Project, ReadIndex};

#[path = "common/measure.rs"]
mod measure;
use measure::{cpu_time, status_mb};

#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// (resident, peak resident) in MB.
fn rss() -> (f64, f64) {
    (status_mb("VmRSS:"), status_mb("VmHWM:"))
}

struct Phase {
    wall: Instant,
    cpu: Duration,
}

impl Phase {
    fn start() -> Self {
        Phase {
            wall: Instant::now(),
            cpu: cpu_time(),
        }
    }

    fn report(self, name: &str) -> f64 {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = (cpu_time() - self.cpu).as_secs_f64();
        let (now, peak) = rss();
        println!(
            "{name:<28} {wall:>8.2} s wall {cpu:>8.2} s cpu ({:.2} cores)  rss {now:>7.0} MB (peak {peak:.0})",
            cpu / wall.max(1e-9)
        );
        wall
    }
}

fn main() {
    let Some(root) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: build_profile ROOT");
        std::process::exit(2);
    };
    let max = 1_000_000;
    println!(
        "{}: {} threads",
        root.display(),
        rayon::current_num_threads()
    );
    let total = Instant::now();
    let phase = Phase::start();
    let scan = Project::scan(&root, max).expect("a folder");
    let files = scan.sources.len();
    let bytes: u64 = scan.sources.iter().map(|s| s.bytes).sum();
    phase.report("scan");

    // The parse as `Project::build` runs it, with each file's finish time noted
    // through the progress counter's thread (a sampler, every 20 ms).
    let progress = Progress::default();
    let finished: Mutex<Vec<(f64, usize)>> = Mutex::new(Vec::new());
    let start = Instant::now();
    let phase = Phase::start();
    let parsed = std::thread::scope(|s| {
        let sampler = s.spawn(|| loop {
            let done = progress.done.load(std::sync::atomic::Ordering::Relaxed);
            finished
                .lock()
                .unwrap()
                .push((start.elapsed().as_secs_f64(), done));
            if done >= files {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        });
        let parsed = parse_indexed(&scan.root, max, &scan.sources, &progress);
        sampler.join().unwrap();
        parsed
    });
    let parse_wall = phase.report("parse + index (shards)");
    let samples = finished.into_inner().unwrap();
    let at = |fraction: f64| {
        samples
            .iter()
            .find(|(_, done)| *done as f64 >= fraction * files as f64)
            .map_or(parse_wall, |(t, _)| *t)
    };
    println!(
        "  files done at 50% {:.2} s, 90% {:.2} s, 99% {:.2} s, 100% {:.2} s",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );

    // What the parse holds until the link and the merge take it.
    let (mut definitions, mut references, mut imports) = (0usize, 0usize, 0usize);
    let mut name_bytes = 0usize;
    for symbols in parsed.files.iter().flatten() {
        definitions += symbols.definitions.len();
        references += symbols.references.len();
        imports += symbols.imports.len();
        name_bytes += symbols
            .references
            .iter()
            .map(|r| r.name.len())
            .sum::<usize>();
    }
    let docs: usize = parsed.shards.iter().map(|(shard, _)| shard.len()).sum();
    println!(
        "  held: {} shards of {docs} documents; {definitions} definitions, \
         {references} references ({:.0} MB of names), {imports} imports",
        parsed.shards.len(),
        name_bytes as f64 / 1e6
    );
    if std::env::var_os("BUILD_PROFILE_STEPS").is_some() {
        steps(parsed);
        return;
    }
    let phase = Phase::start();
    let project = Project::from_parsed(scan, parsed, &progress);
    phase.report("merge + link");
    let build = total.elapsed().as_secs_f64();
    {
        let state = project.state();
        let graph = state.graph();
        println!(
            "  {} files in the graph, {} nodes, {} edges",
            graph.file_count(),
            graph.node_count(),
            graph.edge_count()
        );
        println!("  {:?}", state.lexical());
    }
    println!(
        "build: {files} files, {:.1} MB in {build:.2} s: {:.0} files/s, {:.2} MB/s",
        bytes as f64 / 1e6,
        files as f64 / build,
        bytes as f64 / 1e6 / build
    );

    let scratch = std::env::temp_dir().join(format!("build-profile-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let path = scratch.join("graph.bin");
    let phase = Phase::start();
    project.save(&path).expect("saves");
    phase.report("save (graph + lexical)");
    drop(project);
    let phase = Phase::start();
    let loaded = Project::load(&path, None, max, ReadIndex::WhenNeeded).expect("loads");
    phase.report("load (graph + lexical)");
    drop(loaded);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Resets the peak resident size (VmHWM) to the current one, so that each step's
/// peak is its own.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// BUILD_PROFILE_STEPS=1: the steps after the parse, one at a time, each with its
/// own peak (the same work as `Project::from_parsed` and `Project::save`, in that
/// order, on the public parts).
fn steps(parsed: Parsed) {
    use _core::graph::{encode_chunk, KnowledgeGraph, Writer, CHUNK};
    use _core::retrieve::LexicalIndex;
    // BUILD_PROFILE_COLLECT=1: free pages returned to the OS after each step (as
    // `Project::from_parsed` does after the merge).
    let collect = std::env::var_os("BUILD_PROFILE_COLLECT").is_some();
    let step = |name: &str, phase: Phase| {
        if collect {
            // SAFETY: mi_collect has no preconditions; it only returns free pages.
            rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
            // SAFETY: as above.
            unsafe { libmimalloc_sys::mi_collect(true) };
        }
        phase.report(name);
        reset_peak();
    };
    reset_peak();
    let phase = Phase::start();
    let files: Vec<_> = parsed
        .files
        .into_iter()
        .enumerate()
        .filter_map(|(i, symbols)| Some((format!("{i}"), symbols.ok()?)))
        .collect();
    step("  split", phase);
    let phase = Phase::start();
    let (copy, added) = LexicalIndex::from_shards(parsed.shards, false);
    added.expect("indexed");
    step("  lexical from_shards", phase);
    let phase = Phase::start();
    let graph = KnowledgeGraph::from_files(files);
    step("  graph from_files", phase);
    // As `Project::save`: the graph's runs of files encoded and written as they
    // come, then the index streamed; both synced and renamed.
    let phase = Phase::start();
    let scratch = std::env::temp_dir().join(format!("build-steps-{}", std::process::id()));
    let mut writer = Writer::create(&scratch.join("graph.bin")).expect("creates");
    graph
        .saved_chunks(
            CHUNK,
            |files| encode_chunk(&files),
            |chunk| writer.chunk(&chunk?),
        )
        .expect("writes");
    let (file, sum) = writer.finish(graph.names(), "", &[], &[]).expect("writes");
    step("  write graph", phase);
    let phase = Phase::start();
    let index = copy.write(&scratch.join("graph.lexical")).expect("writes");
    let index = index.finish(sum).expect("writes");
    step("  write lexical", phase);
    let phase = Phase::start();
    file.commit().expect("commits");
    index.commit().expect("commits");
    step("  sync + rename", phase);
    let _ = std::fs::remove_dir_all(&scratch);
}
