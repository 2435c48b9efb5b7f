//! BM25F search: terms scored rarest first, with safe pruning once the
//! remaining terms cannot change the result.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::ControlFlow;

use foldhash::HashMap;

use super::inplace::{U32s, View};
use super::overlay::Overlay;
use super::{Bm25Params, LexicalHit, LexicalIndex, QueryTerms, DEAD, MAX_QUERY_TERMS};
use crate::error::Result;
use crate::retrieve::postings::{ListRef, Posting, Skips};
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
    /// The norms of fields of `weights`, whose `b / avglen` is `slope`.
    fn new(weights: &[f64], slope: &[f64], b: f64) -> Norms {
        let mut norms = Norms {
            table: Vec::new(),
            weights: weights.to_vec(),
            slope: slope.to_vec(),
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
    fn df(&self, id: u32) -> Result<u32>;
    fn list(&self, id: u32) -> Result<ListRef<'_>>;
    fn kind_of(&self) -> Result<U32s<'_>>;
    fn lengths(&self, field: usize) -> Result<U32s<'_>>;
    fn key(&self, slot: u32) -> Result<&str>;
}

/// An index in memory as a `Source`.
pub(super) struct Held<'a>(pub(super) &'a LexicalIndex);

impl Source for Held<'_> {
    fn slots(&self) -> usize {
        self.0.docs.len()
    }
    fn term_id(&self, term: &str) -> Result<Option<u32>> {
        Ok(self.0.terms.id(term))
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
        let held = Held(self);
        let delta = self.overlay.as_ref().map(|o| Held(&o.delta));
        let parts: Vec<Part<'_>> = match (&self.frozen, &self.overlay, &delta) {
            (Some(view), Some(overlay), Some(delta)) => vec![
                Part {
                    src: &**view,
                    kind_ids: &self.kind_ids,
                    kinds: self.kinds.len(),
                    fields: Some(&overlay.base_fields),
                    overlay: Some(overlay),
                },
                Part {
                    src: delta,
                    kind_ids: &overlay.delta.kind_ids,
                    kinds: overlay.delta.kinds.len(),
                    fields: Some(&overlay.delta_fields),
                    overlay: None,
                },
            ],
            (Some(view), _, _) => vec![Part::whole(self, &**view)],
            (None, _, _) => vec![Part::whole(self, &held)],
        };
        self.search_in(&parts, (query, params, kinds, limit), weighing, prune)
    }

    fn search_in(
        &self,
        parts: &[Part<'_>],
        (query, params, kinds, limit): (&str, &Bm25Params, &[&str], usize),
        weighing: QueryTerms,
        prune: bool,
    ) -> Result<Vec<LexicalHit>> {
        if limit == 0 || self.live == 0 {
            return Ok(Vec::new());
        }
        let params = params.clamped();
        // Per part, per kind of the part: wanted.
        let allowed: Option<Vec<Vec<bool>>> = (!kinds.is_empty()).then(|| {
            parts
                .iter()
                .map(|part| {
                    let mut allowed = vec![false; part.kinds];
                    for kind in kinds {
                        if let Some(&id) = part.kind_ids.get(*kind) {
                            allowed[id as usize] = true;
                        }
                    }
                    allowed
                })
                .collect()
        });
        if allowed
            .as_ref()
            .is_some_and(|a| !a.iter().any(|a| a.contains(&true)))
        {
            return Ok(Vec::new());
        }
        let mut weighed = self.query_terms(parts, query, weighing.forms)?;
        if weighed.is_empty() {
            return Ok(Vec::new());
        }
        self.weigh_prose_only(parts, &mut weighed, weighing, query)?;
        let mut weights = vec![1.0; self.fields.len()];
        for (name, weight) in &params.field_weights {
            if let Some(field) = self.field_id(name) {
                weights[field] = *weight;
            }
        }
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
        // b / avglen_f, to multiply by len_f.
        let slope: Vec<f64> = (0..self.fields.len())
            .map(|f| match self.field_docs[f] {
                0 => 0.0,
                docs => params.b / (self.field_total[f] as f64 / docs as f64),
            })
            .collect();
        let k1 = params.k1;
        let n = self.live as f64;
        // Rarest first; ties by the term itself.
        let mut order: Vec<usize> = (0..weighed.len()).collect();
        let info = |i: usize| (weighed[i].df, weighed[i].text.as_str());
        order.sort_unstable_by(|&a, &b| info(a).cmp(&info(b)));
        let exponent = if weighing.idf_exponent.is_finite() {
            weighing.idf_exponent.max(0.0)
        } else {
            1.0
        };
        let idf: Vec<f64> = order
            .iter()
            .map(|&i| {
                let df = weighed[i].df as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                weighed[i].weight
                    * if exponent == 1.0 {
                        idf
                    } else {
                        idf.powf(exponent)
                    }
            })
            .collect();
        // What the terms after the i-th can add at most (tf / (k1 + tf) < 1), with a
        // margin for rounding.
        let mut bound_after = vec![0.0; order.len()];
        for i in (0..order.len().saturating_sub(1)).rev() {
            bound_after[i] = bound_after[i + 1] + idf[i + 1] * (k1 + 1.0) * (1.0 + 1e-9);
        }
        let plan = Plan {
            weighed: &weighed,
            order: &order,
            idf: &idf,
            bound_after: &bound_after,
            weights: &weights,
            form_weights: &form_weights,
            slope: &slope,
            b: params.b,
            k1,
            limit,
            prune,
        };
        let mut hits = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let allowed = allowed.as_ref().map(|a| a[p].as_slice());
            if allowed.is_some_and(|a| !a.contains(&true)) {
                continue;
            }
            hits.extend(score_part(part, p, &plan, allowed)?);
        }
        if parts.len() > 1 {
            hits.sort_unstable_by(|a, b| {
                b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key))
            });
            hits.truncate(limit);
        }
        Ok(hits)
    }

    /// The distinct known terms of `query` (some live document has them) with
    /// their weights and whether each is another form of a query word, in
    /// order: at most `MAX_QUERY_TERMS`, the first ones, so a huge query costs a
    /// bounded search. Each query word's own form weighs 1; with `forms` > 0 (and
    /// an index that does not stem), the other indexed forms of the words (see
    /// [`word_forms`]) follow, weighing `forms`, unless the query has them as
    /// words of their own.
    fn query_terms(&self, parts: &[Part<'_>], query: &str, forms: f64) -> Result<Vec<QueryTerm>> {
        let mut failed = None;
        let mut seen: HashSet<String> = HashSet::new();
        let mut terms: Vec<QueryTerm> = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let expand = forms > 0.0 && forms.is_finite() && !self.stem;
        let mut known = |token: &str| -> Option<(u32, [Option<u32>; 2])> {
            match known_in(parts, token) {
                Ok(Some((df, ids))) if df > 0 => Some((df, ids)),
                Ok(_) => None,
                Err(err) => {
                    failed.get_or_insert(err);
                    None
                }
            }
        };
        for_each_token_with(query, self.stem, |token| {
            if let Some((df, ids)) = known(token) {
                if seen.insert(token.to_owned()) {
                    terms.push(QueryTerm {
                        text: token.to_owned(),
                        weight: 1.0,
                        form: false,
                        df,
                        ids,
                    });
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
                if let Some((df, ids)) = known(&form) {
                    if terms.len() < MAX_QUERY_TERMS
                        && !seen.contains(&form)
                        && stem(&form) == stem(word)
                    {
                        seen.insert(form.clone());
                        terms.push(QueryTerm {
                            text: form,
                            weight: forms,
                            form: true,
                            df,
                            ids,
                        });
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
    fn weigh_prose_only(
        &self,
        parts: &[Part<'_>],
        terms: &mut [QueryTerm],
        weighing: QueryTerms,
        query: &str,
    ) -> Result<()> {
        let usable = |factor: f64| factor != 1.0 && factor.is_finite();
        if !(usable(weighing.prose_only) || usable(weighing.filler))
            || weighing.form_fields.is_empty()
        {
            return Ok(());
        }
        let kinds: Vec<U32s<'_>> = parts
            .iter()
            .map(|part| part.src.kind_of())
            .collect::<Result<_>>()?;
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
        for term in terms.iter_mut() {
            if term.form || !plain.contains(&term.text) {
                continue;
            }
            let mut named = false;
            for (p, part) in parts.iter().enumerate() {
                let Some(id) = term.ids[p] else {
                    continue;
                };
                named = named
                    || part.src.list(id)?.iter().any(|posting| {
                        let field = part.field(posting.field());
                        identifier.get(field).copied().unwrap_or(false)
                            && part.live(posting.doc, &kinds[p])
                    });
            }
            if !named {
                let factor = if FILLER_WORDS.contains(&term.text.as_str()) {
                    weighing.filler
                } else {
                    weighing.prose_only
                };
                if factor.is_finite() {
                    term.weight *= factor.max(0.0);
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
            Some(view) => {
                if let Some(overlay) = &self.overlay {
                    if overlay.delta.contains(key) {
                        return overlay.delta.only_in_field(key, terms, field);
                    }
                }
                let base_field = view.head.fields.binary_search_by(|f| f.as_str().cmp(field));
                self.base_slot(view, key)
                    .is_some_and(|slot| only_in(&**view, slot, terms, base_field.ok()))
            }
            None => self
                .by_key
                .get(&self.docs, key)
                .is_some_and(|slot| only_in(&Held(self), slot, terms, self.field_id(field))),
        }
    }
}

/// A query term: its text, weight, whether it is another form of a query word,
/// its document frequency over the live documents, and its id in each part.
struct QueryTerm {
    text: String,
    weight: f64,
    form: bool,
    df: u32,
    ids: [Option<u32>; 2],
}

/// The document frequency over the live documents of `token` and its id in each
/// of `parts`; `None` if no part has it.
fn known_in(parts: &[Part<'_>], token: &str) -> Result<Option<(u32, [Option<u32>; 2])>> {
    let mut ids = [None; 2];
    let mut df = 0u32;
    for (p, part) in parts.iter().enumerate().take(2) {
        if let Some(id) = part.src.term_id(token)? {
            let dead = part.overlay.map_or(0, |o| o.dead_df(id));
            df = df.saturating_add(part.src.df(id)?.saturating_sub(dead));
            ids[p] = Some(id);
        }
    }
    Ok(ids.iter().any(Option::is_some).then_some((df, ids)))
}

/// What a search reads of one part of an index: the index itself, or for an
/// index searched in place with changes over it, its file's documents (the base,
/// some dead) and the documents added since (see `overlay`).
pub(super) struct Part<'a> {
    src: &'a dyn Source,
    kind_ids: &'a HashMap<String, u32>,
    kinds: usize,
    /// The part's field -> the index's (`None`: the same).
    fields: Option<&'a [usize]>,
    /// For the base under an overlay: its dead slots and what they take out.
    overlay: Option<&'a Overlay>,
}

impl<'a> Part<'a> {
    fn whole(index: &'a LexicalIndex, src: &'a dyn Source) -> Part<'a> {
        Part {
            src,
            kind_ids: &index.kind_ids,
            kinds: index.kinds.len(),
            fields: None,
            overlay: None,
        }
    }

    /// The index's field of the part's `field`.
    #[inline]
    fn field(&self, field: usize) -> usize {
        match self.fields {
            Some(map) => map.get(field).copied().unwrap_or(usize::MAX),
            None => field,
        }
    }

    /// The number of the part's fields.
    fn field_count(&self, index_fields: usize) -> usize {
        self.fields.map_or(index_fields, <[usize]>::len)
    }

    /// Whether the document in `slot` is live (`kinds`: the part's `kind_of`).
    #[inline]
    fn live(&self, slot: u32, kinds: &U32s<'_>) -> bool {
        kinds.get(slot as usize) != DEAD && self.overlay.is_none_or(|o| !o.is_dead(slot))
    }
}

/// What a search computed over the whole index, for each part's scoring.
struct Plan<'a> {
    weighed: &'a [QueryTerm],
    /// Indexes of `weighed`, rarest first.
    order: &'a [usize],
    /// In `order`.
    idf: &'a [f64],
    bound_after: &'a [f64],
    /// Per field of the index.
    weights: &'a [f64],
    form_weights: &'a [f64],
    slope: &'a [f64],
    b: f64,
    k1: f64,
    limit: usize,
    prune: bool,
}

/// The best `plan.limit` hits of `part` (the `p`-th), best first, equal scores by
/// key; only documents of the kinds `allowed` (by the part's kind ids; all if
/// `None`).
fn score_part(
    part: &Part<'_>,
    p: usize,
    plan: &Plan<'_>,
    allowed: Option<&[bool]>,
) -> Result<Vec<LexicalHit>> {
    let src = part.src;
    let Plan {
        weighed,
        order,
        idf,
        bound_after,
        k1,
        limit,
        prune,
        ..
    } = *plan;
    let kind_of = src.kind_of()?;
    let wanted = |slot: u32| {
        let kind = kind_of.get(slot as usize);
        kind != DEAD
            && part.overlay.is_none_or(|o| !o.is_dead(slot))
            && allowed.is_none_or(|a| a.get(kind as usize).copied().unwrap_or(false))
    };
    let fields = part.field_count(plan.weights.len());
    let field_len: Vec<U32s<'_>> = (0..fields).map(|f| src.lengths(f)).collect::<Result<_>>()?;
    // Each term's list in the part (none if it does not have it), read once, in
    // query order.
    let empty = ListRef {
        bytes: &[],
        skips: Skips::Held(&[]),
        len: 0,
    };
    let mut lists = Vec::with_capacity(weighed.len());
    for term in weighed {
        lists.push(match term.ids[p] {
            Some(id) => src.list(id)?,
            None => empty,
        });
    }
    // The index's per-field values, by the part's fields.
    let local = |values: &[f64]| -> Vec<f64> {
        (0..fields)
            .map(|f| values.get(part.field(f)).copied().unwrap_or(0.0))
            .collect()
    };
    let weights = local(plan.weights);
    let form_weights = local(plan.form_weights);
    let slope = local(plan.slope);
    let norms = Norms::new(&weights, &slope, plan.b);
    let form_norms = Norms::new(&form_weights, &slope, plan.b);
    let is_form: Vec<bool> = order.iter().map(|&i| weighed[i].form).collect();
    // How many postings the terms after the i-th have.
    let mut postings_after = vec![0usize; order.len()];
    for i in (0..order.len().saturating_sub(1)).rev() {
        postings_after[i] = postings_after[i + 1] + lists[order[i + 1]].len();
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
            let list = &lists[term];
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
                    .filter(|&(term, &list)| {
                        let weights = if term.form { &form_weights } else { &weights };
                        matches(list, slot, weights)
                    })
                    .map(|(term, _)| term.text.clone())
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

/// `only_in_field` of the document in `slot`.
fn only_in<S: Source + ?Sized>(src: &S, slot: u32, terms: &[String], field: Option<usize>) -> bool {
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
