//! Near-duplicate texts: an exact all-pairs similarity join over the texts' token
//! sets (the tokenizer's stemmed tokens), cosine of the sets, with prefix
//! filtering (tokens ordered rarest first: a set of `n` tokens can only reach a
//! cosine of `t` with a set sharing one of its first `n - ceil(t^2 n) + 1` tokens,
//! so only those are indexed and probed) and a size filter.

use std::collections::HashMap;

use super::segment::intern;
use super::tokenize::tokens_with;
use foldhash::fast::RandomState;

/// A pair found by [`similar_pairs`]: the later text, the earlier one, their cosine.
#[derive(Debug, Clone, PartialEq)]
pub struct SimilarPair {
    pub later: usize,
    pub earlier: usize,
    pub similarity: f64,
}

/// Every pair of `texts` (by index) whose token sets have a cosine of at least
/// `threshold` (in (0, 1]; anything else finds nothing) and whose later text is
/// `fresh` (`fresh[i]`; a shorter `fresh` counts the rest as not fresh). Returned
/// by later text in order, each one's pairs best first, equal ones by the earlier
/// text. Texts without tokens pair with nothing.
pub fn similar_pairs(texts: &[&str], fresh: &[bool], threshold: f64) -> Vec<SimilarPair> {
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Vec::new();
    }
    // The texts' tokens on the thread pool, then numbered in order.
    let tokenized: Vec<Vec<String>> = {
        use rayon::prelude::*;
        texts
            .par_iter()
            .map(|text| tokens_with(text, true))
            .collect()
    };
    let mut ids: HashMap<String, u32, RandomState> = HashMap::default();
    let mut sets: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
    for tokens in &tokenized {
        let mut set: Vec<u32> = tokens.iter().map(|token| intern(&mut ids, token)).collect();
        set.sort_unstable();
        set.dedup();
        sets.push(set);
    }
    drop(tokenized);
    let mut frequency = vec![0u32; ids.len()];
    for set in &sets {
        for &token in set {
            frequency[token as usize] += 1;
        }
    }
    let squared = threshold * threshold;
    // Each set's prefix (its rarest tokens, as many as can still reach the
    // threshold), and each token's texts whose prefix holds it, in order.
    let prefixes: Vec<Vec<u32>> = sets
        .iter()
        .map(|set| {
            let n = set.len();
            let mut ordered = set.clone();
            ordered.sort_unstable_by_key(|&t| (frequency[t as usize], t));
            let keep = ((squared * n as f64) - 1e-9).ceil().max(0.0) as usize;
            ordered.truncate((n + 1).saturating_sub(keep).min(n));
            ordered
        })
        .collect();
    let mut index: Vec<Vec<u32>> = vec![Vec::new(); ids.len()];
    for (i, prefix) in prefixes.iter().enumerate() {
        for &token in prefix {
            index[token as usize].push(i as u32);
        }
    }
    // Each fresh text against the earlier texts sharing a token of its prefix, on
    // the thread pool (`stamp`: the text last compared with each, per thread).
    let found: Vec<Vec<SimilarPair>> = {
        use rayon::prelude::*;
        (0..sets.len())
            .into_par_iter()
            .map_init(
                || vec![u32::MAX; sets.len()],
                |stamp, i| {
                    let set = &sets[i];
                    let n = set.len();
                    if n == 0 || !fresh.get(i).copied().unwrap_or(false) {
                        return Vec::new();
                    }
                    let mut found: Vec<(f64, usize)> = Vec::new();
                    for &token in &prefixes[i] {
                        for &other in &index[token as usize] {
                            let other = other as usize;
                            if other >= i {
                                break; // the lists are in order: only earlier texts
                            }
                            if stamp[other] == i as u32 {
                                continue;
                            }
                            stamp[other] = i as u32;
                            let theirs = &sets[other];
                            let size = ((n * theirs.len()) as f64).sqrt();
                            if threshold * size > n.min(theirs.len()) as f64 {
                                continue; // sizes too far apart to reach the threshold
                            }
                            let similarity = overlap(set, theirs) as f64 / size;
                            if similarity >= threshold {
                                found.push((similarity, other));
                            }
                        }
                    }
                    found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    found
                        .into_iter()
                        .map(|(similarity, earlier)| SimilarPair {
                            later: i,
                            earlier,
                            similarity,
                        })
                        .collect()
                },
            )
            .collect()
    };
    found.into_iter().flatten().collect()
}

/// How many values two sorted, deduplicated slices share.
fn overlap(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair by brute force, as the join must find them.
    fn brute(texts: &[&str], fresh: &[bool], threshold: f64) -> Vec<(usize, usize)> {
        let sets: Vec<std::collections::BTreeSet<String>> = texts
            .iter()
            .map(|t| {
                super::super::tokenize::tokens_with(t, true)
                    .into_iter()
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        for i in 0..texts.len() {
            if !fresh[i] || sets[i].is_empty() {
                continue;
            }
            for j in 0..i {
                if sets[j].is_empty() {
                    continue;
                }
                let shared = sets[i].intersection(&sets[j]).count() as f64;
                if shared / ((sets[i].len() * sets[j].len()) as f64).sqrt() >= threshold {
                    out.push((i, j));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn finds_the_pairs_at_the_threshold_and_not_below() {
        let words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima";
        let near = format!("{words} mike"); // 12 / sqrt(12 * 13) = 0.961
        let far = format!("{words} mike november oscar"); // 12 / sqrt(12 * 15) = 0.894
        let texts = [words, near.as_str(), far.as_str(), "", "the of and"];
        let pairs = similar_pairs(&texts, &[true; 5], 0.92);
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[0].later, pairs[0].earlier), (1, 0));
        assert!((pairs[0].similarity - 12.0 / (156f64).sqrt()).abs() < 1e-12);
        // far is 0.96 like near (13 / sqrt(13 * 15)), not like words
        assert_eq!((pairs[1].later, pairs[1].earlier), (2, 1));
        assert!(similar_pairs(&texts, &[false, false, true], 0.92).len() == 1);
        assert!(similar_pairs(&texts, &[true; 5], 0.0).is_empty());
        assert!(similar_pairs(&texts, &[true; 5], f64::NAN).is_empty());
    }

    #[test]
    fn agrees_with_brute_force() {
        let vocabulary = [
            "red", "green", "blue", "cyan", "plum", "gold", "rust", "teal", "navy", "lime", "sand",
        ];
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let texts: Vec<String> = (0..300)
            .map(|_| {
                let n = 1 + next() % 7;
                (0..n)
                    .map(|_| vocabulary[next() % vocabulary.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let fresh: Vec<bool> = (0..refs.len()).map(|i| i % 3 != 0).collect();
        for threshold in [0.5, 0.8, 0.92, 1.0] {
            let pairs = similar_pairs(&refs, &fresh, threshold);
            let mut ordered = pairs.clone();
            ordered.sort_by(|a, b| {
                (a.later.cmp(&b.later))
                    .then(b.similarity.total_cmp(&a.similarity))
                    .then(a.earlier.cmp(&b.earlier))
            });
            assert_eq!(pairs, ordered, "in order, threshold {threshold}");
            let mut got: Vec<(usize, usize)> =
                pairs.into_iter().map(|p| (p.later, p.earlier)).collect();
            got.sort();
            assert_eq!(
                got,
                brute(&refs, &fresh, threshold),
                "threshold {threshold}"
            );
        }
    }
}
