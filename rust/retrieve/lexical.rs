//! A BM25F inverted index over generic documents: each document has a kind, a unique
//! key, a group (for removal in one go: a file's definitions), named text fields that
//! are indexed, and metadata that is only stored.
//!
//! Layout. A document lives in a *slot* (a `u32`, in insertion order). Each term has
//! a posting list sorted by (slot, field): one posting per field the term occurs in,
//! holding the field and the term frequency, kept encoded as the file stores it
//! (varints of slot distances; see [`super::postings`]). Field lengths are kept
//! per field as a column indexed by slot. A field's id is its rank among the sorted
//! field names, so that every index holding the same documents sums a document's
//! fields in the same order and scores come out bit for bit the same (a new name
//! renumbers the fields above it, at most [`MAX_FIELDS`] times).
//!
//! Updates. A removed document is a *tombstone*: its slot is marked dead and its key,
//! group, metadata and term list are dropped at once; the statistics (document
//! count, document frequency of each of its terms, field length totals) are
//! decremented exactly at that moment, so scores never drift. Its postings stay
//! until [`LexicalIndex::compact`], which runs by itself when a quarter of the slots
//! are dead, and renumbers slots, terms, fields and kinds to what is in use. What is
//! saved (and serialized) is always the compacted form: no trace of a removed
//! document goes to a file.
//!
//! Bounds: a field keeps its first [`MAX_FIELD_TOKENS`] tokens, a document at most
//! [`MAX_FIELDS`] distinct field names exist at a time.
//!
//! Stemming. An index made with [`LexicalIndex::with_stemming`]`(true)` replaces
//! every token of documents and queries alike by its Snowball English stem (see
//! [`super::tokenize`]; identifiers too, which is fine since both sides agree), so
//! "parties" finds "party". For prose (conversation turns, memories); code search
//! does not stem. The flag is fixed for the life of the index, saved with it and
//! restored by `load`; the terms it holds, and the matched terms `search` returns,
//! are then stems ("parti").

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::{ControlFlow, Range};
use std::path::Path;
use std::sync::Arc;

use foldhash::HashMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::persist;
use super::postings::{read_varint64, write_varint64, Backing, Posting, PostingList, Shared};
use super::tokenize::{for_each_token_with, head};
use crate::atomic::AtomicFile;
use crate::error::{invalid, Error, Result};
use crate::intern::{hash, Interner};
use hashbrown::HashTable;

/// Distinct field names an index holds at a time.
pub const MAX_FIELDS: usize = 32;
/// Tokens of a field that are indexed; the rest of a longer field is ignored.
pub const MAX_FIELD_TOKENS: usize = 100_000;
/// Distinct indexed terms of a query that are searched for (the first ones); the
/// rest of a longer query is ignored. A long issue or traceback has a few hundred.
pub const MAX_QUERY_TERMS: usize = 512;
/// The version of the file [`LexicalIndex::save`] writes. Version 2 puts the
/// stemming flag before version 1's payload; version 3 is version 2 with a
/// blocked checksum (see `persist`), so that a save streams the file.
/// Version 4 is version 3 with each document's terms and field lengths after the
/// postings (`Columns`), which a load reads rather than derives from every
/// posting. [`LexicalIndex::load`] still reads version 1 files (as non-stemming
/// indexes: there was no stemming then), version 2 and version 3 files.
pub const FORMAT_VERSION: u32 = 4;
/// The oldest version [`LexicalIndex::load`] reads.
const OLDEST_VERSION: u32 = 1;
/// The first version with a blocked checksum.
const BLOCKED_FROM: u32 = 3;
/// The first version with `Columns` after the postings.
const COLUMNS_FROM: u32 = 4;
/// Bytes of postings `encode_into` encodes at a time (a longer list alone); tiny
/// in tests, so that their indexes are written in many batches.
#[cfg(not(test))]
const ENCODE_BATCH: u64 = 16 << 20;
#[cfg(test)]
const ENCODE_BATCH: u64 = 24;
const MAGIC: &[u8; 8] = b"AIRLEXIC";
const WHAT: &str = "lexical index";

/// The kind of a dead slot, and "dropped" in renumberings.
const DEAD: u32 = u32::MAX;
/// Compaction waits for at least this many dead slots (and a quarter of all).
const COMPACT_MIN_DEAD: usize = 64;
/// `upsert_all` builds shards in parallel from this many documents on.
const SHARD_MIN_DOCS: usize = 2048;
/// Documents tokenized at once (in parallel) before they are indexed.
const TOKENIZE_BLOCK: usize = 1024;

/// A byte sink of ours as an `io::Write`, keeping its first error.
struct ToSink<'s, F> {
    sink: &'s mut F,
    failed: Option<Error>,
}

impl<F: FnMut(&[u8]) -> Result<()>> std::io::Write for ToSink<'_, F> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.failed.is_some() {
            return Err(std::io::Error::other("the sink failed"));
        }
        (self.sink)(bytes).map_err(|err| {
            self.failed = Some(err);
            std::io::Error::other("the sink failed")
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An index file written but for its header (see [`LexicalIndex::write`]).
pub struct Unfinished(persist::Writer);

impl Unfinished {
    /// Writes the header, with `generation`: the file, to commit.
    pub fn finish(self, generation: u64) -> Result<AtomicFile> {
        self.0.finish(generation)
    }
}

/// A document to index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// Borrowed when it is a constant, as code's kinds and field names are: a
    /// build makes millions of documents (3 million on the Linux kernel).
    pub kind: Cow<'static, str>,
    /// Unique: upserting a key replaces the document that had it.
    pub key: String,
    /// What [`LexicalIndex::remove_group`] removes together (for code: the file).
    pub group: String,
    /// (field name, text) pairs, tokenized with [`super::tokenize::tokens`] (stemmed
    /// if the index stems); a name appears at most once per document.
    pub fields: Vec<(Cow<'static, str>, String)>,
    /// Stored and returned, never indexed.
    pub meta: Vec<(String, String)>,
}

/// A stored document, without its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocRef<'a> {
    pub kind: &'a str,
    pub key: &'a str,
    pub group: &'a str,
    pub meta: &'a Meta,
}

/// A document's metadata as its slot keeps it: the (key, value) pairs in one
/// allocation, each string after its byte length (a varint); none when there are
/// none. A pair as two `String`s in a `Vec` cost 48 bytes and two allocations more
/// (on the Linux kernel's 3 million documents, 195 MB for their one pair each).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Meta(Box<[u8]>);

impl Meta {
    pub fn new<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> Meta {
        // Made at its size: one allocation (3 M documents on the Linux kernel).
        let size = |text: &str| varint64_len(text.len() as u64) + text.len();
        let sizes = pairs
            .iter()
            .map(|(k, v)| size(k.as_ref()) + size(v.as_ref()));
        let mut bytes = Vec::with_capacity(sizes.sum());
        for (key, value) in pairs {
            for text in [key.as_ref(), value.as_ref()] {
                write_varint64(&mut bytes, text.len() as u64);
                bytes.extend_from_slice(text.as_bytes());
            }
        }
        Meta(bytes.into_boxed_slice())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut at = 0;
        let mut text = move || -> Option<&str> {
            let len = read_varint64(&self.0, &mut at)? as usize;
            let bytes = self.0.get(at..at.checked_add(len)?)?;
            at += len;
            // Made from strings by `new`: never `None`.
            std::str::from_utf8(bytes).ok()
        };
        std::iter::from_fn(move || Some((text()?, text()?)))
    }

    /// The value of the first pair with `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|&(k, _)| k == key).map(|(_, v)| v)
    }

    /// The pairs as owned strings.
    pub fn to_vec(&self) -> Vec<(String, String)> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

impl std::fmt::Debug for Meta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Saved as the sequence of pairs it was made from (the file's form since version 1).
impl Serialize for Meta {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let pairs: Vec<(&str, &str)> = self.iter().collect();
        pairs.serialize(serializer)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    pub key: String,
    pub score: f64,
    /// The distinct query terms found in the document (in a field of weight > 0), in
    /// query order: indexed terms, so stems if the index stems.
    pub matched: Vec<String>,
}

/// BM25F parameters: `k1` >= 0 (term frequency saturation), `b` in [0, 1] (length
/// normalization), and a weight >= 0 per field name (1.0 when not listed, 0 ignores
/// the field; a name listed twice takes the last weight).
#[derive(Debug, Clone, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
    pub field_weights: Vec<(String, f64)>,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.75,
            field_weights: Vec::new(),
        }
    }
}

impl Bm25Params {
    /// An invalid-input error for a value out of range.
    pub fn validate(&self) -> Result<()> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(invalid(
                "k1",
                format!("must be a finite number >= 0, got {}", self.k1),
            ));
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(invalid(
                "b",
                format!("must be a number in [0, 1], got {}", self.b),
            ));
        }
        for (name, weight) in &self.field_weights {
            if !(weight.is_finite() && *weight >= 0.0) {
                return Err(invalid(
                    "field_weights",
                    format!("the weight of {name:?} must be a finite number >= 0, got {weight}"),
                ));
            }
        }
        Ok(())
    }

    /// These parameters brought into range: a value that is not a finite number
    /// to the default (a weight to 0), then `k1` and weights to >= 0, `b` to [0, 1].
    pub fn clamped(&self) -> Bm25Params {
        let finite = |value: f64, default: f64| if value.is_finite() { value } else { default };
        Bm25Params {
            k1: finite(self.k1, 1.2).max(0.0),
            b: finite(self.b, 0.75).clamp(0.0, 1.0),
            field_weights: self
                .field_weights
                .iter()
                .map(|(name, weight)| (name.clone(), finite(*weight, 0.0).max(0.0)))
                .collect(),
        }
    }
}

/// What a live slot holds besides its kind and field lengths.
#[derive(Clone, Debug)]
struct Slot {
    key: Box<str>,
    /// Shared with `groups` and the group's other documents.
    group: Arc<str>,
    meta: Meta,
    /// Where the distinct terms of the document are in `forward`: what to
    /// decrement when it goes.
    terms: Range<usize>,
    /// Its position among its group's members, so that leaving the group is one
    /// swap, however large the group (every long-term memory shares one).
    at: u32,
}

/// The distinct terms of each document, one after the other, in increasing order
/// a document: those of the documents loaded read where the file holds them
/// (`Columns::forward`, u32 LE; only a removal or a save reads them: 360 MB on the
/// Linux kernel that a load neither copies nor allocates), those of documents
/// added since after them, owned.
#[derive(Clone, Default)]
struct Forward {
    loaded: Option<Shared>,
    own: Vec<u32>,
}

impl Forward {
    fn owned(own: Vec<u32>) -> Forward {
        Forward { loaded: None, own }
    }

    fn loaded_len(&self) -> usize {
        self.loaded
            .as_ref()
            .map_or(0, |bytes| bytes.bytes().len() / 4)
    }

    fn len(&self) -> usize {
        self.loaded_len() + self.own.len()
    }

    fn push(&mut self, term: u32) {
        self.own.push(term);
    }

    fn last(&self) -> Option<u32> {
        match self.own.last() {
            Some(&term) => Some(term),
            None => self.get(self.len().saturating_sub(1)..self.len()).next(),
        }
    }

    /// The terms at `range`: one document's, all loaded or all added since.
    fn get(&self, range: Range<usize>) -> impl Iterator<Item = u32> + '_ {
        let loaded = self.loaded_len();
        let (from_file, own) = match (&self.loaded, range.start < loaded) {
            (Some(bytes), true) => (&bytes.bytes()[range.start * 4..range.end * 4], &[][..]),
            _ => (&[][..], &self.own[range.start - loaded..range.end - loaded]),
        };
        read_u32s(from_file).chain(own.iter().copied())
    }

    /// Heap bytes (`own`'s capacity), and bytes read from the file.
    fn sizes(&self) -> (usize, usize) {
        (self.own.capacity() * 4, self.loaded_len() * 4)
    }
}

/// A lexical index file opened but not read yet: mapped, so that a save that
/// renames another file over its name later leaves these bytes as they were, and
/// its header read (its generation), nothing else. For a caller that may read
/// the index much later or never (`graph::Project::load`); `read` costs what
/// [`LexicalIndex::load`] does.
#[derive(Debug)]
pub struct LexicalFile {
    opened: persist::Opened,
}

impl LexicalFile {
    /// Opens the index file at `path`: an error if it is not a lexical index of a
    /// version this build reads, or is truncated (the rest is checked by `read`).
    pub fn open(path: &Path) -> Result<LexicalFile> {
        let opened = persist::Opened::open(path, MAGIC, OLDEST_VERSION..=FORMAT_VERSION, WHAT)?;
        Ok(LexicalFile { opened })
    }

    /// The generation its header names.
    pub fn generation(&self) -> u64 {
        self.opened.generation()
    }

    /// Why the file can no longer be read as it was opened: another program wrote
    /// it in place since (`Mapped::changed`).
    pub fn changed(&self) -> Option<Error> {
        self.opened.changed()
    }

    /// The index, as [`LexicalIndex::load`] reads it.
    pub fn read(self) -> Result<LexicalIndex> {
        if let Some(err) = self.changed() {
            return Err(err);
        }
        LexicalIndex::read_opened(self.opened)
    }
}

/// See the module documentation.
#[derive(Clone, Default)]
pub struct LexicalIndex {
    /// Sorted: a field's id is its position.
    fields: Vec<String>,
    /// `field_len[field][slot]`: the number of tokens indexed.
    field_len: Vec<Vec<u32>>,
    /// Over live documents: the sum of the field's lengths, and the number of
    /// documents where it is not empty (the average length is their ratio).
    field_total: Vec<u64>,
    field_docs: Vec<u32>,
    kinds: Vec<String>,
    kind_ids: HashMap<String, u32>,
    /// Per slot: the kind, or `DEAD`.
    kind_of: Vec<u32>,
    /// Per slot: `None` once removed.
    docs: Vec<Option<Slot>>,
    by_key: Keys,
    groups: HashMap<Arc<str>, Vec<u32>>,
    /// Each term once, its id its position.
    terms: Interner,
    postings: Vec<PostingList>,
    /// Per term: the number of live documents that have it.
    df: Vec<u32>,
    /// The distinct terms of each document, one after the other (see
    /// `Slot::terms`); a removed document's stay until `compact`.
    forward: Forward,
    live: usize,
    /// Whether documents and queries are stemmed (see the module documentation).
    stem: bool,
    /// The mapped file a loaded index reads its posting lists and forward terms
    /// from (`check_source`); `None` for an index made or read into memory.
    source: Option<Shared>,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("documents", &self.live)
            .field("dead", &(self.docs.len() - self.live))
            .field("terms", &self.terms.len())
            .field(
                "postings",
                &self.postings.iter().map(PostingList::len).sum::<usize>(),
            )
            .field("fields", &self.fields)
            .field("kinds", &self.kinds)
            .field("stem", &self.stem)
            .finish()
    }
}

/// The live slots by their documents' keys: a table of slots hashed by the key
/// the slot holds (no copy of it, nor a pointer to it, as a map keyed by the
/// key held).
#[derive(Clone, Default)]
struct Keys(HashTable<u32>);

impl Keys {
    fn get(&self, docs: &[Option<Slot>], key: &str) -> Option<u32> {
        let has = |&slot: &u32| docs[slot as usize].as_ref().is_some_and(|d| &*d.key == key);
        self.0.find(hash(key), has).copied()
    }

    /// Adds `slot`, which is live in `docs`; false (and nothing changes) if
    /// another slot has its key.
    fn insert(&mut self, docs: &[Option<Slot>], slot: u32) -> bool {
        let key = docs[slot as usize].as_ref().map_or("", |d| &*d.key);
        self.insert_hashed(docs, slot, hash(key))
    }

    /// `insert`, given the hash of the slot's key.
    fn insert_hashed(&mut self, docs: &[Option<Slot>], slot: u32, hashed: u64) -> bool {
        let key_of = |slot: u32| docs[slot as usize].as_ref().map_or("", |d| &*d.key);
        let key = key_of(slot);
        let entry = self
            .0
            .entry(hashed, |&s| key_of(s) == key, |&s| hash(key_of(s)));
        match entry {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                vacant.insert(slot);
                true
            }
        }
    }

    /// Takes out `slot`, which held `key`.
    fn remove(&mut self, key: &str, slot: u32) {
        if let Ok(entry) = self.0.find_entry(hash(key), |&s| s == slot) {
            entry.remove();
        }
    }
}

/// The room `LexicalIndex::reserve` makes: for `docs` more documents, and for
/// the forward entries, terms and term bytes they would add in proportion.
#[derive(Clone, Copy, Default)]
struct Room {
    docs: usize,
    forward: usize,
    terms: usize,
    term_bytes: usize,
}

impl Room {
    /// Room for `additional` documents beside `slots`, whose forward entries,
    /// terms and term bytes are `lens`.
    fn for_more(additional: usize, slots: usize, lens: [usize; 3]) -> Room {
        if additional == 0 || slots == 0 {
            return Room::default();
        }
        // `len` in proportion: what `additional` more documents add to it.
        let more = |len: usize| (len as u128 * additional as u128).div_ceil(slots as u128) as usize;
        let [forward, terms, term_bytes] = lens.map(more);
        Room {
            docs: additional,
            forward,
            terms,
            term_bytes,
        }
    }

    /// The room a loaded index of `slots` documents keeps (`with_spare`, as a
    /// project reserves after a load: made with the arrays, none of them is
    /// copied to grow).
    fn loaded(slots: usize, lens: [usize; 3]) -> Room {
        Room::for_more(crate::with_spare(slots) - slots, slots, lens)
    }
}

/// Documents a load makes at a time (`Documents::made`).
const DOC_RUN: usize = 1 << 16;

/// Where each document's terms end in `forward` (after a 0), by the counts
/// `columns` give.
fn column_ends(columns: &Columns<'_>, slots: usize) -> std::result::Result<Vec<usize>, String> {
    if columns.counts.len() != slots * 4 {
        return Err("term counts of another number than the documents".into());
    }
    let mut ends = Vec::with_capacity(slots + 1);
    ends.push(0usize);
    for count in read_u32s(columns.counts) {
        ends.push(ends[ends.len() - 1].saturating_add(count as usize));
    }
    Ok(ends)
}

/// The documents of a loaded index, with what finds them.
struct Documents {
    docs: Vec<Option<Slot>>,
    kind_of: Vec<u32>,
    groups: HashMap<Arc<str>, Vec<u32>>,
    by_key: Keys,
}

impl Documents {
    /// The documents `stored` describes (of `kinds` kinds), their terms ending at
    /// `ends` in `forward`. A run of documents at a time: each one's key and
    /// metadata made and its key hashed on the thread pool, then in order its
    /// group and its place by key.
    fn made<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        stored: &mut [StoredDoc<S, M>],
        ends: &[usize],
        kinds: usize,
        room: Room,
    ) -> std::result::Result<Documents, String> {
        let slots = stored.len();
        let mut out = Documents {
            docs: Vec::with_capacity(slots + room.docs),
            kind_of: Vec::with_capacity(slots + room.docs),
            groups: HashMap::default(),
            by_key: Keys::default(),
        };
        out.by_key.0.reserve(slots, |_| 0);
        // A file's documents are next to each other: its group's members are taken
        // out of `groups` when its first comes, and put back after its last.
        let mut current: Option<(Arc<str>, Vec<u32>)> = None;
        for (run, docs) in stored.chunks_mut(DOC_RUN).enumerate() {
            let made: Vec<(Box<str>, Meta, u64)> = docs
                .par_iter_mut()
                .map(|doc| {
                    let key: Box<str> = doc.key.as_ref().into();
                    let hashed = hash(&key);
                    (key, doc.meta.take(), hashed)
                })
                .collect();
            for ((doc, (key, meta, hashed)), slot) in docs.iter().zip(made).zip(run * DOC_RUN..) {
                if doc.kind as usize >= kinds {
                    return Err("a document of no kind".into());
                }
                let group = doc.group.as_ref();
                let (name, members) = match &mut current {
                    Some((name, members)) if **name == *group => (name, members),
                    _ => {
                        if let Some((name, members)) = current.take() {
                            out.groups.insert(name, members);
                        }
                        let taken = out.groups.remove_entry(group);
                        let (name, members) =
                            current.insert(taken.unwrap_or_else(|| (Arc::from(group), Vec::new())));
                        (name, members)
                    }
                };
                let at = members.len() as u32;
                members.push(slot as u32);
                out.kind_of.push(doc.kind);
                out.docs.push(Some(Slot {
                    key,
                    group: name.clone(),
                    meta,
                    terms: ends[slot]..ends[slot + 1],
                    at,
                }));
                if !out.by_key.insert_hashed(&out.docs, slot as u32, hashed) {
                    return Err(format!("key {:?} twice", doc.key.as_ref()));
                }
            }
        }
        if let Some((name, members)) = current {
            out.groups.insert(name, members);
        }
        Ok(out)
    }
}

/// Appends `slot` to `group`'s members in `groups` (the name is shared, not
/// copied); returns its position there.
fn add_to_group(groups: &mut HashMap<Arc<str>, Vec<u32>>, group: &Arc<str>, slot: u32) -> u32 {
    match groups.get_mut(&**group) {
        Some(members) => {
            members.push(slot);
            (members.len() - 1) as u32
        }
        None => {
            groups.insert(group.clone(), vec![slot]);
            0
        }
    }
}

/// A document's text tokenized: per field (in the document's order), its token
/// count and its distinct terms with their counts, sorted. Computed apart from the
/// index (in parallel by `upsert_all`). The terms of all fields sit back to back in
/// one string, so a document costs a few allocations, not one per token.
struct Counted {
    text: String,
    /// Per field: its token count and the range of its terms in `terms`.
    fields: Vec<(u32, Range<usize>)>,
    /// Each distinct term of a field: its byte range in `text` and its count.
    terms: Vec<(Range<usize>, u32)>,
}

/// A token of `Counted::of`'s buffer: where it is, and its first 16 bytes as an
/// integer that orders as the bytes do (tokens have no NUL byte, the padding), so
/// that sorting compares integers and reads the text only past 16 equal bytes.
#[derive(Clone, Copy)]
struct Token {
    prefix: u128,
    start: u32,
    end: u32,
}

impl Token {
    fn new(token: &str, start: usize) -> Token {
        Token {
            prefix: head(token.as_bytes()),
            start: start as u32,
            end: (start + token.len()) as u32,
        }
    }

    fn text(self, buffer: &str) -> &str {
        &buffer[self.start as usize..self.end as usize]
    }

    /// The order of the two tokens' text in `buffer`.
    fn cmp_in(&self, other: &Token, buffer: &str) -> Ordering {
        self.prefix.cmp(&other.prefix).then_with(|| {
            if self.end - self.start <= 16 && other.end - other.start <= 16 {
                Ordering::Equal
            } else {
                self.text(buffer).cmp(other.text(buffer))
            }
        })
    }
}

thread_local! {
    /// `Counted::of`'s token buffer and tokens, reused across documents.
    static TOKENS: RefCell<(String, Vec<Token>)> = RefCell::default();
}

impl Counted {
    /// `fields` tokenized, stemmed if `stem`.
    fn of(fields: &[(Cow<'static, str>, String)], stem: bool) -> Counted {
        TOKENS.with_borrow_mut(|(buffer, spans)| {
            let mut counted = Counted {
                text: String::new(),
                fields: Vec::with_capacity(fields.len()),
                terms: Vec::new(),
            };
            for (_, text) in fields {
                buffer.clear();
                spans.clear();
                for_each_token_with(text, stem, |token| {
                    let start = buffer.len();
                    buffer.push_str(token);
                    spans.push(Token::new(token, start));
                    if spans.len() == MAX_FIELD_TOKENS {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                });
                let buffer = buffer.as_str();
                spans.sort_unstable_by(|a, b| a.cmp_in(b, buffer));
                let first = counted.terms.len();
                let mut last: Option<&Token> = None;
                for span in spans.iter() {
                    if last.is_some_and(|last| last.cmp_in(span, buffer).is_eq()) {
                        counted.terms.last_mut().expect("a term before").1 += 1;
                        continue;
                    }
                    let start = counted.text.len();
                    counted.text.push_str(span.text(buffer));
                    counted.terms.push((start..counted.text.len(), 1));
                    last = Some(span);
                }
                counted
                    .fields
                    .push((spans.len() as u32, first..counted.terms.len()));
            }
            counted
        })
    }

    /// Each field's token count and its terms with their counts.
    fn fields(&self) -> impl Iterator<Item = (u32, impl Iterator<Item = (&str, u32)>)> {
        self.fields.iter().map(|(count, terms)| {
            (
                *count,
                self.terms[terms.clone()]
                    .iter()
                    .map(|(span, tf)| (&self.text[span.clone()], *tf)),
            )
        })
    }
}

thread_local! {
    /// Score accumulators of `search`, reused across calls on a thread.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

#[derive(Default)]
struct Scratch {
    /// Per slot; zero except at `touched`.
    scores: Vec<f64>,
    touched: Vec<u32>,
    /// Scores to select from.
    values: Vec<f64>,
}

/// The `k`-th largest of `values` (reordered), if there are that many.
fn kth_largest(values: &mut [f64], k: usize) -> Option<f64> {
    if k == 0 || values.len() < k {
        return None;
    }
    let (_, kth, _) = values.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Some(*kth)
}

/// Whether a document with `score` so far, which the remaining terms can raise by
/// at most `bound`, ends below `theta` for sure (with a margin for rounding), so
/// that it cannot tie with the documents that reach `theta`.
fn below(score: f64, bound: f64, theta: f64) -> bool {
    (score + bound) * (1.0 + 1e-9) < theta
}

impl Scratch {
    fn reset(&mut self, slots: usize) {
        for &slot in &self.touched {
            self.scores[slot as usize] = 0.0;
        }
        self.touched.clear();
        if self.scores.len() < slots {
            self.scores.resize(slots, 0.0);
        }
    }
}

/// Lengths up to this get their BM25F length normalization from a table computed
/// once per query; longer ones compute it (the same way).
const NORM_TABLE: usize = 1024;

/// Per field, `w_f / (1 - b + b * len / avglen_f)`: what a term frequency in the
/// field is multiplied by (0 for a field of weight 0).
struct Norms {
    table: Vec<f64>,
    weights: Vec<f64>,
    slope: Vec<f64>,
    flat: f64,
}

impl Norms {
    fn new(index: &LexicalIndex, weights: &[f64], b: f64) -> Norms {
        // b / avglen_f, to multiply by len_f.
        let slope: Vec<f64> = (0..index.fields.len())
            .map(|f| match index.field_docs[f] {
                0 => 0.0,
                docs => b / (index.field_total[f] as f64 / docs as f64),
            })
            .collect();
        let mut norms = Norms {
            table: Vec::new(),
            weights: weights.to_vec(),
            slope,
            flat: 1.0 - b,
        };
        norms.table = (0..weights.len())
            .flat_map(|f| (0..NORM_TABLE as u32).map(move |len| (f, len)))
            .map(|(f, len)| norms.compute(f, len))
            .collect();
        norms
    }

    fn compute(&self, field: usize, len: u32) -> f64 {
        let weight = self.weights[field];
        if weight > 0.0 {
            weight / (self.flat + self.slope[field] * len as f64)
        } else {
            0.0
        }
    }

    #[inline]
    fn get(&self, field: usize, len: u32) -> f64 {
        match self.table.get(field * NORM_TABLE + len as usize) {
            Some(&norm) if (len as usize) < NORM_TABLE => norm,
            _ => self.compute(field, len),
        }
    }
}

/// Old id -> new id (or `DEAD`) for a compaction.
struct Remap {
    slot: Vec<u32>,
    field: Vec<u32>,
    term: Vec<u32>,
    kind: Vec<u32>,
    /// Every slot and field keeps its id: a kept posting list is stored as held.
    same_postings: bool,
}

impl Remap {
    fn keeps_postings(&self) -> bool {
        self.same_postings
    }
}

fn ranks(keep: impl Iterator<Item = bool>) -> Vec<u32> {
    let mut next = 0;
    keep.map(|kept| {
        if kept {
            next += 1;
            next - 1
        } else {
            DEAD
        }
    })
    .collect()
}

impl LexicalIndex {
    /// Approximate heap bytes of the index's parts (capacities times element
    /// sizes plus string bytes; allocator rounding and hash-table control bytes
    /// left out): where its memory goes, for `examples/graph_memory.rs`.
    #[doc(hidden)]
    pub fn heap_parts(&self) -> Vec<(&'static str, usize)> {
        use std::mem::size_of;
        let arc = |s: &Arc<str>| s.len() + 2 * size_of::<usize>();
        let postings: usize = self.postings.iter().map(PostingList::heap_bytes).sum();
        let meta: usize = self
            .docs
            .iter()
            .flatten()
            .map(|d| d.meta.heap_bytes())
            .sum();
        let keys: usize = self.docs.iter().flatten().map(|d| d.key.len()).sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, members)| arc(name) + members.capacity() * 4)
            .sum();
        vec![
            ("postings", postings),
            (
                "postings read from the file (mapped, not heap)",
                self.postings.iter().map(PostingList::shared_bytes).sum(),
            ),
            (
                "posting list headers",
                self.postings.capacity() * size_of::<PostingList>(),
            ),
            ("terms", self.terms.heap_bytes()),
            ("df", self.df.capacity() * 4),
            ("forward", self.forward.sizes().0),
            (
                "forward read from the file (mapped, not heap)",
                self.forward.sizes().1,
            ),
            ("slots", self.docs.capacity() * size_of::<Option<Slot>>()),
            ("slot meta", meta),
            ("keys (strings)", keys),
            ("by_key table", self.by_key.0.capacity() * (4 + 1)),
            ("groups", groups + self.groups.capacity() * (16 + 24)),
            (
                "field_len",
                self.field_len.iter().map(|c| c.capacity() * 4).sum(),
            ),
            ("kind_of", self.kind_of.capacity() * 4),
        ]
    }

    /// An empty index that does not stem (as code search wants).
    pub fn new() -> LexicalIndex {
        LexicalIndex::default()
    }

    /// An empty index that stems documents and queries with Snowball English if
    /// `stem` (for prose; see the module documentation).
    pub fn with_stemming(stem: bool) -> LexicalIndex {
        LexicalIndex {
            stem,
            ..LexicalIndex::default()
        }
    }

    /// Whether the index stems (see [`LexicalIndex::with_stemming`]).
    pub fn stem(&self) -> bool {
        self.stem
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub fn contains(&self, key: &str) -> bool {
        self.by_key.get(&self.docs, key).is_some()
    }

    /// The field names in use (sorted).
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    pub fn get(&self, key: &str) -> Option<DocRef<'_>> {
        let slot = self.by_key.get(&self.docs, key)?;
        let data = self.docs[slot as usize].as_ref()?;
        Some(DocRef {
            kind: &self.kinds[self.kind_of[slot as usize] as usize],
            key: &data.key,
            group: &data.group,
            meta: &data.meta,
        })
    }

    /// Every document, in no particular order.
    pub fn documents(&self) -> impl Iterator<Item = DocRef<'_>> + '_ {
        self.docs.iter().enumerate().filter_map(|(slot, data)| {
            let data = data.as_ref()?;
            Some(DocRef {
                kind: &self.kinds[self.kind_of[slot] as usize],
                key: &data.key,
                group: &data.group,
                meta: &data.meta,
            })
        })
    }

    /// The keys of the documents in `group`, sorted.
    pub fn keys_in_group(&self, group: &str) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .groups
            .get(group)
            .into_iter()
            .flatten()
            .filter_map(|&slot| self.docs[slot as usize].as_ref())
            .map(|data| &*data.key)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// The groups that have documents, sorted.
    pub fn groups(&self) -> Vec<&str> {
        let mut groups: Vec<&str> = self.groups.keys().map(|g| &**g).collect();
        groups.sort_unstable();
        groups
    }

    /// Indexes `doc`, replacing the document with the same key if there is one. An
    /// invalid-input error (and no change) if a field name appears twice in `doc` or
    /// if its new field names would make more than [`MAX_FIELDS`].
    pub fn upsert(&mut self, doc: Document) -> Result<()> {
        let counted = Counted::of(&doc.fields, self.stem);
        self.add_counted(doc, counted)
    }

    /// `upsert` of each document in turn: a bulk load (a project's first index)
    /// that gives the same index as upserting one by one, built in parallel. Text
    /// is tokenized on the thread pool; into an empty index, large batches are cut
    /// into one shard per thread, indexed side by side and merged in order into
    /// memory of exact sizes (an empty index comes out compacted, its lists
    /// together). Stops at the first document refused, with its error (those
    /// before it are in; past the field-name cap, those of the shards before).
    pub fn upsert_all(&mut self, docs: Vec<Document>) -> Result<()> {
        if !self.is_empty() {
            return self.upsert_each(docs);
        }
        let threads = rayon::current_num_threads();
        let size = if docs.len() < SHARD_MIN_DOCS {
            docs.len().max(1)
        } else {
            docs.len().div_ceil(threads)
        };
        let mut chunks: Vec<Vec<Document>> = Vec::with_capacity(threads);
        let mut rest = docs;
        while !rest.is_empty() {
            let tail = rest.split_off(size.min(rest.len()));
            chunks.push(std::mem::replace(&mut rest, tail));
        }
        let stem = self.stem;
        let shards: Vec<(LexicalIndex, Result<()>)> = chunks
            .into_par_iter()
            .map(|chunk| {
                let mut shard = LexicalIndex::with_stemming(stem);
                let done = shard.upsert_each(chunk);
                (shard, done)
            })
            .collect();
        let (index, outcome) = LexicalIndex::from_shards(shards, stem);
        *self = index;
        outcome
    }

    /// The index of the documents of `shards`, in that order, as upserting them
    /// one after the other into an empty index that stems if `stem` makes it (a
    /// key in a later shard replaces the document an earlier one has): how a bulk
    /// load joins the indexes its threads made of their parts of the documents
    /// (each shard with the outcome of filling it, `upsert_local`). Stops at the
    /// first shard that refused a document (its documents up to that one are
    /// kept), or whose field names would take the index past [`MAX_FIELDS`], and
    /// returns that error.
    pub fn from_shards(
        shards: Vec<(LexicalIndex, Result<()>)>,
        stem: bool,
    ) -> (LexicalIndex, Result<()>) {
        let (kept, outcome) = kept_shards(shards);
        // An empty index keeps only whether it stems: its removed documents' field
        // names and terms go.
        (LexicalIndex::merged(kept, stem), outcome)
    }

    /// Writes what `from_shards(shards, stem).0.write(path)` writes, byte for
    /// byte, without making that index: each merged posting list is encoded from
    /// the shards' straight into the file's buffer. A build that only saves the
    /// index (`Project::build_into`) never holds it beside its shards: merged in
    /// memory, it took 1 GB above the shards on the Linux kernel. Returns the file
    /// to finish and commit, and the outcome `from_shards` returns.
    pub fn write_merged(
        shards: Vec<(LexicalIndex, Result<()>)>,
        stem: bool,
        path: &Path,
    ) -> Result<(Unfinished, Result<()>)> {
        let (mut shards, outcome) = kept_shards(shards);
        LexicalIndex::settle(&mut shards);
        if shards.is_empty() {
            return Ok((LexicalIndex::with_stemming(stem).write(path)?, outcome));
        }
        let mut union = Union::names(&mut shards);
        let mut writer = persist::Writer::create(path, MAGIC, FORMAT_VERSION)?;
        let mut sink = |bytes: &[u8]| writer.write_all(bytes);
        // The saved form's parts one after the other, as postcard encodes them
        // (a struct is its fields in order): first up to the documents.
        let fields: Vec<&str> = union.fields.iter().map(String::as_str).collect();
        let kinds: Vec<&str> = union.kinds.iter().map(String::as_str).collect();
        let docs = MergedDocs {
            shards: &shards,
            kinds: &union.kind_maps,
        };
        encode_value(&(stem, fields, kinds, docs), &mut sink)?;
        // The rest needs the shards' terms and postings, and the documents' terms
        // and field lengths (the columns, last) only: the documents go (their
        // slots, keys, metadata: 0.6 GB on the Linux kernel) before the union's
        // terms are made.
        let mut columns = Vec::with_capacity(shards.len());
        for shard in &mut shards {
            let terms: Vec<Range<usize>> = (shard.docs.iter())
                .map(|data| {
                    data.as_ref()
                        .expect("settled: every slot is live")
                        .terms
                        .clone()
                })
                .collect();
            columns.push((
                std::mem::take(&mut shard.forward),
                terms,
                std::mem::take(&mut shard.field_len),
            ));
            *shard = LexicalIndex {
                terms: std::mem::take(&mut shard.terms),
                postings: std::mem::take(&mut shard.postings),
                ..LexicalIndex::default()
            };
        }
        crate::release_free_memory();
        union.add_terms(&mut shards);
        let sizes: Vec<u64> = (0..union.terms.len())
            .into_par_iter()
            .map(|term| stored_size(union.postings(&shards, term)))
            .collect();
        let terms: Vec<&str> = union.terms.iter().map(|(_, term)| term).collect();
        encode_value(&(terms, &sizes), &mut sink)?;
        encode_postings(
            &sizes,
            |term, out| put_stored(out, union.postings(&shards, term)),
            &mut sink,
        )?;
        drop(shards);
        // The columns: each document's terms as the union's (in its order).
        let docs: usize = columns.iter().map(|(_, terms, _)| terms.len()).sum();
        let counts =
            (columns.iter()).flat_map(|(_, terms, _)| terms.iter().map(|r| r.len() as u32));
        encode_u32s(counts, docs, &mut sink)?;
        let total = (columns.iter())
            .flat_map(|(_, terms, _)| terms)
            .map(Range::len)
            .sum();
        let union = &union;
        let terms = columns
            .iter()
            .enumerate()
            .flat_map(|(s, (forward, terms, _))| {
                terms.iter().flat_map(move |r| {
                    let mut ids: Vec<u32> = (forward.get(r.clone()))
                        .map(|t| union.term_maps[s][t as usize])
                        .collect();
                    ids.sort_unstable();
                    ids
                })
            });
        encode_u32s(terms, total, &mut sink)?;
        let lengths = (0..union.fields.len()).flat_map(|field| {
            columns
                .iter()
                .enumerate()
                .flat_map(move |(s, (_, terms, lengths))| {
                    let own = union.field_maps[s].iter().position(|&f| f == field);
                    let column = own.map(|own| &lengths[own]);
                    (0..terms.len()).map(move |slot| column.map_or(0, |c| c[slot]))
                })
        });
        encode_u32s(lengths, docs * union.fields.len(), &mut sink)?;
        Ok((Unfinished(writer), outcome))
    }

    /// The names of the fields some live document has text in.
    fn fields_in_use(&self) -> impl Iterator<Item = &str> {
        self.fields
            .iter()
            .zip(&self.field_docs)
            .filter(|&(_, &docs)| docs > 0)
            .map(|(name, _)| name.as_str())
    }

    /// Takes out of earlier shards the keys a later one has (the later document
    /// replaces them), then compacts each: every slot, term, field and kind a
    /// shard then has is in use.
    fn settle(shards: &mut [LexicalIndex]) {
        for later in 1..shards.len() {
            let (earlier, rest) = shards.split_at_mut(later);
            for data in rest[0].docs.iter().flatten() {
                for shard in earlier.iter_mut() {
                    if let Some(old) = shard.by_key.get(&shard.docs, &data.key) {
                        shard.remove_slot(old);
                    }
                }
            }
        }
        for shard in shards {
            shard.compact();
        }
    }

    /// The index of `shards`' documents one after the other, compacted, as
    /// upserting them in that order makes it (a key in a later shard replaces
    /// the document an earlier one has). Their field names in use must fit in
    /// [`MAX_FIELDS`]. Made in memory of exact sizes, a posting list at a time,
    /// each shard's lists freed as they are copied: absorbing the shards into the
    /// first, then copying the whole for tight memory, copied every posting twice
    /// and held the index twice over.
    fn merged(mut shards: Vec<LexicalIndex>, stem: bool) -> LexicalIndex {
        LexicalIndex::settle(&mut shards);
        if shards.is_empty() {
            return LexicalIndex::with_stemming(stem);
        }
        let slots: usize = shards.iter().map(|shard| shard.docs.len()).sum();
        let forward_len: usize = shards.iter().map(|shard| shard.forward.len()).sum();
        let mut union = Union::of(&mut shards);
        let first = &mut shards[0];
        // The first shard's keys and groups are the index's; the others' are
        // added to them.
        let fields = std::mem::take(&mut union.fields);
        let mut index = LexicalIndex {
            stem,
            terms: std::mem::take(&mut union.terms),
            kinds: std::mem::take(&mut union.kinds),
            kind_ids: std::mem::take(&mut union.kind_ids),
            by_key: std::mem::take(&mut first.by_key),
            groups: std::mem::take(&mut first.groups),
            field_total: vec![0; fields.len()],
            field_docs: vec![0; fields.len()],
            field_len: vec![vec![0; slots]; fields.len()],
            fields,
            ..LexicalIndex::default()
        };
        let terms = index.terms.len();
        index.df = vec![0; terms];
        index.postings = Vec::with_capacity(terms);
        for term in 0..terms {
            // Each part's first slot distance grows by at most 4 bytes.
            let parts: usize = union
                .parts(term)
                .map(|(s, t)| shards[s].postings[t].encoded().len() + 4)
                .sum();
            let mut list = PostingList::default();
            list.reserve_exact(parts);
            for posting in union.postings(&shards, term) {
                list.push(posting);
            }
            // The shards' lists copied are freed at once.
            for (s, t) in union.parts(term) {
                drop(std::mem::take(&mut shards[s].postings[t]));
                index.df[term] += shards[s].df[t];
            }
            list.shrink_to_fit();
            index.postings.push(list);
        }
        // The documents, slot by slot.
        index.docs = Vec::with_capacity(slots);
        index.kind_of = Vec::with_capacity(slots);
        let mut own = Vec::with_capacity(forward_len);
        for (s, shard) in shards.into_iter().enumerate() {
            let LexicalIndex {
                field_len,
                field_total,
                field_docs,
                kind_of,
                docs,
                forward,
                ..
            } = shard;
            let (terms, kinds) = (&union.term_maps[s], &union.kind_maps[s]);
            let (map, at) = (&union.field_maps[s], union.offsets[s] as usize);
            for (f, column) in field_len.iter().enumerate() {
                let to = map[f];
                index.field_len[to][at..at + column.len()].copy_from_slice(column);
                index.field_total[to] += field_total[f];
                index.field_docs[to] += field_docs[f];
            }
            index
                .kind_of
                .extend(kind_of.iter().map(|&k| kinds[k as usize]));
            for (i, data) in docs.into_iter().enumerate() {
                let mut data = data.expect("compacted: every slot is live");
                let start = own.len();
                own.extend(forward.get(data.terms.clone()).map(|t| terms[t as usize]));
                own[start..].sort_unstable();
                data.terms = start..own.len();
                // Copied, away from the pages of the documents.
                data.meta = data.meta.clone();
                let slot = (at + i) as u32;
                if s > 0 {
                    // The first shard's keys and groups are the index's already.
                    data.group = index.shared_group_arc(&data.group);
                    data.at = add_to_group(&mut index.groups, &data.group, slot);
                }
                index.docs.push(Some(data));
                if s > 0 {
                    let added = index.by_key.insert(&index.docs, slot);
                    debug_assert!(added, "keys are unique across compacted shards");
                }
                index.live += 1;
            }
        }
        index.forward = Forward::owned(own);
        debug_assert_eq!(index.docs.len(), slots);
        index
    }

    /// The id of `kind`, added if new.
    fn kind_id_or_new(&mut self, kind: &str) -> u32 {
        match self.kind_ids.get(kind) {
            Some(&id) => id,
            None => {
                let id = self.kinds.len() as u32;
                self.kinds.push(kind.to_owned());
                self.kind_ids.insert(kind.to_owned(), id);
                id
            }
        }
    }

    /// Room for `additional` more documents like those held (on average), so that
    /// the next upserts do not copy the index's large arrays into fresh memory:
    /// each document's columns, the forward list and the term table (in
    /// proportion). Room never used in a large array is never touched and takes no
    /// memory once the arrays it replaced are returned (`mi_collect`). Not the maps
    /// (a larger table is all touched) nor the posting lists (most share pages:
    /// room there took 9 % more RSS on the Linux kernel's index).
    pub fn reserve(&mut self, additional: usize) {
        let room = Room::for_more(
            additional,
            self.docs.len(),
            [self.forward.len(), self.terms.len(), self.terms.text_len()],
        );
        self.docs.reserve_exact(room.docs);
        self.kind_of.reserve_exact(room.docs);
        for column in &mut self.field_len {
            column.reserve_exact(room.docs);
        }
        self.forward.own.reserve_exact(room.forward);
        self.terms.reserve(room.terms, room.term_bytes);
        self.postings.reserve_exact(room.terms);
        self.df.reserve_exact(room.terms);
    }

    /// Checks a batch before [`LexicalIndex::upsert_all`], without changing the
    /// index: if this returns Ok, `upsert_all(docs)` indexes every document (so a
    /// caller can have all or nothing). An invalid-input error, naming the first
    /// offending document, if a field name appears twice in a document, if the
    /// field names in use (in a non-empty field of a document) and the batch's make
    /// more than [`MAX_FIELDS`] (a sufficient bound: it does not count on documents
    /// the batch replaces giving their field names up), or if the index would be
    /// full.
    pub fn check_batch(&self, docs: &[Document]) -> Result<()> {
        let mut names: HashSet<&str> = self
            .fields
            .iter()
            .zip(&self.field_docs)
            .filter(|&(_, &docs)| docs > 0)
            .map(|(name, _)| name.as_str())
            .collect();
        for doc in docs {
            let mut own: Vec<&str> = doc.fields.iter().map(|(name, _)| &**name).collect();
            own.sort_unstable();
            if let Some(twice) = own.windows(2).find(|w| w[0] == w[1]) {
                return Err(invalid(
                    "fields",
                    format!(
                        "field {:?} appears twice in document {:?}",
                        twice[0], doc.key
                    ),
                ));
            }
            names.extend(own);
            if names.len() > MAX_FIELDS {
                return Err(invalid(
                    "fields",
                    format!(
                        "at most {MAX_FIELDS} distinct field names: those in use and those of the \
                         documents up to {:?} make {}",
                        doc.key,
                        names.len()
                    ),
                ));
            }
        }
        if self.live.saturating_add(docs.len()) >= DEAD as usize - 1 {
            return Err(invalid("documents", "the index is full"));
        }
        Ok(())
    }

    /// `upsert` of each document in order, their text tokenized in parallel first.
    fn upsert_each(&mut self, docs: Vec<Document>) -> Result<()> {
        let stem = self.stem;
        let mut docs = docs.into_iter();
        loop {
            // A block at a time, so that the memory of one block's tokens is reused
            // for the next rather than all of them taking fresh pages.
            let block: Vec<Document> = docs.by_ref().take(TOKENIZE_BLOCK).collect();
            if block.is_empty() {
                return Ok(());
            }
            let counted: Vec<Counted> = block
                .par_iter()
                .map(|d| Counted::of(&d.fields, stem))
                .collect();
            for (doc, counted) in block.into_iter().zip(counted) {
                self.add_counted(doc, counted)?;
            }
        }
    }

    /// Upserts `docs` in order, tokenized on the calling thread (`upsert_all`
    /// tokenizes on the thread pool): how each thread of a bulk load fills a
    /// shard of its own for `from_shards`, as it goes (a project build indexes
    /// each file's documents as soon as the file is parsed, so that they are
    /// never all held at once: 1.8 GB of text on the Linux kernel).
    pub fn upsert_local(&mut self, docs: Vec<Document>) -> Result<()> {
        docs.into_iter().try_for_each(|doc| self.upsert(doc))
    }

    fn add_counted(&mut self, doc: Document, counted: Counted) -> Result<()> {
        self.make_room(&doc)?;
        self.insert(doc, counted);
        self.maybe_compact();
        Ok(())
    }

    /// Checks `doc`'s field names, registers the new ones and removes the document
    /// its key replaces: all `upsert` does before indexing the text.
    fn make_room(&mut self, doc: &Document) -> Result<()> {
        let mut names: Vec<&str> = doc.fields.iter().map(|(name, _)| &**name).collect();
        names.sort_unstable();
        if let Some(twice) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid(
                "fields",
                format!(
                    "field {:?} appears twice in document {:?}",
                    twice[0], doc.key
                ),
            ));
        }
        let missing = |index: &LexicalIndex| -> Vec<&str> {
            names
                .iter()
                .copied()
                .filter(|name| index.field_id(name).is_none())
                .collect()
        };
        let mut new = missing(self);
        if self.fields.len() + new.len() > MAX_FIELDS && self.field_docs.contains(&0) {
            self.compact();
            new = missing(self);
        }
        if self.fields.len() + new.len() > MAX_FIELDS {
            return Err(invalid(
                "fields",
                format!(
                    "at most {MAX_FIELDS} distinct field names: the index has {}, document {:?} adds {new:?}",
                    self.fields.len(),
                    doc.key
                ),
            ));
        }
        if self.docs.len() >= DEAD as usize - 1 {
            self.compact();
            if self.docs.len() >= DEAD as usize - 1 {
                return Err(invalid("documents", "the index is full"));
            }
        }
        for name in new {
            self.register_field(name);
        }
        if let Some(old) = self.by_key.get(&self.docs, &doc.key) {
            self.remove_slot(old);
        }
        Ok(())
    }

    /// Removes the document with `key`; false if there is none.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(slot) = self.by_key.get(&self.docs, key) else {
            return false;
        };
        self.remove_slot(slot);
        self.maybe_compact();
        true
    }

    /// Removes every document of `group`, returning how many there were.
    pub fn remove_group(&mut self, group: &str) -> usize {
        let Some(members) = self.groups.remove(group) else {
            return 0;
        };
        for &slot in &members {
            self.tombstone(slot);
        }
        self.maybe_compact();
        members.len()
    }

    /// The `limit` documents that score highest for `query` with BM25F (see
    /// [`Bm25Params`]), best first, equal scores by key; only documents of `kinds`
    /// (all if empty). Document count and frequencies are over the whole index.
    /// `params` out of range are brought into range (see [`Bm25Params::clamped`]):
    /// check them with [`Bm25Params::validate`] where they come in.
    ///
    /// Terms are scored rarest first, each document's gains summed in that order
    /// (a function of the documents only, so equal indexes give equal scores bit
    /// for bit). Once the `limit`-th best score so far is above what the remaining
    /// terms could add, documents not yet found cannot make it: the remaining,
    /// common terms are looked up for the candidates only (safe pruning: the
    /// result is the one scoring every document would give).
    pub fn search(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
    ) -> Vec<LexicalHit> {
        self.search_with(query, params, kinds, limit, true)
    }

    fn search_with(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
        prune: bool,
    ) -> Vec<LexicalHit> {
        if limit == 0 || self.live == 0 {
            return Vec::new();
        }
        let params = params.clamped();
        let allowed: Option<Vec<bool>> = (!kinds.is_empty()).then(|| {
            let mut allowed = vec![false; self.kinds.len()];
            for kind in kinds {
                if let Some(&id) = self.kind_ids.get(*kind) {
                    allowed[id as usize] = true;
                }
            }
            allowed
        });
        if allowed.as_ref().is_some_and(|a| !a.contains(&true)) {
            return Vec::new();
        }
        let wanted = |slot: u32| {
            let kind = self.kind_of[slot as usize];
            kind != DEAD && allowed.as_ref().is_none_or(|a| a[kind as usize])
        };
        let terms = self.query_terms(query);
        if terms.is_empty() {
            return Vec::new();
        }
        let mut weights = vec![1.0; self.fields.len()];
        for (name, weight) in &params.field_weights {
            if let Some(field) = self.field_id(name) {
                weights[field] = *weight;
            }
        }
        let norms = Norms::new(self, &weights, params.b);
        let k1 = params.k1;
        let n = self.live as f64;
        // Rarest first; ties by the term itself.
        let mut order = terms.clone();
        order.sort_unstable_by(|&a, &b| {
            (self.df[a as usize], self.terms.get(a)).cmp(&(self.df[b as usize], self.terms.get(b)))
        });
        let idf: Vec<f64> = order
            .iter()
            .map(|&term| {
                let df = self.df[term as usize] as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        // What the terms after the i-th can add at most (tf / (k1 + tf) < 1), with a
        // margin for rounding, and how many postings they have.
        let mut bound_after = vec![0.0; order.len()];
        let mut postings_after = vec![0usize; order.len()];
        for i in (0..order.len().saturating_sub(1)).rev() {
            bound_after[i] = bound_after[i + 1] + idf[i + 1] * (k1 + 1.0) * (1.0 + 1e-9);
            postings_after[i] = postings_after[i + 1] + self.postings[order[i + 1] as usize].len();
        }
        // What `posting` adds to its document's term frequency (the postings of a
        // document for a term are summed in field order).
        let tf_of = |posting: Posting| -> f64 {
            let field = posting.field();
            let len = self.field_len[field][posting.doc as usize];
            posting.tf() as f64 * norms.get(field, len)
        };

        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let scratch = &mut *scratch;
            scratch.reset(self.docs.len());
            let Scratch {
                scores,
                touched,
                values,
            } = scratch;
            // After the switch, the only documents that can still make the cut,
            // by slot.
            let mut candidates: Option<Vec<u32>> = None;
            for (i, &term) in order.iter().enumerate() {
                let idf = idf[i];
                let list = &self.postings[term as usize];
                let gain = |tf: f64| idf * tf * (k1 + 1.0) / (k1 + tf);
                match &mut candidates {
                    None => {
                        let mut add = |doc: u32, tf: f64| {
                            if tf > 0.0 {
                                let gain = gain(tf);
                                if gain > 0.0 {
                                    let score = &mut scores[doc as usize];
                                    if *score == 0.0 {
                                        touched.push(doc);
                                    }
                                    *score += gain;
                                }
                            }
                        };
                        let mut postings = list.iter();
                        if let Some(first) = postings.next() {
                            let (mut doc, mut tf) = (first.doc, tf_of(first));
                            for posting in postings {
                                if posting.doc != doc {
                                    add(doc, tf);
                                    (doc, tf) = (posting.doc, 0.0);
                                }
                                tf += tf_of(posting);
                            }
                            add(doc, tf);
                        }
                        // Worth checking when what is left to read outweighs the
                        // check itself.
                        if prune && postings_after[i] > touched.len() && touched.len() >= limit {
                            values.clear();
                            values.extend(
                                touched
                                    .iter()
                                    .filter(|&&d| wanted(d))
                                    .map(|&d| scores[d as usize]),
                            );
                            if let Some(theta) = kth_largest(values, limit) {
                                if bound_after[i] * (1.0 + 1e-9) < theta {
                                    #[cfg(test)]
                                    tests::PRUNED.with(|p| p.set(p.get() + 1));
                                    let mut kept: Vec<u32> = touched
                                        .iter()
                                        .copied()
                                        .filter(|&d| {
                                            wanted(d)
                                                && !below(scores[d as usize], bound_after[i], theta)
                                        })
                                        .collect();
                                    kept.sort_unstable();
                                    candidates = Some(kept);
                                }
                            }
                        }
                    }
                    Some(kept) => {
                        let mut cursor = list.cursor();
                        for &doc in kept.iter() {
                            cursor.seek(doc);
                            if cursor.head().is_none() {
                                break;
                            }
                            let mut tf = 0.0;
                            while let Some(posting) = cursor.head().filter(|p| p.doc == doc) {
                                tf += tf_of(posting);
                                cursor.advance();
                            }
                            if tf > 0.0 {
                                scores[doc as usize] += gain(tf);
                            }
                        }
                        if kept.len() > limit {
                            values.clear();
                            values.extend(kept.iter().map(|&d| scores[d as usize]));
                            if let Some(theta) = kth_largest(values, limit) {
                                kept.retain(|&d| !below(scores[d as usize], bound_after[i], theta));
                            }
                        }
                    }
                }
            }
            let mut hits: Vec<(f64, u32)> = match &candidates {
                Some(kept) => kept.iter().map(|&d| (scores[d as usize], d)).collect(),
                None => touched
                    .iter()
                    .filter(|&&d| wanted(d))
                    .map(|&d| (scores[d as usize], d))
                    .collect(),
            };
            scratch.reset(0);
            let order = |a: &(f64, u32), b: &(f64, u32)| -> Ordering {
                b.0.total_cmp(&a.0)
                    .then_with(|| self.key_of(a.1).cmp(self.key_of(b.1)))
            };
            if hits.len() > limit {
                hits.select_nth_unstable_by(limit - 1, order);
                hits.truncate(limit);
            }
            hits.sort_unstable_by(order);
            hits.into_iter()
                .map(|(score, slot)| LexicalHit {
                    key: self.key_of(slot).to_owned(),
                    score,
                    matched: terms
                        .iter()
                        .filter(|&&term| self.matches(term, slot, &weights))
                        .map(|&term| self.terms.get(term).to_owned())
                        .collect(),
                })
                .collect()
        })
    }

    /// Drops the postings of removed documents and renumbers slots, terms, fields
    /// and kinds to what is in use. Runs by itself when a quarter of the slots are
    /// dead; never changes what `search` returns.
    pub fn compact(&mut self) {
        let dead_slots = self.docs.len() > self.live;
        if !dead_slots && !self.df.contains(&0) && !self.field_docs.contains(&0) {
            let mut used = vec![false; self.kinds.len()];
            for &kind in &self.kind_of {
                used[kind as usize] = true;
            }
            if !used.contains(&false) {
                return;
            }
        }
        let remap = self.remap();
        let postings = std::mem::take(&mut self.postings);
        self.postings = postings
            .into_par_iter()
            .enumerate()
            .filter(|(term, _)| remap.term[*term] != DEAD)
            .map(|(_, list)| {
                list.mapped(|posting| {
                    let doc = remap.slot[posting.doc as usize];
                    let field = remap.field[posting.field()];
                    (doc != DEAD).then(|| Posting::new(doc, field as usize, posting.tf()))
                })
            })
            .collect();
        let kept = |map: &[u32], i: usize| map[i] != DEAD;
        self.terms = self.terms.retained(|term| kept(&remap.term, term as usize));
        self.df.retain(|&df| df > 0);
        let live: Vec<usize> = (0..self.docs.len())
            .filter(|&s| kept(&remap.slot, s))
            .collect();
        let mut forward = Vec::with_capacity(self.forward.len());
        self.docs = std::mem::take(&mut self.docs)
            .into_iter()
            .flatten()
            .map(|mut data| {
                let start = forward.len();
                forward.extend(
                    (self.forward.get(data.terms.clone())).map(|term| remap.term[term as usize]),
                );
                data.terms = start..forward.len();
                Some(data)
            })
            .collect();
        self.forward = Forward::owned(forward);
        self.kind_of = live
            .iter()
            .map(|&s| remap.kind[self.kind_of[s] as usize])
            .collect();
        let columns = std::mem::take(&mut self.field_len);
        self.field_len = columns
            .into_iter()
            .enumerate()
            .filter(|&(f, _)| kept(&remap.field, f))
            .map(|(_, column)| live.iter().map(|&s| column[s]).collect())
            .collect();
        let mut f = 0;
        self.fields.retain(|_| {
            f += 1;
            kept(&remap.field, f - 1)
        });
        self.field_total.retain(|&total| total > 0);
        self.field_docs.retain(|&docs| docs > 0);
        let mut k = 0;
        self.kinds.retain(|_| {
            k += 1;
            kept(&remap.kind, k - 1)
        });
        self.kind_ids.retain(|_, id| {
            *id = remap.kind[*id as usize];
            *id != DEAD
        });
        for slot in self.by_key.0.iter_mut() {
            *slot = remap.slot[*slot as usize];
        }
        for members in self.groups.values_mut() {
            for slot in members.iter_mut() {
                *slot = remap.slot[*slot as usize];
            }
        }
        debug_assert_eq!(self.docs.len(), self.live);
    }

    /// Saves the index (compacted: nothing of a removed document is written) and
    /// whether it stems to `path` ([`FORMAT_VERSION`]), with `generation`, an
    /// opaque number [`LexicalIndex::load`] returns.
    pub fn save(&self, path: &Path, generation: u64) -> Result<()> {
        self.write(path)?.finish(generation)?.commit()
    }

    /// Writes what [`LexicalIndex::save`] writes to a temporary file beside `path`,
    /// streamed (see `encode_into`), but for the header: the caller finishes it with
    /// the generation (known only once the graph file is written, say), then
    /// commits it.
    pub fn write(&self, path: &Path) -> Result<Unfinished> {
        let mut writer = persist::Writer::create(path, MAGIC, FORMAT_VERSION)?;
        self.encode_into(|bytes| writer.write_all(bytes))?;
        Ok(Unfinished(writer))
    }

    /// The bytes [`LexicalIndex::save`] writes after the header (the saved form,
    /// far smaller than a copy of the index: postings are delta-encoded), in one
    /// buffer.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(|bytes| {
            out.extend_from_slice(bytes);
            Ok(())
        })?;
        Ok(out)
    }

    /// The bytes of `encode`, handed to `sink` a part at a time. Postcard encodes
    /// a struct as its fields one after the other, and the postings (a byte
    /// string) come last: what precedes them is encoded as usual, then they are
    /// written in place into a buffer of at most `ENCODE_BATCH` bytes at a time,
    /// runs of terms side by side. Encoding `to_saved` instead made them a buffer
    /// per term, then one for all, then a copy grown by doubling; a buffer of all
    /// the postings held 850 MB on the Linux kernel. The `Columns` follow, also
    /// through a buffer.
    fn encode_into(&self, mut sink: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let remap = self.remap();
        let (head, lists) = self.stored_head(&remap);
        encode_stored(
            self.stem,
            head,
            |at, out| encode_list(lists[at], &remap, out),
            &mut sink,
        )?;
        // The columns of the live documents, in slot order: their terms renumbered
        // as saved (a live document's terms are all kept, in the same order).
        let live = || {
            self.docs
                .iter()
                .enumerate()
                .filter_map(|(s, d)| Some((s, d.as_ref()?)))
        };
        let fields: Vec<&Vec<u32>> = (self.field_len.iter().zip(&remap.field))
            .filter(|&(_, &to)| to != DEAD)
            .map(|(column, _)| column)
            .collect();
        let counts = live().map(|(_, data)| data.terms.len() as u32);
        encode_u32s(counts, self.live, &mut sink)?;
        let terms = live().flat_map(|(_, data)| self.forward.get(data.terms.clone()));
        let total = live().map(|(_, data)| data.terms.len()).sum();
        encode_u32s(terms.map(|t| remap.term[t as usize]), total, &mut sink)?;
        let lengths = fields
            .iter()
            .flat_map(|column| live().map(|(s, _)| column[s]));
        encode_u32s(lengths, self.live * fields.len(), &mut sink)
    }

    /// Loads an index saved by [`LexicalIndex::save`], with its generation; it
    /// stems if it did when saved. A version 1 file (written before stemming
    /// existed) loads as a non-stemming index. A file that is damaged or not such
    /// an index is `Error::Corrupt` ("rebuild it"). The index has room for a
    /// sixteenth more documents (what a project reserves), untouched until used.
    pub fn load(path: &Path) -> Result<(LexicalIndex, u64)> {
        let file = LexicalFile::open(path)?;
        let generation = file.generation();
        Ok((file.read()?, generation))
    }

    /// `load` of a file opened.
    fn read_opened(opened: persist::Opened) -> Result<LexicalIndex> {
        let path = &opened.path().to_path_buf();
        opened.populate();
        let (payload, _, version) = opened.checked(WHAT, BLOCKED_FROM)?;
        let corrupt = |why: &str| persist::corrupt(path, WHAT, why);
        // Strings borrowed from the file's bytes, not copied first; the posting
        // lists keep reading them (`postings::Shared`).
        let file = Shared::whole(Backing::File(payload));
        let bytes = file.bytes();
        let (saved, rest): (Saved<StoredIn<'_>>, &[u8]) = match version {
            1 => postcard::take_from_bytes(bytes)
                .map(|(index, rest)| (Saved { stem: false, index }, rest)),
            _ => postcard::take_from_bytes(bytes),
        }
        .map_err(|e| corrupt(&e.to_string()))?;
        let columns = match version {
            COLUMNS_FROM.. => Some(
                postcard::from_bytes::<Columns<'_>>(rest).map_err(|e| corrupt(&e.to_string()))?,
            ),
            _ => None,
        };
        let Saved { stem, index } = saved;
        // Where the postings and the documents' terms are in the file (postcard
        // borrows them from it).
        let part = |borrowed: &[u8]| {
            let start = borrowed.as_ptr() as usize - bytes.as_ptr() as usize;
            file.part(start..start + borrowed.len())
        };
        let postings = part(index.postings);
        let columns = columns.map(|columns| {
            let forward = part(columns.forward);
            (columns, forward)
        });
        let index = index.with_postings(postings.clone());
        let index = LexicalIndex::from_saved(Saved { stem, index }, columns)
            .map_err(|why| corrupt(&why))?;
        // The rest of the file was copied out of (the columns after the postings
        // too): only its postings are read now.
        postings.release_rest();
        let mut index = index;
        index.source = Some(file);
        Ok(index)
    }

    /// An error if the file a loaded index reads its posting lists and forward
    /// terms from was written in place since the load (by another program:
    /// aircher-mem replaces its files whole), so that a search, an update or a
    /// save never reads those bytes; `Ok` for an index made in memory. Callers
    /// that read the index ask first (`Project`, the bindings). One `fstat`. A
    /// write in place that races with a read is not caught (see RELIABILITY.md).
    pub fn check_source(&self) -> Result<()> {
        match self.source.as_ref().and_then(Shared::changed) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    fn field_id(&self, name: &str) -> Option<usize> {
        self.fields.binary_search_by(|f| f.as_str().cmp(name)).ok()
    }

    fn key_of(&self, slot: u32) -> &str {
        self.docs[slot as usize]
            .as_ref()
            .map_or("", |data| &*data.key)
    }

    /// The distinct known terms of `query`, in order: at most `MAX_QUERY_TERMS`,
    /// the first ones, so a huge query costs a bounded search.
    fn query_terms(&self, query: &str) -> Vec<u32> {
        let mut seen = HashSet::new();
        let mut terms = Vec::new();
        for_each_token_with(query, self.stem, |token| {
            if let Some(term) = self.terms.id(token) {
                if self.df[term as usize] > 0 && seen.insert(term) {
                    terms.push(term);
                }
            }
            if terms.len() == MAX_QUERY_TERMS {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        terms
    }

    /// Whether the document in `slot` has `term` in a field of weight > 0.
    fn matches(&self, term: u32, slot: u32, weights: &[f64]) -> bool {
        let mut cursor = self.postings[term as usize].cursor();
        cursor.seek(slot);
        while let Some(posting) = cursor.head().filter(|p| p.doc == slot) {
            if weights[posting.field()] > 0.0 {
                return true;
            }
            cursor.advance();
        }
        false
    }

    /// Adds a field name, renumbering the fields after it.
    fn register_field(&mut self, name: &str) {
        let at = self
            .fields
            .binary_search_by(|f| f.as_str().cmp(name))
            .unwrap_err();
        if at < self.fields.len() {
            self.postings.par_iter_mut().for_each(|list| {
                *list = list.mapped(|posting| {
                    let field = posting.field() + usize::from(posting.field() >= at);
                    Some(Posting::new(posting.doc, field, posting.tf()))
                });
            });
        }
        self.fields.insert(at, name.to_owned());
        self.field_len.insert(at, vec![0; self.docs.len()]);
        self.field_total.insert(at, 0);
        self.field_docs.insert(at, 0);
    }

    /// Indexes `doc` (its text counted in `counted`) in a new slot; its key is not
    /// in the index and its fields are registered.
    fn insert(&mut self, doc: Document, counted: Counted) {
        let Document {
            kind,
            key,
            group,
            fields,
            meta,
        } = doc;
        let slot = self.docs.len() as u32;
        for column in &mut self.field_len {
            column.push(0);
        }
        // (term, field, count) for each distinct term of each field.
        let mut occurrences: Vec<(u32, u32, u32)> = Vec::new();
        for ((name, _), (count, terms)) in fields.iter().zip(counted.fields()) {
            let field = self.field_id(name).expect("fields are registered first");
            for (token, tf) in terms {
                let term = self.terms.intern(token);
                if term as usize == self.postings.len() {
                    self.postings.push(PostingList::default());
                    self.df.push(0);
                }
                occurrences.push((term, field as u32, tf));
            }
            self.field_len[field][slot as usize] = count;
            if count > 0 {
                self.field_total[field] += u64::from(count);
                self.field_docs[field] += 1;
            }
        }
        occurrences.sort_unstable();
        let start = self.forward.len();
        for &(term, field, tf) in &occurrences {
            if self.forward.len() == start || self.forward.last() != Some(term) {
                self.forward.push(term);
                self.df[term as usize] += 1;
            }
            self.postings[term as usize].push(Posting::new(slot, field as usize, tf));
        }
        let kind = self.kind_id_or_new(&kind);
        self.kind_of.push(kind);
        let group = self.shared_group(group);
        let at = add_to_group(&mut self.groups, &group, slot);
        self.docs.push(Some(Slot {
            key: key.into_boxed_str(),
            group,
            meta: Meta::new(&meta),
            terms: start..self.forward.len(),
            at,
        }));
        let added = self.by_key.insert(&self.docs, slot);
        debug_assert!(added, "the key was removed first");
        self.live += 1;
    }

    /// `group` as the index holds it: the name its other documents share.
    fn shared_group_arc(&self, group: &Arc<str>) -> Arc<str> {
        match self.groups.get_key_value(&**group) {
            Some((name, _)) => name.clone(),
            None => group.clone(),
        }
    }

    /// `group` as the index holds it: the name its other documents share.
    fn shared_group(&self, group: String) -> Arc<str> {
        match self.groups.get_key_value(group.as_str()) {
            Some((name, _)) => name.clone(),
            None => Arc::from(group),
        }
    }

    /// Tombstones `slot` and takes it out of its group (the group's last member
    /// takes its place).
    fn remove_slot(&mut self, slot: u32) {
        let (group, at) = self.tombstone(slot);
        let at = at as usize;
        let members = self
            .groups
            .get_mut(&*group)
            .expect("a live slot's group has it");
        debug_assert_eq!(members[at], slot);
        members.swap_remove(at);
        if let Some(&moved) = members.get(at) {
            self.docs[moved as usize]
                .as_mut()
                .expect("a member is live")
                .at = at as u32;
        }
        if members.is_empty() {
            self.groups.remove(&*group);
        }
    }

    /// Marks `slot` dead, drops what it held and takes its counts out of the
    /// statistics; returns its group and its position there. Its postings stay
    /// until `compact`.
    fn tombstone(&mut self, slot: u32) -> (Arc<str>, u32) {
        let s = slot as usize;
        let data = self.docs[s].take().expect("a live slot");
        for term in self.forward.get(data.terms) {
            self.df[term as usize] -= 1;
        }
        for field in 0..self.fields.len() {
            let len = std::mem::take(&mut self.field_len[field][s]);
            if len > 0 {
                self.field_total[field] -= len as u64;
                self.field_docs[field] -= 1;
            }
        }
        self.kind_of[s] = DEAD;
        self.live -= 1;
        self.by_key.remove(&data.key, slot);
        (data.group, data.at)
    }

    fn maybe_compact(&mut self) {
        let dead = self.docs.len() - self.live;
        if dead >= COMPACT_MIN_DEAD && dead * 4 >= self.docs.len() {
            self.compact();
        }
    }

    fn remap(&self) -> Remap {
        let mut used = vec![false; self.kinds.len()];
        for &kind in &self.kind_of {
            if kind != DEAD {
                used[kind as usize] = true;
            }
        }
        Remap {
            slot: ranks(self.kind_of.iter().map(|&kind| kind != DEAD)),
            field: ranks(self.field_docs.iter().map(|&docs| docs > 0)),
            term: ranks(self.df.iter().map(|&df| df > 0)),
            kind: ranks(used.into_iter()),
            same_postings: self.live == self.docs.len() && !self.field_docs.contains(&0),
        }
    }

    /// What is saved: the flag and the compacted form, borrowing the strings.
    fn to_saved(&self) -> Saved<StoredRef<'_>> {
        Saved {
            stem: self.stem,
            index: self.to_stored(),
        }
    }

    /// [`LexicalIndex::from_stored`], stemming as saved.
    fn from_saved<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        saved: Saved<Loaded<S, Shared, M>>,
        columns: Option<(Columns<'_>, Shared)>,
    ) -> std::result::Result<LexicalIndex, String> {
        let mut index = LexicalIndex::from_stored(saved.index, columns)?;
        index.stem = saved.stem;
        Ok(index)
    }

    /// The compacted, self-contained form that is saved, borrowing the strings.
    fn to_stored(&self) -> StoredRef<'_> {
        let remap = self.remap();
        let (head, lists) = self.stored_head(&remap);
        let mut postings = vec![0; head.sizes.iter().sum::<u64>() as usize];
        write_postings(&mut postings, 0, &head.sizes, &|at, out| {
            encode_list(lists[at], &remap, out)
        });
        head.with_postings(Bytes(postings))
    }

    /// The stored form without its postings (`()` in their place), and the
    /// posting lists of the terms it keeps, in order.
    fn stored_head<'a>(&'a self, remap: &Remap) -> (StoredHead<'a>, Vec<&'a PostingList>) {
        let docs = self
            .docs
            .iter()
            .zip(&self.kind_of)
            .filter_map(|(data, &kind)| {
                Some(StoredDoc::of(data.as_ref()?, remap.kind[kind as usize]))
            })
            .collect();
        let lists: Vec<&PostingList> = self
            .postings
            .iter()
            .zip(&remap.term)
            .filter(|&(_, &term)| term != DEAD)
            .map(|(list, _)| list)
            .collect();
        let sizes = lists
            .par_iter()
            .map(|list| match remap.keeps_postings() {
                true => list.encoded().len() as u64,
                false => stored_size(remapped(list, remap)),
            })
            .collect();
        let head = Stored {
            fields: pick(self.fields.iter().map(String::as_str), &remap.field),
            kinds: pick(self.kinds.iter().map(String::as_str), &remap.kind),
            docs,
            terms: pick(self.terms.iter().map(|(_, term)| term), &remap.term),
            sizes,
            postings: (),
        };
        (head, lists)
    }

    /// Each document's field lengths and terms (`field_len`, `forward`) as
    /// `Columns` hold them, checked: a document's terms known and increasing, and
    /// each term listed by as many documents as its postings name (so removing
    /// documents never takes its frequency below zero). Returns where each
    /// document's terms end in `forward` (after a 0).
    fn read_columns(
        &mut self,
        (columns, shared): (Columns<'_>, Shared),
        slots: usize,
        room: Room,
    ) -> std::result::Result<Vec<usize>, String> {
        let (fields, terms) = (self.fields.len(), self.df.len());
        let ends = column_ends(&columns, slots)?;
        if columns.forward.len() != ends[slots] * 4 {
            return Err("documents' terms of another number than their counts".into());
        }
        let forward = columns.forward;
        let ordered = (0..slots).into_par_iter().all(|slot| {
            let mut own = read_u32s(&forward[ends[slot] * 4..ends[slot + 1] * 4]);
            let mut previous = own.next();
            own.all(|term| {
                let increasing = previous < Some(term);
                previous = Some(term);
                increasing
            }) && previous.is_none_or(|term| (term as usize) < terms)
        });
        if !ordered {
            return Err("a document's terms out of order or unknown".into());
        }
        let part = 4
            * (forward.len() / 4)
                .div_ceil(rayon::current_num_threads())
                .max(1);
        let listed = forward
            .par_chunks(part)
            .map(|part| {
                let mut listed = vec![0u32; terms];
                for term in read_u32s(part) {
                    listed[term as usize] += 1;
                }
                listed
            })
            .reduce(
                || vec![0; terms],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                    a
                },
            );
        if listed != self.df {
            return Err("documents' terms that disagree with the postings".into());
        }
        if columns.lengths.len() != fields * slots * 4 {
            return Err("field lengths of another number than the documents'".into());
        }
        self.field_len = match slots {
            0 => vec![Vec::new(); fields],
            _ => columns
                .lengths
                .par_chunks_exact(slots * 4)
                .map(|column| {
                    let mut lengths = Vec::with_capacity(slots + room.docs);
                    lengths.extend(read_u32s(column));
                    lengths
                })
                .collect(),
        };
        if self
            .field_len
            .iter()
            .flatten()
            .any(|&len| len as usize > MAX_FIELD_TOKENS)
        {
            return Err("a field longer than the limit".into());
        }
        self.forward = Forward {
            loaded: Some(shared),
            own: Vec::with_capacity(room.forward),
        };
        Ok(ends)
    }

    /// Each document's field lengths and terms (`field_len`, `forward`) from every
    /// posting (a file older than `COLUMNS_FROM`). Returns where each document's
    /// terms end in `forward` (after a 0).
    fn derive_columns(
        &mut self,
        postings: &[PostingList],
        slots: usize,
    ) -> std::result::Result<Vec<usize>, String> {
        // Lengths and each document's number of terms, then each document's terms
        // in place.
        self.field_len = vec![vec![0; slots]; self.fields.len()];
        let mut ends = vec![0usize; slots + 1];
        for list in postings {
            let mut previous = DEAD;
            for posting in list.iter() {
                if posting.doc != previous {
                    ends[posting.doc as usize + 1] += 1;
                    previous = posting.doc;
                }
                let len = &mut self.field_len[posting.field()][posting.doc as usize];
                *len += posting.tf();
                if *len as usize > MAX_FIELD_TOKENS {
                    return Err("a field longer than the limit".into());
                }
            }
        }
        for slot in 0..slots {
            ends[slot + 1] += ends[slot];
        }
        let mut cursor = ends.clone();
        let mut forward = vec![0; ends[slots]];
        for (term, list) in postings.iter().enumerate() {
            let mut previous = DEAD;
            for posting in list.iter() {
                if posting.doc != previous {
                    let at = &mut cursor[posting.doc as usize];
                    forward[*at] = term as u32;
                    *at += 1;
                    previous = posting.doc;
                }
            }
        }
        self.forward = Forward::owned(forward);
        Ok(ends)
    }

    /// Rebuilds an index from its stored form, checking every invariant `search`
    /// relies on; the reason if one does not hold.
    fn from_stored<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        stored: Loaded<S, Shared, M>,
        columns: Option<(Columns<'_>, Shared)>,
    ) -> std::result::Result<LexicalIndex, String> {
        let Stored {
            fields,
            kinds,
            docs,
            terms,
            sizes,
            postings: encoded,
        } = stored;
        let fields: Vec<String> = fields.iter().map(|f| f.as_ref().to_owned()).collect();
        let kinds: Vec<String> = kinds.iter().map(|k| k.as_ref().to_owned()).collect();
        let bytes = encoded.bytes();
        if fields.len() > MAX_FIELDS {
            return Err(format!("{} field names", fields.len()));
        }
        if !fields.windows(2).all(|w| w[0] < w[1]) {
            return Err("field names out of order".into());
        }
        if terms.len() != sizes.len() {
            return Err("terms and posting lists differ in number".into());
        }
        let slots = docs.len();
        if slots >= DEAD as usize - 1 || terms.len() >= DEAD as usize {
            return Err("too many documents or terms".into());
        }
        let mut ranges = Vec::with_capacity(sizes.len());
        let mut offset = 0usize;
        for size in sizes {
            let end = usize::try_from(size)
                .ok()
                .and_then(|size| offset.checked_add(size))
                .filter(|&end| end <= bytes.len())
                .ok_or("posting lists longer than the file")?;
            ranges.push(offset..end);
            offset = end;
        }
        if offset != bytes.len() {
            return Err("bytes after the posting lists".into());
        }
        let field_count = fields.len();
        let mut kind_ids = HashMap::default();
        for (id, kind) in kinds.iter().enumerate() {
            if kind_ids.insert(kind.clone(), id as u32).is_some() {
                return Err(format!("kind {kind:?} twice"));
            }
        }
        let mut index = LexicalIndex {
            field_total: vec![0; field_count],
            field_docs: vec![0; field_count],
            fields,
            kind_ids,
            ..LexicalIndex::default()
        };
        let kinds_count = kinds.len();
        index.kinds = kinds;
        // Where each document's terms end, when the file says (`Columns::counts`).
        let known_ends = columns
            .as_ref()
            .map(|(columns, _)| column_ends(columns, slots))
            .transpose()?;
        // The room a project keeps, made with the arrays (`Room::loaded`). A file
        // without columns says how many terms its documents have once they are
        // derived: no room for more then.
        let term_bytes = terms.iter().map(|t| t.as_ref().len()).sum();
        let forward = known_ends.as_ref().map_or(0, |ends| ends[slots]);
        let room = Room::loaded(slots, [forward, terms.len(), term_bytes]);
        // The posting lists and columns, the terms and the documents are made side
        // by side (on the Linux kernel, 3.8 M lists and terms, 3 M documents).
        let max_tf = MAX_FIELD_TOKENS as u32;
        type Made<T> = std::result::Result<T, String>;
        // The lists' reason first, the columns' inside.
        let lists_and_columns = |index: &mut LexicalIndex| -> Made<Made<Vec<usize>>> {
            // Each list on its own (in parallel): checked to be in order and in
            // range, then read where it is; its document frequency with it. Both
            // go straight to their arrays (gathered in pairs first, they took
            // 213 MB more on the Linux kernel); the first list in order that is
            // not such a list is the reason.
            let lists = ranges.len();
            let mut postings = Vec::with_capacity(lists + room.terms);
            index.df = Vec::with_capacity(lists + room.terms);
            let refused = std::sync::Mutex::new(None::<(usize, String)>);
            ranges
                .into_par_iter()
                .enumerate()
                .map(|(term, range)| {
                    PostingList::checked(&encoded, range, slots, field_count, max_tf)
                        .unwrap_or_else(|why| {
                            let mut refused = refused.lock().unwrap_or_else(|e| e.into_inner());
                            if refused.as_ref().is_none_or(|&(first, _)| term < first) {
                                *refused = Some((term, why));
                            }
                            (PostingList::default(), 0)
                        })
                })
                .unzip_into_vecs(&mut postings, &mut index.df);
            if let Some((_, why)) = refused.into_inner().unwrap_or_else(|e| e.into_inner()) {
                return Err(why);
            }
            let ends = match columns {
                Some(columns) => index.read_columns(columns, slots, room),
                None => index.derive_columns(&postings, slots),
            };
            index.postings = postings;
            Ok(ends)
        };
        let interned = || -> Made<Interner> {
            let mut interned =
                Interner::with_capacity(terms.len() + room.terms, term_bytes + room.term_bytes);
            for name in &terms {
                let name = name.as_ref();
                if interned.insert_new(name).is_none() {
                    return Err(format!("term {name:?} twice"));
                }
            }
            Ok(interned)
        };
        let mut docs = docs;
        let mut made = |ends: &[usize]| Documents::made(&mut docs, ends, kinds_count, room);
        // The documents first: most of their making is in order, on one thread,
        // where the lists and the terms split over the pool.
        let (documents, (lists, interned)) = rayon::join(
            || known_ends.as_deref().map(&mut made),
            || rayon::join(|| lists_and_columns(&mut index), interned),
        );
        // The first reason in the order the parts are read: lists, terms,
        // columns, documents.
        let ends = match (lists, interned) {
            (Err(why), _) | (_, Err(why)) => return Err(why),
            (Ok(ends), Ok(interned)) => {
                index.terms = interned;
                ends?
            }
        };
        drop(encoded);
        let Documents {
            docs,
            kind_of,
            groups,
            by_key,
        } = documents.unwrap_or_else(|| made(&ends))?;
        (index.docs, index.kind_of, index.groups, index.by_key) = (docs, kind_of, groups, by_key);
        for (field, column) in index.field_len.iter().enumerate() {
            for &len in column.iter().filter(|&&len| len > 0) {
                index.field_total[field] += len as u64;
                index.field_docs[field] += 1;
            }
        }
        index.live = slots;
        Ok(index)
    }
}

/// The bytes of a saved index whose stored form is `head` (its postings left
/// out), handed to `sink` a part at a time: the head, then the postings (see
/// `encode_postings`).
fn encode_stored<D: Serialize>(
    stem: bool,
    head: Stored<&str, D, ()>,
    list: impl Fn(usize, &mut [u8]) + Sync,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let head = Saved { stem, index: head };
    encode_value(&head, &mut sink)?;
    encode_postings(&head.index.sizes, list, &mut sink)
}

/// What version 4 saves after the postings, each a byte string of u32s (LE): per
/// document, in saved order, the number of its distinct terms; those terms in
/// increasing order, one document's after another's; per saved field, every
/// document's length in it. A load reads these rather than derive them from every
/// posting (160 M on the Linux kernel: 3 s of one core).
#[derive(Deserialize)]
struct Columns<'a> {
    counts: &'a [u8],
    forward: &'a [u8],
    lengths: &'a [u8],
}

/// `total` u32s as a byte string (postcard's: its length, then the bytes), into
/// `sink` through a buffer of `ENCODE_BATCH` bytes.
fn encode_u32s(
    values: impl Iterator<Item = u32>,
    total: usize,
    sink: &mut impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut out = Vec::new();
    write_varint64(&mut out, total as u64 * 4);
    let mut written = 0;
    for value in values {
        out.extend_from_slice(&value.to_le_bytes());
        written += 1;
        if out.len() as u64 >= ENCODE_BATCH {
            sink(&out)?;
            out.clear();
        }
    }
    debug_assert_eq!(written, total, "as many values as the length says");
    sink(&out)
}

/// The u32s of a byte string of `Columns`.
fn read_u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// `value` encoded (postcard) into `sink`, through a buffer: postcard writes a
/// byte at a time. The head of the Linux kernel's index (keys, groups, metadata
/// and terms) is ~350 MB encoded, never held whole.
fn encode_value<T: Serialize>(value: &T, sink: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let mut to_sink = ToSink { sink, failed: None };
    let (encoded, flushed) = {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut to_sink);
        let encoded = postcard::to_io(value, &mut buffered).map(drop);
        (encoded, std::io::Write::flush(&mut buffered))
    };
    // An error of the sink's comes back as it was (postcard's, or the flush's,
    // only says the write failed).
    if let Some(err) = to_sink.failed {
        return Err(err);
    }
    encoded.map_err(Error::Encode)?;
    debug_assert!(flushed.is_ok(), "only the sink fails");
    Ok(())
}

/// The postings field of a saved index, into `sink`: a byte string (its length,
/// then the bytes), which `list(i, out)` writes for the `i`th term (`out` is
/// `sizes[i]` bytes), in buffers of at most `ENCODE_BATCH` bytes, runs of terms
/// side by side. Encoding a buffer of all the postings held 850 MB on the Linux
/// kernel.
fn encode_postings(
    sizes: &[u64],
    list: impl Fn(usize, &mut [u8]) + Sync,
    sink: &mut impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut out = Vec::new();
    write_varint64(&mut out, sizes.iter().sum());
    sink(&out)?;
    let mut from = 0;
    while from < sizes.len() {
        let mut to = from;
        let mut bytes = 0u64;
        while to < sizes.len() && (to == from || bytes + sizes[to] <= ENCODE_BATCH) {
            bytes += sizes[to];
            to += 1;
        }
        out.clear();
        out.resize(bytes as usize, 0);
        write_postings(&mut out, from, &sizes[from..to], &list);
        sink(&out)?;
        from = to;
    }
    Ok(())
}

/// The documents of settled shards, one after the other, as the merged index
/// stores them (`kinds`: each shard's kinds in the union): encoded as the `Vec`
/// of them is, without making it (3 million on the Linux kernel, 146 MB).
struct MergedDocs<'a> {
    shards: &'a [LexicalIndex],
    kinds: &'a [Vec<u32>],
}

impl Serialize for MergedDocs<'_> {
    fn serialize<Z: serde::Serializer>(
        &self,
        serializer: Z,
    ) -> std::result::Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeSeq;
        let len = self.shards.iter().map(|shard| shard.docs.len()).sum();
        let mut seq = serializer.serialize_seq(Some(len))?;
        for (shard, kinds) in self.shards.iter().zip(self.kinds) {
            for (data, &kind) in shard.docs.iter().zip(&shard.kind_of) {
                let data = data.as_ref().expect("settled: every slot is live");
                seq.serialize_element(&StoredDoc::of(data, kinds[kind as usize]))?;
            }
        }
        seq.end()
    }
}

/// The shards up to the first that refused a document, or whose field names
/// would take their union past [`MAX_FIELDS`], and that error (see
/// [`LexicalIndex::from_shards`]).
fn kept_shards(shards: Vec<(LexicalIndex, Result<()>)>) -> (Vec<LexicalIndex>, Result<()>) {
    let mut kept = Vec::with_capacity(shards.len());
    let mut names: HashSet<String> = HashSet::new();
    for (shard, done) in shards {
        names.extend(shard.fields_in_use().map(str::to_owned));
        if names.len() > MAX_FIELDS {
            let why = format!(
                "at most {MAX_FIELDS} distinct field names: the documents have {}",
                names.len()
            );
            return (kept, Err(invalid("fields", why)));
        }
        kept.push(shard);
        if done.is_err() {
            return (kept, done);
        }
    }
    (kept, Ok(()))
}

/// How settled shards' ids map into the index of them all: its fields (their
/// union, sorted), its terms and kinds (the first shard's, then each later
/// shard's new ones, in order), and where each shard's slots start.
struct Union {
    fields: Vec<String>,
    /// Per shard: the union's id of each of its fields.
    field_maps: Vec<Vec<usize>>,
    terms: Interner,
    /// Per shard: the union's id of each of its terms.
    term_maps: Vec<Vec<u32>>,
    kinds: Vec<String>,
    kind_ids: HashMap<String, u32>,
    /// Per shard: the union's id of each of its kinds.
    kind_maps: Vec<Vec<u32>>,
    /// Per shard: its term of each of the union's, or `DEAD`.
    own: Vec<Vec<u32>>,
    /// Per shard: the union's slot of its first.
    offsets: Vec<u32>,
}

impl Union {
    /// The union of `shards` (at least one), taking the first's terms, kinds and
    /// kind ids (its own ids in the union).
    fn of(shards: &mut [LexicalIndex]) -> Union {
        let mut union = Union::names(shards);
        union.add_terms(shards);
        union
    }

    /// The union of `shards`' fields and kinds (taking the first's), and their
    /// offsets; no terms yet (`add_terms`).
    fn names(shards: &mut [LexicalIndex]) -> Union {
        let mut fields: Vec<String> = shards
            .iter()
            .flat_map(|shard| shard.fields.iter().cloned())
            .collect();
        fields.sort_unstable();
        fields.dedup();
        debug_assert!(fields.len() <= MAX_FIELDS);
        let field_maps = shards
            .iter()
            .map(|shard| {
                let at = |f: &String| fields.binary_search(f).expect("a field of the union");
                shard.fields.iter().map(at).collect()
            })
            .collect();
        let first = &mut shards[0];
        let mut union = LexicalIndex {
            kinds: std::mem::take(&mut first.kinds),
            kind_ids: std::mem::take(&mut first.kind_ids),
            ..LexicalIndex::default()
        };
        let mut kind_maps: Vec<Vec<u32>> = vec![(0..union.kinds.len() as u32).collect()];
        for shard in &shards[1..] {
            let kinds = shard.kinds.iter().map(|kind| union.kind_id_or_new(kind));
            kind_maps.push(kinds.collect());
        }
        let offsets = shards
            .iter()
            .scan(0, |at, shard| {
                let offset = *at;
                *at += shard.docs.len() as u32;
                Some(offset)
            })
            .collect();
        Union {
            fields,
            field_maps,
            terms: Interner::default(),
            term_maps: Vec::new(),
            kinds: union.kinds,
            kind_ids: union.kind_ids,
            kind_maps,
            own: Vec::new(),
            offsets,
        }
    }

    /// The union's terms: the first shard's (taken), then each later one's new
    /// ones, in order; and the maps between each shard's ids and the union's.
    fn add_terms(&mut self, shards: &mut [LexicalIndex]) {
        let mut terms = std::mem::take(&mut shards[0].terms);
        // Room for every later term: what is never used is never touched.
        let later = &shards[1..];
        terms.reserve(
            later.iter().map(|shard| shard.terms.len()).sum(),
            later.iter().map(|shard| shard.terms.text_len()).sum(),
        );
        let mut term_maps: Vec<Vec<u32>> = vec![(0..terms.len() as u32).collect()];
        for shard in later {
            term_maps.push(
                shard
                    .terms
                    .iter()
                    .map(|(_, term)| terms.intern(term))
                    .collect(),
            );
        }
        terms.shrink_to_fit();
        self.own = term_maps
            .iter()
            .map(|map| {
                let mut own = vec![DEAD; terms.len()];
                for (local, &term) in map.iter().enumerate() {
                    own[term as usize] = local as u32;
                }
                own
            })
            .collect();
        self.terms = terms;
        self.term_maps = term_maps;
    }

    /// The shards that have the union's `term`, in order, and their id of it.
    fn parts(&self, term: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.own
            .iter()
            .enumerate()
            .filter(move |&(_, own)| own[term] != DEAD)
            .map(move |(s, own)| (s, own[term] as usize))
    }

    /// The postings of the union's `term` in `shards`, in the union's slots and
    /// fields, in order.
    fn postings<'a>(
        &'a self,
        shards: &'a [LexicalIndex],
        term: usize,
    ) -> impl Iterator<Item = Posting> + 'a {
        self.parts(term).flat_map(move |(s, t)| {
            let (map, at) = (&self.field_maps[s], self.offsets[s]);
            shards[s].postings[t]
                .iter()
                .map(move |p| Posting::new(p.doc + at, map[p.field()], p.tf()))
        })
    }
}

/// The names whose id `map` keeps, in order.
fn pick<'a>(names: impl Iterator<Item = &'a str>, map: &[u32]) -> Vec<&'a str> {
    names
        .zip(map)
        .filter(|(_, &id)| id != DEAD)
        .map(|(name, _)| name)
        .collect()
}

/// Bytes of `value` as a LEB128 varint.
fn varint_len(value: u32) -> usize {
    varint64_len(u64::from(value))
}

/// Bytes of `value` as a LEB128 varint (`write_varint64`'s).
fn varint64_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// `value` as a varint at `out[*at..]`, moving `at` past it.
fn put_varint(out: &mut [u8], at: &mut usize, mut value: u32) {
    while value >= 0x80 {
        out[*at] = value as u8 | 0x80;
        *at += 1;
        value >>= 7;
    }
    out[*at] = value as u8;
    *at += 1;
}

/// A stored posting list's two varints per posting of `postings` (in order):
/// the slot's distance to the previous one, and `tf << 5 | field`.
fn as_stored(postings: impl Iterator<Item = Posting>) -> impl Iterator<Item = (u32, u32)> {
    let mut previous = 0;
    postings.map(move |posting| {
        let delta = posting.doc - previous;
        previous = posting.doc;
        (delta, posting.tf() << 5 | posting.field() as u32)
    })
}

/// The live postings of `list`, their slots and fields renumbered by `remap`.
fn remapped<'a>(list: &'a PostingList, remap: &'a Remap) -> impl Iterator<Item = Posting> + 'a {
    list.iter().filter_map(|posting| {
        let doc = remap.slot[posting.doc as usize];
        let field = remap.field[posting.field()] as usize;
        (doc != DEAD).then(|| Posting::new(doc, field, posting.tf()))
    })
}

/// Bytes of the stored form of `postings` (see `as_stored`).
fn stored_size(postings: impl Iterator<Item = Posting>) -> u64 {
    as_stored(postings)
        .map(|(delta, value)| varint_len(delta) + varint_len(value))
        .sum::<usize>() as u64
}

/// The stored form of `postings` (see `as_stored`) into `out`, which is its size.
fn put_stored(out: &mut [u8], postings: impl Iterator<Item = Posting>) {
    let mut at = 0;
    for (delta, value) in as_stored(postings) {
        put_varint(out, &mut at, delta);
        put_varint(out, &mut at, value);
    }
    debug_assert_eq!(at, out.len());
}

/// The stored postings of `list` into `out`, which is their size.
fn encode_list(list: &PostingList, remap: &Remap, out: &mut [u8]) {
    if remap.keeps_postings() {
        out.copy_from_slice(list.encoded());
    } else {
        put_stored(out, remapped(list, remap));
    }
}

/// Writes the lists `first..` into `out`, `sizes` bytes each (`out` is their
/// sum), with `list` (see `encode_stored`), runs of lists on the thread pool.
fn write_postings(
    out: &mut [u8],
    first: usize,
    sizes: &[u64],
    list: &(impl Fn(usize, &mut [u8]) + Sync),
) {
    const RUN: usize = 4096;
    let mut runs: Vec<(usize, &mut [u8], &[u64])> = Vec::with_capacity(sizes.len().div_ceil(RUN));
    let mut rest = out;
    for (i, sizes) in sizes.chunks(RUN).enumerate() {
        let bytes = sizes.iter().sum::<u64>() as usize;
        let (run, tail) = std::mem::take(&mut rest).split_at_mut(bytes);
        runs.push((first + i * RUN, run, sizes));
        rest = tail;
    }
    debug_assert!(rest.is_empty());
    runs.into_par_iter().for_each(|(first, run, sizes)| {
        let mut at = 0;
        for (i, &size) in sizes.iter().enumerate() {
            let size = size as usize;
            list(first + i, &mut run[at..at + size]);
            at += size;
        }
    });
}

#[derive(Clone, Serialize, Deserialize)]
struct StoredDoc<S, M> {
    key: S,
    kind: u32,
    group: S,
    meta: M,
}

type StoredDocRef<'a> = StoredDoc<&'a str, &'a Meta>;

impl<'a> StoredDocRef<'a> {
    /// The document of `data`, of the saved form's `kind`.
    fn of(data: &'a Slot, kind: u32) -> StoredDocRef<'a> {
        StoredDoc {
            key: &data.key,
            kind,
            group: &data.group,
            meta: &data.meta,
        }
    }
}

/// What is saved: the field names, kinds, the documents of the live slots in
/// order, the terms, and per term the byte length of its postings in `postings`,
/// where each is `(slot delta, tf << 5 | field)` as LEB128 varints. Version 4
/// writes each document's terms and field lengths after it (`Columns`); frequencies
/// and maps are derived on load (and lengths and terms from a file of an older
/// version). Generic over owned or borrowed
/// strings and over the sequence of documents (the same encoding).
#[derive(Clone, Serialize, Deserialize)]
struct Stored<S, D, P = Bytes> {
    fields: Vec<S>,
    kinds: Vec<S>,
    docs: D,
    terms: Vec<S>,
    sizes: Vec<u64>,
    postings: P,
}

impl<S, D, Q> Stored<S, D, Q> {
    /// The stored form with `postings` in place of its own (`()` in a head).
    fn with_postings<P>(self, postings: P) -> Stored<S, D, P> {
        Stored {
            fields: self.fields,
            kinds: self.kinds,
            docs: self.docs,
            terms: self.terms,
            sizes: self.sizes,
            postings,
        }
    }
}

type StoredRef<'a> = Stored<&'a str, Vec<StoredDocRef<'a>>>;
/// Without its postings (`()` encodes as nothing), which `encode` writes after it.
type StoredHead<'a> = Stored<&'a str, Vec<StoredDocRef<'a>>, ()>;
/// The stored form as read back, its names as `S` and its postings as `B`.
type Loaded<S, B, M = Vec<(S, S)>> = Stored<S, Vec<StoredDoc<S, M>>, B>;
type StoredOwned = Loaded<String, Bytes>;
/// Read from a file's bytes: names and postings borrowed from them.
type StoredIn<'a> = Loaded<&'a str, &'a [u8], MetaIn>;

/// A document's metadata made as it is read from a file (its pairs borrowed
/// from the file's bytes, not gathered in a `Vec` of their own first: on the
/// Linux kernel, 3 M allocations fewer a load, and as many frees).
#[derive(Default)]
struct MetaIn(Meta);

impl<'de> Deserialize<'de> for MetaIn {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<MetaIn, D::Error> {
        struct Pairs;
        impl<'de> serde::de::Visitor<'de> for Pairs {
            type Value = MetaIn;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of (key, value) strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<MetaIn, A::Error> {
                // Most documents have one pair or a few: those are gathered here.
                const FEW: usize = 4;
                let mut few = [("", ""); FEW];
                let mut n = 0;
                let mut more: Vec<(&str, &str)> = Vec::new();
                while let Some(pair) = seq.next_element::<(&'de str, &'de str)>()? {
                    if n < FEW && more.is_empty() {
                        few[n] = pair;
                        n += 1;
                    } else {
                        if more.is_empty() {
                            more.extend_from_slice(&few[..n]);
                        }
                        more.push(pair);
                    }
                }
                Ok(MetaIn(match more.is_empty() {
                    true => Meta::new(&few[..n]),
                    false => Meta::new(&more),
                }))
            }
        }
        deserializer.deserialize_seq(Pairs)
    }
}

/// A document's metadata as read back, taken out once (`Documents::made`).
trait MetaSource {
    fn take(&mut self) -> Meta;
}

impl<S: AsRef<str>> MetaSource for Vec<(S, S)> {
    fn take(&mut self) -> Meta {
        Meta::new(self)
    }
}

impl MetaSource for MetaIn {
    fn take(&mut self) -> Meta {
        std::mem::take(&mut self.0)
    }
}

/// The payload of a version 2 file: the stemming flag (one byte, 0 or 1), then
/// the [`Stored`] form, which alone is the payload of a version 1 file.
#[derive(Clone, Serialize, Deserialize)]
struct Saved<I> {
    stem: bool,
    index: I,
}

type SavedOwned = Saved<StoredOwned>;

/// A byte string, encoded as one (postcard: length and bytes), not as a sequence.
#[derive(Clone, Debug, PartialEq)]
struct Bytes(Vec<u8>);

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Bytes, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(
                self,
                v: Vec<u8>,
            ) -> std::result::Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Bytes, A::Error> {
                let mut bytes = Vec::new();
                while let Some(byte) = seq.next_element()? {
                    bytes.push(byte);
                }
                Ok(Bytes(bytes))
            }
        }
        deserializer.deserialize_byte_buf(Visitor)
    }
}

/// Serializes the stemming flag and the compacted form (the payload `save` writes).
impl Serialize for LexicalIndex {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.to_saved().serialize(serializer)
    }
}

/// Checks every invariant, as `load` does.
impl<'de> Deserialize<'de> for LexicalIndex {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let Saved { stem, mut index } = SavedOwned::deserialize(deserializer)?;
        let postings = std::mem::take(&mut index.postings.0);
        let index = index.with_postings(Shared::whole(Backing::Heap(postings)));
        LexicalIndex::from_saved(Saved { stem, index }, None).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::postings::read_varint;
    use proptest::prelude::*;
    use std::cell::Cell;
    use std::collections::BTreeMap;

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
        let good: StoredOwned = postcard::from_bytes::<SavedOwned>(
            &postcard::to_stdvec(&index(&[
                doc("fn", "a", "g", &[("name", "alpha beta")]),
                doc("fn", "b", "g", &[("name", "beta")]),
            ]))
            .unwrap(),
        )
        .unwrap()
        .index;
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
            (
                "longer than the limit",
                Box::new(edit(|l| {
                    l[0][0].1 = 60_000 << 5;
                    l[1][0].1 = 60_000 << 5;
                })),
            ),
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
            // In a version 1 file as in a version 2 one, stemming or not.
            let v1 = postcard::to_stdvec(&stored).unwrap();
            persist::write(&path, MAGIC, 1, 1, &v1).unwrap();
            match LexicalIndex::load(&path) {
                Err(Error::Corrupt(m)) => assert!(m.contains(why), "{why}: {m}"),
                other => panic!("{why}: {other:?}"),
            }
            for stem in [false, true] {
                let saved = Saved {
                    stem,
                    index: stored.clone(),
                };
                // (Version 3: the stored form alone, its columns derived.)
                let payload = postcard::to_stdvec(&saved).unwrap();
                persist::write_blocked(&path, (MAGIC, COLUMNS_FROM - 1, 1), &payload).unwrap();
                match LexicalIndex::load(&path) {
                    Err(Error::Corrupt(m)) => assert!(m.contains(why), "{why}: {m}"),
                    other => panic!("{why}: {other:?}"),
                }
            }
        }
        // The flag is a byte, 0 or 1.
        let mut payload = postcard::to_stdvec(&Saved {
            stem: true,
            index: good.clone(),
        })
        .unwrap();
        assert_eq!(payload[0], 1);
        payload[0] = 2;
        persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), &payload).unwrap();
        assert!(matches!(LexicalIndex::load(&path), Err(Error::Corrupt(_))));
        // A version 1 payload is not a version 2 one, nor the reverse.
        let v1 = postcard::to_stdvec(&good).unwrap();
        persist::write_blocked(&path, (MAGIC, FORMAT_VERSION, 1), &v1).unwrap();
        assert!(matches!(LexicalIndex::load(&path), Err(Error::Corrupt(_))));
        // A version from the future is refused, saying which ones are read.
        persist::write_blocked(&path, (MAGIC, FORMAT_VERSION + 1, 1), &v1).unwrap();
        match LexicalIndex::load(&path) {
            Err(Error::Corrupt(m)) => {
                assert!(
                    m.contains(&format!("reads versions 1 to {FORMAT_VERSION}")),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A version 4 file's columns (each document's terms and field lengths) are
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

            // Postings written in place after the rest: the bytes serde gives, then
            // the columns.
            let encoded = index.encode().unwrap();
            let (head, columns) = encoded.split_at(postcard::to_stdvec(&index.to_saved()).unwrap().len());
            prop_assert_eq!(head, postcard::to_stdvec(&index.to_saved()).unwrap());
            let columns: Columns<'_> = postcard::from_bytes(columns).unwrap();
            prop_assert_eq!(columns.counts.len(), 4 * index.len());
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("lexical.bin");
            index.save(&path, 7).unwrap();
            let (mut loaded, generation) = LexicalIndex::load(&path).unwrap();
            prop_assert_eq!(generation, 7);
            check_invariants(&loaded);
            // Every loaded list, and every document's terms, read the file's bytes;
            // saved again, the same file.
            prop_assert!(loaded.postings.iter().all(|l| l.shared_bytes() == l.encoded().len()));
            let terms: usize = index.docs.iter().flatten().map(|d| d.terms.len()).sum();
            prop_assert_eq!(loaded.forward.sizes(), (0, terms * 4));
            prop_assert_eq!(loaded.encode().unwrap(), index.encode().unwrap());
            let mut compacted = index.clone();
            compacted.compact();
            check_invariants(&compacted);
            for built in [&index, &fresh, &bulk, &loaded, &compacted] {
                prop_assert_eq!(built.stem(), stem);
            }
            let survivors: Vec<Document> = model.values().cloned().collect();
            for q in &queries {
                let expected = reference_with(&survivors, &q.text, &q.params, &q.kinds, q.limit, stem);
                same_as_reference(&index.search(&q.text, &q.params, &q.kinds, q.limit), &expected)?;
                same_results(&index, &fresh, q)?;
                same_results(&loaded, &fresh, q)?;
                same_results(&compacted, &fresh, q)?;
                same_results(&bulk, &fresh, q)?;
            }
            // Changed after the load (its lists copied as they grow, the file
            // replaced under it), it searches as a fresh index of what it holds.
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
                let full = index.search_with(&text, &params, &kinds, limit, false);
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
                index.search_with(q, &params, &[], 5, false)
            );
        }
        assert!(PRUNED.with(Cell::get) > before);
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

    /// A file saved by the version 1 code (before stemming), byte for byte: the
    /// documents of `version_1_files_load_as_non_stemming`, generation 5.
    const V1_FILE: &str = "4149524c455849430100000005000000000000009f00000000000000896c22240dc2\
        19b502047465787405746f70696302047475726e066d656d6f7279020274310002733101046c696e65\
        0137026d310102733101046c696e65013709046c61746507706172746965730772756e6e696e67076d\
        656574696e67057061727479046874747005706172736511706172736568747470726573706f6e7365\
        08726573706f6e73650902020202020202020212002000200020012001200121012101210121";

    /// Users have version 1 files on disk: they load, as indexes that do not stem,
    /// whether kept from then (`V1_FILE`) or written in that layout now.
    #[test]
    fn version_1_files_load_as_non_stemming() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.lexical");
        let meta = |d: Document| Document {
            meta: vec![("line".into(), "7".into())],
            ..d
        };
        let docs = vec![
            meta(doc(
                "turn",
                "t1",
                "s1",
                &[("text", "The parties were running late")],
            )),
            meta(doc(
                "memory",
                "m1",
                "s1",
                &[
                    ("text", "a party at the meeting"),
                    ("topic", "parseHTTPResponse"),
                ],
            )),
        ];
        let original = index(&docs);
        let hex: String = V1_FILE.split_whitespace().collect();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect();
        assert_eq!(&bytes[8..12], &1u32.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let (kept, generation) = LexicalIndex::load(&path).unwrap();
        assert_eq!(generation, 5);
        // Written in the version 1 layout by this code.
        persist::write(
            &path,
            MAGIC,
            1,
            6,
            &postcard::to_stdvec(&original.to_stored()).unwrap(),
        )
        .unwrap();
        let (written, generation) = LexicalIndex::load(&path).unwrap();
        assert_eq!(generation, 6);
        let params = Bm25Params::default();
        for loaded in [&kept, &written] {
            check_invariants(loaded);
            assert!(!loaded.stem());
            assert_eq!(loaded.len(), 2);
            assert_eq!(loaded.get("m1").unwrap().meta.to_vec(), docs[1].meta);
            for query in [
                "party",
                "parties",
                "running",
                "http response",
                "late meeting",
            ] {
                assert_eq!(
                    loaded.search(query, &params, &[], 5),
                    original.search(query, &params, &[], 5),
                    "{query}"
                );
            }
            assert_eq!(keys(&loaded.search("parties", &params, &[], 5)), ["t1"]);
        }
        // Saved again, it is a file of the current version that still does not stem.
        kept.save(&path, 5).unwrap();
        assert_eq!(
            &std::fs::read(&path).unwrap()[8..12],
            &FORMAT_VERSION.to_le_bytes()
        );
        assert!(!LexicalIndex::load(&path).unwrap().0.stem());
        // A version 2 file (its checksum over the payload whole) still loads.
        persist::write(&path, MAGIC, 2, 8, &kept.encode().unwrap()).unwrap();
        let (v2, generation) = LexicalIndex::load(&path).unwrap();
        assert_eq!(generation, 8);
        assert_eq!(v2.encode().unwrap(), kept.encode().unwrap());
    }
}
