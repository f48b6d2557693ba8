//! A live execution whose agent runs in a holder this server cannot read:
//! the holder (the process that owns the agent's terminal and outlives the
//! server) speaks a protocol version this build does not read, after an
//! upgrade past it or a downgrade below it.
//!
//! What Harness does then, the one rule every surface says in the same
//! words ([`UnreadableHolder::note`]): it leaves the holder and its agent
//! running untouched (no output, input or replies reach them from this
//! server, and the execution stays live, so nothing starts a second agent),
//! and the holder ends its agent by itself after its orphan timeout without
//! a server. What a person can do: Stop (the runtime ends the holder and
//! its agent by signals, which need no protocol), or run a Harness build
//! that reads that protocol, which takes the holder over.
//!
//! It is the runtime's knowledge (this node's, found at its start), read
//! with the task through [`crate::runtime::AgentRuntime::unreadable_holder`],
//! never stored.

use serde::{Deserialize, Serialize};

/// What is known about an unreadable holder (see the module docs).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableHolder {
    /// The protocol version the holder speaks.
    pub protocol: u16,
    /// The oldest protocol version this server reads.
    pub reads_min: u16,
    /// The newest protocol version this server reads.
    pub reads_max: u16,
    /// The holder's process id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_pid: Option<u32>,
    /// The holder's own orphan timeout in seconds, when its command line
    /// says (the server that started it chose it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphan_timeout_secs: Option<u64>,
    /// What Harness does and what a person can do, in English
    /// ([`UnreadableHolder::note`]).
    pub note: String,
}

impl UnreadableHolder {
    /// The facts, with their [`note`](Self::note).
    pub fn new(
        protocol: u16,
        reads: (u16, u16),
        holder_pid: Option<u32>,
        orphan_timeout_secs: Option<u64>,
    ) -> Self {
        let mut out = Self {
            protocol,
            reads_min: reads.0,
            reads_max: reads.1,
            holder_pid,
            orphan_timeout_secs,
            note: String::new(),
        };
        out.note = out.note();
        out
    }

    /// `1`, or `1–3`.
    pub fn reads(&self) -> String {
        if self.reads_min == self.reads_max {
            self.reads_min.to_string()
        } else {
            format!("{}–{}", self.reads_min, self.reads_max)
        }
    }

    /// The holder's orphan timeout as a person reads it (`24 h`), `None`
    /// when unknown.
    pub fn orphan_timeout(&self) -> Option<String> {
        self.orphan_timeout_secs.map(duration)
    }

    /// The one English sentence set of the rule (module docs).
    pub fn note(&self) -> String {
        let timeout = self.orphan_timeout().unwrap_or_else(|| {
            "its orphan timeout (24 h unless its server set HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS)"
                .to_string()
        });
        format!(
            "This agent runs in a holder this server cannot read (holder protocol {v}; this \
             build reads {reads}). Harness leaves it running untouched: its output, input and \
             replies do not reach it from here, and the holder ends its agent by itself after \
             {timeout} without a server. Stop ends it now; or run a Harness build that reads \
             protocol {v}, which takes it over.",
            v = self.protocol,
            reads = self.reads(),
        )
    }
}

/// Whole hours, minutes or seconds.
fn duration(secs: u64) -> String {
    match secs {
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_what_harness_does_and_what_a_person_can_do() {
        let u = UnreadableHolder::new(2, (1, 1), Some(42), Some(86_400));
        assert_eq!(u.note, u.note());
        for part in [
            "holder protocol 2",
            "this build reads 1)",
            "leaves it running",
            "after 24 h without a server",
            "Stop ends it now",
            "reads protocol 2",
        ] {
            assert!(u.note.contains(part), "{part:?} in {}", u.note);
        }
        let u = UnreadableHolder::new(9, (1, 3), None, None);
        assert!(u.note.contains("this build reads 1–3"), "{}", u.note);
        assert!(u.note.contains("after its orphan timeout"), "{}", u.note);
        assert_eq!(duration(90), "90 s");
        assert_eq!(duration(120), "2 min");
        assert_eq!(duration(7200), "2 h");
    }
}
