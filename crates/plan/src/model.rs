//! The `harness-tasks.json` data model (version 2).
//!
//! Parsing is lenient the way the seed's hooks are (a non-integer `attempts` reads as 0, a
//! non-integer `max_attempts` as 3, non-object task entries are skipped) and every field this
//! crate does not know is kept in an `extra` map and written back unchanged.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Current file format version.
pub const FORMAT_VERSION: i64 = 2;
/// Default `max_attempts` of a task.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// `status` values.
pub mod status {
    pub const PENDING: &str = "pending";
    pub const IN_PROGRESS: &str = "in_progress";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
}

/// Error categories of the log and of `error_log` entries (A9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    EnvSetup,
    Config,
    TaskExec,
    TestFail,
    Timeout,
    Dependency,
    SessionTimeout,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::EnvSetup => "ENV_SETUP",
            Category::Config => "CONFIG",
            Category::TaskExec => "TASK_EXEC",
            Category::TestFail => "TEST_FAIL",
            Category::Timeout => "TIMEOUT",
            Category::Dependency => "DEPENDENCY",
            Category::SessionTimeout => "SESSION_TIMEOUT",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Some(match s.trim_matches(|c| c == '[' || c == ']') {
            "ENV_SETUP" => Category::EnvSetup,
            "CONFIG" => Category::Config,
            "TASK_EXEC" => Category::TaskExec,
            "TEST_FAIL" => Category::TestFail,
            "TIMEOUT" => Category::Timeout,
            "DEPENDENCY" => Category::Dependency,
            "SESSION_TIMEOUT" => Category::SessionTimeout,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TasksFile {
    #[serde(default = "default_version", deserialize_with = "lenient_i64_version")]
    pub version: i64,
    #[serde(default, deserialize_with = "lenient")]
    pub created: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub session_config: SessionConfig,
    #[serde(default, deserialize_with = "tasks_skipping_non_objects")]
    pub tasks: Vec<Task>,
    #[serde(default, deserialize_with = "lenient")]
    pub session_count: u64,
    #[serde(default, deserialize_with = "lenient")]
    pub last_session: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_version() -> i64 {
    FORMAT_VERSION
}

impl TasksFile {
    /// A fresh file as `init` writes it.
    pub fn new(now: &str) -> Self {
        TasksFile {
            version: FORMAT_VERSION,
            created: Some(now.to_string()),
            session_config: SessionConfig {
                concurrency_mode: Some("exclusive".into()),
                max_tasks_per_session: Some(20),
                max_sessions: Some(50),
                extra: Map::new(),
            },
            tasks: Vec::new(),
            session_count: 0,
            last_session: None,
            extra: Map::new(),
        }
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    pub fn task_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }

    pub fn concurrent(&self) -> bool {
        self.session_config.concurrent()
    }
}

/// `session_config`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionConfig {
    #[serde(default, deserialize_with = "lenient")]
    pub concurrency_mode: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub max_tasks_per_session: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub max_sessions: Option<u64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionConfig {
    /// Anything other than `"concurrent"` is exclusive.
    pub fn concurrent(&self) -> bool {
        self.concurrency_mode.as_deref() == Some("concurrent")
    }
    /// `0` or missing means no limit.
    pub fn max_tasks(&self) -> Option<u64> {
        self.max_tasks_per_session.filter(|n| *n > 0)
    }
    /// `0` or missing means no limit.
    pub fn max_sessions(&self) -> Option<u64> {
        self.max_sessions.filter(|n| *n > 0)
    }
}

/// One task object.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    #[serde(default, deserialize_with = "lenient_string")]
    pub id: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub title: String,
    /// Kept as the raw string; a missing status reads as `pending`.
    #[serde(default = "default_status", deserialize_with = "lenient_status")]
    pub status: String,
    #[serde(default, deserialize_with = "lenient")]
    pub priority: Option<String>,
    /// Kept raw: a value that is not an array of strings means "never satisfied".
    #[serde(default = "empty_array")]
    pub depends_on: Value,
    #[serde(default, deserialize_with = "lenient")]
    pub attempts: u32,
    #[serde(
        default = "default_max_attempts",
        deserialize_with = "lenient_max_attempts"
    )]
    pub max_attempts: u32,
    #[serde(default, deserialize_with = "lenient")]
    pub started_at_commit: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub validation: Validation,
    #[serde(default, deserialize_with = "lenient")]
    pub on_failure: OnFailure,
    #[serde(default, deserialize_with = "lenient_vec")]
    pub error_log: Vec<String>,
    #[serde(default, deserialize_with = "lenient_vec")]
    pub checkpoints: Vec<Checkpoint>,
    #[serde(default, deserialize_with = "lenient")]
    pub completed_at: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub claimed_by: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub claimed_at: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub lease_expires_at: Option<String>,
    /// Our addition (docs/decisions.md D16): when the task last failed, for "oldest failure first" retries.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_failed_at: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_status() -> String {
    status::PENDING.to_string()
}
fn empty_array() -> Value {
    Value::Array(Vec::new())
}
fn default_max_attempts() -> u32 {
    DEFAULT_MAX_ATTEMPTS
}

impl Task {
    pub fn new(id: String, title: String) -> Self {
        Task {
            id,
            title,
            status: default_status(),
            priority: Some("P1".into()),
            depends_on: empty_array(),
            attempts: 0,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            started_at_commit: None,
            validation: Validation::default(),
            on_failure: OnFailure::default(),
            error_log: Vec::new(),
            checkpoints: Vec::new(),
            completed_at: None,
            claimed_by: None,
            claimed_at: None,
            lease_expires_at: None,
            last_failed_at: None,
            extra: Map::new(),
        }
    }

    /// The dependency ids, or `None` when `depends_on` is malformed (never satisfied).
    pub fn deps(&self) -> Option<Vec<&str>> {
        match &self.depends_on {
            Value::Null => Some(Vec::new()),
            Value::Array(items) => items.iter().map(|v| v.as_str()).collect(),
            _ => None,
        }
    }

    /// Rank of the priority: P0=0, P1=1, P2=2, anything else 9.
    pub fn priority_rank(&self) -> u8 {
        match self.priority.as_deref() {
            Some("P0") => 0,
            Some("P1") => 1,
            Some("P2") => 2,
            _ => 9,
        }
    }

    pub fn is(&self, status: &str) -> bool {
        self.status == status
    }

    /// The validation command, if set and non-blank.
    pub fn validation_command(&self) -> Option<&str> {
        self.validation
            .command
            .as_deref()
            .filter(|c| !c.trim().is_empty())
    }

    /// The last `error_log` entry.
    pub fn last_error(&self) -> Option<&str> {
        self.error_log.last().map(String::as_str)
    }

    pub fn has_error_category(&self, cat: Category) -> bool {
        let tag = format!("[{}]", cat.as_str());
        self.error_log.iter().any(|e| e.starts_with(&tag))
    }

    /// Drops the claim metadata.
    pub fn clear_claim(&mut self) {
        self.claimed_by = None;
        self.claimed_at = None;
        self.lease_expires_at = None;
    }
}

/// `validation`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Validation {
    #[serde(default, deserialize_with = "lenient")]
    pub command: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_seconds: Option<u64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `on_failure`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OnFailure {
    #[serde(default, deserialize_with = "lenient")]
    pub cleanup: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One `checkpoints` entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Checkpoint {
    #[serde(default, deserialize_with = "lenient")]
    pub step: u32,
    #[serde(default, deserialize_with = "lenient")]
    pub total: u32,
    #[serde(default, deserialize_with = "lenient_string")]
    pub description: String,
    #[serde(default, deserialize_with = "lenient_string")]
    pub timestamp: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

// ---- time helpers ----

/// Now as ISO-8601 UTC with second precision and `Z`.
pub fn now_iso() -> String {
    iso(Utc::now())
}

pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parses an RFC 3339 timestamp (the lease and failure times).
pub fn parse_iso(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

// ---- lenient deserializers ----

fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

fn lenient_vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|i| serde_json::from_value(i).ok())
            .collect(),
        _ => Vec::new(),
    })
}

fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

fn lenient_status<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::String(s) => s,
        Value::Null => default_status(),
        other => other.to_string(),
    })
}

fn lenient_max_attempts<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(DEFAULT_MAX_ATTEMPTS))
}

fn lenient_i64_version<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_i64().unwrap_or(FORMAT_VERSION))
}

fn tasks_skipping_non_objects<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Task>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Array(items) => items
            .into_iter()
            .filter(Value::is_object)
            .filter_map(|i| serde_json::from_value(i).ok())
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_round_trip() {
        let src = r#"{"version":2,"future":{"a":1},"session_config":{"concurrency_mode":"concurrent","x":true},
            "tasks":[{"id":"task-001","title":"t","status":"pending","custom":[1,2],
            "validation":{"command":"true","timeout_seconds":5,"shell":"bash"}}, 7],"session_count":1}"#;
        let f: TasksFile = serde_json::from_str(src).expect("parse");
        assert!(f.concurrent());
        let out = serde_json::to_value(&f).expect("ser");
        assert_eq!(out["future"]["a"], 1);
        assert_eq!(out["session_config"]["x"], true);
        assert_eq!(out["tasks"][0]["custom"][1], 2);
        assert_eq!(out["tasks"][0]["validation"]["shell"], "bash");
        assert_eq!(out["tasks"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn lenient_numbers_and_deps() {
        let src = r#"{"tasks":[{"id":"a","attempts":"x","max_attempts":null,"depends_on":"b"},
            {"id":"b"}]}"#;
        let f: TasksFile = serde_json::from_str(src).expect("parse");
        assert_eq!(f.tasks[0].attempts, 0);
        assert_eq!(f.tasks[0].max_attempts, 3);
        assert!(f.tasks[0].deps().is_none());
        assert_eq!(f.tasks[1].status, "pending");
        assert_eq!(f.tasks[1].priority_rank(), 9);
    }
}
