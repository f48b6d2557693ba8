//! How an attempt at a gateway send ends when its CLI never runs — one
//! rule for every kind of gateway send (outbox messages and replies to
//! inbound messages alike), so the two workers cannot decide differently:
//! what may work on the next attempt (settings that could not be read, a
//! destination not resolved, a start mark not committed) is a clean
//! failure, due again after the backoff; a row whose command line cannot be
//! built (an empty text, a gateway Harness does not know, a required
//! channel or destination missing from the row) is given up at once —
//! sending it again cannot change it.

use super::SendOutcome;
use crate::work::Outcome;

/// Why a send's CLI was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsent {
    /// The gateway settings could not be read.
    Settings,
    /// The destination could not be resolved (an alias, a directory lookup).
    Destination(String),
    /// The CLI's arguments cannot be built from the row.
    Command(String),
    /// The send's start could not be recorded first (its lease ended, or
    /// the commit failed): it is not spawned.
    NotMarked(String),
}

impl Unsent {
    /// The attempt's outcome.
    pub fn outcome(self) -> Outcome {
        match self {
            Self::Settings => Outcome::Retry("cannot read the gateway settings".into()),
            Self::Destination(why) | Self::NotMarked(why) => Outcome::Retry(why),
            Self::Command(why) => Outcome::GaveUp(why),
        }
    }
}

impl From<Unsent> for SendOutcome {
    fn from(unsent: Unsent) -> Self {
        match unsent.outcome() {
            Outcome::GaveUp(why) => Self::GaveUp(why),
            Outcome::Retry(why) | Outcome::Unverified(why) => Self::Failed(why),
            Outcome::Done => Self::Failed("not sent".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_command_that_cannot_be_built_is_given_up() {
        assert_eq!(
            SendOutcome::from(Unsent::Command("the message is empty".into())),
            SendOutcome::GaveUp("the message is empty".into())
        );
        assert_eq!(
            SendOutcome::from(Unsent::Settings),
            SendOutcome::Failed("cannot read the gateway settings".into())
        );
        assert_eq!(
            SendOutcome::from(Unsent::Destination("no such alias".into())),
            SendOutcome::Failed("no such alias".into())
        );
        assert_eq!(
            SendOutcome::from(Unsent::NotMarked(
                "the lease ended before the send started".into()
            )),
            SendOutcome::Failed("the lease ended before the send started".into())
        );
    }
}
