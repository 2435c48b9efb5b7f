use std::cmp::Ordering;
use std::sync::Arc;

use foldhash::HashMap;

use super::index::{hash_id, IdIndex};
use super::{ContextItem, ContextPolicy};
use crate::error::{invalid, Error, Result};

/// The most tokens a window holds in total (`i64::MAX`): `extend` refuses a batch
/// that would pass it, so `token_count` never wraps.
pub const MAX_TOKEN_COUNT: usize = i64::MAX as usize;

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
    /// Removed items, in window (chronological) order.
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

/// One item's row: everything scoring and pruning read, packed together so a scan
/// over 100K items streams through memory instead of chasing a pointer per item.
#[derive(Debug, Clone, Copy)]
struct Row {
    timestamp: f64,
    relevance: f64,
    tokens: usize,
    /// Assigned on add, increasing: rows are sorted by it.
    seq: u64,
    /// Interned task id; 0 = no task.
    task: u32,
    /// How many items in the window list this one as a dependency.
    dependents: u32,
    /// Index into `ContextPolicy::kind_weights`.
    kind: u8,
    sticky: bool,
    /// Whether `ContextWindow::dependencies` has an entry for this row.
    has_dependencies: bool,
}

/// A score as an integer that sorts like it: scores are >= 0 (or NaN, which sorts
/// last), so their IEEE bits order like the values once -0.0 is folded into 0.0.
fn score_key(score: f64) -> u64 {
    (score + 0.0).to_bits()
}

/// A finite timestamp as an integer that sorts like it (negatives flipped, -0.0 = 0.0).
fn timestamp_key(timestamp: f64) -> u64 {
    let bits = (timestamp + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Items' relevance at one `now`: age decay, current-task boost, dependents, kind
/// weight and explicit relevance, multiplied and clamped.
struct Scorer<'a> {
    policy: &'a ContextPolicy,
    weights: [f64; 8],
    current_task: u32,
    now: f64,
    /// exp(-m / decay_minutes) per whole minute of age m, filled on first use: ages
    /// are whole minutes, so a window needs few distinct values.
    decay: Vec<f64>,
}

impl<'a> Scorer<'a> {
    const MEMO_MINUTES: usize = 4096;

    fn new(window: &'a ContextWindow, now: f64) -> Self {
        Scorer {
            policy: &window.policy,
            weights: window.policy.kind_weights(),
            current_task: window.current_task,
            now,
            decay: vec![f64::NAN; Self::MEMO_MINUTES],
        }
    }

    /// Dependents are kept up to date on every add and remove, so scoring is
    /// O(items), not a scan of every item per item.
    #[inline(always)]
    fn score(&mut self, row: &Row) -> f64 {
        let p = self.policy;
        let mut score = 1.0;
        score *= self.decay_factor((self.now - row.timestamp) / 60.0);
        if self.current_task != 0 && row.task == self.current_task {
            score *= p.current_task_boost;
        }
        score *= 1.0 + row.dependents as f64 * p.dependent_boost;
        score *= self.weights[row.kind as usize];
        score *= row.relevance;
        score.clamp(0.0, p.max_score)
    }

    /// exp(-age / decay_minutes) for an age of `minutes`: whole minutes, truncated,
    /// as chrono's `num_minutes()` counts them; an item stamped in the future (clock
    /// skew) counts as age 0.
    #[inline(always)]
    fn decay_factor(&mut self, minutes: f64) -> f64 {
        let exact = |age: f64| (-age / self.policy.decay_minutes).exp();
        // Converting to i64 truncates (and saturates): below the memo's end it is the
        // whole age exactly, with no libm call (x86-64's baseline has no instruction
        // for `trunc`, and the call cost a tenth of a prune).
        let whole = (minutes as i64).max(0);
        if whole < Self::MEMO_MINUTES as i64 {
            let memo = &mut self.decay[whole as usize];
            if memo.is_nan() {
                *memo = exact(whole as f64);
            }
            *memo
        } else {
            exact(minutes.trunc())
        }
    }
}

/// The working memory: items in insertion order, their token total, the
/// current task, and the pruning rule.
///
/// An id is found as hash(id) -> seq (`IdIndex`) -> row (binary search on `seq`),
/// checked against the item's id. Removing items never re-keys the survivors, and a
/// prune's bookkeeping is a few sequential passes.
#[derive(Debug, Clone)]
pub struct ContextWindow {
    items: Vec<Arc<ContextItem>>,
    rows: Vec<Row>,
    next_seq: u64,
    index: IdIndex,
    /// seq -> seqs of the items it depends on, resolved when it was added: a
    /// dependency names the item present then (ids are UUIDs in practice). Only
    /// items with dependencies have an entry, so rows stay small.
    dependencies: HashMap<u64, Box<[u64]>>,
    tasks: HashMap<String, u32>,
    current_task: u32,
    current_task_id: Option<String>,
    token_count: usize,
    max_tokens: usize,
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
            rows: Vec::new(),
            next_seq: 0,
            index: IdIndex::default(),
            dependencies: HashMap::default(),
            tasks: HashMap::default(),
            current_task: 0,
            current_task_id: None,
            token_count: 0,
            max_tokens,
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
        self.current_task = self.intern_task(task_id.as_deref());
        self.current_task_id = task_id;
    }
    pub fn contains(&self, id: &str) -> bool {
        self.position(id).is_some()
    }

    /// Token count above which `maybe_prune` prunes: `(max * prune_threshold) as usize`.
    pub fn threshold(&self) -> usize {
        (self.max_tokens as f64 * self.policy.prune_threshold) as usize
    }

    fn intern_task(&mut self, task: Option<&str>) -> u32 {
        let Some(task) = task else { return 0 };
        let next = self.tasks.len() as u32 + 1;
        *self.tasks.entry(task.to_string()).or_insert(next)
    }

    fn position_of_seq(&self, seq: u64) -> Option<usize> {
        self.rows.binary_search_by_key(&seq, |r| r.seq).ok()
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.index
            .candidates(hash_id(id))
            .filter_map(|seq| self.position_of_seq(seq))
            .find(|&pos| self.items[pos].id == id)
    }

    pub fn get(&self, id: &str) -> Result<&Arc<ContextItem>> {
        self.position(id)
            .map(|p| &self.items[p])
            .ok_or_else(|| Error::UnknownId(id.to_string()))
    }

    /// Adds one item (see `extend`).
    pub fn add(&mut self, item: Arc<ContextItem>) -> Result<()> {
        self.extend(vec![item])
    }

    /// Adds items in order, all or none: a duplicate id or a dependency on an item that
    /// is neither in the window nor earlier in the batch rejects the whole batch.
    pub fn extend(&mut self, items: Vec<Arc<ContextItem>>) -> Result<()> {
        let mut batch: HashMap<&str, ()> = HashMap::default();
        for item in &items {
            if self.contains(&item.id) || batch.insert(&item.id, ()).is_some() {
                return Err(Error::DuplicateId(item.id.clone()));
            }
            if let Some(dep) = item
                .dependencies
                .iter()
                .find(|d| !batch.contains_key(d.as_str()) && !self.contains(d))
            {
                return Err(Error::UnknownDependency {
                    item: item.id.clone(),
                    dependency: dep.clone(),
                });
            }
        }
        drop(batch);
        // The window's total stays an exact count Python can hold (a signed 64-bit
        // integer): a batch that would pass it is refused, not wrapped.
        let total = items.iter().try_fold(self.token_count, |sum, item| {
            sum.checked_add(item.token_cost)
                .filter(|&t| t <= MAX_TOKEN_COUNT)
        });
        if total.is_none() {
            return Err(invalid(
                "token_cost",
                format!("the window's token count would pass {MAX_TOKEN_COUNT}"),
            ));
        }
        self.items.reserve(items.len());
        self.rows.reserve(items.len());
        for item in items {
            let dependencies: Box<[u64]> = item
                .dependencies
                .iter()
                .map(|dep| {
                    let p = self.position(dep).expect("dependencies were checked above");
                    self.rows[p].dependents += 1;
                    self.rows[p].seq
                })
                .collect();
            let row = Row {
                timestamp: item.timestamp,
                relevance: item.relevance_score,
                tokens: item.token_cost,
                seq: self.next_seq,
                task: self.intern_task(item.task_id.as_deref()),
                dependents: 0,
                kind: ContextPolicy::kind_index(&item.item_type),
                sticky: item.sticky,
                has_dependencies: !dependencies.is_empty(),
            };
            if row.has_dependencies {
                self.dependencies.insert(row.seq, dependencies);
            }
            self.next_seq += 1;
            self.index.insert(hash_id(&item.id), row.seq);
            self.token_count += item.token_cost;
            self.rows.push(row);
            self.items.push(item);
        }
        Ok(())
    }

    pub fn remove(&mut self, id: &str) -> Result<Arc<ContextItem>> {
        let pos = self
            .position(id)
            .ok_or_else(|| Error::UnknownId(id.to_string()))?;
        Ok(self
            .remove_positions(&[pos])
            .pop()
            .expect("one item removed"))
    }

    /// Removes the items at these positions (ascending) and returns them in window
    /// order, keeping every count exact. The removed `Arc`s are moved out, not cloned.
    fn remove_positions(&mut self, doomed: &[usize]) -> Vec<Arc<ContextItem>> {
        let mut doomed_seqs = Vec::with_capacity(doomed.len());
        let mut listed: Vec<u64> = Vec::new();
        for &pos in doomed {
            let row = &self.rows[pos];
            doomed_seqs.push(row.seq);
            self.token_count -= row.tokens;
            if row.has_dependencies {
                listed.extend_from_slice(
                    &self
                        .dependencies
                        .remove(&row.seq)
                        .expect("rows with dependencies have an entry"),
                );
            }
        }
        self.index.remove_seqs(&doomed_seqs);
        // One pass over the rows: survivors move down, without a branch per row
        // (removals are scattered), and lose one dependent per removed item listing
        // them (sorted, walked along; a listed item may be gone already, or go now).
        listed.sort_unstable();
        let (mut kept, mut next, mut listing) = (0, 0, 0);
        for pos in 0..self.rows.len() {
            let mut row = self.rows[pos];
            while listed.get(listing).is_some_and(|&s| s < row.seq) {
                listing += 1;
            }
            while listed.get(listing) == Some(&row.seq) {
                row.dependents -= 1;
                listing += 1;
            }
            self.rows[kept] = row;
            let gone = usize::from(doomed.get(next) == Some(&pos));
            next += gone;
            kept += 1 - gone;
        }
        self.rows.truncate(kept);
        let mut removed = Vec::with_capacity(doomed.len());
        let mut kept = Vec::with_capacity(self.items.len() - doomed.len());
        let mut next = 0;
        for (pos, item) in std::mem::take(&mut self.items).into_iter().enumerate() {
            let gone = doomed.get(next) == Some(&pos);
            next += usize::from(gone);
            [&mut kept, &mut removed][usize::from(gone)].push(item);
        }
        self.items = kept;
        removed
    }

    /// The relevance score of every item, in window order.
    pub fn scores(&self, now: f64) -> Result<Vec<f64>> {
        check_now(now)?;
        let mut scorer = Scorer::new(self, now);
        Ok(self.rows.iter().map(|r| scorer.score(r)).collect())
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

    /// Removes the lowest-scored non-sticky items until `prune_fraction` of the
    /// current tokens are gone, and at least what brings the window back to its
    /// threshold, so a window filled far past it (items added without pruning) is
    /// under the threshold after one prune; a window just over its threshold loses
    /// `prune_fraction` of its tokens.
    fn prune_for(&mut self, now: f64, reason: PruneReason) -> Result<PruneResult> {
        check_now(now)?;
        let tokens_before = self.token_count;
        let threshold = self.threshold();
        let target = ((tokens_before as f64 * self.policy.prune_fraction) as usize)
            .max(tokens_before.saturating_sub(threshold));

        let mut scorer = Scorer::new(self, now);
        let keys: Vec<(u64, usize)> = self
            .rows
            .iter()
            .map(|row| {
                (
                    if row.sticky {
                        EXCLUDED
                    } else {
                        score_key(scorer.score(row))
                    },
                    row.tokens,
                )
            })
            .collect();
        let doomed = select_lowest(&keys, target, |a, b| self.tie_break(a, b));
        let removed_scores = doomed.iter().map(|&p| f64::from_bits(keys[p].0)).collect();
        let removed = self.remove_positions(&doomed);
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

    /// Pruning order between equal scores: older first, then id.
    fn tie_break(&self, a: usize, b: usize) -> Ordering {
        let (ta, tb) = (
            timestamp_key(self.rows[a].timestamp),
            timestamp_key(self.rows[b].timestamp),
        );
        ta.cmp(&tb)
            .then_with(|| self.items[a].id.cmp(&self.items[b].id))
    }
}

/// The key of an entry `select_lowest` must skip (sticky items); no score has it.
const EXCLUDED: u64 = u64::MAX;

/// Positions, ascending, of the smallest prefix of `v` in (key, `tie`) order whose
/// weights sum to at least `target` (all of it if it sums to less), skipping entries
/// keyed `EXCLUDED`. Weighted selection by histogram, O(n): one pass adds each weight
/// to its key's bucket (4096 buckets spanning the keys), which locates the bucket
/// holding the boundary; entries below it are taken, and only that bucket is sorted.
fn select_lowest(
    v: &[(u64, usize)],
    target: usize,
    tie: impl Fn(usize, usize) -> Ordering,
) -> Vec<usize> {
    const BUCKET_BITS: u32 = 12;
    let eligible = || v.iter().enumerate().filter(|(_, e)| e.0 != EXCLUDED);
    let (lo, hi) = eligible().fold((u64::MAX, 0), |(lo, hi), (_, e)| (lo.min(e.0), hi.max(e.0)));
    if target == 0 || lo > hi {
        return Vec::new();
    }
    let shift = (u64::BITS - (hi - lo).leading_zeros()).saturating_sub(BUCKET_BITS);
    let bucket = |key: u64| ((key - lo) >> shift) as usize;
    let mut weights = vec![0usize; 1 << BUCKET_BITS];
    for (_, e) in eligible() {
        weights[bucket(e.0)] += e.1;
    }
    // Buckets before `boundary` weigh less than `target` together: all taken.
    let (mut boundary, mut need) = (0, target);
    while boundary < weights.len() && weights[boundary] < need {
        need -= weights[boundary];
        boundary += 1;
    }
    // Positions below the boundary are written at the cursor unconditionally, which
    // advances only past them (no branch per entry: a third of them, scattered).
    let mut taken = vec![0; v.len()];
    let mut count = 0;
    let mut edge = Vec::new();
    for (pos, e) in v.iter().enumerate() {
        let b = if e.0 == EXCLUDED {
            usize::MAX
        } else {
            bucket(e.0)
        };
        taken[count] = pos;
        count += usize::from(b < boundary);
        if b == boundary {
            edge.push(pos);
        }
    }
    taken.truncate(count);
    edge.sort_unstable_by(|&a, &b| v[a].0.cmp(&v[b].0).then_with(|| tie(a, b)));
    let mut weight = 0;
    let cut = edge.iter().take_while(|&&p| {
        let more = weight < need;
        weight += v[p].1;
        more
    });
    let cut = cut.count();
    edge.truncate(cut);
    if edge.is_empty() {
        return taken;
    }
    // Merge the boundary's chosen few into the ascending positions.
    edge.sort_unstable();
    let mut out = Vec::with_capacity(taken.len() + edge.len());
    let mut edge = edge.into_iter().peekable();
    for pos in taken {
        while let Some(e) = edge.next_if(|&e| e < pos) {
            out.push(e);
        }
        out.push(pos);
    }
    out.extend(edge);
    out
}

fn check_now(now: f64) -> Result<()> {
    if now.is_finite() {
        Ok(())
    } else {
        Err(invalid(
            "now",
            format!("must be a finite timestamp, got {now}"),
        ))
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
    fn scores_follow_the_formula() {
        let mut w = window(1000);
        w.set_current_task(Some("t1".into()));
        add(&mut w, item("sys", T::SystemPrompt, NOW, 10));
        // 90 s old -> 1 whole minute; current task; one dependent.
        add(
            &mut w,
            ContextItem {
                task_id: Some("t1".into()),
                ..item(
                    "code",
                    T::CodeSnippet {
                        file_path: "a.py".into(),
                        line_range: (1, 5),
                    },
                    NOW - 90.0,
                    10,
                )
            },
        );
        add(
            &mut w,
            ContextItem {
                dependencies: vec!["code".into()],
                relevance_score: 0.5,
                ..item(
                    "tool",
                    T::ToolResult {
                        tool_name: "bash".into(),
                        file_path: None,
                    },
                    NOW - 3600.0,
                    10,
                )
            },
        );
        add(
            &mut w,
            item("say", T::AssistantResponse { tool_calls: vec![] }, NOW, 10),
        );
        add(
            &mut w,
            item(
                "act",
                T::AssistantResponse {
                    tool_calls: vec!["edit".into()],
                },
                NOW + 600.0,
                10,
            ),
        );
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
        add(
            &mut w,
            ContextItem {
                sticky: true,
                ..item("sys", T::SystemPrompt, NOW, 20)
            },
        );
        add(
            &mut w,
            item(
                "old_graph",
                T::KnowledgeGraphQuery {
                    query: "q".into(),
                    result_summary: "r".into(),
                },
                NOW - 7200.0,
                20,
            ),
        );
        add(
            &mut w,
            item(
                "old_code",
                T::CodeSnippet {
                    file_path: "a.py".into(),
                    line_range: (1, 2),
                },
                NOW - 7200.0,
                20,
            ),
        );
        add(
            &mut w,
            item("user", T::UserMessage { intent: None }, NOW, 25),
        );
        assert_eq!(
            w.maybe_prune(NOW).unwrap().map(|r| r.tokens_before),
            Some(85)
        );
        // 85 tokens > 80: target = max(25, 5) = 25; graph (0.6e^-2) then code (0.7e^-2).
        assert_eq!(
            w.items().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            ["sys", "user"]
        );
        assert_eq!(w.token_count(), 45);
        assert_eq!(w.pruning_count(), 1);
        assert_eq!(w.index.len(), 2);
        assert_eq!(w.rows.len(), 2);
        assert_eq!(w.get("user").unwrap().token_cost, 25);
        assert!(w.maybe_prune(NOW).unwrap().is_none());
    }

    #[test]
    fn removed_items_come_back_in_window_order_with_their_scores() {
        let mut w = window(1000);
        for (id, age) in [
            ("a", 7200.0),
            ("b", 0.0),
            ("c", 3600.0),
            ("d", 10800.0),
            ("e", 60.0),
        ] {
            add(
                &mut w,
                item(
                    id,
                    T::ToolResult {
                        tool_name: "t".into(),
                        file_path: None,
                    },
                    NOW - age,
                    10,
                ),
            );
        }
        w.policy.prune_fraction = 0.6; // 30 tokens: three items
        let r = w.prune(NOW).unwrap();
        // Lowest scores: d (3 h), a (2 h), c (1 h); reported in window order.
        assert_eq!(
            r.removed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            ["a", "c", "d"]
        );
        let expected: Vec<f64> = [120.0f64, 60.0, 180.0]
            .iter()
            .map(|m| (-m / 60.0).exp() * 0.8)
            .collect();
        assert_eq!(r.removed_scores, expected);
        assert_eq!(
            w.items().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            ["b", "e"]
        );
    }

    #[test]
    fn ties_break_older_first_then_by_id() {
        let mut w = window(1000);
        for id in ["b", "a", "c"] {
            add(
                &mut w,
                item(
                    id,
                    T::ToolResult {
                        tool_name: "t".into(),
                        file_path: None,
                    },
                    NOW,
                    10,
                ),
            );
        }
        add(
            &mut w,
            item(
                "z",
                T::ToolResult {
                    tool_name: "t".into(),
                    file_path: None,
                },
                NOW - 1.0,
                10,
            ),
        );
        let r = w.prune(NOW).unwrap(); // target 12 tokens -> two items: z (older), then a
        let ids: Vec<_> = r.removed.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["a", "z"]);
        assert_eq!(r.reason, PruneReason::Requested);
    }

    #[test]
    fn negative_zero_ties_with_zero_as_in_the_reference() {
        // Python compares -0.0 == 0.0; sort keys built from raw bits would not.
        let mut w = window(1000);
        let tool = || T::ToolResult {
            tool_name: "t".into(),
            file_path: None,
        };
        add(
            &mut w,
            ContextItem {
                relevance_score: 0.0,
                ..item("b", tool(), 0.0, 10)
            },
        );
        add(
            &mut w,
            ContextItem {
                relevance_score: -0.0,
                ..item("a", tool(), -0.0, 10)
            },
        );
        add(&mut w, item("c", tool(), 0.0, 10));
        let r = w.prune(0.0).unwrap(); // target 9 tokens: one item; a and b tie on score and time
        assert_eq!(
            r.removed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
    }

    #[test]
    fn far_over_threshold_prunes_back_under_it() {
        let mut w = window(100);
        for i in 0..30 {
            add(
                &mut w,
                item(
                    &format!("i{i}"),
                    T::ToolResult {
                        tool_name: "t".into(),
                        file_path: None,
                    },
                    NOW - i as f64 * 60.0,
                    10,
                ),
            );
        }
        let r = w.maybe_prune(NOW).unwrap().unwrap();
        assert_eq!(
            (r.tokens_before, r.target_tokens, r.tokens_after),
            (300, 220, 80)
        );
        // The 22 oldest go.
        assert_eq!(
            r.removed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            (8..30).map(|i| format!("i{i}")).collect::<Vec<_>>()
        );
    }

    #[test]
    fn dependents_are_counted_once_per_dependent_and_forgotten_when_removed() {
        let mut w = window(1000);
        add(
            &mut w,
            item(
                "base",
                T::ToolResult {
                    tool_name: "t".into(),
                    file_path: None,
                },
                NOW,
                1,
            ),
        );
        add(
            &mut w,
            ContextItem {
                dependencies: vec!["base".into()],
                ..item("d1", T::SystemPrompt, NOW, 1)
            },
        );
        add(
            &mut w,
            ContextItem {
                dependencies: vec!["base".into(), "d1".into()],
                ..item("d2", T::SystemPrompt, NOW, 1)
            },
        );
        let deps = |w: &ContextWindow| w.rows.iter().map(|r| r.dependents).collect::<Vec<_>>();
        assert_eq!(deps(&w), vec![2, 1, 0]);
        w.remove("d1").unwrap();
        assert_eq!(deps(&w), vec![1, 0]);
        // A dependency names the item present when the dependent was added: an id
        // removed and added again is a new item nobody depends on yet.
        w.remove("base").unwrap();
        add(
            &mut w,
            item(
                "base",
                T::ToolResult {
                    tool_name: "t".into(),
                    file_path: None,
                },
                NOW,
                1,
            ),
        );
        assert_eq!(deps(&w), vec![0, 0]);
        assert_eq!(w.get("d2").unwrap().id, "d2");
        assert_eq!(w.token_count(), 2);
    }

    #[test]
    fn bad_input_is_rejected_and_leaves_the_window_unchanged() {
        let mut w = window(1000);
        add(&mut w, item("a", T::SystemPrompt, NOW, 5));
        let dup = Arc::new(item("a", T::SystemPrompt, NOW, 5));
        assert!(matches!(w.add(dup), Err(Error::DuplicateId(id)) if id == "a"));
        let batch = vec![
            Arc::new(item("b", T::SystemPrompt, NOW, 5)),
            Arc::new(ContextItem {
                dependencies: vec!["missing".into()],
                ..item("c", T::SystemPrompt, NOW, 5)
            }),
        ];
        assert!(matches!(
            w.extend(batch),
            Err(Error::UnknownDependency { .. })
        ));
        assert_eq!((w.len(), w.token_count()), (1, 5));
        assert!(matches!(w.remove("zzz"), Err(Error::UnknownId(id)) if id == "zzz"));
        assert!(w.scores(f64::NAN).is_err());
        assert!(w.maybe_prune(f64::INFINITY).is_err());
        assert!(ContextWindow::new(0, ContextPolicy::default()).is_err());
    }

    #[test]
    fn weighted_selection_equals_sorting_everything() {
        let mut next = crate::testing::test_rng(0x2545_f491_4f6c_dd1du64);
        for round in 0..600 {
            let n = next(400) as usize;
            // Keys packed (many ties, one bucket per key) or spread over 2^60 (many
            // keys per bucket); some entries excluded.
            let spread = if round % 2 == 0 { 1 } else { 1 << next(56) };
            let key = |next: &mut dyn FnMut(u64) -> u64| {
                if next(10) == 0 {
                    EXCLUDED
                } else {
                    next(50) * spread + next(3)
                }
            };
            let v: Vec<(u64, usize)> = (0..n)
                .map(|_| (key(&mut next), next(30) as usize))
                .collect();
            let total: usize = v.iter().filter(|x| x.0 != EXCLUDED).map(|x| x.1).sum();
            let target = if round % 7 == 0 {
                total + 5
            } else {
                next(total as u64 + 1) as usize
            };
            let mut sorted: Vec<(u64, usize, usize)> = (0..n)
                .filter(|&p| v[p].0 != EXCLUDED)
                .map(|p| (v[p].0, v[p].1, p))
                .collect();
            sorted.sort();
            let (mut k, mut taken) = (0, 0);
            while k < sorted.len() && taken < target {
                taken += sorted[k].1;
                k += 1;
            }
            let mut want: Vec<usize> = sorted[..k].iter().map(|x| x.2).collect();
            want.sort();
            assert_eq!(
                select_lowest(&v, target, |a, b| (v[a].1, a).cmp(&(v[b].1, b))),
                want
            );
        }
    }

    #[test]
    fn only_sticky_items_left_means_nothing_removed() {
        let mut w = window(10);
        add(
            &mut w,
            ContextItem {
                sticky: true,
                ..item("s", T::SystemPrompt, NOW, 50)
            },
        );
        let r = w.maybe_prune(NOW).unwrap().unwrap();
        assert!(r.removed.is_empty());
        assert_eq!(r.tokens_after, 50);
    }
}
