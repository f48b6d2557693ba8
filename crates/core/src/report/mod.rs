//! The morning report's rules (`docs/morning-report.md`): what waits for a
//! person, ranked by what an answer unblocks ([`rank`]); one reply that
//! answers many numbered items ([`batch`]); a long report in parts at a
//! chat platform's limit ([`split`]). Pure: the report's facts are read by
//! its caller.

pub mod batch;
pub mod rank;
pub mod split;
