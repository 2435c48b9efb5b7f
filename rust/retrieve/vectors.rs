//! Dense vectors searched by brute force: one contiguous row-major `f32` matrix,
//! rows L2-normalized on insert so that cosine similarity is a dot product.
//!
//! A full `f32` scan is bound by memory bandwidth (200K x 384 rows are 307 MB per
//! query), so above [`SCREEN_ROWS`] rows `search` screens with an `i8` copy of each
//! row (symmetric per-row quantization: `scale = max|x| / 127`), a quarter of the
//! bytes, then reranks candidates with the exact `f32` dot product. The result is
//! still exact, not approximate: each row also keeps the L2 norm of its
//! quantization error, which bounds how far its screened score can be from its
//! exact one, and every row whose bound reaches the k-th exact score among the
//! candidates is reranked too (see [`VectorIndex::search`]).
//!
//! Saved, the rows are kept in the layout `search` reads them in (the quanta, the
//! codes, the `f32` rows, each a contiguous little-endian section; see
//! [`VectorIndex::save`]), so a load maps the file and searches it in place: it
//! decodes only the keys, and each 64 KiB block of the file is checked against its
//! checksum when a search first reads it (`retrieve::persist::Paged`). The first
//! change after a load copies the rows into memory.

use std::ops::Range;
use std::path::Path;

use foldhash::HashMap;
use rayon::prelude::*;

use super::persist::{self, Opened, Paged, Writer};
use crate::error::{invalid, Result};

/// The version of the file [`VectorIndex::save`] writes (2: the rows in their
/// searched layout, paged checksums; 1 held the `f32` rows only).
pub const FORMAT_VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"AIRVECTS";
const WHAT: &str = "vector index";
/// The largest dimension accepted.
pub const MAX_DIM: usize = 1 << 16;
/// Above this many rows, `search` scores rows on all cores.
const PARALLEL_ROWS: usize = 20_000;
/// Rows per parallel task.
const ROWS_PER_TASK: usize = 4096;
/// From this many rows on, `search` screens with the `i8` codes; below it the
/// exact scan is as fast.
pub const SCREEN_ROWS: usize = 4096;
/// The screen keeps `max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)` rows for the
/// exact rerank. A constant, not a Policy key: it changes only the speed, never
/// the result (rows the screen might have misranked are reranked whatever it is),
/// and the values fit the error of 8-bit codes (about 0.01 on a cosine).
pub const CANDIDATE_FACTOR: usize = 8;
/// See [`CANDIDATE_FACTOR`].
pub const MIN_CANDIDATES: usize = 64;
/// Added to each row's error bound, with [`SLACK_PER_VALUE`] per dimension: covers
/// the rounding of the `f32` arithmetic. The exact `dot` of two unit vectors of
/// `dim` values is off by less than `(dim / 8 + 4) * 2^-24`, their norms differ
/// from 1 by a few ulps, the screened score is off by a few ulps.
const BOUND_SLACK: f32 = 1e-5;
/// See [`BOUND_SLACK`]: 2^-22, four times the rounding error of one `f32` step.
const SLACK_PER_VALUE: f32 = 1.0 / (1u32 << 22) as f32;

/// See the module documentation.
#[derive(Debug)]
pub struct VectorIndex {
    dim: usize,
    keys: Vec<String>,
    /// Row-major, `keys.len() * dim` values; row `i` is the vector of `keys[i]`.
    data: Vec<f32>,
    /// `data` quantized, row by row: `round(x / scale)`, in -127..=127.
    codes: Vec<i8>,
    /// Per row: the scale of its codes and the L2 norm of the quantization error
    /// (`|x - code * scale|`), derived from `data`.
    quanta: Vec<Quantum>,
    position: HashMap<String, usize>,
    /// A loaded index's rows, in the file (`data`, `codes` and `quanta` empty
    /// meanwhile) until the first change copies them into memory (`own`).
    mapped: Option<MappedRows>,
}

/// The scale of a row's codes and the L2 norm of its quantization error.
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Quantum {
    scale: f32,
    error: f32,
}

/// Where a loaded file's sections are, in bytes of its payload.
#[derive(Debug)]
struct MappedRows {
    paged: Paged,
    quanta: Range<usize>,
    codes: Range<usize>,
    data: Range<usize>,
}

/// The payload's first bytes: rows, dimension, bytes of the keys (u64 LE each).
const PREAMBLE: usize = 24;

/// `at` rounded up to a multiple of 8 (each section starts so: the payload starts at
/// a multiple of 4 in the file, which is mapped at a page boundary, so `f32`
/// sections are aligned).
fn aligned(at: usize) -> usize {
    at.div_ceil(8) * 8
}

/// The sections (quanta, codes, values) of a payload of `rows` rows of `dim`
/// values whose keys take `keys` bytes; None if that does not fit in a `usize`.
type Sections = (Range<usize>, Range<usize>, Range<usize>);

fn layout(rows: usize, dim: usize, keys: usize) -> Option<Sections> {
    let values = rows.checked_mul(dim)?;
    let quanta = aligned(PREAMBLE.checked_add(keys)?);
    let codes = quanta.checked_add(rows.checked_mul(8)?)?;
    let data = aligned(codes.checked_add(values)?);
    let end = data.checked_add(values.checked_mul(4)?)?;
    Some((quanta..codes, codes..codes + values, data..end))
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
            codes: Vec::new(),
            quanta: Vec::new(),
            position: HashMap::default(),
            mapped: None,
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

    /// The stored (normalized) vector of `key`; a `Corrupt` error when it is read
    /// from a damaged file.
    pub fn get(&self, key: &str) -> Result<Option<&[f32]>> {
        match self.position.get(key) {
            Some(&row) => self.values(row..row + 1).map(Some),
            None => Ok(None),
        }
    }

    /// The values of `rows`.
    fn values(&self, rows: Range<usize>) -> Result<&[f32]> {
        let dim = self.dim;
        match &self.mapped {
            None => Ok(&self.data[rows.start * dim..rows.end * dim]),
            Some(m) => {
                m.cast(m.data.start + rows.start * dim * 4..m.data.start + rows.end * dim * 4)
            }
        }
    }

    /// The codes of `rows`.
    fn codes_of(&self, rows: Range<usize>) -> Result<&[i8]> {
        let dim = self.dim;
        match &self.mapped {
            None => Ok(&self.codes[rows.start * dim..rows.end * dim]),
            Some(m) => m.cast(m.codes.start + rows.start * dim..m.codes.start + rows.end * dim),
        }
    }

    /// The quanta of `rows`.
    fn quanta_of(&self, rows: Range<usize>) -> Result<&[Quantum]> {
        match &self.mapped {
            None => Ok(&self.quanta[rows]),
            Some(m) => m.cast(m.quanta.start + rows.start * 8..m.quanta.start + rows.end * 8),
        }
    }

    /// A loaded index's rows copied into memory, for a change (nothing to do for
    /// one in memory); a `Corrupt` error when the file's blocks do not check out.
    fn own(&mut self) -> Result<()> {
        let Some(m) = &self.mapped else {
            return Ok(());
        };
        let floats = |bytes: &[u8]| -> Vec<f32> {
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect()
        };
        let data = floats(m.paged.get(m.data.clone())?);
        let codes = m
            .paged
            .get(m.codes.clone())?
            .iter()
            .map(|&b| b as i8)
            .collect();
        let quanta = floats(m.paged.get(m.quanta.clone())?)
            .chunks_exact(2)
            .map(|pair| Quantum {
                scale: pair[0],
                error: pair[1],
            })
            .collect();
        (self.data, self.codes, self.quanta, self.mapped) = (data, codes, quanta, None);
        Ok(())
    }

    /// Stores `vector`, normalized, under `key` (replacing what it had). An
    /// invalid-input error for a vector of the wrong dimension, with a value that is
    /// not finite, or all zeros.
    pub fn upsert(&mut self, key: &str, vector: &[f32]) -> Result<()> {
        let normalized = self.normalized("vector", vector)?;
        self.own()?;
        let dim = self.dim;
        let row = match self.position.get(key) {
            Some(&row) => row,
            None => {
                let row = self.keys.len();
                self.position.insert(key.to_owned(), row);
                self.keys.push(key.to_owned());
                self.data.resize((row + 1) * dim, 0.0);
                self.codes.resize((row + 1) * dim, 0);
                self.quanta.push(Quantum {
                    scale: 0.0,
                    error: 0.0,
                });
                row
            }
        };
        self.data[row * dim..(row + 1) * dim].copy_from_slice(&normalized);
        self.quanta[row] = quantize(&normalized, &mut self.codes[row * dim..(row + 1) * dim]);
        Ok(())
    }

    /// Removes `key`'s vector (the last row moves into its place); false if absent.
    pub fn remove(&mut self, key: &str) -> Result<bool> {
        if !self.position.contains_key(key) {
            return Ok(false);
        }
        self.own()?;
        let Some(row) = self.position.remove(key) else {
            return Ok(false);
        };
        let last = self.keys.len() - 1;
        let dim = self.dim;
        if row != last {
            self.data
                .copy_within(last * dim..(last + 1) * dim, row * dim);
            self.codes
                .copy_within(last * dim..(last + 1) * dim, row * dim);
            self.quanta[row] = self.quanta[last];
            self.keys.swap_remove(row);
            *self
                .position
                .get_mut(&self.keys[row])
                .expect("a stored key") = row;
        } else {
            self.keys.pop();
        }
        self.data.truncate(last * dim);
        self.codes.truncate(last * dim);
        self.quanta.truncate(last);
        Ok(true)
    }

    /// Removes the vectors of `keys` that are stored; returns how many.
    pub fn remove_keys(&mut self, keys: &[&str]) -> Result<usize> {
        let mut removed = 0;
        for key in keys {
            removed += usize::from(self.remove(key)?);
        }
        Ok(removed)
    }

    /// Removes every vector whose key satisfies `remove`, in one pass that keeps
    /// the other rows in order; returns how many.
    pub fn remove_where(&mut self, mut remove: impl FnMut(&str) -> bool) -> Result<usize> {
        // Asked first, so that a panicking predicate leaves the index as it was.
        let doomed: Vec<bool> = self.keys.iter().map(|key| remove(key)).collect();
        if !doomed.contains(&true) {
            return Ok(0);
        }
        self.own()?;
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
                self.codes
                    .copy_within(row * dim..(row + 1) * dim, kept * dim);
                self.quanta[kept] = self.quanta[row];
                *self.position.get_mut(&key).expect("a stored key") = kept;
            }
            self.keys.push(key);
        }
        self.data.truncate(self.keys.len() * dim);
        self.codes.truncate(self.keys.len() * dim);
        self.quanta.truncate(self.keys.len());
        Ok(total - self.keys.len())
    }

    /// The `limit` stored vectors most similar to `query` (cosine), best first,
    /// equal scores by key, among those whose key passes `filter` if given. An
    /// invalid-input error for a query as `upsert` would refuse it.
    ///
    /// From [`SCREEN_ROWS`] rows on, the rows are scored with their `i8` codes
    /// first; the best `max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)` of them get
    /// their exact score, and so does every other row whose screened score plus its
    /// error bound reaches the `limit`-th exact score so far. Every other row is
    /// below that score, so the result (keys, order and `f32` scores) is the one
    /// [`VectorIndex::search_exact`] gives.
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
        if self.keys.len() < SCREEN_ROWS {
            return self.exact(&query, limit, filter);
        }
        self.screened(&query, limit, filter)
    }

    /// What [`VectorIndex::search`] returns, by the exact `f32` scan of every row:
    /// the reference it is tested against, and the baseline of its benchmark.
    pub fn search_exact(
        &self,
        query: &[f32],
        limit: usize,
        filter: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Vec<(String, f32)>> {
        let query = self.normalized("query", query)?;
        if limit == 0 || self.keys.is_empty() {
            return Ok(Vec::new());
        }
        self.exact(&query, limit, filter)
    }

    /// Every row scored, in parallel above [`PARALLEL_ROWS`].
    fn scores(&self, score: impl Fn(usize, &mut [f32]) + Sync) -> Vec<f32> {
        let mut scores = vec![0.0f32; self.keys.len()];
        if self.keys.len() > PARALLEL_ROWS {
            scores
                .par_chunks_mut(ROWS_PER_TASK)
                .enumerate()
                .for_each(|(task, scores)| score(task * ROWS_PER_TASK, scores));
        } else {
            score(0, &mut scores);
        }
        scores
    }

    /// `(score, row)` of the rows whose key passes `filter`.
    fn kept(&self, scores: &[f32], filter: Option<&dyn Fn(&str) -> bool>) -> Vec<(f32, usize)> {
        match filter {
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
        }
    }

    /// The best `limit` of `hits` (exact scores), best first, equal scores by key.
    fn best(&self, mut hits: Vec<(f32, usize)>, limit: usize) -> Vec<(String, f32)> {
        let order = |a: &(f32, usize), b: &(f32, usize)| self.order(a, b);
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        hits.into_iter()
            .map(|(score, row)| (self.keys[row].clone(), score))
            .collect()
    }

    /// Score descending, then key ascending.
    fn order(&self, a: &(f32, usize), b: &(f32, usize)) -> std::cmp::Ordering {
        b.0.total_cmp(&a.0)
            .then_with(|| self.keys[a.1].cmp(&self.keys[b.1]))
    }

    fn exact(
        &self,
        query: &[f32],
        limit: usize,
        filter: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Vec<(String, f32)>> {
        let dim = self.dim;
        let values = self.values(0..self.keys.len())?;
        let scores = self.scores(|first, scores| {
            let rows = &values[first * dim..(first + scores.len()) * dim];
            score_rows(query, rows, scores);
        });
        Ok(self.best(self.kept(&scores, filter), limit))
    }

    fn screened(
        &self,
        query: &[f32],
        limit: usize,
        filter: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Vec<(String, f32)>> {
        let dim = self.dim;
        let mut query_codes = vec![0i8; dim];
        let query_quantum = quantize(query, &mut query_codes);
        let (codes, quanta) = (
            self.codes_of(0..self.keys.len())?,
            self.quanta_of(0..self.keys.len())?,
        );
        let screen = self.scores(|first, scores| {
            let last = first + scores.len();
            score_codes(
                &query_codes,
                query_quantum.scale,
                &codes[first * dim..last * dim],
                &quanta[first..last],
                scores,
            );
        });
        let mut hits = self.kept(&screen, filter);
        let wanted = limit
            .saturating_mul(CANDIDATE_FACTOR)
            .max(MIN_CANDIDATES)
            .max(limit);
        // Ties broken by row: the candidates do not depend on the sort's whims.
        let screen_order =
            |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > wanted {
            hits.select_nth_unstable_by(wanted - 1, screen_order);
        }
        let (candidates, rest) = hits.split_at(wanted.min(hits.len()));
        let exact_score = |row: usize| -> Result<(f32, usize)> {
            Ok((dot(query, self.values(row..row + 1)?), row))
        };
        let mut exact = candidates
            .iter()
            .map(|&(_, row)| exact_score(row))
            .collect::<Result<Vec<_>>>()?;
        if !rest.is_empty() {
            // `exact` holds `wanted >= limit` rows: its limit-th best score is a
            // floor that a row must reach to be in the result.
            exact.select_nth_unstable_by(limit - 1, |a, b| self.order(a, b));
            let floor = exact[limit - 1].0;
            // |q.r - q'.r'| <= |q| |r - r'| + |q - q'| |r'|, with |q|, |r| = 1 and
            // |r'| <= 1 + |r - r'| (q', r': the dequantized codes).
            let query_error = query_quantum.error;
            let slack = BOUND_SLACK + dim as f32 * SLACK_PER_VALUE;
            for &(screened, row) in rest {
                let error = quanta[row].error;
                let bound = error + query_error * (1.0 + error) + slack;
                if screened + bound >= floor {
                    exact.push(exact_score(row)?);
                }
            }
        }
        Ok(self.best(exact, limit))
    }

    /// Saves the index to `path` with `generation`, an opaque number
    /// [`VectorIndex::load`] returns. The payload (paged: a checksum per 64 KiB
    /// block, see `retrieve::persist`): rows, dimension and the keys' length (u64
    /// LE each), the keys (postcard), then, each at a multiple of 8 bytes, every
    /// row's quantum (scale and error, `f32` LE), the codes (`i8`, row by row) and
    /// the values (`f32` LE, row by row).
    pub fn save(&self, path: &Path, generation: u64) -> Result<()> {
        let rows = self.keys.len();
        let keys = postcard::to_stdvec(&self.keys).map_err(crate::error::Error::Encode)?;
        let (quanta, codes, data) = layout(rows, self.dim, keys.len())
            .ok_or_else(|| invalid("vectors", "too many to save"))?;
        let mut writer = Writer::create_paged(path, MAGIC, FORMAT_VERSION)?;
        for word in [rows, self.dim, keys.len()] {
            writer.write_all(&(word as u64).to_le_bytes())?;
        }
        writer.write_all(&keys)?;
        writer.write_all(&[0; 8][..quanta.start - PREAMBLE - keys.len()])?;
        let all = 0..rows;
        writer.write_all(&little_endian(bytemuck::cast_slice(
            self.quanta_of(all.clone())?,
        )))?;
        writer.write_all(bytemuck::cast_slice(self.codes_of(all.clone())?))?;
        writer.write_all(&[0; 8][..data.start - codes.end])?;
        writer.write_all(&little_endian(self.values(all)?))?;
        writer.finish(generation)?.commit()
    }

    /// Loads an index saved by [`VectorIndex::save`], with its generation: the
    /// file is mapped and only its keys read (see the module documentation). A
    /// file that is damaged or not such an index is `Error::Corrupt` ("rebuild
    /// it"), now or when a search first reads a damaged block; one of another
    /// format version is `Error::FormatVersion`.
    pub fn load(path: &Path) -> Result<(VectorIndex, u64)> {
        let opened = Opened::open_paged(path, MAGIC, FORMAT_VERSION, WHAT)?;
        let generation = opened.generation();
        let paged = opened.paged(WHAT)?;
        let corrupt = |why: &str| persist::corrupt(path, WHAT, why);
        let preamble = paged.get(0..PREAMBLE)?;
        let word = |at: usize| {
            let word = u64::from_le_bytes(preamble[at..at + 8].try_into().expect("8 bytes"));
            usize::try_from(word).map_err(|_| corrupt("a count past this machine's memory"))
        };
        let (rows, dim, keys_length) = (word(0)?, word(8)?, word(16)?);
        if dim == 0 || dim > MAX_DIM {
            return Err(corrupt(&format!("dimension {dim}")));
        }
        let (quanta, codes, data) = layout(rows, dim, keys_length)
            .filter(|(_, _, data)| data.end == paged.len())
            .ok_or_else(|| {
                corrupt(&format!(
                    "{rows} rows of {dim} values in {} bytes",
                    paged.len()
                ))
            })?;
        let keys: Vec<String> = postcard::from_bytes(paged.get(PREAMBLE..PREAMBLE + keys_length)?)
            .map_err(|e| corrupt(&e.to_string()))?;
        if keys.len() != rows {
            return Err(corrupt(&format!("{} keys for {rows} rows", keys.len())));
        }
        let mut position = HashMap::default();
        for (row, key) in keys.iter().enumerate() {
            if position.insert(key.clone(), row).is_some() {
                return Err(corrupt(&format!("key {key:?} twice")));
            }
        }
        let mut index = VectorIndex {
            dim,
            keys,
            data: Vec::new(),
            codes: Vec::new(),
            quanta: Vec::new(),
            position,
            mapped: Some(MappedRows {
                paged,
                quanta,
                codes,
                data,
            }),
        };
        if cfg!(target_endian = "big") {
            index.own()?; // the sections are little-endian: read, not mapped
        }
        Ok((index, generation))
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

/// `codes` (as many as `vector`) and the quantum of `vector`: symmetric
/// quantization, `scale = max|x| / 127`, `code = round(x / scale)`.
fn quantize(vector: &[f32], codes: &mut [i8]) -> Quantum {
    let max = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if max == 0.0 {
        codes.fill(0);
        return Quantum {
            scale: 0.0,
            error: 0.0,
        };
    }
    let scale = max / 127.0;
    let mut squares = 0.0f64;
    for (code, &x) in codes.iter_mut().zip(vector) {
        *code = (x / scale).round().clamp(-127.0, 127.0) as i8;
        let error = f64::from(x) - f64::from(*code) * f64::from(scale);
        squares += error * error;
    }
    // Rounded up, so that the bound holds whatever the rounding to f32.
    let error = squares.sqrt() as f32;
    Quantum {
        scale,
        error: error + error * 1e-6,
    }
}

/// The dot product of two code rows, with 32 independent sums so that it
/// vectorizes; exact (|sum| <= 127 * 127 * MAX_DIM < 2^31).
#[inline(always)]
fn dot_codes(a: &[i8], b: &[i8]) -> i32 {
    let mut sums = [0i32; 32];
    let (chunks_a, chunks_b) = (a.chunks_exact(32), b.chunks_exact(32));
    let tail: i32 = chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..32 {
            sums[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    sums.iter().sum::<i32>() + tail
}

#[inline(always)]
fn score_codes_with(
    query: &[i8],
    query_scale: f32,
    codes: &[i8],
    quanta: &[Quantum],
    scores: &mut [f32],
) {
    for ((score, row), quantum) in scores
        .iter_mut()
        .zip(codes.chunks_exact(query.len()))
        .zip(quanta)
    {
        *score = dot_codes(query, row) as f32 * (query_scale * quantum.scale);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn score_codes_avx2(
    query: &[i8],
    query_scale: f32,
    codes: &[i8],
    quanta: &[Quantum],
    scores: &mut [f32],
) {
    score_codes_with(query, query_scale, codes, quanta, scores);
}

/// The screened score of each row of `codes`: its code dot product with `query`
/// times both scales. With AVX2 where the CPU has it (the build targets the
/// baseline x86-64, whose 128-bit integer products are half as fast).
fn score_codes(
    query: &[i8],
    query_scale: f32,
    codes: &[i8],
    quanta: &[Quantum],
    scores: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just checked.
        unsafe { score_codes_avx2(query, query_scale, codes, quanta, scores) };
        return;
    }
    score_codes_with(query, query_scale, codes, quanta, scores);
}

impl MappedRows {
    /// The section bytes at `range` as `T`s, once their blocks check out.
    fn cast<T: bytemuck::Pod>(&self, range: Range<usize>) -> Result<&[T]> {
        bytemuck::try_cast_slice(self.paged.get(range)?)
            .map_err(|_| self.paged.corrupt("a section out of alignment"))
    }
}

/// `values` as little-endian bytes (as they are, on a little-endian machine).
fn little_endian(values: &[f32]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        std::borrow::Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

/// Equal: the same dimension, keys in the same rows and values (whether in memory
/// or in a file; a damaged file's index equals none).
impl PartialEq for VectorIndex {
    fn eq(&self, other: &VectorIndex) -> bool {
        self.dim == other.dim
            && self.keys == other.keys
            && match (
                self.values(0..self.keys.len()),
                other.values(0..other.keys.len()),
            ) {
                (Ok(mine), Ok(theirs)) => mine == theirs,
                _ => false,
            }
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
        assert_eq!(index.get("east").unwrap().unwrap(), [1.0, 0.0]);
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
        let stored = index.get("big").unwrap().unwrap();
        assert!((stored[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn removals_keep_rows_contiguous() {
        let mut index = VectorIndex::new(2).unwrap();
        for (i, key) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            index.upsert(key, &[1.0, i as f32]).unwrap();
        }
        assert!(index.remove("b").unwrap());
        assert!(!index.remove("b").unwrap());
        assert_eq!(index.keys(), ["a", "e", "c", "d"]);
        assert_eq!(index.data.len(), 8);
        assert_eq!(
            index.get("e").unwrap().unwrap(),
            VectorIndex::new(2)
                .unwrap()
                .normalized("v", &[1.0, 4.0])
                .unwrap()
        );
        assert_eq!(index.remove_keys(&["a", "zz", "d"]).unwrap(), 2);
        assert_eq!(index.keys(), ["c", "e"]);
        assert_eq!(index.remove_where(|k| k == "c").unwrap(), 1);
        assert_eq!(index.keys(), ["e"]);
        assert_eq!(index.position["e"], 0);
        assert_eq!(index.remove_where(|_| true).unwrap(), 1);
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
            .map(|k| (k.clone(), dot(&q, index.get(k).unwrap().unwrap())))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(20);
        assert_eq!(hits, all);
    }

    /// A payload written as `save` writes one, from its parts, for damaged files.
    fn write_payload(path: &Path, words: [u64; 3], keys: &[String], rest: &[u8]) {
        let mut writer = Writer::create_paged(path, MAGIC, FORMAT_VERSION).unwrap();
        for word in words {
            writer.write_all(&word.to_le_bytes()).unwrap();
        }
        writer
            .write_all(&postcard::to_stdvec(keys).unwrap())
            .unwrap();
        writer.write_all(rest).unwrap();
        writer.finish(1).unwrap().commit().unwrap();
    }

    fn corrupt_saying(result: Result<impl std::fmt::Debug>, says: &str) {
        match result {
            Err(Error::Corrupt(m)) => assert!(
                m.contains("vector index") && m.contains("rebuild it") && m.contains(says),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
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
        assert!(loaded.mapped.is_some() && loaded.data.is_empty());
        assert_eq!((&loaded, generation), (&index, 9));
        assert_eq!(
            loaded.search(&[1.0, 0.0, 0.0], 2, None).unwrap(),
            index.search(&[1.0, 0.0, 0.0], 2, None).unwrap()
        );

        let bytes = std::fs::read(&path).unwrap();
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        for (bad, says) in [
            (&flipped[..], "checksum mismatch"),
            (&bytes[..bytes.len() - 2], "truncated"),
            (
                &b"AIRLEXIC\x02\0\0\0 and more bytes than a header"[..],
                "no header",
            ),
        ] {
            std::fs::write(&path, bad).unwrap();
            corrupt_saying(VectorIndex::load(&path), says);
        }
        // Another format version (1 held the values only): rebuilt by the caller.
        let mut old = bytes.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        std::fs::write(&path, old).unwrap();
        assert!(matches!(
            VectorIndex::load(&path),
            Err(Error::FormatVersion {
                found: 1,
                expected: 2,
                ..
            })
        ));
        // Well framed but inconsistent.
        let (a, b) = ("a".to_string(), "b".to_string());
        let cases: [([u64; 3], Vec<String>, usize, &str); 4] = [
            ([2, 0, 0], vec![a.clone(), b.clone()], 0, "dimension 0"),
            ([2, 3, 0], vec![a.clone()], 64, "2 rows of 3 values in"),
            // keys of 5 bytes: the quanta at 32, the codes 8 bytes a row later, the
            // values at the next multiple of 8
            (
                [1, 1, 0],
                vec![a.clone(), b.clone()],
                52 - 29,
                "2 keys for 1 rows",
            ),
            (
                [2, 1, 0],
                vec![a.clone(), a.clone()],
                64 - 29,
                "key \"a\" twice",
            ),
        ];
        for (words, keys, rest, says) in cases {
            let length = postcard::to_stdvec(&keys).unwrap().len() as u64;
            let words = [
                words[0],
                words[1],
                if words[2] == 0 { length } else { words[2] },
            ];
            write_payload(&path, words, &keys, &vec![0u8; rest]);
            corrupt_saying(VectorIndex::load(&path), says);
        }
    }

    /// A damaged block past the keys is found when a search (or a change) first
    /// reads it; the index is left as it was.
    #[test]
    fn a_damaged_block_is_found_when_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut rng = Rng(3);
        let mut index = VectorIndex::new(32).unwrap();
        for i in 0..2000 {
            let v: Vec<f32> = (0..32).map(|_| rng.normal()).collect();
            index.upsert(&format!("k{i}"), &v).unwrap();
        }
        index.save(&path, 1).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let end = bytes.len() - (bytes.len() - 36).div_ceil(persist::PAGE + 8) * 8;
        bytes[end - 100] ^= 0x40; // in the last row's values, blocks past the keys
        std::fs::write(&path, &bytes).unwrap();
        let (mut loaded, _) = VectorIndex::load(&path).unwrap();
        let q: Vec<f32> = (0..32).map(|_| rng.normal()).collect();
        corrupt_saying(loaded.search(&q, 5, None), "checksum mismatch");
        corrupt_saying(loaded.get("k1999"), "checksum mismatch");
        corrupt_saying(loaded.upsert("new", &q), "checksum mismatch");
        corrupt_saying(loaded.remove("k0"), "checksum mismatch");
        assert!(loaded.mapped.is_some() && loaded.len() == 2000 && !loaded.contains("new"));
        assert_eq!(
            loaded.get("k0").unwrap().unwrap(),
            index.get("k0").unwrap().unwrap()
        );
    }

    /// A loaded index searches its file, and its first change copies the rows into
    /// memory: after it, it is the index it was saved from, changed the same way.
    #[test]
    fn a_loaded_index_changes_as_one_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut rng = Rng(5);
        let mut index = VectorIndex::new(24).unwrap();
        for i in 0..SCREEN_ROWS + 50 {
            let v: Vec<f32> = (0..24).map(|_| rng.normal()).collect();
            index.upsert(&format!("k{i}"), &v).unwrap();
        }
        index.save(&path, 4).unwrap();
        let (mut loaded, _) = VectorIndex::load(&path).unwrap();
        let q: Vec<f32> = (0..24).map(|_| rng.normal()).collect();
        assert_eq!(
            loaded.search(&q, 10, None).unwrap(),
            index.search_exact(&q, 10, None).unwrap()
        );
        // Saved again unchanged, it reads the same.
        let again = dir.path().join("again.bin");
        loaded.save(&again, 4).unwrap();
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&path).unwrap()
        );
        assert_eq!(loaded.remove_where(|_| false).unwrap(), 0);
        assert!(loaded.mapped.is_some());
        assert_eq!(loaded.remove_keys(&["k3", "nope"]).unwrap(), 1);
        assert!(loaded.mapped.is_none());
        assert!(index.remove("k3").unwrap());
        let v: Vec<f32> = (0..24).map(|_| rng.normal()).collect();
        loaded.upsert("fresh", &v).unwrap();
        index.upsert("fresh", &v).unwrap();
        assert_eq!(loaded, index);
        assert_eq!(
            (&loaded.codes, &loaded.quanta),
            (&index.codes, &index.quanta)
        );
        assert_eq!(
            loaded.search(&q, 10, None).unwrap(),
            index.search(&q, 10, None).unwrap()
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
                        prop_assert_eq!(index.remove(&format!("k{k}")).unwrap(), model.remove(&format!("k{k}")).is_some());
                    }
                    Op::RemoveWhere(m) => {
                        let doomed = |key: &str| key[1..].parse::<usize>().unwrap() % 4 == m;
                        let before = model.len();
                        model.retain(|key, _| !doomed(key));
                        prop_assert_eq!(index.remove_where(doomed).unwrap(), before - model.len());
                    }
                    Op::RemoveKeys(ks) => {
                        let mut ks: Vec<String> = ks.into_iter().map(|k| format!("k{k}")).collect();
                        ks.sort();
                        ks.dedup();
                        let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
                        let expected = ks.iter().filter(|k| model.remove(*k).is_some()).count();
                        prop_assert_eq!(index.remove_keys(&refs).unwrap(), expected);
                    }
                }
            }
            prop_assert_eq!(index.len(), model.len());
            prop_assert_eq!(index.data.len(), model.len() * 3);
            prop_assert_eq!(index.codes.len(), model.len() * 3);
            prop_assert_eq!(index.quanta.len(), model.len());
            for (row, key) in index.keys().iter().enumerate() {
                prop_assert_eq!(index.position[key], row);
                prop_assert_eq!(index.get(key).unwrap().unwrap(), &model[key][..]);
                let mut codes = [0i8; 3];
                let quantum = quantize(&model[key], &mut codes);
                prop_assert_eq!(&index.codes[row * 3..row * 3 + 3], &codes[..]);
                prop_assert_eq!(index.quanta[row], quantum);
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
            prop_assert_eq!(index.search(&q, limit, filter).unwrap(), expected.clone());
            // The screen on this index (search uses it from SCREEN_ROWS rows on).
            if !model.is_empty() {
                prop_assert_eq!(index.screened(&qn, limit, filter).unwrap(), expected);
            }
        }

        /// The screen with exact rerank returns what the exact scan does: the
        /// scores are the exact `f32` dot products, best first, equal scores by
        /// key, whatever the rows (small integers for many ties, or clustered
        /// around one direction so that the screen cannot tell them apart).
        #[test]
        fn screened_equals_exact(
            dim in 1..48usize,
            rows in 1..400usize,
            kind in 0..3u8,
            seed in any::<u64>(),
            limit in 1..40usize,
            odd_only in any::<bool>(),
        ) {
            let mut rng = Rng(seed);
            let base: Vec<f32> = (0..dim).map(|_| rng.normal()).collect();
            let vector = |rng: &mut Rng| -> Vec<f32> {
                loop {
                    let v: Vec<f32> = match kind {
                        0 => (0..dim).map(|_| (rng.next() % 5) as f32 - 2.0).collect(),
                        1 => (0..dim).map(|_| rng.normal()).collect(),
                        _ => base.iter().map(|b| b + 1e-3 * rng.normal()).collect(),
                    };
                    if v.iter().any(|&x| x != 0.0) {
                        return v;
                    }
                }
            };
            let mut index = VectorIndex::new(dim).unwrap();
            for i in 0..rows {
                let v = vector(&mut rng);
                index.upsert(&format!("k{i}"), &v).unwrap();
            }
            let query = vector(&mut rng);
            let qn = index.normalized("q", &query).unwrap();
            let keep = |key: &str| !odd_only || key[1..].parse::<usize>().unwrap() % 2 == 1;
            let filter: Option<&dyn Fn(&str) -> bool> = if odd_only { Some(&keep) } else { None };
            let hits = index.screened(&qn, limit, filter).unwrap();
            prop_assert_eq!(&hits, &index.search_exact(&query, limit, filter).unwrap());
            for pair in hits.windows(2) {
                prop_assert!(pair[0].1 > pair[1].1 || (pair[0].1 == pair[1].1 && pair[0].0 < pair[1].0));
            }
            for (key, score) in &hits {
                prop_assert!(keep(key));
                prop_assert_eq!(*score, dot(&qn, index.get(key).unwrap().unwrap()));
            }
        }
    }

    /// splitmix64, and normal values by Box-Muller.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn unit(&mut self) -> f64 {
            ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f32 {
            let (u, v) = (self.unit(), self.unit());
            ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
        }
    }

    /// 5,000 random unit vectors of 384 values (search screens them): the result
    /// is the exact scan's, for several seeds, with and without a filter.
    #[test]
    fn screen_matches_exact_on_random_unit_vectors() {
        const ROWS: usize = 5000;
        const { assert!(ROWS >= SCREEN_ROWS) };
        for seed in [1, 2, 3, 4, 5] {
            let mut rng = Rng(seed);
            let mut index = VectorIndex::new(384).unwrap();
            for i in 0..ROWS {
                let v: Vec<f32> = (0..384).map(|_| rng.normal()).collect();
                index.upsert(&format!("k{i}"), &v).unwrap();
            }
            let every_third = |key: &str| key[1..].parse::<usize>().unwrap() % 3 == 0;
            for _ in 0..10 {
                let q: Vec<f32> = (0..384).map(|_| rng.normal()).collect();
                let hits = index.search(&q, 10, None).unwrap();
                assert_eq!(hits.len(), 10);
                assert_eq!(hits, index.search_exact(&q, 10, None).unwrap());
                let hits = index.search(&q, 10, Some(&every_third)).unwrap();
                assert!(hits.iter().all(|(k, _)| every_third(k)));
                assert_eq!(
                    hits,
                    index.search_exact(&q, 10, Some(&every_third)).unwrap()
                );
            }
            // A stored vector finds itself first, with its exact score.
            let key = "k1234";
            let v = index.get(key).unwrap().unwrap().to_vec();
            let hits = index.search(&v, 3, None).unwrap();
            assert_eq!(hits[0], (key.to_string(), dot(&v, &v)));
            assert_eq!(hits, index.search_exact(&v, 3, None).unwrap());
        }
    }

    /// Codes follow the rows through replacement, removals and a save and load.
    #[test]
    fn codes_follow_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut rng = Rng(9);
        let mut index = VectorIndex::new(16).unwrap();
        for i in 0..SCREEN_ROWS + 100 {
            let v: Vec<f32> = (0..16).map(|_| rng.normal()).collect();
            index.upsert(&format!("k{i}"), &v).unwrap();
        }
        index.upsert("k5", &[1.0; 16]).unwrap();
        assert!(index.remove("k7").unwrap());
        assert_eq!(index.remove_where(|k| k.ends_with('3')).unwrap(), 420);
        for (row, key) in index.keys().iter().enumerate() {
            let mut codes = [0i8; 16];
            let quantum = quantize(index.get(key).unwrap().unwrap(), &mut codes);
            assert_eq!(&index.codes[row * 16..(row + 1) * 16], &codes[..]);
            assert_eq!(index.quanta[row], quantum);
        }
        assert_eq!(
            &index.codes[index.position["k5"] * 16..][..16],
            &[127i8; 16]
        );
        index.save(&path, 1).unwrap();
        let (loaded, _) = VectorIndex::load(&path).unwrap();
        assert_eq!(loaded, index);
        let q: Vec<f32> = (0..16).map(|_| rng.normal()).collect();
        assert_eq!(
            loaded.search(&q, 50, None).unwrap(),
            index.search_exact(&q, 50, None).unwrap()
        );
    }
}
