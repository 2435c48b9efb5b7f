//! The saved form of an index: `save` and `load`, the file a project opens
//! and reads later (`LexicalFile`), and serde.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use foldhash::HashMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::inplace::{put_list, put_skips, skip_count, Head, Out, Section, View};
use super::overlay::Change;
use super::update::Remap;
use super::{
    persist, Forward, Keys, LexicalFile, LexicalIndex, Meta, Room, Slot, Unfinished, DEAD,
    FORMAT_VERSION, MAGIC, MAX_FIELDS, MAX_FIELD_TOKENS, WHAT,
};
use crate::error::{Error, Result};
use crate::intern::{hash, Interner};
use crate::retrieve::postings::{Backing, Posting, PostingList, Shared, STORED_SKIP};

/// Bytes of postings `encode_into` encodes at a time (a longer list alone); tiny
/// in tests, so that their indexes are written in many batches.
#[cfg(not(test))]
const ENCODE_BATCH: u64 = 16 << 20;
#[cfg(test)]
const ENCODE_BATCH: u64 = 24;

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
        let opened = persist::Opened::open_paged(path, MAGIC, FORMAT_VERSION, WHAT)?;
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

/// `read(i)` for each `i` of `0..count` in order, read on the thread pool; the
/// first error in that order if any.
fn in_order<T: Send>(count: usize, read: impl Fn(u32) -> Result<T> + Sync) -> Result<Vec<T>> {
    let ids = 0..count as u32;
    match ids.clone().into_par_iter().map(&read).collect() {
        Ok(values) => Ok(values),
        Err(err) => Err(ids.filter_map(|id| read(id).err()).next().unwrap_or(err)),
    }
}

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
        let mut writer = persist::Writer::create_paged(path, MAGIC, FORMAT_VERSION)?;
        self.encode_into(|bytes| writer.write_all(bytes))?;
        Ok(Unfinished(writer))
    }

    /// The bytes [`LexicalIndex::save`] writes after the header (the saved form,
    /// see `inplace`), in one buffer.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(|bytes| {
            out.extend_from_slice(bytes);
            Ok(())
        })?;
        Ok(out)
    }

    /// The bytes of `encode`, handed to `sink` a part at a time, section by
    /// section (`inplace::Out`): the posting lists a run at a time, never a
    /// buffer of all of them. An index read in place and not changed since hands
    /// on its file's payload as it is (each block checked).
    ///
    /// One with changes over it (`overlay`) writes the merged index, streamed
    /// from its file and its overlay (`encode_overlay`: it reads the whole
    /// file, whose pages it then lets go), never read into memory.
    pub(super) fn encode_into(&self, mut sink: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if let (Some(view), Some(overlay)) = (&self.frozen, &self.overlay) {
            let written = self.encode_overlay(view, overlay, sink);
            view.paged.shared().release();
            return written;
        }
        if let Some(view) = &self.frozen {
            let len = view.paged.len();
            for start in (0..len).step_by(ENCODE_BATCH as usize) {
                sink(
                    view.paged
                        .get(start..(start + ENCODE_BATCH as usize).min(len))?,
                )?;
            }
            return Ok(());
        }
        let remap = self.remap();
        let mut out = Out::new(sink);
        let live = || {
            self.docs
                .iter()
                .enumerate()
                .filter_map(|(s, d)| Some((s, d.as_ref()?)))
        };
        out.docs(
            || {
                live().map(|(s, data)| {
                    let kind = remap.kind[self.kind_of[s] as usize];
                    (&*data.key, &*data.group, &*data.meta.0, kind)
                })
            },
            self.live,
        )?;
        let lists: Vec<(&PostingList, u32)> = (self.postings.iter().zip(&self.df))
            .zip(&remap.term)
            .filter(|&(_, &term)| term != DEAD)
            .map(|((list, &df), _)| (list, df))
            .collect();
        let keeps = remap.keeps_postings();
        out.postings(
            lists.len(),
            |t| {
                let (list, df) = lists[t];
                let (bytes, len) = match keeps {
                    true => (list.encoded().len() as u64, list.len()),
                    false => stored_size(remapped(list, &remap)),
                };
                let skips = (skip_count(len) * STORED_SKIP) as u64;
                (bytes + skips, len as u32, df)
            },
            |t, out| {
                let list = lists[t].0;
                if keeps {
                    let (bytes, skips) = out.split_at_mut(list.encoded().len());
                    bytes.copy_from_slice(list.encoded());
                    put_skips(skips, list.skips().iter().copied());
                } else {
                    put_list(out, remapped(list, &remap));
                }
            },
        )?;
        let terms = || pick(self.terms.iter().map(|(_, term)| term), &remap.term).into_iter();
        out.terms(terms, lists.len())?;
        let fields: Vec<&Vec<u32>> = (self.field_len.iter().zip(&remap.field))
            .filter(|&(_, &to)| to != DEAD)
            .map(|(column, _)| column)
            .collect();
        out.u32s(
            Section::Counts,
            live().map(|(_, data)| data.terms.len() as u32),
        )?;
        let found = self
            .forward
            .unheld
            .map(|_| Forward::owned(self.found_forward()));
        let forward = found.as_ref().unwrap_or(&self.forward);
        let terms = live().flat_map(|(_, data)| forward.get(data.terms.clone()));
        out.u32s(Section::Forward, terms.map(|t| remap.term[t as usize]))?;
        let lengths = fields
            .iter()
            .flat_map(|column| live().map(|(s, _)| column[s]));
        out.u32s(Section::Lengths, lengths)?;
        let kept =
            |values: &[u32]| -> Vec<u32> { values.iter().copied().filter(|&v| v > 0).collect() };
        out.finish(&Head {
            stem: self.stem,
            fields: pick(self.fields.iter().map(String::as_str), &remap.field),
            kinds: pick(self.kinds.iter().map(String::as_str), &remap.kind),
            field_total: self
                .field_total
                .iter()
                .copied()
                .filter(|&t| t > 0)
                .collect(),
            field_docs: kept(&self.field_docs),
            slots: self.live as u64,
            terms: lists.len() as u64,
        })
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

    /// `load` of a file opened: read in place (see `inplace`), nothing decoded
    /// but its head.
    fn read_opened(opened: persist::Opened) -> Result<LexicalIndex> {
        LexicalIndex::in_place(opened.paged(WHAT)?)
    }

    /// The index whose payload `paged` holds, searched where it is.
    pub(super) fn in_place(paged: persist::Paged) -> Result<LexicalIndex> {
        let view = View::open(paged)?;
        let head = &view.head;
        let mut kind_ids = HashMap::default();
        for (id, kind) in head.kinds.iter().enumerate() {
            if kind_ids.insert(kind.clone(), id as u32).is_some() {
                return Err(view.paged.corrupt(&format!("kind {kind:?} twice")));
            }
        }
        Ok(LexicalIndex {
            fields: head.fields.clone(),
            field_total: head.field_total.clone(),
            field_docs: head.field_docs.clone(),
            kinds: head.kinds.clone(),
            kind_ids,
            live: view.slots,
            stem: head.stem,
            frozen: Some(Arc::new(view)),
            ..LexicalIndex::default()
        })
    }

    /// The index whose saved payload (what `encode` makes) is `payload`, read
    /// into memory and checked; the reason if it is not one.
    fn decode(payload: Vec<u8>) -> Result<LexicalIndex> {
        let len = payload.len();
        let paged = persist::Paged::new(
            Backing::Heap(payload),
            len,
            None,
            (std::path::PathBuf::from("(serialized)"), WHAT),
        );
        let mut index = LexicalIndex::in_place(paged)?;
        index.thaw()?;
        Ok(index)
    }

    /// Reads an index searched in place into memory, checked in full: what a
    /// change needs (its postings and its documents' terms keep reading the
    /// file's bytes). Nothing to do for an index in memory.
    ///
    /// An index with changes over it (`overlay`) reads the file and replays
    /// them: what a thaw before the first change would have made.
    pub fn thaw(&mut self) -> Result<()> {
        let Some(view) = self.frozen.clone() else {
            return Ok(());
        };
        let mut index = LexicalIndex::from_view(&view)?;
        index.stem = self.stem;
        if let Some(overlay) = self.overlay.take() {
            for change in overlay.log() {
                index.replay(change)?;
            }
        }
        *self = index;
        Ok(())
    }

    /// Does `change` again (see `thaw`).
    fn replay(&mut self, change: &Change) -> Result<()> {
        match change {
            Change::Upsert(upsert) => {
                let (doc, counted) = &**upsert;
                self.add_counted(doc.clone(), counted.clone())?;
            }
            Change::Remove(key) => {
                self.remove(key);
            }
            Change::RemoveGroup(group) => {
                self.remove_group(group);
            }
        }
        Ok(())
    }

    /// The index `view` holds, in memory. The file's pages are read in at once
    /// and every block is checked on the thread pool; the documents, terms and
    /// lists are then read out of their sections side by side. Its posting lists
    /// and its documents' terms keep reading the file (`source`), whose other
    /// pages go from the process's memory once read: their contents were copied.
    fn from_view(view: &View) -> Result<LexicalIndex> {
        let corrupt = |why: String| view.paged.corrupt(&why);
        let head = &view.head;
        let shared = view.paged.shared().clone();
        shared.populate();
        view.paged.get(0..view.paged.len())?;
        let kind_of = view.kind_of()?;
        let docs = in_order(view.slots, |slot| {
            let doc = view.doc(slot)?;
            Ok(StoredDoc {
                key: doc.key,
                kind: kind_of.get(slot as usize),
                group: doc.group,
                meta: RawMeta(Some(doc.meta)),
            })
        })?;
        let terms = in_order(view.terms, |id| view.term(id))?;
        let ranges = in_order(view.terms, |id| Ok(view.list_ranges(id)?.0))?;
        let forward_range = view.range(Section::Forward);
        let columns = Columns {
            counts: view.whole(Section::Counts)?,
            forward: view.whole(Section::Forward)?,
            lengths: view.whole(Section::Lengths)?,
        };
        let forward = shared.part(forward_range);
        let fields = head.fields.clone();
        fn names(names: &[String]) -> Vec<&str> {
            names.iter().map(String::as_str).collect()
        }
        let mut index = LexicalIndex::from_stored(
            (names(&head.fields), names(&head.kinds), docs, terms),
            (ranges, shared.clone()),
            (columns, forward),
        )
        .map_err(corrupt)?;
        debug_assert_eq!(index.fields, fields);
        index.stem = head.stem;
        shared.part(view.range(Section::Postings)).release_rest();
        index.source = Some(shared);
        Ok(index)
    }

    /// An error if the file a loaded index reads its posting lists and forward
    /// terms from was written in place since the load (by another program:
    /// aircher-mem replaces its files whole), so that a search, an update or a
    /// save never reads those bytes; `Ok` for an index made in memory. Callers
    /// that read the index ask first (`Project`, the bindings). One `fstat`. A
    /// write in place that races with a read is not caught (see RELIABILITY.md).
    pub fn check_source(&self) -> Result<()> {
        if let Some(view) = &self.frozen {
            return view.check();
        }
        match self.source.as_ref().and_then(Shared::changed) {
            Some(err) => Err(err),
            None => Ok(()),
        }
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
            unheld: None,
        };
        Ok(ends)
    }

    /// Rebuilds an index from its stored form, checking every invariant `search`
    /// relies on; the reason if one does not hold.
    #[allow(clippy::type_complexity)]
    fn from_stored<S: AsRef<str> + Send + Sync, M: MetaSource + Send>(
        (fields, kinds, docs, terms): (Vec<S>, Vec<S>, Vec<StoredDoc<S, M>>, Vec<S>),
        (ranges, encoded): (Vec<Range<usize>>, Shared),
        columns: (Columns<'_>, Shared),
    ) -> std::result::Result<LexicalIndex, String> {
        let fields: Vec<String> = fields.iter().map(|f| f.as_ref().to_owned()).collect();
        let kinds: Vec<String> = kinds.iter().map(|k| k.as_ref().to_owned()).collect();
        let bytes = encoded.bytes();
        if fields.len() > MAX_FIELDS {
            return Err(format!("{} field names", fields.len()));
        }
        if !fields.windows(2).all(|w| w[0] < w[1]) {
            return Err("field names out of order".into());
        }
        if terms.len() != ranges.len() {
            return Err("terms and posting lists differ in number".into());
        }
        let slots = docs.len();
        if slots >= DEAD as usize - 1 || terms.len() >= DEAD as usize {
            return Err("too many documents or terms".into());
        }
        if ranges
            .iter()
            .any(|r| r.start > r.end || r.end > bytes.len())
        {
            return Err("posting lists longer than the file".into());
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

/// What is saved after the postings, each a byte string of u32s (LE): per
/// document, in saved order, the number of its distinct terms; those terms in
/// increasing order, one document's after another's; per saved field, every
/// document's length in it. A load reads these rather than derive them from every
/// posting.
pub(super) struct Columns<'a> {
    pub(super) counts: &'a [u8],
    pub(super) forward: &'a [u8],
    pub(super) lengths: &'a [u8],
}

/// The u32s of a byte string of `Columns`.
pub(super) fn read_u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// Writes the lists `0..sizes.len()` (`sizes` bytes each) with `list` into
/// `sink`, in buffers of at most `ENCODE_BATCH` bytes (`out`), runs of lists side
/// by side (a longer list alone), never a buffer of all of them.
pub(super) fn encode_postings(
    sizes: &[u64],
    list: impl Fn(usize, &mut [u8]) + Sync,
    sink: &mut impl FnMut(&[u8]) -> Result<()>,
    out: &mut Vec<u8>,
) -> Result<()> {
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
        write_postings(out, from, &sizes[from..to], &list);
        sink(out)?;
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
pub(super) fn put_varint(out: &mut [u8], at: &mut usize, mut value: u32) {
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
/// Bytes of the stored form of `postings` (see `as_stored`), and their number.
pub(super) fn stored_size(postings: impl Iterator<Item = Posting>) -> (u64, usize) {
    as_stored(postings).fold((0, 0), |(bytes, count), (delta, value)| {
        let size = varint_len(delta) + varint_len(value);
        (bytes + size as u64, count + 1)
    })
}

/// Writes the lists `first..` into `out`, `sizes` bytes each (`out` is their
/// sum), with `list` (see `encode_stored`), runs of lists on the thread pool.
pub(super) fn write_postings(
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

/// A document's metadata as read back, taken out once (`Documents::made`).
trait MetaSource {
    fn take(&mut self) -> Meta;
}

impl<S: AsRef<str>> MetaSource for Vec<(S, S)> {
    fn take(&mut self) -> Meta {
        Meta::new(self)
    }
}

/// A document's metadata as a file stores it (checked well formed).
pub(super) struct RawMeta<'a>(pub(super) Option<&'a [u8]>);

impl MetaSource for RawMeta<'_> {
    fn take(&mut self) -> Meta {
        Meta(self.0.take().unwrap_or_default().into())
    }
}

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
        LexicalIndex::decode(payload).map_err(serde::de::Error::custom)
    }
}
