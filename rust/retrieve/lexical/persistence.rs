//! The saved form of an index: `save` and `load`, the file a project opens
//! and reads later (`LexicalFile`), and serde.

use std::path::Path;
use std::sync::Arc;

use foldhash::HashMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::update::Remap;
use super::{
    persist, Forward, Keys, LexicalFile, LexicalIndex, Meta, Room, Slot, Unfinished, DEAD,
    FORMAT_VERSION, MAGIC, MAX_FIELDS, MAX_FIELD_TOKENS, WHAT,
};
use crate::error::{Error, Result};
use crate::intern::{hash, Interner};
use crate::retrieve::postings::{write_varint64, Backing, Posting, PostingList, Shared};

/// Bytes of postings `encode_into` encodes at a time (a longer list alone); tiny
/// in tests, so that their indexes are written in many batches.
#[cfg(not(test))]
const ENCODE_BATCH: u64 = 16 << 20;
#[cfg(test)]
const ENCODE_BATCH: u64 = 24;

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

/// Saved as the sequence of pairs it was made from.
impl Serialize for Meta {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let pairs: Vec<(&str, &str)> = self.iter().collect();
        pairs.serialize(serializer)
    }
}

impl LexicalFile {
    /// Opens the index file at `path`: an error if it is not a lexical index,
    /// `Error::FormatVersion` if it is one of another version than
    /// [`FORMAT_VERSION`], or is truncated (the rest is checked by `read`).
    pub fn open(path: &Path) -> Result<LexicalFile> {
        let opened = persist::Opened::open(path, MAGIC, FORMAT_VERSION, WHAT)?;
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

impl LexicalIndex {
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
    /// runs of terms side by side, never a buffer of all the postings. The
    /// `Columns` follow, also through a buffer.
    pub(super) fn encode_into(&self, mut sink: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
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
    /// stems if it did when saved. A file of another format version is
    /// `Error::FormatVersion`, one that is damaged or not such an index
    /// `Error::Corrupt` (either: rebuild it). The index has room for a sixteenth
    /// more documents (what a project reserves), untouched until used.
    pub fn load(path: &Path) -> Result<(LexicalIndex, u64)> {
        let file = LexicalFile::open(path)?;
        let generation = file.generation();
        Ok((file.read()?, generation))
    }

    /// `load` of a file opened.
    fn read_opened(opened: persist::Opened) -> Result<LexicalIndex> {
        let path = &opened.path().to_path_buf();
        opened.populate();
        let (payload, _) = opened.checked(WHAT, true)?;
        let file = Shared::whole(Backing::File(payload));
        let mut index =
            LexicalIndex::decode(&file).map_err(|why| persist::corrupt(path, WHAT, &why))?;
        index.source = Some(file);
        Ok(index)
    }

    /// The index whose saved payload (what `encode` makes) is `payload`, checked;
    /// the reason if it is not one. Strings are borrowed from the payload, not
    /// copied first; the posting lists and the documents' terms keep reading
    /// them where they are (`postings::Shared`).
    fn decode(payload: &Shared) -> std::result::Result<LexicalIndex, String> {
        let bytes = payload.bytes();
        let (saved, rest): (Saved<StoredIn<'_>>, &[u8]) =
            postcard::take_from_bytes(bytes).map_err(|e| e.to_string())?;
        let columns: Columns<'_> = postcard::from_bytes(rest).map_err(|e| e.to_string())?;
        let Saved { stem, index } = saved;
        // Where the postings and the documents' terms are in the payload (postcard
        // borrows them from it).
        let part = |borrowed: &[u8]| {
            let start = borrowed.as_ptr() as usize - bytes.as_ptr() as usize;
            payload.part(start..start + borrowed.len())
        };
        let postings = part(index.postings);
        let forward = part(columns.forward);
        let index = index.with_postings(postings.clone());
        let index = LexicalIndex::from_saved(Saved { stem, index }, (columns, forward))?;
        // The rest of a file was copied out of (the columns after the postings
        // too): only its postings are read now.
        postings.release_rest();
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

    /// What is saved before the columns: the flag and the compacted form,
    /// borrowing the strings (`encode` writes the same, streamed).
    #[cfg(test)]
    pub(super) fn to_saved(&self) -> Saved<StoredRef<'_>> {
        Saved {
            stem: self.stem,
            index: self.to_stored(),
        }
    }

    /// [`LexicalIndex::from_stored`], stemming as saved.
    fn from_saved<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        saved: Saved<Loaded<S, Shared, M>>,
        columns: (Columns<'_>, Shared),
    ) -> std::result::Result<LexicalIndex, String> {
        let mut index = LexicalIndex::from_stored(saved.index, columns)?;
        index.stem = saved.stem;
        Ok(index)
    }

    /// The compacted, self-contained form that is saved, borrowing the strings.
    #[cfg(test)]
    pub(super) fn to_stored(&self) -> StoredRef<'_> {
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

    /// Rebuilds an index from its stored form, checking every invariant `search`
    /// relies on; the reason if one does not hold.
    fn from_stored<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        stored: Loaded<S, Shared, M>,
        columns: (Columns<'_>, Shared),
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
        // Where each document's terms end (`Columns::counts`).
        let ends = column_ends(&columns.0, slots)?;
        // The room a project keeps, made with the arrays (`Room::loaded`).
        let term_bytes = terms.iter().map(|t| t.as_ref().len()).sum();
        let room = Room::loaded(slots, [ends[slots], terms.len(), term_bytes]);
        // The posting lists and columns, the terms and the documents are made side
        // by side.
        let max_tf = MAX_FIELD_TOKENS as u32;
        type Made<T> = std::result::Result<T, String>;
        // The lists' reason first, the columns' inside.
        let lists_and_columns = |index: &mut LexicalIndex| -> Made<Made<Vec<usize>>> {
            // Each list on its own (in parallel): checked to be in order and in
            // range, then read where it is; its document frequency with it. Both
            // go straight to their arrays, not gathered in pairs first; the first
            // list in order that is not such a list is the reason.
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
            let read = index.read_columns(columns, slots, room);
            index.postings = postings;
            Ok(read)
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
        // The documents first: most of their making is in order, on one thread,
        // where the lists and the terms split over the pool.
        let (documents, (lists, interned)) = rayon::join(
            || Documents::made(&mut docs, &ends, kinds_count, room),
            || rayon::join(|| lists_and_columns(&mut index), interned),
        );
        // The first reason in the order the parts are read: lists, terms,
        // columns, documents.
        match (lists, interned) {
            (Err(why), _) | (_, Err(why)) => return Err(why),
            (Ok(columns), Ok(interned)) => {
                index.terms = interned;
                columns?;
            }
        }
        drop(encoded);
        let Documents {
            docs,
            kind_of,
            groups,
            by_key,
        } = documents?;
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

/// What is saved after the postings, each a byte string of u32s (LE): per
/// document, in saved order, the number of its distinct terms; those terms in
/// increasing order, one document's after another's; per saved field, every
/// document's length in it. A load reads these rather than derive them from every
/// posting.
#[derive(Deserialize)]
pub(super) struct Columns<'a> {
    pub(super) counts: &'a [u8],
    pub(super) forward: &'a [u8],
    pub(super) lengths: &'a [u8],
}

/// `total` u32s as a byte string (postcard's: its length, then the bytes), into
/// `sink` through a buffer of `ENCODE_BATCH` bytes.
pub(super) fn encode_u32s(
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
pub(super) fn read_u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// `value` encoded (postcard) into `sink`, through a buffer: postcard writes a
/// byte at a time. The head of an index (keys, groups, metadata and terms) is
/// never held whole encoded.
pub(super) fn encode_value<T: Serialize>(
    value: &T,
    sink: &mut impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
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
/// side by side, never a buffer of all the postings.
pub(super) fn encode_postings(
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
pub(super) fn varint64_len(value: u64) -> usize {
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
pub(super) fn stored_size(postings: impl Iterator<Item = Posting>) -> u64 {
    as_stored(postings)
        .map(|(delta, value)| varint_len(delta) + varint_len(value))
        .sum::<usize>() as u64
}

/// The stored form of `postings` (see `as_stored`) into `out`, which is its size.
pub(super) fn put_stored(out: &mut [u8], postings: impl Iterator<Item = Posting>) {
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
pub(super) struct StoredDoc<S, M> {
    pub(super) key: S,
    pub(super) kind: u32,
    pub(super) group: S,
    pub(super) meta: M,
}

pub(super) type StoredDocRef<'a> = StoredDoc<&'a str, &'a Meta>;

impl<'a> StoredDocRef<'a> {
    /// The document of `data`, of the saved form's `kind`.
    pub(super) fn of(data: &'a Slot, kind: u32) -> StoredDocRef<'a> {
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
/// where each is `(slot delta, tf << 5 | field)` as LEB128 varints; each
/// document's terms and field lengths follow it (`Columns`), frequencies and maps
/// are derived on load. Generic over owned or borrowed strings and over the
/// sequence of documents (the same encoding).
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Stored<S, D, P = Bytes> {
    pub(super) fields: Vec<S>,
    pub(super) kinds: Vec<S>,
    pub(super) docs: D,
    pub(super) terms: Vec<S>,
    pub(super) sizes: Vec<u64>,
    pub(super) postings: P,
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

#[cfg(test)]
pub(super) type StoredRef<'a> = Stored<&'a str, Vec<StoredDocRef<'a>>>;
/// Without its postings (`()` encodes as nothing), which `encode` writes after it.
type StoredHead<'a> = Stored<&'a str, Vec<StoredDocRef<'a>>, ()>;
/// The stored form as read back, its names as `S` and its postings as `B`.
pub(super) type Loaded<S, B, M = Vec<(S, S)>> = Stored<S, Vec<StoredDoc<S, M>>, B>;
/// Read back into owned strings (the tests edit it).
#[cfg(test)]
pub(super) type StoredOwned = Loaded<String, Bytes>;
/// Read from a file's bytes: names and postings borrowed from them.
type StoredIn<'a> = Loaded<&'a str, &'a [u8], MetaIn>;

/// A document's metadata made as it is read from a file (its pairs borrowed
/// from the file's bytes, not gathered in a `Vec` of their own first: one
/// allocation fewer a document).
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

/// The head of a saved payload: the stemming flag (one byte, 0 or 1), then the
/// [`Stored`] form; the [`Columns`] follow.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Saved<I> {
    pub(super) stem: bool,
    pub(super) index: I,
}

#[cfg(test)]
pub(super) type SavedOwned = Saved<StoredOwned>;

/// A byte string, encoded as one (postcard: length and bytes), not as a sequence.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Bytes(pub(super) Vec<u8>);

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

/// Serializes the payload `save` writes (`encode`: the stemming flag, the
/// compacted form and its columns) as one byte string.
impl Serialize for LexicalIndex {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let payload = self.encode().map_err(serde::ser::Error::custom)?;
        serializer.serialize_bytes(&payload)
    }
}

/// Checks every invariant, as `load` does.
impl<'de> Deserialize<'de> for LexicalIndex {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let Bytes(payload) = Bytes::deserialize(deserializer)?;
        LexicalIndex::decode(&Shared::whole(Backing::Heap(payload)))
            .map_err(serde::de::Error::custom)
    }
}
