//! The data directory and its secrets (contract.md §1, decisions D12):
//! `secrets/admin.token`, `secrets/internal-api.key` (the key of signed
//! gateway requests) and `secrets/gateway.token` (the gateway's bearer
//! token for `/mcp` and the gateway routes; rotatable), created on first
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

/// The gateway token's file name under `secrets/`.
pub const GATEWAY_TOKEN_FILE: &str = "gateway.token";

fn new_gateway_token() -> String {
    harness_core::ids::new_token(harness_core::auth::GATEWAY_TOKEN_PREFIX)
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
        read_or_create(&secrets.join(GATEWAY_TOKEN_FILE), new_gateway_token)?;
        Ok(Self {
            root: root.to_path_buf(),
            metrics_token,
            admin_token,
            internal_key: key_text.into_bytes(),
            signals,
        })
    }
}

impl DataDir {
    pub fn gateway_token_path(&self) -> PathBuf {
        self.root.join("secrets").join(GATEWAY_TOKEN_FILE)
    }
}

/// Replace the gateway token of the data directory `root` with a new one
/// (written to a 0600 temporary file, then renamed over the old one): the
/// old token stops working at once, on a running server too
/// ([`GatewayTokenFile`] re-reads the file when it changes).
pub fn rotate_gateway_token(root: &Path) -> anyhow::Result<String> {
    let secrets = root.join("secrets");
    ensure_private_dir(&secrets)?;
    let token = new_gateway_token();
    let path = secrets.join(GATEWAY_TOKEN_FILE);
    let tmp = secrets.join(format!(".{GATEWAY_TOKEN_FILE}.{}", std::process::id()));
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    file.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, &path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(token)
}

/// The gateway token as the core checks it: the file's SHA-256, re-read
/// whenever its inode, modification time or size changes (a rotation by the CLI
/// or the REST route takes effect without a restart).
pub struct GatewayTokenFile {
    path: PathBuf,
    /// The file's stamp when it was read, and its token's hash.
    cached: std::sync::Mutex<Option<(FileStamp, Option<String>)>>,
}

/// Modification time, size, inode.
type FileStamp = (std::time::SystemTime, u64, u64);

impl GatewayTokenFile {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            cached: std::sync::Mutex::new(None),
        }
    }
}

impl harness_core::auth::GatewaySecret for GatewayTokenFile {
    fn token_hash(&self) -> Option<String> {
        let meta = fs::metadata(&self.path).ok()?;
        // A rotation renames a new file over the old one: a new inode.
        let stamp = (
            meta.modified().ok()?,
            meta.len(),
            std::os::unix::fs::MetadataExt::ino(&meta),
        );
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((seen, hash)) = cached.as_ref()
            && *seen == stamp
        {
            return hash.clone();
        }
        let hash = fs::read_to_string(&self.path)
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .map(|t| harness_core::ids::token_hash(&t));
        *cached = Some((stamp, hash.clone()));
        hash
    }

    fn preview(&self) -> Option<String> {
        let token = fs::read_to_string(&self.path).ok()?;
        let token = token.trim();
        (!token.is_empty()).then(|| harness_core::auth::mask_token(token))
    }

    /// The file is `<root>/secrets/gateway.token`.
    fn rotate(&self) -> Result<String, String> {
        let root = self
            .path
            .parent()
            .and_then(Path::parent)
            .ok_or_else(|| format!("{} has no data directory", self.path.display()))?;
        rotate_gateway_token(root).map_err(|e| format!("{e:#}"))
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
        assert_eq!(mode(&root.join("secrets/gateway.token")), 0o600);
    }

    #[test]
    fn a_rotated_gateway_token_replaces_the_old_one_for_a_running_reader() {
        use harness_core::auth::GatewaySecret;
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::prepare(&dir.path().join("data")).unwrap();
        let path = data.gateway_token_path();
        let reader = GatewayTokenFile::new(path.clone());
        let old = fs::read_to_string(&path).unwrap().trim().to_string();
        assert!(old.starts_with("hxg_"));
        assert_eq!(
            reader.token_hash(),
            Some(harness_core::ids::token_hash(&old))
        );
        let new = rotate_gateway_token(&data.root).unwrap();
        assert_ne!(new, old);
        assert_eq!(
            reader.token_hash(),
            Some(harness_core::ids::token_hash(&new))
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
