//! Python classes and functions of the prose analysis. No logic here: see
//! `crate::prose`.

use pyo3::prelude::*;

use super::convert::{Checked, Int, Text};
use super::detached;
use crate::prose;

fn strs(texts: &[Text]) -> Vec<&str> {
    texts.iter().map(|t| t.0.as_str()).collect()
}

/// Cleaned texts read once: their sentences and words classified, without the GIL
/// (as the sentences' ranking is, when a form first needs it). Each method gives one
/// form of them (see ``aircher_mem.longterm.compress``).
#[pyclass(module = "aircher_mem._core", name = "ProseAnalysis", frozen)]
pub struct PyProseAnalysis {
    analysis: prose::Analysis,
}

#[pymethods]
impl PyProseAnalysis {
    /// Sentences ranked by centrality (the first ones); later ones are not candidates.
    #[classattr]
    const MAX_SENTENCES: usize = prose::MAX_SENTENCES;
    /// Sentences a key point keeps at most.
    #[classattr]
    const KEY_POINT_SENTENCES: usize = prose::KEY_POINT_SENTENCES;
    /// A headline's length at most, "..." included.
    #[classattr]
    const HEADLINE_CHARS: usize = prose::HEADLINE_CHARS;

    /// Analyzes ``texts`` (their term counts made when a form first ranks sentences).
    #[new]
    #[pyo3(text_signature = "(texts)")]
    fn new(py: Python<'_>, texts: Checked<Vec<Text>>) -> Self {
        let analysis = detached(py, || prose::analyze(&strs(&texts.0)));
        PyProseAnalysis { analysis }
    }

    /// The ``sentences`` most central sentences, joined.
    fn summary(&self, py: Python<'_>, sentences: Int<usize>) -> String {
        detached(py, || self.analysis.summary(sentences.0))
    }

    /// The key point of a text of ``chars`` characters (never longer).
    fn key_point(&self, py: Python<'_>, chars: Int<usize>) -> String {
        detached(py, || self.analysis.key_point(chars.0))
    }

    /// The key words, at most ``max_words`` (``fillers``: fillers kept).
    fn compressed(&self, max_words: Int<usize>, fillers: Checked<bool>) -> String {
        self.analysis.compressed(max_words.0, fillers.0)
    }

    /// The key terms, best first.
    fn terms(&self) -> Vec<String> {
        self.analysis.terms()
    }

    /// The most central sentence, cut to ``max_words`` words.
    fn headline(&self, py: Python<'_>, max_words: Int<usize>) -> String {
        detached(py, || self.analysis.headline(max_words.0))
    }

    /// At most ``n`` search tags.
    fn tags(&self, n: Int<usize>) -> Vec<String> {
        self.analysis.tags(n.0)
    }

    /// The entities as first written, distinct ignoring case.
    fn entities(&self) -> Vec<String> {
        self.analysis.entities()
    }

    /// The sentences that state a decision, distinct.
    fn decisions(&self) -> Vec<String> {
        self.analysis.decisions()
    }

    /// The open questions, distinct.
    fn questions(&self, py: Python<'_>) -> Vec<String> {
        detached(py, || self.analysis.questions())
    }
}

/// The sentences of a cleaned text.
#[pyfunction]
#[pyo3(text_signature = "(text)")]
pub fn prose_sentences(text: Text) -> Vec<String> {
    prose::sentences(&text.0)
}

/// The words of a cleaned text that are not stop words, lowercased, in order.
#[pyfunction]
#[pyo3(text_signature = "(text)")]
pub fn prose_content_words(text: Text) -> Vec<String> {
    prose::content_words(&text.0)
}

/// The levels (summary, compressed, index) of each cleaned text, in order, on the
/// thread pool.
#[pyfunction]
#[pyo3(text_signature = "(texts, sentences)")]
pub fn prose_levels(
    py: Python<'_>,
    texts: Checked<Vec<Text>>,
    sentences: Int<usize>,
) -> Vec<(String, String, String)> {
    detached(py, || prose::levels_of_many(&strs(&texts.0), sentences.0))
}

/// A digest (headline, summary, compressed, index, key_points, entities,
/// decisions, questions, tags) of each batch of cleaned texts, in order, on the
/// thread pool.
#[pyfunction]
#[pyo3(text_signature = "(batches, sentences)")]
pub fn prose_digests(
    py: Python<'_>,
    batches: Checked<Vec<Vec<Text>>>,
    sentences: Int<usize>,
) -> Vec<Digested> {
    let made = detached(py, || {
        let batches: Vec<Vec<&str>> = batches.0.iter().map(|texts| strs(texts)).collect();
        prose::digests(&batches, sentences.0)
    });
    made.into_iter()
        .map(|d| {
            (
                d.headline,
                d.summary,
                d.compressed,
                d.index,
                d.key_points,
                d.entities,
                d.decisions,
                d.questions,
                d.tags,
            )
        })
        .collect()
}

/// A digest as Python receives it.
type Digested = (
    String,
    String,
    String,
    String,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
);
