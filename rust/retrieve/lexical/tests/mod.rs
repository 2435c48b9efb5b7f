//! The index against a plain BM25F reference, its updates, bulk loads and
//! stemming; its files in `persistence`, the model-based properties in
//! `properties`, changes to an index searched in place in `overlay`.

mod overlay;
mod persistence;
mod properties;

use super::persistence::*;
use super::*;
use crate::error::Error;
use crate::retrieve::postings::{read_varint, Posting};
use proptest::prelude::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::Path;

thread_local! {
    /// How many searches on this thread switched to candidates only.
    pub(super) static PRUNED: Cell<usize> = const { Cell::new(0) };
}

type Hit = (String, f64, Vec<String>);

/// BM25F written out plainly over the documents themselves: every document
/// scored, terms summed rarest first (ties by term), fields in name order, as
/// the index defines its sums.
fn reference(
    docs: &[Document],
    query: &str,
    params: &Bm25Params,
    kinds: &[&str],
    limit: usize,
) -> Vec<Hit> {
    reference_with(docs, query, params, kinds, limit, false)
}

/// [`reference`], tokens stemmed if `stem`.
fn reference_with(
    docs: &[Document],
    query: &str,
    params: &Bm25Params,
    kinds: &[&str],
    limit: usize,
    stem: bool,
) -> Vec<Hit> {
    let n = docs.len() as f64;
    /// Per field name: (tokens kept, term counts).
    type Fields<'a> = BTreeMap<&'a str, (usize, BTreeMap<String, u32>)>;
    let parsed: Vec<Fields> = docs
        .iter()
        .map(|d| {
            d.fields
                .iter()
                .map(|(name, text)| {
                    let mut counts = BTreeMap::new();
                    let kept: Vec<String> = crate::retrieve::tokenize::tokens_with(text, stem)
                        .into_iter()
                        .take(MAX_FIELD_TOKENS)
                        .collect();
                    for t in &kept {
                        *counts.entry(t.clone()).or_insert(0) += 1;
                    }
                    (&**name, (kept.len(), counts))
                })
                .collect()
        })
        .collect();
    let mut totals: BTreeMap<&str, (u64, u32)> = BTreeMap::new();
    for doc in &parsed {
        for (name, (len, _)) in doc {
            if *len > 0 {
                let t = totals.entry(name).or_insert((0, 0));
                t.0 += *len as u64;
                t.1 += 1;
            }
        }
    }
    let mut dfs: BTreeMap<&str, usize> = BTreeMap::new();
    for doc in &parsed {
        let mut terms: Vec<&str> = doc
            .values()
            .flat_map(|(_, c)| c.keys().map(String::as_str))
            .collect();
        terms.sort_unstable();
        terms.dedup();
        for t in terms {
            *dfs.entry(t).or_insert(0) += 1;
        }
    }
    let df = |term: &str| dfs.get(term).copied().unwrap_or(0);
    let mut terms: Vec<String> = Vec::new();
    for t in crate::retrieve::tokenize::tokens_with(query, stem) {
        if !terms.contains(&t) && df(&t) > 0 {
            terms.push(t);
        }
    }
    let mut order = terms.clone();
    order.sort_by(|a, b| (df(a), a).cmp(&(df(b), b)));
    let weight = |name: &str| {
        params
            .field_weights
            .iter()
            .rev()
            .find(|(f, _)| f == name)
            .map_or(1.0, |(_, w)| *w)
    };
    let norm = |name: &str, len: usize| {
        let w = weight(name);
        let (total, count) = totals[name];
        let slope = params.b / (total as f64 / count as f64);
        if w > 0.0 {
            w / ((1.0 - params.b) + slope * len as f64)
        } else {
            0.0
        }
    };
    let mut hits: Vec<Hit> = Vec::new();
    for (d, fields) in docs.iter().zip(&parsed) {
        if !kinds.is_empty() && !kinds.contains(&&*d.kind) {
            continue;
        }
        let mut score = 0.0;
        for term in &order {
            let mut tf = 0.0;
            for (name, (len, counts)) in fields {
                if let Some(&c) = counts.get(term) {
                    tf += c as f64 * norm(name, *len);
                }
            }
            if tf > 0.0 {
                let df = df(term) as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                score += idf * tf * (params.k1 + 1.0) / (params.k1 + tf);
            }
        }
        if score > 0.0 {
            let matched = terms
                .iter()
                .filter(|t| {
                    fields
                        .iter()
                        .any(|(name, (_, c))| c.contains_key(*t) && weight(name) > 0.0)
                })
                .cloned()
                .collect();
            hits.push((d.key.clone(), score, matched));
        }
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    hits.truncate(limit);
    hits
}

fn same_as_reference(
    got: &[LexicalHit],
    expected: &[Hit],
) -> std::result::Result<(), TestCaseError> {
    let got_keys: Vec<&str> = got.iter().map(|h| h.key.as_str()).collect();
    let expected_keys: Vec<&str> = expected.iter().map(|h| h.0.as_str()).collect();
    prop_assert_eq!(got_keys, expected_keys);
    for (g, e) in got.iter().zip(expected) {
        prop_assert!((g.score - e.1).abs() <= 1e-9, "{:?} {:?}", g, e);
        prop_assert_eq!(&g.matched, &e.2);
    }
    Ok(())
}

fn doc(kind: &str, key: &str, group: &str, fields: &[(&str, &str)]) -> Document {
    Document {
        kind: kind.to_string().into(),
        key: key.into(),
        group: group.into(),
        fields: fields
            .iter()
            .map(|(n, t)| (n.to_string().into(), t.to_string()))
            .collect(),
        meta: vec![("line".into(), key.len().to_string())],
    }
}

fn index(docs: &[Document]) -> LexicalIndex {
    let mut index = LexicalIndex::new();
    for d in docs {
        index.upsert(d.clone()).unwrap();
    }
    check_invariants(&index);
    index
}

fn keys(hits: &[LexicalHit]) -> Vec<&str> {
    hits.iter().map(|h| h.key.as_str()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Everything the statistics and `search` rely on, recomputed from scratch.
fn check_invariants(index: &LexicalIndex) {
    if index.frozen.is_some() {
        // Searched in place: its invariants are those of what it reads into.
        let mut thawed = index.clone();
        thawed.thaw().unwrap();
        return check_invariants(&thawed);
    }
    let slots = index.docs.len();
    assert_eq!(index.kind_of.len(), slots);
    assert_eq!(index.live, index.docs.iter().flatten().count());
    assert_eq!(index.by_key.0.len(), index.live);
    for &slot in index.by_key.0.iter() {
        let key = &index.docs[slot as usize].as_ref().unwrap().key;
        assert_eq!(index.by_key.get(&index.docs, key), Some(slot));
        assert_ne!(index.kind_of[slot as usize], DEAD);
    }
    let members: usize = index.groups.values().map(Vec::len).sum();
    assert_eq!(members, index.live);
    assert!(index.groups.values().all(|m| !m.is_empty()));
    for (group, members) in &index.groups {
        for (at, &slot) in members.iter().enumerate() {
            let data = index.docs[slot as usize].as_ref().unwrap();
            assert_eq!((&data.group, data.at as usize), (group, at));
        }
    }
    assert!(index.fields.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(index.terms.len(), index.postings.len());
    assert_eq!(index.terms.len(), index.df.len());
    let mut lengths = vec![vec![0u32; slots]; index.fields.len()];
    for (term, list) in index.postings.iter().enumerate() {
        let list: Vec<Posting> = list.iter().collect();
        assert!(list
            .windows(2)
            .all(|w| (w[0].doc, w[0].field()) < (w[1].doc, w[1].field())));
        let mut live_docs: Vec<u32> = list
            .iter()
            .filter(|p| index.kind_of[p.doc as usize] != DEAD)
            .map(|p| p.doc)
            .collect();
        live_docs.dedup();
        assert_eq!(
            index.df[term] as usize,
            live_docs.len(),
            "df of {}",
            index.terms.get(term as u32)
        );
        for &doc in &live_docs {
            let data = index.docs[doc as usize].as_ref().unwrap();
            assert!(index
                .forward
                .get(data.terms.clone())
                .any(|t| t == term as u32));
        }
        for p in list
            .iter()
            .filter(|p| index.kind_of[p.doc as usize] != DEAD)
        {
            lengths[p.field()][p.doc as usize] += p.tf();
        }
        assert_eq!(
            index.terms.id(index.terms.get(term as u32)),
            Some(term as u32)
        );
    }
    let forward: usize = index.docs.iter().flatten().map(|d| d.terms.len()).sum();
    assert_eq!(
        forward,
        index.df.iter().map(|&df| df as usize).sum::<usize>()
    );
    for (field, column) in lengths.iter().enumerate() {
        let mut total = 0;
        let mut docs = 0;
        for (slot, &len) in column.iter().enumerate() {
            if index.kind_of[slot] != DEAD {
                assert_eq!(index.field_len[field][slot], len);
                total += len as u64;
                docs += (len > 0) as u32;
            }
        }
        assert_eq!(index.field_total[field], total);
        assert_eq!(index.field_docs[field], docs);
    }
}

#[test]
fn meta_keeps_its_pairs_and_saves_as_they_were() {
    let long = "é".repeat(100);
    let pairs: Vec<(String, String)> = vec![
        ("embed".into(), "def f(x):\n  \u{0}".into()),
        (String::new(), String::new()),
        ("k".into(), long.clone()),
    ];
    let meta = Meta::new(&pairs);
    assert_eq!(meta.to_vec(), pairs);
    assert_eq!(meta.get("k"), Some(long.as_str()));
    assert_eq!(meta.get(""), Some(""));
    assert_eq!(meta.get("missing"), None);
    assert_eq!(
        postcard::to_allocvec(&meta).unwrap(),
        postcard::to_allocvec(&pairs).unwrap()
    );
    let none = Meta::new::<String, String>(&[]);
    assert!(none.is_empty() && none.to_vec().is_empty() && none.heap_bytes() == 0);
}

#[test]
fn bm25f_one_field_exact() {
    let index = index(&[
        doc("fn", "d1", "g", &[("body", "alpha beta")]),
        doc("fn", "d2", "g", &[("body", "alpha alpha gamma")]),
    ]);
    let hits = index.search("alpha", &Bm25Params::default(), &[], 10);
    // N = 2, df = 2: idf = ln(1 + 0.5 / 2.5); avglen = 2.5.
    let idf = 1.2f64.ln();
    let bm25 = |tf: f64| idf * tf * 2.2 / (1.2 + tf);
    let d1 = bm25(1.0 / (0.25 + 0.75 * 2.0 / 2.5));
    let d2 = bm25(2.0 / (0.25 + 0.75 * 3.0 / 2.5));
    assert_eq!(keys(&hits), ["d2", "d1"]);
    assert!(
        close(hits[0].score, d2) && close(hits[1].score, d1),
        "{hits:?}"
    );
    assert!(
        close(hits[0].score, 0.2373416715660948),
        "{}",
        hits[0].score
    );
    assert_eq!(hits[0].matched, ["alpha"]);
    // A rarer term: df = 1, idf = ln(1 + 1.5 / 1.5) = ln 2.
    let hits = index.search("gamma", &Bm25Params::default(), &[], 10);
    let tf = 1.0 / (0.25 + 0.75 * 3.0 / 2.5);
    assert_eq!(keys(&hits), ["d2"]);
    assert!(close(hits[0].score, 2f64.ln() * tf * 2.2 / (1.2 + tf)));
}

#[test]
fn bm25f_fields_weights_and_matched_terms() {
    let index = index(&[
        doc(
            "fn",
            "d1",
            "a.py",
            &[("name", "parse_tree"), ("body", "tree walk")],
        ),
        doc(
            "fn",
            "d2",
            "b.py",
            &[("name", "walk"), ("body", "parse the tree tree")],
        ),
    ]);
    let params = Bm25Params {
        k1: 1.2,
        b: 0.75,
        field_weights: vec![("name".into(), 2.0)],
    };
    // name: d1 [parse_tree, parse, tree] (3), d2 [walk] (1): avg 2.
    // body: d1 [tree, walk] (2), d2 [parse, tree, tree] (3): avg 2.5.
    let idf = 1.2f64.ln();
    let bm25 = |tf: f64| idf * tf * 2.2 / (1.2 + tf);
    let d1 = bm25(2.0 / (0.25 + 0.75 * 3.0 / 2.0) + 1.0 / (0.25 + 0.75 * 2.0 / 2.5));
    let d2 = bm25(2.0 / (0.25 + 0.75 * 3.0 / 2.5));
    let hits = index.search("tree", &params, &[], 10);
    assert_eq!(keys(&hits), ["d1", "d2"]);
    assert!(
        close(hits[0].score, d1) && close(hits[1].score, d2),
        "{hits:?}"
    );

    // Terms count once, matched in query order, unknown terms ignored.
    let hits = index.search("walk Tree nothing walk tree", &params, &[], 10);
    let d2_walk = bm25(2.0 / (0.25 + 0.75 * 1.0 / 2.0));
    let d1_walk = bm25(1.0 / (0.25 + 0.75 * 2.0 / 2.5));
    assert_eq!(keys(&hits), ["d2", "d1"]);
    assert!(close(hits[0].score, d2_walk + d2) && close(hits[1].score, d1_walk + d1));
    assert!(hits.iter().all(|h| h.matched == ["walk", "tree"]));

    // Weight 0: the field is ignored, for scores and for `matched`.
    let body_only = Bm25Params {
        field_weights: vec![("name".into(), 0.0), ("other".into(), 5.0)],
        ..Bm25Params::default()
    };
    // `parse_tree` and `parse` are only in d1's name.
    let hits = index.search("parse_tree", &body_only, &[], 10);
    assert_eq!(keys(&hits), ["d2", "d1"]);
    assert_eq!(hits[0].matched, ["parse", "tree"]);
    assert_eq!(hits[1].matched, ["tree"]);
    assert!(close(hits[1].score, bm25(1.0 / (0.25 + 0.75 * 2.0 / 2.5))));
    let hits = index.search("walk parse", &body_only, &[], 10);
    assert_eq!(keys(&hits), ["d1", "d2"]);
    assert_eq!(hits[0].matched, ["walk"]);
    assert_eq!(hits[1].matched, ["parse"]);
}

#[test]
fn kinds_filter_ties_and_limit() {
    let index = index(&[
        doc("fn", "c", "g1", &[("body", "shared words")]),
        doc("fn", "a", "g1", &[("body", "shared words")]),
        doc("class", "b", "g2", &[("body", "shared words")]),
        doc("memory", "m", "g3", &[("text", "other")]),
    ]);
    let params = Bm25Params::default();
    let all = index.search("shared", &params, &[], 10);
    assert_eq!(keys(&all), ["a", "b", "c"]);
    assert!(all.iter().all(|h| h.score == all[0].score));
    assert_eq!(keys(&index.search("shared", &params, &[], 2)), ["a", "b"]);
    assert!(index.search("shared", &params, &[], 0).is_empty());
    let fns = index.search("shared", &params, &["fn", "nope"], 10);
    assert_eq!(keys(&fns), ["a", "c"]);
    // Statistics are over the whole index, not the kinds asked for.
    assert_eq!(fns[0].score, all[0].score);
    assert!(index.search("shared", &params, &["nope"], 10).is_empty());
    assert!(index.search("", &params, &[], 10).is_empty());
    assert!(index.search("the of and", &params, &[], 10).is_empty());
    assert!(LexicalIndex::new()
        .search("shared", &params, &[], 10)
        .is_empty());
}

#[test]
fn upsert_replace_remove_and_groups() {
    let mut index = index(&[
        doc("fn", "a.py::f", "a.py", &[("name", "alpha")]),
        doc("fn", "a.py::g", "a.py", &[("name", "beta")]),
        doc("fn", "b.py::h", "b.py", &[("name", "alpha gamma")]),
    ]);
    assert_eq!(index.len(), 3);
    assert_eq!(index.groups(), ["a.py", "b.py"]);
    assert_eq!(index.keys_in_group("a.py"), ["a.py::f", "a.py::g"]);
    assert!(index.keys_in_group("c.py").is_empty());
    let got = index.get("b.py::h").unwrap();
    assert_eq!(
        (got.kind, got.key, got.group, got.meta.to_vec()),
        (
            "fn",
            "b.py::h",
            "b.py",
            vec![("line".to_string(), "7".to_string())]
        )
    );
    // Replacing moves the key to another group and other words.
    index
        .upsert(doc("class", "a.py::f", "c.py", &[("name", "delta")]))
        .unwrap();
    check_invariants(&index);
    assert_eq!(index.len(), 3);
    assert_eq!(index.keys_in_group("a.py"), ["a.py::g"]);
    assert_eq!(index.groups(), ["a.py", "b.py", "c.py"]);
    assert_eq!(index.get("a.py::f").unwrap().kind, "class");
    let params = Bm25Params::default();
    assert_eq!(keys(&index.search("alpha", &params, &[], 10)), ["b.py::h"]);
    assert_eq!(keys(&index.search("delta", &params, &[], 10)), ["a.py::f"]);

    assert!(index.remove("a.py::g"));
    assert!(!index.remove("a.py::g"));
    assert_eq!(index.groups(), ["b.py", "c.py"]);
    assert_eq!(index.remove_group("b.py"), 1);
    assert_eq!(index.remove_group("b.py"), 0);
    check_invariants(&index);
    assert_eq!(index.len(), 1);
    assert!(index.get("b.py::h").is_none() && !index.contains("b.py::h"));
    assert!(index.search("alpha", &params, &[], 10).is_empty());
    index.compact();
    check_invariants(&index);
    assert_eq!(
        index.terms.iter().map(|(_, t)| t).collect::<Vec<_>>(),
        ["delta"]
    );
    assert_eq!(index.kinds, ["class"]);
    assert_eq!(index.fields(), ["name"]);
    assert_eq!(keys(&index.search("delta", &params, &[], 10)), ["a.py::f"]);
}

#[test]
fn bad_documents_are_refused_whole() {
    let mut index = index(&[doc("fn", "a", "g", &[("name", "alpha")])]);
    let twice = doc(
        "fn",
        "b",
        "g",
        &[("body", "x"), ("name", "y"), ("body", "z")],
    );
    match index.upsert(twice) {
        Err(Error::InvalidValue {
            field: "fields",
            reason,
        }) => {
            assert!(reason.contains("\"body\" appears twice"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let names: Vec<String> = (0..MAX_FIELDS).map(|i| format!("f{i:02}")).collect();
    let wide = |key: &str, names: &[String]| Document {
        key: key.into(),
        fields: names
            .iter()
            .map(|n| (n.clone().into(), "word".to_string()))
            .collect(),
        ..Document::default()
    };
    // "name" is in use: 32 new names make 33.
    assert!(matches!(
        index.upsert(wide("w", &names)),
        Err(Error::InvalidValue {
            field: "fields",
            ..
        })
    ));
    assert_eq!(index.len(), 1);
    assert_eq!(index.fields(), ["name"]);
    check_invariants(&index);
    // Once "name" is no longer used, its place is free again.
    index.remove("a");
    index.upsert(wide("w", &names)).unwrap();
    check_invariants(&index);
    assert_eq!(index.fields().len(), MAX_FIELDS);
    let hits = index.search("word", &Bm25Params::default(), &[], 10);
    assert_eq!(keys(&hits), ["w"]);
}

#[test]
fn check_batch_refuses_what_upsert_all_would_and_changes_nothing() {
    let mut index = index(&[doc("fn", "a", "g", &[("name", "alpha")])]);
    let before = index.search("alpha", &Bm25Params::default(), &[], 10);
    let good = doc("fn", "b", "g", &[("name", "beta")]);
    let twice = doc("fn", "c", "g", &[("body", "x"), ("body", "z")]);
    match index.check_batch(&[good.clone(), twice]) {
        Err(Error::InvalidValue {
            field: "fields",
            reason,
        }) => assert!(
            reason.contains("\"body\" appears twice in document \"c\""),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    // "name" is in use: with 32 names more the batch is refused, whole.
    let names: Vec<String> = (0..MAX_FIELDS).map(|i| format!("f{i:02}")).collect();
    let wide = Document {
        key: "w".into(),
        fields: names
            .iter()
            .map(|n| (n.clone().into(), "word".into()))
            .collect(),
        ..Document::default()
    };
    assert!(matches!(
        index.check_batch(&[good.clone(), wide.clone()]),
        Err(Error::InvalidValue {
            field: "fields",
            ..
        })
    ));
    assert_eq!(index.len(), 1);
    assert_eq!(
        index.search("alpha", &Bm25Params::default(), &[], 10),
        before
    );
    index.check_batch(&[]).unwrap();
    index.check_batch(std::slice::from_ref(&good)).unwrap();
    index.upsert_all(vec![good]).unwrap();
    check_invariants(&index);
    assert_eq!(index.len(), 2);
    // Names no document uses any more do not count.
    index.remove("a");
    index.remove("b");
    index.check_batch(std::slice::from_ref(&wide)).unwrap();
    index.upsert_all(vec![wide]).unwrap();
    check_invariants(&index);
    assert_eq!(index.fields().len(), MAX_FIELDS);
}

#[test]
fn parallel_upsert_all_into_an_emptied_index_frees_unused_field_names() {
    // An index whose documents are all removed (not yet compacted) still lists
    // their 32 field names; the sharded path must make room as `upsert` does.
    let names: Vec<String> = (0..MAX_FIELDS).map(|i| format!("f{i:02}")).collect();
    let mut index = LexicalIndex::new();
    index
        .upsert(Document {
            key: "w".into(),
            fields: names
                .iter()
                .map(|n| (n.clone().into(), "word".into()))
                .collect(),
            ..Document::default()
        })
        .unwrap();
    index.remove("w");
    assert!(index.is_empty());
    assert_eq!(index.fields().len(), MAX_FIELDS);
    let docs: Vec<Document> = (0..SHARD_MIN_DOCS + 10)
        .map(|i| {
            doc(
                "fn",
                &format!("k{i}"),
                "g",
                &[("text", &format!("w{}", i % 5))],
            )
        })
        .collect();
    index.check_batch(&docs).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| index.upsert_all(docs)).unwrap();
    check_invariants(&index);
    assert_eq!(index.len(), SHARD_MIN_DOCS + 10);
    assert_eq!(index.fields(), ["text"]);
    let hits = index.search("w3", &Bm25Params::default(), &[], 3);
    assert_eq!(keys(&hits), ["k1003", "k1008", "k1013"]);
}

#[test]
fn parallel_upsert_all_past_the_field_cap_keeps_the_shards_before() {
    // Each half of the batch has 20 field names, together 40: the first
    // shard goes in, the second is refused as a whole.
    let half = SHARD_MIN_DOCS / 2;
    let docs: Vec<Document> = (0..2 * half)
        .map(|i| {
            let side = if i < half { 'a' } else { 'b' };
            Document {
                key: format!("k{i}"),
                group: "g".into(),
                fields: (0..20)
                    .map(|f| (format!("{side}{f:02}").into(), format!("w{}", i % 3)))
                    .collect(),
                ..Document::default()
            }
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut index = LexicalIndex::new();
    let err = pool.install(|| index.upsert_all(docs)).unwrap_err();
    assert!(
        err.to_string().contains("at most 32 distinct field names"),
        "{err}"
    );
    check_invariants(&index);
    assert_eq!(index.len(), half);
    assert!(index.contains("k0") && !index.contains(&format!("k{half}")));
    assert_eq!(index.fields().len(), 20);
}

#[test]
fn huge_fields_are_capped() {
    let text = "word ".repeat(MAX_FIELD_TOKENS + 50);
    let index = index(&[doc("fn", "big", "g", &[("body", &text)])]);
    assert_eq!(index.field_len[0][0], MAX_FIELD_TOKENS as u32);
    assert_eq!(
        index.postings[0].iter().next().unwrap().tf(),
        MAX_FIELD_TOKENS as u32
    );
    assert_eq!(
        index.search("word", &Bm25Params::default(), &[], 1).len(),
        1
    );
}

#[test]
fn params() {
    assert!(Bm25Params::default().validate().is_ok());
    for (k1, b, weight, field) in [
        (-1.0, 0.5, 1.0, "k1"),
        (f64::NAN, 0.5, 1.0, "k1"),
        (1.0, 1.5, 1.0, "b"),
        (1.0, 0.5, -2.0, "field_weights"),
        (1.0, 0.5, f64::INFINITY, "field_weights"),
    ] {
        let params = Bm25Params {
            k1,
            b,
            field_weights: vec![("name".into(), weight)],
        };
        assert!(
            matches!(params.validate(), Err(Error::InvalidValue { field: f, .. }) if f == field),
            "{params:?}"
        );
        let clamped = params.clamped();
        assert!(clamped.validate().is_ok(), "{clamped:?}");
    }
    let index = index(&[doc("fn", "a", "g", &[("name", "alpha")])]);
    let wild = Bm25Params {
        k1: f64::INFINITY,
        b: -3.0,
        field_weights: vec![("name".into(), f64::NAN)],
    };
    assert!(index.search("alpha", &wild, &[], 5).is_empty());
}

#[test]
fn compaction_runs_by_itself_and_changes_nothing() {
    let docs: Vec<Document> = (0..300)
        .map(|i| {
            let body = format!("common w{} w{} group{}", i % 7, i % 13, i / 100);
            doc(
                ["fn", "class"][i % 2],
                &format!("k{i:03}"),
                &format!("g{}", i / 10),
                &[("body", &body), ("name", &format!("name_{}", i % 5))],
            )
        })
        .collect();
    let mut index = index(&docs);
    for g in 0..12 {
        index.remove_group(&format!("g{g}"));
        check_invariants(&index);
    }
    // 120 of 300 removed: compacted on the way.
    assert!(index.docs.len() < 300, "{:?}", index);
    let fresh = self::index(&docs[120..]);
    let params = Bm25Params::default();
    for query in [
        "common w3",
        "name_2 w12 group1",
        "group0",
        "w0 w1 w2 w3 w4 w5 w6",
    ] {
        assert_eq!(
            index.search(query, &params, &[], 50),
            fresh.search(query, &params, &[], 50)
        );
    }
    let removed = |hit: &LexicalHit| hit.key.as_str() < "k120";
    assert!(!index
        .search("group0 w1", &params, &[], 300)
        .iter()
        .any(removed));
}

/// A query is searched for its first `MAX_QUERY_TERMS` distinct known terms.
#[test]
fn huge_queries_are_cut() {
    let mut index = LexicalIndex::new();
    // Letters only: one token a word (digits would split off a shared part).
    let letters = |i: usize| -> String {
        [i / 676, i / 26 % 26, i % 26]
            .iter()
            .map(|&d| (b'a' + d as u8) as char)
            .collect()
    };
    let words: Vec<String> = (0..2000).map(|i| format!("zq{}", letters(i))).collect();
    for (i, w) in words.iter().enumerate() {
        index
            .upsert(doc("fn", &format!("d{i}"), "g", &[("body", w.as_str())]))
            .unwrap();
    }
    let query = format!("unknown {}", words.join(" "));
    let hits = index.search(&query, &Bm25Params::default(), &[], 5000);
    assert_eq!(hits.len(), MAX_QUERY_TERMS);
    let mut keys: Vec<usize> = hits.iter().map(|h| h.key[1..].parse().unwrap()).collect();
    keys.sort_unstable();
    assert_eq!(keys, (0..MAX_QUERY_TERMS).collect::<Vec<_>>());
}

/// A bulk load cut into shards and merged is the index upserting one by one
/// gives: same documents, scores bit for bit, matched terms; a key repeated
/// across shards keeps its last document.
#[test]
fn sharded_bulk_load_equals_one_by_one() {
    for (seed, stem) in [(0u64, false), (1, false), (2, false), (3, true), (4, true)] {
        let mut docs = skewed_documents(seed, 5000);
        if stem {
            docs = docs.into_iter().map(english).collect();
        }
        // Repeats across shards, and a third field in some documents.
        for i in (0..docs.len()).step_by(97) {
            docs[i].key = format!("d{:04}", (i * 7) % 5000);
            docs[i].fields.push(("path".into(), format!("pkg/m{i}.py")));
        }
        let mut one_by_one = LexicalIndex::with_stemming(stem);
        for d in docs.clone() {
            one_by_one.upsert(d).unwrap();
        }
        // Three shards of uneven sizes, each filled on its own thread
        // (`upsert_local`), joined by `from_shards`: as a project build.
        let cuts = [0, docs.len() / 7, docs.len() / 2, docs.len()];
        let shards: Vec<(LexicalIndex, Result<()>)> = cuts
            .windows(2)
            .map(|w| {
                let mut shard = LexicalIndex::with_stemming(stem);
                let filled = shard.upsert_local(docs[w[0]..w[1]].to_vec());
                (shard, filled)
            })
            .collect();
        let (local, filled) = LexicalIndex::from_shards(shards, stem);
        filled.unwrap();
        check_invariants(&local);
        let mut bulk = LexicalIndex::with_stemming(stem);
        bulk.upsert_all(docs).unwrap();
        check_invariants(&bulk);
        assert!(bulk.stem() == stem && one_by_one.stem() == stem && local.stem() == stem);
        let live_terms = |index: &LexicalIndex| -> Vec<String> {
            let mut terms: Vec<String> = (0..index.terms.len())
                .filter(|&t| index.df[t] > 0)
                .map(|t| index.terms.get(t as u32).to_owned())
                .collect();
            terms.sort_unstable();
            terms
        };
        let terms = live_terms(&bulk);
        assert_eq!(terms, live_terms(&one_by_one));
        assert_eq!(terms, live_terms(&local));
        assert_eq!(local.len(), one_by_one.len());
        assert_eq!(local.groups(), one_by_one.groups());
        // Stems only, when stemming (the plain documents have no English words).
        assert_eq!(terms.contains(&"parti".to_string()), stem);
        assert!(!terms.contains(&"parties".to_string()));
        assert_eq!(bulk.len(), one_by_one.len());
        assert_eq!(bulk.groups(), one_by_one.groups());
        let params = Bm25Params {
            k1: 1.2,
            b: 0.75,
            field_weights: vec![("name".into(), 3.0), ("path".into(), 0.5)],
        };
        for q in 0..40u32 {
            let mut text = format!("w{}x w{}x w{}x pkg m{}", q % 7, q, q * 3 % 61, q * 97);
            if stem {
                text = english_text(&text);
            }
            let a = one_by_one.search(&text, &params, &[], 15);
            let b = bulk.search(&text, &params, &[], 15);
            let bits = |hits: &[LexicalHit]| -> Vec<(String, u64, Vec<String>)> {
                hits.iter()
                    .map(|h| (h.key.clone(), h.score.to_bits(), h.matched.clone()))
                    .collect()
            };
            assert_eq!(bits(&a), bits(&b), "{text}");
            assert_eq!(
                bits(&a),
                bits(&local.search(&text, &params, &[], 15)),
                "{text}"
            );
        }
    }
}

/// A shard that refused a document stops the join there: the shards before it
/// and its documents up to the refused one are kept, with the error.
#[test]
fn from_shards_stops_at_the_first_refusal() {
    let mut first = LexicalIndex::new();
    let ok = first.upsert_local(vec![doc("fn", "a", "g", &[("body", "alpha")])]);
    let mut second = LexicalIndex::new();
    let twice = doc("fn", "c", "g", &[("body", "gamma"), ("body", "again")]);
    let refused = second.upsert_local(vec![doc("fn", "b", "g", &[("body", "beta")]), twice]);
    assert!(refused.is_err());
    let mut third = LexicalIndex::new();
    let later = third.upsert_local(vec![doc("fn", "d", "g", &[("body", "delta")])]);
    let (index, outcome) =
        LexicalIndex::from_shards(vec![(first, ok), (second, refused), (third, later)], false);
    assert!(
        matches!(outcome, Err(Error::InvalidValue { .. })),
        "{outcome:?}"
    );
    let mut keys: Vec<String> = ["alpha", "beta", "gamma", "delta"]
        .iter()
        .flat_map(|q| index.search(q, &Bm25Params::default(), &[], 5))
        .map(|hit| hit.key)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["a", "b"]);
}

#[test]
fn reserved_room_takes_the_next_documents_without_growing() {
    let make = |i: usize| {
        doc(
            "definition",
            &format!("f{i:05}.py#0"),
            &format!("f{i:05}.py"),
            &[("body", &format!("common word{i} other{}", i % 7))],
        )
    };
    let mut index = LexicalIndex::new();
    index.upsert_all((0..2048).map(make).collect()).unwrap();
    let mut copy = index.clone();
    copy.reserve(128);
    check_invariants(&copy);
    let capacities = |i: &LexicalIndex| {
        (
            i.docs.capacity(),
            i.kind_of.capacity(),
            i.field_len[0].capacity(),
            i.forward.own.capacity(),
            i.terms.capacity(),
        )
    };
    let before = capacities(&copy);
    assert!(
        before.0 >= 2048 + 128 && before.4 >= copy.terms.len() + 128,
        "{before:?}"
    );
    for i in 2048..2048 + 128 {
        copy.upsert(make(i)).unwrap();
        index.upsert(make(i)).unwrap();
    }
    assert_eq!(capacities(&copy), before);
    let params = Bm25Params::default();
    for query in ["common", "word2100 other3", "word7"] {
        assert_eq!(
            copy.search(query, &params, &[], 10),
            index.search(query, &params, &[], 10)
        );
    }
}

/// English word forms, several per stem, for the `w{n}x` words of
/// [`skewed_documents`] (word `n` is `ENGLISH[n % len]`).
const ENGLISH: &[&str] = &[
    "party",
    "parties",
    "running",
    "runs",
    "run",
    "meeting",
    "meetings",
    "meet",
    "walked",
    "walking",
    "connection",
    "connected",
    "connects",
    "happily",
    "happy",
    "studies",
    "studying",
    "cats",
    "cat",
    "generalization",
    "general",
    "ran",
];

/// `text` with each `w{n}x` word replaced by an English form.
fn english_text(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            match word
                .strip_prefix('w')
                .and_then(|w| w.strip_suffix('x'))
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) => ENGLISH[n % ENGLISH.len()],
                None => word,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn english(mut doc: Document) -> Document {
    for (_, text) in &mut doc.fields {
        *text = english_text(text);
    }
    doc
}

/// Documents with a skewed vocabulary, so that queries mix rare and common
/// terms and pruning kicks in.
fn skewed_documents(seed: u64, count: usize) -> Vec<Document> {
    let mut state = seed;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    (0..count)
        .map(|i| {
            let mut field = |words: u64| {
                (0..words)
                    .map(|_| {
                        // Word w with probability ~ 1/(w+1).
                        let r = next(1 << 20) as f64 / (1 << 20) as f64;
                        let w = ((61f64).powf(r) - 1.0) as u64;
                        format!("w{}x", w)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let name = field(2);
            let body = field(4 + i as u64 % 9);
            Document {
                kind: ["fn", "class"][i % 2].into(),
                key: format!("d{i:04}"),
                group: format!("g{}", i % 17),
                fields: vec![("name".into(), name), ("body".into(), body)],
                meta: vec![],
            }
        })
        .collect()
}

#[test]
fn stemming_finds_other_forms_and_is_off_by_default() {
    let docs = [
        doc("memory", "m1", "s1", &[("text", "a party at the meeting")]),
        doc(
            "turn",
            "t1",
            "s1",
            &[("text", "The parties were running late")],
        ),
        doc("turn", "t2", "s2", &[("text", "she runs every morning")]),
    ];
    let plain = index(&docs);
    assert!(!plain.stem() && !LexicalIndex::new().stem() && !LexicalIndex::default().stem());
    let mut stemming = LexicalIndex::with_stemming(true);
    for d in &docs {
        stemming.upsert(d.clone()).unwrap();
    }
    check_invariants(&stemming);
    assert!(stemming.stem());
    let params = Bm25Params::default();
    let found = |index: &LexicalIndex, query: &str| -> Vec<(String, Vec<String>)> {
        let mut hits: Vec<(String, Vec<String>)> = index
            .search(query, &params, &[], 10)
            .into_iter()
            .map(|h| (h.key, h.matched))
            .collect();
        hits.sort();
        hits
    };
    let hit = |key: &str, matched: &[&str]| {
        (
            key.to_string(),
            matched.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        )
    };
    // The plain index matches words as written.
    assert_eq!(found(&plain, "parties"), [hit("t1", &["parties"])]);
    assert_eq!(found(&plain, "party"), [hit("m1", &["party"])]);
    assert_eq!(found(&plain, "run"), []);
    // The stemming one matches stems, and says so.
    assert_eq!(
        found(&stemming, "parties"),
        [hit("m1", &["parti"]), hit("t1", &["parti"])]
    );
    assert_eq!(
        found(&stemming, "run meetings"),
        [
            hit("m1", &["meet"]),
            hit("t1", &["run"]),
            hit("t2", &["run"])
        ]
    );
    assert_eq!(found(&stemming, "ran"), []);
    // Removal and compaction keep stemming.
    assert!(stemming.remove("m1"));
    stemming.compact();
    assert_eq!(found(&stemming, "party"), [hit("t1", &["parti"])]);
    stemming
        .upsert(doc("memory", "m2", "s3", &[("text", "Partying")]))
        .unwrap();
    assert_eq!(
        found(&stemming, "party"),
        [hit("m2", &["parti"]), hit("t1", &["parti"])]
    );
    assert!(format!("{stemming:?}").contains("stem: true"));
}

/// Other forms of a query word count with their weight, in the listed fields only;
/// the default weighing is plain BM25F, bit for bit.
#[test]
fn word_forms_weigh_less_and_only_in_their_fields() {
    let docs = [
        doc("def", "a", "f", &[("name", "parse_reply"), ("body", "x")]),
        doc("def", "b", "f", &[("name", "parsed_reply"), ("body", "x")]),
        doc(
            "def",
            "c",
            "f",
            &[("name", "other"), ("body", "parse parses")],
        ),
        doc("def", "d", "f", &[("name", "unrelated"), ("body", "y")]),
    ];
    let ix = index(&docs);
    let params = Bm25Params::default();
    let plain = ix.search("parsed", &params, &[], 10);
    assert_eq!(keys(&plain), ["b"]);
    let same = ix.search_weighed("parsed", &params, &[], 10, QueryTerms::default());
    assert_eq!(plain, same);
    let forms = QueryTerms {
        forms: 0.5,
        idf_exponent: 1.0,
        form_fields: &["name"],
        prose_only: 1.0,
        filler: 1.0,
    };
    let found = ix.search_weighed("parsed", &params, &[], 10, forms);
    assert_eq!(keys(&found), ["b", "a"]);
    assert_eq!(found[1].matched, ["parse"]);
    let everywhere = QueryTerms {
        form_fields: &[],
        prose_only: 1.0,
        ..forms
    };
    // In every field, `c`'s body has two forms ("parse", "parses") and passes `a`.
    assert_eq!(
        keys(&ix.search_weighed("parsed", &params, &[], 10, everywhere)),
        ["b", "c", "a"]
    );
    let forms_of = super::search::word_forms("replies");
    assert!(forms_of.iter().any(|f| f == "reply"), "{forms_of:?}");
    assert!(super::search::word_forms("running")
        .iter()
        .any(|f| f == "run"));
}

/// Documents for the prose-only tests: `word` twice in `parent`'s body, as rare as
/// "gitignore", which `walk` has in its name; `gone` names `word` until removed.
fn prose_docs(word: &str) -> LexicalIndex {
    let body = format!("{word} {word}");
    let docs = [
        doc(
            "def",
            "walk",
            "f",
            &[("name", "gitignore_rules"), ("body", "match glob")],
        ),
        doc(
            "def",
            "parent",
            "g",
            &[("name", "parent_key"), ("body", body.as_str())],
        ),
        doc("def", "other", "h", &[("name", "other"), ("body", "x y z")]),
        doc("def", "gone", "h", &[("name", word), ("body", "x")]),
    ];
    index(&docs)
}

const PROSE: QueryTerms = QueryTerms {
    forms: 0.0,
    idf_exponent: 1.0,
    form_fields: &["name"],
    prose_only: 1.0,
    filler: 1.0,
};

#[test]
fn a_word_written_in_prose_only_weighs_prose_only() {
    let mut ix = prose_docs("cleaned");
    let params = Bm25Params::default();
    let query = "where is gitignore cleaned";
    let prose = QueryTerms {
        prose_only: 0.1,
        ..PROSE
    };
    // While a live document names "cleaned", it is not a prose word.
    assert_eq!(
        ix.search_weighed(query, &params, &[], 10, prose),
        ix.search(query, &params, &[], 10)
    );
    ix.remove("gone");
    // Plain BM25F ranks `parent` first.
    let plain = ix.search(query, &params, &[], 10);
    assert_eq!(keys(&plain), ["parent", "walk"]);
    // No live document names "cleaned": it is a prose word, and the name match wins.
    let weighed = ix.search_weighed(query, &params, &[], 10, prose);
    assert_eq!(keys(&weighed), ["walk", "parent"]);
    assert!(close(weighed[1].score, plain[0].score * 0.1));
    // A capital first letter is still a plain word.
    assert_eq!(
        ix.search_weighed("Cleaned gitignore", &params, &[], 10, prose),
        weighed
    );
    // Off when every field is an identifier field, or the factor is 1, or for a word
    // written as an identifier; `filler` does not weigh it.
    for (text, off) in [
        (
            query,
            QueryTerms {
                form_fields: &[],
                ..prose
            },
        ),
        (query, PROSE),
        (
            query,
            QueryTerms {
                filler: 0.1,
                ..PROSE
            },
        ),
        ("where is gitignore CLEANED", prose),
    ] {
        assert_eq!(
            ix.search_weighed(text, &params, &[], 10, off),
            plain,
            "{text}"
        );
    }
}

#[test]
fn a_filler_word_written_in_prose_only_weighs_filler() {
    assert!(super::super::FILLER_WORDS.contains(&"handled"));
    let mut ix = prose_docs("handled");
    ix.remove("gone");
    let params = Bm25Params::default();
    let query = "where is gitignore handled";
    let plain = ix.search(query, &params, &[], 10);
    assert_eq!(keys(&plain), ["parent", "walk"]);
    let filler = QueryTerms {
        filler: 0.1,
        ..PROSE
    };
    let weighed = ix.search_weighed(query, &params, &[], 10, filler);
    assert_eq!(keys(&weighed), ["walk", "parent"]);
    assert!(close(weighed[1].score, plain[0].score * 0.1));
    // `prose_only` does not weigh a filler word; an identifier form is not one.
    for (text, off) in [
        (
            query,
            QueryTerms {
                prose_only: 0.1,
                ..PROSE
            },
        ),
        (
            "where is gitignore Handled_Twice handled_twice HANDLED",
            filler,
        ),
    ] {
        assert_eq!(
            ix.search_weighed(text, &params, &[], 10, off),
            ix.search(text, &params, &[], 10),
            "{text}"
        );
    }
}
