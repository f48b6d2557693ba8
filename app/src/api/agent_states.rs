//! The agents' states as the pages show them: a task's recorded state in a
//! few words of the page's language (the task list, the task page), the
//! agents that need a person (`/harness`' "needs you"), and the one "waits
//! for you" count (the badge, the tab title, the phone menu). The rules are
//! the core's: which agent needs a person is
//! `harness_core::report::agents::needs_person`, the count is
//! `Reports::waiting` (the same as `GET /api/waiting`).

use harness_types::{AgentStateName, Severity};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// An agent's state as the task list and page show it
/// (`harness_core::model::AgentStateRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStateRow {
    pub state: AgentStateName,
    /// The state in a few words of the page's language ("usage-limited
    /// until 9:57am (UTC)", "erroring (7)", "exited 3").
    #[serde(default)]
    pub label: String,
    /// How bad it is, for its colour.
    pub severity: Severity,
    /// The state in words, as the core records it.
    pub reason: String,
    /// The screen lines that show it.
    pub lines: Vec<String>,
    pub since_ms: i64,
    /// A usage limit's reset, when the CLI printed it.
    pub reset_at_ms: Option<i64>,
    /// The task's agent needs a person
    /// (`harness_core::report::agents::needs_person`): what the "waits for
    /// you" count counts.
    pub needs_you: bool,
}

/// An agent that needs a person, as `/harness` lists it: its own few
/// fields, not a task row (`/harness` is the browser's main module, which
/// then carries no code of the task rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentNeedRow {
    pub task_id: String,
    pub title: String,
    /// What happened, in words (the core's).
    pub what: String,
    pub since_ms: i64,
    /// Its recorded state's name, words and severity (none, and no words:
    /// the run failed before a state was recorded).
    #[serde(with = "blank")]
    pub state: Option<AgentStateName>,
    pub label: String,
    #[serde(with = "blank")]
    pub severity: Option<Severity>,
}

/// An optional name written as `""` when there is none, and read back so
/// (the JSON of [`AgentNeedRow`] when its state and severity were texts).
mod blank {
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::value::StringDeserializer};

    pub fn serialize<T: Serialize, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => v.serialize(s),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        if text.is_empty() {
            return Ok(None);
        }
        T::deserialize(StringDeserializer::<D::Error>::new(text)).map(Some)
    }

    #[cfg(test)]
    mod tests {
        use harness_types::{AgentStateName, Severity};

        use super::super::AgentNeedRow;

        fn row(state: Option<AgentStateName>, severity: Option<Severity>) -> AgentNeedRow {
            AgentNeedRow {
                task_id: "t".into(),
                title: "T".into(),
                what: "w".into(),
                since_ms: 1,
                state,
                label: String::new(),
                severity,
            }
        }

        #[test]
        fn none_is_written_and_read_as_an_empty_text() {
            let json = |r: &AgentNeedRow| serde_json::to_value(r).ok();
            let none = row(None, None);
            let v = json(&none).unwrap_or_default();
            assert_eq!(v["state"], "");
            assert_eq!(v["severity"], "");
            let some = row(Some(AgentStateName::Exited), Some(Severity::Bad));
            let v = json(&some).unwrap_or_default();
            assert_eq!(v["state"], "exited");
            assert_eq!(v["severity"], "bad");
            for r in [none, some] {
                let back: Option<AgentNeedRow> = serde_json::to_string(&r)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok());
                assert_eq!(back, Some(r));
            }
            let unknown = r#"{"task_id":"t","title":"T","what":"w","since_ms":1,"state":"asleep","label":"","severity":""}"#;
            assert!(serde_json::from_str::<AgentNeedRow>(unknown).is_err());
        }
    }
}

/// The recorded state of the task's latest execution as shown, in the
/// language of the current request.
#[cfg(feature = "ssr")]
pub(crate) fn state_row(v: &harness_core::model::TaskView) -> Option<AgentStateRow> {
    let r = v.agent_state.as_ref()?;
    let l = crate::i18n::Locale::detect();
    let (label, severity) = words(l, r, chrono::Utc::now());
    Some(AgentStateRow {
        state: r.state,
        label,
        severity,
        reason: r.reason.clone(),
        lines: r.lines.clone(),
        since_ms: r.since.timestamp_millis(),
        reset_at_ms: r.reset_at.map(|t| t.timestamp_millis()),
        needs_you: harness_core::report::agents::needs_person(v).is_some(),
    })
}

/// A recorded state in a few words, and its severity.
#[cfg(feature = "ssr")]
fn words(
    l: crate::i18n::Locale,
    r: &harness_core::model::AgentStateRecord,
    now: chrono::DateTime<chrono::Utc>,
) -> (String, Severity) {
    use AgentStateName as N;
    let n = |key: &'static str, n: String| l.t(key).replace("{n}", &n);
    let label = match r.state {
        N::Working => l.t("task.state.working").into(),
        N::WaitingForPerson => l.t("task.state.waiting").into(),
        N::Idle => l.t("task.state.idle").into(),
        N::UsageLimited => match &r.reset_text {
            Some(at) => n("task.state.usage_limited_until", at.clone()),
            None => l.t("task.state.usage_limited").into(),
        },
        N::Erroring if r.gave_up => l.t("task.state.gave_up").into(),
        N::Erroring => match r.attempt {
            Some(a) => n("task.state.erroring_n", a.to_string()),
            None => l.t("task.state.erroring").into(),
        },
        N::LoggedOut => l.t("task.state.logged_out").into(),
        N::Stalled => {
            // Recorded once when it began; the silence has grown since.
            let silent = r.silent_secs.unwrap_or(0) as i64 + (now - r.since).num_seconds();
            let minutes = (silent / 60).max(1);
            n("task.state.stalled", minutes.to_string())
        }
        N::Exited => n("task.state.exited", r.exit_code.unwrap_or(0).to_string()),
        N::Crashed => match r.signal.filter(|s| *s > 0) {
            Some(s) => n("task.state.crashed", s.to_string()),
            None => l.t("task.state.crashed_lost").into(),
        },
    };
    (label, r.state.severity(r.exit_code, r.gave_up))
}

/// The one "waits for you" count: open questions + pending approvals +
/// agents that need a person (`Reports::waiting`, as `GET /api/waiting`).
#[server(prefix = "/sfn", endpoint = "waiting_count")]
pub async fn waiting_count() -> Result<u64, ServerFnError> {
    let h = ssr::harness()?;
    let waiting = h
        .reports()
        .waiting(&harness_core::auth::Identity::Browser)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(waiting.total)
}

/// The agents that need a person (`Reports::agents_needing_person`, the
/// agents the count counts), the longest waiting first.
#[server(prefix = "/sfn", endpoint = "agents_needing_you")]
pub async fn agents_needing_you() -> Result<Vec<AgentNeedRow>, ServerFnError> {
    use harness_core::CoreError;
    let h = ssr::harness()?;
    let mut rows = Vec::new();
    for need in h
        .reports()
        .agents_needing_person()
        .await
        .map_err(ssr::to_sfn)?
    {
        let view = match h.tasks().get_task(&need.task_id).await {
            Ok(v) => v,
            // Deleted since: nothing to show.
            Err(CoreError::NotFound(_)) => continue,
            Err(e) => return Err(ssr::to_sfn(e)),
        };
        let (state, label, severity) = match state_row(&view) {
            Some(s) => (Some(s.state), s.label, Some(s.severity)),
            None => (None, String::new(), None),
        };
        rows.push(AgentNeedRow {
            state,
            label,
            severity,
            task_id: need.task_id,
            title: view.task.title,
            what: need.what,
            since_ms: need.since.timestamp_millis(),
        });
    }
    rows.sort_by(|a, b| a.since_ms.cmp(&b.since_ms).then(a.task_id.cmp(&b.task_id)));
    Ok(rows)
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use chrono::{Duration, TimeZone, Utc};
    use harness_core::model::AgentStateRecord;

    use super::*;
    use crate::i18n::Locale;

    fn record(state: AgentStateName) -> AgentStateRecord {
        let at = Utc.with_ymd_and_hms(2026, 12, 5, 4, 0, 0).unwrap();
        AgentStateRecord {
            execution_id: "e".into(),
            task_id: "t".into(),
            state,
            reason: String::new(),
            lines: vec![],
            since: at,
            error_kind: None,
            attempt: None,
            attempt_of: None,
            gave_up: false,
            reset_text: None,
            reset_at: None,
            exit_code: None,
            signal: None,
            silent_secs: None,
            dialog_title: None,
            dialog_options: vec![],
            updated_at: at,
        }
    }

    #[test]
    fn each_state_in_a_few_words_with_its_severity() {
        use AgentStateName as N;
        let mut r = record(N::UsageLimited);
        let now = r.since;
        let en = |r: &AgentStateRecord| words(Locale::En, r, now);
        assert_eq!(en(&r), ("usage-limited".into(), Severity::Warn));
        r.reset_text = Some("9:57am (UTC)".into());
        assert_eq!(en(&r).0, "usage-limited until 9:57am (UTC)");
        let mut r = record(N::Erroring);
        r.attempt = Some(7);
        assert_eq!(en(&r), ("erroring (7)".into(), Severity::Warn));
        r.gave_up = true;
        assert_eq!(en(&r).1, Severity::Bad);
        let mut r = record(N::Stalled);
        r.silent_secs = Some(1200);
        assert_eq!(
            words(Locale::En, &r, r.since + Duration::minutes(5)).0,
            "stalled 25 min"
        );
        let mut r = record(N::Exited);
        r.exit_code = Some(3);
        assert_eq!(en(&r), ("exited 3".into(), Severity::Bad));
        r.exit_code = Some(0);
        assert_eq!(en(&r).1, Severity::Idle);
        let mut r = record(N::Crashed);
        r.signal = Some(9);
        assert_eq!(en(&r).0, "crashed (signal 9)");
        assert_eq!(
            en(&record(N::LoggedOut)),
            ("logged out".into(), Severity::Bad)
        );
        assert_eq!(en(&record(N::Idle)).0, "idle at its prompt");
        assert_eq!(en(&record(N::Working)), ("working".into(), Severity::Ok));
        // Every state has its words in both languages (never a key).
        for &name in AgentStateName::ALL {
            for l in [Locale::En, Locale::Zh] {
                let (text, _) = words(l, &record(name), now);
                assert!(!text.starts_with("task."), "{name}: {text}");
            }
        }
    }
}
