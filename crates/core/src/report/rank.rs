//! What waits for a person, ranked by what an answer unblocks: the one
//! order of the morning report and of `/harness`'s "most blocking first".
//!
//! An item (an open question, an approval, an agent that needs a person)
//! ranks higher the more it blocks: the live child agents waiting on its
//! task, the plan tasks that depend on it, and the agent-hours already spent
//! waiting on it. It ranks lower when a default answers it soon anyway
//! (within [`DEFAULT_SOON`]): the night goes on without the person.
//!
//! The order is a key compared field by field, not a weighted score, so
//! every position has a reason a person can read ([`Ranked::why`]):
//! 1. a default applying soon sends an item after every item without one;
//! 2. more work blocked first (1 for the item's own agent, plus its live
//!    children, plus its dependent plan tasks);
//! 3. more agent-minutes waited first (the agents blocked × the minutes
//!    since it started waiting);
//! 4. the older item first, then its id (deterministic).

use std::cmp::Ordering;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// A default that applies within this long ranks its item lower.
pub const DEFAULT_SOON: Duration = Duration::minutes(30);

/// What an answer to one waiting item would unblock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocking {
    /// The item's id (a message, an approval, an execution).
    pub id: String,
    /// Live child agents of the item's task (each waits on its parent).
    pub live_children: u32,
    /// Plan tasks that depend on the item's task (`harness-tasks.json`),
    /// directly or through other tasks, and are not done.
    pub dependent_tasks: u32,
    /// Since when the item waits.
    pub waiting_since: DateTime<Utc>,
    /// When its default answers it, if it has one.
    pub default_at: Option<DateTime<Utc>>,
}

/// One item's place and its reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranked {
    pub id: String,
    /// 1 (its own agent) + live children + dependent plan tasks.
    pub blocked: u32,
    /// Agents waiting (1 + live children) × minutes waited.
    pub agent_minutes: i64,
    /// Its default applies within [`DEFAULT_SOON`] of now.
    pub default_soon: bool,
}

impl Ranked {
    fn of(b: &Blocking, now: DateTime<Utc>) -> Self {
        let waited = (now - b.waiting_since).num_minutes().max(0);
        let agents = 1 + i64::from(b.live_children);
        Self {
            id: b.id.clone(),
            blocked: 1u32
                .saturating_add(b.live_children)
                .saturating_add(b.dependent_tasks),
            agent_minutes: agents.saturating_mul(waited),
            default_soon: b.default_at.is_some_and(|at| at - now <= DEFAULT_SOON),
        }
    }

    /// The reasons for the place, as data: what each surface says in its
    /// language ([`Blocks::words`] in English).
    pub fn blocks(&self, b: &Blocking) -> Blocks {
        Blocks {
            agents: 1u32.saturating_add(b.live_children),
            plan_tasks: b.dependent_tasks,
            agent_minutes: self.agent_minutes,
            default_soon: self.default_soon,
        }
    }

    /// The reasons for the place, in words ("blocks 3 agents and 2 plan
    /// tasks · 4 agent-hours waited · its default applies soon").
    pub fn why(&self, b: &Blocking) -> String {
        self.blocks(b).words()
    }
}

/// Why a waiting item is where it is: what an answer to it unblocks.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocks {
    /// The agents waiting on it: its own and its task's live children.
    pub agents: u32,
    /// The plan tasks that depend on its task and are not done.
    pub plan_tasks: u32,
    /// Those agents × the minutes they waited.
    pub agent_minutes: i64,
    /// Its default applies within [`DEFAULT_SOON`].
    pub default_soon: bool,
}

impl Blocks {
    /// In English: "blocks 3 agents and 2 plan tasks · 4 agent-h waited ·
    /// its default applies soon" ([`super::words::why`] in any language).
    pub fn words(&self) -> String {
        self.words_in(crate::ladder::Lang::En)
    }

    /// The same in `lang`.
    pub fn words_in(&self, lang: crate::ladder::Lang) -> String {
        super::words::why(lang, self)
    }
}

/// `items` ranked, most blocking first, with each one's key. Items whose
/// `waiting_since` is in the future count as waiting 0 minutes.
pub fn rank(items: &[Blocking], now: DateTime<Utc>) -> Vec<(Ranked, &Blocking)> {
    let mut ranked: Vec<(Ranked, &Blocking)> =
        items.iter().map(|b| (Ranked::of(b, now), b)).collect();
    ranked.sort_by(|(a, ab), (b, bb)| compare(a, ab, b, bb));
    ranked
}

fn compare(a: &Ranked, ab: &Blocking, b: &Ranked, bb: &Blocking) -> Ordering {
    a.default_soon
        .cmp(&b.default_soon)
        .then_with(|| b.blocked.cmp(&a.blocked))
        .then_with(|| b.agent_minutes.cmp(&a.agent_minutes))
        .then_with(|| ab.waiting_since.cmp(&bb.waiting_since))
        .then_with(|| a.id.cmp(&b.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-05T07:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    fn item(id: &str, children: u32, deps: u32, waited_min: i64) -> Blocking {
        Blocking {
            id: id.into(),
            live_children: children,
            dependent_tasks: deps,
            waiting_since: now() - Duration::minutes(waited_min),
            default_at: None,
        }
    }

    fn order(items: &[Blocking]) -> Vec<String> {
        rank(items, now()).into_iter().map(|(r, _)| r.id).collect()
    }

    #[test]
    fn live_children_and_dependent_tasks_rank_first() {
        let items = [
            item("alone", 0, 0, 600),
            item("parent", 3, 0, 10),
            item("plan", 0, 2, 10),
        ];
        assert_eq!(order(&items), ["parent", "plan", "alone"]);
    }

    #[test]
    fn with_as_much_blocked_the_longer_wait_in_agent_time_first() {
        let items = [item("new", 1, 0, 30), item("old", 1, 0, 240)];
        assert_eq!(order(&items), ["old", "new"]);
        let ranked = rank(&items, now());
        assert_eq!(ranked[0].0.agent_minutes, 480);
        assert_eq!(
            ranked[0].0.why(ranked[0].1),
            "blocks 2 agents · 8 agent-h waited"
        );
    }

    #[test]
    fn a_default_applying_soon_ranks_after_everything_without_one() {
        let mut soon = item("soon", 5, 5, 600);
        soon.default_at = Some(now() + Duration::minutes(10));
        let mut later = item("later", 0, 0, 1);
        later.default_at = Some(now() + Duration::hours(3));
        let items = [soon.clone(), later, item("plain", 0, 0, 1)];
        // A default hours away changes nothing: "later" and "plain" tie, by id.
        assert_eq!(order(&items), ["later", "plain", "soon"]);
        let ranked = rank(&items, now());
        let last = &ranked[2];
        assert!(last.0.default_soon);
        assert_eq!(
            last.0.why(last.1),
            "blocks 6 agents and 5 plan tasks · 60 agent-h waited · its default applies soon"
        );
        // A default already past due still counts as soon (it applies now).
        soon.default_at = Some(now() - Duration::minutes(1));
        assert!(rank(&[soon], now())[0].0.default_soon);
    }

    #[test]
    fn ties_are_broken_by_age_then_id_so_the_order_is_deterministic() {
        let mut a = item("b", 0, 0, 60);
        let b = item("a", 0, 0, 60);
        assert_eq!(order(&[a.clone(), b.clone()]), ["a", "b"]);
        // The same agent-minutes (whole minutes): the older first.
        a.waiting_since -= Duration::seconds(20);
        assert_eq!(order(&[b, a]), ["b", "a"]);
    }

    #[test]
    fn a_future_start_counts_as_no_wait_and_words_are_singular() {
        let mut f = item("f", 0, 1, 0);
        f.waiting_since = now() + Duration::minutes(5);
        let ranked = rank(std::slice::from_ref(&f), now());
        assert_eq!(ranked[0].0.agent_minutes, 0);
        assert_eq!(
            ranked[0].0.why(&f),
            "blocks 1 agent and 1 plan task · 0 agent-min waited"
        );
        let b = Blocks {
            agent_minutes: 90,
            ..ranked[0].0.blocks(&f)
        };
        assert!(b.words().contains("1 agent-h 30 min"), "{}", b.words());
    }
}
