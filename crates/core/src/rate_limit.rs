//! How often one task may ask, notify and push: an
//! agent in a loop must not flood the people it reaches, the database or the
//! chat platforms. One token bucket per task and kind — a burst, then one
//! more every interval — checked by the core before anything is recorded, so
//! REST, MCP and server functions refuse alike: `CoreError::RateLimited`,
//! HTTP 429 with `Retry-After` (an MCP tool error with the same text).
//! The same buckets slow down failed browser logins per client address
//! ([`FAILED_LOGINS`], `crate::sessions::Sessions::login_from`).
//!
//! The buckets live in this process's memory: a restart starts them full,
//! which bounds a flood just as well.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::{CoreError, CoreResult};

/// What is being rate-limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateAction {
    /// `ask` / `ask_human` (a question that may reach a person).
    Ask,
    /// `notify` (an FYI line).
    Notify,
    /// `push_to_human` (a chat message through a gateway).
    Push,
    /// A browser login with a wrong token (per client address).
    FailedLogin,
}

impl RateAction {
    fn plural(self) -> &'static str {
        match self {
            Self::Ask => "questions",
            Self::Notify => "notifications",
            Self::Push => "messages to people",
            Self::FailedLogin => "failed logins",
        }
    }

    /// Whose bucket it is.
    fn whose(self) -> &'static str {
        match self {
            Self::FailedLogin => "this address",
            _ => "this task",
        }
    }
}

/// Failed browser logins per client address: 5 at once, then one more
/// every 12 s (5 a minute). Only failures count: the right token always
/// logs in.
pub const FAILED_LOGINS: Rate = Rate {
    burst: 5,
    every: Duration::from_secs(12),
};

/// A burst of `burst` actions, then one more every `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub burst: u32,
    pub every: Duration,
}

/// The limits per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    pub ask: Rate,
    pub notify: Rate,
    pub push: Rate,
}

impl Default for RateLimits {
    /// Far above what a working agent does (a question every few minutes),
    /// far below a loop: 20 questions, then one every 15 s; 60
    /// notifications, then one every 5 s; 30 pushes, then one every 10 s.
    fn default() -> Self {
        Self {
            ask: Rate {
                burst: 20,
                every: Duration::from_secs(15),
            },
            notify: Rate {
                burst: 60,
                every: Duration::from_secs(5),
            },
            push: Rate {
                burst: 30,
                every: Duration::from_secs(10),
            },
        }
    }
}

impl RateLimits {
    fn of(&self, action: RateAction) -> Rate {
        match action {
            RateAction::Ask => self.ask,
            RateAction::Notify => self.notify,
            RateAction::Push => self.push,
            RateAction::FailedLogin => FAILED_LOGINS,
        }
    }
}

/// Buckets kept at most; past it full buckets are dropped first.
const MAX_BUCKETS: usize = 20_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets of one process.
#[derive(Debug, Default)]
pub(crate) struct RateLimiter {
    buckets: Mutex<HashMap<(String, RateAction), Bucket>>,
}

impl RateLimiter {
    /// Takes one token for `whom`'s `action` (a task id, a client
    /// address), or says how long to wait.
    pub(crate) fn take(
        &self,
        limits: &RateLimits,
        whom: &str,
        action: RateAction,
        now: Instant,
    ) -> CoreResult<()> {
        let rate = limits.of(action);
        let burst = f64::from(rate.burst.max(1));
        let every = rate.every.as_secs_f64().max(0.001);
        let refill = |b: &Bucket| {
            (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() / every).min(burst)
        };
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_BUCKETS {
            buckets.retain(|_, b| refill(b) < burst);
            if buckets.len() >= MAX_BUCKETS {
                buckets.clear();
            }
        }
        let bucket = buckets.entry((whom.to_string(), action)).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let tokens = refill(bucket);
        if tokens >= 1.0 {
            *bucket = Bucket {
                tokens: tokens - 1.0,
                at: now,
            };
            return Ok(());
        }
        *bucket = Bucket { tokens, at: now };
        let wait = ((1.0 - tokens) * every).ceil().max(1.0);
        // At most the interval (a float edge never asks for longer).
        let retry_after_secs = (wait as u64).min(rate.every.as_secs().max(1));
        Err(CoreError::RateLimited {
            message: format!(
                "too many {} from {}: at most {} at once, then one every {} s; \
                 retry after {retry_after_secs} s",
                action.plural(),
                action.whose(),
                rate.burst,
                rate.every.as_secs().max(1),
            ),
            retry_after_secs,
        })
    }
}

impl crate::Harness {
    /// The rate rule for one action of `task_id` (see the module docs).
    pub(crate) fn check_rate(&self, task_id: &str, action: RateAction) -> CoreResult<()> {
        self.rate_limiter()
            .take(&self.config().rate_limits, task_id, action, Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_per_interval_per_task_and_kind() {
        let limits = RateLimits {
            ask: Rate {
                burst: 3,
                every: Duration::from_secs(10),
            },
            ..RateLimits::default()
        };
        let l = RateLimiter::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            l.take(&limits, "a", RateAction::Ask, t0).unwrap();
        }
        let err = l.take(&limits, "a", RateAction::Ask, t0).unwrap_err();
        assert_eq!(err.http_status(), 429);
        assert_eq!(err.retry_after(), Some(10));
        assert!(err.to_string().contains("retry after 10 s"), "{err}");
        // Another task and another kind have their own buckets.
        l.take(&limits, "b", RateAction::Ask, t0).unwrap();
        l.take(&limits, "a", RateAction::Notify, t0).unwrap();
        // One token comes back per interval.
        let t1 = t0 + Duration::from_secs(4);
        assert_eq!(
            l.take(&limits, "a", RateAction::Ask, t1)
                .unwrap_err()
                .retry_after(),
            Some(6)
        );
        let t2 = t0 + Duration::from_secs(10);
        l.take(&limits, "a", RateAction::Ask, t2).unwrap();
        assert!(l.take(&limits, "a", RateAction::Ask, t2).is_err());
    }

    #[test]
    fn failed_logins_are_limited_per_address() {
        let limits = RateLimits::default();
        let l = RateLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FAILED_LOGINS.burst {
            l.take(&limits, "10.0.0.1", RateAction::FailedLogin, t0)
                .unwrap();
        }
        let err = l
            .take(&limits, "10.0.0.1", RateAction::FailedLogin, t0)
            .unwrap_err();
        assert_eq!(err.http_status(), 429);
        assert_eq!(err.retry_after(), Some(12));
        assert!(
            err.to_string()
                .starts_with("too many failed logins from this address"),
            "{err}"
        );
        // Another address has its own bucket; a task's asks are not touched.
        l.take(&limits, "10.0.0.2", RateAction::FailedLogin, t0)
            .unwrap();
        l.take(&limits, "10.0.0.1", RateAction::Ask, t0).unwrap();
        // Five a minute: one more every 12 s.
        let t1 = t0 + Duration::from_secs(12);
        l.take(&limits, "10.0.0.1", RateAction::FailedLogin, t1)
            .unwrap();
        assert!(
            l.take(&limits, "10.0.0.1", RateAction::FailedLogin, t1)
                .is_err()
        );
    }
}
