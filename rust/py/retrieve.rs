//! Python classes and functions of the generic retrieval engine: dense vectors, the
//! BM25F lexical index, the tokenizer and the fusion of channels. No logic here: see
//! `crate::retrieve`.

use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString};

use super::convert::{Checked, FsPath, Int, Real, Text};
use super::detached;
use super::errors::InvalidInputError;
use crate::retrieve::tokenize::tokens_with;
use crate::retrieve::{
    fuse as fuse_channels, Bm25Params, Channel, Document, LexicalIndex, Normalization, VectorIndex,
    MAX_FIELDS, MAX_FIELD_TOKENS,
};

/// Dense vectors by key, one contiguous float32 matrix searched by brute force
/// (cosine: rows are L2-normalised on insert), screened with an int8 copy and
/// reranked exactly, so the results are the exact scan's. Saved to and loaded from
/// one file.
#[pyclass(module = "aircher_mem._core", name = "VectorIndex")]
pub struct PyVectorIndex {
    index: VectorIndex,
}

/// The rows of a 2-D numpy array of float32, or of float64 rounded to float32, with
/// its shape; InvalidInputError for any other object.
fn float_rows(array: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<Vec<f32>>)> {
    if let Ok(array) = array.extract::<PyReadonlyArray2<'_, f32>>() {
        let view = array.as_array();
        return Ok((
            view.shape().to_vec(),
            view.rows().into_iter().map(|r| r.to_vec()).collect(),
        ));
    }
    if let Ok(array) = array.extract::<PyReadonlyArray2<'_, f64>>() {
        let view = array.as_array();
        return Ok((
            view.shape().to_vec(),
            view.rows()
                .into_iter()
                .map(|r| r.iter().map(|&x| x as f32).collect())
                .collect(),
        ));
    }
    Err(not_floats(array, "vectors must be a 2-D"))
}

/// A 1-D numpy array of float32, or of float64 rounded to float32; InvalidInputError
/// for any other object.
fn float_vector(array: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    if let Ok(array) = array.extract::<PyReadonlyArray1<'_, f32>>() {
        return Ok(array.as_array().to_vec());
    }
    if let Ok(array) = array.extract::<PyReadonlyArray1<'_, f64>>() {
        return Ok(array.as_array().iter().map(|&x| x as f32).collect());
    }
    Err(not_floats(array, "the query must be a 1-D"))
}

/// The error for an object that is not a float array of the rank wanted.
fn not_floats(array: &Bound<'_, PyAny>, wanted: &str) -> PyErr {
    let got = match array.cast::<numpy::PyUntypedArray>() {
        Ok(array) => format!(
            "a {}-D array of {}",
            array.ndim(),
            array
                .dtype()
                .str()
                .map_or_else(|_| "?".to_string(), |s| s.to_string())
        ),
        Err(_) => array
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string()),
    };
    InvalidInputError::new_err(format!(
        "{wanted} numpy array of float32 or float64, got {got}"
    ))
}

#[pymethods]
impl PyVectorIndex {
    #[new]
    fn new(dim: Int<usize>) -> PyResult<Self> {
        Ok(Self {
            index: VectorIndex::new(dim.0)?,
        })
    }

    #[getter]
    fn dim(&self) -> usize {
        self.index.dim()
    }

    fn __len__(&self) -> usize {
        self.index.len()
    }

    /// The keys, in row order.
    fn keys(&self) -> Vec<String> {
        self.index.keys().to_vec()
    }

    /// Sets the vector of each key (row `i` of `vectors` for `keys[i]`). A wrong
    /// shape, a non-finite or all-zero row raises InvalidInputError; rows before
    /// the bad one are kept.
    fn upsert(
        &mut self,
        py: Python<'_>,
        keys: Checked<Vec<Text>>,
        vectors: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let keys = keys.0;
        let (shape, rows) = float_rows(vectors)?;
        if shape != [keys.len(), self.index.dim()] {
            return Err(InvalidInputError::new_err(format!(
                "vectors must have shape ({}, {}), got {shape:?}",
                keys.len(),
                self.index.dim(),
            )));
        }
        let index = &mut self.index;
        detached(py, || -> crate::Result<()> {
            for (key, row) in keys.iter().zip(&rows) {
                index.upsert(&key.0, row)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The stored (normalized) vectors of `keys`, one row each, float32; a key
    /// without one gets a row of NaN. StoreCorruptError when the file a loaded
    /// index reads is damaged.
    fn get<'py>(
        &self,
        py: Python<'py>,
        keys: Checked<Vec<Text>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let (keys, dim, index) = (keys.0, self.index.dim(), &self.index);
        let flat = detached(py, || -> crate::Result<Vec<f32>> {
            let mut flat = Vec::with_capacity(keys.len() * dim);
            for key in &keys {
                match index.get(&key.0)? {
                    Some(vector) => flat.extend_from_slice(vector),
                    None => flat.extend(std::iter::repeat_n(f32::NAN, dim)),
                }
            }
            Ok(flat)
        })?;
        let rows = numpy::ndarray::Array2::from_shape_vec((keys.len(), dim), flat)
            .map_err(|e| InvalidInputError::new_err(e.to_string()))?;
        Ok(rows.into_pyarray(py))
    }

    /// Removes the keys; returns how many there were. StoreCorruptError when the
    /// file a loaded index reads is damaged (the index is copied into memory at its
    /// first change).
    fn remove(&mut self, py: Python<'_>, keys: Checked<Vec<Text>>) -> PyResult<usize> {
        let keys: Vec<&str> = keys.0.iter().map(|k| k.0.as_str()).collect();
        let index = &mut self.index;
        Ok(detached(py, || index.remove_keys(&keys))?)
    }

    /// The `limit` keys most similar to `query` (cosine), best first.
    fn search(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        limit: Int<usize>,
    ) -> PyResult<Vec<(String, f32)>> {
        let query = float_vector(query)?;
        Ok(detached(py, || self.index.search(&query, limit.0, None))?)
    }

    /// Writes the index to `path` (temporary file, then rename; mode 0600).
    fn save(&self, py: Python<'_>, path: FsPath) -> PyResult<()> {
        Ok(detached(py, || self.index.save(&path.0, 0))?)
    }

    /// Reads an index written by `save`; StoreCorruptError for a damaged file.
    #[staticmethod]
    fn load(py: Python<'_>, path: FsPath) -> PyResult<Self> {
        let (index, _) = detached(py, || VectorIndex::load(&path.0))?;
        Ok(Self { index })
    }
}

/// The (key, value) pairs of a Python mapping (any `collections.abc.Mapping`), in
/// its iteration order: InvalidInputError for anything that is not a mapping, and
/// whatever converting a key or a value raises.
struct Pairs<K, V>(Vec<(K, V)>);

impl<'a, 'py, K, V> FromPyObject<'a, 'py> for Pairs<K, V>
where
    K: for<'b> FromPyObject<'b, 'py, Error = PyErr>,
    V: for<'b> FromPyObject<'b, 'py, Error = PyErr>,
{
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let Ok(mapping) = obj.cast::<PyMapping>() else {
            let kind = obj
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            return Err(InvalidInputError::new_err(format!(
                "a mapping argument must be a Mapping (got a value of type {kind})"
            )));
        };
        let mut pairs = Vec::new();
        for item in mapping.items()?.iter() {
            let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
            pairs.push((key.extract::<K>()?, value.extract::<V>()?));
        }
        Ok(Pairs(pairs))
    }
}

/// One document as Python passes it: (kind, key, group, {field: text}).
type DocumentTuple = (Text, Text, Text, Pairs<Text, Text>);

/// A BM25F index of generic documents (kind, key, group, text fields), saved to
/// and loaded from one file. Limits: at most MAX_FIELDS (32) distinct field names
/// in use at a time, the first MAX_FIELD_TOKENS (100 000) tokens of a field are
/// indexed, the first MAX_QUERY_TERMS (512) distinct known terms of a query are
/// searched for. With `stem=True`, documents and queries are stemmed (Snowball
/// English, for prose), the flag is saved with the index, and matched terms are
/// stems. Not locked: a call that overlaps a change (upsert, remove, remove_group:
/// they release the GIL) raises RuntimeError; searches may overlap.
#[pyclass(module = "aircher_mem._core", name = "LexicalIndex")]
pub struct PyLexicalIndex {
    index: LexicalIndex,
    /// What the file it was loaded from was saved with (`save`'s `generation`); 0
    /// for an index made in memory.
    generation: u64,
}

#[pymethods]
impl PyLexicalIndex {
    #[new]
    #[pyo3(signature = (*, stem = Checked(false)), text_signature = "(*, stem=False)")]
    fn new(stem: Checked<bool>) -> Self {
        Self {
            index: LexicalIndex::with_stemming(stem.0),
            generation: 0,
        }
    }

    /// The number the file this index was loaded from was saved with (`save`'s
    /// `generation`), so that a caller can tell whether it still goes with what it
    /// was saved beside; 0 for an index made in memory.
    #[getter]
    fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether documents and queries are stemmed (fixed when the index is made).
    #[getter]
    fn stem(&self) -> bool {
        self.index.stem()
    }

    /// The number of documents.
    fn __len__(&self) -> usize {
        self.index.len()
    }

    /// Whether a document has this key (False for anything but a str).
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> bool {
        key.cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok().map(|k| self.index.contains(k)))
            .unwrap_or(false)
    }

    /// The keys of the documents, sorted.
    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .index
            .documents()
            .map(|doc| doc.key.to_owned())
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Indexes each (kind, key, group, {field: text}); a key already present (or
    /// met earlier in the batch) is replaced. All or nothing: the whole batch is
    /// checked first, and InvalidInputError (nothing indexed) for a field name twice
    /// in a document or more than 32 distinct field names between those in use and
    /// the batch's. Tokenizes in parallel with the GIL released.
    fn upsert(&mut self, py: Python<'_>, documents: Checked<Vec<DocumentTuple>>) -> PyResult<()> {
        let docs: Vec<Document> = documents
            .0
            .into_iter()
            .map(|(kind, key, group, fields)| Document {
                kind: kind.0.into(),
                key: key.0,
                group: group.0,
                fields: fields
                    .0
                    .into_iter()
                    .map(|(n, t)| (n.0.into(), t.0))
                    .collect(),
                meta: Vec::new(),
            })
            .collect();
        let index = &mut self.index;
        detached(py, || -> crate::Result<()> {
            index.check_source()?;
            index.check_batch(&docs)?;
            index.upsert_all(docs)
        })?;
        Ok(())
    }

    /// Removes the documents with these keys; returns how many there were.
    fn remove(&mut self, py: Python<'_>, keys: Checked<Vec<Text>>) -> PyResult<usize> {
        self.index.check_source()?;
        let index = &mut self.index;
        let removed = detached(py, || keys.0.iter().filter(|k| index.remove(&k.0)).count());
        // A read of the file that failed on the way (damaged).
        index.check_source()?;
        Ok(removed)
    }

    /// Removes every document of `group`; returns how many there were.
    fn remove_group(&mut self, py: Python<'_>, group: Text) -> PyResult<usize> {
        self.index.check_source()?;
        let index = &mut self.index;
        let removed = detached(py, || index.remove_group(&group.0));
        // A read of the file that failed on the way (damaged).
        index.check_source()?;
        Ok(removed)
    }

    /// The `limit` documents that score highest for `query` with BM25F, best first
    /// (equal scores by key), as (key, score, matched terms): only documents of
    /// `kinds` (all if empty). A field's weight is 1.0 unless given (0 ignores it).
    /// InvalidInputError for k1 < 0, b outside [0, 1], a weight < 0 or any of them
    /// not finite.
    #[pyo3(
        signature = (query, limit, *, kinds = Checked(Vec::new()), field_weights = Checked(None), k1 = Real(1.2), b = Real(0.75)),
        text_signature = "($self, query, limit, *, kinds=(), field_weights=None, k1=1.2, b=0.75)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: Text,
        limit: Int<usize>,
        kinds: Checked<Vec<Text>>,
        field_weights: Checked<Option<Pairs<Text, Real>>>,
        k1: Real,
        b: Real,
    ) -> PyResult<Vec<(String, f64, Vec<String>)>> {
        let params = Bm25Params {
            k1: k1.0,
            b: b.0,
            field_weights: field_weights
                .0
                .map(|pairs| pairs.0.into_iter().map(|(n, w)| (n.0, w.0)).collect())
                .unwrap_or_default(),
        };
        params.validate()?;
        self.index.check_source()?;
        let kinds: Vec<&str> = kinds.0.iter().map(|k| k.0.as_str()).collect();
        let hits = detached(py, || {
            (self.index).try_search(&query.0, &params, &kinds, limit.0)
        })?;
        Ok(hits
            .into_iter()
            .map(|hit| (hit.key, hit.score, hit.matched))
            .collect())
    }

    /// Writes the index to `path` (temporary file, then rename; mode 0600), with
    /// `generation` (an unsigned 64-bit number), which `load` gives back.
    #[pyo3(signature = (path, *, generation = Int(0)), text_signature = "($self, path, *, generation=0)")]
    fn save(&self, py: Python<'_>, path: FsPath, generation: Int<u64>) -> PyResult<()> {
        self.index.check_source()?;
        Ok(detached(py, || self.index.save(&path.0, generation.0))?)
    }

    /// Reads an index written by `save`; SchemaVersionError for a file of another
    /// format version, StoreCorruptError for a damaged file (either: rebuild it). The
    /// index keeps reading its posting lists from the file, mapped: replace the file
    /// by renaming another over it (as `save` does), never rewrite it in place while
    /// an index loaded from it is in use (a search, change or save after such a
    /// write is StoreCorruptError).
    #[staticmethod]
    fn load(py: Python<'_>, path: FsPath) -> PyResult<Self> {
        let (index, generation) = detached(py, || LexicalIndex::load(&path.0))?;
        Ok(Self { index, generation })
    }
}

// The limits the docstrings state.
const _: () = assert!(MAX_FIELDS == 32 && MAX_FIELD_TOKENS == 100_000);
const _: () = assert!(crate::retrieve::lexical::MAX_QUERY_TERMS == 512);

/// The tokens of `text` the lexical index indexes and searches for, in order: each
/// word lowercased, then its parts (snake_case, camelCase, digits), stop words,
/// code noise and tokens of fewer than 2 characters or more than 64 bytes left out;
/// with `stem=True`, each replaced by its Snowball English stem (as an index made
/// with `stem=True` does), a stem that is a stop word left out.
#[pyfunction]
#[pyo3(signature = (text, *, stem = Checked(false)), text_signature = "(text, *, stem=False)")]
pub fn tokenize(py: Python<'_>, text: Text, stem: Checked<bool>) -> Vec<String> {
    detached(py, || tokens_with(&text.0, stem.0))
}

/// The pairs of `texts` (by index) whose sets of stemmed tokens (as
/// `tokenize(text, stem=True)` gives them) have a cosine of at least `threshold`,
/// each later text that is `fresh` against every earlier one: (later, earlier,
/// cosine), by later text, each one's best first. An exact all-pairs join (prefix
/// and size filtering), in Rust without the GIL.
#[pyfunction]
#[pyo3(signature = (texts, fresh, threshold), text_signature = "(texts, fresh, threshold)")]
pub fn similar_pairs(
    py: Python<'_>,
    texts: Checked<Vec<Text>>,
    fresh: Checked<Vec<bool>>,
    threshold: Real,
) -> Vec<(usize, usize, f64)> {
    let texts: Vec<String> = texts.0.into_iter().map(|t| t.0).collect();
    let fresh = fresh.0;
    detached(py, || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        crate::retrieve::similar_pairs(&refs, &fresh, threshold.0)
            .into_iter()
            .map(|p| (p.later, p.earlier, p.similarity))
            .collect()
    })
}

/// One session as `segment_sessions` takes it: its texts, their times and groups,
/// and how many of its first texts are a run already made.
type SessionTuple = (Vec<Text>, Vec<f64>, Vec<u64>, Int<usize>);

/// For each session (texts said at times, in groups, the first `keep` of them a run
/// already made), where its topical runs start after those, and why: (index,
/// "gap" | "group" | "size" | "topic"), in order. A run starts at a gap of more
/// than `gap` seconds or a change of group; between those, at a topic shift: a
/// point where the `window` texts before it and the `window` after it are least
/// alike (the cosine of their stemmed token counts, blended by the weight `meaning`
/// with the cosine of their summed vectors where `vectors` embed both sides: one
/// 2-D array or None per session, a row per text, NaN rows for texts without one),
/// its depth below the nearest peaks on both sides at least `depth`, deepest first,
/// at least `min_len` texts after a run's start and from another shift; a run of
/// more than `max_len` texts is cut. The sessions are segmented on the thread pool.
#[pyfunction]
#[pyo3(
    signature = (sessions, *, gap, min_len, window, depth, max_len, vectors=None, meaning=Real(0.0)),
    text_signature = "(sessions, *, gap, min_len, window, depth, max_len, vectors=None, meaning=0.0)"
)]
#[allow(clippy::too_many_arguments)]
pub fn segment_sessions(
    py: Python<'_>,
    sessions: Checked<Vec<SessionTuple>>,
    gap: Real,
    min_len: Int<usize>,
    window: Int<usize>,
    depth: Real,
    max_len: Int<usize>,
    vectors: Option<Vec<Option<Bound<'_, PyAny>>>>,
    meaning: Real,
) -> PyResult<Vec<Vec<(usize, &'static str)>>> {
    use rayon::prelude::*;
    let rule = crate::retrieve::Rule {
        gap: gap.0,
        min_len: min_len.0,
        window: window.0.max(1),
        depth: depth.0,
        meaning: meaning.0.clamp(0.0, 1.0),
        max_len: max_len.0.max(1),
    };
    let sessions = sessions.0;
    let embedded = session_vectors(vectors, &sessions)?;
    Ok(detached(py, || {
        sessions
            .par_iter()
            .zip(&embedded)
            .map(|((texts, times, groups, keep), rows)| {
                let refs: Vec<&str> = texts.iter().map(|t| t.0.as_str()).collect();
                let rows: Vec<Option<&[f32]>> = rows.iter().map(|r| r.as_deref()).collect();
                crate::retrieve::segment(&refs, times, groups, &rows, keep.0, rule)
                    .into_iter()
                    .map(|(at, why)| {
                        let name = match why {
                            crate::retrieve::Break::TimeGap => "gap",
                            crate::retrieve::Break::GroupSwitch => "group",
                            crate::retrieve::Break::Size => "size",
                            crate::retrieve::Break::TopicShift => "topic",
                        };
                        (at, name)
                    })
                    .collect()
            })
            .collect()
    }))
}

/// The vectors `segment_sessions` was given, one list a session (empty: none), a
/// row of non-finite values read as no vector; InvalidInputError for anything but
/// one 2-D array (or None) per session with a row per text.
fn session_vectors(
    vectors: Option<Vec<Option<Bound<'_, PyAny>>>>,
    sessions: &[SessionTuple],
) -> PyResult<Vec<Vec<Option<Vec<f32>>>>> {
    let Some(vectors) = vectors else {
        return Ok(vec![Vec::new(); sessions.len()]);
    };
    if vectors.len() != sessions.len() {
        return Err(InvalidInputError::new_err(format!(
            "vectors must hold one array (or None) per session: {} sessions, {} given",
            sessions.len(),
            vectors.len()
        )));
    }
    let mut out = Vec::with_capacity(sessions.len());
    for (array, (texts, ..)) in vectors.iter().zip(sessions) {
        let Some(array) = array else {
            out.push(Vec::new());
            continue;
        };
        let (shape, rows) = float_rows(array)?;
        if shape[0] != texts.len() {
            return Err(InvalidInputError::new_err(format!(
                "vectors must have a row per text: {} texts, shape {shape:?}",
                texts.len()
            )));
        }
        out.push(
            rows.into_iter()
                .map(|row| row.iter().all(|x| x.is_finite()).then_some(row))
                .collect(),
        );
    }
    Ok(out)
}

/// One channel as Python passes it: (name, weight, [(key, raw score)]).
type ChannelTuple = (Text, Real, Vec<(Text, Real)>);

/// Fuses retrieval channels into one ranking: each channel's raw scores are
/// normalized over what it returned ("minmax": (s - min) / (max - min); "zscore":
/// (s - min) / std; 1.0 for all when they are equal), weighted and summed. Returns
/// every key some channel returned as (key, fused score, [(channel, raw,
/// normalized, weight)]), best first, equal scores by key. A key listed twice in a
/// channel counts once with its highest score, non-finite scores are skipped, a
/// non-finite weight counts as 0. InvalidInputError for another normalization.
#[pyfunction]
#[pyo3(
    signature = (channels, normalization = Text("minmax".to_string())),
    text_signature = "(channels, normalization='minmax')"
)]
#[allow(clippy::type_complexity)]
pub fn fuse(
    py: Python<'_>,
    channels: Checked<Vec<ChannelTuple>>,
    normalization: Text,
) -> PyResult<Vec<(String, f64, Vec<(String, f64, f64, f64)>)>> {
    let normalization: Normalization = normalization.0.parse()?;
    let channels: Vec<(String, f64, Vec<(String, f64)>)> = channels
        .0
        .into_iter()
        .map(|(name, weight, scores)| {
            let scores = scores.into_iter().map(|(k, s)| (k.0, s.0)).collect();
            (name.0, weight.0, scores)
        })
        .collect();
    let fused = detached(py, || {
        let channels: Vec<Channel<'_, String>> = channels
            .iter()
            .map(|(name, weight, scores)| Channel {
                name,
                weight: *weight,
                scores,
            })
            .collect();
        fuse_channels(&channels, normalization)
    });
    Ok(fused
        .into_iter()
        .map(|f| {
            let channels = f
                .channels
                .into_iter()
                .map(|c| (c.name, c.raw, c.normalized, c.weight))
                .collect();
            (f.key, f.score, channels)
        })
        .collect())
}
