use std::cmp::Ordering;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{ContextItem, ContextPolicy};
use crate::error::{invalid, Error, Result};

/// Why a prune ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneReason {
    /// `maybe_prune` found the window over its threshold.
    OverThreshold,
    /// `prune` was called directly.
    Requested,
}

impl PruneReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PruneReason::OverThreshold => "over_threshold",
            PruneReason::Requested => "requested",
        }
    }
}

/// What a prune did, so the caller can summarize the removed items and snapshot.
#[derive(Debug, Clone)]
pub struct PruneResult {
    /// Removed items, lowest score first.
    pub removed: Vec<Arc<ContextItem>>,
    /// The score each removed item had when it was removed.
    pub removed_scores: Vec<f64>,
    pub tokens_before: usize,
    pub tokens_after: usize,
    /// Tokens the prune set out to remove.
    pub target_tokens: usize,
    pub threshold: usize,
    pub reason: PruneReason,
}

/// The working memory of seed 002: items in insertion order, their token total, the
/// current task, and the pruning rule.
#[derive(Debug, Clone)]
pub struct ContextWindow {
    items: Vec<Arc<ContextItem>>,
    /// id -> position in `items`.
    index: FxHashMap<String, usize>,
    token_count: usize,
    max_tokens: usize,
    current_task_id: Option<String>,
    pruning_count: usize,
    policy: ContextPolicy,
}

impl ContextWindow {
    pub fn new(max_tokens: usize, policy: ContextPolicy) -> Result<Self> {
        if max_tokens == 0 {
            return Err(invalid("max_tokens", "must be > 0"));
        }
        policy.validate()?;
        Ok(Self {
            items: Vec::new(),
            index: FxHashMap::default(),
            token_count: 0,
            max_tokens,
            current_task_id: None,
            pruning_count: 0,
            policy,
        })
    }

    pub fn items(&self) -> &[Arc<ContextItem>] {
        &self.items
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn token_count(&self) -> usize {
        self.token_count
    }
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }
    pub fn pruning_count(&self) -> usize {
        self.pruning_count
    }
    pub fn policy(&self) -> &ContextPolicy {
        &self.policy
    }
    pub fn current_task_id(&self) -> Option<&str> {
        self.current_task_id.as_deref()
    }
    pub fn set_current_task(&mut self, task_id: Option<String>) {
        self.current_task_id = task_id;
    }
    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// Token count above which `maybe_prune` prunes: as the seed, `(max * 0.8) as usize`.
    pub fn threshold(&self) -> usize {
        (self.max_tokens as f64 * self.policy.prune_threshold) as usize
    }

    pub fn get(&self, id: &str) -> Result<&Arc<ContextItem>> {
        self.index.get(id).map(|&i| &self.items[i]).ok_or_else(|| Error::UnknownId(id.to_string()))
    }

    pub fn add(&mut self, item: Arc<ContextItem>) -> Result<()> {
        self.extend(vec![item])
    }

    /// Adds items in order, all or none: a duplicate id or a dependency on an item that
    /// is neither in the window nor earlier in the batch rejects the whole batch.
    pub fn extend(&mut self, items: Vec<Arc<ContextItem>>) -> Result<()> {
        let mut batch: FxHashMap<&str, ()> = FxHashMap::default();
        for item in &items {
            if self.index.contains_key(&item.id) || batch.insert(&item.id, ()).is_some() {
                return Err(Error::DuplicateId(item.id.clone()));
            }
            if let Some(dep) = item.dependencies.iter().find(|d| !self.index.contains_key(*d) && !batch.contains_key(d.as_str())) {
                return Err(Error::UnknownDependency { item: item.id.clone(), dependency: dep.clone() });
            }
        }
        drop(batch);
        self.items.reserve(items.len());
        for item in items {
            self.index.insert(item.id.clone(), self.items.len());
            self.token_count += item.token_cost;
            self.items.push(item);
        }
        Ok(())
    }

    pub fn remove(&mut self, id: &str) -> Result<Arc<ContextItem>> {
        let pos = self.index.remove(id).ok_or_else(|| Error::UnknownId(id.to_string()))?;
        let item = self.items.remove(pos);
        for (i, later) in self.items.iter().enumerate().skip(pos) {
            *self.index.get_mut(&later.id).expect("index holds every item") = i;
        }
        self.token_count -= item.token_cost;
        Ok(item)
    }

    /// How many items in the window list each item as a dependency: O(items + edges),
    /// where the seed scans every item per item.
    fn dependents(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.items.len()];
        for item in &self.items {
            for dep in &item.dependencies {
                // A dependency may have been removed since; it then counts for nothing.
                if let Some(&j) = self.index.get(dep) {
                    counts[j] += 1;
                }
            }
        }
        counts
    }

    /// Seed 002's `calculate_relevance`, with `now` injected.
    ///
    /// Age is in whole minutes, truncated, as chrono's `num_minutes()` in the seed; an
    /// item stamped in the future (clock skew) counts as age 0.
    pub fn relevance(&self, item: &ContextItem, dependents: u32, now: f64) -> f64 {
        let p = &self.policy;
        let age_minutes = ((now - item.timestamp) / 60.0).trunc().max(0.0);
        let mut score = 1.0;
        score *= (-age_minutes / p.decay_minutes).exp();
        if self.current_task_id.is_some() && item.task_id == self.current_task_id {
            score *= p.current_task_boost;
        }
        score *= 1.0 + dependents as f64 * p.dependent_boost;
        score *= p.type_weight(&item.item_type);
        score *= item.relevance_score;
        score.clamp(0.0, p.max_score)
    }

    /// The relevance score of every item, in window order.
    pub fn scores(&self, now: f64) -> Result<Vec<f64>> {
        check_now(now)?;
        let dependents = self.dependents();
        Ok(self.items.iter().zip(dependents).map(|(item, d)| self.relevance(item, d, now)).collect())
    }

    /// Prunes if the window holds more than `threshold()` tokens.
    pub fn maybe_prune(&mut self, now: f64) -> Result<Option<PruneResult>> {
        check_now(now)?;
        if self.token_count > self.threshold() {
            self.prune_for(now, PruneReason::OverThreshold).map(Some)
        } else {
            Ok(None)
        }
    }

    pub fn prune(&mut self, now: f64) -> Result<PruneResult> {
        self.prune_for(now, PruneReason::Requested)
    }

    /// Seed 002's `prune_context`: remove the lowest-scored non-sticky items until
    /// `prune_fraction` of the current tokens are gone. One addition: the target is at
    /// least what brings the window back to its threshold, so a window filled far past
    /// it (items added without pruning) is under the threshold after one prune; in the
    /// seed's regime (just over 80 %) the two targets coincide.
    fn prune_for(&mut self, now: f64, reason: PruneReason) -> Result<PruneResult> {
        let scores = self.scores(now)?;
        let tokens_before = self.token_count;
        let threshold = self.threshold();
        let target = ((tokens_before as f64 * self.policy.prune_fraction) as usize).max(tokens_before.saturating_sub(threshold));

        let mut order: Vec<u32> = (0..self.items.len() as u32).filter(|&i| !self.items[i as usize].sticky).collect();
        // Lowest score first; ties: older first, then id.
        let rank = |a: &u32, b: &u32| -> Ordering {
            let (ia, ib) = (&self.items[*a as usize], &self.items[*b as usize]);
            scores[*a as usize]
                .total_cmp(&scores[*b as usize])
                .then(ia.timestamp.total_cmp(&ib.timestamp))
                .then_with(|| ia.id.cmp(&ib.id))
        };
        order.sort_unstable_by(rank);

        let mut removed_tokens = 0usize;
        let mut doomed = vec![false; self.items.len()];
        let mut removed_order = Vec::new();
        for &i in &order {
            if removed_tokens >= target {
                break;
            }
            removed_tokens += self.items[i as usize].token_cost;
            doomed[i as usize] = true;
            removed_order.push(i as usize);
        }

        let removed: Vec<_> = removed_order.iter().map(|&i| Arc::clone(&self.items[i])).collect();
        let removed_scores = removed_order.iter().map(|&i| scores[i]).collect();
        for item in &removed {
            self.index.remove(&item.id);
        }
        let mut pos = 0;
        self.items.retain(|_| {
            pos += 1;
            !doomed[pos - 1]
        });
        for (i, item) in self.items.iter().enumerate() {
            *self.index.get_mut(&item.id).expect("index holds every kept item") = i;
        }
        self.token_count -= removed_tokens;
        self.pruning_count += 1;
        Ok(PruneResult {
            removed,
            removed_scores,
            tokens_before,
            tokens_after: self.token_count,
            target_tokens: target,
            threshold,
            reason,
        })
    }
}

fn check_now(now: f64) -> Result<()> {
    if now.is_finite() {
        Ok(())
    } else {
        Err(invalid("now", format!("must be a finite timestamp, got {now}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::item::tests::item;
    use crate::context::ContextItemType as T;

    const NOW: f64 = 1_700_000_000.0;

    fn window(max: usize) -> ContextWindow {
        ContextWindow::new(max, ContextPolicy::default()).unwrap()
    }

    fn add(w: &mut ContextWindow, it: ContextItem) {
        w.add(Arc::new(it.validated().unwrap())).unwrap();
    }

    #[test]
    fn scores_follow_the_seed_formula() {
        let mut w = window(1000);
        w.set_current_task(Some("t1".into()));
        add(&mut w, item("sys", T::SystemPrompt, NOW, 10));
        // 90 s old -> 1 whole minute; current task; one dependent.
        add(&mut w, ContextItem { task_id: Some("t1".into()), ..item("code", T::CodeSnippet { file_path: "a.py".into(), line_range: (1, 5) }, NOW - 90.0, 10) });
        add(&mut w, ContextItem { dependencies: vec!["code".into()], relevance_score: 0.5, ..item("tool", T::ToolResult { tool_name: "bash".into(), file_path: None }, NOW - 3600.0, 10) });
        add(&mut w, item("say", T::AssistantResponse { tool_calls: vec![] }, NOW, 10));
        add(&mut w, item("act", T::AssistantResponse { tool_calls: vec!["edit".into()] }, NOW + 600.0, 10));
        let s = w.scores(NOW).unwrap();
        assert_eq!(s[0], 100.0);
        assert_eq!(s[1], (-1.0f64 / 60.0).exp() * 2.0 * 1.2 * 0.7);
        assert_eq!(s[2], (-1.0f64).exp() * 0.8 * 0.5);
        assert_eq!(s[3], 0.9);
        assert_eq!(s[4], 1.2, "future timestamps count as age 0");
    }

    #[test]
    fn prune_removes_lowest_until_thirty_percent_of_tokens() {
        let mut w = window(100);
        add(&mut w, ContextItem { sticky: true, ..item("sys", T::SystemPrompt, NOW, 20) });
        add(&mut w, item("old_graph", T::KnowledgeGraphQuery { query: "q".into(), result_summary: "r".into() }, NOW - 7200.0, 20));
        add(&mut w, item("old_code", T::CodeSnippet { file_path: "a.py".into(), line_range: (1, 2) }, NOW - 7200.0, 20));
        add(&mut w, item("user", T::UserMessage { intent: None }, NOW, 25));
        assert_eq!(w.maybe_prune(NOW).unwrap().map(|r| r.tokens_before), Some(85));
        // 85 tokens > 80: target = max(25, 5) = 25; graph (0.6e^-2) then code (0.7e^-2).
        assert_eq!(w.items().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), ["sys", "user"]);
        assert_eq!(w.token_count(), 45);
        assert_eq!(w.pruning_count(), 1);
        assert_eq!(w.index.len(), 2);
        assert_eq!(w.get("user").unwrap().token_cost, 25);
        assert!(w.maybe_prune(NOW).unwrap().is_none());
    }

    #[test]
    fn ties_break_older_first_then_by_id() {
        let mut w = window(1000);
        for id in ["b", "a", "c"] {
            add(&mut w, item(id, T::ToolResult { tool_name: "t".into(), file_path: None }, NOW, 10));
        }
        add(&mut w, item("z", T::ToolResult { tool_name: "t".into(), file_path: None }, NOW - 1.0, 10));
        let r = w.prune(NOW).unwrap(); // target 12 tokens -> two items
        let ids: Vec<_> = r.removed.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["z", "a"]);
        assert_eq!(r.reason, PruneReason::Requested);
    }

    #[test]
    fn far_over_threshold_prunes_back_under_it() {
        let mut w = window(100);
        for i in 0..30 {
            add(&mut w, item(&format!("i{i}"), T::ToolResult { tool_name: "t".into(), file_path: None }, NOW - i as f64 * 60.0, 10));
        }
        let r = w.maybe_prune(NOW).unwrap().unwrap();
        assert_eq!((r.tokens_before, r.target_tokens, r.tokens_after), (300, 220, 80));
        // Oldest go first.
        assert_eq!(r.removed[0].id, "i29");
    }

    #[test]
    fn dependents_are_counted_once_per_dependent_and_forgotten_when_removed() {
        let mut w = window(1000);
        add(&mut w, item("base", T::ToolResult { tool_name: "t".into(), file_path: None }, NOW, 1));
        add(&mut w, ContextItem { dependencies: vec!["base".into()], ..item("d1", T::SystemPrompt, NOW, 1) });
        add(&mut w, ContextItem { dependencies: vec!["base".into(), "d1".into()], ..item("d2", T::SystemPrompt, NOW, 1) });
        assert_eq!(w.dependents(), vec![2, 1, 0]);
        w.remove("d1").unwrap();
        assert_eq!(w.dependents(), vec![1, 0]);
        assert_eq!(w.get("d2").unwrap().id, "d2");
        assert_eq!(w.token_count(), 2);
    }

    #[test]
    fn bad_input_is_rejected_and_leaves_the_window_unchanged() {
        let mut w = window(1000);
        add(&mut w, item("a", T::SystemPrompt, NOW, 5));
        let dup = Arc::new(item("a", T::SystemPrompt, NOW, 5));
        assert_eq!(w.add(dup), Err(Error::DuplicateId("a".into())));
        let batch = vec![
            Arc::new(item("b", T::SystemPrompt, NOW, 5)),
            Arc::new(ContextItem { dependencies: vec!["missing".into()], ..item("c", T::SystemPrompt, NOW, 5) }),
        ];
        assert!(matches!(w.extend(batch), Err(Error::UnknownDependency { .. })));
        assert_eq!((w.len(), w.token_count()), (1, 5));
        assert_eq!(w.remove("zzz"), Err(Error::UnknownId("zzz".into())));
        assert!(w.scores(f64::NAN).is_err());
        assert!(w.maybe_prune(f64::INFINITY).is_err());
        assert!(ContextWindow::new(0, ContextPolicy::default()).is_err());
    }

    #[test]
    fn only_sticky_items_left_means_nothing_removed() {
        let mut w = window(10);
        add(&mut w, ContextItem { sticky: true, ..item("s", T::SystemPrompt, NOW, 50) });
        let r = w.maybe_prune(NOW).unwrap().unwrap();
        assert!(r.removed.is_empty());
        assert_eq!(r.tokens_after, 50);
    }
}
