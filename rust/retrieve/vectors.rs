//! Dense vectors searched by brute force: one contiguous row-major `f32` matrix,
//! rows L2-normalized on insert so that cosine similarity is a dot product. At
//! 100K x 384 a full scan reads 150 MB, a few milliseconds on all cores, which is
//! both exact and simpler than an approximate index at this size.

use std::path::Path;

use foldhash::HashMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::persist;
use crate::error::{invalid, Result};

/// The version of the file [`VectorIndex::save`] writes.
pub const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"AIRVECTS";
const WHAT: &str = "vector index";
/// The largest dimension accepted.
pub const MAX_DIM: usize = 1 << 16;
/// Above this many rows, `search` scores rows on all cores.
const PARALLEL_ROWS: usize = 20_000;
/// Rows per parallel task.
const ROWS_PER_TASK: usize = 4096;

/// See the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorIndex {
    dim: usize,
    keys: Vec<String>,
    /// Row-major, `keys.len() * dim` values; row `i` is the vector of `keys[i]`.
    data: Vec<f32>,
    position: HashMap<String, usize>,
}

impl VectorIndex {
    /// An empty index of vectors of `dim` values (1 to [`MAX_DIM`]).
    pub fn new(dim: usize) -> Result<VectorIndex> {
        if dim == 0 || dim > MAX_DIM {
            return Err(invalid(
                "dim",
                format!("must be between 1 and {MAX_DIM}, got {dim}"),
            ));
        }
        Ok(VectorIndex {
            dim,
            keys: Vec::new(),
            data: Vec::new(),
            position: HashMap::default(),
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.position.contains_key(key)
    }

    /// The keys, in row order (which removals change).
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The stored (normalized) vector of `key`.
    pub fn get(&self, key: &str) -> Option<&[f32]> {
        let &row = self.position.get(key)?;
        Some(self.row(row))
    }

    /// Stores `vector`, normalized, under `key` (replacing what it had). An
    /// invalid-input error for a vector of the wrong dimension, with a value that is
    /// not finite, or all zeros.
    pub fn upsert(&mut self, key: &str, vector: &[f32]) -> Result<()> {
        let normalized = self.normalized("vector", vector)?;
        match self.position.get(key) {
            Some(&row) => {
                let dim = self.dim;
                self.data[row * dim..(row + 1) * dim].copy_from_slice(&normalized);
            }
            None => {
                self.position.insert(key.to_owned(), self.keys.len());
                self.keys.push(key.to_owned());
                self.data.extend_from_slice(&normalized);
            }
        }
        Ok(())
    }

    /// Removes `key`'s vector (the last row moves into its place); false if absent.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(row) = self.position.remove(key) else {
            return false;
        };
        let last = self.keys.len() - 1;
        let dim = self.dim;
        if row != last {
            self.data
                .copy_within(last * dim..(last + 1) * dim, row * dim);
            self.keys.swap_remove(row);
            *self
                .position
                .get_mut(&self.keys[row])
                .expect("a stored key") = row;
        } else {
            self.keys.pop();
        }
        self.data.truncate(last * dim);
        true
    }

    /// Removes the vectors of `keys` that are stored; returns how many.
    pub fn remove_keys(&mut self, keys: &[&str]) -> usize {
        keys.iter().filter(|key| self.remove(key)).count()
    }

    /// Removes every vector whose key satisfies `remove`, in one pass that keeps
    /// the other rows in order; returns how many.
    pub fn remove_where(&mut self, mut remove: impl FnMut(&str) -> bool) -> usize {
        // Asked first, so that a panicking predicate leaves the index as it was.
        let doomed: Vec<bool> = self.keys.iter().map(|key| remove(key)).collect();
        let dim = self.dim;
        let keys = std::mem::take(&mut self.keys);
        let total = keys.len();
        for (row, (key, doomed)) in keys.into_iter().zip(doomed).enumerate() {
            if doomed {
                self.position.remove(&key);
                continue;
            }
            let kept = self.keys.len();
            if kept != row {
                self.data
                    .copy_within(row * dim..(row + 1) * dim, kept * dim);
                *self.position.get_mut(&key).expect("a stored key") = kept;
            }
            self.keys.push(key);
        }
        self.data.truncate(self.keys.len() * dim);
        total - self.keys.len()
    }

    /// The `limit` stored vectors most similar to `query` (cosine), best first,
    /// equal scores by key, among those whose key passes `filter` if given. An
    /// invalid-input error for a query as `upsert` would refuse it.
    pub fn search(
        &self,
        query: &[f32],
        limit: usize,
        filter: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Vec<(String, f32)>> {
        let query = self.normalized("query", query)?;
        if limit == 0 || self.keys.is_empty() {
            return Ok(Vec::new());
        }
        let dim = self.dim;
        let mut scores = vec![0.0f32; self.keys.len()];
        if self.keys.len() > PARALLEL_ROWS {
            scores
                .par_chunks_mut(ROWS_PER_TASK)
                .zip(self.data.par_chunks(ROWS_PER_TASK * dim))
                .for_each(|(scores, rows)| score_rows(&query, rows, scores));
        } else {
            score_rows(&query, &self.data, &mut scores);
        }
        let mut hits: Vec<(f32, usize)> = match filter {
            Some(keep) => scores
                .iter()
                .enumerate()
                .filter(|&(row, _)| keep(&self.keys[row]))
                .map(|(row, &score)| (score, row))
                .collect(),
            None => scores
                .iter()
                .enumerate()
                .map(|(row, &score)| (score, row))
                .collect(),
        };
        let order = |a: &(f32, usize), b: &(f32, usize)| {
            b.0.total_cmp(&a.0)
                .then_with(|| self.keys[a.1].cmp(&self.keys[b.1]))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        Ok(hits
            .into_iter()
            .map(|(score, row)| (self.keys[row].clone(), score))
            .collect())
    }

    /// Saves the index to `path` with `generation`, an opaque number
    /// [`VectorIndex::load`] returns.
    pub fn save(&self, path: &Path, generation: u64) -> Result<()> {
        let head = postcard::to_stdvec(&(self.dim as u64, &self.keys))
            .map_err(crate::error::Error::Encode)?;
        let mut payload = Vec::with_capacity(8 + head.len() + self.data.len() * 4);
        payload.extend_from_slice(&(head.len() as u64).to_le_bytes());
        payload.extend_from_slice(&head);
        for value in &self.data {
            payload.extend_from_slice(&value.to_le_bytes());
        }
        persist::write(path, MAGIC, FORMAT_VERSION, generation, &payload)
    }

    /// Loads an index saved by [`VectorIndex::save`], with its generation. A file
    /// that is damaged or not such an index is `Error::Corrupt` ("rebuild it").
    pub fn load(path: &Path) -> Result<(VectorIndex, u64)> {
        let (payload, generation) = persist::read(path, MAGIC, FORMAT_VERSION, WHAT)?;
        let corrupt = |why: &str| persist::corrupt(path, WHAT, why);
        let (head, values) =
            persist::split_section(&payload).ok_or_else(|| corrupt("truncated"))?;
        let (dim, keys): (u64, Vec<String>) =
            postcard::from_bytes(head).map_err(|e| corrupt(&e.to_string()))?;
        if values.len() % 4 != 0 {
            return Err(corrupt("truncated"));
        }
        let data = values
            .chunks_exact(4)
            .map(|v| f32::from_le_bytes(v.try_into().expect("4 bytes")))
            .collect();
        let stored = Stored {
            dim: usize::try_from(dim).unwrap_or(usize::MAX),
            keys,
            data,
        };
        let index = VectorIndex::from_stored(stored).map_err(|why| corrupt(&why))?;
        Ok((index, generation))
    }

    fn row(&self, row: usize) -> &[f32] {
        &self.data[row * self.dim..(row + 1) * self.dim]
    }

    /// `vector` scaled to length 1, or an invalid-input error naming `field`.
    fn normalized(&self, field: &'static str, vector: &[f32]) -> Result<Vec<f32>> {
        if vector.len() != self.dim {
            return Err(invalid(
                field,
                format!("has {} values, the index holds {}", vector.len(), self.dim),
            ));
        }
        if let Some(at) = vector.iter().position(|v| !v.is_finite()) {
            return Err(invalid(
                field,
                format!("value {at} is {}, not a finite number", vector[at]),
            ));
        }
        // In f64: squares of large f32 values overflow f32.
        let norm = vector
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            return Err(invalid(field, "is all zeros: it has no direction"));
        }
        Ok(vector
            .iter()
            .map(|&v| (f64::from(v) / norm) as f32)
            .collect())
    }
}

/// The dot product, with eight independent sums so that it vectorizes; the same
/// inputs give the same result bit for bit.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (chunks_a, chunks_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7])) + tail
}

fn score_rows(query: &[f32], rows: &[f32], scores: &mut [f32]) {
    for (score, row) in scores.iter_mut().zip(rows.chunks_exact(query.len())) {
        *score = dot(query, row);
    }
}

/// The serialized form; `position` is derived.
#[derive(Serialize, Deserialize)]
struct Stored {
    dim: usize,
    keys: Vec<String>,
    data: Vec<f32>,
}

#[derive(Serialize)]
struct StoredRef<'a> {
    dim: usize,
    keys: &'a [String],
    data: &'a [f32],
}

impl VectorIndex {
    /// Checks what `search` relies on: a valid dimension, one row per key, unique
    /// keys, finite values.
    fn from_stored(stored: Stored) -> std::result::Result<VectorIndex, String> {
        let Stored { dim, keys, data } = stored;
        if dim == 0 || dim > MAX_DIM {
            return Err(format!("dimension {dim}"));
        }
        if keys.len().checked_mul(dim) != Some(data.len()) {
            return Err(format!(
                "{} values for {} keys of dimension {dim}",
                data.len(),
                keys.len()
            ));
        }
        if data.iter().any(|v| !v.is_finite()) {
            return Err("a value that is not finite".into());
        }
        let mut position = HashMap::default();
        for (row, key) in keys.iter().enumerate() {
            if position.insert(key.clone(), row).is_some() {
                return Err(format!("key {key:?} twice"));
            }
        }
        Ok(VectorIndex {
            dim,
            keys,
            data,
            position,
        })
    }
}

impl Serialize for VectorIndex {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        StoredRef {
            dim: self.dim,
            keys: &self.keys,
            data: &self.data,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for VectorIndex {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let stored = Stored::deserialize(deserializer)?;
        VectorIndex::from_stored(stored).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use proptest::prelude::*;
    use std::collections::HashMap as Model;

    fn keys(hits: &[(String, f32)]) -> Vec<&str> {
        hits.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn cosine_order_ties_and_filter() {
        let mut index = VectorIndex::new(2).unwrap();
        index.upsert("east", &[3.0, 0.0]).unwrap();
        index.upsert("north", &[0.0, 0.5]).unwrap();
        index.upsert("northeast", &[1.0, 1.0]).unwrap();
        index.upsert("also_east", &[7.0, 0.0]).unwrap();
        assert_eq!(index.get("east").unwrap(), [1.0, 0.0]);
        let hits = index.search(&[2.0, 0.0], 10, None).unwrap();
        assert_eq!(keys(&hits), ["also_east", "east", "northeast", "north"]);
        assert_eq!(hits[0].1, 1.0);
        assert!((hits[2].1 - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(hits[3].1, 0.0);
        assert_eq!(
            keys(&index.search(&[1.0, 0.1], 2, None).unwrap()),
            ["also_east", "east"]
        );
        let no_east = |key: &str| !key.contains("east") || key == "northeast";
        let hits = index.search(&[1.0, 0.0], 10, Some(&no_east)).unwrap();
        assert_eq!(keys(&hits), ["northeast", "north"]);
        assert!(index.search(&[1.0, 0.0], 0, None).unwrap().is_empty());
        // Replacing keeps one row per key.
        index.upsert("north", &[0.0, -1.0]).unwrap();
        assert_eq!(index.len(), 4);
        assert_eq!(
            keys(&index.search(&[0.0, -1.0], 1, None).unwrap()),
            ["north"]
        );
    }

    #[test]
    fn bad_vectors_are_refused() {
        assert!(matches!(
            VectorIndex::new(0),
            Err(Error::InvalidValue { field: "dim", .. })
        ));
        let mut index = VectorIndex::new(3).unwrap();
        for (bad, why) in [
            (&[1.0, 2.0][..], "has 2 values"),
            (&[1.0, f32::NAN, 0.0][..], "value 1 is NaN"),
            (&[f32::INFINITY, 0.0, 0.0][..], "value 0 is inf"),
            (&[0.0, 0.0, 0.0][..], "all zeros"),
        ] {
            match index.upsert("k", bad) {
                Err(Error::InvalidValue {
                    field: "vector",
                    reason,
                }) => assert!(reason.contains(why), "{reason}"),
                other => panic!("{other:?}"),
            }
            assert!(matches!(
                index.search(bad, 3, None),
                Err(Error::InvalidValue { field: "query", .. })
            ));
        }
        assert!(index.is_empty());
        // Huge finite values normalize without overflow.
        index.upsert("big", &[f32::MAX, f32::MAX, 0.0]).unwrap();
        let stored = index.get("big").unwrap();
        assert!((stored[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn removals_keep_rows_contiguous() {
        let mut index = VectorIndex::new(2).unwrap();
        for (i, key) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            index.upsert(key, &[1.0, i as f32]).unwrap();
        }
        assert!(index.remove("b"));
        assert!(!index.remove("b"));
        assert_eq!(index.keys(), ["a", "e", "c", "d"]);
        assert_eq!(index.data.len(), 8);
        assert_eq!(
            index.get("e").unwrap(),
            VectorIndex::new(2)
                .unwrap()
                .normalized("v", &[1.0, 4.0])
                .unwrap()
        );
        assert_eq!(index.remove_keys(&["a", "zz", "d"]), 2);
        assert_eq!(index.keys(), ["c", "e"]);
        assert_eq!(index.remove_where(|k| k == "c"), 1);
        assert_eq!(index.keys(), ["e"]);
        assert_eq!(index.position["e"], 0);
        assert_eq!(index.remove_where(|_| true), 1);
        assert!(index.is_empty() && index.data.is_empty());
    }

    #[test]
    fn parallel_scan_matches_serial() {
        let dim = 5;
        let mut index = VectorIndex::new(dim).unwrap();
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        for i in 0..PARALLEL_ROWS + 5000 {
            let v: Vec<f32> = (0..dim).map(|_| next()).collect();
            index.upsert(&format!("k{i}"), &v).unwrap();
        }
        let query = [0.3, -0.2, 0.9, 0.1, 0.0];
        let hits = index.search(&query, 20, None).unwrap();
        let q = index.normalized("q", &query).unwrap();
        let mut all: Vec<(String, f32)> = index
            .keys()
            .iter()
            .map(|k| (k.clone(), dot(&q, index.get(k).unwrap())))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(20);
        assert_eq!(hits, all);
    }

    #[test]
    fn save_load_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut index = VectorIndex::new(3).unwrap();
        index.upsert("a", &[1.0, 2.0, 3.0]).unwrap();
        index.upsert("b", &[-1.0, 0.5, 0.0]).unwrap();
        index.save(&path, 9).unwrap();
        let (loaded, generation) = VectorIndex::load(&path).unwrap();
        assert_eq!((&loaded, generation), (&index, 9));
        let encoded = postcard::to_stdvec(&index).unwrap();
        assert_eq!(
            postcard::from_bytes::<VectorIndex>(&encoded).unwrap(),
            index
        );

        let bytes = std::fs::read(&path).unwrap();
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        for bad in [
            &flipped[..],
            &bytes[..bytes.len() - 2],
            b"AIRLEXIC\x01\0\0\0 and more bytes than a header",
        ] {
            std::fs::write(&path, bad).unwrap();
            match VectorIndex::load(&path) {
                Err(Error::Corrupt(m)) => assert!(
                    m.contains("vector index") && m.contains("rebuild it"),
                    "{m}"
                ),
                other => panic!("{other:?}"),
            }
        }
        // Well framed but inconsistent: the wrong number of values for the keys.
        let head = postcard::to_stdvec(&(3u64, vec!["a".to_string(), "b".to_string()])).unwrap();
        let mut payload = (head.len() as u64).to_le_bytes().to_vec();
        payload.extend_from_slice(&head);
        payload.extend_from_slice(&1.0f32.to_le_bytes());
        persist::write(&path, MAGIC, FORMAT_VERSION, 1, &payload).unwrap();
        assert!(
            matches!(VectorIndex::load(&path), Err(Error::Corrupt(m)) if m.contains("1 values for 2 keys"))
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(usize, Vec<i8>),
        Remove(usize),
        RemoveWhere(usize),
        RemoveKeys(Vec<usize>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let vector = prop::collection::vec(-3i8..=3, 3)
            .prop_filter("not zero", |v| v.iter().any(|&x| x != 0));
        prop_oneof![
            4 => (0..12usize, vector).prop_map(|(k, v)| Op::Upsert(k, v)),
            1 => (0..12usize).prop_map(Op::Remove),
            1 => (0..4usize).prop_map(Op::RemoveWhere),
            1 => prop::collection::vec(0..12usize, 0..4).prop_map(Op::RemoveKeys),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn search_equals_brute_force_over_a_model(
            ops in prop::collection::vec(op(), 0..40),
            query in prop::collection::vec(-3i8..=3, 3).prop_filter("not zero", |v| v.iter().any(|&x| x != 0)),
            limit in 1..15usize,
            odd_only in any::<bool>(),
        ) {
            let mut index = VectorIndex::new(3).unwrap();
            let mut model: Model<String, Vec<f32>> = Model::new();
            let as_f32 = |v: &[i8]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
            for op in ops {
                match op {
                    Op::Upsert(k, v) => {
                        let v = as_f32(&v);
                        index.upsert(&format!("k{k}"), &v).unwrap();
                        model.insert(format!("k{k}"), index.normalized("v", &v).unwrap());
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(index.remove(&format!("k{k}")), model.remove(&format!("k{k}")).is_some());
                    }
                    Op::RemoveWhere(m) => {
                        let doomed = |key: &str| key[1..].parse::<usize>().unwrap() % 4 == m;
                        let before = model.len();
                        model.retain(|key, _| !doomed(key));
                        prop_assert_eq!(index.remove_where(doomed), before - model.len());
                    }
                    Op::RemoveKeys(ks) => {
                        let mut ks: Vec<String> = ks.into_iter().map(|k| format!("k{k}")).collect();
                        ks.sort();
                        ks.dedup();
                        let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
                        let expected = ks.iter().filter(|k| model.remove(*k).is_some()).count();
                        prop_assert_eq!(index.remove_keys(&refs), expected);
                    }
                }
            }
            prop_assert_eq!(index.len(), model.len());
            prop_assert_eq!(index.data.len(), model.len() * 3);
            for (row, key) in index.keys().iter().enumerate() {
                prop_assert_eq!(index.position[key], row);
                prop_assert_eq!(index.get(key).unwrap(), &model[key][..]);
            }
            let q = as_f32(&query);
            let qn = index.normalized("q", &q).unwrap();
            let keep = |key: &str| !odd_only || key[1..].parse::<usize>().unwrap() % 2 == 1;
            let mut expected: Vec<(String, f32)> = model
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), dot(&qn, v)))
                .collect();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            expected.truncate(limit);
            let filter: Option<&dyn Fn(&str) -> bool> = if odd_only { Some(&keep) } else { None };
            prop_assert_eq!(index.search(&q, limit, filter).unwrap(), expected);
        }
    }
}
