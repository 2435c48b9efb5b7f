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

mod build;
mod inplace;
mod overlay;
mod persistence;
mod search;
#[cfg(test)]
mod tests;
mod update;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use foldhash::HashMap;
use hashbrown::HashTable;

use super::persist;
use super::postings::{read_varint64, write_varint64, PostingList, Shared};
use crate::atomic::AtomicFile;
use crate::error::{invalid, Result};
use crate::intern::{hash, Interner};
use persistence::{read_u32s, varint64_len};

/// Distinct field names an index holds at a time.
pub const MAX_FIELDS: usize = 32;
/// Tokens of a field that are indexed; the rest of a longer field is ignored.
pub const MAX_FIELD_TOKENS: usize = 100_000;
/// Distinct indexed terms of a query that are searched for (the first ones); the
/// rest of a longer query is ignored. A long issue or traceback has a few hundred.
pub const MAX_QUERY_TERMS: usize = 512;
/// The version of the file [`LexicalIndex::save`] writes, the only one
/// [`LexicalIndex::load`] reads: a paged file (each block's checksum checked
/// when first read, see `persist`) whose payload is laid out to be searched
/// where it is (see `inplace`). A file of another version is
/// `Error::FormatVersion`: it is rebuilt, never read.
pub const FORMAT_VERSION: u32 = 5;

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
    /// build makes a document per definition.
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
    pub meta: MetaRef<'a>,
}

/// A document's metadata as its slot keeps it: the (key, value) pairs in one
/// allocation, each string after its byte length (a varint); none when there are
/// none: a pair as two `String`s in a `Vec` costs more bytes and two allocations
/// more.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Meta(Box<[u8]>);

impl Meta {
    pub fn new<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> Meta {
        // Made at its size: one allocation.
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
        self.as_ref().iter()
    }

    /// The value of the first pair with `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.as_ref().get(key)
    }

    /// The pairs as owned strings.
    pub fn to_vec(&self) -> Vec<(String, String)> {
        self.as_ref().to_vec()
    }

    /// The pairs, borrowed.
    pub fn as_ref(&self) -> MetaRef<'_> {
        MetaRef(&self.0)
    }

    /// Whether `bytes` are pairs as `new` makes them.
    fn well_formed(bytes: &[u8]) -> bool {
        let mut at = 0;
        let mut strings = 0usize;
        while at < bytes.len() {
            let Some(len) = read_varint64(bytes, &mut at) else {
                return false;
            };
            let end = usize::try_from(len)
                .ok()
                .and_then(|len| at.checked_add(len));
            match end.and_then(|end| bytes.get(at..end)) {
                Some(text) if std::str::from_utf8(text).is_ok() => at += text.len(),
                _ => return false,
            }
            strings += 1;
        }
        strings.is_multiple_of(2)
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

/// A document's metadata, borrowed (from a `Meta`, or a file's bytes).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaRef<'a>(&'a [u8]);

impl<'a> MetaRef<'a> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in order.
    pub fn iter(self) -> impl Iterator<Item = (&'a str, &'a str)> {
        let bytes = self.0;
        let mut at = 0;
        let mut text = move || -> Option<&'a str> {
            let len = read_varint64(bytes, &mut at)? as usize;
            let text = bytes.get(at..at.checked_add(len)?)?;
            at += len;
            // Made from strings, or checked (`Meta::well_formed`).
            std::str::from_utf8(text).ok()
        };
        std::iter::from_fn(move || Some((text()?, text()?)))
    }

    /// The value of the first pair with `key`.
    pub fn get(self, key: &str) -> Option<&'a str> {
        self.iter().find(|&(k, _)| k == key).map(|(_, v)| v)
    }

    /// The pairs as owned strings.
    pub fn to_vec(self) -> Vec<(String, String)> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }
}

impl std::fmt::Debug for MetaRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
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

/// How a search weighs the words of its query beyond BM25F (code search sets both;
/// the default is plain BM25F).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryTerms {
    /// Weight of the other indexed forms of a query word, those with its Snowball
    /// stem (`parse` for "parsed", `reply` for "replies"), its own form weighing 1; 0 searches the query's own forms only.
    /// An index that stems ignores it (its terms are stems already).
    pub forms: f64,
    /// Each term's idf is raised to this power (1: BM25F's own): above 1, a word
    /// that many documents have (a query's "used", "handled") counts for less
    /// against the rare words beside it.
    pub idf_exponent: f64,
    /// The identifier fields (all if empty): the other forms of a word count in
    /// these only (code search counts them in names and paths, not in prose, where a
    /// near form is mostly noise), and a query word no live document has in any of
    /// them weighs `prose_only`.
    pub form_fields: &'static [&'static str],
    /// Weight of a query word the project writes in prose only (comments, doc
    /// strings, bodies) and in no identifier field, measured in the index at query
    /// time, when the query writes it as a plain word (letters, lower case but for
    /// the first): one written as an identifier (`to_datetime`, `TypeError`,
    /// `SCHEMA_OPTS_VAR_NAME`) names code and keeps its weight. 1: weighed like any
    /// other word.
    pub prose_only: f64,
    /// The same for the words of [`crate::retrieve::FILLER_WORDS`] ("handled",
    /// "used", "implemented"), in place of `prose_only`.
    pub filler: f64,
}

impl Default for QueryTerms {
    fn default() -> Self {
        QueryTerms {
            forms: 0.0,
            idf_exponent: 1.0,
            form_fields: &[],
            prose_only: 1.0,
            filler: 1.0,
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
/// (`Columns::forward`, u32 LE; only a removal or a save reads them, so a load
/// neither copies nor allocates them), those of documents added since after
/// them, owned. An index filled for a build ([`LexicalIndex::for_build`]) only
/// counts them (`unheld`): the posting lists say the same, and they are found
/// there again when something reads them (`LexicalIndex::hold_forward`), a
/// block of documents at a time as a merge writes them (`write_merged`), or in
/// the merged lists of an index merged in memory (`from_shards`). On the
/// Linux kernel's build that spares about 380 MiB while the parse holds every
/// shard.
#[derive(Clone, Default)]
struct Forward {
    loaded: Option<Shared>,
    own: Vec<u32>,
    /// The number of terms counted and not held (`own` is then empty and nothing
    /// is loaded).
    unheld: Option<usize>,
}

impl Forward {
    fn owned(own: Vec<u32>) -> Forward {
        Forward {
            loaded: None,
            own,
            unheld: None,
        }
    }

    fn loaded_len(&self) -> usize {
        self.loaded
            .as_ref()
            .map_or(0, |bytes| bytes.bytes().len() / 4)
    }

    fn len(&self) -> usize {
        self.loaded_len() + self.own.len() + self.unheld.unwrap_or(0)
    }

    fn push(&mut self, term: u32) {
        match &mut self.unheld {
            Some(counted) => *counted += 1,
            None => self.own.push(term),
        }
    }

    /// The terms at `range`: one document's, all loaded or all added since.
    fn get(&self, range: Range<usize>) -> impl Iterator<Item = u32> + '_ {
        debug_assert!(self.unheld.is_none(), "held before it is read");
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
    /// The mapped file a loaded index read into memory (`thaw`) reads its
    /// posting lists and forward terms from (`check_source`); `None` for an
    /// index made in memory.
    source: Option<Shared>,
    /// A loaded index: searched where its file holds it (see `inplace`),
    /// every field above empty but the field names and statistics, the kinds,
    /// `live` and `stem`. Changes go to `overlay`; one the overlay cannot take
    /// reads it into memory first (`thaw`).
    frozen: Option<Arc<inplace::View>>,
    /// The changes to an index searched in place since its load (see
    /// `overlay`): the field names and statistics and `live` above are then
    /// those of the file's documents and the overlay's together.
    overlay: Option<Box<overlay::Overlay>>,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("documents", &self.live)
            .field("dead", &self.docs.len().saturating_sub(self.live))
            .field("terms", &self.terms.len())
            .field(
                "postings",
                &self.postings.iter().map(PostingList::len).sum::<usize>(),
            )
            .field("fields", &self.fields)
            .field("kinds", &self.kinds)
            .field("stem", &self.stem)
            .field("in_place", &self.frozen.is_some())
            .field("overlay", &self.overlay.as_ref().map(|o| o.log().len()))
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
            (
                "overlay (changes over the file, see `overlay`)",
                self.overlay.as_ref().map_or(0, |o| o.heap_bytes()),
            ),
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

    /// An empty index, stemming if `stem`, for a build that saves it or merges it
    /// with others: it counts each document's terms without holding them (see
    /// `Forward`), and finds them again from its posting lists when a removal, a
    /// compaction, a merge or a save first reads them.
    pub fn for_build(stem: bool) -> LexicalIndex {
        LexicalIndex {
            stem,
            forward: Forward {
                unheld: Some(0),
                ..Forward::default()
            },
            ..LexicalIndex::default()
        }
    }

    /// The terms of each document, found again from the posting lists when the
    /// index only counted them (see [`LexicalIndex::for_build`]).
    pub(super) fn hold_forward(&mut self) {
        if self.forward.unheld.is_some() {
            self.forward = Forward::owned(self.found_forward());
        }
    }

    /// The forward list the posting lists give, all documents as one block (see
    /// `build::Transposed`), for an index that only counted it, which has no
    /// removed document (a removal holds it first).
    pub(super) fn found_forward(&self) -> Vec<u32> {
        let ranges: Vec<Range<usize>> = (self.docs.iter())
            .map(|data| data.as_ref().expect("no removed document").terms.clone())
            .collect();
        let own = build::Transposed::new(&self.postings).block(0, &ranges);
        debug_assert!(self.docs.iter().flatten().all(|d| {
            let terms = &own[d.terms.clone()];
            terms.windows(2).all(|w| w[0] < w[1])
        }));
        own
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
        match &self.frozen {
            Some(view) => {
                self.overlay.as_ref().is_some_and(|o| o.delta.contains(key))
                    || self.base_slot(view, key).is_some()
            }
            None => self.by_key.get(&self.docs, key).is_some(),
        }
    }

    /// The field names in use (sorted).
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// The document with `key`; none in an index read in place whose file is
    /// damaged where it is.
    pub fn get(&self, key: &str) -> Option<DocRef<'_>> {
        if let Some(view) = &self.frozen {
            if let Some(doc) = self.overlay.as_ref().and_then(|o| o.delta.get(key)) {
                return Some(doc);
            }
            let slot = self.base_slot(view, key)?;
            return self.stored_doc(view, slot);
        }
        let slot = self.by_key.get(&self.docs, key)?;
        let data = self.docs[slot as usize].as_ref()?;
        Some(DocRef {
            kind: &self.kinds[self.kind_of[slot as usize] as usize],
            key: &data.key,
            group: &data.group,
            meta: data.meta.as_ref(),
        })
    }

    /// The live slot of `key` in the file of an index read in place (not
    /// replaced or removed since); none if it cannot be read.
    fn base_slot(&self, view: &inplace::View, key: &str) -> Option<u32> {
        let slot = view.slot_of(key).ok()??;
        match &self.overlay {
            Some(overlay) if overlay.is_dead(slot) => None,
            _ => Some(slot),
        }
    }

    /// The document in `slot` of an index read in place.
    fn stored_doc<'a>(&'a self, view: &'a inplace::View, slot: u32) -> Option<DocRef<'a>> {
        let doc = view.doc(slot).ok()?;
        let kind = view.kind(slot).ok()?;
        Some(DocRef {
            kind: self.kinds.get(kind as usize)?,
            key: doc.key,
            group: doc.group,
            meta: MetaRef(doc.meta),
        })
    }

    /// Every document, in no particular order.
    pub fn documents(&self) -> Box<dyn Iterator<Item = DocRef<'_>> + '_> {
        if let Some(view) = &self.frozen {
            let slots = 0..view.slots as u32;
            let overlay = self.overlay.as_deref();
            let base = slots
                .filter(move |&slot| overlay.is_none_or(|o| !o.is_dead(slot)))
                .filter_map(|slot| self.stored_doc(view, slot));
            return match overlay {
                Some(overlay) => Box::new(base.chain(overlay.delta.documents())),
                None => Box::new(base),
            };
        }
        Box::new(self.docs.iter().enumerate().filter_map(|(slot, data)| {
            let data = data.as_ref()?;
            Some(DocRef {
                kind: &self.kinds[self.kind_of[slot] as usize],
                key: &data.key,
                group: &data.group,
                meta: data.meta.as_ref(),
            })
        }))
    }

    /// The keys of the documents in `group`, sorted.
    pub fn keys_in_group(&self, group: &str) -> Vec<&str> {
        let mut keys: Vec<&str> = match &self.frozen {
            Some(_) => self
                .documents()
                .filter(|doc| doc.group == group)
                .map(|doc| doc.key)
                .collect(),
            None => self
                .groups
                .get(group)
                .into_iter()
                .flatten()
                .filter_map(|&slot| self.docs[slot as usize].as_ref())
                .map(|data| &*data.key)
                .collect(),
        };
        keys.sort_unstable();
        keys
    }

    /// The groups that have documents, sorted.
    pub fn groups(&self) -> Vec<&str> {
        let mut groups: Vec<&str> = match &self.frozen {
            Some(_) => self.documents().map(|doc| doc.group).collect(),
            None => self.groups.keys().map(|g| &**g).collect(),
        };
        groups.sort_unstable();
        groups.dedup();
        groups
    }

    fn field_id(&self, name: &str) -> Option<usize> {
        self.fields.binary_search_by(|f| f.as_str().cmp(name)).ok()
    }

    fn key_of(&self, slot: u32) -> &str {
        self.docs[slot as usize]
            .as_ref()
            .map_or("", |data| &*data.key)
    }
}
