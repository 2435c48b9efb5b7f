//! Changes to an index in place: upserting one document, removing documents,
//! reserving room, and compaction (see the module documentation).

use std::sync::Arc;

use foldhash::HashMap;
use rayon::prelude::*;

use super::build::Counted;
use super::{
    Document, Forward, LexicalIndex, Meta, Room, Slot, COMPACT_MIN_DEAD, DEAD, MAX_FIELDS,
};
use crate::error::{invalid, Result};
use crate::retrieve::postings::{Posting, PostingList};

/// Appends `slot` to `group`'s members in `groups` (the name is shared, not
/// copied); returns its position there.
pub(super) fn add_to_group(
    groups: &mut HashMap<Arc<str>, Vec<u32>>,
    group: &Arc<str>,
    slot: u32,
) -> u32 {
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

/// Old id -> new id (or `DEAD`) for a compaction.
pub(super) struct Remap {
    pub(super) slot: Vec<u32>,
    pub(super) field: Vec<u32>,
    pub(super) term: Vec<u32>,
    pub(super) kind: Vec<u32>,
    /// Every slot and field keeps its id: a kept posting list is stored as held.
    same_postings: bool,
}

impl Remap {
    pub(super) fn keeps_postings(&self) -> bool {
        self.same_postings
    }
}

/// Old id -> rank among those kept (`DEAD` for the others).
pub(super) fn ranks(keep: impl Iterator<Item = bool>) -> Vec<u32> {
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
    /// Indexes `doc`, replacing the document with the same key if there is one. An
    /// invalid-input error (and no change) if a field name appears twice in `doc` or
    /// if its new field names would make more than [`MAX_FIELDS`].
    pub fn upsert(&mut self, doc: Document) -> Result<()> {
        let counted = Counted::of(&doc.fields, self.stem);
        self.add_counted(doc, counted)
    }

    /// The id of `kind`, added if new.
    pub(super) fn kind_id_or_new(&mut self, kind: &str) -> u32 {
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
    /// (a larger table is all touched) nor the posting lists (most share pages
    /// with the file, and room there would be touched memory).
    pub fn reserve(&mut self, additional: usize) {
        if self.frozen.is_some() {
            return;
        }
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
        if self.forward.unheld.is_none() {
            self.forward.own.reserve_exact(room.forward);
        }
        self.terms.reserve(room.terms, room.term_bytes);
        self.postings.reserve_exact(room.terms);
        self.df.reserve_exact(room.terms);
    }

    pub(super) fn add_counted(&mut self, doc: Document, counted: Counted) -> Result<()> {
        let Some((doc, counted)) = self.overlay_upsert(doc, counted)? else {
            return Ok(());
        };
        self.thaw()?;
        self.make_room(&doc)?;
        self.insert(doc, counted);
        self.maybe_compact();
        Ok(())
    }

    /// Checks `doc`'s field names, registers the new ones and removes the document
    /// its key replaces: all `upsert` does before indexing the text.
    fn make_room(&mut self, doc: &Document) -> Result<()> {
        super::overlay::duplicate_field(doc)?;
        let mut names: Vec<&str> = doc.fields.iter().map(|(name, _)| &**name).collect();
        names.sort_unstable();
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
        if let Some(removed) = self.overlay_remove(key) {
            return removed;
        }
        if !self.thawed() {
            return false;
        }
        let Some(slot) = self.by_key.get(&self.docs, key) else {
            return false;
        };
        self.remove_slot(slot);
        self.maybe_compact();
        true
    }

    /// Removes every document of `group`, returning how many there were.
    pub fn remove_group(&mut self, group: &str) -> usize {
        if let Some(removed) = self.overlay_remove_group(group) {
            return removed;
        }
        if !self.thawed() {
            return 0;
        }
        let Some(members) = self.groups.remove(group) else {
            return 0;
        };
        for &slot in &members {
            self.tombstone(slot);
        }
        self.maybe_compact();
        members.len()
    }

    /// Drops the postings of removed documents and renumbers slots, terms, fields
    /// and kinds to what is in use. Runs by itself when a quarter of the slots are
    /// dead; never changes what `search` returns.
    pub fn compact(&mut self) {
        if self.frozen.is_some() {
            // Saved compacted.
            return;
        }
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
        self.hold_forward();
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
        let mut previous = None;
        for &(term, field, tf) in &occurrences {
            if previous != Some(term) {
                previous = Some(term);
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
    pub(super) fn shared_group_arc(&self, group: &Arc<str>) -> Arc<str> {
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
    pub(super) fn remove_slot(&mut self, slot: u32) {
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
        self.hold_forward();
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

    /// `thaw`, for a change that cannot return its error: false if the file
    /// could not be read (`check_source` says why from then on).
    fn thawed(&mut self) -> bool {
        match self.thaw() {
            Ok(()) => true,
            Err(err) => {
                if let Some(view) = &self.frozen {
                    view.fail(err);
                }
                false
            }
        }
    }

    fn maybe_compact(&mut self) {
        let dead = self.docs.len() - self.live;
        if dead >= COMPACT_MIN_DEAD && dead * 4 >= self.docs.len() {
            self.compact();
        }
    }

    pub(super) fn remap(&self) -> Remap {
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
}
