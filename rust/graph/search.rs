//! Code search: the lexical index, a personalized PageRank over the graph seeded by
//! the lexical hits, the paths the text mentions and the focus files, and (when the
//! caller has them) dense similarities, fused into definitions or files, each hit
//! explained.

use foldhash::{HashMap, HashSet};

use super::adjacency::NodeIndex;
use super::documents::{definition_key, file_key, parse_key};
use super::model::NodeKind;
use super::rank::{rank_local, Walk};
use super::store::KnowledgeGraph;
use crate::error::{invalid, Result};
use crate::retrieve::{
    fuse, Bm25Params, Channel, ChannelScore, LexicalIndex, Normalization, QueryTerms,
};

/// What a code search asks of a graph: the knowledge graph, or a saved graph read
/// in place (`view::GraphView`), which answer it alike.
pub trait Searchable: Walk {
    /// The node of a document key (a definition's or a file's).
    fn node_of_key(&self, key: &str) -> Option<NodeIndex>;
    /// The document key of a file or definition node (None for imports).
    fn key_of_node(&self, node: NodeIndex) -> Option<String>;
    fn file_node(&self, path: &str) -> Option<NodeIndex>;
    /// Every file's path, in no particular order.
    fn paths(&self) -> impl Iterator<Item = &str>;
    fn file_count(&self) -> usize;
}

/// What a search returns: definitions, or files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Definition,
    File,
}

impl std::str::FromStr for Level {
    type Err = crate::Error;

    fn from_str(level: &str) -> Result<Self> {
        match level {
            "definition" => Ok(Level::Definition),
            "file" => Ok(Level::File),
            other => Err(invalid(
                "level",
                format!("must be 'definition' or 'file', got {other:?}"),
            )),
        }
    }
}

/// Every weight of a code search (the Policy's `[retrieval]` section).
#[derive(Debug, Clone)]
pub struct SearchParams {
    pub bm25: Bm25Params,
    pub normalization: Normalization,
    pub lexical_weight: f64,
    pub graph_weight: f64,
    pub dense_weight: f64,
    /// Lexical hits (and graph nodes) taken into the fusion.
    pub candidates: usize,
    /// The best lexical hits that seed the walk.
    pub graph_seeds: usize,
    /// Seed weight of the files the text mentions, and of the focus files, each as
    /// a share of the lexical seeds' total.
    pub path_weight: f64,
    pub focus_weight: f64,
    pub damping: f64,
    pub epsilon: f64,
    pub max_pushes: usize,
    /// How the query's words are weighed: other word forms, idf exponent.
    pub terms: QueryTerms,
    /// Score factor of test and fixture files, benchmarks, examples and samples,
    /// documentation, vendored code (see [`PathKind`]; not applied to files the text
    /// names, nor to a kind the text names).
    pub test_factor: f64,
    pub bench_factor: f64,
    pub example_factor: f64,
    pub docs_factor: f64,
    pub vendor_factor: f64,
    /// Weight of a file's second and third best documents in its score.
    pub file_spread: f64,
    /// At file level, factor of a file's own document when the query's words it
    /// has are all in its path (a file found by its name, not its content).
    pub name_only_factor: f64,
}

/// Code that is not the product: tests and fixtures, benchmarks, examples and
/// samples, documentation, vendored code. Scored down by its factor unless the
/// query names the kind (see [`PathKind::words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathKind {
    Test,
    Bench,
    Example,
    Docs,
    Vendor,
}

impl PathKind {
    pub const ALL: [PathKind; 5] = [
        PathKind::Test,
        PathKind::Bench,
        PathKind::Example,
        PathKind::Docs,
        PathKind::Vendor,
    ];

    /// The kind's name (`test`, `bench`, `example`, `docs`, `vendor`).
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Test => "test",
            PathKind::Bench => "bench",
            PathKind::Example => "example",
            PathKind::Docs => "docs",
            PathKind::Vendor => "vendor",
        }
    }

    /// Words of a query that name the kind, and so lift its factor.
    pub fn words(self) -> &'static [&'static str] {
        match self {
            PathKind::Test => &["test", "tests", "testing", "fixture", "fixtures"],
            PathKind::Bench => &[
                "bench",
                "benches",
                "benchmark",
                "benchmarks",
                "benchmarking",
            ],
            PathKind::Example => &["example", "examples", "sample", "samples", "demo", "demos"],
            PathKind::Docs => &["doc", "docs", "documentation"],
            PathKind::Vendor => &["vendor", "vendored", "vendoring"],
        }
    }

    /// Folder names of the kind.
    fn folders(self) -> &'static [&'static str] {
        match self {
            PathKind::Test => &[
                "test",
                "tests",
                "testing",
                "fixtures",
                "fixture",
                "__tests__",
                "testdata",
            ],
            PathKind::Bench => &["bench", "benches", "benchmark", "benchmarks", "asv_bench"],
            PathKind::Example => &["example", "examples", "sample", "samples", "demo", "demos"],
            PathKind::Docs => &["doc", "docs", "documentation"],
            PathKind::Vendor => &[
                "vendor",
                "vendored",
                "_vendor",
                "third_party",
                "third-party",
                "thirdparty",
                "node_modules",
            ],
        }
    }

    fn factor(self, params: &SearchParams) -> f64 {
        match self {
            PathKind::Test => params.test_factor,
            PathKind::Bench => params.bench_factor,
            PathKind::Example => params.example_factor,
            PathKind::Docs => params.docs_factor,
            PathKind::Vendor => params.vendor_factor,
        }
    }
}

impl std::str::FromStr for PathKind {
    type Err = crate::Error;

    fn from_str(name: &str) -> Result<Self> {
        PathKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                invalid(
                    "kind",
                    format!("must be test, bench, example, docs or vendor, got {name:?}"),
                )
            })
    }
}

/// The kind of the file at `path`: that of the longest of `declared` (folder or
/// file paths the project's configuration names, e.g. pytest's `testpaths`) it is
/// in; else that of its first folder named like a kind (`tests/`, `benchmarks/`,
/// `examples/`, `docs/`, `vendor/`...); else a test or benchmark by its name
/// (`test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`, `bench_x.py`); else none.
pub fn path_kind(path: &str, declared: &[(String, PathKind)]) -> Option<PathKind> {
    let within = |prefix: &str| {
        let prefix = prefix.trim_end_matches('/');
        !prefix.is_empty()
            && path.starts_with(prefix)
            && (path.len() == prefix.len() || path.as_bytes()[prefix.len()] == b'/')
    };
    if let Some((_, kind)) = declared
        .iter()
        .filter(|(prefix, _)| within(prefix))
        .max_by_key(|(prefix, _)| prefix.trim_end_matches('/').len())
    {
        return Some(*kind);
    }
    let mut parts = path.split('/').collect::<Vec<_>>();
    let name = parts.pop().unwrap_or_default();
    for part in parts {
        if let Some(kind) = PathKind::ALL
            .into_iter()
            .find(|k| k.folders().contains(&part))
        {
            return Some(kind);
        }
    }
    let stem = name.split('.').next().unwrap_or_default();
    if name == "conftest.py"
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || name.contains(".test.")
        || name.contains(".spec.")
    {
        return Some(PathKind::Test);
    }
    if stem.starts_with("bench_") || stem.ends_with("_bench") || stem.ends_with("_benchmark") {
        return Some(PathKind::Bench);
    }
    None
}

/// The kinds a query names (see [`PathKind::words`]).
fn kinds_named(text: &str) -> HashSet<PathKind> {
    let mut named: HashSet<PathKind> = HashSet::default();
    crate::retrieve::for_each_token(text, |token| {
        for kind in PathKind::ALL {
            if kind.words().contains(&token) {
                named.insert(kind);
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    named
}

/// One result: a definition or a file, its fused score, and why.
#[derive(Debug, Clone)]
pub struct Hit {
    pub key: String,
    pub path: String,
    /// The definition's node (or the file's, at file level).
    pub node: NodeIndex,
    pub score: f64,
    /// The channels that found it (at file level: the file's best document's).
    pub channels: Vec<ChannelScore>,
    /// The query terms the lexical index matched in it.
    pub matched: Vec<String>,
    /// At file level, the file's best definitions (their nodes), best first.
    pub via: Vec<NodeIndex>,
    /// A test or fixture file.
    pub test: bool,
}

/// A search's hits, best first; the files the text mentions that seeded it; why
/// nothing came back, when nothing did.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub hits: Vec<Hit>,
    pub mentioned: Vec<String>,
    pub reason: String,
}

/// Searches the code of `state` for `text`. `focus` are files (relative paths) the
/// caller is working on; `dense` are (document key, similarity) pairs from a
/// vector index, empty when the caller has none; `declared` are the folders and
/// files the project's configuration gives a kind (see [`path_kind`]).
///
/// At file level, the files the channels found come first; then, when they found
/// some and `limit` asks for more, every other file of the project: those the lexical index
/// matches by their best document's score (scaled by their kind's factor), then
/// the rest by path, all with score 0.
#[allow(clippy::too_many_arguments)]
pub fn search(
    graph: &impl Searchable,
    lexical: &LexicalIndex,
    text: &str,
    focus: &[String],
    dense: &[(String, f64)],
    level: Level,
    limit: usize,
    params: &SearchParams,
    declared: &[(String, PathKind)],
) -> Found {
    let found = lexical.search_weighed(text, &params.bm25, &[], params.candidates, params.terms);
    let mentioned = mentioned_files(graph, text);
    let mut matched: HashMap<&str, &[String]> = HashMap::default();
    let mut lexical_scores: Vec<(String, f64)> = Vec::with_capacity(found.len());
    for hit in &found {
        matched.insert(&hit.key, &hit.matched);
        lexical_scores.push((hit.key.clone(), hit.score));
    }
    // Seeds: the best lexical hits by score, then the mentioned and focus files,
    // each of those weighing a share of the lexical seeds' total.
    let mut seeds: Vec<(NodeIndex, f64)> = found
        .iter()
        .take(params.graph_seeds)
        .filter_map(|hit| Some((graph.node_of_key(&hit.key)?, hit.score)))
        .collect();
    let lexical_total: f64 = seeds.iter().map(|s| s.1).sum::<f64>().max(1.0);
    let mut files = |paths: &[String], share: f64| {
        let nodes: Vec<NodeIndex> = paths.iter().filter_map(|p| graph.file_node(p)).collect();
        for node in &nodes {
            seeds.push((*node, share * lexical_total / nodes.len() as f64));
        }
    };
    files(&mentioned, params.path_weight);
    files(focus, params.focus_weight);
    let walked = rank_local(
        graph,
        &seeds,
        params.damping,
        params.epsilon,
        params.max_pushes,
    );
    let graph_scores: Vec<(String, f64)> = walked
        .iter()
        .filter_map(|&(node, score)| Some((graph.key_of_node(node)?, score)))
        .take(params.candidates)
        .collect();
    let channels = [
        Channel {
            name: "lexical",
            weight: params.lexical_weight,
            scores: &lexical_scores,
        },
        Channel {
            name: "graph",
            weight: params.graph_weight,
            scores: &graph_scores,
        },
        Channel {
            name: "dense",
            weight: params.dense_weight,
            scores: dense,
        },
    ];
    let fused = fuse(&channels, params.normalization);
    let named: HashSet<&str> = mentioned.iter().map(String::as_str).collect();
    let kinds = kinds_named(text);
    let factor = |path: &str| -> (f64, bool) {
        let kind = path_kind(path, declared);
        let test = kind == Some(PathKind::Test);
        match kind {
            Some(kind) if !named.contains(path) && !kinds.contains(&kind) => {
                (kind.factor(params), test)
            }
            _ => (1.0, test),
        }
    };
    let mut hits: Vec<Hit> = Vec::new();
    match level {
        Level::Definition => {
            for doc in fused {
                let Some((path, Some(_))) = parse_key(&doc.key) else {
                    continue;
                };
                let Some(node) = graph.node_of_key(&doc.key) else {
                    continue;
                };
                let (f, test) = factor(path);
                hits.push(Hit {
                    path: path.to_string(),
                    node,
                    score: doc.score * f,
                    matched: matched
                        .get(doc.key.as_str())
                        .map(|m| m.to_vec())
                        .unwrap_or_default(),
                    channels: doc.channels,
                    via: Vec::new(),
                    test,
                    key: doc.key,
                });
            }
        }
        Level::File => {
            // A file's documents (its own and its definitions'), best first.
            let mut by_file: HashMap<String, Vec<(f64, String, Vec<ChannelScore>)>> =
                HashMap::default();
            for doc in fused {
                let Some((path, index)) = parse_key(&doc.key) else {
                    continue;
                };
                let mut score = doc.score;
                if index.is_none() && params.name_only_factor != 1.0 {
                    let terms = matched.get(doc.key.as_str()).copied().unwrap_or_default();
                    if lexical.only_in_field(&doc.key, terms, "path") {
                        score *= params.name_only_factor;
                    }
                }
                let docs = by_file.entry(path.to_string()).or_default();
                docs.push((score, doc.key, doc.channels));
            }
            for (path, mut docs) in by_file {
                let Some(file) = graph.file_node(&path) else {
                    continue;
                };
                docs.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                let score = docs[0].0
                    + params.file_spread * docs.iter().skip(1).take(2).map(|d| d.0).sum::<f64>();
                let (f, test) = factor(&path);
                let mut terms: Vec<String> = Vec::new();
                for (_, key, _) in &docs {
                    for term in matched.get(key.as_str()).copied().unwrap_or_default() {
                        if !terms.contains(term) {
                            terms.push(term.clone());
                        }
                    }
                }
                let via = docs
                    .iter()
                    .filter(|(_, key, _)| key != &file_key(&path))
                    .filter_map(|(_, key, _)| graph.node_of_key(key))
                    .take(3)
                    .collect();
                let (_, _, channels) = docs.into_iter().next().expect("a file has a document");
                hits.push(Hit {
                    key: file_key(&path),
                    path,
                    node: file,
                    score: score * f,
                    channels,
                    matched: terms,
                    via,
                    test,
                });
            }
        }
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    hits.truncate(limit);
    if level == Level::File && !hits.is_empty() && hits.len() < limit {
        rank_the_rest(graph, lexical, text, params, &mut hits, limit, &factor);
    }
    let reason = if hits.is_empty() {
        why_empty(graph, text)
    } else {
        String::new()
    };
    Found {
        hits,
        mentioned,
        reason,
    }
}

/// Appends to `hits` (files) the project's other files, up to `limit`: first
/// those the lexical index matches, by their best document's score times their
/// kind's factor, then the rest by path; each with score 0 and, for the first,
/// its lexical channel (raw score, normalized 0) and matched words.
fn rank_the_rest(
    graph: &impl Searchable,
    lexical: &LexicalIndex,
    text: &str,
    params: &SearchParams,
    hits: &mut Vec<Hit>,
    limit: usize,
    factor: &dyn Fn(&str) -> (f64, bool),
) {
    let mut taken: HashSet<String> = hits.iter().map(|h| h.path.clone()).collect();
    let all = lexical.len();
    let mut best: HashMap<String, (f64, f64, Vec<String>)> = HashMap::default();
    for hit in lexical.search_weighed(text, &params.bm25, &[], all, params.terms) {
        let Some((path, _)) = parse_key(&hit.key) else {
            continue;
        };
        if taken.contains(path) {
            continue;
        }
        let (f, _) = factor(path);
        let entry = best
            .entry(path.to_string())
            .or_insert_with(|| (f64::NEG_INFINITY, 0.0, Vec::new()));
        if hit.score * f > entry.0 {
            *entry = (hit.score * f, hit.score, hit.matched);
        }
    }
    let mut lexical: Vec<_> = best.into_iter().collect();
    lexical.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let want = limit.saturating_sub(hits.len());
    let mut more: Vec<(String, Vec<ChannelScore>, Vec<String>)> = Vec::new();
    for (path, (_, raw, matched)) in lexical.into_iter().take(want) {
        let channel = ChannelScore {
            name: "lexical".to_string(),
            raw,
            normalized: 0.0,
            weight: params.lexical_weight,
        };
        taken.insert(path.clone());
        more.push((path, vec![channel], matched));
    }
    if more.len() < want {
        let mut rest: Vec<&str> = graph.paths().filter(|p| !taken.contains(*p)).collect();
        rest.sort_unstable();
        for path in rest.into_iter().take(want - more.len()) {
            more.push((path.to_string(), Vec::new(), Vec::new()));
        }
    }
    for (path, channels, matched) in more {
        let Some(node) = graph.file_node(&path) else {
            continue;
        };
        let (_, test) = factor(&path);
        hits.push(Hit {
            key: file_key(&path),
            path,
            node,
            score: 0.0,
            channels,
            matched,
            via: Vec::new(),
            test,
        });
    }
}

/// Why a search found nothing.
fn why_empty(graph: &impl Searchable, text: &str) -> String {
    if graph.file_count() == 0 {
        return "nothing is indexed: run `aircher-mem index` first".to_string();
    }
    // The first few distinct words, so that a huge text gives a short answer.
    let mut distinct: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::default();
    let mut more = false;
    crate::retrieve::for_each_token(text, |token| {
        if seen.contains(token) {
            return std::ops::ControlFlow::Continue(());
        }
        if distinct.len() == LISTED_WORDS {
            more = true;
            return std::ops::ControlFlow::Break(());
        }
        seen.insert(token.to_string());
        distinct.push(token.to_string());
        std::ops::ControlFlow::Continue(())
    });
    if distinct.is_empty() {
        return "the text has no searchable words (only stop words, symbols or 1-letter words)"
            .to_string();
    }
    format!(
        "no indexed definition, file name or docstring contains any of: {}{}",
        distinct.join(", "),
        if more { ", ..." } else { "" }
    )
}

/// Words of a query an empty result lists.
const LISTED_WORDS: usize = 20;

/// A test or fixture file, by its path: a `test`/`tests`/`testing`/`fixtures`/
/// `__tests__`/`testdata` folder, `conftest.py`, or a name like `test_x.py`,
/// `x_test.go`, `x.test.ts`, `x.spec.js`, `XTest.java`.
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let name = parts.pop().unwrap_or_default();
    parts.iter().any(|p| PathKind::Test.folders().contains(p))
        || path_kind(name, &[]) == Some(PathKind::Test)
}

impl Searchable for KnowledgeGraph {
    fn node_of_key(&self, key: &str) -> Option<NodeIndex> {
        let (path, index) = parse_key(key)?;
        let entry = self.files.get(path)?;
        match index {
            None => Some(entry.node),
            Some(i) => entry.defs.get(i).copied(),
        }
    }

    fn key_of_node(&self, node: NodeIndex) -> Option<String> {
        let data = self.graph.node_weight(node)?;
        let entry = self.files.get(&*data.path)?;
        match data.kind {
            NodeKind::File => Some(file_key(&data.path)),
            NodeKind::Import => None,
            _ => {
                let i = entry.defs.iter().position(|&d| d == node)?;
                Some(definition_key(&data.path, i))
            }
        }
    }

    fn file_node(&self, path: &str) -> Option<NodeIndex> {
        KnowledgeGraph::file_node(self, path)
    }

    fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    fn file_count(&self) -> usize {
        KnowledgeGraph::file_count(self)
    }
}

/// The project files a text mentions: paths (`src/app/models.py`, absolute ones,
/// `site-packages/pkg/mod.py`, Windows `\\` separators) and dotted module names
/// (`pkg.sub.mod`, also with one or two trailing attribute names), each mapped to
/// the files whose path ends with it (or, for an absolute path, that it ends with).
/// A bare word is never a mention. Sorted, without repeats.
pub fn mentioned_files(graph: &impl Searchable, text: &str) -> Vec<String> {
    // Files by their last component's stem.
    let mut found: Vec<String> = Vec::new();
    let mut runs = 0;
    for run in
        text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '\\' | '-')))
    {
        let run = run.trim_matches(|c: char| matches!(c, '.' | '-' | '/' | '\\'));
        if run.len() < 3
            || run.len() > 512
            || !(run.contains('/') || run.contains('\\') || run.contains('.'))
        {
            continue;
        }
        runs += 1;
        if runs > 512 {
            break;
        }
        let slashed = run.contains('/') || run.contains('\\');
        let parts: Vec<&str> = run
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        let Some(last) = parts.last() else {
            continue;
        };
        if slashed || has_source_extension(last) {
            // A path: its components, the last with its extension.
            for path in files_ending_with(graph, &parts) {
                if !found.contains(&path) {
                    found.push(path);
                }
            }
        } else {
            // A dotted name: `a.b.c` as `a/b/c.<ext>` or `a/b/c/<package file>`,
            // also without one or two trailing attributes.
            let names: Vec<&str> = run.split('.').collect();
            for drop in 0..=2usize {
                let Some(keep) = names.len().checked_sub(drop).filter(|k| *k >= 2) else {
                    break;
                };
                let hits = modules_named(graph, &names[..keep]);
                if !hits.is_empty() {
                    for path in hits {
                        if !found.contains(&path) {
                            found.push(path);
                        }
                    }
                    break;
                }
            }
        }
    }
    found.sort();
    found
}

/// A file name of a language the graph parses (`x.py`, `x.go`).
fn has_source_extension(name: &str) -> bool {
    super::extract::Language::from_path(std::path::Path::new(name)).is_some()
}

/// The files `parts` (a path, split) names, compared component by component from
/// the end: those whose path ends with it, that it ends with (an absolute path),
/// or that share its file name and at least its last folder (an installed copy
/// under `site-packages/`); the longest common suffix wins.
fn files_ending_with(graph: &impl Searchable, parts: &[&str]) -> Vec<String> {
    let Some(last) = parts.last() else {
        return Vec::new();
    };
    let mut best: Vec<String> = Vec::new();
    let mut best_length = 0;
    for path in paths_named(graph, last) {
        let file: Vec<&str> = path.split('/').collect();
        let common = file
            .iter()
            .rev()
            .zip(parts.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        // The mention is a suffix of the path, or the path of the mention, or
        // they share at least a folder and the file name (an installed copy:
        // `site-packages/pkg/m.py` for `src/pkg/m.py`).
        let whole = common == parts.len() || common == file.len() || common >= 2;
        if !whole || common < best_length {
            continue;
        }
        if common > best_length {
            best.clear();
            best_length = common;
        }
        best.push(path.to_string());
    }
    best
}

/// The files a module name (`a.b.c` split) names: `a/b/c.<ext>` or a package
/// file `a/b/c/__init__.py` (`mod.rs`, `index.js`...), at the end of a path.
fn modules_named(graph: &impl Searchable, names: &[&str]) -> Vec<String> {
    let Some((last, _)) = names.split_last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for path in paths_with_stem(graph, last) {
        let components: Vec<&str> = path.split('/').collect();
        let Some((file, folders)) = components.split_last() else {
            continue;
        };
        let stem = file.split('.').next().unwrap_or_default();
        let mut chain: Vec<&str> = folders.to_vec();
        chain.push(stem);
        if chain.ends_with(names) {
            out.push(path.to_string());
        }
    }
    for package in ["__init__.py", "mod.rs", "index.js", "index.ts"] {
        let mut parts: Vec<&str> = names.to_vec();
        parts.push(package);
        for path in paths_named(graph, package) {
            let components: Vec<&str> = path.split('/').collect();
            if components.ends_with(&parts) && !out.iter().any(|p| p == path) {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// Paths whose last component is `name`.
fn paths_named<'a>(
    graph: &'a impl Searchable,
    name: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    paths_whose_name(graph, move |n| n == name)
}

/// Paths whose last component's stem (before the first dot) is `stem`.
fn paths_with_stem<'a>(
    graph: &'a impl Searchable,
    stem: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    paths_whose_name(graph, move |n| n.split('.').next() == Some(stem))
}

/// Paths whose last component passes `test`.
fn paths_whose_name<'a>(
    graph: &'a impl Searchable,
    test: impl Fn(&str) -> bool + 'a,
) -> impl Iterator<Item = &'a str> + 'a {
    graph
        .paths()
        .filter(move |p| p.rsplit('/').next().is_some_and(&test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{extract, Language};

    fn graph(files: &[(&str, &str)]) -> KnowledgeGraph {
        KnowledgeGraph::from_files(
            files
                .iter()
                .map(|(p, s)| {
                    let language = Language::from_path(std::path::Path::new(p)).unwrap();
                    (p.to_string(), extract(language, s.as_bytes()))
                })
                .collect(),
        )
    }

    #[test]
    fn mentions_map_to_project_files() {
        let g = graph(&[
            ("src/click/shell_completion.py", "def f(): pass\n"),
            ("src/click/core.py", "def g(): pass\n"),
            ("tests/core.py", "def h(): pass\n"),
            ("pkg/db/__init__.py", "x = 1\n"),
            ("pkg/db/models/query.py", "class QuerySet: pass\n"),
        ]);
        let m = |text: &str| mentioned_files(&g, text);
        assert_eq!(
            m("see click/shell_completion.py:12"),
            ["src/click/shell_completion.py"]
        );
        assert_eq!(
            m("File \"/home/u/venv/lib/python3.11/site-packages/click/core.py\", line 3"),
            ["src/click/core.py"]
        );
        // A bare file name matches every file of that name.
        assert_eq!(m("core.py fails"), ["src/click/core.py", "tests/core.py"]);
        assert_eq!(
            m("in pkg.db.models.query.QuerySet.filter"),
            ["pkg/db/models/query.py"]
        );
        assert_eq!(m("import pkg.db"), ["pkg/db/__init__.py"]);
        // Bare words and unknown paths are not mentions.
        assert!(m("django query core").is_empty());
        assert!(m("other/thing.py e.g. i.e.").is_empty());
        assert!(m(&"a/".repeat(100_000)).is_empty());
    }

    /// Forward push converges to the PageRank of `rank` (same walk) as epsilon
    /// shrinks, and stops after `max_pushes`.
    #[test]
    fn local_walk_matches_power_iteration() {
        let g = graph(&[
            (
                "a.py",
                "from b import g\nfrom c import h\n\ndef f():\n    g()\n    h()\n",
            ),
            (
                "b.py",
                "from c import h\n\ndef g():\n    h()\n\nclass K:\n    pass\n",
            ),
            ("c.py", "def h():\n    return 1\n"),
        ]);
        let seed = g.node_of_key("a.py#0").unwrap();
        let exact = g.rank(&[(seed, 1.0)], 0.85, 500);
        let local = g.rank_local(&[(seed, 1.0)], 0.85, 1e-12, usize::MAX);
        assert_eq!(exact.len(), local.len());
        let by_node: HashMap<NodeIndex, f64> = local.iter().copied().collect();
        for (node, score) in &exact {
            assert!(
                (by_node[node] - score).abs() < 1e-6,
                "{node:?}: {score} vs {}",
                by_node[node]
            );
        }
        let one = g.rank_local(&[(seed, 1.0)], 0.85, 1e-12, 1);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].0, seed);
        assert!((one[0].1 - 0.15).abs() < 1e-12);
        assert!(g.rank_local(&[], 0.85, 1e-4, 10).is_empty());
        assert!(g.rank_local(&[(seed, f64::NAN)], 0.85, 1e-4, 10).is_empty());
    }

    /// The walk gives the same scores on a graph whose nodes are numbered another
    /// way: loaded from its saved form, or with a file updated in place.
    #[test]
    fn local_walk_does_not_depend_on_numbering() {
        let files = [
            (
                "a.py",
                "from b import g\nfrom c import h\n\ndef f():\n    g()\n    h()\n",
            ),
            (
                "b.py",
                "from c import h\n\ndef g():\n    h()\n\nclass K:\n    def m(self):\n        g()\n",
            ),
            ("c.py", "def h():\n    return 1\n\ndef i():\n    h()\n"),
        ];
        let g = graph(&files);
        let mut updated = graph(&files);
        updated.update_file("b.py", extract(Language::Python, files[1].1.as_bytes()));
        updated.update_file("a.py", extract(Language::Python, files[0].1.as_bytes()));
        let loaded = KnowledgeGraph::from_saved(g.saved()).unwrap();
        let walk = |g: &KnowledgeGraph| -> Vec<(String, f64)> {
            let seeds = [
                (g.node_of_key("a.py#0").unwrap(), 2.0),
                (g.node_of_key("c.py#").unwrap(), 1.0),
            ];
            let mut out: Vec<(String, f64)> = g
                .rank_local(&seeds, 0.85, 1e-4, usize::MAX)
                .into_iter()
                .filter_map(|(n, s)| Some((g.key_of_node(n)?, s)))
                .collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            out
        };
        let expected = walk(&g);
        assert!(expected.len() > 4);
        for other in [walk(&updated), walk(&loaded)] {
            assert_eq!(other.len(), expected.len());
            for ((k1, s1), (k2, s2)) in expected.iter().zip(&other) {
                assert_eq!(k1, k2);
                assert!(
                    (s1 - s2).abs() <= 1e-12 * s1.abs().max(1.0),
                    "{k1}: {s1} vs {s2}"
                );
            }
        }
    }

    /// The lexical index of a project updated file by file from disk searches like
    /// that of a fresh build of the same files: same keys, scores bit for bit.
    mod incremental {
        use super::super::super::project::Project;
        use crate::graph::Progress;
        use crate::retrieve::Bm25Params;
        use proptest::prelude::*;

        const WORDS: [&str; 12] = [
            "parse", "header", "email", "address", "retry", "request", "zip", "member", "token",
            "cache", "route", "tree",
        ];

        fn source(words: &[usize]) -> String {
            let mut out = String::from("\"\"\"Module about things.\"\"\"\n\n");
            for (i, w) in words.iter().enumerate() {
                let a = WORDS[w % WORDS.len()];
                let b = WORDS[(w / 3) % WORDS.len()];
                out.push_str(&format!(
                    "def {a}_{b}_{i}(x):\n    \"\"\"Do the {a} of a {b}.\"\"\"\n    return {b}(x)\n\n"
                ));
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn updates_from_disk_equal_a_fresh_build(
                edits in prop::collection::vec((0..5usize, prop::option::of(prop::collection::vec(0..40usize, 0..6))), 1..12),
                queries in prop::collection::vec(prop::collection::vec(0..12usize, 1..4), 1..5),
            ) {
                let dir = tempfile::tempdir().unwrap();
                let root = dir.path();
                std::fs::write(root.join("f0.py"), source(&[1, 2])).unwrap();
                let project = Project::build(root, 1_000_000, &Progress::default()).unwrap();
                for (file, content) in edits {
                    let path = root.join(format!("f{file}.py"));
                    match content {
                        Some(words) => std::fs::write(&path, source(&words)).unwrap(),
                        None => { let _ = std::fs::remove_file(&path); }
                    }
                    project.update_file(&path).unwrap();
                }
                let fresh = Project::build(root, 1_000_000, &Progress::default()).unwrap();
                let params = Bm25Params { k1: 1.2, b: 0.75, field_weights: vec![("name".into(), 3.0)] };
                let (a, b) = (project.state(), fresh.state());
                prop_assert_eq!(a.lexical().len(), b.lexical().len());
                for words in queries {
                    let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                    let text = text.join(" ");
                    let x = a.lexical().search(&text, &params, &[], 50);
                    let y = b.lexical().search(&text, &params, &[], 50);
                    let bits = |hits: &[crate::retrieve::LexicalHit]| -> Vec<(String, u64)> {
                        hits.iter().map(|h| (h.key.clone(), h.score.to_bits())).collect()
                    };
                    prop_assert_eq!(bits(&x), bits(&y), "{}", text);
                }
            }
        }
    }

    #[test]
    fn path_kinds() {
        let declared = vec![
            ("checks".to_string(), PathKind::Test),
            ("lib/ext".to_string(), PathKind::Vendor),
        ];
        for (path, kind) in [
            ("src/app.py", None),
            ("tests/a.py", Some(PathKind::Test)),
            ("benchmarks/run.py", Some(PathKind::Bench)),
            ("pkg/bench_io.py", Some(PathKind::Bench)),
            ("examples/tests/a.py", Some(PathKind::Example)),
            ("docs/conf.py", Some(PathKind::Docs)),
            ("third_party/zlib/a.c", Some(PathKind::Vendor)),
            ("checks/a.py", Some(PathKind::Test)),
            ("checksum/a.py", None),
            ("lib/ext/x.js", Some(PathKind::Vendor)),
            ("lib/extra.js", None),
        ] {
            assert_eq!(path_kind(path, &declared), kind, "{path}");
        }
        let named = kinds_named("the benchmark of the tests, e.g. an example");
        assert_eq!(named.len(), 3);
        for kind in [PathKind::Bench, PathKind::Test, PathKind::Example] {
            assert!(named.contains(&kind));
        }
        assert_eq!("docs".parse::<PathKind>().unwrap(), PathKind::Docs);
        assert!("other".parse::<PathKind>().is_err());
    }

    #[test]
    fn test_paths() {
        for path in [
            "tests/a.py",
            "pkg/test/a.py",
            "test_x.py",
            "a/x_test.go",
            "conftest.py",
            "web/x.spec.ts",
            "src/__tests__/a.js",
            "FooTest.java",
            "fixtures/a.py",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/contest.py",
            "latest.py",
            "pkg/testing_tools.py",
            "attest/a.py",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }
}
