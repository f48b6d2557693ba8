//! `get_report`: the morning report of the caller's scope — the admin and
//! a gateway (a person's own assistant) read everything, an agent (a
//! Workbench) its own task and its children (`harness_core::report::Scope`).
//! Thin: the report is the core's.

use chrono::Utc;
use harness_core::{
    report::{
        service::{MAX_SINCE_CHARS, parse_lang, parse_since},
        text::in_lang,
    },
    store::ReportChannel,
};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    HarnessMcp,
    args::absent_not_null,
    params::{Caller, Parameters, ToolError},
};
use crate::report_work::LocalWork;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct ReportArgs {
    /// From when: an RFC 3339 time or a duration back from now (`12h`,
    /// `90m`, `2d`); default the end of the last report sent to chat, else
    /// 24 hours ago.
    #[schemars(length(min = 1, max = MAX_SINCE_CHARS))]
    since: Option<String>,
    /// The language of its phrases (`text`, each waiting item's `why`,
    /// each receipt's `text`): `en` (default) or `zh`.
    #[schemars(extend("enum" = ["en", "zh"]))]
    lang: Option<String>,
}

#[tool_router(router = report_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "The morning report of your scope: per task what ended (finished, failed, \
             stopped, with exit state and reason), what ran and how long, progress lines, the \
             questions and approvals asked and how each was decided, automatic resumes, commits; \
             then what waits for a person now, ranked by what an answer unblocks and numbered. \
             `text` is the report as one message; `id` names it. Read-only."
    )]
    async fn get_report(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<ReportArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let since = a
            .since
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| parse_since(s, Utc::now()))
            .transpose()?;
        let lang = parse_lang(a.lang.as_deref())?;
        let report = self
            .harness
            .reports()
            .report(&who, since, ReportChannel::Mcp, &LocalWork)
            .await?;
        let report = in_lang(report, lang);
        let value = serde_json::to_value(report).unwrap_or(Value::Null);
        Ok(Json(match value {
            Value::Object(map) => map,
            other => Map::from_iter([("result".to_string(), other)]),
        }))
    }
}
