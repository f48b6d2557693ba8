//! Whether a question can reach a person outside the browser: a channel
//! exists *and* its last attempt did not fail (once any channel
//! existed, the "no notification channel" banner went away although its
//! test message said FAILED — the gateway CLI could not even start).

use super::{Outbound, OutboundState};
use crate::outbox::Outbox;
use crate::{CoreResult, settings::NotifyTarget};

/// Newest outbox rows looked at to judge the channels.
const RECENT_ROWS: u32 = 200;

// The judgement's value is the shared vocabulary's (the browser's banner).
pub use harness_types::ChannelHealth;

/// Whether `row` went out through `t` (same gateway and platform).
fn through(t: &NotifyTarget, row: &Outbound) -> bool {
    let norm = |v: Option<&str>| {
        v.map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
    };
    row.gateway.trim() == t.gateway.trim()
        && norm(row.downstream.as_deref()) == norm(t.downstream.as_deref())
}

/// The judgement over `targets` given the newest-first `rows`.
pub fn judge(targets: &[NotifyTarget], rows: &[Outbound]) -> ChannelHealth {
    let active: Vec<&NotifyTarget> = targets
        .iter()
        .filter(|t| t.active && !t.gateway.trim().is_empty())
        .collect();
    let Some(first) = active.first() else {
        return ChannelHealth::None;
    };
    let mut failing = None;
    for t in &active {
        let last = rows
            .iter()
            .find(|r| through(t, r) && r.state.attempted() && r.state != OutboundState::Sending);
        match last {
            Some(r) if matches!(r.state, OutboundState::Failed | OutboundState::Dead) => {
                failing.get_or_insert((*t, r.last_error.clone()));
            }
            _ => return ChannelHealth::Working,
        }
    }
    let (t, error) = failing.unwrap_or((first, None));
    ChannelHealth::Failing {
        channel: if t.label.trim().is_empty() {
            t.gateway.clone()
        } else {
            t.label.clone()
        },
        error,
    }
}

impl Outbox<'_> {
    /// [`judge`] over the stored channels and the newest outbox rows.
    pub async fn channel_health(&self) -> CoreResult<ChannelHealth> {
        let targets = self.h.settings().notify_targets().await?;
        if !targets.iter().any(|t| t.active) {
            return Ok(ChannelHealth::None);
        }
        let rows = self.h.store().list_outbound(None, RECENT_ROWS).await?;
        Ok(judge(&targets, &rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(gateway: &str, downstream: Option<&str>) -> NotifyTarget {
        NotifyTarget {
            id: None,
            label: String::new(),
            gateway: gateway.into(),
            downstream: downstream.map(Into::into),
            dest: Some("42".into()),
            profile: None,
            scope: "unattended".into(),
            active: true,
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
        }
    }

    fn row(gateway: &str, downstream: Option<&str>, state: OutboundState) -> Outbound {
        let mut r = Outbound::sample(gateway, downstream, Some("42"), "m");
        r.state = state;
        r.last_error = (state == OutboundState::Failed).then(|| "cannot start the CLI".into());
        r
    }

    #[test]
    fn a_channel_counts_only_while_its_last_attempt_did_not_fail() {
        let hermes = target("hermes", Some("telegram"));
        assert_eq!(judge(&[], &[]), ChannelHealth::None);
        let mut off = hermes.clone();
        off.active = false;
        assert_eq!(judge(&[off], &[]), ChannelHealth::None);
        // Never tried: no evidence against it.
        assert_eq!(
            judge(std::slice::from_ref(&hermes), &[]),
            ChannelHealth::Working
        );
        let failed = row("hermes", Some("telegram"), OutboundState::Failed);
        let sent = row("hermes", Some("Telegram"), OutboundState::Delivered);
        assert_eq!(
            judge(
                std::slice::from_ref(&hermes),
                &[failed.clone(), sent.clone()]
            ),
            ChannelHealth::Failing {
                channel: "hermes".into(),
                error: Some("cannot start the CLI".into())
            },
            "the newest attempt decides"
        );
        assert_eq!(
            judge(std::slice::from_ref(&hermes), &[sent, failed.clone()]),
            ChannelHealth::Working
        );
        // Another channel that works is enough.
        let openclaw = target("openclaw", Some("slack"));
        assert_eq!(
            judge(&[hermes, openclaw], &[failed]),
            ChannelHealth::Working
        );
    }
}
