//! Property tests: updates search like a fresh index, pruning changes nothing.

use super::*;

// The model-based property test: any sequence of updates searches exactly like
// an index built from the documents that remain, and so does its saved copy.

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "parse_tree",
    "httpServer",
    "getValue",
    "the",
    "x",
    "walk",
    "tree",
    "Alpha",
    "src/a/b.py",
    "größe",
    "tree tree",
    "HTTP",
    // Forms that share a stem.
    "walking",
    "walks",
    "parties",
    "party",
    "trees",
    "meetings",
];
const FIELD_NAMES: &[&str] = &["name", "body", "path", "doc", "zz"];
const KINDS: &[&str] = &["fn", "class", "memory"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..6).prop_map(|w| w.join(" "))
}

fn document() -> impl Strategy<Value = Document> {
    (
        0..8usize,
        0..KINDS.len(),
        0..3usize,
        prop::collection::vec((0..FIELD_NAMES.len(), text()), 0..4),
        text(),
    )
        .prop_map(|(key, kind, group, fields, meta)| {
            let mut seen = Vec::new();
            let fields = fields
                .into_iter()
                .filter(|(f, _)| {
                    let new = !seen.contains(f);
                    seen.push(*f);
                    new
                })
                .map(|(f, text)| (FIELD_NAMES[f].into(), text))
                .collect();
            Document {
                kind: KINDS[kind].into(),
                key: format!("k{key}"),
                group: format!("g{group}"),
                fields,
                meta: vec![("m".into(), meta)],
            }
        })
}

#[derive(Debug, Clone)]
enum Op {
    Upsert(Document),
    Remove(usize),
    RemoveGroup(usize),
    Compact,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => document().prop_map(Op::Upsert),
        2 => (0..8usize).prop_map(Op::Remove),
        1 => (0..3usize).prop_map(Op::RemoveGroup),
        1 => Just(Op::Compact),
    ]
}

#[derive(Debug, Clone)]
struct Query {
    text: String,
    params: Bm25Params,
    kinds: Vec<&'static str>,
    limit: usize,
}

fn query() -> impl Strategy<Value = Query> {
    (
        text(),
        0.0..3.0f64,
        prop::sample::select(vec![0.0, 0.3, 0.75, 1.0]),
        prop::collection::vec(
            (
                0..FIELD_NAMES.len(),
                prop::sample::select(vec![0.0, 0.5, 1.0, 3.0]),
            ),
            0..3,
        ),
        prop::sample::subsequence(KINDS.to_vec(), 0..=2),
        1..12usize,
    )
        .prop_map(|(text, k1, b, weights, kinds, limit)| Query {
            text,
            params: Bm25Params {
                k1,
                b,
                field_weights: weights
                    .into_iter()
                    .map(|(f, w)| (FIELD_NAMES[f].to_string(), w))
                    .collect(),
            },
            kinds,
            limit,
        })
}

fn same_results(
    a: &LexicalIndex,
    b: &LexicalIndex,
    q: &Query,
) -> std::result::Result<(), TestCaseError> {
    let x = a.search(&q.text, &q.params, &q.kinds, q.limit);
    let y = b.search(&q.text, &q.params, &q.kinds, q.limit);
    prop_assert_eq!(keys(&x), keys(&y), "{:?}", q);
    for (x, y) in x.iter().zip(&y) {
        prop_assert!((x.score - y.score).abs() <= 1e-9, "{:?} {:?}", x, y);
        prop_assert_eq!(&x.matched, &y.matched);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn updates_search_like_a_fresh_index(
        stem in any::<bool>(),
        ops in prop::collection::vec(op(), 0..40),
        later in prop::collection::vec(op(), 0..20),
        queries in prop::collection::vec(query(), 1..8),
    ) {
        let mut index = LexicalIndex::with_stemming(stem);
        let mut model: BTreeMap<String, Document> = BTreeMap::new();
        apply(&mut index, &mut model, ops)?;
        check_invariants(&index);
        // Built in another order, so slots and term ids differ.
        let fresh = fresh_index(&model, stem);
        // And in bulk, tokenized in parallel.
        let mut bulk = LexicalIndex::with_stemming(stem);
        bulk.check_batch(&model.values().cloned().collect::<Vec<_>>()).unwrap();
        bulk.upsert_all(model.values().cloned().collect()).unwrap();
        check_invariants(&bulk);
        prop_assert_eq!(index.len(), model.len());
        for (key, d) in &model {
            let got = index.get(key).unwrap();
            prop_assert_eq!((got.kind, got.group, got.meta.to_vec()), (&*d.kind, d.group.as_str(), d.meta.clone()));
        }
        let mut groups: Vec<&str> = model.values().map(|d| d.group.as_str()).collect();
        groups.sort_unstable();
        groups.dedup();
        prop_assert_eq!(index.groups(), groups);

        // Saved and loaded, it is searched where the file holds it, and saved
        // again it is the same file; read into memory, it reads its lists and
        // each document's terms from the file's bytes.
        let encoded = index.encode().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical.bin");
        index.save(&path, 7).unwrap();
        let (mut loaded, generation) = LexicalIndex::load(&path).unwrap();
        prop_assert_eq!(generation, 7);
        prop_assert!(loaded.frozen.is_some());
        prop_assert_eq!(loaded.encode().unwrap(), encoded.clone());
        let mut thawed = loaded.clone();
        thawed.thaw().unwrap();
        prop_assert!(thawed.frozen.is_none());
        check_invariants(&thawed);
        prop_assert!(thawed.postings.iter().all(|l| l.shared_bytes() == l.encoded().len()));
        let terms: usize = index.docs.iter().flatten().map(|d| d.terms.len()).sum();
        prop_assert_eq!(thawed.forward.sizes(), (0, terms * 4));
        prop_assert_eq!(thawed.encode().unwrap(), encoded);
        for key in model.keys() {
            prop_assert_eq!(loaded.get(key), index.get(key));
            prop_assert_eq!(loaded.keys_in_group(key), index.keys_in_group(key));
        }
        prop_assert_eq!(loaded.groups(), index.groups());
        let mut compacted = index.clone();
        compacted.compact();
        check_invariants(&compacted);
        for built in [&index, &fresh, &bulk, &loaded, &thawed, &compacted] {
            prop_assert_eq!(built.stem(), stem);
        }
        let survivors: Vec<Document> = model.values().cloned().collect();
        for q in &queries {
            let expected = reference_with(&survivors, &q.text, &q.params, &q.kinds, q.limit, stem);
            same_as_reference(&index.search(&q.text, &q.params, &q.kinds, q.limit), &expected)?;
            same_results(&index, &fresh, q)?;
            same_results(&loaded, &fresh, q)?;
            same_results(&thawed, &fresh, q)?;
            same_results(&compacted, &fresh, q)?;
            same_results(&bulk, &fresh, q)?;
        }
        // Changed after the load (its lists copied as they grow, the file
        // replaced under it), it searches as a fresh index of what it holds.
        loaded.thaw().unwrap();
        apply(&mut loaded, &mut model, later)?;
        index.save(&path, 8).unwrap();
        check_invariants(&loaded);
        let fresh = fresh_index(&model, stem);
        for q in &queries {
            same_results(&loaded, &fresh, q)?;
        }
    }
}

/// `ops` done to `index` and to `model`, the documents it should hold.
fn apply(
    index: &mut LexicalIndex,
    model: &mut BTreeMap<String, Document>,
    ops: Vec<Op>,
) -> std::result::Result<(), TestCaseError> {
    for op in ops {
        match op {
            Op::Upsert(d) => {
                index.upsert(d.clone()).unwrap();
                model.insert(d.key.clone(), d);
            }
            Op::Remove(k) => {
                let key = format!("k{k}");
                prop_assert_eq!(index.remove(&key), model.remove(&key).is_some());
            }
            Op::RemoveGroup(g) => {
                let group = format!("g{g}");
                let before = model.len();
                model.retain(|_, d| d.group != group);
                prop_assert_eq!(index.remove_group(&group), before - model.len());
            }
            Op::Compact => index.compact(),
        }
    }
    Ok(())
}

/// An index of `model`'s documents, added in reverse order.
fn fresh_index(model: &BTreeMap<String, Document>, stem: bool) -> LexicalIndex {
    let mut fresh = LexicalIndex::with_stemming(stem);
    for d in model.values().rev() {
        fresh.upsert(d.clone()).unwrap();
    }
    fresh
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Pruned search returns exactly what scoring every document returns, and
    /// what the plain reference computes.
    #[test]
    fn pruning_changes_nothing(
        seed in any::<u64>(),
        count in 50..400usize,
        queries in prop::collection::vec(
            (prop::collection::vec(0..60u32, 1..10), 1..25usize, prop::sample::subsequence(vec!["fn", "class"], 0..=1), 0.0..2.0f64, 0.0..=1.0f64),
            8,
        ),
    ) {
        let docs = skewed_documents(seed, count);
        let index = index(&docs);
        for (words, limit, kinds, k1, b) in queries {
            let text: Vec<String> = words.iter().map(|w| format!("w{w}x")).collect();
            let text = text.join(" ");
            let params = Bm25Params { k1, b, field_weights: vec![("name".into(), 2.0)] };
            let pruned = index.search(&text, &params, &kinds, limit);
            let full = index.search_with(&text, &params, &kinds, limit, super::super::QueryTerms::default(), false).unwrap();
            prop_assert_eq!(&pruned, &full);
            same_as_reference(&pruned, &reference(&docs, &text, &params, &kinds, limit))?;
        }
    }
}

#[test]
fn pruning_happens() {
    let docs = skewed_documents(3, 2000);
    let index = index(&docs);
    let before = PRUNED.with(Cell::get);
    let params = Bm25Params::default();
    for q in ["w0x w1x w50x", "w59x w0x w2x w3x", "w40x w1x w0x w4x w5x"] {
        assert_eq!(
            index.search(q, &params, &[], 5),
            index
                .search_with(
                    q,
                    &params,
                    &[],
                    5,
                    super::super::QueryTerms::default(),
                    false
                )
                .unwrap()
        );
    }
    assert!(PRUNED.with(Cell::get) > before);
}
