//! Documents tokenized and indexed in bulk: `upsert_all`, the shards a bulk
//! load indexes side by side, and their merge into one index (in memory or
//! straight into a file).

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::{ControlFlow, Range};
use std::path::Path;

use foldhash::HashMap;
use rayon::prelude::*;

use super::inplace::{put_list, skip_count, Head, Out, Section};
use super::persistence::stored_size;
use super::update::add_to_group;
use super::{
    persist, Document, Forward, LexicalIndex, Unfinished, DEAD, FORMAT_VERSION, MAGIC, MAX_FIELDS,
    MAX_FIELD_TOKENS, SHARD_MIN_DOCS, TOKENIZE_BLOCK,
};
use crate::error::{invalid, Result};
use crate::intern::Interner;
use crate::retrieve::postings::{next_varint, Posting, PostingList};
use crate::retrieve::tokenize::{for_each_token_with, head};

/// A document's text tokenized: per field (in the document's order), its token
/// count and its distinct terms with their counts, sorted. Computed apart from the
/// index (in parallel by `upsert_all`). The terms of all fields sit back to back in
/// one string, so a document costs a few allocations, not one per token.
#[derive(Clone)]
pub(super) struct Counted {
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
    pub(super) fn of(fields: &[(Cow<'static, str>, String)], stem: bool) -> Counted {
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

    /// Heap bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.fields.capacity() * std::mem::size_of::<(u32, Range<usize>)>()
            + self.terms.capacity() * std::mem::size_of::<(Range<usize>, u32)>()
    }

    /// Each field's token count and its terms with their counts.
    pub(super) fn fields(&self) -> impl Iterator<Item = (u32, impl Iterator<Item = (&str, u32)>)> {
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

impl LexicalIndex {
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
    /// index (`Project::build_into`) never holds it beside its shards. Returns the
    /// file to finish and commit, and the outcome `from_shards` returns.
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
        let mut writer = persist::Writer::create_paged(path, MAGIC, FORMAT_VERSION)?;
        let mut out = Out::new(|bytes: &[u8]| writer.write_all(bytes));
        // The saved form's sections one after the other (`inplace`): first the
        // documents.
        let slots: usize = shards.iter().map(|shard| shard.docs.len()).sum();
        let docs = || {
            shards
                .iter()
                .zip(&union.kind_maps)
                .flat_map(|(shard, kinds)| {
                    shard.docs.iter().zip(&shard.kind_of).map(|(data, &kind)| {
                        let data = data.as_ref().expect("settled: every slot is live");
                        (
                            &*data.key,
                            &*data.group,
                            &*data.meta.0,
                            kinds[kind as usize],
                        )
                    })
                })
        };
        out.docs(docs, slots)?;
        // The statistics, from the shards before they go.
        let mut field_total = vec![0u64; union.fields.len()];
        let mut field_docs = vec![0u32; union.fields.len()];
        for (s, shard) in shards.iter().enumerate() {
            for (f, &to) in union.field_maps[s].iter().enumerate() {
                field_total[to] += shard.field_total[f];
                field_docs[to] += shard.field_docs[f];
            }
        }
        // The rest needs the shards' terms and postings, and the documents' terms
        // and field lengths (the columns, last) only: the documents go (their
        // slots, keys, metadata) before the union's terms are made.
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
            // a shard filled for a build has no forward list: it is found from its
            // posting lists as it is written (below)
            let forward =
                (shard.forward.unheld.is_none()).then(|| std::mem::take(&mut shard.forward));
            columns.push((forward, terms, std::mem::take(&mut shard.field_len)));
            *shard = LexicalIndex {
                terms: std::mem::take(&mut shard.terms),
                postings: std::mem::take(&mut shard.postings),
                df: std::mem::take(&mut shard.df),
                ..LexicalIndex::default()
            };
        }
        crate::release_free_memory();
        union.add_terms(&mut shards);
        let terms = union.terms.len();
        {
            let (union, shards) = (&union, &shards);
            out.postings(
                terms,
                |term| {
                    let (size, len) = stored_size(union.postings(shards, term));
                    let df: u32 = union.parts(term).map(|(s, t)| shards[s].df[t]).sum();
                    let skips = (skip_count(len) * crate::retrieve::postings::STORED_SKIP) as u64;
                    (size + skips, len as u32, df)
                },
                |term, bytes| put_list(bytes, union.postings(shards, term)),
            )?;
        }
        out.terms(|| union.terms.iter().map(|(_, term)| term), terms)?;
        // The columns: each document's terms as the union's (in its order).
        let counts =
            (columns.iter()).flat_map(|(_, terms, _)| terms.iter().map(|r| r.len() as u32));
        out.u32s(Section::Counts, counts)?;
        out.begin(Section::Forward)?;
        let mut ids: Vec<u32> = Vec::new();
        for (s, (forward, terms, _)) in columns.iter_mut().enumerate() {
            let map = &union.term_maps[s];
            let mut put = |terms: &mut dyn Iterator<Item = u32>| -> Result<()> {
                ids.clear();
                ids.extend(terms.map(|t| map[t as usize]));
                ids.sort_unstable();
                ids.iter().try_for_each(|&id| out.u32(id))
            };
            match forward.take() {
                Some(held) => {
                    for r in terms.iter() {
                        put(&mut held.get(r.clone()))?;
                    }
                }
                // A shard filled for a build: its forward list found from its posting
                // lists a block of documents at a time, never held whole.
                None => {
                    let mut transposed = Transposed::new(&shards[s].postings);
                    for (k, block) in terms.chunks(TRANSPOSED_BLOCK).enumerate() {
                        let own = transposed.block((k * TRANSPOSED_BLOCK) as u32, block);
                        let base = block.first().map_or(0, |r| r.start);
                        for r in block {
                            put(&mut own[r.start - base..r.end - base].iter().copied())?;
                        }
                    }
                }
            }
        }
        out.end();
        drop(shards);
        let union = &union;
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
        out.u32s(Section::Lengths, lengths)?;
        out.finish(&Head {
            stem,
            fields: union.fields.iter().map(String::as_str).collect(),
            kinds: union.kinds.iter().map(String::as_str).collect(),
            field_total,
            field_docs,
            slots: slots as u64,
            terms: terms as u64,
        })?;
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
        // Shards filled for a build hold no forward list: the merged index's is found
        // from its own posting lists once they are merged (below).
        let found = shards.iter().any(|shard| shard.forward.unheld.is_some());
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
        let mut own = Vec::with_capacity(if found { 0 } else { forward_len });
        let mut counted = 0;
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
                if found {
                    let start = counted;
                    counted += data.terms.len();
                    data.terms = start..counted;
                } else {
                    let start = own.len();
                    own.extend(forward.get(data.terms.clone()).map(|t| terms[t as usize]));
                    own[start..].sort_unstable();
                    data.terms = start..own.len();
                }
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
        if found {
            index.forward.unheld = Some(counted);
            index.hold_forward();
        }
        debug_assert_eq!(index.docs.len(), slots);
        index
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
    /// never all held at once).
    pub fn upsert_local(&mut self, docs: Vec<Document>) -> Result<()> {
        docs.into_iter().try_for_each(|doc| self.upsert(doc))
    }
}

/// Documents a [`Transposed`] block holds: about a sixth of a Linux kernel
/// shard's; tiny in tests, so that their shards have several.
#[cfg(not(test))]
const TRANSPOSED_BLOCK: usize = 1 << 17;
#[cfg(test)]
const TRANSPOSED_BLOCK: usize = 64;

/// A shard's forward list found from its posting lists (see `Forward`), a block of
/// documents at a time: each list is read once, from where the block before
/// stopped in it.
pub(super) struct Transposed<'a> {
    postings: &'a [PostingList],
    /// Per term: the byte where its list's next posting starts, and the slot of the
    /// posting before it.
    next: Vec<(usize, u32)>,
}

impl<'a> Transposed<'a> {
    pub(super) fn new(postings: &'a [PostingList]) -> Self {
        Transposed {
            postings,
            next: vec![(0, 0); postings.len()],
        }
    }

    /// The terms of the documents of slots `lo..`, whose `terms` ranges are
    /// `block` (each starting where the one before ends; `lo` the slot after the
    /// previous block's last), one after the other, each document's in
    /// increasing order.
    pub(super) fn block(&mut self, lo: u32, block: &[Range<usize>]) -> Vec<u32> {
        let (Some(first), Some(last)) = (block.first(), block.last()) else {
            return Vec::new();
        };
        let base = first.start;
        let mut own = vec![0u32; last.end - base];
        let mut at: Vec<usize> = block.iter().map(|r| r.start - base).collect();
        let hi = lo + block.len() as u32;
        for (term, (list, next)) in self.postings.iter().zip(&mut self.next).enumerate() {
            let bytes = list.encoded();
            let mut last_doc = None;
            while next.0 < bytes.len() {
                let mut read = next.0;
                let doc = next.1 + next_varint(bytes, &mut read);
                if doc >= hi {
                    break;
                }
                let _packed = next_varint(bytes, &mut read);
                *next = (read, doc);
                if last_doc != Some(doc) {
                    last_doc = Some(doc);
                    let slot = &mut at[(doc - lo) as usize];
                    own[*slot] = term as u32;
                    *slot += 1;
                }
            }
        }
        own
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
