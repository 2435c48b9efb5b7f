//! Topical runs in a sequence of texts (a conversation's turns): where a new run
//! starts, and why. A run ends before a text said long after the previous one or a
//! text of another group (a task); between those, a topic shift starts a run where
//! the texts before a point and those after it have least in common (TextTiling,
//! Hearst 1997: the cosine of the stemmed token counts of the `window` texts on
//! each side, blended with the cosine of their summed vectors where the texts are
//! embedded; a point whose depth below the nearest peaks on both sides reaches
//! `depth`, deepest first, no two runs shorter than `min_len`); a run longer than
//! `max_len` texts is cut.

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
    /// A topic shift leaves at least this many texts in each run it makes ...
    pub min_len: usize,
    /// ... compares the this many texts before a point with as many after it ...
    pub window: usize,
    /// ... and needs a depth of at least this below the peaks around it ...
    pub depth: f64,
    /// ... the similarity being the words' cosine blended with the vectors' by this
    /// weight (0: the words alone; where a side has no vector, the words alone).
    pub meaning: f64,
    /// A run holds at most this many texts.
    pub max_len: usize,
}

/// The starts of the runs of `texts` (said at `times`, in `groups`, embedded as
/// `vectors`: one per text or none at all), after the first `keep` texts (a run
/// already made: never split), each with why it starts, in order. The first run
/// (at 0, or continuing the kept ones) is not listed.
pub fn segment(
    texts: &[&str],
    times: &[f64],
    groups: &[u64],
    vectors: &[Option<&[f32]>],
    keep: usize,
    rule: Rule,
) -> Vec<(usize, Break)> {
    let n = texts.len();
    let mut hard = Vec::new();
    for i in keep.max(1)..n {
        let gap = times
            .get(i)
            .zip(times.get(i - 1))
            .map_or(0.0, |(now, before)| now - before);
        if gap > rule.gap {
            hard.push((i, Break::TimeGap));
        } else if groups.get(i) != groups.get(i - 1) {
            hard.push((i, Break::GroupSwitch));
        }
    }
    let counts = token_counts(texts);
    let mut starts = Vec::new();
    let mut from = 0;
    for &(end, why) in hard.iter().chain(std::iter::once(&(n, Break::TimeGap))) {
        let mut topical: Vec<usize> = shifts(&counts, vectors, from, end, keep, rule);
        topical.sort_unstable();
        let mut run_start = from;
        for at in topical.into_iter().map(Some).chain(std::iter::once(None)) {
            let run_end = at.unwrap_or(end);
            let mut cut = run_start + rule.max_len;
            while cut < run_end {
                let cut_at = cut.max(keep);
                if cut_at >= run_end {
                    break;
                }
                starts.push((cut_at, Break::Size));
                cut = cut_at + rule.max_len;
            }
            if let Some(at) = at {
                starts.push((at, Break::TopicShift));
                run_start = at;
            }
        }
        if end < n {
            starts.push((end, why));
        }
        from = end;
    }
    starts
}

/// Each text's stemmed token counts, the tokens numbered.
fn token_counts(texts: &[&str]) -> Vec<Vec<(u32, f64)>> {
    let mut ids: HashMap<String, u32, RandomState> = HashMap::default();
    texts
        .iter()
        .map(|text| {
            let mut counts: HashMap<u32, f64, RandomState> = HashMap::default();
            for_each_token_with(text, true, |token| {
                *counts.entry(intern(&mut ids, token)).or_insert(0.0) += 1.0;
                ControlFlow::Continue(())
            });
            counts.into_iter().collect()
        })
        .collect()
}

/// The topic shifts in the span `from..end` (no other break inside it), at `keep`
/// or later: the points whose depth reaches the rule's, deepest first (the earlier
/// of two as deep), each at least `min_len` texts from the span's start and from
/// the shifts chosen before it.
fn shifts(
    counts: &[Vec<(u32, f64)>],
    vectors: &[Option<&[f32]>],
    from: usize,
    end: usize,
    keep: usize,
    rule: Rule,
) -> Vec<usize> {
    if end - from < 2 {
        return Vec::new();
    }
    // the similarity across each point from+1..end (index: point - from - 1)
    let similarity: Vec<f64> = (from + 1..end)
        .map(|at| {
            let before = at.saturating_sub(rule.window).max(from)..at;
            let after = at..(at + rule.window).min(end);
            let words = block_cosine(counts, before.clone(), after.clone());
            match vector_cosine(vectors, before, after) {
                Some(meaning) => (1.0 - rule.meaning) * words + rule.meaning * meaning,
                None => words,
            }
        })
        .collect();
    let mut points: Vec<(f64, usize)> = (0..similarity.len())
        .map(|i| (depth(&similarity, i), from + 1 + i))
        .filter(|&(d, at)| d >= rule.depth && at >= keep && at - from >= rule.min_len)
        .collect();
    points.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<usize> = Vec::new();
    for (_, at) in points {
        if chosen.iter().all(|&c| c.abs_diff(at) >= rule.min_len) {
            chosen.push(at);
        }
    }
    chosen
}

/// How far `similarity[i]` lies below the highest values reached climbing from it
/// to each side (summed).
fn depth(similarity: &[f64], i: usize) -> f64 {
    let here = similarity[i];
    let mut left = here;
    for &s in similarity[..i].iter().rev() {
        if s < left {
            break;
        }
        left = s;
    }
    let mut right = here;
    for &s in &similarity[i + 1..] {
        if s < right {
            break;
        }
        right = s;
    }
    (left - here) + (right - here)
}

/// The cosine of the summed token counts of the texts `a` and of the texts `b`.
fn block_cosine(
    counts: &[Vec<(u32, f64)>],
    a: std::ops::Range<usize>,
    b: std::ops::Range<usize>,
) -> f64 {
    let sum = |range: std::ops::Range<usize>| {
        let mut total: HashMap<u32, f64, RandomState> = HashMap::default();
        for text in &counts[range] {
            for &(token, count) in text {
                *total.entry(token).or_insert(0.0) += count;
            }
        }
        total
    };
    let (x, y) = (sum(a), sum(b));
    let dot: f64 = x
        .iter()
        .map(|(t, c)| c * y.get(t).copied().unwrap_or(0.0))
        .sum();
    if dot == 0.0 {
        return 0.0;
    }
    let norm = |m: &HashMap<u32, f64, RandomState>| m.values().map(|c| c * c).sum::<f64>();
    dot / (norm(&x) * norm(&y)).sqrt()
}

/// The cosine of the summed vectors of the texts `a` and of the texts `b`; None
/// when a side has none (or their dimensions differ).
fn vector_cosine(
    vectors: &[Option<&[f32]>],
    a: std::ops::Range<usize>,
    b: std::ops::Range<usize>,
) -> Option<f64> {
    let sum = |range: std::ops::Range<usize>| -> Option<Vec<f64>> {
        let mut total: Option<Vec<f64>> = None;
        for v in vectors.get(range)?.iter().flatten() {
            let t = total.get_or_insert_with(|| vec![0.0; v.len()]);
            if t.len() != v.len() {
                return None;
            }
            for (s, x) in t.iter_mut().zip(v.iter()) {
                *s += f64::from(*x);
            }
        }
        total
    };
    let (x, y) = (sum(a)?, sum(b)?);
    if x.len() != y.len() {
        return None;
    }
    let dot: f64 = x.iter().zip(&y).map(|(p, q)| p * q).sum();
    let norm = |v: &[f64]| v.iter().map(|p| p * p).sum::<f64>();
    let (nx, ny) = (norm(&x), norm(&y));
    (nx > 0.0 && ny > 0.0).then(|| dot / (nx * ny).sqrt())
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

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Rule = Rule {
        gap: 1800.0,
        min_len: 2,
        window: 2,
        depth: 0.2,
        meaning: 0.5,
        max_len: 4,
    };

    const DOGS: [&str; 3] = [
        "puppy training biscuit",
        "biscuit puppy school",
        "puppy school biscuit",
    ];
    const BILLS: [&str; 3] = [
        "postgres billing invoices",
        "postgres invoices json",
        "billing json invoices",
    ];

    fn at(n: usize) -> Vec<f64> {
        (0..n).map(|i| i as f64).collect()
    }

    #[test]
    fn a_topic_shift_is_where_the_two_sides_share_least() {
        let texts = [DOGS.as_slice(), BILLS.as_slice()].concat();
        let rule = Rule {
            max_len: 10,
            ..RULE
        };
        let got = segment(&texts, &at(6), &[0; 6], &[], 0, rule);
        assert_eq!(got, vec![(3, Break::TopicShift)]);
        // a shift leaves min_len texts at least before it: with 5, the valley is too early
        let wide = Rule { min_len: 5, ..rule };
        assert_eq!(segment(&texts, &at(6), &[0; 6], &[], 0, wide), vec![]);
        // the kept texts are never split: the valley at 3 lies among them
        assert_eq!(segment(&texts, &at(6), &[0; 6], &[], 5, rule), vec![]);
        // too shallow for the rule: nothing
        let deep = Rule { depth: 2.5, ..rule };
        assert_eq!(segment(&texts, &at(6), &[0; 6], &[], 0, deep), vec![]);
    }

    #[test]
    fn time_gaps_groups_and_size_start_runs_and_bound_the_shifts() {
        let texts = [DOGS.as_slice(), BILLS.as_slice(), BILLS.as_slice()].concat();
        let mut times = at(9);
        times[6] += 1801.0; // the seventh: a time gap
        times[7] += 1801.0;
        times[8] += 1801.0;
        let groups = [0, 0, 0, 0, 0, 0, 0, 0, 1]; // the ninth: another group
        let got = segment(&texts, &times, &groups, &[], 0, RULE);
        assert_eq!(
            got,
            vec![
                (3, Break::TopicShift),
                (6, Break::TimeGap),
                (8, Break::GroupSwitch)
            ]
        );
        // exactly the gap is no gap
        assert!(segment(&texts[..2], &[0.0, 1800.0], &[0, 0], &[], 0, RULE).is_empty());
        // one topic too long for a run: cut every max_len texts, after the kept ones
        let same = [DOGS.as_slice(), DOGS.as_slice(), DOGS.as_slice()].concat();
        let got = segment(&same, &at(9), &[0; 9], &[], 0, RULE);
        assert_eq!(got, vec![(4, Break::Size), (8, Break::Size)]);
        let got = segment(&same, &at(9), &[0; 9], &[], 6, RULE);
        assert_eq!(got, vec![(6, Break::Size)]);
    }

    #[test]
    fn vectors_blend_into_the_similarity_where_both_sides_have_them() {
        // words alone see a shift at 3; the vectors say the two halves mean one thing
        let texts = [DOGS.as_slice(), BILLS.as_slice()].concat();
        let rule = Rule {
            max_len: 10,
            meaning: 0.9,
            ..RULE
        };
        let one: &[f32] = &[1.0, 0.0];
        let alike = [Some(one); 6];
        assert_eq!(segment(&texts, &at(6), &[0; 6], &alike, 0, rule), vec![]);
        // texts without vectors: the words decide
        assert_eq!(
            segment(&texts, &at(6), &[0; 6], &[None; 6], 0, rule),
            vec![(3, Break::TopicShift)]
        );
        // a weight of 0: the words alone
        let words = Rule {
            meaning: 0.0,
            ..rule
        };
        assert_eq!(
            segment(&texts, &at(6), &[0; 6], &alike, 0, words),
            vec![(3, Break::TopicShift)]
        );
        // the vectors find a shift the words miss: one vocabulary, two meanings
        let same = [DOGS.as_slice(), DOGS.as_slice()].concat();
        let other: &[f32] = &[0.0, 1.0];
        let split = [
            Some(one),
            Some(one),
            Some(one),
            Some(other),
            Some(other),
            Some(other),
        ];
        assert_eq!(
            segment(&same, &at(6), &[0; 6], &split, 0, rule),
            vec![(3, Break::TopicShift)]
        );
    }

    #[test]
    fn depth_is_measured_from_the_peaks_on_both_sides() {
        assert_eq!(
            depth(&[0.9, 0.5, 0.1, 0.4, 0.3], 2),
            (0.9 - 0.1) + (0.4 - 0.1)
        );
        assert_eq!(depth(&[0.2, 0.2, 0.2], 1), 0.0);
        assert_eq!(depth(&[0.5], 0), 0.0);
    }
}
