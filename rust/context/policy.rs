use crate::error::{Error, Result};

/// Declares the policy once: field, default and doc. Generates the
/// struct, `Default`, and access by name for the bindings and config files.
macro_rules! context_policy {
    ($($(#[doc = $doc:literal])* $field:ident = $default:expr;)*) => {
        /// Every constant of the relevance formula and the pruning rule.
        #[derive(Debug, Clone, PartialEq)]
        pub struct ContextPolicy {
            $($(#[doc = $doc])* pub $field: f64,)*
        }

        impl Default for ContextPolicy {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        impl ContextPolicy {
            /// Field names, in declaration order.
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($field),)*];

            pub fn get(&self, name: &str) -> Option<f64> {
                match name {
                    $(stringify!($field) => Some(self.$field),)*
                    _ => None,
                }
            }

            /// Sets one field by name; the whole policy is checked by `validate`.
            pub fn set(&mut self, name: &str, value: f64) -> Result<()> {
                match name {
                    $(stringify!($field) => self.$field = value,)*
                    _ => {
                        return Err(Error::Policy {
                            field: name.to_string(),
                            reason: format!("unknown field; known fields: {}", Self::FIELDS.join(", ")),
                        })
                    }
                }
                Ok(())
            }
        }
    };
}

context_policy! {
    /// Prune when the window holds more than this fraction of max_tokens.
    prune_threshold = 0.8;
    /// Remove at least this fraction of the current tokens per prune.
    prune_fraction = 0.3;
    /// Time decay: score *= exp(-age_minutes / decay_minutes).
    decay_minutes = 60.0;
    /// Multiplier for items of the current task.
    current_task_boost = 2.0;
    /// score *= 1 + dependent_boost * (number of items depending on this one).
    dependent_boost = 0.2;
    /// Scores are clamped to [0, max_score].
    max_score = 100.0;
    weight_system_prompt = 100.0;
    weight_task_state = 2.0;
    weight_user_message = 1.5;
    /// AssistantResponse with at least one tool call.
    weight_assistant_tool_calls = 1.2;
    /// AssistantResponse without tool calls.
    weight_assistant_text = 0.9;
    weight_tool_result = 0.8;
    weight_code_snippet = 0.7;
    weight_graph_query = 0.6;
}

impl ContextPolicy {
    pub fn validate(&self) -> Result<()> {
        for &name in Self::FIELDS {
            let value = self.get(name).unwrap_or(f64::NAN);
            let bad = |reason: &str| Error::Policy {
                field: name.to_string(),
                reason: format!("{reason}, got {value}"),
            };
            if !value.is_finite() || value < 0.0 {
                return Err(bad("must be a finite number >= 0"));
            }
            let fraction = matches!(name, "prune_threshold" | "prune_fraction");
            if fraction && !(value > 0.0 && value <= 1.0) {
                return Err(bad("must be in (0, 1]"));
            }
            if name == "decay_minutes" && value == 0.0 {
                return Err(bad("must be > 0"));
            }
        }
        Ok(())
    }

    /// A small index per kind of item (assistant responses split by tool calls), so
    /// scoring looks weights up in an array.
    pub fn kind_index(item_type: &super::ContextItemType) -> u8 {
        use super::ContextItemType::*;
        match item_type {
            SystemPrompt => 0,
            TaskState { .. } => 1,
            UserMessage { .. } => 2,
            AssistantResponse { tool_calls } if !tool_calls.is_empty() => 3,
            AssistantResponse { .. } => 4,
            ToolResult { .. } => 5,
            CodeSnippet { .. } => 6,
            KnowledgeGraphQuery { .. } => 7,
        }
    }

    /// The type multiplier of each `kind_index`.
    pub fn kind_weights(&self) -> [f64; 8] {
        [
            self.weight_system_prompt,
            self.weight_task_state,
            self.weight_user_message,
            self.weight_assistant_tool_calls,
            self.weight_assistant_text,
            self.weight_tool_result,
            self.weight_code_snippet,
            self.weight_graph_query,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_reference_values_and_valid() {
        let p = ContextPolicy::default();
        assert_eq!(
            (p.prune_threshold, p.prune_fraction, p.decay_minutes),
            (0.8, 0.3, 60.0)
        );
        assert_eq!(p.get("weight_graph_query"), Some(0.6));
        p.validate().unwrap();
    }

    #[test]
    fn bad_values_are_rejected_by_name() {
        for (name, value) in [
            ("prune_threshold", 0.0),
            ("prune_fraction", 1.5),
            ("decay_minutes", 0.0),
            ("weight_tool_result", f64::NAN),
            ("current_task_boost", -1.0),
        ] {
            let mut p = ContextPolicy::default();
            p.set(name, value).unwrap();
            match p.validate() {
                Err(Error::Policy { field, .. }) => assert_eq!(field, name),
                other => panic!("{name}={value}: {other:?}"),
            }
        }
        assert!(ContextPolicy::default().set("nope", 1.0).is_err());
    }
}
