//! The saved form of an index, laid out to be searched where it is: a file a
//! load maps and answers from at once, without decoding it first.
//!
//! The payload is a run of sections, each starting at a multiple of 8 bytes,
//! then their table (offset and length of each, u64 LE, in the order of
//! [`Section`]). Integers are little-endian:
//!
//! - `DocOffsets`: per document (in slot order), where its record starts in
//!   `Docs` (u64), and where the last ends. `Docs`: per document, its key and
//!   its group (each a varint byte length, then the bytes), then its metadata
//!   (`Meta`'s bytes). `KeyTable`: the documents by key, an open-addressed table
//!   of slot + 1 (u32; 0 is empty; see `table_hash`). `KindOf`: per document, its
//!   kind (u32).
//! - `Stats`: per term, its document frequency and its number of postings (two
//!   u32). `Postings`: per term, its postings as `postings` encodes them, then
//!   its skip entries (the slot before every `SKIP`-th posting, u32, and the
//!   posting's offset, u64). `PostOffsets`: where each term's part of `Postings`
//!   starts (u64), and where the last ends.
//! - `Terms`: the terms' bytes, back to back; `TermOffsets`: where each starts
//!   (u64), and where the last ends; `TermTable`: the terms by text, as
//!   `KeyTable` (term + 1).
//! - `Counts`, `Forward`, `Lengths`: per document the number of its distinct
//!   terms, those terms (increasing), and per field every document's length in
//!   it (u32 each): what an update reads.
//! - `Head`: postcard of the stemming flag, field names, kinds, per field the
//!   total length and the number of documents that have it, and the numbers of
//!   documents and terms.
//!
//! A reader checks the table and the head when it opens the file, each block of
//! the file against its checksum when it first reads it (`persist::Paged`),
//! every offset against its section, and each posting list in full the first
//! time a search reads it (the lists it trusts are those it checked): a damaged
//! file is an error, never a panic or a read out of bounds.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{persist, MAX_FIELDS, MAX_FIELD_TOKENS};
use crate::error::Result;
use crate::retrieve::postings::{
    check_stored, read_varint64, write_varint64, ListRef, Posting, Skips, SKIP, STORED_SKIP,
};

/// The sections of a payload, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Section {
    DocOffsets,
    Docs,
    KeyTable,
    KindOf,
    Stats,
    Postings,
    PostOffsets,
    Terms,
    TermOffsets,
    TermTable,
    Counts,
    Forward,
    Lengths,
    Head,
}

pub(super) const SECTIONS: usize = 14;
const TABLE_BYTES: usize = SECTIONS * 16;

/// Bytes an `Out` hands on at a time; tiny in tests, so that their indexes are
/// written in many parts.
#[cfg(not(test))]
const BUFFER: usize = 1 << 20;
#[cfg(test)]
const BUFFER: usize = 64;

/// A stable hash of a key or term for the tables (FNV-1a, 64 bits): the
/// file's layout must not depend on a library's hash.
pub(super) fn table_hash(text: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in text {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Entries of a table of `count` items: a third of them left empty.
fn table_len(count: usize) -> usize {
    count + count / 2 + 1
}

/// Where `hash` starts its probe in a table of `len` entries.
fn home(hash: u64, len: usize) -> usize {
    ((u128::from(hash) * len as u128) >> 64) as usize
}

/// The table of `count` items whose hashes `hashes` gives, in id order.
pub(super) fn build_table(count: usize, hashes: impl Iterator<Item = u64>) -> Vec<u32> {
    let len = table_len(count);
    let mut table = vec![0u32; len];
    for (id, hash) in hashes.enumerate() {
        let mut at = home(hash, len);
        while table[at] != 0 {
            at = if at + 1 == len { 0 } else { at + 1 };
        }
        table[at] = id as u32 + 1;
    }
    table
}

/// Stored skip entries of a list of `len` postings.
pub(super) fn skip_count(len: usize) -> usize {
    len.saturating_sub(1) / SKIP
}

/// The sections of a payload written one after the other into a sink (a file,
/// a buffer), through a buffer.
pub(super) struct Out<F: FnMut(&[u8]) -> Result<()>> {
    sink: F,
    buffer: Vec<u8>,
    flushed: u64,
    start: u64,
    table: Vec<(u64, u64)>,
}

impl<F: FnMut(&[u8]) -> Result<()>> Out<F> {
    pub(super) fn new(sink: F) -> Out<F> {
        Out {
            sink,
            buffer: Vec::with_capacity(BUFFER),
            flushed: 0,
            start: 0,
            table: Vec::with_capacity(SECTIONS),
        }
    }

    fn at(&self) -> u64 {
        self.flushed + self.buffer.len() as u64
    }

    fn flush(&mut self) -> Result<()> {
        if !self.buffer.is_empty() {
            (self.sink)(&self.buffer)?;
            self.flushed += self.buffer.len() as u64;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Starts `section` (the next one), at a multiple of 8.
    pub(super) fn begin(&mut self, section: Section) -> Result<()> {
        debug_assert_eq!(self.table.len(), section as usize, "sections in order");
        let pad = self.at().next_multiple_of(8) - self.at();
        self.buffer.extend(std::iter::repeat_n(0, pad as usize));
        self.start = self.at();
        Ok(())
    }

    pub(super) fn end(&mut self) {
        self.table.push((self.start, self.at() - self.start));
    }

    pub(super) fn bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if self.buffer.len() + bytes.len() > BUFFER {
            self.flush()?;
        }
        if bytes.len() >= BUFFER {
            (self.sink)(bytes)?;
            self.flushed += bytes.len() as u64;
        } else {
            self.buffer.extend_from_slice(bytes);
        }
        Ok(())
    }

    pub(super) fn u32(&mut self, value: u32) -> Result<()> {
        self.bytes(&value.to_le_bytes())
    }

    pub(super) fn u64(&mut self, value: u64) -> Result<()> {
        self.bytes(&value.to_le_bytes())
    }

    /// A whole section of u32s.
    pub(super) fn u32s(
        &mut self,
        section: Section,
        values: impl Iterator<Item = u32>,
    ) -> Result<()> {
        self.begin(section)?;
        for value in values {
            self.u32(value)?;
        }
        self.end();
        Ok(())
    }

    /// The documents' sections, `docs()` giving each one's key, group,
    /// metadata bytes and kind, in slot order (it is read three times).
    pub(super) fn docs<'d, I>(&mut self, docs: impl Fn() -> I, slots: usize) -> Result<()>
    where
        I: Iterator<Item = (&'d str, &'d str, &'d [u8], u32)>,
    {
        let record = |key: &str, group: &str, meta: &[u8]| -> u64 {
            let text = |t: &str| super::varint64_len(t.len() as u64) + t.len();
            (text(key) + text(group) + meta.len()) as u64
        };
        self.begin(Section::DocOffsets)?;
        let mut at = 0u64;
        for (key, group, meta, _) in docs() {
            self.u64(at)?;
            at += record(key, group, meta);
        }
        self.u64(at)?;
        self.end();
        self.begin(Section::Docs)?;
        let mut head = Vec::new();
        for (key, group, meta, _) in docs() {
            for text in [key, group] {
                head.clear();
                write_varint64(&mut head, text.len() as u64);
                self.bytes(&head)?;
                self.bytes(text.as_bytes())?;
            }
            self.bytes(meta)?;
        }
        self.end();
        let table = build_table(
            slots,
            docs().map(|(key, _, _, _)| table_hash(key.as_bytes())),
        );
        self.u32s(Section::KeyTable, table.into_iter())?;
        self.u32s(Section::KindOf, docs().map(|(_, _, _, kind)| kind))
    }

    /// The terms' statistics and posting lists: `stats(t)` gives term `t`'s
    /// stored size (postings and skip entries), number of postings and document
    /// frequency, `list(t, out)` writes its stored bytes into `out` (its size).
    /// Runs of terms on the thread pool, never a buffer of all the postings.
    pub(super) fn postings(
        &mut self,
        terms: usize,
        stats: impl Fn(usize) -> (u64, u32, u32) + Sync,
        list: impl Fn(usize, &mut [u8]) + Sync,
    ) -> Result<()> {
        const RUN: usize = 1 << 16;
        self.begin(Section::Stats)?;
        let mut sizes = Vec::with_capacity(terms);
        for first in (0..terms).step_by(RUN) {
            let run: Vec<(u64, u32, u32)> = (first..(first + RUN).min(terms))
                .into_par_iter()
                .map(&stats)
                .collect();
            for (size, len, df) in run {
                sizes.push(size);
                self.u32(df)?;
                self.u32(len)?;
            }
        }
        self.end();
        self.begin(Section::Postings)?;
        let mut out = Vec::new();
        let mut sink = |bytes: &[u8]| self.bytes(bytes);
        super::persistence::encode_postings(&sizes, list, &mut sink, &mut out)?;
        self.end();
        self.begin(Section::PostOffsets)?;
        let mut at = 0;
        for size in sizes {
            self.u64(at)?;
            at += size;
        }
        self.u64(at)?;
        self.end();
        Ok(())
    }

    /// The terms' sections, `terms()` giving them in id order (read thrice).
    pub(super) fn terms<'t, I>(&mut self, terms: impl Fn() -> I, count: usize) -> Result<()>
    where
        I: Iterator<Item = &'t str>,
    {
        self.begin(Section::Terms)?;
        for term in terms() {
            self.bytes(term.as_bytes())?;
        }
        self.end();
        self.begin(Section::TermOffsets)?;
        let mut at = 0u64;
        for term in terms() {
            self.u64(at)?;
            at += term.len() as u64;
        }
        self.u64(at)?;
        self.end();
        let table = build_table(count, terms().map(|t| table_hash(t.as_bytes())));
        self.u32s(Section::TermTable, table.into_iter())
    }

    /// The head and the table of sections: the end of the payload.
    pub(super) fn finish(mut self, head: &Head<&str>) -> Result<()> {
        self.begin(Section::Head)?;
        let encoded = postcard::to_stdvec(head).map_err(crate::error::Error::Encode)?;
        self.bytes(&encoded)?;
        self.end();
        debug_assert_eq!(self.table.len(), SECTIONS);
        let pad = self.at().next_multiple_of(8) - self.at();
        self.bytes(&vec![0; pad as usize])?;
        for (start, len) in std::mem::take(&mut self.table) {
            self.u64(start)?;
            self.u64(len)?;
        }
        self.flush()
    }
}

/// The stored bytes of `postings` (`len` of them) into `out` (their size):
/// postings, then skip entries.
pub(super) fn put_list(out: &mut [u8], postings: impl Iterator<Item = Posting>) {
    let mut entries = Vec::new();
    let mut at = 0;
    let mut previous = 0;
    for (count, posting) in postings.enumerate() {
        if crate::retrieve::postings::leaves_skip(count) {
            entries.push((previous, at));
        }
        let delta = posting.doc - if count == 0 { 0 } else { previous };
        super::persistence::put_varint(out, &mut at, delta);
        super::persistence::put_varint(out, &mut at, posting.packed());
        previous = posting.doc;
    }
    debug_assert_eq!(at + entries.len() * STORED_SKIP, out.len());
    put_skips(&mut out[at..], entries.into_iter());
}

/// Skip entries as stored, into `out` (their size).
pub(super) fn put_skips(out: &mut [u8], entries: impl Iterator<Item = (u32, usize)>) {
    for (entry, (slot, at)) in out.chunks_exact_mut(STORED_SKIP).zip(entries) {
        entry[..4].copy_from_slice(&slot.to_le_bytes());
        entry[4..].copy_from_slice(&(at as u64).to_le_bytes());
    }
}

/// What the head section holds.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Head<S> {
    pub stem: bool,
    pub fields: Vec<S>,
    pub kinds: Vec<S>,
    pub field_total: Vec<u64>,
    pub field_docs: Vec<u32>,
    pub slots: u64,
    pub terms: u64,
}

/// An index file's payload, read where it is.
#[derive(Debug)]
pub(super) struct View {
    pub(super) paged: persist::Paged,
    pub(super) head: Head<String>,
    sections: [Range<usize>; SECTIONS],
    pub(super) slots: usize,
    pub(super) terms: usize,
    fields: usize,
    /// A bit per term: its list is checked.
    checked: Box<[AtomicU64]>,
    /// Why a read of the file failed where the caller could not say it.
    failed: std::sync::OnceLock<String>,
}

/// A column of u32s: held, or as a file stores them.
#[derive(Clone, Copy)]
pub(super) enum U32s<'a> {
    Held(&'a [u32]),
    Stored(&'a [u8]),
}

impl U32s<'_> {
    /// The `i`th value (0 past the end: a caller reads only those it checked).
    #[inline]
    pub(super) fn get(&self, i: usize) -> u32 {
        match self {
            U32s::Held(values) => values.get(i).copied().unwrap_or(0),
            U32s::Stored(bytes) => bytes
                .get(i * 4..i * 4 + 4)
                .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes"))),
        }
    }
}

/// A stored document.
pub(super) struct DocIn<'a> {
    pub key: &'a str,
    pub group: &'a str,
    pub meta: &'a [u8],
}

impl View {
    /// The payload `paged` read as an index: its table of sections and its head
    /// checked, and returned.
    pub(super) fn open(paged: persist::Paged) -> Result<View> {
        let len = paged.len();
        let corrupt = |why: &str| paged.corrupt(why);
        if len < TABLE_BYTES {
            return Err(corrupt("no table of sections"));
        }
        let table = paged.get(len - TABLE_BYTES..len)?;
        let word = |at: usize| u64::from_le_bytes(table[at..at + 8].try_into().expect("8"));
        let mut sections: [Range<usize>; SECTIONS] = Default::default();
        let mut end = 0usize;
        for (i, section) in sections.iter_mut().enumerate() {
            let (start, length) = (word(i * 16), word(i * 16 + 8));
            let range = usize::try_from(start)
                .ok()
                .zip(usize::try_from(length).ok())
                .and_then(|(s, l)| Some(s..s.checked_add(l)?))
                .filter(|r| r.start >= end && r.end <= len - TABLE_BYTES)
                .ok_or_else(|| corrupt("a section out of place"))?;
            end = range.end;
            *section = range;
        }
        let head = paged.get(sections[Section::Head as usize].clone())?;
        let head: Head<String> =
            postcard::from_bytes(head).map_err(|e| corrupt(&format!("head: {e}")))?;
        let (slots, terms, fields) = (
            usize::try_from(head.slots).unwrap_or(usize::MAX),
            usize::try_from(head.terms).unwrap_or(usize::MAX),
            head.fields.len(),
        );
        if fields > MAX_FIELDS
            || !head.fields.windows(2).all(|w| w[0] < w[1])
            || head.field_total.len() != fields
            || head.field_docs.len() != fields
        {
            return Err(corrupt("field names that do not fit"));
        }
        if slots >= super::DEAD as usize - 1 || terms >= super::DEAD as usize {
            return Err(corrupt("too many documents or terms"));
        }
        let size = |s: Section| sections[s as usize].len();
        let fits = size(Section::DocOffsets) == 8 * (slots + 1)
            && size(Section::KeyTable) == 4 * table_len(slots)
            && size(Section::KindOf) == 4 * slots
            && size(Section::Stats) == 8 * terms
            && size(Section::PostOffsets) == 8 * (terms + 1)
            && size(Section::TermOffsets) == 8 * (terms + 1)
            && size(Section::TermTable) == 4 * table_len(terms)
            && size(Section::Counts) == 4 * slots
            && size(Section::Forward) % 4 == 0
            && Some(size(Section::Lengths)) == fields.checked_mul(4 * slots);
        if !fits {
            return Err(corrupt("sections of another size than the head says"));
        }
        let view = View {
            paged,
            head,
            sections,
            slots,
            terms,
            fields,
            checked: (0..terms.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            failed: std::sync::OnceLock::new(),
        };
        Ok(view)
    }

    /// Notes `err`, met by a read that could not return it: `check` returns it
    /// from then on.
    pub(super) fn fail(&self, err: crate::error::Error) {
        let _ = self.failed.set(err.to_string());
    }

    /// An error if the file changed since it was opened, or a read of it failed.
    pub(super) fn check(&self) -> Result<()> {
        if let Some(why) = self.failed.get() {
            return Err(crate::error::Error::Corrupt(why.clone()));
        }
        match self.paged.shared().changed() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// The kind of the document in `slot`.
    pub(super) fn kind(&self, slot: u32) -> Result<u32> {
        self.u32_at(Section::KindOf, slot as usize)
    }

    fn corrupt(&self, why: &str) -> crate::error::Error {
        self.paged.corrupt(why)
    }

    /// Bytes `range` of `section` (checked).
    pub(super) fn section(&self, section: Section, range: Range<usize>) -> Result<&[u8]> {
        let whole = &self.sections[section as usize];
        let start = whole.start.checked_add(range.start);
        let end = whole.start.checked_add(range.end);
        match (start, end) {
            (Some(start), Some(end)) if start <= end && end <= whole.end => {
                self.paged.get(start..end)
            }
            _ => Err(self.corrupt("an offset past its section")),
        }
    }

    /// All of `section`.
    pub(super) fn whole(&self, section: Section) -> Result<&[u8]> {
        self.section(section, 0..self.sections[section as usize].len())
    }

    /// Where `section` is in the payload.
    pub(super) fn range(&self, section: Section) -> Range<usize> {
        self.sections[section as usize].clone()
    }

    fn u64_at(&self, section: Section, i: usize) -> Result<usize> {
        let bytes = self.section(section, i * 8..i * 8 + 8)?;
        let value = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        usize::try_from(value).map_err(|_| self.corrupt("an offset past its section"))
    }

    fn u32_at(&self, section: Section, i: usize) -> Result<u32> {
        let bytes = self.section(section, i * 4..i * 4 + 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    /// The range `[offsets[i], offsets[i + 1])` of a table of offsets.
    fn span(&self, offsets: Section, i: usize) -> Result<Range<usize>> {
        let (start, end) = (self.u64_at(offsets, i)?, self.u64_at(offsets, i + 1)?);
        if start > end {
            return Err(self.corrupt("offsets out of order"));
        }
        Ok(start..end)
    }

    /// The document in `slot` (below `slots`).
    pub(super) fn doc(&self, slot: u32) -> Result<DocIn<'_>> {
        let span = self.span(Section::DocOffsets, slot as usize)?;
        let record = self.section(Section::Docs, span)?;
        let mut at = 0;
        let mut text = || -> Option<&str> {
            let len = usize::try_from(read_varint64(record, &mut at)?).ok()?;
            let bytes = record.get(at..at.checked_add(len)?)?;
            at += len;
            std::str::from_utf8(bytes).ok()
        };
        let (Some(key), Some(group)) = (text(), text()) else {
            return Err(self.corrupt("a document's record is cut"));
        };
        let meta = &record[at..];
        if !super::Meta::well_formed(meta) {
            return Err(self.corrupt("a document's metadata is cut"));
        }
        Ok(DocIn { key, group, meta })
    }

    /// The id whose text `text_of` gives as `text`, looked up in `table`.
    fn find<'s>(
        &'s self,
        table: Section,
        count: usize,
        text: &str,
        text_of: impl Fn(u32) -> Result<&'s str>,
    ) -> Result<Option<u32>> {
        let len = table_len(count);
        let mut at = home(table_hash(text.as_bytes()), len);
        for _ in 0..len {
            let entry = self.u32_at(table, at)?;
            if entry == 0 {
                return Ok(None);
            }
            let id = entry - 1;
            if id as usize >= count {
                return Err(self.corrupt("a table entry of nothing"));
            }
            if text_of(id)? == text {
                return Ok(Some(id));
            }
            at = if at + 1 == len { 0 } else { at + 1 };
        }
        Ok(None)
    }

    pub(super) fn slot_of(&self, key: &str) -> Result<Option<u32>> {
        self.find(Section::KeyTable, self.slots, key, |slot| {
            Ok(self.doc(slot)?.key)
        })
    }

    pub(super) fn term(&self, id: u32) -> Result<&str> {
        let span = self.span(Section::TermOffsets, id as usize)?;
        std::str::from_utf8(self.section(Section::Terms, span)?)
            .map_err(|_| self.corrupt("a term that is not text"))
    }

    pub(super) fn term_id(&self, term: &str) -> Result<Option<u32>> {
        self.find(Section::TermTable, self.terms, term, |id| self.term(id))
    }

    /// Term `id`'s document frequency and number of postings.
    pub(super) fn stats(&self, id: u32) -> Result<(u32, u32)> {
        let bytes = self.section(Section::Stats, id as usize * 8..id as usize * 8 + 8)?;
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        Ok((word(0), word(4)))
    }

    /// Where term `id`'s postings and skip entries are in the payload.
    pub(super) fn list_ranges(&self, id: u32) -> Result<(Range<usize>, Range<usize>)> {
        let span = self.span(Section::PostOffsets, id as usize)?;
        let (_, len) = self.stats(id)?;
        let skips = skip_count(len as usize) * STORED_SKIP;
        if span.len() < skips {
            return Err(self.corrupt("a posting list shorter than its skip entries"));
        }
        let base = self.sections[Section::Postings as usize].start;
        if span.end > self.sections[Section::Postings as usize].len() {
            return Err(self.corrupt("an offset past its section"));
        }
        let split = span.end - skips;
        Ok((
            base + span.start..base + split,
            base + split..base + span.end,
        ))
    }

    /// Term `id`'s posting list, checked in full the first time.
    pub(super) fn list(&self, id: u32) -> Result<ListRef<'_>> {
        let (postings, skips) = self.list_ranges(id)?;
        let (df, len) = self.stats(id)?;
        let bytes = self.paged.get(postings)?;
        let skips = self.paged.get(skips)?;
        let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
        let checked = self
            .checked
            .get(word)
            .ok_or_else(|| self.corrupt("a term of no list"))?;
        if checked.load(Ordering::Relaxed) & bit == 0 {
            let limits = (self.slots, self.fields, MAX_FIELD_TOKENS as u32);
            check_stored(bytes, skips, (len as usize, df), limits)
                .map_err(|why| self.corrupt(&why))?;
            checked.fetch_or(bit, Ordering::Relaxed);
        }
        Ok(ListRef {
            bytes,
            skips: Skips::Stored(skips),
            len: len as usize,
        })
    }

    /// Each document's kind.
    pub(super) fn kind_of(&self) -> Result<U32s<'_>> {
        Ok(U32s::Stored(self.whole(Section::KindOf)?))
    }

    /// Each document's length in `field`.
    pub(super) fn lengths(&self, field: usize) -> Result<U32s<'_>> {
        let column = 4 * self.slots;
        Ok(U32s::Stored(self.section(
            Section::Lengths,
            field * column..(field + 1) * column,
        )?))
    }
}
