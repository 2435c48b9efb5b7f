//! A term's posting list, held in memory as the lexical file stores it: per
//! posting, two LEB128 varints, the slot's distance to the previous posting's slot
//! (to 0 for the first) and `tf << 5 | field`. About 3 bytes a posting where a
//! decoded one takes 8 (on the Linux kernel's index, 1.36 GB of postings). A
//! loaded list is not copied: once checked, it reads its bytes where the load
//! found them ([`Shared`]: the mapped file; on the Linux kernel, 340 MB in 3.8 M
//! lists that would otherwise be allocated, zeroed by the kernel and copied
//! into), and takes a copy of its own only when it grows.
//!
//! Every [`SKIP`]-th posting leaves a skip entry (the slot before it and where it
//! starts), so that a cursor looking up few documents in a long list jumps instead
//! of decoding all of it.

use std::ops::Range;
use std::sync::Arc;

use crate::mapped::Mapped;

/// Postings between skip entries; tiny in tests, so that their lists have some.
#[cfg(not(test))]
pub(super) const SKIP: usize = 128;
#[cfg(test)]
pub(super) const SKIP: usize = 4;
/// Bits of the stored value that hold the field (the term frequency above them).
const FIELD_BITS: u32 = 5;
const FIELD_MASK: u32 = (1 << FIELD_BITS) - 1;

/// One posting: a document's slot, a field of it and the term's frequency there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Posting {
    pub doc: u32,
    /// `tf << FIELD_BITS | field`, as stored.
    packed: u32,
}

impl Posting {
    /// `field` below 32, `tf` below 2^27 (the index's bounds are far lower).
    pub fn new(doc: u32, field: usize, tf: u32) -> Posting {
        debug_assert!(field <= FIELD_MASK as usize && tf < 1 << (32 - FIELD_BITS));
        Posting {
            doc,
            packed: tf << FIELD_BITS | field as u32,
        }
    }

    pub fn field(self) -> usize {
        (self.packed & FIELD_MASK) as usize
    }

    pub fn tf(self) -> u32 {
        self.packed >> FIELD_BITS
    }

    /// `tf << 5 | field`, as stored.
    pub fn packed(self) -> u32 {
        self.packed
    }
}

/// A skip entry: the slot of the posting before a multiple of [`SKIP`], and the
/// byte offset of that posting.
type Skip = (u32, usize);

/// Whether the posting after `count` others leaves a skip entry before it (as
/// `push` and `checked` both keep them; a count that saturates leaves none).
pub(super) fn leaves_skip(count: usize) -> bool {
    count > 0 && count < u32::MAX as usize && count.is_multiple_of(SKIP)
}

/// What loaded lists read their bytes from: a mapped store file, or the bytes of
/// an index deserialized from memory.
#[derive(Debug)]
pub(super) enum Backing {
    File(Mapped),
    Heap(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::File(mapped) => mapped,
            Backing::Heap(bytes) => bytes,
        }
    }
}

/// A range of a `Backing`, which lists share.
#[derive(Clone, Debug)]
pub(super) struct Shared {
    backing: Arc<Backing>,
    start: usize,
    end: usize,
}

impl Shared {
    /// The bytes `range` of `backing` (in range: a caller's slice of it).
    pub fn new(backing: Arc<Backing>, range: Range<usize>) -> Shared {
        assert!(range.start <= range.end && range.end <= backing.bytes().len());
        Shared {
            backing,
            start: range.start,
            end: range.end,
        }
    }

    /// Why these bytes can no longer be trusted, if they are a mapped file's
    /// (`Mapped::changed`); `None` for bytes on the heap.
    pub fn changed(&self) -> Option<crate::error::Error> {
        match &*self.backing {
            Backing::File(mapped) => mapped.changed(),
            Backing::Heap(_) => None,
        }
    }

    /// All of `bytes`.
    pub fn whole(backing: Backing) -> Shared {
        let end = backing.bytes().len();
        Shared::new(Arc::new(backing), 0..end)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.backing.bytes()[self.start..self.end]
    }

    /// Lets the pages of a mapped file outside these bytes go from the process's
    /// memory (see `Mapped::release`): an index read into memory reads its
    /// postings alone from its file.
    pub fn release_rest(&self) {
        if let Backing::File(mapped) = &*self.backing {
            mapped.release(0..self.start);
            mapped.release(self.end..mapped.len());
        }
    }

    /// Lets the pages of a mapped file wholly inside these bytes go from the
    /// process's memory (see `Mapped::release`): read once, they are not needed
    /// again soon, and a read maps them again.
    pub fn release(&self) {
        if let Backing::File(mapped) = &*self.backing {
            if self.start < self.end {
                mapped.release(self.start.max(1)..self.end);
            }
        }
    }

    /// Reads the pages of a mapped file in, in one call (`Mapped::populate`).
    pub fn populate(&self) {
        if let Backing::File(mapped) = &*self.backing {
            mapped.populate();
        }
    }

    /// The part `range` of these bytes.
    pub fn part(&self, range: Range<usize>) -> Shared {
        Shared::new(
            self.backing.clone(),
            self.start + range.start..self.start + range.end,
        )
    }
}

/// A list's encoded postings: its own, or shared where they were loaded from.
#[derive(Clone, Debug)]
enum Encoded {
    Own(Vec<u8>),
    Shared(Shared),
}

impl Default for Encoded {
    fn default() -> Self {
        Encoded::Own(Vec::new())
    }
}

impl Encoded {
    fn bytes(&self) -> &[u8] {
        match self {
            Encoded::Own(bytes) => bytes,
            Encoded::Shared(shared) => shared.bytes(),
        }
    }

    /// The bytes as the list's own, copied first if shared (with room for `more`).
    fn own(&mut self, more: usize) -> &mut Vec<u8> {
        if let Encoded::Shared(shared) = self {
            let bytes = shared.bytes();
            let mut copy = Vec::with_capacity(bytes.len() + more);
            copy.extend_from_slice(bytes);
            *self = Encoded::Own(copy);
        }
        match self {
            Encoded::Own(bytes) => bytes,
            Encoded::Shared(_) => unreachable!("copied above"),
        }
    }
}

impl PartialEq for Encoded {
    fn eq(&self, other: &Encoded) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Encoded {}

/// See the module documentation. Postings are in (slot, field) order; a list only
/// grows at its end (a new slot, or a later field of the last one), or is rebuilt.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(super) struct PostingList {
    bytes: Encoded,
    /// Postings held (saturating: only counted for statistics and heuristics).
    len: u32,
    /// The slot of the last posting (0 if none).
    last: u32,
    /// Boxed: most lists are shorter than [`SKIP`], and `None` takes 8 bytes
    /// where an empty `Vec` takes 24 (3.8 M lists on the Linux kernel).
    #[allow(clippy::box_collection)]
    skips: Option<Box<Vec<Skip>>>,
}

impl PostingList {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.encoded().is_empty()
    }

    /// The list as stored.
    pub fn encoded(&self) -> &[u8] {
        self.bytes.bytes()
    }

    /// Heap bytes: the encoded postings the list owns and the skip entries.
    pub fn heap_bytes(&self) -> usize {
        let own = match &self.bytes {
            Encoded::Own(bytes) => bytes.capacity(),
            Encoded::Shared(_) => 0,
        };
        own + self.skips.as_ref().map_or(0, |s| {
            std::mem::size_of::<Vec<Skip>>() + s.capacity() * std::mem::size_of::<Skip>()
        })
    }

    /// Bytes of postings read where the list was loaded from (not its own).
    pub fn shared_bytes(&self) -> usize {
        match &self.bytes {
            Encoded::Own(_) => 0,
            Encoded::Shared(shared) => shared.bytes().len(),
        }
    }

    /// Room for `bytes` more encoded bytes, exactly.
    pub fn reserve_exact(&mut self, bytes: usize) {
        self.bytes.own(0).reserve_exact(bytes);
    }

    pub fn shrink_to_fit(&mut self) {
        if let Encoded::Own(bytes) = &mut self.bytes {
            bytes.shrink_to_fit();
        }
        if let Some(skips) = &mut self.skips {
            skips.shrink_to_fit();
        }
    }

    /// Appends `posting`, which comes after the last one in (slot, field) order.
    pub fn push(&mut self, posting: Posting) {
        debug_assert!(
            self.is_empty() || posting.doc >= self.last,
            "postings in slot order"
        );
        let count = self.len as usize;
        let previous = if self.is_empty() { 0 } else { self.last };
        // A shared list's bytes are copied, with room for another posting.
        let bytes = self.bytes.own(10);
        if leaves_skip(count) {
            self.skips
                .get_or_insert_with(Box::default)
                .push((self.last, bytes.len()));
        }
        write_varint64(bytes, u64::from(posting.doc - previous));
        write_varint64(bytes, u64::from(posting.packed));
        self.last = posting.doc;
        self.len = self.len.saturating_add(1);
    }

    /// The list of `postings`, in order.
    pub fn of(postings: impl IntoIterator<Item = Posting>) -> PostingList {
        let mut list = PostingList::default();
        for posting in postings {
            list.push(posting);
        }
        list
    }

    /// The list of what `f` makes of each posting (`None`: dropped); `f` keeps
    /// them in (slot, field) order. Exact in size.
    pub fn mapped(&self, f: impl FnMut(Posting) -> Option<Posting>) -> PostingList {
        let mut list = PostingList::of(self.iter().filter_map(f));
        list.shrink_to_fit();
        list
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: self.encoded(),
            at: 0,
            doc: 0,
        }
    }

    /// The skip entries.
    pub fn skips(&self) -> &[Skip] {
        self.skips.as_deref().map_or(&[][..], Vec::as_slice)
    }

    /// The list to read.
    pub fn as_ref(&self) -> ListRef<'_> {
        ListRef {
            bytes: self.encoded(),
            skips: Skips::Held(self.skips()),
            len: self.len as usize,
        }
    }

    /// The stored list `range` of `stored` checked (in range, in (slot, field)
    /// order, a frequency of at least 1 and at most `max_tf`, not empty): `slots`
    /// documents and `fields` fields exist. It shares those bytes (they are
    /// neither copied nor re-encoded: a list that is checked is read as it is),
    /// with the number of documents it names. The reason if it is not such a
    /// list.
    pub fn checked(
        stored: &Shared,
        range: Range<usize>,
        slots: usize,
        fields: usize,
        max_tf: u32,
    ) -> std::result::Result<(PostingList, u32), String> {
        let bytes = &stored.bytes()[range.clone()];
        let (mut skips, (len, documents, last)) = check_bytes(bytes, (slots, fields, max_tf))?;
        skips.shrink_to_fit();
        let list = PostingList {
            bytes: Encoded::Shared(stored.part(range)),
            len: u32::try_from(len).unwrap_or(u32::MAX),
            last,
            skips: (!skips.is_empty()).then(|| Box::new(skips)),
        };
        Ok((list, documents))
    }
}

/// The skip entries of a list: held, or as a file stores them (per entry, the
/// slot as a u32 and the offset as a u64, LE).
#[derive(Clone, Copy)]
pub(super) enum Skips<'a> {
    Held(&'a [Skip]),
    Stored(&'a [u8]),
}

/// Bytes of a stored skip entry.
pub(super) const STORED_SKIP: usize = 12;

impl Skips<'_> {
    fn len(&self) -> usize {
        match self {
            Skips::Held(skips) => skips.len(),
            Skips::Stored(bytes) => bytes.len() / STORED_SKIP,
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Skip {
        match self {
            Skips::Held(skips) => skips[i],
            Skips::Stored(bytes) => {
                let entry = &bytes[i * STORED_SKIP..(i + 1) * STORED_SKIP];
                let slot = u32::from_le_bytes(entry[..4].try_into().expect("4 bytes"));
                let at = u64::from_le_bytes(entry[4..].try_into().expect("8 bytes"));
                (slot, at as usize)
            }
        }
    }

    /// The number of entries whose slot is below `doc` (they are in order).
    fn below(&self, doc: u32) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = (low + high) / 2;
            if self.get(mid).0 < doc {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }
}

/// A list to read: its postings' bytes (well formed: made, or checked) and
/// its skip entries.
#[derive(Clone, Copy)]
pub(super) struct ListRef<'a> {
    pub bytes: &'a [u8],
    pub skips: Skips<'a>,
    /// Postings (saturating).
    pub len: usize,
}

impl<'a> ListRef<'a> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn iter(&self) -> Iter<'a> {
        Iter {
            bytes: self.bytes,
            at: 0,
            doc: 0,
        }
    }

    /// A cursor at the first posting.
    pub fn cursor(&self) -> Cursor<'a> {
        let mut cursor = Cursor {
            iter: self.iter(),
            skips: self.skips,
            head: None,
            read: 0,
        };
        cursor.advance();
        cursor
    }
}

/// Checks stored postings `bytes` with their stored skip entries `skips`: as
/// `PostingList::checked` does, and the skip entries, number of postings `len`
/// and of documents `documents` are those the postings make.
pub(super) fn check_stored(
    bytes: &[u8],
    skips: &[u8],
    (len, documents): (usize, u32),
    (slots, fields, max_tf): (usize, usize, u32),
) -> std::result::Result<(), String> {
    let (list, (found_len, found_docs, _)) = check_bytes(bytes, (slots, fields, max_tf))?;
    let found = (found_len, found_docs);
    let held: Vec<u8> = list
        .iter()
        .flat_map(|&(slot, at)| {
            let mut entry = slot.to_le_bytes().to_vec();
            entry.extend_from_slice(&(at as u64).to_le_bytes());
            entry
        })
        .collect();
    if found != (len, documents) || held != skips {
        return Err("a posting list that disagrees with its counts".into());
    }
    Ok(())
}

/// The postings of a list, in order.
pub(super) struct Iter<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The slot of the posting read last (0 before the first).
    doc: u32,
}

impl Iterator for Iter<'_> {
    type Item = Posting;

    #[inline]
    fn next(&mut self) -> Option<Posting> {
        if self.at == self.bytes.len() {
            return None;
        }
        self.doc += next_varint(self.bytes, &mut self.at);
        let packed = next_varint(self.bytes, &mut self.at);
        Some(Posting {
            doc: self.doc,
            packed,
        })
    }
}

/// A position in a list that moves forward, by skip entries where it can.
pub(super) struct Cursor<'a> {
    iter: Iter<'a>,
    skips: Skips<'a>,
    /// The posting at the position; `None` at the end.
    head: Option<Posting>,
    /// Postings read, the head included.
    read: usize,
}

impl Cursor<'_> {
    pub fn head(&self) -> Option<Posting> {
        self.head
    }

    pub fn advance(&mut self) {
        self.head = self.iter.next();
        self.read += 1;
    }

    /// Moves to the first posting of `doc` or a later slot (never back).
    pub fn seek(&mut self, doc: u32) {
        if self.head.is_none_or(|head| head.doc >= doc) {
            return;
        }
        // The last entry whose postings before are all of earlier slots, if it is
        // ahead of the head.
        let ahead = self.skips.below(doc);
        if ahead > 0 && ahead * SKIP >= self.read {
            let (before, at) = self.skips.get(ahead - 1);
            self.iter.at = at;
            self.iter.doc = before;
            self.read = ahead * SKIP;
            self.advance();
        }
        while self.head.is_some_and(|head| head.doc < doc) {
            self.advance();
        }
    }
}

/// The skip entries, number of postings and number of documents of the
/// stored postings `bytes`, checked as `PostingList::checked` says.
#[allow(clippy::type_complexity)]
fn check_bytes(
    bytes: &[u8],
    (slots, fields, max_tf): (usize, usize, u32),
) -> std::result::Result<(Vec<Skip>, (usize, u32, u32)), String> {
    let mut len = 0usize;
    let mut documents = 0u32;
    let mut last = 0u32;
    let mut skips: Vec<Skip> = Vec::new();
    let mut last_field = 0;
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let (Some(delta), Some(packed)) =
            (read_varint(bytes, &mut at), read_varint(bytes, &mut at))
        else {
            return Err("a cut posting".into());
        };
        let previous = (len > 0).then_some(last);
        let doc = previous.map_or(Some(delta), |last| last.checked_add(delta));
        let doc = doc
            .filter(|&doc| (doc as usize) < slots)
            .ok_or("a posting of no document")?;
        let posting = Posting { doc, packed };
        if posting.field() >= fields || posting.tf() == 0 || posting.tf() > max_tf {
            return Err("a posting of no field".into());
        }
        // The same document: its fields in increasing order.
        if previous == Some(doc) {
            if last_field >= posting.field() {
                return Err("postings out of order".into());
            }
        } else {
            documents += 1;
        }
        last_field = posting.field();
        if leaves_skip(len) {
            skips.push((last, start));
        }
        last = doc;
        len += 1;
    }
    if len == 0 {
        return Err("a term that has no postings".into());
    }
    Ok((skips, (len, documents, last)))
}

/// A LEB128 varint (of at most 10 bytes), `None` if cut.
pub(super) fn read_varint64(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7F).checked_shl(shift)?;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

pub(super) fn write_varint64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A varint of a list this module made or checked.
#[inline]
pub(super) fn next_varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut value = 0u32;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u32::from(byte & 0x7F) << shift;
        if byte < 0x80 || shift >= 28 {
            return value;
        }
        shift += 7;
    }
}

/// A varint of untrusted bytes, `None` if cut or above `u32::MAX` (at most 5
/// bytes). Most of a list's are one byte (a load checks 320 M on the Linux
/// kernel): those are read here, inline.
#[inline]
pub(super) fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let start = *at;
    if let Some(&byte) = bytes.get(start).filter(|&&byte| byte < 0x80) {
        *at = start + 1;
        return Some(u32::from(byte));
    }
    let value = read_varint64(bytes, at)?;
    (*at - start <= 5).then_some(())?;
    u32::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Postings in (slot, field) order from gaps: (slot gap, fields of the slot).
    fn postings() -> impl Strategy<Value = Vec<Posting>> {
        prop::collection::vec(
            (
                prop::sample::select(vec![0u32, 1, 2, 5, 127, 128, 300, 20_000, 3_000_000]),
                prop::collection::btree_set(0..32usize, 1..4),
                1..200_000u32,
            ),
            0..60,
        )
        .prop_map(|slots| {
            let mut doc = 0u32;
            let mut out = Vec::new();
            for (i, (gap, fields, tf)) in slots.into_iter().enumerate() {
                doc += if i == 0 { gap } else { gap.max(1) };
                for field in fields {
                    out.push(Posting::new(doc, field, tf % (1 << 27)));
                }
            }
            out
        })
    }

    proptest! {
        #[test]
        fn lists_give_back_what_was_pushed(postings in postings()) {
            let list = PostingList::of(postings.iter().copied());
            prop_assert_eq!(list.iter().collect::<Vec<_>>(), postings.clone());
            prop_assert_eq!(list.len(), postings.len());
            // Checked from its bytes, it is the same list, sharing them; pushed
            // to, it copies them and grows as the list it was made from.
            if !postings.is_empty() {
                let (mut copy, documents) = checked(list.encoded(), usize::MAX, 32, u32::MAX).unwrap();
                let mut docs: Vec<u32> = postings.iter().map(|p| p.doc).collect();
                docs.dedup();
                prop_assert_eq!(documents as usize, docs.len());
                prop_assert_eq!(copy.iter().collect::<Vec<_>>(), postings.clone());
                prop_assert_eq!(&copy, &list);
                prop_assert_eq!(copy.shared_bytes(), list.encoded().len());
                let last = postings.last().unwrap().doc;
                let mut grown = list.clone();
                for doc in [last + 1, last + 300] {
                    grown.push(Posting::new(doc, 2, 3));
                    copy.push(Posting::new(doc, 2, 3));
                }
                prop_assert_eq!(copy.shared_bytes(), 0);
                prop_assert_eq!(&copy, &grown);
                prop_assert_eq!(&copy.skips, &grown.skips);
            }
        }

        #[test]
        fn seeks_find_the_first_posting_not_before(
            postings in postings(),
            targets in prop::collection::vec(0..3_100_000u32, 0..20),
        ) {
            let list = PostingList::of(postings.iter().copied());
            let mut targets = targets;
            targets.sort_unstable();
            let mut cursor = list.as_ref().cursor();
            for target in targets {
                cursor.seek(target);
                let expected = postings.iter().find(|p| p.doc >= target).copied();
                prop_assert_eq!(cursor.head(), expected, "target {}", target);
            }
        }
    }

    /// `bytes` checked as a whole stored list.
    fn checked(
        bytes: &[u8],
        slots: usize,
        fields: usize,
        max_tf: u32,
    ) -> std::result::Result<(PostingList, u32), String> {
        let stored = Shared::whole(Backing::Heap(bytes.to_vec()));
        PostingList::checked(&stored, 0..bytes.len(), slots, fields, max_tf)
    }

    #[test]
    fn a_list_is_its_varints() {
        let list = PostingList::of([
            Posting::new(3, 1, 2),
            Posting::new(3, 4, 1),
            Posting::new(300, 0, 5),
        ]);
        assert_eq!(
            list.encoded(),
            [3, 2 << 5 | 1, 0, 1 << 5 | 4, 0xA9, 0x02, 0xA0, 0x01]
        );
        assert_eq!(list.len(), 3);
        let skipping = PostingList::of((0..9).map(|doc| Posting::new(doc * 10, 0, 1)));
        assert_eq!(skipping.skips.as_deref(), Some(&vec![(30, 8), (70, 16)]));
    }

    #[test]
    fn bad_lists_are_refused() {
        let cases: &[(&[u8], &str)] = &[
            (&[], "a term that has no postings"),
            (&[3], "a cut posting"),
            (&[3, 0x80], "a cut posting"),
            (&[9, 1 << 5], "a posting of no document"),
            (&[3, 1 << 5 | 7], "a posting of no field"),
            (&[3, 0], "a posting of no field"),
            (&[3, 1 << 5 | 1, 0, 1 << 5 | 1], "postings out of order"),
            (&[3, 1 << 5 | 2, 0, 1 << 5 | 1], "postings out of order"),
            (&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 1 << 5], "a cut posting"),
            (
                &[3, 1 << 5, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1 << 5],
                "a posting of no document",
            ),
        ];
        for (bytes, why) in cases {
            assert_eq!(checked(bytes, 5, 4, 100).unwrap_err(), *why, "{bytes:?}");
        }
        assert_eq!(
            // tf 101 > 100
            checked(&[3, 0xA0, 0x19], 5, 4, 100).unwrap_err(),
            "a posting of no field"
        );
    }
}
