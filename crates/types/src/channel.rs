//! Whether a question can reach a person outside the browser (the Inbox
//! banner). The judgement is the core's (`harness_core::outbox::health`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum ChannelHealth {
    /// No active channel: questions only show in the browser.
    None,
    /// Every active channel's last attempt failed: questions do not get out.
    Failing {
        /// The label (or gateway) of the channel, and its last error.
        channel: String,
        error: Option<String>,
    },
    /// At least one active channel sent its last message, or has not been
    /// tried yet (no evidence against it).
    Working,
}

impl ChannelHealth {
    /// The state's name (the `state` tag of its JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Failing { .. } => "failing",
            Self::Working => "working",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ChannelHealth;

    #[test]
    fn the_state_tags_the_variant() {
        let text = |h: &ChannelHealth| serde_json::to_string(h).unwrap_or_default();
        assert_eq!(text(&ChannelHealth::None), r#"{"state":"none"}"#);
        assert_eq!(ChannelHealth::Working.as_str(), "working");
        let failing = ChannelHealth::Failing {
            channel: "ops".into(),
            error: None,
        };
        assert_eq!(
            text(&failing),
            r#"{"state":"failing","channel":"ops","error":null}"#
        );
        assert_eq!(
            serde_json::from_str::<ChannelHealth>(&text(&failing)).ok(),
            Some(failing)
        );
    }
}
