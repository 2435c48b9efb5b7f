//! Changes to an index searched in place (`overlay`): exactly what the same
//! index read into memory and changed alike gives, without reading it.

use super::super::overlay::Change;
use super::*;

/// The same query over both, bit for bit, with every way a search weighs.
fn same_search(overlay: &LexicalIndex, thawed: &LexicalIndex, query: &str, at: &str) {
    let weighed = QueryTerms {
        forms: 0.5,
        idf_exponent: 1.5,
        form_fields: &["name", "path"],
        prose_only: 0.3,
        filler: 0.2,
    };
    let params = [
        Bm25Params::default(),
        Bm25Params {
            k1: 0.7,
            b: 0.3,
            field_weights: vec![("name".into(), 3.0), ("body".into(), 0.0)],
        },
        Bm25Params {
            k1: 2.0,
            b: 1.0,
            field_weights: vec![("zz".into(), 2.0)],
        },
    ];
    let kinds: [&[&str]; 4] = [&[], &["fn"], &["macro", "class"], &["nothing"]];
    for params in &params {
        for kinds in kinds {
            for limit in [1, 3, 50] {
                let ours = overlay.try_search(query, params, kinds, limit).unwrap();
                let theirs = thawed.try_search(query, params, kinds, limit).unwrap();
                assert_eq!(ours, theirs, "{at}: {query:?} {params:?} {kinds:?} {limit}");
                let ours = overlay
                    .try_search_weighed(query, params, kinds, limit, weighed)
                    .unwrap();
                let theirs = thawed
                    .try_search_weighed(query, params, kinds, limit, weighed)
                    .unwrap();
                assert_eq!(ours, theirs, "{at}: weighed {query:?} {params:?}");
                let unpruned = overlay
                    .search_with(query, params, kinds, limit, QueryTerms::default(), false)
                    .unwrap();
                let pruned = overlay.try_search(query, params, kinds, limit).unwrap();
                assert_eq!(unpruned, pruned, "{at}: {query:?} unpruned");
            }
        }
    }
}

/// Everything the two indexes answer, the same; `overlay` still in place.
fn same_index(overlay: &LexicalIndex, thawed: &LexicalIndex, terms: &[&str], at: &str) {
    assert!(overlay.frozen.is_some(), "{at}: read into memory");
    assert!(thawed.frozen.is_none());
    assert_eq!(overlay.len(), thawed.len(), "{at}");
    assert_eq!(overlay.is_empty(), thawed.is_empty(), "{at}");
    assert_eq!(overlay.field_stats(), thawed.field_stats(), "{at}");
    for term in terms {
        assert_eq!(
            overlay.df_of(term),
            thawed.df_of(term),
            "{at}: df of {term}"
        );
    }
    let mut ours: Vec<DocRef<'_>> = overlay.documents().collect();
    let mut theirs: Vec<DocRef<'_>> = thawed.documents().collect();
    ours.sort_by_key(|d| d.key);
    theirs.sort_by_key(|d| d.key);
    assert_eq!(ours, theirs, "{at}");
    assert_eq!(overlay.groups(), thawed.groups(), "{at}");
    for group in thawed.groups().into_iter().chain(["g0", "g1", "g2", "g9"]) {
        assert_eq!(
            overlay.keys_in_group(group),
            thawed.keys_in_group(group),
            "{at}: {group}"
        );
    }
    for i in 0..40 {
        let key = format!("k{i}");
        assert_eq!(overlay.contains(&key), thawed.contains(&key), "{at}: {key}");
        assert_eq!(overlay.get(&key), thawed.get(&key), "{at}: {key}");
        for field in ["name", "body", "zz"] {
            let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
            assert_eq!(
                overlay.only_in_field(&key, &terms, field),
                thawed.only_in_field(&key, &terms, field),
                "{at}: {key} {field}"
            );
        }
    }
    for query in [
        "alpha",
        "alpha beta gamma",
        "lonely",
        "quux alpha",
        "w1 w2 w3 common",
        "walking walks tree",
        "handled parse_tree",
        "zzz nothing",
        "common",
    ] {
        same_search(overlay, thawed, query, at);
    }
}

const TERMS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "lonely",
    "quux",
    "common",
    "w1",
    "w3",
    "walk",
    "walking",
    "tree",
    "parse_tree",
    "nothing",
];

/// The documents of the saved index: three groups, two kinds, three fields.
fn base_docs() -> Vec<Document> {
    (0..30)
        .map(|i| {
            let name = format!("alpha w{} parse_tree", i % 5);
            let body = format!("common w{} beta walking tree handled", i % 3);
            let mut fields = vec![("name", name.as_str()), ("body", body.as_str())];
            if i % 4 == 0 {
                fields.push(("path", "src/a/b.py gamma"));
            }
            if i == 7 || i == 8 {
                // Every document with "lonely" goes (k7 removed, k8's group).
                fields[1].1 = "lonely common";
            }
            let kind = if i % 3 == 0 { "class" } else { "fn" };
            doc(kind, &format!("k{i}"), &format!("g{}", i % 3), &fields)
        })
        .collect()
}

/// The index of `docs` saved and loaded twice: searched in place, and read
/// into memory.
fn loaded_twice(docs: &[Document], dir: &Path) -> (LexicalIndex, LexicalIndex) {
    let path = dir.join("lexical.bin");
    index(docs).save(&path, 1).unwrap();
    let (overlay, _) = LexicalIndex::load(&path).unwrap();
    let (mut thawed, _) = LexicalIndex::load(&path).unwrap();
    thawed.thaw().unwrap();
    (overlay, thawed)
}

#[derive(Debug, Clone)]
enum Step {
    Upsert(Document),
    Remove(&'static str),
    RemoveGroup(&'static str),
}

fn step(index: &mut LexicalIndex, step: &Step) -> String {
    match step {
        Step::Upsert(doc) => format!("{:?}", index.upsert(doc.clone())),
        Step::Remove(key) => index.remove(key).to_string(),
        Step::RemoveGroup(group) => index.remove_group(group).to_string(),
    }
}

#[test]
fn changes_in_place_search_as_the_index_read_into_memory_changed_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (mut overlay, mut thawed) = loaded_twice(&base_docs(), dir.path());
    same_index(&overlay, &thawed, TERMS, "loaded");
    assert!(!overlay.has_overlay());
    let steps = [
        // A base key replaced, with other text.
        Step::Upsert(doc("fn", "k1", "g1", &[("name", "gamma gamma beta")])),
        // A new key, a new field name, a new kind, a term only in the overlay.
        Step::Upsert(doc(
            "macro",
            "k30",
            "g9",
            &[("zz", "quux alpha walk"), ("name", "quux")],
        )),
        // Replaced again, in the overlay.
        Step::Upsert(doc("fn", "k1", "g1", &[("body", "alpha common")])),
        Step::Remove("k7"),
        Step::Remove("k7"),
        Step::Remove("k99"),
        // A group with base documents and one of the overlay.
        Step::Upsert(doc("class", "k31", "g2", &[("name", "alpha beta")])),
        Step::RemoveGroup("g2"),
        Step::RemoveGroup("g2"),
        Step::RemoveGroup("nothing"),
        // Back after its removal, in another group.
        Step::Upsert(doc("fn", "k5", "g0", &[("name", "w1 w3 tree")])),
        Step::Upsert(doc("fn", "k8", "g1", &[("name", "lonely again")])),
        Step::Remove("k8"),
        Step::Remove("k30"),
        // A document of no text, and field names twice (refused alike).
        Step::Upsert(doc("fn", "k32", "g1", &[])),
        Step::Upsert(doc("fn", "k33", "g1", &[("name", "a"), ("name", "b")])),
    ];
    for (i, s) in steps.iter().enumerate() {
        let at = format!("step {i} {s:?}");
        assert_eq!(step(&mut overlay, s), step(&mut thawed, s), "{at}");
        assert!(overlay.has_overlay(), "{at}");
        same_index(&overlay, &thawed, TERMS, &at);
    }
    // "lonely": every base document that had it is dead, and so is k8's.
    assert_eq!(overlay.df_of("lonely"), 0);
    assert!(overlay
        .search("lonely", &Bm25Params::default(), &[], 5)
        .is_empty());
    assert_eq!(overlay.df_of("quux"), 0);
    assert!(overlay.df_of("gamma") > 0);
    // The overlay read into memory is the index changed in memory.
    check_invariants(&overlay);
    let encoded = thawed.encode().unwrap();
    assert_eq!(overlay.encode().unwrap(), encoded);
    assert!(overlay.frozen.is_some(), "encoding reads a copy");
    // Saved, it loads back as the changed index saved.
    let path = dir.path().join("again.bin");
    overlay.save(&path, 2).unwrap();
    let (again, generation) = LexicalIndex::load(&path).unwrap();
    assert_eq!(generation, 2);
    assert!(again.frozen.is_some() && !again.has_overlay());
    assert_eq!(again.encode().unwrap(), encoded);
    same_index(&again, &thawed, TERMS, "saved and loaded");
    // Serialized alike.
    let ours = postcard::to_stdvec(&overlay).unwrap();
    assert_eq!(ours, postcard::to_stdvec(&thawed).unwrap());
    let back: LexicalIndex = postcard::from_bytes(&ours).unwrap();
    assert_eq!(back.encode().unwrap(), encoded);
    // Read into memory, it goes on as the other.
    let mut read = overlay.clone();
    read.thaw().unwrap();
    assert!(read.frozen.is_none() && !read.has_overlay());
    let more = Step::Upsert(doc("fn", "k2", "g2", &[("name", "beta again")]));
    step(&mut read, &more);
    step(&mut thawed, &more);
    step(&mut overlay, &more);
    assert_eq!(read.encode().unwrap(), thawed.encode().unwrap());
    same_index(&overlay, &thawed, TERMS, "after");
}

#[test]
fn bulk_upserts_and_emptying_go_to_the_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let (mut overlay, mut thawed) = loaded_twice(&base_docs(), dir.path());
    let batch: Vec<Document> = (25..60)
        .map(|i| {
            let name = format!("quux w{} alpha", i % 4);
            doc("fn", &format!("k{i}"), "g1", &[("name", &name)])
        })
        .collect();
    overlay.check_batch(&batch).unwrap();
    overlay.upsert_all(batch.clone()).unwrap();
    thawed.upsert_all(batch).unwrap();
    same_index(&overlay, &thawed, TERMS, "bulk");
    for group in ["g0", "g1", "g2"] {
        assert_eq!(overlay.remove_group(group), thawed.remove_group(group));
        same_index(&overlay, &thawed, TERMS, group);
    }
    assert!(overlay.is_empty() && overlay.frozen.is_some());
    assert_eq!(overlay.encode().unwrap(), thawed.encode().unwrap());
    // Filled again from empty: a new index, as the other.
    let docs = vec![doc("fn", "n1", "g", &[("name", "alpha")])];
    overlay.upsert_all(docs.clone()).unwrap();
    thawed.upsert_all(docs).unwrap();
    assert_eq!(overlay.encode().unwrap(), thawed.encode().unwrap());
}

#[test]
fn a_large_overlay_is_read_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut overlay, mut thawed) = loaded_twice(&base_docs(), dir.path());
    let mut i = 0;
    while overlay.frozen.is_some() {
        let name = format!("w{} quux", i % 7);
        let s = Step::Upsert(doc("fn", &format!("k{}", i % 50), "g1", &[("name", &name)]));
        assert_eq!(step(&mut overlay, &s), step(&mut thawed, &s));
        i += 1;
        assert!(i <= 4097, "still in place after {i} changes");
    }
    assert_eq!(i, 4097, "read at the change after the bound");
    assert!(!overlay.has_overlay());
    assert_eq!(overlay.encode().unwrap(), thawed.encode().unwrap());
}

#[test]
fn a_change_past_the_field_cap_reads_the_index_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Thirty fields in the file, two of them in one document only.
    let names: Vec<String> = (0..30).map(|f| format!("f{f:02}")).collect();
    let mut docs = vec![];
    for (i, chunk) in names.chunks(5).enumerate() {
        let fields: Vec<(&str, &str)> = chunk.iter().map(|n| (n.as_str(), "alpha")).collect();
        docs.push(doc("fn", &format!("k{i}"), "g", &fields));
    }
    let (mut overlay, mut thawed) = loaded_twice(&docs, dir.path());
    // Two more: 32, in the overlay.
    let two = Step::Upsert(doc("fn", "n1", "g", &[("x1", "beta"), ("x2", "beta")]));
    assert_eq!(step(&mut overlay, &two), step(&mut thawed, &two));
    assert!(overlay.frozen.is_some());
    // One more goes past the cap with k0's names (now of no document): read
    // into memory, where a compaction makes room, as in the other.
    let gone = Step::Remove("k0");
    assert_eq!(step(&mut overlay, &gone), step(&mut thawed, &gone));
    assert!(overlay.frozen.is_some());
    let third = Step::Upsert(doc("fn", "n2", "g", &[("x3", "gamma")]));
    assert_eq!(step(&mut overlay, &third), step(&mut thawed, &third));
    assert!(overlay.frozen.is_none());
    assert_eq!(overlay.encode().unwrap(), thawed.encode().unwrap());
    let too_many = Step::Upsert(doc(
        "fn",
        "n3",
        "g",
        &[
            ("y1", "a"),
            ("y2", "a"),
            ("y3", "a"),
            ("y4", "a"),
            ("y5", "a"),
            ("y6", "a"),
        ],
    ));
    assert_eq!(step(&mut overlay, &too_many), step(&mut thawed, &too_many));
}

#[test]
fn the_log_keeps_tokens_not_text() {
    let dir = tempfile::tempdir().unwrap();
    let (mut overlay, _) = loaded_twice(&base_docs(), dir.path());
    let long = "alpha ".repeat(10_000);
    overlay
        .upsert(doc("fn", "k1", "g1", &[("body", &long)]))
        .unwrap();
    let log = overlay.overlay.as_ref().unwrap().log();
    match log {
        [Change::Upsert(upsert)] => {
            assert_eq!(upsert.0.fields, [("body".into(), String::new())]);
            assert!(upsert.1.heap_bytes() < 1000);
        }
        _ => panic!("one upsert logged"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any changes to a loaded index, made in place, answer as the same changes
    /// made to it read into memory, after each; saved, the same file.
    #[test]
    fn any_changes_in_place_are_those_in_memory(
        stem in any::<bool>(),
        base in prop::collection::vec(0..40u32, 1..30),
        changes in prop::collection::vec((0..6u32, 0..40u32, 0..6u32, 0..4u32), 1..25),
    ) {
        let words = ["alpha", "beta", "walking", "walks", "tree", "quux", "common", "the"];
        let text = |n: u32| -> String {
            (0..1 + n % 4).map(|i| words[((n / 3 + i * 5) % 8) as usize]).collect::<Vec<_>>().join(" ")
        };
        let fields = ["name", "body", "zz", "path"];
        let make = |key: u32, variant: u32| -> Document {
            let mut fs = vec![(fields[(variant % 4) as usize], text(key + variant))];
            if variant.is_multiple_of(2) {
                fs.push((fields[((variant + 1) % 4) as usize], text(key * 7 + variant)));
            }
            let fs: Vec<(&str, &str)> = fs.iter().map(|(n, t)| (*n, t.as_str())).collect();
            let kind = ["fn", "class", "macro"][(variant % 3) as usize];
            doc(kind, &format!("k{key}"), &format!("g{}", (key + variant) % 3), &fs)
        };
        let docs: Vec<Document> = base.iter().map(|&k| make(k, k % 3)).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexical.bin");
        let mut built = LexicalIndex::with_stemming(stem);
        for d in &docs {
            built.upsert(d.clone()).unwrap();
        }
        built.save(&path, 1).unwrap();
        let (mut overlay, _) = LexicalIndex::load(&path).unwrap();
        let (mut thawed, _) = LexicalIndex::load(&path).unwrap();
        thawed.thaw().unwrap();
        let mut compacted = false;
        for (i, &(what, key, variant, group)) in changes.iter().enumerate() {
            let s = match what {
                0..=2 => Step::Upsert(make(key, variant)),
                3 | 4 => Step::Remove(["k0", "k1", "k2", "k3", "k5", "k8", "k13", "k21"][(key % 8) as usize]),
                _ => Step::RemoveGroup(["g0", "g1", "g2", "g3"][group as usize]),
            };
            prop_assert_eq!(step(&mut overlay, &s), step(&mut thawed, &s));
            if key % 7 == 0 {
                // Changes nothing a search or save sees; in place, nothing at all.
                overlay.compact();
                thawed.compact();
                compacted = true;
            }
            prop_assert!(overlay.frozen.is_some());
            prop_assert_eq!(overlay.len(), thawed.len());
            prop_assert_eq!(overlay.field_stats(), thawed.field_stats());
            for word in words {
                let word = if stem { crate::retrieve::tokenize::stem(word).to_string() } else { word.to_string() };
                prop_assert_eq!(overlay.df_of(&word), thawed.df_of(&word), "{} at {}", word, i);
            }
            for query in ["alpha", "walking tree", "quux the common beta", "walks alpha"] {
                for kinds in [&[][..], &["fn", "macro"][..]] {
                    for limit in [1, 4, 40] {
                        let params = Bm25Params {
                            k1: 1.2,
                            b: 0.75,
                            field_weights: vec![("zz".into(), 2.0), ("path".into(), 0.0)],
                        };
                        prop_assert_eq!(
                            overlay.try_search(query, &params, kinds, limit).unwrap(),
                            thawed.try_search(query, &params, kinds, limit).unwrap(),
                            "{} {:?} {} at {}", query, kinds, limit, i
                        );
                        let weighed = QueryTerms {
                            forms: 0.5,
                            idf_exponent: 1.3,
                            form_fields: &["name", "zz"],
                            prose_only: 0.4,
                            filler: 0.2,
                        };
                        prop_assert_eq!(
                            overlay.try_search_weighed(query, &params, kinds, limit, weighed).unwrap(),
                            thawed.try_search_weighed(query, &params, kinds, limit, weighed).unwrap(),
                            "weighed {} {:?} {} at {}", query, kinds, limit, i
                        );
                    }
                }
            }
        }
        check_invariants(&overlay);
        if !compacted {
            prop_assert_eq!(overlay.encode().unwrap(), thawed.encode().unwrap());
        }
        // Saved, it loads back as the other (its terms numbered as the other's
        // before that one's compactions, if any).
        let again = dir.path().join("again.bin");
        overlay.save(&again, 2).unwrap();
        let (again, _) = LexicalIndex::load(&again).unwrap();
        prop_assert_eq!(again.len(), thawed.len());
        prop_assert_eq!(again.field_stats(), thawed.field_stats());
        for word in words {
            prop_assert_eq!(again.df_of(word), thawed.df_of(word));
        }
        for key in 0..40 {
            let key = format!("k{key}");
            prop_assert_eq!(again.get(&key), thawed.get(&key));
        }
        for query in ["alpha", "walking tree", "quux the common beta", "walks alpha"] {
            let params = Bm25Params::default();
            prop_assert_eq!(
                again.try_search(query, &params, &[], 40).unwrap(),
                thawed.try_search(query, &params, &[], 40).unwrap()
            );
        }
    }
}

/// The delta compacts itself (its replaced documents past a quarter): saved,
/// the index still loads back as the other.
#[test]
fn a_save_after_the_overlay_compacted_itself_loads_back_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (mut overlay, mut thawed) = loaded_twice(&base_docs(), dir.path());
    for round in 0..30 {
        for key in 0..8 {
            // A word that comes and goes, and one that stays.
            let text = format!("quux{} alpha w{}", round % 3, key);
            let s = Step::Upsert(doc("fn", &format!("k{key}"), "g1", &[("zz", &text)]));
            assert_eq!(step(&mut overlay, &s), step(&mut thawed, &s));
        }
        if round % 10 == 9 {
            let s = Step::RemoveGroup("g1");
            assert_eq!(step(&mut overlay, &s), step(&mut thawed, &s));
        }
    }
    let delta = &overlay.overlay.as_ref().unwrap().delta;
    assert!(delta.docs.len() < 240, "the delta compacted itself");
    same_index(&overlay, &thawed, TERMS, "compacted");
    let path = dir.path().join("again.bin");
    overlay.save(&path, 2).unwrap();
    let (again, _) = LexicalIndex::load(&path).unwrap();
    same_index(
        &again,
        &thawed,
        &["quux0", "quux1", "quux2", "alpha", "w3"],
        "saved",
    );
    check_invariants(&again);
}
