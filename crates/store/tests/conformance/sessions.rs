//! Browser sessions: only the id's hash is stored; a session is alive until
//! it expires or is revoked (one, or every live one), and dead rows are
//! purged.

use chrono::Duration;
use harness_core::ids;

use super::{Backend, support::*};

pub async fn a_session_lives_until_it_expires_or_is_revoked(b: &Backend) {
    let s = b.store.as_ref();
    let t0 = now_ms();
    let (one, two) = (ids::new_id(), ids::new_id());
    assert!(!s.session_alive(&one, t0).await.unwrap(), "unknown");
    s.insert_session(&one, t0, t0 + Duration::hours(1))
        .await
        .unwrap();
    s.insert_session(&two, t0, t0 + Duration::hours(1))
        .await
        .unwrap();
    assert!(s.session_alive(&one, t0).await.unwrap());
    // Expiry: alive strictly before it, dead at and after it.
    let end = t0 + Duration::hours(1);
    assert!(
        s.session_alive(&one, end - Duration::seconds(1))
            .await
            .unwrap()
    );
    assert!(!s.session_alive(&one, end).await.unwrap());
    // Revoking one leaves the other alive; a second revoke finds nothing.
    assert!(s.revoke_session(&one, t0).await.unwrap());
    assert!(!s.revoke_session(&one, t0).await.unwrap());
    assert!(!s.revoke_session(&ids::new_id(), t0).await.unwrap());
    assert!(!s.session_alive(&one, t0).await.unwrap());
    assert!(s.session_alive(&two, t0).await.unwrap());
    // Another connection sees the same.
    let other = b.another().await;
    assert!(!other.session_alive(&one, t0).await.unwrap());
    assert!(other.session_alive(&two, t0).await.unwrap());
}

pub async fn revoke_all_ends_every_live_session_and_purge_deletes_dead_rows(b: &Backend) {
    let s = b.store.as_ref();
    let t0 = now_ms();
    let live: Vec<String> = (0..3).map(|_| ids::new_id()).collect();
    for id in &live {
        s.insert_session(id, t0, t0 + Duration::hours(1))
            .await
            .unwrap();
    }
    // Already expired: not counted by "log out everywhere".
    let expired = ids::new_id();
    s.insert_session(&expired, t0 - Duration::hours(2), t0 - Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(s.revoke_all_sessions(t0).await.unwrap(), 3);
    for id in &live {
        assert!(!s.session_alive(id, t0).await.unwrap(), "{id}");
    }
    assert_eq!(s.revoke_all_sessions(t0).await.unwrap(), 0, "none left");
    // A fresh session after the sweep is alive.
    let fresh = ids::new_id();
    s.insert_session(&fresh, t0, t0 + Duration::hours(1))
        .await
        .unwrap();
    // Purge before the revocations: only the expired row goes.
    assert_eq!(
        s.purge_sessions(t0 - Duration::minutes(1)).await.unwrap(),
        1
    );
    // Purge at the revocations: the three revoked rows go, the fresh stays.
    assert_eq!(s.purge_sessions(t0).await.unwrap(), 3);
    assert!(s.session_alive(&fresh, t0).await.unwrap());
    assert_eq!(s.purge_sessions(t0).await.unwrap(), 0);
    // The purged id can be used again (its row is gone).
    s.insert_session(&expired, t0, t0 + Duration::hours(1))
        .await
        .unwrap();
    assert!(s.session_alive(&expired, t0).await.unwrap());
}
