//! The morning report (`docs/morning-report.md`): one message tells the
//! night, and one reply answers everything that waits.
//!
//! The rules, pure: what waits for a person, ranked by what an answer
//! unblocks ([`rank`]); one reply that answers many numbered items
//! ([`batch`]); a long report in parts at a chat platform's limit
//! ([`split`]); the report built from stored facts ([`build`]) and written
//! as text ([`text`]). Around them: the facts read for one person's scope
//! ([`facts`]), the agents that need a person ([`agents`], a seam), the
//! report kept and sent ([`service`]) and a reply applied ([`reply`]); the
//! daily send per notify target, in its time zone ([`daily`]); the waiting
//! count and `/harness`' "most blocking first" by the same rules
//! ([`waits`]); the follow-ups' phrases in each language ([`words`]).

pub mod agents;
pub mod batch;
pub mod build;
pub mod daily;
pub mod facts;
pub mod model;
pub mod rank;
pub mod reply;
pub mod samples;
pub mod service;
pub mod split;
pub mod text;
pub mod waits;
pub mod words;

pub use facts::{NoWork, Scope, WorkReader};
pub use model::Report;
pub use reply::{BatchOutcome, ItemOutcome, ReplyFrom};
pub use service::{Sent, Waiting};

/// The reports service (`Harness::reports`): the report of what waits for a
/// person and what was done (`service`, its facts in `facts`, `waits` and
/// `agents`), the answers to it (`reply`), the daily report, a question's
/// receipt (`crate::receipt`) and the waiting-time analytics
/// (`crate::analytics`).
#[derive(Clone, Copy)]
pub struct Reports<'h> {
    pub(crate) h: &'h crate::Harness,
}
