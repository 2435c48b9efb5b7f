//! id -> item lookup for the context window, built for bulk removal.
//!
//! Entries are (hash of id, sequence number) pairs in two sorted runs: `main`, and
//! `recent` for entries added since the last merge (kept at most about sqrt(main)
//! long, so an insert moves little memory). A prune removes thousands of items at
//! once: marking their sequence numbers in a bitmap and filtering once is a
//! sequential pass, where deleting each from a hash table is a cache miss per item.
//! Equal hashes (collisions) are simply adjacent entries; the caller checks the id.

use std::hash::BuildHasher;

pub(super) fn hash_id(id: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_0002).hash_one(id)
}

#[derive(Debug, Clone, Default)]
pub(super) struct IdIndex {
    main: Vec<(u64, u64)>,
    recent: Vec<(u64, u64)>,
}

fn with_hash(run: &[(u64, u64)], hash: u64) -> &[(u64, u64)] {
    let start = run.partition_point(|e| e.0 < hash);
    let len = run[start..].partition_point(|e| e.0 == hash);
    &run[start..start + len]
}

/// `v.retain(keep)` without a branch per entry: a prune removes about a third of the
/// entries in no order, which a branch mispredicts.
fn retain_branch_free(v: &mut Vec<(u64, u64)>, keep: impl Fn(&(u64, u64)) -> bool) {
    let mut kept = 0;
    for i in 0..v.len() {
        let entry = v[i];
        v[kept] = entry;
        kept += usize::from(keep(&entry));
    }
    v.truncate(kept);
}

impl IdIndex {
    /// Sequence numbers of the entries whose id has this hash.
    pub fn candidates(&self, hash: u64) -> impl Iterator<Item = u64> + '_ {
        with_hash(&self.main, hash)
            .iter()
            .chain(with_hash(&self.recent, hash))
            .map(|e| e.1)
    }

    pub fn insert(&mut self, hash: u64, seq: u64) {
        let at = self.recent.partition_point(|e| *e < (hash, seq));
        self.recent.insert(at, (hash, seq));
        if self.recent.len() > 64 && self.recent.len().pow(2) > self.main.len() {
            self.merge();
        }
    }

    /// Removes the entries with these sequence numbers (ascending): a bitmap over
    /// their range, then one filtering pass; no sorting, no per-entry hashing.
    pub fn remove_seqs(&mut self, seqs: &[u64]) {
        let (Some(&first), Some(&last)) = (seqs.first(), seqs.last()) else {
            return;
        };
        let mut doomed = vec![0u64; ((last - first) / 64 + 1) as usize];
        for &s in seqs {
            doomed[((s - first) / 64) as usize] |= 1 << ((s - first) % 64);
        }
        let keep = |e: &(u64, u64)| {
            !(first..=last).contains(&e.1)
                || doomed[((e.1 - first) / 64) as usize] & (1 << ((e.1 - first) % 64)) == 0
        };
        retain_branch_free(&mut self.main, keep);
        retain_branch_free(&mut self.recent, keep);
    }

    /// `main` := main ∪ recent, both sorted: one sequential pass.
    fn merge(&mut self) {
        let mut out = Vec::with_capacity(self.main.len() + self.recent.len());
        let (mut a, mut b) = (self.main.iter().peekable(), self.recent.iter().peekable());
        while let Some(entry) = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), None) => a.next(),
            _ => b.next(),
        } {
            out.push(*entry);
        }
        self.main = out;
        self.recent.clear();
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.main.len() + self.recent.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_lookups_and_bulk_removal_agree_with_a_model() {
        let mut index = IdIndex::default();
        let mut model = std::collections::BTreeSet::new();
        let mut next = crate::testing::test_rng(0x9e37_79b9_7f4a_7c15u64);
        for seq in 0..5_000u64 {
            let hash = next(700); // many collisions on purpose
            index.insert(hash, seq);
            model.insert((hash, seq));
            if seq % 500 == 499 {
                let doomed: Vec<_> = model.iter().copied().filter(|_| next(3) == 0).collect();
                for e in &doomed {
                    model.remove(e);
                }
                let mut seqs: Vec<u64> = doomed.iter().map(|e| e.1).collect();
                seqs.sort();
                index.remove_seqs(&seqs);
            }
        }
        assert_eq!(index.len(), model.len());
        for hash in 0..700 {
            let mut got: Vec<_> = index.candidates(hash).collect();
            got.sort();
            let want: Vec<_> = model.range((hash, 0)..(hash + 1, 0)).map(|e| e.1).collect();
            assert_eq!(got, want);
        }
    }
}
