//! A project's task list (`harness-tasks.json`) as its views show it: whether
//! it could be read, and a task's status. Reading it is `harness-plan`'s.

use serde::{Deserialize, Serialize};

/// Whether the task list could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanState {
    Ok,
    /// No `harness-tasks.json` in the directory (or no such directory).
    Missing,
    /// The file does not parse or has a wrong field: see `error`.
    Error,
}

/// A plan task's `status` as the file has it: one of the four the loop
/// writes, or any other text, kept as written (the file is the user's).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Other(String),
}

impl PlanStatus {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Other(text) => text,
        }
    }
}

impl From<String> for PlanStatus {
    fn from(text: String) -> Self {
        match text.as_str() {
            "pending" => Self::Pending,
            "in_progress" => Self::InProgress,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            _ => Self::Other(text),
        }
    }
}

impl From<PlanStatus> for String {
    fn from(status: PlanStatus) -> Self {
        match status {
            PlanStatus::Other(text) => text,
            known => known.as_str().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_its_text_known_or_not() {
        for text in ["pending", "in_progress", "completed", "failed", "on hold"] {
            let status = PlanStatus::from(text.to_string());
            assert_eq!(status.as_str(), text);
            assert_eq!(
                serde_json::to_value(&status).ok(),
                Some(serde_json::Value::from(text))
            );
        }
        assert_eq!(
            PlanStatus::from("on hold".to_string()),
            PlanStatus::Other("on hold".into())
        );
        assert_eq!(
            serde_json::from_str::<PlanStatus>("\"completed\"").ok(),
            Some(PlanStatus::Completed)
        );
    }
}
