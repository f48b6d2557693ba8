//! Who may attach to a holder.

/// Who may attach: a process of the holder's own user, in the holder's own
/// PID and user namespaces. The agent runs as the same uid but in its own
/// namespaces, so even if it could reach the socket it is refused here.
/// `Err` says why not.
pub(crate) fn peer_allowed(peer_uid: u32, peer_pid: u32, own_uid: u32) -> Result<(), String> {
    if peer_uid != own_uid {
        return Err(format!(
            "uid {peer_uid} may not attach: only uid {own_uid} may"
        ));
    }
    if peer_pid == 0 {
        return Err("a process outside this holder's PID namespace may not attach".into());
    }
    for ns in ["pid", "user"] {
        let theirs = std::fs::read_link(format!("/proc/{peer_pid}/ns/{ns}"));
        let ours = std::fs::read_link(format!("/proc/self/ns/{ns}"));
        match (theirs, ours) {
            (Ok(t), Ok(o)) if t == o => {}
            (Ok(_), Ok(_)) => {
                return Err(format!(
                    "pid {peer_pid} is in another {ns} namespace: it may not attach"
                ));
            }
            (Err(e), _) | (_, Err(e)) => {
                return Err(format!(
                    "the {ns} namespace of pid {peer_pid} is unreadable: {e}"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys;

    #[test]
    fn only_the_same_uid_in_the_same_namespaces_is_allowed() {
        let me = sys::euid();
        let pid = std::process::id();
        assert_eq!(peer_allowed(me, pid, me), Ok(()));
        let other = peer_allowed(me.wrapping_add(1), pid, me).unwrap_err();
        assert!(other.contains("may not attach"), "{other}");
        assert!(peer_allowed(me, 0, me).is_err());
        // A pid that does not exist: its namespaces are unreadable.
        assert!(peer_allowed(me, u32::MAX - 1, me).is_err());
    }
}
