//! Python classes for the context window. No logic here: see `crate::context`.

use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1};
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::{Checked, Int, LineRange, Real, Text};
use super::detached;
use crate::context::{
    ContextItem, ContextItemType, ContextPolicy, ContextWindow, PruneResult, UserIntent,
};
use crate::error::count;

/// The kind of a context item and its fields.
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "ContextItemType")]
#[derive(Clone, PartialEq)]
pub enum PyContextItemType {
    SystemPrompt {},
    #[pyo3(constructor = (intent = None))]
    UserMessage {
        intent: Option<Text>,
    },
    #[pyo3(constructor = (tool_calls = Checked(Vec::new())))]
    AssistantResponse {
        tool_calls: Checked<Vec<Text>>,
    },
    #[pyo3(constructor = (tool_name, file_path = None))]
    ToolResult {
        tool_name: Text,
        file_path: Option<Text>,
    },
    CodeSnippet {
        file_path: Text,
        line_range: LineRange,
    },
    TaskState {
        task_id: Text,
        description: Text,
    },
    KnowledgeGraphQuery {
        query: Text,
        result_summary: Text,
    },
}

impl PyContextItemType {
    fn to_core(&self) -> PyResult<ContextItemType> {
        use PyContextItemType as P;
        let texts = |v: Vec<Text>| v.into_iter().map(|t| t.0).collect();
        Ok(match self.clone() {
            P::SystemPrompt {} => ContextItemType::SystemPrompt,
            P::UserMessage { intent } => ContextItemType::UserMessage {
                intent: intent.map(|i| UserIntent::parse(&i.0)).transpose()?,
            },
            P::AssistantResponse { tool_calls } => ContextItemType::AssistantResponse {
                tool_calls: texts(tool_calls.0),
            },
            P::ToolResult {
                tool_name,
                file_path,
            } => ContextItemType::ToolResult {
                tool_name: tool_name.0,
                file_path: file_path.map(|t| t.0),
            },
            P::CodeSnippet {
                file_path,
                line_range,
            } => ContextItemType::CodeSnippet {
                file_path: file_path.0,
                line_range: (line_range.0, line_range.1),
            },
            P::TaskState {
                task_id,
                description,
            } => ContextItemType::TaskState {
                task_id: task_id.0,
                description: description.0,
            },
            P::KnowledgeGraphQuery {
                query,
                result_summary,
            } => ContextItemType::KnowledgeGraphQuery {
                query: query.0,
                result_summary: result_summary.0,
            },
        })
    }

    fn from_core(kind: &ContextItemType) -> Self {
        use ContextItemType as C;
        match kind.clone() {
            C::SystemPrompt => Self::SystemPrompt {},
            C::UserMessage { intent } => Self::UserMessage {
                intent: intent.map(|i| Text(i.as_str().to_string())),
            },
            C::AssistantResponse { tool_calls } => Self::AssistantResponse {
                tool_calls: Checked(tool_calls.into_iter().map(Text).collect()),
            },
            C::ToolResult {
                tool_name,
                file_path,
            } => Self::ToolResult {
                tool_name: Text(tool_name),
                file_path: file_path.map(Text),
            },
            C::CodeSnippet {
                file_path,
                line_range: (first, last),
            } => Self::CodeSnippet {
                file_path: Text(file_path),
                line_range: LineRange(first, last),
            },
            C::TaskState {
                task_id,
                description,
            } => Self::TaskState {
                task_id: Text(task_id),
                description: Text(description),
            },
            C::KnowledgeGraphQuery {
                query,
                result_summary,
            } => Self::KnowledgeGraphQuery {
                query: Text(query),
                result_summary: Text(result_summary),
            },
        }
    }
}

fn py_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn py_opt(s: &Option<Text>) -> String {
    s.as_ref()
        .map_or_else(|| "None".to_string(), |t| py_str(&t.0))
}

#[pymethods]
impl PyContextItemType {
    fn __repr__(&self) -> String {
        use PyContextItemType as P;
        let (name, fields) = match self {
            P::SystemPrompt {} => ("SystemPrompt", String::new()),
            P::UserMessage { intent } => ("UserMessage", format!("intent={}", py_opt(intent))),
            P::AssistantResponse { tool_calls } => {
                let calls: Vec<_> = tool_calls.0.iter().map(|c| py_str(&c.0)).collect();
                (
                    "AssistantResponse",
                    format!("tool_calls=[{}]", calls.join(", ")),
                )
            }
            P::ToolResult {
                tool_name,
                file_path,
            } => (
                "ToolResult",
                format!(
                    "tool_name={}, file_path={}",
                    py_str(&tool_name.0),
                    py_opt(file_path)
                ),
            ),
            P::CodeSnippet {
                file_path,
                line_range: LineRange(a, b),
            } => (
                "CodeSnippet",
                format!("file_path={}, line_range=({a}, {b})", py_str(&file_path.0)),
            ),
            P::TaskState {
                task_id,
                description,
            } => (
                "TaskState",
                format!(
                    "task_id={}, description={}",
                    py_str(&task_id.0),
                    py_str(&description.0)
                ),
            ),
            P::KnowledgeGraphQuery {
                query,
                result_summary,
            } => (
                "KnowledgeGraphQuery",
                format!(
                    "query={}, result_summary={}",
                    py_str(&query.0),
                    py_str(&result_summary.0)
                ),
            ),
        };
        format!("ContextItemType.{name}({fields})")
    }
}

/// One immutable item of the context window.
#[pyclass(frozen, module = "aircher_mem._core", name = "ContextItem")]
pub struct PyContextItem(pub Arc<ContextItem>);

#[pymethods]
impl PyContextItem {
    #[new]
    #[pyo3(
        signature = (id, content, item_type, *, token_cost, timestamp, relevance_score = Real(1.0), task_id = None, dependencies = Checked(Vec::new()), sticky = Checked(false)),
        text_signature = "(id, content, item_type, *, token_cost, timestamp, relevance_score=1.0, task_id=None, dependencies=..., sticky=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        id: Text,
        content: Text,
        item_type: Checked<PyRef<'_, PyContextItemType>>,
        token_cost: Int<i64>,
        timestamp: Real,
        relevance_score: Real,
        task_id: Option<Text>,
        dependencies: Checked<Vec<Text>>,
        sticky: Checked<bool>,
    ) -> PyResult<Self> {
        let item = ContextItem {
            id: id.0,
            content: content.0,
            item_type: item_type.0.to_core()?,
            timestamp: timestamp.0,
            relevance_score: relevance_score.0,
            token_cost: count("token_cost", token_cost.0)?,
            task_id: task_id.map(|t| t.0),
            dependencies: dependencies.0.into_iter().map(|t| t.0).collect(),
            sticky: sticky.0,
        };
        Ok(Self(Arc::new(item.validated()?)))
    }

    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }
    #[getter]
    fn content(&self) -> &str {
        &self.0.content
    }
    #[getter]
    fn item_type(&self) -> PyContextItemType {
        PyContextItemType::from_core(&self.0.item_type)
    }
    /// The variant's name, e.g. "CodeSnippet".
    #[getter]
    fn type_name(&self) -> &'static str {
        self.0.item_type.name()
    }
    #[getter]
    fn timestamp(&self) -> f64 {
        self.0.timestamp
    }
    #[getter]
    fn relevance_score(&self) -> f64 {
        self.0.relevance_score
    }
    #[getter]
    fn token_cost(&self) -> usize {
        self.0.token_cost
    }
    #[getter]
    fn task_id(&self) -> Option<&str> {
        self.0.task_id.as_deref()
    }
    #[getter]
    fn dependencies(&self) -> Vec<String> {
        self.0.dependencies.clone()
    }
    #[getter]
    fn sticky(&self) -> bool {
        self.0.sticky
    }

    fn __repr__(&self) -> String {
        let sticky = if self.0.sticky { "True" } else { "False" };
        format!(
            "ContextItem(id={}, type={}, tokens={}, sticky={sticky})",
            py_str(&self.0.id),
            self.0.item_type.name(),
            self.0.token_cost
        )
    }
}

/// The constants of the relevance formula and pruning rule; the defaults are the
/// unweighted reference constants.
#[pyclass(frozen, eq, module = "aircher_mem._core", name = "ContextPolicy")]
#[derive(Clone, PartialEq)]
pub struct PyContextPolicy(pub ContextPolicy);

fn apply(
    mut policy: ContextPolicy,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<ContextPolicy> {
    if let Some(overrides) = overrides {
        for (name, value) in overrides.iter() {
            let name: Text = name.extract()?;
            let value: Real = value.extract()?;
            policy.set(&name.0, value.0)?;
        }
    }
    policy.validate()?;
    Ok(policy)
}

#[pymethods]
impl PyContextPolicy {
    #[new]
    #[pyo3(signature = (**overrides))]
    fn new(overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Ok(Self(apply(ContextPolicy::default(), overrides)?))
    }

    /// A copy with some fields changed.
    #[pyo3(signature = (**overrides))]
    fn replace(&self, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Ok(Self(apply(self.0.clone(), overrides)?))
    }

    /// Field names, in declaration order.
    #[classattr]
    fn fields() -> Vec<&'static str> {
        ContextPolicy::FIELDS.to_vec()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for &name in ContextPolicy::FIELDS {
            d.set_item(name, self.0.get(name))?;
        }
        Ok(d)
    }

    #[getter]
    fn prune_threshold(&self) -> f64 {
        self.0.prune_threshold
    }
    #[getter]
    fn prune_fraction(&self) -> f64 {
        self.0.prune_fraction
    }
    #[getter]
    fn decay_minutes(&self) -> f64 {
        self.0.decay_minutes
    }
    #[getter]
    fn current_task_boost(&self) -> f64 {
        self.0.current_task_boost
    }
    #[getter]
    fn dependent_boost(&self) -> f64 {
        self.0.dependent_boost
    }
    #[getter]
    fn max_score(&self) -> f64 {
        self.0.max_score
    }
    #[getter]
    fn weight_system_prompt(&self) -> f64 {
        self.0.weight_system_prompt
    }
    #[getter]
    fn weight_task_state(&self) -> f64 {
        self.0.weight_task_state
    }
    #[getter]
    fn weight_user_message(&self) -> f64 {
        self.0.weight_user_message
    }
    #[getter]
    fn weight_assistant_tool_calls(&self) -> f64 {
        self.0.weight_assistant_tool_calls
    }
    #[getter]
    fn weight_assistant_text(&self) -> f64 {
        self.0.weight_assistant_text
    }
    #[getter]
    fn weight_tool_result(&self) -> f64 {
        self.0.weight_tool_result
    }
    #[getter]
    fn weight_code_snippet(&self) -> f64 {
        self.0.weight_code_snippet
    }
    #[getter]
    fn weight_graph_query(&self) -> f64 {
        self.0.weight_graph_query
    }

    fn __repr__(&self) -> String {
        let fields: Vec<_> = ContextPolicy::FIELDS
            .iter()
            .map(|&n| format!("{n}={}", self.0.get(n).unwrap_or(f64::NAN)))
            .collect();
        format!("ContextPolicy({})", fields.join(", "))
    }
}

/// What one prune removed and why.
#[pyclass(frozen, module = "aircher_mem._core", name = "PruneResult")]
pub struct PyPruneResult(PruneResult);

#[pymethods]
impl PyPruneResult {
    /// Removed items, in window (chronological) order.
    #[getter]
    fn removed(&self) -> Vec<PyContextItem> {
        self.0.removed.iter().cloned().map(PyContextItem).collect()
    }
    /// Each removed item's score at removal, in the order of `removed`.
    #[getter]
    fn removed_scores(&self) -> Vec<f64> {
        self.0.removed_scores.clone()
    }
    #[getter]
    fn tokens_before(&self) -> usize {
        self.0.tokens_before
    }
    #[getter]
    fn tokens_after(&self) -> usize {
        self.0.tokens_after
    }
    #[getter]
    fn target_tokens(&self) -> usize {
        self.0.target_tokens
    }
    #[getter]
    fn threshold(&self) -> usize {
        self.0.threshold
    }
    /// "over_threshold" (from maybe_prune) or "requested" (from prune).
    #[getter]
    fn reason(&self) -> &'static str {
        self.0.reason.as_str()
    }

    fn __repr__(&self) -> String {
        let r = &self.0;
        format!(
            "PruneResult(removed={}, tokens {} -> {}, reason={:?})",
            r.removed.len(),
            r.tokens_before,
            r.tokens_after,
            r.reason.as_str()
        )
    }
}

/// The working memory: items scored and pruned under a token budget. Thread-safe;
/// scoring and pruning release the GIL.
#[pyclass(frozen, module = "aircher_mem._core", name = "ContextWindow")]
pub struct PyContextWindow(RwLock<ContextWindow>);

#[pymethods]
impl PyContextWindow {
    #[new]
    #[pyo3(signature = (max_tokens, policy = None))]
    fn new(
        max_tokens: Int<i64>,
        policy: Option<Checked<PyRef<'_, PyContextPolicy>>>,
    ) -> PyResult<Self> {
        let policy = policy.map(|p| p.0 .0.clone()).unwrap_or_default();
        Ok(Self(RwLock::new(ContextWindow::new(
            count("max_tokens", max_tokens.0)?,
            policy,
        )?)))
    }

    fn add(&self, item: Checked<PyRef<'_, PyContextItem>>) -> PyResult<()> {
        Ok(self.0.write().add(Arc::clone(&item.0 .0))?)
    }

    /// Adds many items, all or none.
    fn extend(
        &self,
        py: Python<'_>,
        items: Checked<Vec<PyRef<'_, PyContextItem>>>,
    ) -> PyResult<()> {
        let items: Vec<_> = items.0.iter().map(|i| Arc::clone(&i.0)).collect();
        Ok(detached(py, || self.0.write().extend(items))?)
    }

    fn remove(&self, id: Text) -> PyResult<PyContextItem> {
        Ok(PyContextItem(self.0.write().remove(&id.0)?))
    }

    fn get(&self, id: Text) -> PyResult<PyContextItem> {
        Ok(PyContextItem(Arc::clone(self.0.read().get(&id.0)?)))
    }

    /// The items, in the order they were added.
    fn items(&self) -> Vec<PyContextItem> {
        self.0
            .read()
            .items()
            .iter()
            .cloned()
            .map(PyContextItem)
            .collect()
    }

    fn __len__(&self) -> usize {
        self.0.read().len()
    }

    fn __contains__(&self, id: Text) -> bool {
        self.0.read().contains(&id.0)
    }

    #[getter]
    fn token_count(&self) -> usize {
        self.0.read().token_count()
    }
    #[getter]
    fn max_tokens(&self) -> usize {
        self.0.read().max_tokens()
    }
    /// Tokens above which maybe_prune prunes.
    #[getter]
    fn threshold(&self) -> usize {
        self.0.read().threshold()
    }
    #[getter]
    fn pruning_count(&self) -> usize {
        self.0.read().pruning_count()
    }
    #[getter]
    fn current_task(&self) -> Option<String> {
        self.0.read().current_task_id().map(str::to_string)
    }
    #[getter]
    fn policy(&self) -> PyContextPolicy {
        PyContextPolicy(self.0.read().policy().clone())
    }

    #[pyo3(signature = (task_id))]
    fn set_current_task(&self, task_id: Option<Text>) {
        self.0.write().set_current_task(task_id.map(|t| t.0));
    }

    /// Relevance of every item at `now` (Unix seconds), in window order, as float64.
    fn scores<'py>(&self, py: Python<'py>, now: Real) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let scores = detached(py, || self.0.read().scores(now.0))?;
        Ok(scores.into_pyarray(py))
    }

    /// Removes the lowest-scored non-sticky items (see the README for the rule).
    fn prune(&self, py: Python<'_>, now: Real) -> PyResult<PyPruneResult> {
        Ok(PyPruneResult(detached(py, || self.0.write().prune(now.0))?))
    }

    /// Prunes only when the window is over its threshold; returns None otherwise.
    fn maybe_prune(&self, py: Python<'_>, now: Real) -> PyResult<Option<PyPruneResult>> {
        Ok(detached(py, || self.0.write().maybe_prune(now.0))?.map(PyPruneResult))
    }

    /// An independent window with the same items (items are shared, not copied).
    fn copy(&self) -> Self {
        Self(RwLock::new(self.0.read().clone()))
    }

    fn __repr__(&self) -> String {
        let w = self.0.read();
        format!(
            "ContextWindow(items={}, tokens={}/{}, threshold={})",
            w.len(),
            w.token_count(),
            w.max_tokens(),
            w.threshold()
        )
    }
}
