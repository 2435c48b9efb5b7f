//! Where the memory of a graph build goes: the process's RSS (VmRSS) and
//! peak RSS (VmHWM) from /proc, and the bytes live on the heap (counted by a wrapper
//! around mimalloc, the extension's allocator), after each phase. One mode a process,
//! so that no mode inherits another's peak or freed pages:
//!
//! ```text
//! STDLIB="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
//! cargo run --release --example graph_memory -- graph "$STDLIB"    # the graph alone
//! cargo run --release --example graph_memory -- parse "$STDLIB"    # what a parse holds
//! cargo run --release --example graph_memory -- project "$STDLIB"  # graph + lexical index
//! cargo run --release --example graph_memory -- load "$STDLIB"     # build, save, then load in a child
//! ```
//!
//! `graph` parses every file and builds `KnowledgeGraph::from_files` (the graph of
//! `KnowledgeGraph.build` without the retrieval documents); `parse` runs the parse
//! of a build (`parse_indexed`) and breaks down what it holds when it ends, each
//! file's symbols and each shard of the lexical index (with `COMPACT=1`, after
//! copying them to exact sizes: what their spare capacity costs); `project` runs
//! `Project::build`, what `KnowledgeGraph.build` and `Memory` run (graph and lexical
//! index); `load` saves that project and reads it back with `Project::load` in a
//! fresh process, then reads its lexical index, which the load leaves in its file
//! until it is first needed (`LOAD_PARTS=1`: the graph's read and decode and its
//! build, then the lexical index, each timed; `LOAD_ONLY=1`: the process ends
//! after the load and the index's read, `LOAD_ONLY=graph` after the load, for a
//! profiler). "settled" is
//! the RSS after mimalloc was asked to return what it holds free
//! (`mi_collect(true)`): what the process keeps for its data.

use std::alloc::{GlobalAlloc, Layout};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use _core::graph::{discover, parse, parse_indexed, Progress, Project, ReadIndex, State};
use _core::graph::{FileSymbols, KnowledgeGraph, NodeIndex, Symbols};
use _core::retrieve::LexicalIndex;

#[path = "common/measure.rs"]
mod measure;
use measure::status_mb;

// With the `python` feature the library's allocator is used and nothing is counted.
#[cfg_attr(feature = "python", allow(dead_code))]
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

#[cfg_attr(feature = "python", allow(dead_code))]
fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to mimalloc unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size as isize - layout.size() as isize);
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}

// With the `python` feature the library declares its allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mb(bytes: isize) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

fn report(phase: &str, start: Instant) {
    let rss = status_mb("VmRSS:");
    // SAFETY: mi_collect has no preconditions.
    unsafe { libmimalloc_sys::mi_collect(true) };
    let settled = status_mb("VmRSS:");
    // The worker threads' heaps too.
    // SAFETY: as above.
    rayon::broadcast(|_| unsafe { libmimalloc_sys::mi_collect(true) });
    println!(
        "{phase:<34} {:>7.1}s  RSS {rss:>7.1} MB  settled {settled:>7.1} MB  all {:>7.1} MB  peak RSS {:>7.1} MB  heap live {:>7.1} MB  heap peak {:>7.1} MB",
        start.elapsed().as_secs_f64(),
        status_mb("VmRSS:"),
        status_mb("VmHWM:"),
        mb(LIVE.load(Ordering::Relaxed)),
        mb(PEAK.load(Ordering::Relaxed)),
    );
}

/// Bytes on the heap of a value, measured as the live-heap growth of a clone.
fn heap_of<T: Clone>(value: &T) -> (T, isize) {
    let before = LIVE.load(Ordering::Relaxed);
    let copy = value.clone();
    (copy, LIVE.load(Ordering::Relaxed) - before)
}

/// What the graph's parts hold, by measuring clones of them.
fn breakdown(graph: &KnowledgeGraph) {
    let (files, symbols) = heap_of(&graph.files());
    drop(files);
    let ids: Vec<NodeIndex> = graph
        .paths()
        .iter()
        .flat_map(|p| graph.file_contents(p).unwrap_or_default())
        .chain(graph.paths().iter().filter_map(|p| graph.file_node(p)))
        .collect();
    let nodes: Vec<_> = ids.iter().map(|&id| graph.node(id).clone()).collect();
    let before = LIVE.load(Ordering::Relaxed);
    let (copy, _) = heap_of(&nodes);
    let node_heap = LIVE.load(Ordering::Relaxed)
        - before
        - (copy.capacity() * std::mem::size_of::<_core::graph::Node>()) as isize;
    drop(copy);
    let (all, whole) = heap_of(graph);
    drop(all);
    println!(
        "  graph {:.1} MB: {} nodes, {} edges, {} files; files() (FileSymbols as given back) {:.1} MB; node strings {:.1} MB (+ {:.1} MB of Node structs, {} B each); edge struct {} B",
        mb(whole),
        graph.node_count(),
        graph.edge_count(),
        graph.file_count(),
        mb(symbols),
        mb(node_heap),
        mb((nodes.len() * std::mem::size_of::<_core::graph::Node>()) as isize),
        std::mem::size_of::<_core::graph::Node>(),
        std::mem::size_of::<_core::graph::Edge>(),
    );
    for (part, bytes) in graph.heap_parts() {
        println!("    {part:<24} {:>9.1} MB", mb(bytes as isize));
    }
    let files = graph.files();
    let (mut defs, mut imports, mut refs, mut types) = (0isize, 0isize, 0isize, 0isize);
    let (mut ndefs, mut nimports, mut nrefs) = (0, 0, 0);
    for (_, s) in &files {
        let s: &FileSymbols = s;
        ndefs += s.definitions.len();
        nimports += s.imports.len();
        nrefs += s.references.len();
        defs += heap_of(&s.definitions).1;
        imports += heap_of(&s.imports).1;
        refs += heap_of(&s.references).1;
        types += heap_of(&s.types).1;
    }
    println!(
        "  files(): definitions {:.1} MB ({ndefs}), imports {:.1} MB ({nimports}), references {:.1} MB ({nrefs}), types {:.1} MB",
        mb(defs),
        mb(imports),
        mb(refs),
        mb(types)
    );
}

fn lexical(state: &State) {
    lexical_index(state.lexical());
}

fn lexical_index(index: &LexicalIndex) {
    let (copy, bytes) = heap_of(index);
    drop(copy);
    println!("  lexical index {:.1} MB: {:?}", mb(bytes), index);
    for (part, bytes) in index.heap_parts() {
        println!("    {part:<24} {:>9.1} MB", mb(bytes as isize));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(root)) = (args.next(), args.next().map(PathBuf::from)) else {
        eprintln!("usage: graph_memory graph|parse|project|load|load-child ROOT [GRAPH_FILE]");
        std::process::exit(2);
    };
    let start = Instant::now();
    report("start", start);
    match mode.as_str() {
        "graph" => {
            let found = discover(&root, 1_000_000);
            let parsed = parse(&root, 1_000_000, &found.sources, &Progress::default());
            report("parsed (symbols + documents)", start);
            let files: Vec<(String, FileSymbols)> = found
                .sources
                .iter()
                .zip(parsed)
                .filter_map(|(s, p)| Some((s.relative.clone(), p.ok()?.symbols)))
                .collect();
            report("documents dropped", start);
            if std::env::var_os("DROPALL").is_some() {
                drop(files);
                report("symbols dropped too", start);
                return;
            }
            let files = if std::env::var_os("COMPACT").is_some() {
                let copy = files.clone();
                drop(files);
                report("symbols copied, originals dropped", start);
                copy
            } else {
                files
            };
            let graph = KnowledgeGraph::from_files(files);
            report("graph built", start);
            breakdown(&graph);
            report("after breakdown", start);
        }
        "parse" => {
            let scan = Project::scan(&root, 1_000_000).expect("a folder");
            let parsed = parse_indexed(&scan.root, 1_000_000, &scan.sources, &Progress::default());
            report("parsed (symbols + shards)", start);
            let parsed = if std::env::var_os("COMPACT").is_some() {
                let copy = _core::graph::Parsed {
                    files: parsed.files.clone(),
                    shards: parsed
                        .shards
                        .iter()
                        .map(|(s, _)| (s.clone(), Ok(())))
                        .collect(),
                };
                drop(parsed);
                report("symbols and shards copied, originals dropped", start);
                copy
            } else {
                parsed
            };
            let symbols: isize = parsed
                .files
                .iter()
                .flatten()
                .map(|symbols| heap_of(symbols).1)
                .sum();
            println!(
                "  symbols of {} files {:.1} MB",
                parsed.files.len(),
                mb(symbols)
            );
            for (shard, _) in &parsed.shards {
                lexical_index(shard);
            }
        }
        "project" => {
            let project = Project::build(&root, 1_000_000, &Progress::default()).expect("builds");
            report("project built (graph + lexical)", start);
            breakdown(project.state().graph());
            lexical(&project.state());
            report("after breakdown", start);
        }
        "load" => {
            let project = Project::build(&root, 1_000_000, &Progress::default()).expect("builds");
            let file =
                std::env::temp_dir().join(format!("graph-memory-{}.bin", std::process::id()));
            project.save(&file).expect("saves");
            drop(project);
            report("built and saved", start);
            let status = std::process::Command::new(std::env::current_exe().expect("self"))
                .args([
                    "load-child",
                    &root.display().to_string(),
                    &file.display().to_string(),
                ])
                .status()
                .expect("the child runs");
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_file(file.with_extension("lexical"));
            assert!(status.success());
        }
        "load-child" => {
            let file = args.next().expect("a graph file");
            if std::env::var_os("LOAD_PARTS").is_some() {
                let t = Instant::now();
                let (saved, _) = _core::graph::load_with_sum(Path::new(&file)).expect("reads");
                let read = t.elapsed().as_secs_f64();
                let graph = KnowledgeGraph::from_saved(saved.graph).expect("graph");
                println!(
                    "graph: read+decode {read:.2} s, built {:.2} s",
                    t.elapsed().as_secs_f64()
                );
                drop(graph);
                let t = Instant::now();
                let lexical = LexicalIndex::load(&_core::graph::lexical_path(Path::new(&file)))
                    .expect("lexical");
                println!("lexical: {:.2} s", t.elapsed().as_secs_f64());
                drop(lexical);
                return;
            }
            let project = Project::load(
                Path::new(&file),
                Some(root),
                1_000_000,
                ReadIndex::WhenNeeded,
            )
            .expect("loads");
            report("loaded (the graph)", start);
            if std::env::var_os("LOAD_ONLY").is_some_and(|only| only == "graph") {
                std::process::exit(0);
            }
            let read = Instant::now();
            project.state().lexical();
            report("the lexical index read", read);
            if std::env::var_os("LOAD_ONLY").is_some() {
                std::process::exit(0);
            }
            breakdown(project.state().graph());
            lexical(&project.state());
        }
        _ => {
            eprintln!("unknown mode {mode}");
            std::process::exit(2);
        }
    }
}
