use crate::error::{invalid, non_negative, Result};

/// The user's intent behind a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserIntent {
    CodeReading,
    CodeWriting,
    ProjectFixing,
    ProjectExploration,
}

impl UserIntent {
    pub const ALL: [UserIntent; 4] = [
        UserIntent::CodeReading,
        UserIntent::CodeWriting,
        UserIntent::ProjectFixing,
        UserIntent::ProjectExploration,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UserIntent::CodeReading => "CodeReading",
            UserIntent::CodeWriting => "CodeWriting",
            UserIntent::ProjectFixing => "ProjectFixing",
            UserIntent::ProjectExploration => "ProjectExploration",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|i| i.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<_> = Self::ALL.iter().map(|i| i.as_str()).collect();
                invalid(
                    "intent",
                    format!("{name:?} is not one of {}", known.join(", ")),
                )
            })
    }
}

/// The seven kinds of context item, with their fields.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextItemType {
    SystemPrompt,
    UserMessage {
        intent: Option<UserIntent>,
    },
    AssistantResponse {
        tool_calls: Vec<String>,
    },
    ToolResult {
        tool_name: String,
        file_path: Option<String>,
    },
    /// `line_range` is inclusive, 1-based, as editors show it.
    CodeSnippet {
        file_path: String,
        line_range: (u64, u64),
    },
    TaskState {
        task_id: String,
        description: String,
    },
    KnowledgeGraphQuery {
        query: String,
        result_summary: String,
    },
}

impl ContextItemType {
    pub fn name(&self) -> &'static str {
        match self {
            ContextItemType::SystemPrompt => "SystemPrompt",
            ContextItemType::UserMessage { .. } => "UserMessage",
            ContextItemType::AssistantResponse { .. } => "AssistantResponse",
            ContextItemType::ToolResult { .. } => "ToolResult",
            ContextItemType::CodeSnippet { .. } => "CodeSnippet",
            ContextItemType::TaskState { .. } => "TaskState",
            ContextItemType::KnowledgeGraphQuery { .. } => "KnowledgeGraphQuery",
        }
    }
}

/// One entry of the context window. Immutable once built: the window shares items
/// with Python through `Arc`, so reading them never copies their content.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextItem {
    pub id: String,
    pub content: String,
    pub item_type: ContextItemType,
    /// Seconds since the Unix epoch.
    pub timestamp: f64,
    /// Explicit relevance set by whoever added the item (meant as 0.0 to 1.0; any
    /// finite value >= 0 is accepted, the final score is clamped).
    pub relevance_score: f64,
    pub token_cost: usize,
    pub task_id: Option<String>,
    /// Ids of items this one depends on, without repeats.
    pub dependencies: Vec<String>,
    pub sticky: bool,
}

impl ContextItem {
    /// Checks every field; removes repeated dependencies (an item counts once as a
    /// dependent of each item it depends on).
    pub fn validated(mut self) -> Result<Self> {
        if self.id.is_empty() {
            return Err(invalid("id", "must not be empty"));
        }
        if !self.timestamp.is_finite() {
            return Err(invalid(
                "timestamp",
                format!("must be finite, got {}", self.timestamp),
            ));
        }
        non_negative("relevance_score", self.relevance_score)?;
        if let ContextItemType::CodeSnippet {
            line_range: (start, end),
            ..
        } = self.item_type
        {
            if start > end {
                return Err(invalid(
                    "line_range",
                    format!("start {start} is after end {end}"),
                ));
            }
        }
        let mut seen = foldhash::HashSet::default();
        self.dependencies.retain(|d| seen.insert(d.clone()));
        if seen.contains(&self.id) {
            return Err(invalid(
                "dependencies",
                format!("item {:?} depends on itself", self.id),
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn item(id: &str, kind: ContextItemType, timestamp: f64, tokens: usize) -> ContextItem {
        ContextItem {
            id: id.into(),
            content: format!("content of {id}"),
            item_type: kind,
            timestamp,
            relevance_score: 1.0,
            token_cost: tokens,
            task_id: None,
            dependencies: vec![],
            sticky: false,
        }
    }

    #[test]
    fn validation_rejects_bad_fields() {
        let ok = item("a", ContextItemType::SystemPrompt, 0.0, 1);
        assert!(ok.clone().validated().is_ok());
        let nan = ContextItem {
            relevance_score: f64::NAN,
            ..ok.clone()
        };
        assert!(matches!(
            nan.validated(),
            Err(crate::Error::InvalidValue {
                field: "relevance_score",
                ..
            })
        ));
        let neg = ContextItem {
            relevance_score: -0.5,
            ..ok.clone()
        };
        assert!(neg.validated().is_err());
        let inf_ts = ContextItem {
            timestamp: f64::INFINITY,
            ..ok.clone()
        };
        assert!(inf_ts.validated().is_err());
        let empty = ContextItem {
            id: String::new(),
            ..ok.clone()
        };
        assert!(empty.validated().is_err());
        let own = ContextItem {
            dependencies: vec!["a".into()],
            ..ok.clone()
        };
        assert!(own.validated().is_err());
        let bad_range = ContextItem {
            item_type: ContextItemType::CodeSnippet {
                file_path: "x.py".into(),
                line_range: (9, 3),
            },
            ..ok
        };
        assert!(bad_range.validated().is_err());
    }

    #[test]
    fn repeated_dependencies_count_once() {
        let it = ContextItem {
            dependencies: vec!["b".into(), "c".into(), "b".into()],
            ..item("a", ContextItemType::SystemPrompt, 0.0, 1)
        };
        assert_eq!(it.validated().unwrap().dependencies, vec!["b", "c"]);
    }

    #[test]
    fn intents_round_trip() {
        for i in UserIntent::ALL {
            assert_eq!(UserIntent::parse(i.as_str()).unwrap(), i);
        }
        assert!(UserIntent::parse("Chatting").is_err());
    }
}
