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
    // Read into memory, it still reads its postings from the file.
    let mut thawed = loaded.clone();
    thawed.thaw().unwrap();
    thawed.check_source().unwrap();
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
    refused(&thawed);
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

/// Every byte of a saved file flipped in turn: the load, a search of every
/// query and a read into memory either give what the undamaged file gives or
/// a `Corrupt` error, never a panic nor other hits.
#[test]
fn every_flipped_byte_is_refused_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical.bin");
    let docs: Vec<Document> = (0..40)
        .map(|i| {
            let text = format!("alpha w{} w{} beta{}", i % 7, i % 3, i % 5);
            doc(
                "fn",
                &format!("k{i}"),
                &format!("g{}", i % 4),
                &[("name", &text), ("body", "gamma delta")],
            )
        })
        .collect();
    let index = index(&docs);
    index.save(&path, 3).unwrap();
    let good = std::fs::read(&path).unwrap();
    let params = Bm25Params::default();
    let queries = ["alpha w1", "beta3 gamma", "w2 delta w0", "zzz"];
    let expected: Vec<Vec<LexicalHit>> = queries
        .iter()
        .map(|q| index.search(q, &params, &[], 10))
        .collect();
    let corrupt = |result: &Result<_>| matches!(result, Err(Error::Corrupt(_)));
    // Changed in place: what the changes read of the file is checked too.
    let change = |index: &mut LexicalIndex| {
        index.remove("k3");
        index.remove_group("g1");
        index.upsert(doc("fn", "k6", "g2", &[("name", "alpha w1 zeta")]))
    };
    let mut changed = index.clone();
    change(&mut changed).unwrap();
    let expected_changed: Vec<Vec<LexicalHit>> = queries
        .iter()
        .map(|q| changed.search(q, &params, &[], 10))
        .collect();
    for at in 0..good.len() {
        let mut damaged = good.clone();
        damaged[at] ^= 0x21;
        std::fs::write(&path, &damaged).unwrap();
        let loaded = match LexicalIndex::load(&path) {
            Ok((loaded, _)) => loaded,
            Err(err) => {
                assert!(
                    matches!(err, Error::Corrupt(_) | Error::FormatVersion { .. }),
                    "byte {at}: {err:?}"
                );
                continue;
            }
        };
        for (query, expected) in queries.iter().zip(&expected) {
            let found = loaded.try_search(query, &params, &[], 10);
            assert!(
                corrupt(&found) || found.as_ref().ok() == Some(expected),
                "byte {at}"
            );
        }
        let mut changed = loaded.clone();
        let upserted = change(&mut changed);
        assert!(
            matches!(upserted, Ok(()) | Err(Error::Corrupt(_))),
            "byte {at}"
        );
        for (query, expected) in queries.iter().zip(&expected_changed) {
            let found = changed.try_search(query, &params, &[], 10);
            assert!(
                changed.check_source().is_err()
                    || corrupt(&found)
                    || found.as_ref().ok() == Some(expected),
                "byte {at}: {query}"
            );
        }
        let mut thawed = loaded.clone();
        let read = thawed.thaw();
        assert!(matches!(read, Ok(()) | Err(Error::Corrupt(_))), "byte {at}");
        if read.is_ok() {
            for (query, expected) in queries.iter().zip(&expected) {
                assert_eq!(
                    &thawed.search(query, &params, &[], 10),
                    expected,
                    "byte {at}"
                );
            }
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
/// and a shard that refused a document (the same outcome too); and the same
/// again, both ways, from shards filled for a build (`for_build`: each
/// document's terms counted, not held).
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
            let make = |built: bool| -> Vec<(LexicalIndex, Result<()>)> {
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
                        let mut shard = if built {
                            LexicalIndex::for_build(stem)
                        } else {
                            LexicalIndex::with_stemming(stem)
                        };
                        let filled = shard.upsert_local(docs[w[0]..w[1]].to_vec());
                        (shard, filled)
                    })
                    .collect()
            };
            let (merged, outcome) = LexicalIndex::from_shards(make(false), stem);
            let (expected, written) = (dir.path().join("a"), dir.path().join("b"));
            merged
                .write(&expected)
                .unwrap()
                .finish(7)
                .unwrap()
                .commit()
                .unwrap();
            let case = format!("seed {seed}, cuts {cuts:?}, refuse {refuse}");
            for built in [false, true] {
                let (unfinished, streamed) =
                    LexicalIndex::write_merged(make(built), stem, &written).unwrap();
                unfinished.finish(7).unwrap().commit().unwrap();
                assert_eq!(
                    std::fs::read(&written).unwrap(),
                    std::fs::read(&expected).unwrap(),
                    "{case}, built {built}"
                );
                assert_eq!(format!("{streamed:?}"), format!("{outcome:?}"), "{case}");
            }
            let rewritten = dir.path().join("c");
            let (remerged, _) = LexicalIndex::from_shards(make(true), stem);
            remerged
                .write(&rewritten)
                .unwrap()
                .finish(7)
                .unwrap()
                .commit()
                .unwrap();
            assert_eq!(
                std::fs::read(&rewritten).unwrap(),
                std::fs::read(&expected).unwrap(),
                "{case}, merged in memory from shards filled for a build"
            );
            let (unfinished, streamed) =
                LexicalIndex::write_merged(make(false), stem, &written).unwrap();
            unfinished.finish(7).unwrap().commit().unwrap();
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
    loaded.thaw().unwrap();
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
    // Versions 2 to 4 (4: the stored form decoded at load) and the next one.
    for version in [2, 3, 4, FORMAT_VERSION + 1] {
        let mut writer = persist::Writer::create_paged(&path, MAGIC, version).unwrap();
        writer.write_all(&encoded).unwrap();
        writer.finish(6).unwrap().commit().unwrap();
        expect(version);
    }
    // The current version of the same payload loads.
    index.save(&path, 6).unwrap();
    let (loaded, generation) = LexicalIndex::load(&path).unwrap();
    assert_eq!((loaded.encode().unwrap(), generation), (encoded, 6));
}

/// An index filled for a build (each document's terms counted, not held) saves
/// the bytes one that holds them saves, before and after documents are replaced
/// and removed (which find the terms again from the posting lists) and after a
/// compaction; and searches the same.
#[test]
fn an_index_filled_for_a_build_is_the_index_that_holds_its_terms() {
    let dir = tempfile::tempdir().unwrap();
    for stem in [false, true] {
        let docs = skewed_documents(11, 1500);
        let mut held = LexicalIndex::with_stemming(stem);
        let mut built = LexicalIndex::for_build(stem);
        held.upsert_local(docs.clone()).unwrap();
        built.upsert_local(docs.clone()).unwrap();
        let saved = |index: &LexicalIndex, name: &str| {
            let path = dir.path().join(name);
            index
                .write(&path)
                .unwrap()
                .finish(1)
                .unwrap()
                .commit()
                .unwrap();
            std::fs::read(&path).unwrap()
        };
        assert_eq!(
            saved(&built, "b0"),
            saved(&held, "h0"),
            "stem {stem}: filled"
        );
        // replaced and removed documents: the terms are found again, then held
        let again: Vec<Document> = docs[100..400].to_vec();
        held.upsert_local(again.clone()).unwrap();
        built.upsert_local(again).unwrap();
        for d in &docs[700..760] {
            held.remove(&d.key);
            built.remove(&d.key);
        }
        assert_eq!(
            saved(&built, "b1"),
            saved(&held, "h1"),
            "stem {stem}: changed"
        );
        held.compact();
        built.compact();
        assert_eq!(
            saved(&built, "b2"),
            saved(&held, "h2"),
            "stem {stem}: compacted"
        );
        let query = format!("{} {}", docs[5].key, "value");
        let params = Bm25Params::default();
        assert_eq!(
            format!("{:?}", built.search(&query, &params, &[], 10)),
            format!("{:?}", held.search(&query, &params, &[], 10)),
        );
    }
}
