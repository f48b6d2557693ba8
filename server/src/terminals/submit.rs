//! The submit key, confirmed: after a delivery typed its text and pressed
//! Enter into Claude Code or Codex, the input box is read again. A CLI busy
//! when the text arrived (a resumed session starting under load) can read
//! the paste and its Enter in one chunk and take the Enter as a newline of
//! the paste: the text then sits unsent in the box and the agent never
//! reads it. The box is looked for before the text is typed
//! ([`box_before`]): a box that vanishes right after the Enter is the CLI
//! redrawing (Claude Code under load was read mid-redraw and the approval
//! left unsent), watched like text not drawn yet; a screen that never showed
//! a box (another program) is left after [`NO_BOX_GRACE`]. The screen is
//! read until the text shows in the conversation
//! above the box ([`harness_core::agent_state::typed_state`]); while the
//! box holds it for [`UNSENT_FOR`], the submit key alone is pressed again,
//! at most [`MAX_PRESSES`] times. The text is never typed again (it is in
//! the box once). An Enter on an empty box does nothing in either CLI.

use std::time::Duration;

use tokio::time::Instant;

use harness_core::agent_state::{self, Cli, Screen, Typed};
use harness_pty::PtySession;

/// The text stayed in the box this long after an Enter: it was not sent.
const UNSENT_FOR: Duration = Duration::from_millis(1500);
/// How long the screen is watched while the text is neither in the box nor
/// in the conversation (a busy CLI has not drawn it yet).
const WATCH: Duration = Duration::from_secs(5);
/// The longest a confirmation takes, whatever the screen does.
const MAX_CONFIRM: Duration = Duration::from_secs(15);
/// A screen that showed no box before the typing and shows none after it
/// is left after this long (nothing to confirm).
const NO_BOX_GRACE: Duration = Duration::from_millis(500);
/// How often the box is read meanwhile.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// Submit keys pressed again at most.
const MAX_PRESSES: usize = 2;

/// Whether `session` shows the input box of `cli` now (read before typing).
pub(super) fn box_before(session: &PtySession, cli: Cli) -> bool {
    agent_state::shows_input_box(cli, &Screen::from_text(&session.screen_text().text))
}

/// Confirms that `text`, just typed and submitted, left the input box of
/// `cli` for the conversation; presses Enter again while it sat in the box.
/// `boxed`: the box was on the screen before the typing. Done when the text
/// shows as sent, when it was not seen for [`WATCH`], or after
/// [`MAX_CONFIRM`]. Returns how many times it pressed again.
pub(super) async fn confirm(session: &PtySession, cli: Cli, text: &str, boxed: bool) -> usize {
    let started = Instant::now();
    let mut pressed = 0;
    let mut held_since: Option<Instant> = None;
    let mut box_seen = boxed;
    while started.elapsed() < MAX_CONFIRM {
        tokio::time::sleep(LOOK_EVERY).await;
        if session.has_exited() {
            return pressed;
        }
        let screen = Screen::from_text(&session.screen_text().text);
        let state = agent_state::typed_state(cli, &screen, text);
        box_seen |= state != Typed::NoBox;
        match state {
            Typed::Sent => return pressed,
            // No box ever seen: another program or a dialog.
            Typed::NoBox if !box_seen => {
                if started.elapsed() >= NO_BOX_GRACE {
                    return pressed;
                }
            }
            // The box gone for a moment (a redraw), or the text not drawn yet.
            Typed::NoBox | Typed::Unseen => {
                held_since = None;
                if started.elapsed() >= WATCH {
                    return pressed;
                }
            }
            Typed::InBox => {
                let since = *held_since.get_or_insert_with(Instant::now);
                if since.elapsed() < UNSENT_FOR {
                    continue;
                }
                if pressed == MAX_PRESSES {
                    break;
                }
                tracing::info!(
                    pid = session.pid(),
                    "the typed text sat unsent in the input box: the submit key is pressed again"
                );
                if session.write(b"\r").await.is_err() {
                    return pressed;
                }
                pressed += 1;
                held_since = None;
            }
        }
    }
    tracing::warn!(
        pid = session.pid(),
        pressed,
        "the typed text was not seen sent: left as it is"
    );
    pressed
}
