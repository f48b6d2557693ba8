//! Files laid over `/etc` inside an agent's namespace, read-only.
//!
//! The agent CLIs read their administrators' policy from fixed paths under
//! `/etc` (Claude Code: `/etc/claude-code/managed-settings.d/*.json`;
//! Codex: `/etc/codex/requirements.toml`), and hooks defined there cannot
//! be switched off from the user's or the project's settings. Harness puts
//! its own hooks there for each agent, without root and without touching
//! the host's `/etc`: an overlay (read-only, no upper layer) in the agent's
//! mount namespace.
//!
//! For every top-level entry `N` of the layer directory:
//! * `/etc/N` exists (a directory): an overlay on `/etc/N` with the layer's
//!   `N` on top — Harness's files win over same-named ones, the host's other
//!   files stay visible;
//! * otherwise one overlay on `/etc` with the host's `/etc` on top and the
//!   layer beneath, so `/etc` itself keeps its owner and mode and only the
//!   missing entries appear.
//!
//! Mounts below a covered directory (a container's `/etc/hosts`,
//! `/etc/resolv.conf`) are bound back over the overlay, so the agent sees
//! them as before. Unprivileged overlayfs needs Linux 5.11 or later; the
//! start-up probe says when it is missing.

use std::{
    ffi::OsStr,
    os::fd::{AsRawFd, OwnedFd},
    path::{Path, PathBuf},
};

/// Lays `layer`'s entries over `etc` (see the module comment). Runs in the
/// agent's new mount namespace, before the data directory is covered.
pub(crate) fn lay_over(layer: &Path, etc: &Path) -> Result<(), String> {
    let mut missing = false;
    let mut present = Vec::new();
    let entries = std::fs::read_dir(layer)
        .map_err(|e| format!("cannot read the /etc layer {}: {e}", layer.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", layer.display()))?;
        let host = etc.join(entry.file_name());
        if std::fs::symlink_metadata(&host).is_ok_and(|m| m.is_dir()) {
            present.push((entry.path(), host));
        } else if std::fs::symlink_metadata(&host).is_ok() {
            return Err(format!(
                "{} exists and is not a directory: the layer cannot be laid over it",
                host.display()
            ));
        } else {
            missing = true;
        }
    }
    // Each existing directory first: the `/etc` overlay below binds these
    // mounts back as submounts of `/etc`.
    for (ours, host) in &present {
        overlay(host, &[ours, host])?;
    }
    if missing {
        overlay(etc, &[etc, layer])?;
    }
    Ok(())
}

/// A read-only overlay of `lowers` (first on top) mounted on `target`, with
/// the mounts below `target` bound back over it.
fn overlay(target: &Path, lowers: &[&Path]) -> Result<(), String> {
    let mut lowerdir = String::new();
    for (i, dir) in lowers.iter().enumerate() {
        let text = dir
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8: cannot be an overlay layer", dir.display()))?;
        if text.contains([':', ',', '\\']) {
            return Err(format!(
                "{text} contains ':', ',' or '\\': cannot be an overlay layer"
            ));
        }
        if i > 0 {
            lowerdir.push(':');
        }
        lowerdir.push_str(text);
    }
    let below = submounts(target)?;
    let target_c = super::cstring(target.as_os_str())?;
    let fstype = super::cstring(OsStr::new("overlay"))?;
    let data = super::cstring(OsStr::new(&format!("lowerdir={lowerdir}")))?;
    super::linux::mount(
        Some(&fstype),
        &target_c,
        Some(&fstype),
        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        Some(&data),
    )
    .map_err(|e| {
        format!(
            "cannot lay Harness's managed settings over {} (an overlay in a user namespace \
             needs Linux 5.11 or later): {e}",
            target.display()
        )
    })?;
    for (path, fd) in below {
        let from = super::cstring(OsStr::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))?;
        let to = super::cstring(path.as_os_str())?;
        super::linux::mount(Some(&from), &to, None, libc::MS_BIND | libc::MS_REC, None)
            .map_err(|e| format!("cannot keep the mount {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The mount points strictly below `target` (outermost first), each with an
/// `O_PATH` descriptor opened before the overlay hides them.
fn submounts(target: &Path) -> Result<Vec<(PathBuf, OwnedFd)>, String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mut paths: Vec<PathBuf> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .filter(|p| p.starts_with(target) && p != target)
        .collect();
    paths.sort_by_key(|p| p.components().count());
    paths.dedup();
    let mut out = Vec::new();
    for path in paths {
        match super::linux::open_path(&path) {
            Ok((fd, _)) => out.push((path, fd)),
            Err(err) => {
                // A mount point the agent could not have reached anyway.
                eprintln!("harness: {err}");
            }
        }
    }
    Ok(out)
}

/// `/proc/self/mountinfo` escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let n = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(n);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_read() {
        assert_eq!(unescape("/etc/a\\040b"), "/etc/a b");
        assert_eq!(unescape("/etc/hosts"), "/etc/hosts");
        assert_eq!(unescape("/x\\134y"), "/x\\y");
    }
}
