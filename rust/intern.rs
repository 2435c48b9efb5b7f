//! Strings interned: each once, with an id in the order they came. The texts sit
//! back to back in one buffer and a hash table of ids finds them, so a string costs
//! its bytes, 8 for where it ends and about 5 of table, where an `Arc<str>` in a
//! vector and again as a map key cost 16 + 16 + 20 bytes and an allocation. The
//! graph's names and the lexical index's terms (1.5 M and 3.8 M strings on the
//! Linux kernel) are interned so.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

/// See the module documentation.
#[derive(Clone, Default)]
pub struct Interner {
    text: String,
    /// Where each string ends in `text`; it starts where the one before ends.
    ends: Vec<usize>,
    /// Ids, hashed by their string.
    table: HashTable<u32>,
}

/// A fixed seed: the table's layout is the same in every run (it is never
/// iterated, but a reproducible process is easier to measure).
pub(crate) fn hash(text: &str) -> u64 {
    FixedState::default().hash_one(text)
}

/// The string `id` in `text` ending at `ends` (a free function, so that the table
/// can rehash while borrowed apart from the buffer).
fn slice<'a>(text: &'a str, ends: &[usize], id: u32) -> &'a str {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &text[start..ends[id]]
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|(_, s)| s)).finish()
    }
}

impl PartialEq for Interner {
    fn eq(&self, other: &Interner) -> bool {
        self.text == other.text && self.ends == other.ends
    }
}

impl Interner {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The string of `id` (an id this interner gave).
    pub fn get(&self, id: u32) -> &str {
        slice(&self.text, &self.ends, id)
    }

    /// The id of `name`, if it was interned.
    pub fn id(&self, name: &str) -> Option<u32> {
        let (text, ends) = (&self.text, &self.ends);
        self.table
            .find(hash(name), |&id| slice(text, ends, id) == name)
            .copied()
    }

    /// The id of `name`, interned if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        self.entry(name).0
    }

    /// Interns `name` as a new id; `None` (and nothing changes) if it was already.
    pub fn insert_new(&mut self, name: &str) -> Option<u32> {
        match self.entry(name) {
            (id, true) => Some(id),
            (_, false) => None,
        }
    }

    /// The id of `name`, and whether it is new (added now): one hash and one
    /// probe of the table (the Linux kernel's load interns 3.8 M terms).
    fn entry(&mut self, name: &str) -> (u32, bool) {
        let (text, ends) = (&self.text, &self.ends);
        let entry = self.table.entry(
            hash(name),
            |&id| slice(text, ends, id) == name,
            |&id| hash(slice(text, ends, id)),
        );
        match entry {
            Entry::Occupied(found) => (*found.get(), false),
            Entry::Vacant(vacant) => {
                let id = u32::try_from(self.ends.len())
                    .ok()
                    .filter(|&id| id < u32::MAX)
                    .expect("fewer than 4 billion strings");
                self.text.push_str(name);
                self.ends.push(self.text.len());
                vacant.insert(id);
                (id, true)
            }
        }
    }

    /// The ids and strings, in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, &str)> + '_ {
        (0..self.ends.len() as u32).map(|id| (id, self.get(id)))
    }

    /// Room for `names` more strings of `bytes` bytes in all, but for the table
    /// (a larger table is all touched at once).
    pub fn reserve(&mut self, names: usize, bytes: usize) {
        self.text.reserve_exact(bytes);
        self.ends.reserve_exact(names);
    }

    /// Strings it holds without growing the list of ends.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.ends.capacity()
    }

    /// Bytes of all its strings.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    /// An empty interner with room for `names` strings of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Interner {
        Interner {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(names),
            table: HashTable::with_capacity(names),
        }
    }

    /// Its strings back to back, and where each ends: what `from_parts` takes.
    pub fn parts(&self) -> (&str, &[usize]) {
        (&self.text, &self.ends)
    }

    /// The interner whose strings are `text` cut at `ends` (as `parts` gives
    /// them), ids in that order; `None` if the ends do not cut `text` into
    /// strings (one past its end, decreasing, inside a character) or a string
    /// comes twice.
    pub fn from_parts(text: String, ends: Vec<usize>) -> Option<Interner> {
        let mut start = 0;
        for &end in &ends {
            if end < start || !text.is_char_boundary(end) {
                return None;
            }
            start = end;
        }
        if start != text.len() || u32::try_from(ends.len()).map_or(true, |n| n == u32::MAX) {
            return None;
        }
        let mut table = HashTable::with_capacity(ends.len());
        for id in 0..ends.len() as u32 {
            let name = slice(&text, &ends, id);
            let entry = table.entry(
                hash(name),
                |&other| slice(&text, &ends, other) == name,
                |&other| hash(slice(&text, &ends, other)),
            );
            match entry {
                Entry::Occupied(_) => return None,
                Entry::Vacant(vacant) => {
                    vacant.insert(id);
                }
            }
        }
        Some(Interner { text, ends, table })
    }

    /// The interner of the strings whose id `keep` holds, in order: a kept id
    /// becomes its rank among the kept ones.
    pub fn retained(&self, keep: impl Fn(u32) -> bool) -> Interner {
        let kept: Vec<&str> = self
            .iter()
            .filter(|&(id, _)| keep(id))
            .map(|(_, s)| s)
            .collect();
        let mut out = Interner::with_capacity(kept.len(), kept.iter().map(|s| s.len()).sum());
        for name in kept {
            out.intern(name);
        }
        out
    }

    /// Heap bytes: the buffer, the ends and the table (a byte of control each).
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.table.capacity() * (std::mem::size_of::<u32>() + 1)
    }

    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
        let (text, ends) = (&self.text, &self.ends);
        self.table.shrink_to_fit(|&id| hash(slice(text, ends, id)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn ids_in_order_each_string_once(names in prop::collection::vec("[a-c]{0,3}|\\PC{0,4}", 0..60)) {
            let mut interner = Interner::default();
            let mut firsts: Vec<&str> = Vec::new();
            for name in &names {
                let id = interner.intern(name);
                match firsts.iter().position(|f| f == name) {
                    Some(at) => prop_assert_eq!(id as usize, at),
                    None => {
                        prop_assert_eq!(id as usize, firsts.len());
                        firsts.push(name);
                    }
                }
            }
            prop_assert_eq!(interner.len(), firsts.len());
            for (id, name) in interner.iter() {
                prop_assert_eq!(name, firsts[id as usize]);
                prop_assert_eq!(interner.id(name), Some(id));
                prop_assert_eq!(interner.clone().insert_new(name), None);
            }
            prop_assert_eq!(interner.id("not one of them: too long"), None);
            // Every other one kept: renumbered by rank.
            let kept = interner.retained(|id| id % 2 == 0);
            let expected: Vec<&str> = firsts.iter().step_by(2).copied().collect();
            prop_assert_eq!(kept.iter().map(|(_, s)| s).collect::<Vec<_>>(), expected.clone());
            for (rank, name) in expected.iter().enumerate() {
                prop_assert_eq!(kept.id(name), Some(rank as u32));
            }
        }
    }

    #[test]
    fn made_from_its_parts() {
        let mut interner = Interner::default();
        for name in ["a", "", "bc", "é"] {
            interner.intern(name);
        }
        let (text, ends) = interner.parts();
        let again = Interner::from_parts(text.to_string(), ends.to_vec()).unwrap();
        assert_eq!(again, interner);
        assert_eq!(again.id("bc"), Some(2));
        assert_eq!(again.id("é"), Some(3));
        let none = |text: &str, ends: &[usize]| Interner::from_parts(text.into(), ends.to_vec());
        assert_eq!(none("abc", &[1, 3]).map(|i| i.len()), Some(2));
        assert!(none("abc", &[2, 1, 3]).is_none(), "decreasing");
        assert!(none("abc", &[1, 4]).is_none(), "past the end");
        assert!(none("abc", &[1]).is_none(), "text left over");
        assert!(none("é", &[1, 2]).is_none(), "inside a character");
        assert!(none("aba", &[1, 2, 3]).is_none(), "a string twice");
        assert!(none("a", &[0, 0, 1]).is_none(), "the empty string twice");
    }

    #[test]
    fn the_empty_string_is_a_string() {
        let mut interner = Interner::default();
        assert_eq!(interner.id(""), None);
        assert_eq!(interner.intern("a"), 0);
        assert_eq!(interner.intern(""), 1);
        assert_eq!(interner.insert_new(""), None);
        assert_eq!(interner.insert_new("b"), Some(2));
        assert_eq!(
            (interner.get(0), interner.get(1), interner.get(2)),
            ("a", "", "b")
        );
        interner.shrink_to_fit();
        assert_eq!(interner.id("b"), Some(2));
    }
}
