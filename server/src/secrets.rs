//! The data directory and its secrets (contract.md §1, decisions D12):
//! `secrets/admin.token` and `secrets/internal-api.key`, created on first
//! start with mode 0600 in a 0700 directory, never logged.

use std::{
    fs,
    io::{self, Write},
    os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

use anyhow::Context;
use base64::Engine;
use rand::Rng;

pub struct DataDir {
    pub root: PathBuf,
    pub admin_token: String,
    pub internal_key: Vec<u8>,
    pub signals: PathBuf,
    /// Read-only credential of `GET /metrics` (for a Prometheus server).
    pub metrics_token: String,
}

fn ensure_private_dir(path: &Path) -> anyhow::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .with_context(|| format!("cannot create directory {}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot restrict permissions of {}", path.display()))
}

/// Read a secret file, or create it exclusively with `make()` (0600). A
/// concurrent creator wins the race and we read what it wrote.
fn read_or_create(path: &Path, make: impl FnOnce() -> String) -> anyhow::Result<String> {
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut file) => {
            let value = make();
            file.write_all(format!("{value}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(value)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            let meta =
                fs::metadata(path).with_context(|| format!("cannot stat {}", path.display()))?;
            if meta.permissions().mode() & 0o077 != 0 {
                fs::set_permissions(path, fs::Permissions::from_mode(0o600)).with_context(
                    || format!("cannot restrict permissions of {}", path.display()),
                )?;
            }
            let text = fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let value = text.trim().to_string();
            anyhow::ensure!(
                !value.is_empty(),
                "secret file {} is empty; delete it to regenerate",
                path.display()
            );
            Ok(value)
        }
        Err(err) => Err(err).with_context(|| format!("cannot create {}", path.display())),
    }
}

impl DataDir {
    pub fn prepare(root: &Path) -> anyhow::Result<Self> {
        ensure_private_dir(root)?;
        // Canonical: agents' isolation hides this exact directory.
        let root = &std::fs::canonicalize(root)
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        let secrets = root.join("secrets");
        ensure_private_dir(&secrets)?;
        let signals = root.join("signals");
        ensure_private_dir(&signals)?;
        let admin_token = read_or_create(&secrets.join("admin.token"), || {
            harness_core::ids::new_token("hxk_")
        })?;
        let key_text = read_or_create(&secrets.join("internal-api.key"), || {
            let bytes: [u8; 32] = rand::rng().random();
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        })?;
        let metrics_token = read_or_create(&secrets.join("metrics.token"), || {
            harness_core::ids::new_token("hxm_")
        })?;
        Ok(Self {
            root: root.to_path_buf(),
            metrics_token,
            admin_token,
            internal_key: key_text.into_bytes(),
            signals,
        })
    }
}

/// The database and its WAL/SHM files are readable by this user only (0600),
/// whatever the umask (SQLite gives new WAL/SHM files the database's mode).
pub fn restrict_database_files(database: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        let path = std::path::PathBuf::from(name);
        if path.exists()
            && let Err(err) = fs::set_permissions(&path, fs::Permissions::from_mode(0o600))
        {
            tracing::warn!(%err, path = %path.display(), "cannot make a database file private");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_created_once_with_private_modes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("data");
        let first = DataDir::prepare(&root).unwrap();
        let second = DataDir::prepare(&root).unwrap();
        assert_eq!(first.admin_token, second.admin_token);
        assert_eq!(first.internal_key, second.internal_key);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&root.join("secrets/admin.token")), 0o600);
        assert_eq!(mode(&root.join("secrets/internal-api.key")), 0o600);
        assert_eq!(mode(&root.join("secrets")), 0o700);
        assert_eq!(mode(&root), 0o700);
    }
}
