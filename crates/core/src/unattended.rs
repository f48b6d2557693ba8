//! Unattended mode: a task property in the database (the source of truth),
//! mirrored as `<signal dir>/unattended-<taskId>` for the PreToolUse hook,
//! which has no database access (docs/tower-workbench.md §4.2).

use crate::tasks::Tasks;
use std::{
    fs,
    io::{self, Write},
    os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

use chrono::Utc;

use crate::{CoreError, CoreResult, events::HarnessEvent, model::TaskView, validate};

pub const SIGNAL_PREFIX: &str = "unattended-";

pub fn signal_file(dir: &Path, task_id: &str) -> PathBuf {
    dir.join(format!("{SIGNAL_PREFIX}{task_id}"))
}

fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
}

/// Write (on) or remove (off) the signal file: dir 0700, file 0600, atomic.
pub fn write_signal(dir: &Path, task_id: &str, on: bool) -> io::Result<()> {
    let path = signal_file(dir, task_id);
    if !on {
        return match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    ensure_dir(dir)?;
    // A name of this write's own: two writers of one process (the request
    // and the cluster relay, `crate::cluster`) never rename each other's file.
    let tmp = dir.join(format!(
        ".{SIGNAL_PREFIX}{task_id}.{}.{}",
        std::process::id(),
        crate::ids::new_id()
    ));
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(b"1\n")?;
    file.sync_all()?;
    fs::rename(&tmp, &path)
}

/// Make the directory match `on_ids` exactly: create missing files, remove
/// stale ones. Returns (written, removed).
pub fn reconcile_signals(dir: &Path, on_ids: &[String]) -> io::Result<(usize, usize)> {
    ensure_dir(dir)?;
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix(SIGNAL_PREFIX)) else {
            continue;
        };
        if !on_ids.iter().any(|on| on == id) {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    for id in on_ids {
        write_signal(dir, id, true)?;
    }
    Ok((on_ids.len(), removed))
}

/// The refusal of an agent's token turning unattended mode off.
pub const AGENT_CANNOT_TURN_OFF: &str = "an agent's token cannot turn unattended mode off: \
    only a person may (the web UI or the admin token), because it would stop its risky steps \
    from being held for approval. Keep working unattended; ask with ask_human if a person \
    should watch this terminal";

impl Tasks<'_> {
    /// Turn unattended mode on or off: the database first, then the signal
    /// file. If the file cannot be written the change stands (the database is
    /// the truth) and start-up reconciliation repairs the mirror; the error
    /// is reported so the caller knows the hook may be out of date.
    /// Turning it on needs an active unattended notify channel (409 otherwise).
    pub async fn set_unattended(&self, task_id: &str, on: bool) -> CoreResult<TaskView> {
        let task_id = validate::task_id(Some(task_id))?;
        if on {
            // A missing task is a 404 before the channel rule's 409.
            self.get_task(&task_id).await?;
            self.h.access().check_unattended_allowed(on).await?;
        }
        let view = self
            .h
            .store()
            .set_unattended(&task_id, on, Utc::now())
            .await?
            .ok_or_else(|| CoreError::NotFound("Task not found".into()))?;
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: task_id.clone(),
        });
        // The other nodes mirror it too: the agent may run on one of them
        // (`crate::cluster`); a node that missed it reconciles on `Resync`.
        self.h.publish(HarnessEvent::UnattendedChanged {
            task_id: task_id.clone(),
            on,
        });
        if let Some(dir) = &self.h.config().signal_dir
            && let Err(err) = write_signal(dir, &task_id, on)
        {
            tracing::error!(%err, task_id, "cannot mirror unattended mode to its signal file");
            return Err(CoreError::Store(crate::store::StoreError::Backend(
                Box::new(err),
            )));
        }
        Ok(view)
    }

    /// [`Self::set_unattended`] for a caller: an agent's token may turn its
    /// own task's unattended mode on, never off — off makes a top-level task
    /// attended, and an attended task's risky steps are not held for a
    /// person: only a person (the web UI, the admin token) may.
    pub async fn set_unattended_as(
        &self,
        who: &crate::auth::Identity,
        task_id: &str,
        on: bool,
    ) -> CoreResult<TaskView> {
        if !on && matches!(who, crate::auth::Identity::Agent { .. }) {
            return Err(CoreError::Forbidden(AGENT_CANNOT_TURN_OFF.into()));
        }
        self.set_unattended(task_id, on).await
    }

    /// Rewrite the signal directory from the database (at server start).
    pub async fn reconcile_signals(&self) -> CoreResult<()> {
        let Some(dir) = &self.h.config().signal_dir else {
            return Ok(());
        };
        let ids = self.h.store().unattended_task_ids().await?;
        let (written, removed) = reconcile_signals(dir, &ids)
            .map_err(|e| CoreError::Store(crate::store::StoreError::Backend(Box::new(e))))?;
        tracing::info!(written, removed, "unattended signal files reconciled");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_files_have_private_modes_and_reconcile() {
        let tmp = std::env::temp_dir().join(format!("harness-signals-{}", crate::ids::new_id()));
        let dir = tmp.join("signals");
        write_signal(&dir, "ca", true).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&signal_file(&dir, "ca")), 0o600);
        write_signal(&dir, "cstale", true).unwrap();
        fs::write(dir.join("unrelated"), "x").unwrap();
        let (written, removed) = reconcile_signals(&dir, &["ca".into(), "cb".into()]).unwrap();
        assert_eq!((written, removed), (2, 1));
        assert!(signal_file(&dir, "cb").exists());
        assert!(!signal_file(&dir, "cstale").exists());
        assert!(dir.join("unrelated").exists());
        write_signal(&dir, "ca", false).unwrap();
        write_signal(&dir, "ca", false).unwrap();
        assert!(!signal_file(&dir, "ca").exists());
        fs::remove_dir_all(tmp).unwrap();
    }
}
