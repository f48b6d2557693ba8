//! The asks service's type. Its methods are in the modules listed below;
//! the type has a module of its own because `messaging`, the first of them,
//! names `options`: declared in either, the other modules naming it would
//! make the two an import cycle.

use crate::Harness;

/// The asks service (`Harness::asks`): the questions and notes to a person
/// and their answers — asking, replying, listing (`crate::messaging`), a
/// choice's reply and the choices themselves (`crate::choice_reply`,
/// `crate::options`), a CLI's native question (`crate::native_question`),
/// the screen an answer saw (`crate::answer_screen`), deadlines and
/// defaults (`crate::deadline`), escalation and reminders
/// (`crate::escalation`, `crate::reminders`), whether a chat reaches the
/// person (`crate::reachability`) and an ask's evidence (`crate::evidence`).
#[derive(Clone, Copy)]
pub struct Asks<'h> {
    pub(crate) h: &'h Harness,
}
