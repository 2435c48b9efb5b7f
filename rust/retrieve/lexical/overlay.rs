//! Changes to an index searched in place, without reading it into memory: the
//! mapped file (the *base*) stays as it is; the documents upserted since the
//! load go into a small index in memory (the *delta*), and the base documents
//! they replace or that are removed are marked dead (a bit per base slot).
//!
//! Statistics stay exact: a dead base document's terms (the file's forward
//! section), field lengths and the document itself are counted out (per term
//! in `dead_df`, per field in `dead_total` and `dead_docs`), the delta's are
//! counted in, and the index's `live`, `fields`, `field_total` and `field_docs`
//! are those of base and delta together. A search scores the base (skipping
//! dead slots) and the delta apart with these statistics and merges their best
//! (see `search`): a document's score depends on the statistics and its own
//! postings only, so it is what the same index read into memory and changed
//! the same way gives, bit for bit.
//!
//! The changes are kept in order (`log`, documents tokenized): reading the
//! index into memory (`thaw`) reads the base and replays them, which gives
//! exactly the index a thaw before the first change would have. That happens
//! when the overlay grows past [`Overlay::full`] and when a change needs more
//! field names than the index may hold. A save writes the merged index
//! streamed from the base and the delta (`encode_overlay`): it reads the whole
//! base, every block checked, but holds none of it.

use foldhash::HashMap;
use rayon::prelude::*;

use super::build::Counted;
use super::inplace::{build_table, put_list, skip_count, table_hash, Head, Out, Section, View};
use super::persistence::{read_u32s, stored_size};
use super::update::ranks;
use super::{Document, LexicalIndex, DEAD, MAX_FIELDS};
use crate::error::{invalid, Result};
use crate::retrieve::postings::{read_varint64, write_varint64, Posting, STORED_SKIP};

/// A change, as `thaw` replays it.
#[derive(Clone)]
pub(super) enum Change {
    /// The document with its field texts left out (its tokens are in `Counted`).
    Upsert(Box<(Document, Counted)>),
    Remove(Box<str>),
    RemoveGroup(Box<str>),
}

/// Base documents counted in `Overlay::forward_at`'s steps.
const FORWARD_STEP: usize = 1024;
/// Changes an overlay holds at least before it is read into memory.
const MIN_CHANGES: usize = 4096;
/// Bytes of tokens an overlay holds at most (its log's).
const MAX_LOG_BYTES: usize = 256 << 20;

/// See the module documentation.
#[derive(Clone, Default)]
pub(super) struct Overlay {
    /// The documents added since the load.
    pub(super) delta: LexicalIndex,
    /// A bit per base slot: replaced or removed.
    dead: Vec<u64>,
    dead_count: usize,
    /// Per base term: how many dead base documents have it.
    dead_df: HashMap<u32, u32>,
    /// Per base field: the dead documents' total length in it, and how many
    /// have it.
    dead_total: Vec<u64>,
    dead_docs: Vec<u32>,
    /// Base field -> field of the index; delta field -> field of the index.
    pub(super) base_fields: Vec<usize>,
    pub(super) delta_fields: Vec<usize>,
    log: Vec<Change>,
    log_bytes: usize,
    /// Where the forward terms of every `FORWARD_STEP`-th base document start,
    /// read once the first removal needs it.
    forward_at: Option<Vec<u64>>,
    /// The base documents by group: (hash of the group, first slot, end slot)
    /// for each run of slots of one group, sorted; read at the first removal of a
    /// group.
    groups: Option<Vec<(u64, u32, u32)>>,
}

/// What marking a base document dead takes out: read before anything changes.
pub(super) struct Kill {
    slot: u32,
    terms: Vec<u32>,
    lengths: Vec<u32>,
}

impl Overlay {
    fn new(view: &View, stem: bool) -> Overlay {
        let fields = view.head.fields.len();
        Overlay {
            delta: LexicalIndex::with_stemming(stem),
            dead: vec![0; view.slots.div_ceil(64)],
            dead_total: vec![0; fields],
            dead_docs: vec![0; fields],
            base_fields: (0..fields).collect(),
            ..Overlay::default()
        }
    }

    /// Approximate heap bytes: the delta's parts, the log's tokens, the dead
    /// slots and terms, the steps and runs read from the file.
    pub(super) fn heap_bytes(&self) -> usize {
        let delta: usize = self.delta.heap_parts().iter().map(|(_, n)| n).sum();
        let steps = self.forward_at.as_ref().map_or(0, |s| s.capacity() * 8);
        let runs = self.groups.as_ref().map_or(0, |r| r.capacity() * 16);
        delta
            + self.log_bytes
            + self.dead.capacity() * 8
            + self.dead_df.capacity() * 8
            + steps
            + runs
    }

    /// Whether base slot `slot` is dead.
    #[inline]
    pub(super) fn is_dead(&self, slot: u32) -> bool {
        self.dead
            .get(slot as usize / 64)
            .is_some_and(|word| word & (1 << (slot % 64)) != 0)
    }

    /// How many dead base documents have base term `term`.
    pub(super) fn dead_df(&self, term: u32) -> u32 {
        self.dead_df.get(&term).copied().unwrap_or(0)
    }

    /// Whether the overlay is as large as it may grow for a base of `slots`
    /// documents: its next change reads the index into memory.
    pub(super) fn full(&self, slots: usize) -> bool {
        self.log.len() >= (slots / 8).max(MIN_CHANGES) || self.log_bytes >= MAX_LOG_BYTES
    }

    /// The changes, in order.
    pub(super) fn log(&self) -> &[Change] {
        &self.log
    }

    fn note(&mut self, change: Change) {
        self.log_bytes += match &change {
            Change::Upsert(upsert) => upsert.1.heap_bytes() + upsert.0.key.len(),
            Change::Remove(key) | Change::RemoveGroup(key) => key.len(),
        };
        self.log.push(change);
    }

    /// The live base slot of `key`.
    fn live_slot(&self, view: &View, key: &str) -> Result<Option<u32>> {
        Ok(view.slot_of(key)?.filter(|&slot| !self.is_dead(slot)))
    }

    /// What marking base slot `slot` dead takes out of the statistics.
    fn kill(&mut self, view: &View, slot: u32) -> Result<Kill> {
        let terms = self.forward(view, slot)?;
        let lengths = (0..view.head.fields.len())
            .map(|field| Ok(view.lengths(field)?.get(slot as usize)))
            .collect::<Result<Vec<u32>>>()?;
        Ok(Kill {
            slot,
            terms,
            lengths,
        })
    }

    /// Marks a base slot dead (`kill` read what it takes out).
    fn apply(&mut self, kill: Kill) {
        let (word, bit) = (kill.slot as usize / 64, 1u64 << (kill.slot % 64));
        let Some(bits) = self.dead.get_mut(word) else {
            return;
        };
        if *bits & bit != 0 {
            return;
        }
        *bits |= bit;
        self.dead_count += 1;
        for term in kill.terms {
            *self.dead_df.entry(term).or_insert(0) += 1;
        }
        for (field, len) in kill.lengths.into_iter().enumerate() {
            if len > 0 {
                self.dead_total[field] += u64::from(len);
                self.dead_docs[field] += 1;
            }
        }
    }

    /// The distinct terms of base document `slot` (the forward section).
    fn forward(&mut self, view: &View, slot: u32) -> Result<Vec<u32>> {
        let counts = view.whole(Section::Counts)?;
        let count = |slot: usize| {
            counts
                .get(slot * 4..slot * 4 + 4)
                .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        };
        let steps = match &self.forward_at {
            Some(steps) => steps,
            None => {
                let mut steps = Vec::with_capacity(view.slots / FORWARD_STEP + 1);
                let mut at = 0u64;
                for (i, count) in read_u32s(counts).enumerate() {
                    if i % FORWARD_STEP == 0 {
                        steps.push(at);
                    }
                    at += u64::from(count);
                }
                view.paged
                    .shared()
                    .part(view.range(Section::Counts))
                    .release();
                self.forward_at.insert(steps)
            }
        };
        let s = slot as usize;
        let base = steps.get(s / FORWARD_STEP).copied().unwrap_or(0);
        let before: u64 = (s - s % FORWARD_STEP..s).map(|i| u64::from(count(i))).sum();
        let start = usize::try_from(base + before).ok();
        let range = start.and_then(|start| {
            let end = start.checked_add(count(s) as usize)?;
            Some(start.checked_mul(4)?..end.checked_mul(4)?)
        });
        let range = range.ok_or_else(|| view.paged.corrupt("a document's terms out of place"))?;
        let terms: Vec<u32> = read_u32s(view.section(Section::Forward, range)?).collect();
        if terms.iter().any(|&term| term as usize >= view.terms)
            || !terms.windows(2).all(|w| w[0] < w[1])
        {
            return Err(view
                .paged
                .corrupt("a document's terms out of order or unknown"));
        }
        Ok(terms)
    }

    /// The live base slots of `group`.
    fn group_slots(&mut self, view: &View, group: &str) -> Result<Vec<u32>> {
        if self.groups.is_none() {
            self.groups = Some(group_runs(view)?);
        }
        let runs = self.groups.as_deref().unwrap_or_default();
        let hashed = table_hash(group.as_bytes());
        let first = runs.partition_point(|&(h, _, _)| h < hashed);
        let mut slots = Vec::new();
        for &(_, start, end) in runs[first..].iter().take_while(|&&(h, _, _)| h == hashed) {
            for slot in start..end {
                if !self.is_dead(slot) && view.doc(slot)?.group == group {
                    slots.push(slot);
                }
            }
        }
        Ok(slots)
    }
}

/// The runs of base slots of one group (see `Overlay::groups`), read side by
/// side in parts.
fn group_runs(view: &View) -> Result<Vec<(u64, u32, u32)>> {
    const PART: usize = 1 << 16;
    let parts: Vec<Vec<(u64, u32, u32)>> = (0..view.slots.div_ceil(PART))
        .into_par_iter()
        .map(|part| {
            let mut runs: Vec<(u64, u32, u32)> = Vec::new();
            let slots = part * PART..((part + 1) * PART).min(view.slots);
            for slot in slots {
                let slot = slot as u32;
                let hashed = table_hash(view.doc(slot)?.group.as_bytes());
                match runs.last_mut() {
                    Some(run) if run.0 == hashed && run.2 == slot => run.2 += 1,
                    _ => runs.push((hashed, slot, slot + 1)),
                }
            }
            Ok(runs)
        })
        .collect::<Result<_>>()?;
    // Read once: the pages go from the process's memory (they stay cached).
    for section in [Section::DocOffsets, Section::Docs] {
        view.paged.shared().part(view.range(section)).release();
    }
    let mut runs: Vec<(u64, u32, u32)> = parts.into_iter().flatten().collect();
    runs.par_sort_unstable();
    runs.shrink_to_fit();
    Ok(runs)
}

/// The sorted union of two sorted lists of names, and where each of either
/// list's names is in it.
fn union(base: &[String], delta: &[String]) -> (Vec<String>, Vec<usize>, Vec<usize>) {
    let mut all: Vec<String> = base.iter().chain(delta).cloned().collect();
    all.sort_unstable();
    all.dedup();
    let at = |names: &[String]| -> Vec<usize> {
        names
            .iter()
            .map(|name| all.binary_search(name).unwrap_or(0))
            .collect()
    };
    let (base, delta) = (at(base), at(delta));
    (all, base, delta)
}

/// The duplicate field name of `doc`, as an invalid-input error.
pub(super) fn duplicate_field(doc: &Document) -> Result<()> {
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
    Ok(())
}

impl LexicalIndex {
    /// Whether the index is searched in place with changes over it (see
    /// `overlay`).
    pub fn has_overlay(&self) -> bool {
        self.overlay.is_some()
    }

    /// The overlay of an index searched in place, made at its first change.
    fn overlay_mut(&mut self) -> Option<(&View, &mut Overlay)> {
        let view = self.frozen.as_deref()?;
        let stem = self.stem;
        let overlay = self
            .overlay
            .get_or_insert_with(|| Box::new(Overlay::new(view, stem)));
        Some((view, overlay))
    }

    /// Whether a change to this index in place goes to its overlay (rather than
    /// reading the index into memory first).
    fn overlay_takes_changes(&self) -> bool {
        let Some(view) = &self.frozen else {
            return false;
        };
        self.overlay.as_ref().is_none_or(|o| !o.full(view.slots))
    }

    /// The fields, their statistics and the number of documents of base and
    /// delta together, after a change to the overlay.
    fn refresh(&mut self) {
        let (Some(view), Some(overlay)) = (&self.frozen, &mut self.overlay) else {
            return;
        };
        let head = &view.head;
        let delta = &overlay.delta;
        let (fields, base_fields, delta_fields) = union(&head.fields, &delta.fields);
        let mut total = vec![0u64; fields.len()];
        let mut docs = vec![0u32; fields.len()];
        for (f, &to) in base_fields.iter().enumerate() {
            let stored = |values: &[u64], i: usize| values.get(i).copied().unwrap_or(0);
            total[to] += stored(&head.field_total, f).saturating_sub(overlay.dead_total[f]);
            let stored = head.field_docs.get(f).copied().unwrap_or(0);
            docs[to] += stored.saturating_sub(overlay.dead_docs[f]);
        }
        for (f, &to) in delta_fields.iter().enumerate() {
            total[to] += delta.field_total[f];
            docs[to] += delta.field_docs[f];
        }
        self.fields = fields;
        self.field_total = total;
        self.field_docs = docs;
        overlay.base_fields = base_fields;
        overlay.delta_fields = delta_fields;
        self.live = view.slots.saturating_sub(overlay.dead_count) + delta.live;
    }

    /// `upsert` into the overlay: `Ok(None)` if done, `Ok(Some(..))` (the
    /// document back) if the index must be read into memory for it.
    pub(super) fn overlay_upsert(
        &mut self,
        doc: Document,
        counted: Counted,
    ) -> Result<Option<(Document, Counted)>> {
        if !self.overlay_takes_changes() {
            return Ok(Some((doc, counted)));
        }
        duplicate_field(&doc)?;
        let new = doc
            .fields
            .iter()
            .filter(|(name, _)| self.field_id(name).is_none())
            .count();
        if self.fields.len() + new > MAX_FIELDS {
            // Read into memory, where a compaction may make room (or the
            // error says why not).
            return Ok(Some((doc, counted)));
        }
        let Some((view, overlay)) = self.overlay_mut() else {
            return Ok(Some((doc, counted)));
        };
        let kill = match overlay.live_slot(view, &doc.key) {
            Ok(Some(slot)) => overlay.kill(view, slot).map(Some),
            Ok(None) => Ok(None),
            Err(err) => Err(err),
        };
        // A damaged file: noted for `check_source`, as a search notes it.
        let kill = kill.map_err(|err| {
            let why = err.to_string();
            view.fail(err);
            crate::error::Error::Corrupt(why)
        })?;
        let mut logged = doc.clone();
        for (_, text) in &mut logged.fields {
            *text = String::new();
        }
        overlay.delta.add_counted(doc, counted.clone())?;
        if let Some(kill) = kill {
            overlay.apply(kill);
        }
        overlay.note(Change::Upsert(Box::new((logged, counted))));
        self.refresh();
        Ok(None)
    }

    /// `remove` in the overlay: `None` if the index must be read into memory
    /// for it; the error of a damaged file noted (`check_source`).
    pub(super) fn overlay_remove(&mut self, key: &str) -> Option<bool> {
        if !self.overlay_takes_changes() {
            return None;
        }
        let (view, overlay) = self.overlay_mut()?;
        let removed = (|| -> Result<bool> {
            if overlay.delta.contains(key) {
                overlay.delta.remove(key);
            } else {
                let Some(slot) = overlay.live_slot(view, key)? else {
                    return Ok(false);
                };
                let kill = overlay.kill(view, slot)?;
                overlay.apply(kill);
            }
            overlay.note(Change::Remove(key.into()));
            Ok(true)
        })();
        self.refresh();
        Some(self.noted(removed).unwrap_or(false))
    }

    /// `remove_group` in the overlay: `None` if the index must be read into
    /// memory for it; the error of a damaged file noted (`check_source`).
    pub(super) fn overlay_remove_group(&mut self, group: &str) -> Option<usize> {
        if !self.overlay_takes_changes() {
            return None;
        }
        let (view, overlay) = self.overlay_mut()?;
        let removed = (|| -> Result<usize> {
            let slots = overlay.group_slots(view, group)?;
            let kills = slots
                .iter()
                .map(|&slot| overlay.kill(view, slot))
                .collect::<Result<Vec<Kill>>>()?;
            let removed = kills.len() + overlay.delta.remove_group(group);
            for kill in kills {
                overlay.apply(kill);
            }
            if removed > 0 {
                overlay.note(Change::RemoveGroup(group.into()));
            }
            Ok(removed)
        })();
        self.refresh();
        Some(self.noted(removed).unwrap_or(0))
    }

    /// `result`'s value; its error noted for `check_source`.
    fn noted<T>(&self, result: Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(err) => {
                if let Some(view) = &self.frozen {
                    view.fail(err);
                }
                None
            }
        }
    }

    /// The document frequency of `term` over the live documents (for tests and
    /// the statistics' checks).
    pub fn df_of(&self, term: &str) -> u32 {
        let Some(view) = &self.frozen else {
            return self.terms.id(term).map_or(0, |id| self.df[id as usize]);
        };
        let base = view.term_id(term).ok().flatten().map_or(0, |id| {
            let df = view.stats(id).map_or(0, |(df, _)| df);
            let dead = self.overlay.as_ref().map_or(0, |o| o.dead_df(id));
            df.saturating_sub(dead)
        });
        base + self.overlay.as_ref().map_or(0, |o| o.delta.df_of(term))
    }

    /// Per field with documents: its name, total length and number of
    /// documents (for tests and the statistics' checks).
    pub fn field_stats(&self) -> Vec<(&str, u64, u32)> {
        (self
            .fields
            .iter()
            .zip(&self.field_total)
            .zip(&self.field_docs))
        .filter(|&(_, &docs)| docs > 0)
        .map(|((name, &total), &docs)| (name.as_str(), total, docs))
        .collect()
    }
}

/// The first error met by a part of a save that cannot return it.
#[derive(Default)]
struct Failed(std::sync::Mutex<Option<crate::error::Error>>);

impl Failed {
    fn note(&self, err: crate::error::Error) {
        let mut failed = self.0.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert(err);
    }

    fn take(self) -> Result<()> {
        match self.0.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}

impl LexicalIndex {
    /// What `encode_into` writes for an index searched in place with an
    /// overlay: the merged index, streamed from the file and the delta as they
    /// are (nothing read into memory but per-term and per-slot maps): the file's
    /// live documents in their order, then the delta's; the file's terms that
    /// live documents have, in their order, then the delta's others; the fields
    /// and kinds in use. Byte for byte what reading it into memory and
    /// replaying the changes writes, unless the delta compacted itself and
    /// then met again a term or kind it had dropped (numbered after the others
    /// then, as a compaction of the other would).
    pub(super) fn encode_overlay(
        &self,
        view: &View,
        overlay: &Overlay,
        sink: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let delta = &overlay.delta;
        let remap = delta.remap();
        let failed = Failed::default();
        // Slots: the file's live ones first, then the delta's.
        let mut dead_before = Vec::with_capacity(overlay.dead.len());
        let mut count = 0u32;
        for word in &overlay.dead {
            dead_before.push(count);
            count += word.count_ones();
        }
        let base_slot = |slot: u32| -> u32 {
            let (w, bit) = (slot as usize / 64, slot % 64);
            let word = overlay.dead.get(w).copied().unwrap_or(0);
            let below = dead_before.get(w).copied().unwrap_or(0);
            slot - below - (word & ((1u64 << bit) - 1)).count_ones()
        };
        let base_live = view.slots - overlay.dead_count;
        let live_base = || (0..view.slots as u32).filter(|&s| !overlay.is_dead(s));
        let live_delta =
            || (delta.docs.iter().enumerate()).filter_map(|(s, d)| Some((s, d.as_ref()?)));
        // Fields: those in use, by name.
        let field = ranks(self.field_docs.iter().map(|&docs| docs > 0));
        let kept = |map: &[usize]| -> Vec<u32> {
            map.iter()
                .map(|&f| field.get(f).copied().unwrap_or(DEAD))
                .collect()
        };
        let (base_field, delta_field) = (kept(&overlay.base_fields), kept(&overlay.delta_fields));
        // Kinds: the file's, then the delta's others, those in use.
        let base_kinds = view.kind_of()?;
        let mut names: Vec<&str> = self.kinds.iter().map(String::as_str).collect();
        let delta_kind: Vec<usize> = (delta.kinds.iter())
            .map(|kind| match names.iter().position(|n| n == kind) {
                Some(at) => at,
                None => {
                    names.push(kind);
                    names.len() - 1
                }
            })
            .collect();
        let mut used = vec![false; names.len()];
        for slot in live_base() {
            if let Some(u) = used.get_mut(base_kinds.get(slot as usize) as usize) {
                *u = true;
            }
        }
        for (s, _) in live_delta() {
            used[delta_kind[delta.kind_of[s] as usize]] = true;
        }
        let kind = ranks(used.iter().copied());
        // Terms: the file's that live documents have, then the delta's others.
        let mut in_base: HashMap<u32, u32> = HashMap::default();
        let mut only_delta = Vec::new();
        for (d, text) in delta.terms.iter() {
            if delta.df[d as usize] == 0 {
                continue;
            }
            match view.term_id(text)? {
                Some(b) => {
                    in_base.insert(b, d);
                }
                None => only_delta.push(d),
            }
        }
        let base_df: Vec<u32> = (0..view.terms as u32)
            .into_par_iter()
            .map(|b| {
                let df = view.stats(b).map_or_else(
                    |err| {
                        failed.note(err);
                        0
                    },
                    |(df, _)| df,
                );
                let added = in_base.get(&b).map_or(0, |&d| delta.df[d as usize]);
                df.saturating_sub(overlay.dead_df(b)) + added
            })
            .collect();
        let term = ranks(base_df.iter().map(|&df| df > 0));
        let base_terms: Vec<u32> = (0..view.terms as u32)
            .filter(|&b| term[b as usize] != DEAD)
            .collect();
        let mut delta_term = vec![DEAD; delta.terms.len()];
        for (&b, &d) in &in_base {
            delta_term[d as usize] = term[b as usize];
        }
        for (i, &d) in only_delta.iter().enumerate() {
            delta_term[d as usize] = (base_terms.len() + i) as u32;
        }
        let terms = base_terms.len() + only_delta.len();
        failed.take()?;

        let failed = Failed::default();
        let mut out = Out::new(sink);
        // The file's live documents' records copied as they are (their blocks
        // checked), then the delta's.
        let offsets = view.whole(Section::DocOffsets)?;
        let records = view.whole(Section::Docs)?;
        let record = |slot: u32| -> Result<&[u8]> {
            entries(offsets, records, slot as usize, slot as usize + 1)
                .ok_or_else(|| view.paged.corrupt("a document's record out of place"))
        };
        let key_hash = |slot: u32| -> Result<u64> {
            let bytes = record(slot)?;
            let mut at = 0;
            let key = read_varint64(bytes, &mut at)
                .and_then(|len| usize::try_from(len).ok())
                .and_then(|len| bytes.get(at..at.checked_add(len)?))
                .ok_or_else(|| view.paged.corrupt("a document's record is cut"))?;
            Ok(table_hash(key))
        };
        let live_slots: Vec<u32> = live_base().collect();
        let mut hashes: Vec<u64> = live_slots
            .par_iter()
            .map(|&slot| key_hash(slot))
            .collect::<Result<_>>()?;
        let delta_record = |data: &super::Slot| -> Vec<u8> {
            let mut bytes = Vec::new();
            for text in [&*data.key, &*data.group] {
                write_varint64(&mut bytes, text.len() as u64);
                bytes.extend_from_slice(text.as_bytes());
            }
            bytes.extend_from_slice(&data.meta.0);
            bytes
        };
        out.begin(Section::DocOffsets)?;
        let mut at = 0u64;
        for &slot in &live_slots {
            out.u64(at)?;
            at += record(slot)?.len() as u64;
        }
        for (_, data) in live_delta() {
            out.u64(at)?;
            at += delta_record(data).len() as u64;
        }
        out.u64(at)?;
        out.end();
        out.begin(Section::Docs)?;
        let mut i = 0;
        while i < live_slots.len() {
            // A run of consecutive slots: one copy.
            let first = live_slots[i];
            let mut last = first;
            while i + 1 < live_slots.len() && live_slots[i + 1] == last + 1 {
                i += 1;
                last += 1;
            }
            i += 1;
            let run = entries(offsets, records, first as usize, last as usize + 1);
            out.bytes(run.ok_or_else(|| view.paged.corrupt("a document's record out of place"))?)?;
        }
        for (_, data) in live_delta() {
            out.bytes(&delta_record(data))?;
        }
        out.end();
        hashes.extend(live_delta().map(|(_, data)| table_hash(data.key.as_bytes())));
        let table = build_table(hashes.len(), hashes.into_iter());
        out.u32s(Section::KeyTable, table.into_iter())?;
        let kinds_of = live_slots
            .iter()
            .map(|&slot| {
                let k = base_kinds.get(slot as usize) as usize;
                kind.get(k).copied().unwrap_or(DEAD)
            })
            .chain(live_delta().map(|(s, _)| kind[delta_kind[delta.kind_of[s] as usize]]));
        out.u32s(Section::KindOf, kinds_of)?;
        drop(live_slots);
        // Each merged term's postings: the file's list less the dead, then the
        // delta's, renumbered.
        let postings = |t: usize| -> Box<dyn Iterator<Item = Posting> + '_> {
            let (b, d) = match base_terms.get(t) {
                Some(&b) => (Some(b), in_base.get(&b).copied()),
                None => (None, only_delta.get(t - base_terms.len()).copied()),
            };
            let base = b.and_then(|b| match view.list(b) {
                Ok(list) => Some(list.iter()),
                Err(err) => {
                    failed.note(err);
                    None
                }
            });
            let base = base.into_iter().flatten().filter_map(|p| {
                let field = base_field.get(p.field()).copied().unwrap_or(DEAD);
                (!overlay.is_dead(p.doc) && field != DEAD)
                    .then(|| Posting::new(base_slot(p.doc), field as usize, p.tf()))
            });
            let added = d.map(|d| delta.postings[d as usize].iter());
            let added = added.into_iter().flatten().filter_map(|p| {
                let slot = remap.slot[p.doc as usize];
                let field = delta_field.get(p.field()).copied().unwrap_or(DEAD);
                (slot != DEAD && field != DEAD)
                    .then(|| Posting::new(base_live as u32 + slot, field as usize, p.tf()))
            });
            Box::new(base.chain(added))
        };
        out.postings(
            terms,
            |t| {
                let (bytes, len) = stored_size(postings(t));
                let df = match base_terms.get(t) {
                    Some(&b) => base_df[b as usize],
                    None => delta.df[only_delta[t - base_terms.len()] as usize],
                };
                let skips = (skip_count(len) * STORED_SKIP) as u64;
                (bytes + skips, len as u32, df)
            },
            |t, out| put_list(out, postings(t)),
        )?;
        // The file's terms kept, their bytes copied as they are, then the
        // delta's others.
        let term_offsets = view.whole(Section::TermOffsets)?;
        let term_bytes = view.whole(Section::Terms)?;
        let text = |b: u32| -> Result<&[u8]> {
            entries(term_offsets, term_bytes, b as usize, b as usize + 1)
                .ok_or_else(|| view.paged.corrupt("a term out of place"))
        };
        let mut hashes: Vec<u64> = base_terms
            .par_iter()
            .map(|&b| Ok(table_hash(text(b)?)))
            .collect::<Result<_>>()?;
        out.begin(Section::Terms)?;
        let mut i = 0;
        while i < base_terms.len() {
            let first = base_terms[i];
            let mut last = first;
            while i + 1 < base_terms.len() && base_terms[i + 1] == last + 1 {
                i += 1;
                last += 1;
            }
            i += 1;
            let run = entries(term_offsets, term_bytes, first as usize, last as usize + 1);
            out.bytes(run.ok_or_else(|| view.paged.corrupt("a term out of place"))?)?;
        }
        for &d in &only_delta {
            out.bytes(delta.terms.get(d).as_bytes())?;
        }
        out.end();
        out.begin(Section::TermOffsets)?;
        let mut at = 0u64;
        for &b in &base_terms {
            out.u64(at)?;
            at += text(b)?.len() as u64;
        }
        for &d in &only_delta {
            out.u64(at)?;
            at += delta.terms.get(d).len() as u64;
        }
        out.u64(at)?;
        out.end();
        hashes.extend(
            only_delta
                .iter()
                .map(|&d| table_hash(delta.terms.get(d).as_bytes())),
        );
        let table = build_table(terms, hashes.into_iter());
        out.u32s(Section::TermTable, table.into_iter())?;
        // Each live document's terms and field lengths.
        let counts = view.whole(Section::Counts)?;
        let forward = view.whole(Section::Forward)?;
        let count = |slot: usize| -> usize {
            counts.get(slot * 4..slot * 4 + 4).map_or(0, |b| {
                u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize
            })
        };
        out.u32s(
            Section::Counts,
            live_base()
                .map(|s| count(s as usize) as u32)
                .chain(live_delta().map(|(_, data)| data.terms.len() as u32)),
        )?;
        let mut at = 0usize;
        let mut next = 0usize;
        let base_forward = live_base().flat_map(|s| {
            // The terms of the documents before, dead ones included.
            while next < s as usize {
                at += count(next);
                next += 1;
            }
            let end = at + count(s as usize);
            let terms = forward.get(at * 4..end * 4).unwrap_or_else(|| {
                failed.note(view.paged.corrupt("a document's terms out of place"));
                &[]
            });
            read_u32s(terms).map(|b| term.get(b as usize).copied().unwrap_or(DEAD))
        });
        let delta_forward = live_delta().flat_map(|(_, data)| {
            let mut own: Vec<u32> = (delta.forward.get(data.terms.clone()))
                .map(|d| delta_term[d as usize])
                .collect();
            own.sort_unstable();
            own
        });
        out.u32s(Section::Forward, base_forward.chain(delta_forward))?;
        let mut lengths: Vec<(Option<usize>, Option<usize>)> =
            vec![(None, None); self.fields.len()];
        for (f, &to) in overlay.base_fields.iter().enumerate() {
            lengths[to].0 = Some(f);
        }
        for (f, &to) in overlay.delta_fields.iter().enumerate() {
            lengths[to].1 = Some(f);
        }
        let columns: Vec<(Option<super::inplace::U32s<'_>>, Option<&Vec<u32>>)> = (lengths.iter())
            .zip(&field)
            .filter(|&(_, &to)| to != DEAD)
            .map(|(&(b, d), _)| {
                let base = b.map(|b| view.lengths(b)).transpose()?;
                Ok((base, d.map(|d| &delta.field_len[d])))
            })
            .collect::<Result<_>>()?;
        let lengths = columns.iter().flat_map(|&(base, added)| {
            let base = live_base().map(move |s| base.map_or(0, |c| c.get(s as usize)));
            let added = live_delta().map(move |(s, _)| added.map_or(0, |c| c[s]));
            base.chain(added)
        });
        out.u32s(Section::Lengths, lengths)?;
        let pick = |names: &[&'_ str], map: &[u32]| -> Vec<String> {
            (names.iter().zip(map))
                .filter(|&(_, &id)| id != DEAD)
                .map(|(name, _)| name.to_string())
                .collect()
        };
        let fields: Vec<&str> = self.fields.iter().map(String::as_str).collect();
        let (fields, kinds) = (pick(&fields, &field), pick(&names, &kind));
        failed.take()?;
        out.finish(&Head {
            stem: self.stem,
            fields: fields.iter().map(String::as_str).collect(),
            kinds: kinds.iter().map(String::as_str).collect(),
            field_total: (self.field_total.iter().zip(&self.field_docs))
                .filter(|&(_, &docs)| docs > 0)
                .map(|(&total, _)| total)
                .collect(),
            field_docs: self.field_docs.iter().copied().filter(|&d| d > 0).collect(),
            slots: self.live as u64,
            terms: terms as u64,
        })
    }
}

/// Entries `from..to` of a section (`bytes`) laid out by a table of offsets
/// (`offsets`, u64 each): `bytes[offsets[from]..offsets[to]]`; None when an offset is
/// missing, past the section or out of order.
fn entries<'a>(offsets: &[u8], bytes: &'a [u8], from: usize, to: usize) -> Option<&'a [u8]> {
    let at = |i: usize| -> Option<usize> {
        let raw = offsets.get(i.checked_mul(8)?..i.checked_mul(8)?.checked_add(8)?)?;
        usize::try_from(u64::from_le_bytes(raw.try_into().ok()?)).ok()
    };
    bytes.get(at(from)?..at(to)?)
}
