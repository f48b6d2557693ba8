//! Holders this build cannot read (their protocol version is outside
//! `harness_holder::protocol::MIN_VERSION..=VERSION`), found at start by
//! `held::reattach_holders`. The rule is the core's
//! (`harness_core::unreadable_holder`): such a holder and its agent are left
//! running and their execution live; the task (page and JSON) says so, and
//! what to do; the start logs it; `harness doctor` lists them from the
//! marker written next to the socket ([`MARKER`]).
//!
//! Stop needs no protocol: [`end`] connects to the socket only to learn the
//! holder's pid from the kernel (`SO_PEERCRED`; the socket is in this
//! user's private data directory), sends SIGHUP to the process groups of
//! the holder's descendants (the agent's session, as the holder itself does
//! at its orphan timeout), SIGKILL after a grace, then SIGKILL to the
//! holder. The connection stays open meanwhile, so the pid is the live
//! holder's, not a reused one.

use std::{
    collections::{BTreeSet, HashMap},
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, Instant},
};

use harness_core::unreadable_holder::UnreadableHolder;
use serde::{Deserialize, Serialize};

/// The marker `harness doctor` reads, in the holder's run directory.
pub const MARKER: &str = "unreadable.json";
/// Between SIGHUP and SIGKILL (the same as Stop of any agent).
const GRACE: Duration = Duration::from_secs(3);

/// What the marker says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Marker {
    pub task_id: String,
    pub execution_id: String,
    pub protocol: u16,
    pub reads_min: u16,
    pub reads_max: u16,
    pub holder_pid: Option<u32>,
    /// When the server found it (RFC 3339).
    pub found_at: String,
}

/// One unreadable holder of this node.
#[derive(Debug, Clone)]
pub(super) struct Unreadable {
    pub task_id: String,
    pub dir: PathBuf,
    pub facts: UnreadableHolder,
}

/// This node's unreadable holders, by execution.
#[derive(Debug, Default)]
pub(super) struct UnreadableHolders(Mutex<HashMap<String, Unreadable>>);

impl UnreadableHolders {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Unreadable>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn insert(&self, execution_id: &str, found: Unreadable) {
        self.lock().insert(execution_id.to_owned(), found);
    }

    pub fn facts(&self, execution_id: &str) -> Option<UnreadableHolder> {
        self.lock().get(execution_id).map(|u| u.facts.clone())
    }

    /// Takes the task's entry (Stop ends its holder).
    pub fn take_task(&self, task_id: &str) -> Option<Unreadable> {
        let mut map = self.lock();
        let key = map
            .iter()
            .find(|(_, u)| u.task_id == task_id)
            .map(|(k, _)| k.clone())?;
        map.remove(&key)
    }
}

/// The facts of the holder on `socket` speaking `protocol`: its pid (from
/// the kernel) and orphan timeout (from its command line).
pub(super) async fn facts(socket: &Path, protocol: u16) -> UnreadableHolder {
    let pid = peer(socket).await.map(|(pid, _, _)| pid);
    let timeout = pid.and_then(orphan_timeout_secs);
    UnreadableHolder::new(
        protocol,
        (
            harness_holder::protocol::MIN_VERSION,
            harness_holder::protocol::VERSION,
        ),
        pid,
        timeout,
    )
}

/// Writes the marker (best effort: only `harness doctor` reads it).
pub(super) fn write_marker(dir: &Path, task_id: &str, execution_id: &str, f: &UnreadableHolder) {
    let marker = Marker {
        task_id: task_id.to_owned(),
        execution_id: execution_id.to_owned(),
        protocol: f.protocol,
        reads_min: f.reads_min,
        reads_max: f.reads_max,
        holder_pid: f.holder_pid,
        found_at: chrono::Utc::now().to_rfc3339(),
    };
    let written = serde_json::to_string(&marker)
        .map_err(std::io::Error::other)
        .and_then(|body| super::providers::write_private(&dir.join(MARKER), &body));
    if let Err(err) = written {
        tracing::warn!(%err, dir = %dir.display(), "cannot write the unreadable-holder marker");
    }
}

/// The markers under `holders_dir` whose holder still runs (its pid's
/// command line names its run directory), for `harness doctor`.
pub fn live_markers(holders_dir: &Path) -> Vec<Marker> {
    let Ok(dirs) = std::fs::read_dir(holders_dir) else {
        return Vec::new();
    };
    let mut out: Vec<Marker> = dirs
        .flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join(MARKER)).ok()?;
            let marker: Marker = serde_json::from_str(&text).ok()?;
            let pid = marker.holder_pid?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let run_dir = e.path().display().to_string();
            String::from_utf8_lossy(&cmd)
                .contains(&run_dir)
                .then_some(marker)
        })
        .collect();
    out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    out
}

/// `harness doctor`'s line: the agents whose holders the server left
/// running unread, each with its task, protocol and pid.
pub fn doctor_check(data_dir: &Path) -> crate::doctor::Check {
    const NAME: &str = "held agents";
    let found = live_markers(&data_dir.join("holders"));
    if found.is_empty() {
        return crate::doctor::Check::pass(
            NAME,
            "no agent runs in a holder the server could not read",
        );
    }
    let list: Vec<String> = found
        .iter()
        .map(|m| {
            format!(
                "task {} (execution {}, holder protocol {}, pid {})",
                m.task_id,
                m.execution_id,
                m.protocol,
                m.holder_pid.map_or_else(|| "?".into(), |p| p.to_string())
            )
        })
        .collect();
    crate::doctor::Check::note(
        NAME,
        format!(
            "{} agent(s) run in holders the server cannot read (it reads protocol {}..={}), \
             left running until their orphan timeout: {}",
            found.len(),
            found[0].reads_min,
            found[0].reads_max,
            list.join("; ")
        ),
        "Stop them on their task pages (the holder and its agent end), or run a Harness build \
         that reads their protocol",
    )
}

/// The pid and uid of the process listening on `socket`, with the open
/// connection (which keeps that pid the holder's while it is held).
async fn peer(socket: &Path) -> Option<(u32, u32, tokio::net::UnixStream)> {
    let stream = tokio::time::timeout(
        Duration::from_secs(2),
        tokio::net::UnixStream::connect(socket),
    )
    .await
    .ok()?
    .ok()?;
    let cred = stream.peer_cred().ok()?;
    let pid = u32::try_from(cred.pid()?).ok().filter(|p| *p > 0)?;
    Some((pid, cred.uid(), stream))
}

/// `--orphan-timeout-ms N` of the process's command line, in seconds.
fn orphan_timeout_secs(pid: u32) -> Option<u64> {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let mut args = cmd.split(|b| *b == 0);
    args.by_ref().find(|a| *a == b"--orphan-timeout-ms")?;
    let ms: u64 = std::str::from_utf8(args.next()?).ok()?.parse().ok()?;
    Some(ms / 1000)
}

/// Ends the holder in `dir` and its agent by signals (module docs), then
/// removes the directory. `true` when a holder was running.
pub(super) async fn end(dir: &Path) -> bool {
    let socket = dir.join(harness_holder::hold::SOCKET_NAME);
    let Some((pid, uid, stream)) = peer(&socket).await else {
        let _ = std::fs::remove_dir_all(dir);
        return false;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if uid != me || !String::from_utf8_lossy(&cmd).contains(&dir.display().to_string()) {
        tracing::error!(pid, dir = %dir.display(), "the process on a holder socket is not its holder: not signalled");
        return false;
    }
    let dir = dir.to_path_buf();
    let ended = tokio::task::spawn_blocking(move || {
        let _held = stream;
        end_tree(pid);
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
    if let Err(err) = ended {
        tracing::error!(%err, "ending an unreadable holder failed");
    }
    true
}

/// SIGHUP to the groups of `holder`'s descendants, SIGKILL to what is
/// left after [`GRACE`], then SIGKILL to the holder.
fn end_tree(holder: u32) {
    let family = descendants(holder);
    let groups: BTreeSet<i32> = family.iter().filter_map(|&p| pgid(p)).collect();
    let holder_group = pgid(holder);
    for &g in groups
        .iter()
        .filter(|g| Some(**g) != holder_group && **g > 1)
    {
        // SAFETY: killpg with a valid signal has no memory preconditions.
        unsafe { libc::killpg(g, libc::SIGHUP) };
    }
    let deadline = Instant::now() + GRACE;
    while family.iter().any(|&p| running(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for &g in groups
        .iter()
        .filter(|g| Some(**g) != holder_group && **g > 1)
    {
        // SAFETY: as above.
        unsafe { libc::killpg(g, libc::SIGKILL) };
    }
    for &p in family.iter().filter(|p| running(**p)) {
        if let Ok(p) = i32::try_from(p) {
            // SAFETY: kill with a valid signal has no memory preconditions.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
    }
    if let Ok(h) = i32::try_from(holder) {
        // The holder leads its own group (it called setsid): the group is
        // the holder; a holder that does not lead one is signalled alone.
        // SAFETY: as above.
        unsafe {
            if holder_group == Some(h) {
                libc::killpg(h, libc::SIGKILL);
            } else {
                libc::kill(h, libc::SIGKILL);
            }
        }
    }
    let deadline = Instant::now() + GRACE;
    while (running(holder) || family.iter().any(|&p| running(p))) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `(pid, ppid, state)` of `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let mut f = after.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((ppid, state))
}

/// Alive and not a zombie.
fn running(pid: u32) -> bool {
    stat(pid).is_some_and(|(_, s)| s != 'Z' && s != 'X')
}

fn pgid(pid: u32) -> Option<i32> {
    let pid = i32::try_from(pid).ok()?;
    // SAFETY: getpgid has no memory preconditions.
    let g = unsafe { libc::getpgid(pid) };
    (g > 0).then_some(g)
}

/// Every process below `root` (children, their children, …).
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, _)| (pid, ppid)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == parent && pid != root && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_and_their_groups_are_found_and_ended() {
        use std::os::unix::process::CommandExt;
        // A stand-in holder: a shell in its own group with a child in a
        // session of its own that ignores SIGHUP (so SIGKILL is needed).
        let mut holder = std::process::Command::new("sh")
            .args(["-c", "setsid sh -c 'trap \"\" HUP; sleep 1000' & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = holder.id();
        let deadline = Instant::now() + Duration::from_secs(10);
        let family = loop {
            let f = descendants(pid);
            if f.len() >= 2 || Instant::now() > deadline {
                break f;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(family.len() >= 2, "{family:?}");
        end_tree(pid);
        let _ = holder.wait();
        for p in family {
            assert!(!running(p), "{p} still runs");
        }
    }

    #[test]
    fn the_orphan_timeout_is_read_from_a_command_line() {
        assert_eq!(orphan_timeout_secs(std::process::id()), None);
        // `sh -c` keeps the words after its script in its argv.
        use std::os::unix::process::CommandExt;
        let mut sh = std::process::Command::new("sh")
            .args([
                "-c",
                "sleep 1000; true",
                "sh",
                "--orphan-timeout-ms",
                "7200000",
            ])
            .process_group(0)
            .spawn()
            .unwrap();
        // A process just spawned may not show its arguments yet.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut found = orphan_timeout_secs(sh.id());
        while found.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            found = orphan_timeout_secs(sh.id());
        }
        if let Ok(g) = i32::try_from(sh.id()) {
            // SAFETY: killpg with a valid signal has no memory preconditions;
            // the group is the shell's own.
            unsafe { libc::killpg(g, libc::SIGKILL) };
        }
        let _ = sh.wait();
        assert_eq!(found, Some(7200));
    }
}
