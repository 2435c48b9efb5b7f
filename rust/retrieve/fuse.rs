//! The fusion of several retrieval channels (lexical, vectors, graph, recency, ...)
//! into one ranking. Each channel's raw scores are on its own scale, so each is
//! normalized over what that channel returned, then weighted and summed; every
//! result says what each channel gave it, raw and normalized.
//!
//! Both normalizations map a channel's lowest returned score to 0, so a key a
//! channel did not return and the channel's worst key both get nothing from it, and
//! every contribution is >= 0 (for weights >= 0).

use std::hash::Hash;
use std::str::FromStr;

use foldhash::HashMap;

use crate::error::{invalid, Error};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Normalization {
    /// `(s - min) / (max - min)`, in [0, 1]; 1.0 for all when all are equal.
    #[default]
    MinMax,
    /// `(s - mean) / std`, shifted so that the lowest is 0 (`(s - min) / std`): a
    /// channel whose scores are spread out gives its best more than one whose
    /// scores are close. 1.0 for all when the standard deviation is 0.
    ZScore,
}

impl Normalization {
    pub const NAMES: [&'static str; 2] = ["minmax", "zscore"];

    pub fn name(self) -> &'static str {
        match self {
            Normalization::MinMax => "minmax",
            Normalization::ZScore => "zscore",
        }
    }
}

impl std::fmt::Display for Normalization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Normalization {
    type Err = Error;

    /// "minmax" or "zscore"; anything else is an invalid-input error.
    fn from_str(name: &str) -> Result<Normalization, Error> {
        match name {
            "minmax" => Ok(Normalization::MinMax),
            "zscore" => Ok(Normalization::ZScore),
            _ => Err(invalid(
                "normalization",
                format!("must be one of {:?}, got {name:?}", Normalization::NAMES),
            )),
        }
    }
}

/// One channel's results: (key, raw score) pairs, higher is better, in any order.
/// A key listed twice counts once with its highest score; non-finite scores are
/// skipped.
#[derive(Debug, Clone, Copy)]
pub struct Channel<'a, K> {
    pub name: &'a str,
    /// What the channel's normalized scores are multiplied by; a non-finite weight
    /// counts as 0.
    pub weight: f64,
    pub scores: &'a [(K, f64)],
}

/// What one channel gave a key.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelScore {
    pub name: String,
    pub raw: f64,
    pub normalized: f64,
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    /// The sum over channels of weight x normalized score.
    pub score: f64,
    /// The channels that returned the key, in the order given.
    pub channels: Vec<ChannelScore>,
}

/// Every key some channel returned, by fused score (best first, equal scores by
/// key). See the module documentation.
pub fn fuse<K: Clone + Eq + Hash + Ord>(
    channels: &[Channel<'_, K>],
    normalization: Normalization,
) -> Vec<Fused<K>> {
    let mut out: Vec<Fused<K>> = Vec::new();
    let mut at: HashMap<K, usize> = HashMap::default();
    for channel in channels {
        let weight = if channel.weight.is_finite() {
            channel.weight
        } else {
            0.0
        };
        let mut seen: HashMap<&K, usize> = HashMap::default();
        let mut keys: Vec<&K> = Vec::new();
        let mut raw: Vec<f64> = Vec::new();
        for (key, score) in channel.scores {
            if !score.is_finite() {
                continue;
            }
            match seen.get(key) {
                Some(&i) => raw[i] = raw[i].max(*score),
                None => {
                    seen.insert(key, keys.len());
                    keys.push(key);
                    raw.push(*score);
                }
            }
        }
        let normalized = normalize(&raw, normalization);
        for ((key, raw), normalized) in keys.into_iter().zip(raw).zip(normalized) {
            let i = *at.entry(key.clone()).or_insert_with(|| {
                out.push(Fused {
                    key: key.clone(),
                    score: 0.0,
                    channels: Vec::new(),
                });
                out.len() - 1
            });
            out[i].score += weight * normalized;
            out[i].channels.push(ChannelScore {
                name: channel.name.to_owned(),
                raw,
                normalized,
                weight,
            });
        }
    }
    out.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The normalized values of finite `scores`, in order.
fn normalize(scores: &[f64], normalization: Normalization) -> Vec<f64> {
    if scores.is_empty() {
        return Vec::new();
    }
    // Both normalizations are scale-free: bring huge values down by a power of two
    // (exact) so that sums and differences cannot overflow.
    let largest = scores.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    let scaled: Vec<f64>;
    let scores = if largest > 1e150 {
        scaled = scores.iter().map(|s| s * 2f64.powi(-600)).collect();
        &scaled
    } else {
        scores
    };
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if min == max {
        return vec![1.0; scores.len()];
    }
    match normalization {
        Normalization::MinMax => scores.iter().map(|s| (s - min) / (max - min)).collect(),
        Normalization::ZScore => {
            let n = scores.len() as f64;
            let mean = scores.iter().sum::<f64>() / n;
            let std = (scores.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n).sqrt();
            if std == 0.0 || !std.is_finite() {
                return vec![1.0; scores.len()];
            }
            let lowest = (min - mean) / std;
            scores.iter().map(|s| (s - mean) / std - lowest).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel<'a>(
        name: &'a str,
        weight: f64,
        scores: &'a [(&'a str, f64)],
    ) -> Channel<'a, &'a str> {
        Channel {
            name,
            weight,
            scores,
        }
    }

    fn summary(fused: &[Fused<&str>]) -> Vec<(String, f64)> {
        fused.iter().map(|f| (f.key.to_string(), f.score)).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn minmax_with_absent_channels_and_ties() {
        let a = [("a", 3.0), ("b", 1.0), ("c", 2.0)];
        let b = [("d", 10.0), ("c", 10.0)];
        let fused = fuse(
            &[channel("lexical", 1.0, &a), channel("vector", 0.5, &b)],
            Normalization::MinMax,
        );
        // a: 1.0; c: 0.5 + 0.5 x 1.0 = 1.0 (tie with a, by key); d: 0.5; b: 0.
        assert_eq!(
            summary(&fused),
            [
                ("a".into(), 1.0),
                ("c".into(), 1.0),
                ("d".into(), 0.5),
                ("b".into(), 0.0)
            ]
        );
        assert_eq!(
            fused[1].channels,
            [
                ChannelScore {
                    name: "lexical".into(),
                    raw: 2.0,
                    normalized: 0.5,
                    weight: 1.0
                },
                ChannelScore {
                    name: "vector".into(),
                    raw: 10.0,
                    normalized: 1.0,
                    weight: 0.5
                },
            ]
        );
        assert_eq!(fused[0].channels.len(), 1);
        assert_eq!(fused[2].channels[0].name, "vector");
    }

    #[test]
    fn zscore_exact() {
        let a = [("a", 3.0), ("b", 1.0), ("c", 2.0)];
        let fused = fuse(&[channel("lexical", 2.0, &a)], Normalization::ZScore);
        // mean 2, std sqrt(2/3); normalized (s - 1) / std: a 2/std = sqrt(6),
        // c 1/std = sqrt(6)/2, b 0; times the weight 2.
        let six = 6f64.sqrt();
        let got: Vec<(&str, f64, f64)> = fused
            .iter()
            .map(|f| (f.key, f.score, f.channels[0].normalized))
            .collect();
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].0, got[1].0, got[2].0), ("a", "c", "b"));
        assert!(close(got[0].1, 2.0 * six) && close(got[0].2, six));
        assert!(close(got[1].1, six) && close(got[1].2, six / 2.0));
        assert_eq!((got[2].1, got[2].2), (0.0, 0.0));
    }

    #[test]
    fn single_and_equal_values_normalize_to_one() {
        for normalization in [Normalization::MinMax, Normalization::ZScore] {
            let one = [("x", -4.0)];
            let same = [("y", 2.5), ("z", 2.5)];
            let fused = fuse(
                &[channel("one", 1.0, &one), channel("same", 3.0, &same)],
                normalization,
            );
            assert_eq!(
                summary(&fused),
                [("y".into(), 3.0), ("z".into(), 3.0), ("x".into(), 1.0)]
            );
        }
    }

    #[test]
    fn non_finite_scores_are_skipped_and_duplicates_keep_the_best() {
        let a = [
            ("a", f64::NAN),
            ("b", 2.0),
            ("c", f64::INFINITY),
            ("d", 1.0),
            ("b", 0.0),
            ("d", 4.0),
        ];
        let fused = fuse(&[channel("lexical", 1.0, &a)], Normalization::MinMax);
        // b = 2, d = 4: d 1.0, b 0.0.
        assert_eq!(summary(&fused), [("d".into(), 1.0), ("b".into(), 0.0)]);
        assert_eq!(fused[0].channels[0].raw, 4.0);
    }

    #[test]
    fn zero_and_non_finite_weights_explain_but_add_nothing() {
        let a = [("a", 1.0), ("b", 2.0)];
        let b = [("a", 5.0), ("b", 1.0)];
        let fused = fuse(
            &[
                channel("lexical", 1.0, &a),
                channel("muted", 0.0, &b),
                channel("broken", f64::NAN, &b),
            ],
            Normalization::MinMax,
        );
        assert_eq!(summary(&fused), [("b".into(), 1.0), ("a".into(), 0.0)]);
        let names: Vec<&str> = fused[1].channels.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lexical", "muted", "broken"]);
        assert_eq!(fused[1].channels[1].normalized, 1.0);
        assert_eq!(fused[1].channels[2].weight, 0.0);
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let a = [("a", f64::MAX), ("b", -f64::MAX), ("c", 0.0)];
        for normalization in [Normalization::MinMax, Normalization::ZScore] {
            let fused = fuse(&[channel("x", 1.0, &a)], normalization);
            assert!(fused.iter().all(|f| f.score.is_finite()), "{fused:?}");
            assert_eq!(fused[2].score, 0.0);
        }
        let minmax = fuse(&[channel("x", 1.0, &a)], Normalization::MinMax);
        assert_eq!(
            summary(&minmax),
            [("a".into(), 1.0), ("c".into(), 0.5), ("b".into(), 0.0)]
        );
    }

    #[test]
    fn empty_input() {
        let none: [(&str, f64); 0] = [];
        assert!(fuse(&[channel("x", 1.0, &none)], Normalization::ZScore).is_empty());
        assert!(fuse::<&str>(&[], Normalization::MinMax).is_empty());
    }

    #[test]
    fn names() {
        for name in Normalization::NAMES {
            assert_eq!(name.parse::<Normalization>().unwrap().name(), name);
        }
        assert!(matches!(
            "MinMax".parse::<Normalization>(),
            Err(Error::InvalidValue {
                field: "normalization",
                ..
            })
        ));
        assert_eq!(Normalization::default(), Normalization::MinMax);
        assert_eq!(Normalization::ZScore.to_string(), "zscore");
    }
}
