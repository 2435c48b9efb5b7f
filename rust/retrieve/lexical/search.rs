//! BM25F search: terms scored rarest first, with safe pruning once the
//! remaining terms cannot change the result.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::ControlFlow;

use super::inplace::{U32s, View};
use super::{Bm25Params, LexicalHit, LexicalIndex, QueryTerms, DEAD, MAX_QUERY_TERMS};
use crate::error::Result;
use crate::retrieve::postings::{ListRef, Posting};
use crate::retrieve::tokenize::{for_each_token_with, stem, FILLER_WORDS};

thread_local! {
    /// Score accumulators of `search`, reused across calls on a thread.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

#[derive(Default)]
struct Scratch {
    /// Per slot; zero except at `touched`.
    scores: Vec<f64>,
    touched: Vec<u32>,
    /// Scores to select from.
    values: Vec<f64>,
}

/// The `k`-th largest of `values` (reordered), if there are that many.
fn kth_largest(values: &mut [f64], k: usize) -> Option<f64> {
    if k == 0 || values.len() < k {
        return None;
    }
    let (_, kth, _) = values.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Some(*kth)
}

/// Whether a document with `score` so far, which the remaining terms can raise by
/// at most `bound`, ends below `theta` for sure (with a margin for rounding), so
/// that it cannot tie with the documents that reach `theta`.
fn below(score: f64, bound: f64, theta: f64) -> bool {
    (score + bound) * (1.0 + 1e-9) < theta
}

impl Scratch {
    fn reset(&mut self, slots: usize) {
        for &slot in &self.touched {
            self.scores[slot as usize] = 0.0;
        }
        self.touched.clear();
        if self.scores.len() < slots {
            self.scores.resize(slots, 0.0);
        }
    }
}

/// Lengths up to this get their BM25F length normalization from a table computed
/// once per query; longer ones compute it (the same way).
const NORM_TABLE: usize = 1024;

/// Per field, `w_f / (1 - b + b * len / avglen_f)`: what a term frequency in the
/// field is multiplied by (0 for a field of weight 0).
struct Norms {
    table: Vec<f64>,
    weights: Vec<f64>,
    slope: Vec<f64>,
    flat: f64,
}

impl Norms {
    fn new(index: &LexicalIndex, weights: &[f64], b: f64) -> Norms {
        // b / avglen_f, to multiply by len_f.
        let slope: Vec<f64> = (0..index.fields.len())
            .map(|f| match index.field_docs[f] {
                0 => 0.0,
                docs => b / (index.field_total[f] as f64 / docs as f64),
            })
            .collect();
        let mut norms = Norms {
            table: Vec::new(),
            weights: weights.to_vec(),
            slope,
            flat: 1.0 - b,
        };
        norms.table = (0..weights.len())
            .flat_map(|f| (0..NORM_TABLE as u32).map(move |len| (f, len)))
            .map(|(f, len)| norms.compute(f, len))
            .collect();
        norms
    }

    fn compute(&self, field: usize, len: u32) -> f64 {
        let weight = self.weights[field];
        if weight > 0.0 {
            weight / (self.flat + self.slope[field] * len as f64)
        } else {
            0.0
        }
    }

    #[inline]
    fn get(&self, field: usize, len: u32) -> f64 {
        match self.table.get(field * NORM_TABLE + len as usize) {
            Some(&norm) if (len as usize) < NORM_TABLE => norm,
            _ => self.compute(field, len),
        }
    }
}

/// Endings that English words of code and prose take after their Snowball stem.
const ENDINGS: [&str; 16] = [
    "", "e", "s", "es", "ed", "ing", "er", "ers", "or", "ors", "ion", "ions", "ation", "y", "ies",
    "ied",
];

/// Candidate other forms of `word` (lower-case): its stem with each of [`ENDINGS`],
/// also after a stem's final `i` turned back to `y` (`repli` -> `reply`) and with a
/// doubled final consonant (`run` -> `running`). A candidate is a form of the word
/// only if it has the same stem (the caller checks, for the few that are indexed).
pub(super) fn word_forms(word: &str) -> Vec<String> {
    let root = stem(word);
    let mut bases: Vec<String> = vec![root.to_string()];
    if let Some(base) = root.strip_suffix('i') {
        bases.push(format!("{base}y"));
    }
    let mut out: Vec<String> = Vec::new();
    let mut push = |form: String| {
        if form != word && !out.contains(&form) {
            out.push(form);
        }
    };
    for base in &bases {
        for ending in ENDINGS {
            push(format!("{base}{ending}"));
        }
    }
    if let Some(last) = root
        .chars()
        .last()
        .filter(|c| c.is_ascii_alphabetic() && !"aeiouy".contains(*c))
    {
        for ending in ["ing", "ed", "er", "ers"] {
            push(format!("{root}{last}{ending}"));
        }
    }
    out
}

/// What a search reads of an index: held in memory, or read where its file
/// holds it (`View`): one search for both.
pub(super) trait Source {
    fn slots(&self) -> usize;
    fn term_id(&self, term: &str) -> Result<Option<u32>>;
    fn term(&self, id: u32) -> Result<&str>;
    fn df(&self, id: u32) -> Result<u32>;
    fn list(&self, id: u32) -> Result<ListRef<'_>>;
    fn kind_of(&self) -> Result<U32s<'_>>;
    fn lengths(&self, field: usize) -> Result<U32s<'_>>;
    fn key(&self, slot: u32) -> Result<&str>;
}

/// An index in memory as a `Source`.
struct Held<'a>(&'a LexicalIndex);

impl Source for Held<'_> {
    fn slots(&self) -> usize {
        self.0.docs.len()
    }
    fn term_id(&self, term: &str) -> Result<Option<u32>> {
        Ok(self.0.terms.id(term))
    }
    fn term(&self, id: u32) -> Result<&str> {
        Ok(self.0.terms.get(id))
    }
    fn df(&self, id: u32) -> Result<u32> {
        Ok(self.0.df[id as usize])
    }
    fn list(&self, id: u32) -> Result<ListRef<'_>> {
        Ok(self.0.postings[id as usize].as_ref())
    }
    fn kind_of(&self) -> Result<U32s<'_>> {
        Ok(U32s::Held(&self.0.kind_of))
    }
    fn lengths(&self, field: usize) -> Result<U32s<'_>> {
        Ok(U32s::Held(&self.0.field_len[field]))
    }
    fn key(&self, slot: u32) -> Result<&str> {
        Ok(self.0.key_of(slot))
    }
}

impl Source for View {
    fn slots(&self) -> usize {
        self.slots
    }
    fn term_id(&self, term: &str) -> Result<Option<u32>> {
        View::term_id(self, term)
    }
    fn term(&self, id: u32) -> Result<&str> {
        View::term(self, id)
    }
    fn df(&self, id: u32) -> Result<u32> {
        Ok(self.stats(id)?.0)
    }
    fn list(&self, id: u32) -> Result<ListRef<'_>> {
        View::list(self, id)
    }
    fn kind_of(&self) -> Result<U32s<'_>> {
        View::kind_of(self)
    }
    fn lengths(&self, field: usize) -> Result<U32s<'_>> {
        View::lengths(self, field)
    }
    fn key(&self, slot: u32) -> Result<&str> {
        Ok(self.doc(slot)?.key)
    }
}

impl LexicalIndex {
    /// The `limit` documents that score highest for `query` with BM25F (see
    /// [`Bm25Params`]), best first, equal scores by key; only documents of `kinds`
    /// (all if empty). Document count and frequencies are over the whole index.
    /// `params` out of range are brought into range (see [`Bm25Params::clamped`]):
    /// check them with [`Bm25Params::validate`] where they come in.
    ///
    /// Terms are scored rarest first, each document's gains summed in that order
    /// (a function of the documents only, so equal indexes give equal scores bit
    /// for bit). Once the `limit`-th best score so far is above what the remaining
    /// terms could add, documents not yet found cannot make it: the remaining,
    /// common terms are looked up for the candidates only (safe pruning: the
    /// result is the one scoring every document would give).
    pub fn search(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
    ) -> Vec<LexicalHit> {
        self.search_or_note(query, params, kinds, limit, QueryTerms::default())
    }

    /// `search_with`, its error (a file read in place found damaged) noted for
    /// `check_source` and no hits.
    fn search_or_note(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
        weighing: QueryTerms,
    ) -> Vec<LexicalHit> {
        match self.search_with(query, params, kinds, limit, weighing, true) {
            Ok(hits) => hits,
            Err(err) => {
                if let Some(view) = &self.frozen {
                    view.fail(err);
                }
                Vec::new()
            }
        }
    }

    /// [`LexicalIndex::search`], or the error that an index read in place met
    /// in its file (damaged: rebuild it).
    pub fn try_search(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        self.search_with(query, params, kinds, limit, QueryTerms::default(), true)
    }

    /// [`LexicalIndex::search_weighed`], or the error that an index read in
    /// place met in its file (damaged: rebuild it).
    pub fn try_search_weighed(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
        weighing: QueryTerms,
    ) -> Result<Vec<LexicalHit>> {
        self.search_with(query, params, kinds, limit, weighing, true)
    }

    /// [`LexicalIndex::search`] with the query's terms weighed by `weighing`: each
    /// term's idf raised to `idf_exponent` and, when `forms` > 0, the other indexed
    /// forms of each query word searched too with that weight (see [`QueryTerms`]).
    pub fn search_weighed(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
        weighing: QueryTerms,
    ) -> Vec<LexicalHit> {
        self.search_or_note(query, params, kinds, limit, weighing)
    }

    pub(super) fn search_with(
        &self,
        query: &str,
        params: &Bm25Params,
        kinds: &[&str],
        limit: usize,
        weighing: QueryTerms,
        prune: bool,
    ) -> Result<Vec<LexicalHit>> {
        match &self.frozen {
            Some(view) => self.search_in(&**view, (query, params, kinds, limit), weighing, prune),
            None => self.search_in(&Held(self), (query, params, kinds, limit), weighing, prune),
        }
    }

    fn search_in<S: Source>(
        &self,
        src: &S,
        (query, params, kinds, limit): (&str, &Bm25Params, &[&str], usize),
        weighing: QueryTerms,
        prune: bool,
    ) -> Result<Vec<LexicalHit>> {
        if limit == 0 || self.live == 0 {
            return Ok(Vec::new());
        }
        let params = params.clamped();
        let allowed: Option<Vec<bool>> = (!kinds.is_empty()).then(|| {
            let mut allowed = vec![false; self.kinds.len()];
            for kind in kinds {
                if let Some(&id) = self.kind_ids.get(*kind) {
                    allowed[id as usize] = true;
                }
            }
            allowed
        });
        if allowed.as_ref().is_some_and(|a| !a.contains(&true)) {
            return Ok(Vec::new());
        }
        let kind_of = src.kind_of()?;
        let wanted = |slot: u32| {
            let kind = kind_of.get(slot as usize);
            kind != DEAD
                && allowed
                    .as_ref()
                    .is_none_or(|a| a.get(kind as usize).copied().unwrap_or(false))
        };
        let mut weighed = self.query_terms(src, query, weighing.forms)?;
        if weighed.is_empty() {
            return Ok(Vec::new());
        }
        self.weigh_prose_only(src, &mut weighed, weighing, query)?;
        let field_len: Vec<U32s<'_>> = (0..self.fields.len())
            .map(|f| src.lengths(f))
            .collect::<Result<_>>()?;
        // Each term's list, its frequency and text, read once.
        let mut lists = Vec::with_capacity(weighed.len());
        for &(term, _, _) in &weighed {
            lists.push((src.list(term)?, src.df(term)?, src.term(term)?));
        }
        let list_of = |term: u32| -> usize {
            weighed
                .iter()
                .position(|&(t, _, _)| t == term)
                .expect("a query term")
        };
        let mut weights = vec![1.0; self.fields.len()];
        for (name, weight) in &params.field_weights {
            if let Some(field) = self.field_id(name) {
                weights[field] = *weight;
            }
        }
        let norms = Norms::new(self, &weights, params.b);
        // The other forms of a word count in `form_fields` only (all if empty).
        let form_weights: Vec<f64> = (0..self.fields.len())
            .map(|f| {
                let listed = weighing.form_fields.is_empty()
                    || weighing.form_fields.contains(&self.fields[f].as_str());
                if listed {
                    weights[f]
                } else {
                    0.0
                }
            })
            .collect();
        let form_norms = Norms::new(self, &form_weights, params.b);
        let k1 = params.k1;
        let n = self.live as f64;
        // Rarest first; ties by the term itself.
        let mut order = weighed.clone();
        let info = |term: u32| {
            let (_, df, text) = lists[list_of(term)];
            (df, text)
        };
        order.sort_unstable_by(|&(a, _, _), &(b, _, _)| info(a).cmp(&info(b)));
        let exponent = if weighing.idf_exponent.is_finite() {
            weighing.idf_exponent.max(0.0)
        } else {
            1.0
        };
        let idf: Vec<f64> = order
            .iter()
            .map(|&(term, weight, _)| {
                let df = info(term).0 as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                weight
                    * if exponent == 1.0 {
                        idf
                    } else {
                        idf.powf(exponent)
                    }
            })
            .collect();
        let is_form: Vec<bool> = order.iter().map(|&(_, _, form)| form).collect();
        let order: Vec<u32> = order.into_iter().map(|(term, _, _)| term).collect();
        // What the terms after the i-th can add at most (tf / (k1 + tf) < 1), with a
        // margin for rounding, and how many postings they have.
        let mut bound_after = vec![0.0; order.len()];
        let mut postings_after = vec![0usize; order.len()];
        for i in (0..order.len().saturating_sub(1)).rev() {
            bound_after[i] = bound_after[i + 1] + idf[i + 1] * (k1 + 1.0) * (1.0 + 1e-9);
            postings_after[i] = postings_after[i + 1] + lists[list_of(order[i + 1])].0.len();
        }
        // What `posting` adds to its document's term frequency (the postings of a
        // document for a term are summed in field order).
        let tf_of = |posting: Posting, norms: &Norms| -> f64 {
            let field = posting.field();
            let len = field_len[field].get(posting.doc as usize);
            posting.tf() as f64 * norms.get(field, len)
        };

        // Keys of the hits, to order equal scores (read once each).
        let hits: Vec<LexicalHit> = SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let scratch = &mut *scratch;
            scratch.reset(src.slots());
            let Scratch {
                scores,
                touched,
                values,
            } = scratch;
            // After the switch, the only documents that can still make the cut,
            // by slot.
            let mut candidates: Option<Vec<u32>> = None;
            for (i, &term) in order.iter().enumerate() {
                let idf = idf[i];
                let norms = if is_form[i] { &form_norms } else { &norms };
                let list = &lists[list_of(term)].0;
                let gain = |tf: f64| idf * tf * (k1 + 1.0) / (k1 + tf);
                match &mut candidates {
                    None => {
                        let mut add = |doc: u32, tf: f64| {
                            if tf > 0.0 {
                                let gain = gain(tf);
                                if gain > 0.0 {
                                    let score = &mut scores[doc as usize];
                                    if *score == 0.0 {
                                        touched.push(doc);
                                    }
                                    *score += gain;
                                }
                            }
                        };
                        let mut postings = list.iter();
                        if let Some(first) = postings.next() {
                            let (mut doc, mut tf) = (first.doc, tf_of(first, norms));
                            for posting in postings {
                                if posting.doc != doc {
                                    add(doc, tf);
                                    (doc, tf) = (posting.doc, 0.0);
                                }
                                tf += tf_of(posting, norms);
                            }
                            add(doc, tf);
                        }
                        // Worth checking when what is left to read outweighs the
                        // check itself.
                        if prune && postings_after[i] > touched.len() && touched.len() >= limit {
                            values.clear();
                            values.extend(
                                touched
                                    .iter()
                                    .filter(|&&d| wanted(d))
                                    .map(|&d| scores[d as usize]),
                            );
                            if let Some(theta) = kth_largest(values, limit) {
                                if bound_after[i] * (1.0 + 1e-9) < theta {
                                    #[cfg(test)]
                                    super::tests::PRUNED.with(|p| p.set(p.get() + 1));
                                    let mut kept: Vec<u32> = touched
                                        .iter()
                                        .copied()
                                        .filter(|&d| {
                                            wanted(d)
                                                && !below(scores[d as usize], bound_after[i], theta)
                                        })
                                        .collect();
                                    kept.sort_unstable();
                                    candidates = Some(kept);
                                }
                            }
                        }
                    }
                    Some(kept) => {
                        let mut cursor = list.cursor();
                        for &doc in kept.iter() {
                            cursor.seek(doc);
                            if cursor.head().is_none() {
                                break;
                            }
                            let mut tf = 0.0;
                            while let Some(posting) = cursor.head().filter(|p| p.doc == doc) {
                                tf += tf_of(posting, norms);
                                cursor.advance();
                            }
                            if tf > 0.0 {
                                scores[doc as usize] += gain(tf);
                            }
                        }
                        if kept.len() > limit {
                            values.clear();
                            values.extend(kept.iter().map(|&d| scores[d as usize]));
                            if let Some(theta) = kth_largest(values, limit) {
                                kept.retain(|&d| !below(scores[d as usize], bound_after[i], theta));
                            }
                        }
                    }
                }
            }
            let mut hits: Vec<(f64, u32)> = match &candidates {
                Some(kept) => kept.iter().map(|&d| (scores[d as usize], d)).collect(),
                None => touched
                    .iter()
                    .filter(|&&d| wanted(d))
                    .map(|&d| (scores[d as usize], d))
                    .collect(),
            };
            scratch.reset(0);
            let order = |a: &(f64, u32), b: &(f64, u32)| -> Ordering {
                b.0.total_cmp(&a.0).then_with(|| {
                    let key = |slot| src.key(slot).unwrap_or_default();
                    key(a.1).cmp(key(b.1))
                })
            };
            if hits.len() > limit {
                hits.select_nth_unstable_by(limit - 1, order);
                hits.truncate(limit);
            }
            hits.sort_unstable_by(order);
            hits.into_iter()
                .map(|(score, slot)| LexicalHit {
                    key: src.key(slot).unwrap_or_default().to_owned(),
                    score,
                    matched: weighed
                        .iter()
                        .zip(&lists)
                        .filter(|&(&(_, _, form), &(list, _, _))| {
                            matches(list, slot, if form { &form_weights } else { &weights })
                        })
                        .map(|(_, &(_, _, text))| text.to_owned())
                        .collect(),
                })
                .collect()
        });
        // A key that could not be read: the file is damaged where it is.
        if hits.iter().any(|hit| hit.key.is_empty()) {
            for slot in 0..src.slots().min(1) {
                src.key(slot as u32)?;
            }
        }
        Ok(hits)
    }

    /// The distinct known terms of `query` with their weights and whether each is
    /// another form of a query word, in order: at most
    /// `MAX_QUERY_TERMS`, the first ones, so a huge query costs a bounded search.
    /// Each query word's own form weighs 1; with `forms` > 0 (and an index that does
    /// not stem), the other indexed forms of the words (see [`word_forms`]) follow,
    /// weighing `forms`, unless the query has them as words of their own.
    fn query_terms<S: Source>(
        &self,
        src: &S,
        query: &str,
        forms: f64,
    ) -> Result<Vec<(u32, f64, bool)>> {
        let mut failed = None;
        let mut seen = HashSet::new();
        let mut terms = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let expand = forms > 0.0 && forms.is_finite() && !self.stem;
        let mut known = |token: &str| -> Option<u32> {
            let found = src
                .term_id(token)
                .and_then(|term| Ok(term.zip(term.map(|t| src.df(t)).transpose()?)));
            match found {
                Ok(Some((term, df))) if df > 0 => Some(term),
                Ok(_) => None,
                Err(err) => {
                    failed.get_or_insert(err);
                    None
                }
            }
        };
        for_each_token_with(query, self.stem, |token| {
            if let Some(term) = known(token) {
                if seen.insert(term) {
                    terms.push((term, 1.0, false));
                }
            }
            if expand && words.len() < MAX_QUERY_TERMS && !words.iter().any(|w| w == token) {
                words.push(token.to_owned());
            }
            if terms.len() == MAX_QUERY_TERMS {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        for word in &words {
            if terms.len() >= MAX_QUERY_TERMS {
                break;
            }
            for form in word_forms(word) {
                if let Some(term) = known(&form) {
                    if terms.len() < MAX_QUERY_TERMS
                        && !seen.contains(&term)
                        && stem(&form) == stem(word)
                    {
                        seen.insert(term);
                        terms.push((term, forms, true));
                    }
                }
            }
        }
        match failed {
            Some(err) => Err(err),
            None => Ok(terms),
        }
    }

    /// Multiplies the weight of each of the query's own words (not the other forms)
    /// that the query writes as a plain word and no live document has in an
    /// identifier field (`weighing.form_fields`; none when that is empty): by
    /// `weighing.filler` for a word of [`FILLER_WORDS`], by `weighing.prose_only` for
    /// any other.
    fn weigh_prose_only<S: Source>(
        &self,
        src: &S,
        terms: &mut [(u32, f64, bool)],
        weighing: QueryTerms,
        query: &str,
    ) -> Result<()> {
        let usable = |factor: f64| factor != 1.0 && factor.is_finite();
        if !(usable(weighing.prose_only) || usable(weighing.filler))
            || weighing.form_fields.is_empty()
        {
            return Ok(());
        }
        let kind_of = src.kind_of()?;
        let mut identifier = vec![false; self.fields.len()];
        for name in weighing.form_fields {
            if let Some(field) = self.field_id(name) {
                identifier[field] = true;
            }
        }
        let plain: HashSet<String> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| {
                let mut chars = word.chars();
                chars.next().is_some_and(char::is_alphabetic) && chars.all(char::is_lowercase)
            })
            .map(str::to_lowercase)
            .collect();
        for (term, weight, form) in terms.iter_mut() {
            let text = src.term(*term)?;
            if *form || !plain.contains(text) {
                continue;
            }
            let named = src
                .list(*term)?
                .iter()
                .any(|p| identifier[p.field()] && kind_of.get(p.doc as usize) != DEAD);
            if !named {
                let factor = if FILLER_WORDS.contains(&text) {
                    weighing.filler
                } else {
                    weighing.prose_only
                };
                if factor.is_finite() {
                    *weight *= factor.max(0.0);
                }
            }
        }
        Ok(())
    }

    /// Whether document `key` has some of `terms` and each of them only in field
    /// `field` (a file found by its name alone, not its content); false if an
    /// index read in place cannot read it.
    pub fn only_in_field(&self, key: &str, terms: &[String], field: &str) -> bool {
        match &self.frozen {
            Some(view) => view
                .slot_of(key)
                .ok()
                .flatten()
                .is_some_and(|slot| only_in(&**view, slot, terms, self.field_id(field))),
            None => self
                .by_key
                .get(&self.docs, key)
                .is_some_and(|slot| only_in(&Held(self), slot, terms, self.field_id(field))),
        }
    }
}

/// `only_in_field` of the document in `slot`.
fn only_in<S: Source>(src: &S, slot: u32, terms: &[String], field: Option<usize>) -> bool {
    let Some(field) = field else {
        return false;
    };
    let mut found = false;
    for term in terms {
        let Some(list) = src
            .term_id(term)
            .ok()
            .flatten()
            .and_then(|t| src.list(t).ok())
        else {
            continue;
        };
        let mut cursor = list.cursor();
        cursor.seek(slot);
        while let Some(posting) = cursor.head().filter(|p| p.doc == slot) {
            if posting.field() != field {
                return false;
            }
            found = true;
            cursor.advance();
        }
    }
    found
}

/// Whether the document in `slot` is in `list` in a field of weight > 0.
fn matches(list: ListRef<'_>, slot: u32, weights: &[f64]) -> bool {
    let mut cursor = list.cursor();
    cursor.seek(slot);
    while let Some(posting) = cursor.head().filter(|p| p.doc == slot) {
        if weights.get(posting.field()).is_some_and(|&w| w > 0.0) {
            return true;
        }
        cursor.advance();
    }
    false
}
