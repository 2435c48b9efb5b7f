//! Saving and loading: round trips, damage, and the streamed writes.

use super::*;

#[test]
fn groups_apart_in_the_file_load_with_their_members_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let docs: Vec<Document> = [
        ("a1", "a"),
        ("b1", "b"),
        ("a2", "a"),
        ("a3", "a"),
        ("c1", "c"),
    ]
    .iter()
    .map(|&(key, group)| doc("fn", key, group, &[("name", key)]))
    .collect();
    index(&docs).save(&path, 1).unwrap();
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    check_invariants(&loaded);
    let mut groups: Vec<(&str, Vec<&str>)> = loaded
        .groups()
        .into_iter()
        .map(|group| (group, loaded.keys_in_group(group)))
        .collect();
    groups.sort();
    assert_eq!(
        groups,
        [
            ("a", vec!["a1", "a2", "a3"]),
            ("b", vec!["b1"]),
            ("c", vec!["c1"])
        ]
    );
}

#[test]
fn a_file_written_in_place_after_the_load_is_refused() {
    use std::io::{Seek, SeekFrom, Write};
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let docs = [
        doc("fn", "a::f", "a.py", &[("name", "alpha beta")]),
        doc("fn", "b::g", "b.py", &[("name", "alpha gamma")]),
    ];
    index(&docs).save(&path, 7).unwrap();
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    loaded.check_source().unwrap();
    assert!(LexicalIndex::new().check_source().is_ok());
    // A save renames a new file over the name: the loaded index's file is
    // unchanged, and so is a copy made of it.
    let (other, _) = LexicalIndex::load(&path).unwrap();
    other.save(&path, 8).unwrap();
    other.check_source().unwrap();
    other.clone().check_source().unwrap();
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    let before = loaded.search("alpha", &Bm25Params::default(), &[], 10);
    assert_eq!(keys(&before), ["a::f", "b::g"]);
    // The same bytes written over themselves, in place: the modification time
    // changes (set here, so that the test does not depend on the clock's tick).
    let bytes = std::fs::read(&path).unwrap();
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&bytes).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .unwrap();
    let refused = |index: &LexicalIndex| match index.check_source() {
        Err(Error::Corrupt(why)) => {
            assert!(why.contains("written in place"), "{why}");
            assert!(why.contains(&path.display().to_string()), "{why}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    };
    refused(&loaded);
    // Cut short: the size changed.
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    file.set_len(bytes.len() as u64 / 2).unwrap();
    refused(&loaded);
    refused(&loaded.clone());
}

#[test]
fn save_load_round_trip_and_forgetting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let mut index = index(&[
        doc(
            "fn",
            "keep::f",
            "keep.py",
            &[("name", "alpha beta"), ("body", "gamma")],
        ),
        doc(
            "memory",
            "secret-key-123",
            "secrets",
            &[("text", "password hunter2 alpha")],
        ),
    ]);
    index
        .upsert(Document {
            meta: vec![("note".into(), "private-meta-456".into())],
            ..doc("fn", "gone::g", "keep.py", &[("name", "alpha")])
        })
        .unwrap();
    index.remove("gone::g");
    assert_eq!(index.remove_group("secrets"), 1);
    index.save(&path, 42).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for secret in [
        "secret-key-123",
        "private-meta-456",
        "hunter2",
        "password",
        "secrets",
        "memory",
        "text",
    ] {
        assert!(!text.contains(secret), "{secret} survived in the file");
    }
    let (loaded, generation) = LexicalIndex::load(&path).unwrap();
    check_invariants(&loaded);
    assert_eq!(generation, 42);
    assert_eq!(loaded.len(), 1);
    let params = Bm25Params::default();
    for query in ["alpha", "gamma beta", "hunter2"] {
        assert_eq!(
            loaded.search(query, &params, &[], 5),
            index.search(query, &params, &[], 5)
        );
    }
    // Serde (postcard here) holds the same compacted form.
    let encoded = postcard::to_stdvec(&index).unwrap();
    let decoded: LexicalIndex = postcard::from_bytes(&encoded).unwrap();
    check_invariants(&decoded);
    assert_eq!(
        decoded.search("alpha", &params, &[], 5),
        index.search("alpha", &params, &[], 5)
    );

    // Damage: a flipped byte, a cut, another kind of file.
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 0x40;
    for bad in [
        &flipped[..],
        &bytes[..bytes.len() / 2],
        b"AIRGRAPH\x03\0\0\0 and so on and so on and so on",
    ] {
        std::fs::write(&path, bad).unwrap();
        match LexicalIndex::load(&path) {
            Err(Error::Corrupt(m)) => assert!(
                m.contains("rebuild it") && m.contains("lexical index"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

/// Metadata of any number of pairs (those of up to four are made without a
/// list of their own, `MetaIn`) reads back as saved, through a file and serde.
#[test]
fn metadata_of_any_size_is_loaded_as_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let docs: Vec<Document> = (0..8)
        .map(|n| Document {
            meta: (0..n)
                .map(|i| (format!("k{i}"), "é".repeat(i) + &"v".repeat(n * 40)))
                .collect(),
            ..doc("fn", &format!("d{n}"), "g.py", &[("name", "alpha")])
        })
        .collect();
    let index = index(&docs);
    index.save(&path, 1).unwrap();
    let (loaded, _) = LexicalIndex::load(&path).unwrap();
    let decoded: LexicalIndex =
        postcard::from_bytes(&postcard::to_stdvec(&index).unwrap()).unwrap();
    for read in [&loaded, &decoded] {
        check_invariants(read);
        for d in &docs {
            assert_eq!(read.get(&d.key).unwrap().meta.to_vec(), d.meta, "{}", d.key);
        }
    }
}

/// A well-framed file whose payload breaks an invariant is refused, not trusted.
#[test]
fn inconsistent_payloads_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let encoded = index(&[
        doc("fn", "a", "g", &[("name", "alpha beta")]),
        doc("fn", "b", "g", &[("name", "beta")]),
    ])
    .encode()
    .unwrap();
    // The stored form, and the columns after it as saved.
    let (saved, columns) = postcard::take_from_bytes::<SavedOwned>(&encoded).unwrap();
    let good: StoredOwned = saved.index;
    let payload = |stem: bool, stored: &StoredOwned| {
        let mut payload = postcard::to_stdvec(&Saved {
            stem,
            index: stored.clone(),
        })
        .unwrap();
        payload.extend_from_slice(columns);
        payload
    };
    // The postings as (delta, tf << 5 | field) per term, and back.
    fn lists(s: &StoredOwned) -> Vec<Vec<(u32, u32)>> {
        let mut at = 0;
        s.sizes
            .iter()
            .map(|&size| {
                let end = at + size as usize;
                let mut list = Vec::new();
                while at < end {
                    let delta = read_varint(&s.postings.0, &mut at).unwrap();
                    list.push((delta, read_varint(&s.postings.0, &mut at).unwrap()));
                }
                list
            })
            .collect()
    }
    fn set(s: &mut StoredOwned, lists: Vec<Vec<(u32, u32)>>) {
        s.sizes.clear();
        s.postings.0.clear();
        for list in lists {
            let before = s.postings.0.len();
            for (delta, packed) in list {
                write_varint64(&mut s.postings.0, delta.into());
                write_varint64(&mut s.postings.0, packed.into());
            }
            s.sizes.push((s.postings.0.len() - before) as u64);
        }
    }
    fn edit(f: impl Fn(&mut Vec<Vec<(u32, u32)>>)) -> impl Fn(&mut StoredOwned) {
        move |s| {
            let mut l = lists(s);
            f(&mut l);
            set(s, l);
        }
    }
    assert_eq!(
        lists(&good),
        [vec![(0, 1 << 5)], vec![(0, 1 << 5), (1, 1 << 5)]]
    );
    type Mutation = Box<dyn Fn(&mut StoredOwned)>;
    let mutations: Vec<(&str, Mutation)> = vec![
        (
            "a posting of no document",
            Box::new(edit(|l| l[0][0].0 = 7)),
        ),
        (
            "a posting of no field",
            Box::new(edit(|l| l[0][0].1 = 1 << 5 | 3)),
        ),
        ("a posting of no field", Box::new(edit(|l| l[0][0].1 = 0))),
        (
            "postings out of order",
            Box::new(edit(|l| l[1].push((0, 1 << 5)))),
        ),
        ("has no postings", Box::new(edit(|l| l[1].clear()))),
        ("a cut posting", Box::new(|s| s.postings.0[0] |= 0x80)),
        ("longer than the file", Box::new(|s| s.sizes[1] += 1)),
        ("bytes after", Box::new(|s| s.postings.0.push(0))),
        ("twice", Box::new(|s| s.terms[1] = s.terms[0].clone())),
        ("twice", Box::new(|s| s.docs[1].key = "a".into())),
        ("no kind", Box::new(|s| s.docs[1].kind = 5)),
        (
            "differ in number",
            Box::new(|s| {
                s.terms.pop();
            }),
        ),
        (
            "out of order",
            Box::new(|s| s.fields = vec!["z".into(), "a".into()]),
        ),
    ];
    for (why, mutate) in mutations {
        let mut stored = good.clone();
        mutate(&mut stored);
        // Stemming or not.
        for stem in [false, true] {
            let payload = payload(stem, &stored);
            persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), &payload).unwrap();
            match LexicalIndex::load(&path) {
                Err(Error::Corrupt(m)) => assert!(m.contains(why), "{why}: {m}"),
                other => panic!("{why}: {other:?}"),
            }
        }
    }
    // The flag is a byte, 0 or 1.
    let mut flagged = payload(true, &good);
    assert_eq!(flagged[0], 1);
    flagged[0] = 2;
    // The stored form without the flag, or without the columns, is no payload.
    let mut flagless = postcard::to_stdvec(&good).unwrap();
    flagless.extend_from_slice(columns);
    let good_payload = payload(false, &good);
    let columnless = &good_payload[..good_payload.len() - columns.len()];
    for bad in [&flagged[..], &flagless, columnless] {
        persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), bad).unwrap();
        assert!(matches!(LexicalIndex::load(&path), Err(Error::Corrupt(_))));
    }
    persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), &good_payload).unwrap();
    assert_eq!(LexicalIndex::load(&path).unwrap().0.len(), 2);
}

/// A file's columns (each document's terms and field lengths) are
/// read as saved, and refused where they do not fit the documents or disagree
/// with the postings.
#[test]
fn columns_that_do_not_fit_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let index = index(&[
        doc("fn", "a", "g", &[("name", "alpha beta")]),
        doc("fn", "b", "g", &[("name", "beta")]),
    ]);
    let head = postcard::to_stdvec(&index.to_saved()).unwrap();
    let encoded = index.encode().unwrap();
    let good: Columns<'_> = postcard::from_bytes(&encoded[head.len()..]).unwrap();
    let u32s = |bytes: &[u8]| read_u32s(bytes).collect::<Vec<u32>>();
    assert_eq!(
        (u32s(good.counts), u32s(good.forward), u32s(good.lengths)),
        (vec![2, 1], vec![0, 1, 1], vec![2, 1])
    );
    let load = |counts: &[u32], forward: &[u32], lengths: &[u32]| {
        let mut payload = head.clone();
        for column in [counts, forward, lengths] {
            let bytes: Vec<u8> = column.iter().flat_map(|v| v.to_le_bytes()).collect();
            payload.extend(postcard::to_stdvec(&bytes).unwrap());
        }
        persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), &payload).unwrap();
        LexicalIndex::load(&path)
    };
    let (loaded, _) = load(&[2, 1], &[0, 1, 1], &[2, 1]).unwrap();
    assert_eq!(loaded.encode().unwrap(), encoded);
    type Case<'a> = (&'a [u32], &'a [u32], &'a [u32], &'a str);
    let cases: [Case<'_>; 8] = [
        (&[2, 1], &[1, 0, 1], &[2, 1], "out of order or unknown"),
        (&[2, 1], &[0, 7, 1], &[2, 1], "out of order or unknown"),
        (&[2, 1], &[0, 1, 0], &[2, 1], "disagree with the postings"),
        (&[1, 2], &[0, 0, 1], &[2, 1], "disagree with the postings"),
        (
            &[2, 2],
            &[0, 1, 1],
            &[2, 1],
            "another number than their counts",
        ),
        (&[3], &[0, 1, 1], &[2, 1], "term counts of another number"),
        (&[2, 1], &[0, 1, 1], &[2], "field lengths of another number"),
        (&[2, 1], &[0, 1, 1], &[2, 100_001], "longer than the limit"),
    ];
    for (counts, forward, lengths, why) in cases {
        match load(counts, forward, lengths) {
            Err(Error::Corrupt(m)) => assert!(m.contains(why), "{why}: {m}"),
            other => panic!("{why}: {:?}", other.map(|(i, _)| i.len())),
        }
    }
}

#[test]
fn varints() {
    for value in [0, 1, 127, 128, 300, 1 << 21, u32::MAX] {
        let mut bytes = Vec::new();
        write_varint64(&mut bytes, value.into());
        assert_eq!(varint64_len(value.into()), bytes.len(), "{value}");
        let mut at = 0;
        assert_eq!(read_varint(&bytes, &mut at), Some(value));
        assert_eq!(at, bytes.len());
    }
    let mut at = 0;
    assert_eq!(read_varint(&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F], &mut at), None);
    let mut at = 0;
    assert_eq!(read_varint(&[0x80, 0x80], &mut at), None);
    let mut at = 0;
    assert_eq!(read_varint(&[0xFF; 6], &mut at), None);
    // One byte after another, then the end.
    let (bytes, mut at) = ([0x05, 0x7F, 0x80, 0x01], 0);
    let read: Vec<_> = std::iter::from_fn(|| read_varint(&bytes, &mut at)).collect();
    assert_eq!((read, at), (vec![5, 127, 128], 4));
}

/// The bytes streamed to a sink are `encode`'s, in pieces; a sink that fails,
/// in the head or in the postings, stops the encoding with its own error.
#[test]
fn encode_into_streams_and_stops_at_the_sink_error() {
    let docs: Vec<Document> = (0..300)
        .map(|i| {
            doc(
                "fn",
                &format!("k{i}"),
                "g",
                &[("body", &format!("w{} w{} common", i, i % 17))],
            )
        })
        .collect();
    let mut index = LexicalIndex::new();
    index.upsert_all(docs).unwrap();
    let whole = index.encode().unwrap();
    let mut pieces = Vec::new();
    index
        .encode_into(|bytes| {
            pieces.push(bytes.to_vec());
            Ok(())
        })
        .unwrap();
    assert!(pieces.len() > 10, "{}", pieces.len());
    assert_eq!(pieces.concat(), whole);
    for fail_at in [0, 1, pieces.len() / 2, pieces.len() - 1] {
        let mut calls = 0;
        let outcome = index.encode_into(|_| {
            calls += 1;
            if calls > fail_at {
                let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
                return Err(Error::io("write", Path::new("disk"), full));
            }
            Ok(())
        });
        assert!(
            matches!(outcome, Err(Error::Io { .. })),
            "{fail_at}: {outcome:?}"
        );
        assert_eq!(calls, fail_at + 1, "no call after the failure");
    }
}

/// `write_merged` writes the bytes the index `from_shards` makes saves: with
/// keys repeated across shards, fields and kinds that only some shards have
/// (so each shard's ids differ from the union's), stemming or not, no shard,
/// and a shard that refused a document (the same outcome too).
#[test]
fn written_merge_is_the_merged_index_saved() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(u64, bool, Vec<usize>)> = vec![
        (0, false, vec![0, 700, 2500, 4000]),
        (1, true, vec![0, 1, 2, 3000]),
        (2, false, vec![0, 4000]),
        (3, false, vec![0]),
    ];
    for (seed, stem, cuts) in cases {
        for refuse in [false, true] {
            let make = || -> Vec<(LexicalIndex, Result<()>)> {
                let mut docs = skewed_documents(seed, 4000);
                for i in (0..docs.len()).step_by(89) {
                    docs[i].key = format!("d{:04}", (i * 7) % 4000);
                    docs[i].kind = Cow::Owned(format!("kind{}", i % 3));
                }
                // A field only the later documents have, one only the earlier.
                for d in &mut docs[2000..] {
                    d.fields.push(("zpath".into(), format!("pkg/{}.py", d.key)));
                }
                for d in &mut docs[..600] {
                    d.fields.push(("adoc".into(), "an early note".into()));
                }
                if refuse {
                    // The last document of the last shard.
                    let last = cuts[cuts.len() - 1].saturating_sub(1);
                    docs[last].fields.push(("body".into(), "twice".into()));
                }
                cuts.windows(2)
                    .map(|w| {
                        let mut shard = LexicalIndex::with_stemming(stem);
                        let filled = shard.upsert_local(docs[w[0]..w[1]].to_vec());
                        (shard, filled)
                    })
                    .collect()
            };
            let (merged, outcome) = LexicalIndex::from_shards(make(), stem);
            let (expected, written) = (dir.path().join("a"), dir.path().join("b"));
            merged
                .write(&expected)
                .unwrap()
                .finish(7)
                .unwrap()
                .commit()
                .unwrap();
            let (unfinished, streamed) =
                LexicalIndex::write_merged(make(), stem, &written).unwrap();
            unfinished.finish(7).unwrap().commit().unwrap();
            let case = format!("seed {seed}, cuts {cuts:?}, refuse {refuse}");
            assert_eq!(
                std::fs::read(&written).unwrap(),
                std::fs::read(&expected).unwrap(),
                "{case}"
            );
            assert_eq!(format!("{streamed:?}"), format!("{outcome:?}"), "{case}");
            assert_eq!(outcome.is_err(), refuse && cuts.len() > 1, "{case}");
            let (loaded, generation) = LexicalIndex::load(&written).unwrap();
            assert_eq!((loaded.len(), generation), (merged.len(), 7), "{case}");
        }
    }
}

#[test]
fn a_loaded_index_has_the_room_a_project_reserves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let docs: Vec<Document> = (0..100)
        .map(|i| {
            let (key, group) = (format!("f{i}"), format!("g{}", i / 10));
            doc("fn", &key, &group, &[("name", &format!("word{i} common"))])
        })
        .collect();
    index(&docs).save(&path, 1).unwrap();
    let (mut loaded, _) = LexicalIndex::load(&path).unwrap();
    let arrays = |i: &LexicalIndex| {
        (
            i.docs.as_ptr(),
            i.kind_of.as_ptr(),
            i.field_len[0].as_ptr(),
            i.postings.as_ptr(),
            i.df.as_ptr(),
            i.terms.capacity(),
        )
    };
    let before = arrays(&loaded);
    assert!(loaded.docs.capacity() >= 106 && loaded.postings.capacity() > loaded.terms.len());
    loaded.reserve(crate::with_spare(loaded.len()) - loaded.len());
    assert_eq!(arrays(&loaded), before, "reserve copied an array");
    check_invariants(&loaded);
}

#[test]
fn save_load_keeps_the_stemming_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let params = Bm25Params::default();
    for stem in [false, true] {
        let mut index = LexicalIndex::with_stemming(stem);
        index
            .upsert_all(vec![
                doc(
                    "turn",
                    "t1",
                    "s1",
                    &[("text", "The parties were running late")],
                ),
                doc("memory", "m1", "s1", &[("text", "a party at the meeting")]),
            ])
            .unwrap();
        index.save(&path, 9).unwrap();
        let (loaded, generation) = LexicalIndex::load(&path).unwrap();
        check_invariants(&loaded);
        assert_eq!((loaded.stem(), generation), (stem, 9));
        for query in ["party", "parties meetings", "running late", "ran"] {
            assert_eq!(
                loaded.search(query, &params, &[], 5),
                index.search(query, &params, &[], 5),
                "{query}"
            );
        }
        assert_eq!(
            loaded.search("party", &params, &[], 5).len(),
            1 + stem as usize
        );
        // Serde keeps the flag too.
        let decoded: LexicalIndex =
            postcard::from_bytes(&postcard::to_stdvec(&index).unwrap()).unwrap();
        assert_eq!(decoded.stem(), stem);
    }
}

/// A file saved by the version 1 code (before stemming), byte for byte:
/// two documents, generation 5.
const V1_FILE: &str = "4149524c455849430100000005000000000000009f00000000000000896c22240dc2\
    19b502047465787405746f70696302047475726e066d656d6f7279020274310002733101046c696e65\
    0137026d310102733101046c696e65013709046c61746507706172746965730772756e6e696e67076d\
    656574696e67057061727479046874747005706172736511706172736568747470726573706f6e7365\
    08726573706f6e73650902020202020202020212002000200020012001200121012101210121";

/// A file of another format version than [`FORMAT_VERSION`], older (each earlier
/// layout, well framed and checksummed as it was written) or newer, is not read:
/// `Error::FormatVersion`, naming the file and both versions, for `load` and for
/// `LexicalFile::open` (the caller rebuilds the index).
#[test]
fn other_format_versions_are_refused_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.lexical");
    let expect = |found: u32| {
        match LexicalIndex::load(&path) {
            Err(err @ Error::FormatVersion { .. }) => assert_eq!(
                err.to_string(),
                format!(
                    "{} has lexical index format version {found}; this aircher-mem reads \
                     version {FORMAT_VERSION}: rebuild the lexical index",
                    path.display()
                )
            ),
            other => panic!("version {found}: {:?}", other.map(|(i, g)| (i.len(), g))),
        }
        assert!(
            matches!(LexicalFile::open(&path), Err(Error::FormatVersion { found: f, .. }) if f == found),
            "version {found}"
        );
    };
    let hex: String = V1_FILE.split_whitespace().collect();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    expect(1);
    let index = index(&[
        doc(
            "turn",
            "t1",
            "s1",
            &[("text", "The parties were running late")],
        ),
        doc("memory", "m1", "s1", &[("text", "a party at the meeting")]),
    ]);
    let encoded = index.encode().unwrap();
    let head = postcard::to_stdvec(&index.to_saved()).unwrap();
    assert_eq!(&encoded[..head.len()], &head[..]);
    // Version 1: the stored form alone; 2: the flag before it; 3: version 2
    // with a blocked checksum.
    persist::write(
        &path,
        MAGIC,
        1,
        6,
        &postcard::to_stdvec(&index.to_stored()).unwrap(),
    )
    .unwrap();
    expect(1);
    persist::write(&path, MAGIC, 2, 6, &head).unwrap();
    expect(2);
    persist::write_blocked(&path, (MAGIC, 3, 6), &head).unwrap();
    expect(3);
    persist::write_blocked(&path, (MAGIC, FORMAT_VERSION + 1, 6), &encoded).unwrap();
    expect(FORMAT_VERSION + 1);
    // The current version of the same payload loads.
    persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 6), &encoded).unwrap();
    let (loaded, generation) = LexicalIndex::load(&path).unwrap();
    assert_eq!((loaded.encode().unwrap(), generation), (encoded, 6));
}
