//! The retrieval engine at 100K documents: a lexical index of synthetic code
//! definitions (words drawn from a Zipf-distributed vocabulary of 50K words, and
//! compound identifiers from a Zipf-distributed set of 30K made of those words;
//! five fields; 500 files of 200 definitions) and a 200K x 384 vector index.
//!
//! ```text
//! cargo run --release --example retrieve_bench            # all
//! cargo run --release --example retrieve_bench vectors    # the vector index only
//! ```
//!
//! Reports build time, search latency over 1000 queries of 3 to 12 terms, the time
//! to replace a file's 200 definitions (remove_group + upsert, what a re-index of
//! one changed file does), the saved file's size and load time, and the vector
//! search latency: the `i8` screen with exact rerank against the exact `f32` scan.

use std::time::{Duration, Instant};

use _core::retrieve::{Bm25Params, Document, LexicalIndex, VectorIndex};

// With the `python` feature the library declares this allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DOCS: usize = 100_000;
const PER_FILE: usize = 200;
const VOCABULARY: usize = 50_000;
const IDENTIFIERS: usize = 30_000;
const QUERIES: usize = 1000;
const DIM: usize = 384;
const VECTOR_ROWS: usize = 200_000;
const VECTOR_QUERIES: usize = 200;

/// splitmix64: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Word `i` of the vocabulary: syllables of `i` in base 24, at least two.
fn word(mut i: usize) -> String {
    const SYLLABLES: [&str; 24] = [
        "ka", "lo", "mi", "ne", "ru", "ta", "si", "po", "de", "gu", "ba", "ve", "zo", "fi", "ho",
        "ju", "ce", "wa", "qi", "xo", "ly", "pe", "sa", "tro",
    ];
    let mut parts = Vec::new();
    while i > 0 || parts.len() < 2 {
        parts.push(SYLLABLES[i % 24]);
        i /= 24;
    }
    parts.concat()
}

struct Zipf {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(words: Vec<String>) -> Zipf {
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|r| {
                total += 1.0 / (r as f64 + 1.0);
                total
            })
            .collect();
        Zipf { words, cumulative }
    }

    fn sample(&self, rng: &mut Rng) -> &str {
        let target = rng.unit() * self.cumulative.last().unwrap();
        let at = self.cumulative.partition_point(|&c| c < target);
        &self.words[at.min(self.words.len() - 1)]
    }

    fn words(&self, rng: &mut Rng, n: usize, separator: &str) -> String {
        (0..n)
            .map(|_| self.sample(rng))
            .collect::<Vec<_>>()
            .join(separator)
    }
}

/// Compound identifiers of two or three words, snake_case or camelCase.
fn identifiers(zipf: &Zipf, rng: &mut Rng) -> Vec<String> {
    (0..IDENTIFIERS)
        .map(|_| {
            let n = 2 + rng.below(2);
            if rng.below(2) == 0 {
                zipf.words(rng, n, "_")
            } else {
                let mut name = zipf.sample(rng).to_owned();
                for _ in 1..n {
                    let w = zipf.sample(rng);
                    name += &(w[..1].to_uppercase() + &w[1..]);
                }
                name
            }
        })
        .collect()
}

fn document(
    zipf: &Zipf,
    names: &Zipf,
    rng: &mut Rng,
    file: usize,
    i: usize,
    round: usize,
) -> Document {
    let path = format!(
        "src/{}/{}_{file}.py",
        zipf.words[file % 97 + 50],
        zipf.words[file % 13 + 200]
    );
    let name = match rng.below(3) {
        0 | 1 => names.sample(rng).to_owned(),
        _ => {
            let w = zipf.sample(rng);
            w[..1].to_uppercase() + &w[1..] + "Error"
        }
    };
    let n = 1 + rng.below(4);
    let params = zipf.words(rng, n, ", ");
    let signature = format!("def {name}({params}) -> {}", zipf.sample(rng));
    let doc = if rng.below(10) < 6 {
        let n = 3 + rng.below(18);
        zipf.words(rng, n, " ")
    } else {
        String::new()
    };
    let body_len = 20 + rng.below(100);
    let body: Vec<String> = (0..body_len)
        .map(|_| match rng.below(4) {
            0 => format!("{}.{}()", zipf.sample(rng), names.sample(rng)),
            1 => names.sample(rng).to_owned(),
            _ => zipf.sample(rng).to_owned(),
        })
        .collect();
    Document {
        kind: ["function", "method", "class"][rng.below(3)].into(),
        key: format!("{path}::{name}#{i}"),
        group: path.clone(),
        fields: vec![
            ("name".into(), name),
            ("signature".into(), signature),
            ("doc".into(), doc),
            ("body".into(), body.join(" ")),
            ("path".into(), path),
        ],
        meta: vec![
            ("line".into(), (i * 10 + round).to_string()),
            ("end_line".into(), (i * 10 + 8).to_string()),
        ],
    }
}

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) };
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// The vector index at [`VECTOR_ROWS`] x [`DIM`] (uniform random values,
/// normalized on insert): `search` (`i8` screen, exact rerank) against
/// `search_exact` (the `f32` scan of every row) on the same queries, alternating
/// which goes first; asserts that both return the same. Returns the hits.
fn vector_bench(rng: &mut Rng, dir: &std::path::Path) -> usize {
    let mut vectors = VectorIndex::new(DIM).unwrap();
    let mut row = vec![0f32; DIM];
    let started = Instant::now();
    for i in 0..VECTOR_ROWS {
        for v in row.iter_mut() {
            *v = rng.unit() as f32 - 0.5;
        }
        vectors.upsert(&format!("doc{i}"), &row).unwrap();
    }
    let build = started.elapsed();
    let mut hits = 0;
    let (mut exact_times, mut screened_times) = (Vec::new(), Vec::new());
    for q in 0..VECTOR_QUERIES {
        for v in row.iter_mut() {
            *v = rng.unit() as f32 - 0.5;
        }
        let run = |exact: bool| {
            let started = Instant::now();
            let found = if exact {
                vectors.search_exact(&row, 20, None).unwrap()
            } else {
                vectors.search(&row, 20, None).unwrap()
            };
            (started.elapsed(), found)
        };
        let first_exact = q % 2 == 0;
        let (t1, r1) = run(first_exact);
        let (t2, r2) = run(!first_exact);
        assert_eq!(r1, r2, "search and search_exact differ");
        hits += r1.len();
        let (exact, screened) = if first_exact { (t1, t2) } else { (t2, t1) };
        exact_times.push(exact);
        screened_times.push(screened);
    }
    exact_times.sort();
    screened_times.sort();
    let vpath = dir.join("vectors.bin");
    vectors.save(&vpath, 1).unwrap();
    let vsize = std::fs::metadata(&vpath).unwrap().len();
    let started = Instant::now();
    let _ = VectorIndex::load(&vpath).unwrap();
    let vload = started.elapsed();
    let ratio = |p: f64| {
        percentile(&exact_times, p).as_secs_f64() / percentile(&screened_times, p).as_secs_f64()
    };
    println!(
        "vectors: {VECTOR_ROWS} x {DIM}, built in {:.2} s; top 20, {VECTOR_QUERIES} queries, \
         {} threads (same results):\n  search_exact (f32 scan): p50 {}  p95 {}  p99 {}\n  \
         search (i8 screen + rerank): p50 {}  p95 {}  p99 {}  (exact/screened: p50 {:.2}x  \
         p95 {:.2}x)\n  saved {:.1} MB, load {}",
        build.as_secs_f64(),
        rayon::current_num_threads(),
        ms(percentile(&exact_times, 0.5)),
        ms(percentile(&exact_times, 0.95)),
        ms(percentile(&exact_times, 0.99)),
        ms(percentile(&screened_times, 0.5)),
        ms(percentile(&screened_times, 0.95)),
        ms(percentile(&screened_times, 0.99)),
        ratio(0.5),
        ratio(0.95),
        vsize as f64 / 1e6,
        ms(vload)
    );
    hits
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("vectors") {
        let dir = std::env::temp_dir().join(format!("retrieve_bench_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let hits = vector_bench(&mut Rng(42), &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        println!("({hits} hits in all)");
        return;
    }
    let zipf = Zipf::new((0..VOCABULARY).map(word).collect());
    let mut rng = Rng(42);
    let names = Zipf::new(identifiers(&zipf, &mut rng));
    let files = DOCS / PER_FILE;
    let docs: Vec<Document> = (0..DOCS)
        .map(|i| document(&zipf, &names, &mut rng, i / PER_FILE, i, 0))
        .collect();
    let text_bytes: usize = docs
        .iter()
        .flat_map(|d| d.fields.iter().map(|(_, t)| t.len()))
        .sum();

    let started = Instant::now();
    let mut index = LexicalIndex::new();
    for d in docs {
        index.upsert(d).expect("a valid document");
    }
    let build = started.elapsed();
    println!(
        "lexical: {DOCS} documents ({:.1} MB of text) in {files} groups, built in {:.2} s",
        text_bytes as f64 / 1e6,
        build.as_secs_f64()
    );
    println!("  {index:?}");

    let params = Bm25Params {
        field_weights: vec![
            ("name".into(), 3.0),
            ("signature".into(), 1.5),
            ("path".into(), 0.5),
        ],
        ..Bm25Params::default()
    };
    let queries: Vec<String> = (0..QUERIES)
        .map(|_| {
            let n = 3 + rng.below(10);
            let mut terms: Vec<String> = (0..n).map(|_| zipf.sample(&mut rng).to_owned()).collect();
            // Some questions name an identifier.
            if rng.below(3) == 0 {
                terms.push(names.sample(&mut rng).to_owned());
            }
            format!("how does {} work", terms.join(" "))
        })
        .collect();
    let mut hits = 0;
    for q in queries.iter().take(50) {
        hits += index.search(q, &params, &[], 20).len(); // warm up
    }
    // Three passes, wall time and this thread's CPU time (the machine may be
    // shared: a query that loses its core for a while is slow on the wall clock
    // only); the percentiles of each pass.
    for _ in 0..3 {
        let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = queries
            .iter()
            .map(|q| {
                let (started, started_cpu) = (Instant::now(), thread_cpu());
                hits += index.search(q, &params, &[], 20).len();
                (started.elapsed(), thread_cpu() - started_cpu)
            })
            .unzip();
        wall.sort();
        cpu.sort();
        println!(
            "  search ({QUERIES} queries of 3-13 terms, top 20): wall p50 {}  p95 {}  p99 {}  max {}; \
             cpu p50 {}  p95 {}  p99 {}",
            ms(percentile(&wall, 0.5)),
            ms(percentile(&wall, 0.95)),
            ms(percentile(&wall, 0.99)),
            ms(*wall.last().unwrap()),
            ms(percentile(&cpu, 0.5)),
            ms(percentile(&cpu, 0.95)),
            ms(percentile(&cpu, 0.99)),
        );
    }
    let mut kind_times: Vec<Duration> = queries
        .iter()
        .take(200)
        .map(|q| {
            let started = Instant::now();
            hits += index.search(q, &params, &["class"], 20).len();
            started.elapsed()
        })
        .collect();
    kind_times.sort();
    println!(
        "  search, one kind of three: p50 {}  p95 {}",
        ms(percentile(&kind_times, 0.5)),
        ms(percentile(&kind_times, 0.95))
    );

    // Re-index changed files: drop a file's 200 definitions, insert new versions.
    let mut replace: Vec<Duration> = Vec::new();
    let mut removal: Vec<Duration> = Vec::new();
    for round in 1..=400 {
        let file = rng.below(files);
        let fresh: Vec<Document> = (0..PER_FILE)
            .map(|j| document(&zipf, &names, &mut rng, file, file * PER_FILE + j, round))
            .collect();
        let group = fresh[0].group.clone();
        let started = Instant::now();
        let removed = index.remove_group(&group);
        removal.push(started.elapsed());
        for d in fresh {
            index.upsert(d).expect("a valid document");
        }
        replace.push(started.elapsed());
        assert!(removed > 0);
    }
    removal.sort();
    replace.sort();
    let total: Duration = replace.iter().sum();
    println!(
        "  replace a 200-document group (400 rounds): remove_group median {}  p95 {}  max {}; \
         with the 200 upserts median {}  p95 {}  max {}  mean {}",
        ms(percentile(&removal, 0.5)),
        ms(percentile(&removal, 0.95)),
        ms(*removal.last().unwrap()),
        ms(percentile(&replace, 0.5)),
        ms(percentile(&replace, 0.95)),
        ms(*replace.last().unwrap()),
        ms(total / replace.len() as u32)
    );
    let started = Instant::now();
    index.compact();
    println!("  compact after the rounds: {}", ms(started.elapsed()));

    let dir = std::env::temp_dir().join(format!("retrieve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lexical.bin");
    let started = Instant::now();
    index.save(&path, 1).unwrap();
    let save = started.elapsed();
    let size = std::fs::metadata(&path).unwrap().len();
    let started = Instant::now();
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    let load = started.elapsed();
    assert_eq!(loaded.len(), index.len());
    assert_eq!(
        loaded.search(&queries[0], &params, &[], 20),
        index.search(&queries[0], &params, &[], 20)
    );
    println!(
        "  saved: {:.1} MB, save {}  load {}",
        size as f64 / 1e6,
        ms(save),
        ms(load)
    );

    hits += vector_bench(&mut rng, &dir);
    if std::env::var_os("RETRIEVE_BENCH_KEEP").is_some() {
        println!("files kept in {}", dir.display());
    } else {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    println!("({hits} hits in all)");
}
