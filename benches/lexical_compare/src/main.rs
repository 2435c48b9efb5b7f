//! aircher-mem's BM25F lexical index (rust/retrieve/lexical/) against tantivy, on
//! the same documents (the code documents of a source tree) and the same queries, in
//! one process, rounds interleaved, medians reported:
//!
//! ```text
//! cd benches/lexical_compare
//! CARGO_TARGET_DIR=/work/target-compare cargo run --release -- \
//!     "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
//! ```
//!
//! tantivy gets the same tokenizer (ours, registered as a tantivy `Tokenizer`), the
//! same fields and the same per-field weights (as query boosts). Differences that
//! stay: tantivy scores BM25 per field and sums the fields (ours is BM25F: term
//! frequencies are weighted and length-normalized per field, then saturated once),
//! its field lengths are quantized to one byte, and its statistics (N, df, average
//! lengths) count deleted documents until a merge drops them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use _core::graph::{discover, parse, Progress, Project};
use _core::retrieve::{for_each_token, Bm25Params, Document, LexicalIndex};
use tantivy::collector::TopDocs;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROUNDS: usize = 3;
const TOP: usize = 20;
const UPDATE_FILES: usize = 100;
const DRIFT_FILES: usize = 200;
const WRITER_THREADS: usize = 2;
const WRITER_BYTES: usize = 200_000_000;

/// The indexed fields of a code document and their weights (the retrieval policy's
/// defaults, python/aircher_mem/config.py).
const FIELDS: [(&str, f64); 7] = [
    ("name", 3.0),
    ("qualified", 1.0),
    ("signature", 1.0),
    ("doc", 2.0),
    ("body", 1.0),
    ("path", 1.0),
    ("names", 1.0),
];

const QUERIES: &[&str] = &[
    "parse an email address header",
    "open a zip file and read its members",
    "retry failed request with backoff",
    "json decode error line number",
    "format a date as ISO 8601 string",
    "split a shell command line into arguments",
    "compute the md5 hash of a file",
    "create a temporary directory and clean it up",
    "walk a directory tree recursively",
    "read a csv file into rows of dicts",
    "send an email over smtp with tls",
    "parse command line options with subcommands",
    "match a glob pattern against a filename",
    "decode base64 encoded bytes",
    "start a thread pool and wait for results",
    "http server handle GET request",
    "url quote and unquote percent encoding",
    "compress data with gzip",
    "read a config ini file section",
    "pretty print nested data structures",
    "deep copy an object with cycles",
    "sort a list with a key function stable",
    "binary search insertion point in sorted list",
    "heap priority queue push pop",
    "lru cache decorator for a function",
    "abstract base class register virtual subclass",
    "serialize objects with pickle protocol",
    "signal handler for SIGINT",
    "spawn a subprocess and capture its output",
    "socket connect timeout",
    "ssl certificate verification hostname",
    "unicode normalization NFC",
    "tokenize python source code",
    "compile a regular expression with flags",
    "asyncio event loop run until complete",
    "cancel a running task",
    "logging handler rotating file",
    "unittest assert raises context manager",
    "mock patch an attribute",
    "dataclass field default factory",
    "enum member lookup by value",
    "fractions greatest common divisor",
    "decimal rounding context precision",
    "random sample without replacement",
    "statistics median of data",
    "tarfile extract members safely",
    "sqlite3 connection execute query",
    "xml element tree parse attributes",
    "html escape special characters",
    "When I call json.loads on a large document with a trailing comma, the \
     JSONDecodeError message reports a wrong line number and column. The decoder \
     seems to compute the position from the start of the string instead of the \
     last newline. Steps to reproduce: build a string with many lines, put a \
     trailing comma inside the last object, call json.loads and catch the \
     exception; lineno and colno are off. Expected: the line and column of the \
     offending character, as the pure Python scanner reports them. I looked at \
     the scanner and the errmsg helper and the py_scanstring function, and the \
     C accelerator seems to disagree with the Python fallback when the document \
     contains escaped unicode characters before the error, because the index is \
     counted in bytes rather than characters. This breaks our config loader, \
     which shows the user a caret under the wrong character. Could the error \
     position be computed from the decoded string? A test with a surrogate \
     pair before the error would catch it. Python 3.11 on Linux, same on macOS.",
];

// ---------------------------------------------------------------- tokenizer

/// Our code tokenizer (`_core::retrieve::for_each_token`) as a tantivy tokenizer.
#[derive(Clone, Default)]
struct CodeTokenizer;

struct CodeTokens {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokens {
        let mut tokens = Vec::new();
        for_each_token(text, |token| {
            tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position: tokens.len(),
                text: token.to_owned(),
                position_length: 1,
            });
            ControlFlow::Continue(())
        });
        CodeTokens {
            tokens,
            at: usize::MAX,
        }
    }
}

impl TokenStream for CodeTokens {
    fn advance(&mut self) -> bool {
        self.at = self.at.wrapping_add(1);
        self.at < self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at]
    }
}

// ---------------------------------------------------------------- tantivy side

#[derive(Clone)]
struct Tv {
    schema: Schema,
    text: Vec<(Field, f32)>,
    by_name: HashMap<String, Field>,
    key: Field,
    group: Field,
    meta: Field,
}

impl Tv {
    fn new() -> Tv {
        let mut builder = Schema::builder();
        // Frequencies without positions: ours keeps no positions either.
        let indexing = TextFieldIndexing::default()
            .set_tokenizer("code")
            .set_index_option(IndexRecordOption::WithFreqs);
        let options = TextOptions::default().set_indexing_options(indexing);
        let mut text = Vec::new();
        let mut by_name = HashMap::new();
        for (name, weight) in FIELDS {
            let field = builder.add_text_field(name, options.clone());
            text.push((field, weight as f32));
            by_name.insert(name.to_string(), field);
        }
        let key = builder.add_text_field("key", STRING | STORED);
        let group = builder.add_text_field("group", STRING | STORED);
        // Ours stores each document's meta (its embedding text); so does this.
        let meta = builder.add_text_field("meta", STORED);
        Tv {
            schema: builder.build(),
            text,
            by_name,
            key,
            group,
            meta,
        }
    }

    fn doc(&self, doc: &Document) -> TantivyDocument {
        let mut out = TantivyDocument::default();
        for (name, text) in &doc.fields {
            out.add_text(self.by_name[name], text);
        }
        out.add_text(self.key, &doc.key);
        out.add_text(self.group, &doc.group);
        for (_, text) in &doc.meta {
            out.add_text(self.meta, text);
        }
        out
    }

    fn index(&self, dir: Option<&Path>) -> Index {
        let index = match dir {
            None => Index::create_in_ram(self.schema.clone()),
            Some(dir) => Index::create_in_dir(dir, self.schema.clone()).expect("a tantivy index"),
        };
        index.tokenizers().register("code", CodeTokenizer);
        index
    }

    fn writer(&self, index: &Index) -> IndexWriter<TantivyDocument> {
        index
            .writer_with_num_threads(WRITER_THREADS, WRITER_BYTES)
            .expect("a writer")
    }

    /// Adds every document and commits; the writer, still open.
    fn build(
        &self,
        dir: Option<&Path>,
        docs: Vec<TantivyDocument>,
    ) -> (Index, IndexWriter<TantivyDocument>) {
        let index = self.index(dir);
        let mut writer = self.writer(&index);
        for doc in docs {
            writer.add_document(doc).expect("a document");
        }
        writer.commit().expect("a commit");
        (index, writer)
    }

    /// One boosted TermQuery per (distinct query token, field), all SHOULD: what
    /// QueryParser builds for an OR query over default fields with boosts (built
    /// directly: QueryParser turns a word our tokenizer splits into several tokens
    /// into a phrase query, and chokes on the syntax characters of an issue text).
    fn query(&self, text: &str) -> BooleanQuery {
        let mut seen = HashSet::new();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for_each_token(text, |token| {
            if seen.insert(token.to_owned()) {
                for &(field, boost) in &self.text {
                    let term = TermQuery::new(
                        Term::from_field_text(field, token),
                        IndexRecordOption::WithFreqs,
                    );
                    clauses.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(term), boost)),
                    ));
                }
            }
            ControlFlow::Continue(())
        });
        BooleanQuery::new(clauses)
    }

    fn search(&self, reader: &IndexReader, text: &str) -> Vec<(String, f32)> {
        let searcher = reader.searcher();
        let query = self.query(text);
        let top = searcher
            .search(&query, &TopDocs::with_limit(TOP).order_by_score())
            .expect("a search");
        top.into_iter()
            .map(|(score, address)| {
                let doc: TantivyDocument = searcher.doc(address).expect("a stored document");
                let key = doc
                    .get_first(self.key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string();
                (key, score)
            })
            .collect()
    }

    fn delete_group(&self, writer: &IndexWriter<TantivyDocument>, group: &str) {
        writer.delete_term(Term::from_field_text(self.group, group));
    }
}

// ---------------------------------------------------------------- helpers

fn params() -> Bm25Params {
    Bm25Params {
        k1: 1.2,
        b: 0.75,
        field_weights: FIELDS.iter().map(|(n, w)| (n.to_string(), *w)).collect(),
    }
}

fn ours_search(index: &LexicalIndex, params: &Bm25Params, text: &str) -> Vec<(String, f64)> {
    index
        .search(text, params, &[], TOP)
        .into_iter()
        .map(|h| (h.key, h.score))
        .collect()
}

fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = work();
    (out, start.elapsed())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn pct(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[at]
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("a directory")
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The files under `path` (a file or a flat directory) whose bytes, ASCII
/// lower-cased, contain `needle`.
fn grep(path: &Path, needle: &str) -> Vec<String> {
    let files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.is_file())
            .collect()
    } else {
        vec![path.to_path_buf()]
    };
    let needle = needle.as_bytes();
    files
        .into_iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap_or_default().to_ascii_lowercase();
            bytes.windows(needle.len()).any(|w| w == needle)
        })
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

fn ms(d: f64) -> String {
    if d < 0.01 {
        format!("{:.1} us", d * 1e6)
    } else if d < 10.0 {
        format!("{:.2} ms", d * 1e3)
    } else {
        format!("{:.1} s", d)
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn row(name: &str, ours: String, tv: String, ratio: String) {
    println!("| {name} | {ours} | {tv} | {ratio} |");
}

// ---------------------------------------------------------------- main

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let out = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import sysconfig;print(sysconfig.get_paths()['stdlib'])",
                ])
                .output()
                .expect("python3 for the stdlib path");
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        });
    let load_start = loadavg();
    eprintln!("root {}; load {load_start}", root.display());

    // The documents, as the project makes them.
    let found = discover(&root, 1_000_000);
    let parsed = parse(&root, 1_000_000, &found.sources, &Progress::default());
    let docs: Vec<Document> = parsed
        .into_iter()
        .filter_map(|p| p.ok())
        .flat_map(|p| p.documents)
        .collect();
    let mut by_group: BTreeMap<String, Vec<Document>> = BTreeMap::new();
    for doc in &docs {
        by_group
            .entry(doc.group.clone())
            .or_default()
            .push(doc.clone());
    }
    let groups: Vec<String> = by_group.keys().cloned().collect();
    let text_bytes: usize = docs
        .iter()
        .flat_map(|d| &d.fields)
        .map(|(_, t)| t.len())
        .sum();
    {
        // Sanity: the project's own index holds the same documents.
        let project = Project::build(&root, 1_000_000, &Progress::default()).expect("a project");
        let state = project.state();
        assert_eq!(
            state.lexical().len(),
            docs.len(),
            "the project's index differs"
        );
    }
    eprintln!(
        "{} files, {} documents, {} of field text",
        groups.len(),
        docs.len(),
        mib(text_bytes as u64)
    );

    let tv = Tv::new();
    let params = params();
    let tv_docs: Vec<TantivyDocument> = docs.iter().map(|d| tv.doc(d)).collect();
    let update_groups: Vec<&String> = groups
        .iter()
        .step_by((groups.len() / UPDATE_FILES).max(1))
        .take(UPDATE_FILES)
        .collect();

    let mut t_ours_build = Vec::new();
    let mut t_ours_save = Vec::new();
    let mut t_tv_ram = Vec::new();
    let mut t_tv_disk = Vec::new();
    let mut size_ours = 0u64;
    let mut size_tv = 0u64;
    let mut q_ours = Vec::new();
    let mut q_tv = Vec::new();
    let mut q_tv_ids = Vec::new();
    let mut u_ours = Vec::new();
    let mut u_tv = Vec::new();
    let mut overlaps = Vec::new();

    for round in 0..ROUNDS {
        eprintln!("round {round}: build");
        let scratch = tempfile::tempdir().expect("a scratch dir");
        // Build: alternate who goes first.
        let mut ours = LexicalIndex::default();
        let mut tv_built = None;
        let mut order = [0, 1, 2];
        if round % 2 == 1 {
            order.reverse();
        }
        for step in order {
            match step {
                0 => {
                    let input = docs.clone();
                    let (built, took) = timed(|| {
                        let mut index = LexicalIndex::default();
                        index.upsert_all(input).expect("documents index");
                        index
                    });
                    t_ours_build.push(took.as_secs_f64());
                    let path = scratch.path().join("lexical.bin");
                    let (_, took) = timed(|| built.save(&path, 0).expect("a save"));
                    t_ours_save.push(took.as_secs_f64());
                    size_ours = std::fs::metadata(&path).unwrap().len();
                    ours = built;
                }
                1 => {
                    let input = tv_docs.clone();
                    let ((index, writer), took) = timed(|| tv.build(None, input));
                    t_tv_ram.push(took.as_secs_f64());
                    writer.wait_merging_threads().unwrap();
                    drop(index);
                }
                _ => {
                    let input = tv_docs.clone();
                    let dir = scratch.path().join("tantivy");
                    std::fs::create_dir(&dir).unwrap();
                    let ((index, writer), took) = timed(|| tv.build(Some(&dir), input));
                    t_tv_disk.push(took.as_secs_f64());
                    writer.wait_merging_threads().unwrap();
                    size_tv = dir_bytes(&dir);
                    tv_built = Some(index);
                }
            }
        }
        let index = tv_built.unwrap();
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .expect("a reader");

        eprintln!("round {round}: queries");
        // Warm both, then time each query on each engine in turn, 3 times.
        for q in QUERIES {
            ours_search(&ours, &params, q);
            tv.search(&reader, q);
        }
        for rep in 0..3 {
            for (i, q) in QUERIES.iter().enumerate() {
                let first_ours = (i + rep + round) % 2 == 0;
                for side in 0..2 {
                    if (side == 0) == first_ours {
                        let (hits, took) = timed(|| ours_search(&ours, &params, q));
                        q_ours.push(took.as_secs_f64());
                        std::hint::black_box(hits);
                    } else {
                        let (hits, took) = timed(|| tv.search(&reader, q));
                        q_tv.push(took.as_secs_f64());
                        std::hint::black_box(hits);
                        // The same search, without reading the keys from the store.
                        let (hits, took) = timed(|| {
                            reader
                                .searcher()
                                .search(&tv.query(q), &TopDocs::with_limit(TOP).order_by_score())
                                .unwrap()
                        });
                        q_tv_ids.push(took.as_secs_f64());
                        std::hint::black_box(hits);
                    }
                }
            }
        }
        if round == 0 {
            for q in &QUERIES[..2] {
                eprintln!(
                    "{q}\n  ours {:?}\n  tantivy {:?}",
                    &ours_search(&ours, &params, q)[..5],
                    &tv.search(&reader, q)[..5]
                );
            }
            for q in QUERIES {
                let a: HashSet<String> = ours_search(&ours, &params, q)
                    .into_iter()
                    .map(|h| h.0)
                    .collect();
                let b: HashSet<String> = tv.search(&reader, q).into_iter().map(|h| h.0).collect();
                let n = a.len().max(b.len());
                if n > 0 {
                    overlaps.push(a.intersection(&b).count() as f64 / n as f64);
                }
            }
        }

        eprintln!("round {round}: updates");
        let mut writer = tv.writer(&index);
        for (i, group) in update_groups.iter().enumerate() {
            let members = &by_group[*group];
            let ours_input = members.clone();
            let tv_input: Vec<TantivyDocument> = members.iter().map(|d| tv.doc(d)).collect();
            let first_ours = (i + round) % 2 == 0;
            for side in 0..2 {
                if (side == 0) == first_ours {
                    let input = ours_input.clone();
                    let (_, took) = timed(|| {
                        ours.remove_group(group);
                        for doc in input {
                            ours.upsert(doc).expect("an upsert");
                        }
                    });
                    u_ours.push(took.as_secs_f64());
                } else {
                    let input = tv_input.clone();
                    let (_, took) = timed(|| {
                        tv.delete_group(&writer, group);
                        for doc in input {
                            writer.add_document(doc).expect("a document");
                        }
                        writer.commit().expect("a commit");
                        reader.reload().expect("a reload");
                    });
                    u_tv.push(took.as_secs_f64());
                }
            }
        }
        writer.wait_merging_threads().unwrap();
    }

    // ------------------------------------------------ exactness after updates
    eprintln!("drift");
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("tantivy");
    std::fs::create_dir(&dir).unwrap();
    let (index, writer) = tv.build(Some(&dir), tv_docs.clone());
    writer.wait_merging_threads().unwrap();
    let reader: IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .unwrap();
    let mut ours = LexicalIndex::default();
    ours.upsert_all(docs.clone()).unwrap();
    let before_ours: Vec<_> = QUERIES
        .iter()
        .map(|q| ours_search(&ours, &params, q))
        .collect();
    let before_tv: Vec<_> = QUERIES.iter().map(|q| tv.search(&reader, q)).collect();
    let drift_groups: Vec<&String> = groups
        .iter()
        .step_by((groups.len() / DRIFT_FILES).max(1))
        .take(DRIFT_FILES)
        .collect();
    let mut writer = tv.writer(&index);
    for group in &drift_groups {
        ours.remove_group(group);
        for doc in by_group[*group].clone() {
            ours.upsert(doc).unwrap();
        }
        tv.delete_group(&writer, group);
        for doc in &by_group[*group] {
            writer.add_document(tv.doc(doc)).unwrap();
        }
    }
    writer.commit().unwrap();
    reader.reload().unwrap();
    let after_ours: Vec<_> = QUERIES
        .iter()
        .map(|q| ours_search(&ours, &params, q))
        .collect();
    let after_tv: Vec<_> = QUERIES.iter().map(|q| tv.search(&reader, q)).collect();
    let segments_after = index.searchable_segment_ids().unwrap().len();
    let deleted_after: u32 = reader
        .searcher()
        .segment_readers()
        .iter()
        .map(|s| s.num_deleted_docs())
        .sum();
    // Then a full merge, which drops the deleted documents.
    let ids = index.searchable_segment_ids().unwrap();
    let (_, t_merge) = timed(|| {
        writer.merge(&ids).wait().unwrap();
    });
    writer.wait_merging_threads().unwrap();
    reader.reload().unwrap();
    let merged_tv: Vec<_> = QUERIES.iter().map(|q| tv.search(&reader, q)).collect();

    fn compare<S: Copy + Into<f64> + PartialEq>(
        a: &[Vec<(String, S)>],
        b: &[Vec<(String, S)>],
    ) -> (usize, usize, f64, f64) {
        // (queries with identical hits and scores, with the same keys in the same
        // order, the largest relative score change of a document in both, mean
        // overlap@20)
        let mut identical = 0;
        let mut same_order = 0;
        let mut worst: f64 = 0.0;
        let mut overlap = 0.0;
        for (x, y) in a.iter().zip(b) {
            if x == y {
                identical += 1;
            }
            if x.iter().map(|h| &h.0).eq(y.iter().map(|h| &h.0)) {
                same_order += 1;
            }
            let ys: HashMap<&String, f64> = y.iter().map(|(k, s)| (k, (*s).into())).collect();
            for (k, s) in x {
                if let Some(t) = ys.get(k) {
                    let s: f64 = (*s).into();
                    worst = worst.max(((t - s) / s).abs());
                }
            }
            let xs: HashSet<&String> = x.iter().map(|h| &h.0).collect();
            let n = x.len().max(y.len()).max(1);
            overlap += y.iter().filter(|h| xs.contains(&h.0)).count() as f64 / n as f64;
        }
        (identical, same_order, worst, overlap / a.len() as f64)
    }
    let drift_ours = compare(&before_ours, &after_ours);
    let drift_tv = compare(&before_tv, &after_tv);
    let drift_merged = compare(&before_tv, &merged_tv);

    // ------------------------------------------------ deleted text on disk
    eprintln!("forget");
    // A token of one file only, whose text appears in no other file at all.
    let lower: HashMap<&String, String> = by_group
        .iter()
        .map(|(g, ds)| {
            let mut s = String::new();
            for d in ds {
                for (_, t) in d.fields.iter().chain(&d.meta) {
                    s.push_str(&t.to_lowercase());
                    s.push('\n');
                }
            }
            (g, s)
        })
        .collect();
    let mut victim = None;
    'outer: for group in &groups {
        for doc in &by_group[group] {
            let name = doc
                .fields
                .iter()
                .find(|f| f.0 == "name")
                .map(|f| f.1.to_lowercase());
            let Some(name) = name else { continue };
            // A function or class (a variable has no stored meta text).
            if doc.meta.is_empty()
                || name.len() < 14
                || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                continue;
            }
            if lower.iter().filter(|(_, s)| s.contains(&name)).count() == 1 {
                victim = Some((group.clone(), name, doc.key.clone()));
                break 'outer;
            }
        }
    }
    let (victim_group, token, victim_key) = victim.expect("a unique name");
    let dir = scratch.path().join("forget");
    std::fs::create_dir(&dir).unwrap();
    let (index, writer) = tv.build(Some(&dir), tv_docs.clone());
    writer.wait_merging_threads().unwrap();
    let mut writer = tv.writer(&index);
    writer.set_merge_policy(Box::new(NoMergePolicy));
    let tv_before = grep(&dir, &token);
    let reader: IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .unwrap();
    let key_query = TermQuery::new(
        Term::from_field_text(tv.key, &victim_key),
        IndexRecordOption::Basic,
    );
    let address = reader
        .searcher()
        .search(&key_query, &TopDocs::with_limit(1).order_by_score())
        .unwrap()[0]
        .1;
    tv.delete_group(&writer, &victim_group);
    writer.commit().unwrap();
    reader.reload().unwrap();
    let tv_after = grep(&dir, &token);
    // The deleted document's stored fields, read back from the segment.
    let stored_after = reader
        .searcher()
        .doc::<TantivyDocument>(address)
        .ok()
        .and_then(|d| {
            d.get_first(tv.meta)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .map_or("no".to_string(), |m| {
            format!("yes ({} bytes of its text)", m.len())
        });
    // Still in the term dictionary (doc_freq counts the deleted document).
    let name_field = tv.by_name["name"];
    let tv_df: u32 = reader
        .searcher()
        .segment_readers()
        .iter()
        .map(|s| {
            s.inverted_index(name_field)
                .unwrap()
                .get_term_info(&Term::from_field_text(name_field, &token))
                .unwrap()
                .map_or(0, |i| i.doc_freq)
        })
        .sum();
    let ids = index.searchable_segment_ids().unwrap();
    writer.merge(&ids).wait().unwrap();
    writer.wait_merging_threads().unwrap();
    let tv_merged = grep(&dir, &token);
    let mut ours = LexicalIndex::default();
    ours.upsert_all(docs.clone()).unwrap();
    let file = scratch.path().join("forget.bin");
    ours.save(&file, 0).unwrap();
    let ours_before = grep(&file, &token);
    ours.remove_group(&victim_group);
    ours.save(&file, 0).unwrap();
    let ours_after = grep(&file, &token);
    let load_end = loadavg();

    // ------------------------------------------------ report
    let m = |v: &Vec<f64>| median(v.clone());
    println!(
        "{}: {} files, {} documents ({} of field text); {} cores; medians of {ROUNDS} interleaved rounds; load {load_start} -> {load_end}",
        root.display(),
        groups.len(),
        docs.len(),
        mib(text_bytes as u64),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    println!();
    println!("| | ours (BM25F) | tantivy 0.27 | tantivy / ours |");
    println!("|---|---|---|---|");
    row(
        "build, in RAM",
        ms(m(&t_ours_build)),
        ms(m(&t_tv_ram)),
        format!("{:.2}", m(&t_tv_ram) / m(&t_ours_build)),
    );
    row(
        "build, on disk (ours: build + save)",
        ms(m(&t_ours_build) + m(&t_ours_save)),
        ms(m(&t_tv_disk)),
        format!(
            "{:.2}",
            m(&t_tv_disk) / (m(&t_ours_build) + m(&t_ours_save))
        ),
    );
    row(
        "size on disk",
        mib(size_ours),
        mib(size_tv),
        format!("{:.2}", size_tv as f64 / size_ours as f64),
    );
    for (name, q) in [("query top-20 p50", 0.5), ("query top-20 p95", 0.95)] {
        let (a, b) = (pct(q_ours.clone(), q), pct(q_tv.clone(), q));
        row(
            &format!("{name} ({} queries)", QUERIES.len()),
            ms(a),
            ms(b),
            format!("{:.2}", b / a),
        );
    }
    for (name, q) in [
        ("  ... tantivy without reading the keys, p50", 0.5),
        ("  ... p95", 0.95),
    ] {
        let (a, b) = (pct(q_ours.clone(), q), pct(q_tv_ids.clone(), q));
        row(name, String::new(), ms(b), format!("{:.2}", b / a));
    }
    for (name, q) in [("update one file p50", 0.5), ("update one file p95", 0.95)] {
        let (a, b) = (pct(u_ours.clone(), q), pct(u_tv.clone(), q));
        row(
            &format!(
                "{name} ({} files; tantivy: + commit + reload)",
                update_groups.len()
            ),
            ms(a),
            ms(b),
            format!("{:.0}", b / a),
        );
    }
    row(
        "save whole index (ours, per durable update)",
        ms(m(&t_ours_save)),
        "(in the commit)".into(),
        String::new(),
    );
    let overlap = overlaps.iter().sum::<f64>() / overlaps.len() as f64;
    row(
        "overlap@20 ours vs tantivy (mean)",
        format!("{:.0} %", overlap * 100.0),
        String::new(),
        String::new(),
    );
    let drift = |d: (usize, usize, f64, f64)| {
        format!(
            "{}/{} identical, {} same order, max score change {:.2e}, overlap@20 {:.1} %",
            d.0,
            QUERIES.len(),
            d.1,
            d.2,
            d.3 * 100.0
        )
    };
    row(
        &format!(
            "after delete + re-add of {} files (same text)",
            drift_groups.len()
        ),
        drift(drift_ours),
        format!(
            "{} ({} segments, {} deleted docs)",
            drift(drift_tv),
            segments_after,
            deleted_after
        ),
        String::new(),
    );
    row(
        "  ... tantivy after a full merge",
        String::new(),
        format!(
            "{} (merge {})",
            drift(drift_merged),
            ms(t_merge.as_secs_f64())
        ),
        String::new(),
    );
    let found = |v: &Vec<String>| {
        if v.is_empty() {
            "absent".to_string()
        } else {
            format!("present ({})", v.join(", "))
        }
    };
    row(
        &format!("deleted file's unique name `{token}` in bytes on disk: before delete"),
        found(&ours_before),
        found(&tv_before),
        String::new(),
    );
    row(
        "  ... after delete + save / commit (no merge)",
        found(&ours_after),
        format!("{}; term still in the dictionary (doc_freq {tv_df}); stored text still readable: {stored_after}", found(&tv_after)),
        String::new(),
    );
    row(
        "  ... tantivy after a full merge",
        String::new(),
        found(&tv_merged),
        String::new(),
    );
    println!();
    println!("victim file: {victim_group}");
}
