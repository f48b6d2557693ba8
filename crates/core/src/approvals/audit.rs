//! The audit export: approvals as CSV (RFC 4180, one
//! row per approval, the same fields as the JSON list).

use super::Approval;
use crate::{CoreError, CoreResult};

/// How the audit is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
}

impl Format {
    /// `json` (also absent) or `csv`; anything else is a 400 naming `format`.
    pub fn parse(s: Option<&str>) -> CoreResult<Self> {
        match s.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("json") => Ok(Self::Json),
            Some("csv") => Ok(Self::Csv),
            Some(_) => Err(CoreError::invalid(
                "format",
                "format must be \"json\" or \"csv\"",
            )),
        }
    }
}

/// The CSV columns, in order.
pub const COLUMNS: [&str; 18] = [
    "id",
    "taskId",
    "executionId",
    "requestId",
    "tool",
    "input",
    "cwd",
    "rule",
    "state",
    "parked",
    "decidedBy",
    "decidedVia",
    "decidedAt",
    "reason",
    "consumedAt",
    "outcome",
    "createdAt",
    "inputHash",
];

/// One CSV field: quoted when it holds a comma, quote, CR or LF (quotes
/// doubled). The text is kept exactly (an audit is not reformatted).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn time(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// The approvals as CSV with a header line; lines end in CRLF.
pub fn csv(rows: &[Approval]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    for a in rows {
        let cells = [
            a.id.clone(),
            a.task_id.clone(),
            a.execution_id.clone().unwrap_or_default(),
            a.request_id.clone(),
            a.tool.clone(),
            a.input.clone(),
            a.cwd.clone().unwrap_or_default(),
            a.rule.clone(),
            a.state.as_str().to_string(),
            a.parked.to_string(),
            a.decided_by.clone().unwrap_or_default(),
            a.decided_via.clone().unwrap_or_default(),
            time(a.decided_at),
            a.reason.clone().unwrap_or_default(),
            time(a.consumed_at),
            a.outcome.clone().unwrap_or_default(),
            time(Some(a.created_at)),
            a.input_hash.clone(),
        ];
        let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ApprovalState;

    #[test]
    fn fields_are_quoted_only_when_needed_and_kept_exactly() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("l1\nl2"), "\"l1\nl2\"");
        assert_eq!(Format::parse(None).unwrap(), Format::Json);
        assert_eq!(Format::parse(Some("CSV")).unwrap(), Format::Csv);
        assert_eq!(
            Format::parse(Some("xml")).unwrap_err().field(),
            Some("format")
        );
    }

    #[test]
    fn one_line_per_approval_under_the_header() {
        let a = Approval {
            id: "cid".into(),
            task_id: "ctask".into(),
            execution_id: None,
            request_id: "creq".into(),
            tool: "Bash".into(),
            input: r#"{"command":"git push --force, now"}"#.into(),
            input_hash: "h".into(),
            cwd: Some("/repo".into()),
            rule: "{}".into(),
            state: ApprovalState::Denied,
            parked: true,
            decided_by: Some("gateway:ou_1".into()),
            decided_via: Some("chat".into()),
            decided_at: None,
            reason: Some("not on main".into()),
            consumed_at: None,
            outcome: Some("held".into()),
            created_at: chrono::DateTime::from_timestamp_millis(0).unwrap_or_default(),
        };
        let text = csv(&[a]);
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "cid,ctask,,creq,Bash,\"{\"\"command\"\":\"\"git push --force, now\"\"}\",/repo,{},DENIED,true,gateway:ou_1,chat,,not on main,,held,1970-01-01T00:00:00.000Z,h"
        );
        assert_eq!(lines.len(), 3, "ends with CRLF");
    }
}
