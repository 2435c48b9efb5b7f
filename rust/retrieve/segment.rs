//! Topical runs in a sequence of texts (a conversation's turns): where a new run
//! starts, and why. A run ends before a text said long after the previous one, a
//! text of another group (a task), a text that would make the run too long, or a
//! text sharing too little with the run's last texts (a topic shift: the cosine of
//! its stemmed token counts with theirs, once the run is long enough, and, where
//! the texts have embeddings, the cosine of its vector with the sum of theirs).

use std::collections::HashMap;
use std::ops::ControlFlow;

use foldhash::fast::RandomState;

use super::tokenize::for_each_token_with;

/// Why a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    TimeGap,
    GroupSwitch,
    Size,
    TopicShift,
}

/// The rule's numbers.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// A gap longer than this (seconds) starts a run.
    pub gap: f64,
    /// A topic shift is looked for once a run has this many texts ...
    pub min_len: usize,
    /// ... against its last this many texts ...
    pub window: usize,
    /// ... and starts a run below this cosine of token counts ...
    pub shift: f64,
    /// ... when the cosine of its vector with the sum of theirs is below this too
    /// (a text without a vector, or a window without one: the tokens decide).
    pub meaning: f64,
    /// A run holds at most this many texts.
    pub max_len: usize,
}

/// The starts of the runs of `texts` (said at `times`, in `groups`, embedded as
/// `vectors`: one per text or none at all), after the first `keep` texts (a run
/// already made: never split), each with why it starts. The first run (at 0, or
/// continuing the kept ones) is not listed.
pub fn segment(
    texts: &[&str],
    times: &[f64],
    groups: &[u64],
    vectors: &[Option<&[f32]>],
    keep: usize,
    rule: Rule,
) -> Vec<(usize, Break)> {
    let mut ids: HashMap<String, u32, RandomState> = HashMap::default();
    let mut window: HashMap<u32, f64, RandomState> = HashMap::default();
    let mut kept: std::collections::VecDeque<Vec<(u32, f64)>> = std::collections::VecDeque::new();
    let mut meanings = Meanings::default();
    let mut run_len = 0usize;
    let mut out = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let mut counts: HashMap<u32, f64, RandomState> = HashMap::default();
        for_each_token_with(text, true, |token| {
            *counts.entry(intern(&mut ids, token)).or_insert(0.0) += 1.0;
            ControlFlow::Continue(())
        });
        let mine: Vec<(u32, f64)> = counts.into_iter().collect();
        let vector = vectors.get(i).copied().flatten();
        let mut reason = None;
        if i >= keep && run_len > 0 {
            let gap = times
                .get(i)
                .zip(times.get(i - 1))
                .map_or(0.0, |(now, before)| now - before);
            if gap > rule.gap {
                reason = Some(Break::TimeGap);
            } else if groups.get(i) != groups.get(i - 1) {
                reason = Some(Break::GroupSwitch);
            } else if run_len >= rule.max_len {
                reason = Some(Break::Size);
            } else if run_len >= rule.min_len
                && !mine.is_empty()
                && cosine(&mine, &window) < rule.shift
                && vector
                    .and_then(|v| meanings.cosine(v))
                    .is_none_or(|c| c < rule.meaning)
            {
                reason = Some(Break::TopicShift);
            }
        }
        if let Some(why) = reason {
            out.push((i, why));
            window.clear();
            kept.clear();
            meanings = Meanings::default();
            run_len = 0;
        }
        for &(token, count) in &mine {
            *window.entry(token).or_insert(0.0) += count;
        }
        kept.push_back(mine);
        meanings.push(vector, rule.window);
        if kept.len() > rule.window {
            if let Some(old) = kept.pop_front() {
                for (token, count) in old {
                    if let Some(value) = window.get_mut(&token) {
                        *value -= count;
                        if *value <= 0.0 {
                            window.remove(&token);
                        }
                    }
                }
            }
        }
        run_len += 1;
    }
    out
}

/// The vectors of a run's last texts (those that have one), summed.
#[derive(Default)]
struct Meanings {
    kept: std::collections::VecDeque<Option<Vec<f32>>>,
    sum: Vec<f64>,
    present: usize,
}

impl Meanings {
    /// Adds a text's vector (or its absence), dropping the oldest beyond `window`.
    fn push(&mut self, vector: Option<&[f32]>, window: usize) {
        if let Some(v) = vector {
            if self.sum.len() != v.len() {
                self.sum = vec![0.0; v.len()];
                self.kept.clear();
                self.present = 0;
            }
            for (s, x) in self.sum.iter_mut().zip(v) {
                *s += f64::from(*x);
            }
            self.present += 1;
        }
        self.kept.push_back(vector.map(<[f32]>::to_vec));
        if self.kept.len() > window {
            if let Some(Some(old)) = self.kept.pop_front() {
                if old.len() == self.sum.len() {
                    for (s, x) in self.sum.iter_mut().zip(&old) {
                        *s -= f64::from(*x);
                    }
                    self.present -= 1;
                }
            }
        }
    }

    /// The cosine of `vector` with the kept vectors' sum; None when none is kept
    /// (or its dimension differs).
    fn cosine(&self, vector: &[f32]) -> Option<f64> {
        if self.present == 0 || vector.len() != self.sum.len() {
            return None;
        }
        let (mut dot, mut a, mut b) = (0.0, 0.0, 0.0);
        for (x, s) in vector.iter().zip(&self.sum) {
            let x = f64::from(*x);
            dot += x * s;
            a += x * x;
            b += s * s;
        }
        (a > 0.0 && b > 0.0).then(|| dot / (a * b).sqrt())
    }
}

/// The id of `token` in `ids`, a new one (the next number) the first time: a
/// token already seen costs a lookup, not an allocation.
pub(crate) fn intern(ids: &mut HashMap<String, u32, RandomState>, token: &str) -> u32 {
    if let Some(&id) = ids.get(token) {
        return id;
    }
    let id = ids.len() as u32;
    ids.insert(token.to_owned(), id);
    id
}

fn cosine(mine: &[(u32, f64)], window: &HashMap<u32, f64, RandomState>) -> f64 {
    let dot: f64 = mine
        .iter()
        .map(|(t, c)| c * window.get(t).copied().unwrap_or(0.0))
        .sum();
    if dot == 0.0 {
        return 0.0;
    }
    let a: f64 = mine.iter().map(|(_, c)| c * c).sum();
    let b: f64 = window.values().map(|c| c * c).sum();
    dot / (a * b).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Rule = Rule {
        gap: 1800.0,
        min_len: 2,
        window: 2,
        shift: 0.05,
        meaning: 0.5,
        max_len: 4,
    };

    #[test]
    fn each_break_and_its_reason() {
        let texts = [
            "puppy training biscuit",
            "biscuit puppy school",
            "postgres billing invoices", // no shared word after 2 texts: a topic shift
            "postgres invoices json",
            "postgres json columns", // 1801 s later: a time gap
            "postgres json columns", // another group
            "postgres json",
            "postgres json",
            "postgres json",
            "postgres json", // the fifth of a run: size
        ];
        let times = [
            0.0, 1.0, 2.0, 3.0, 1804.0, 1805.0, 1806.0, 1807.0, 1808.0, 1809.0,
        ];
        let groups = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1];
        let got = segment(&texts, &times, &groups, &[], 0, RULE);
        assert_eq!(
            got,
            vec![
                (2, Break::TopicShift),
                (4, Break::TimeGap),
                (5, Break::GroupSwitch),
                (9, Break::Size)
            ]
        );
        // the first two kept as a run: never split, and the third still shifts away
        assert_eq!(
            segment(&texts[..3], &times[..3], &groups[..3], &[], 2, RULE),
            vec![(2, Break::TopicShift)]
        );
        // exactly the gap is no gap
        assert!(segment(&texts[..2], &[0.0, 1800.0], &[0, 0], &[], 0, RULE).is_empty());
    }

    #[test]
    fn a_text_near_by_meaning_keeps_its_run() {
        let texts = [
            "puppy training biscuit",
            "biscuit puppy school",
            "leash walks park", // no shared word: the vectors decide
            "postgres billing invoices",
        ];
        let times = [0.0, 1.0, 2.0, 3.0];
        let groups = [0, 0, 0, 0];
        let dog: &[f32] = &[1.0, 0.0];
        let near: &[f32] = &[0.8, 0.6]; // cosine 0.8 with the run's sum
        let far: &[f32] = &[0.0, 1.0]; // cosine 0.0 with the run's sum
        let vectors = [Some(dog), Some(dog), Some(near), Some(far)];
        assert_eq!(
            segment(&texts, &times, &groups, &vectors, 0, RULE),
            vec![(3, Break::TopicShift)]
        );
        // without vectors the tokens alone decide: the third starts a run
        assert_eq!(
            segment(&texts, &times, &groups, &[], 0, RULE),
            vec![(2, Break::TopicShift)]
        );
        // a text without a vector, or a run without any: the tokens decide
        let unembedded = [Some(dog), Some(dog), None, Some(far)];
        assert_eq!(
            segment(&texts, &times, &groups, &unembedded, 0, RULE),
            vec![(2, Break::TopicShift)]
        );
        let late = [None, None, Some(near), Some(far)];
        assert_eq!(
            segment(&texts, &times, &groups, &late, 0, RULE),
            vec![(2, Break::TopicShift)]
        );
        // the window forgets: with a window of one text, the fourth is compared
        // with the third's vector alone (cosine 0.6)
        let narrow = Rule { window: 1, ..RULE };
        assert_eq!(
            segment(&texts, &times, &groups, &vectors, 0, narrow),
            vec![]
        );
    }
}
