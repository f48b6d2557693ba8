//! The data directory and its secrets (docs/contract.md §1, docs/decisions.md D12):
//! `secrets/admin.token`, `secrets/internal-api.key` (the key of signed
//! gateway requests), `secrets/gateway.token` (the gateway's bearer
//! token for `/mcp` and the gateway routes; rotatable), `secrets/metrics.token`
//! and `secrets/node.key` (the key of node-to-node calls, `node_call.rs`),
//! created on first start with mode 0600 in a 0700 directory, never logged.
//!
//! A cluster gives every node the same ones: a shared
//! secrets directory (`--secrets-dir` / `HARNESS_SECRETS_DIR`, read and
//! created there instead of `<data-dir>/secrets`) or environment variables
//! ([`SecretSources`]: `HARNESS_ADMIN_TOKEN`, `HARNESS_INTERNAL_API_KEY`,
//! `HARNESS_GATEWAY_TOKEN`, `HARNESS_METRICS_TOKEN`, `HARNESS_NODE_KEY`),
//! a variable winning over its file. Their values are never printed: the
//! `Debug` of [`SecretSources`] and [`DataDir`] says only which are set, and
//! the gateway CLIs this process runs do not inherit the variables.

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
    /// The key of node-to-node calls (only nodes have it; `node_call.rs`).
    pub node_key: Vec<u8>,
    /// Where the secret files are (`<root>/secrets` or the shared directory).
    pub secrets: PathBuf,
    /// The gateway token given by `HARNESS_GATEWAY_TOKEN` (else its file).
    gateway_token: Option<String>,
}

impl std::fmt::Debug for DataDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataDir")
            .field("root", &self.root)
            .field("secrets", &self.secrets)
            .field("signals", &self.signals)
            .finish_non_exhaustive()
    }
}

/// The environment variables that carry secrets (each wins over its file).
pub const ADMIN_TOKEN_ENV: &str = "HARNESS_ADMIN_TOKEN";
pub const INTERNAL_API_KEY_ENV: &str = "HARNESS_INTERNAL_API_KEY";
pub const GATEWAY_TOKEN_ENV: &str = "HARNESS_GATEWAY_TOKEN";
pub const METRICS_TOKEN_ENV: &str = "HARNESS_METRICS_TOKEN";
pub const NODE_KEY_ENV: &str = "HARNESS_NODE_KEY";
/// The shared secrets directory.
pub const SECRETS_DIR_ENV: &str = "HARNESS_SECRETS_DIR";
/// Every variable above: removed from the environment of the processes
/// this server runs besides agents (whose environment is an allow-list).
pub const SECRET_ENV_VARS: [&str; 5] = [
    ADMIN_TOKEN_ENV,
    INTERNAL_API_KEY_ENV,
    GATEWAY_TOKEN_ENV,
    METRICS_TOKEN_ENV,
    NODE_KEY_ENV,
];

/// Where a node's secrets come from besides `<data-dir>/secrets`: the same
/// for every node of a cluster. `Debug` names which are set, never a value.
#[derive(Clone, Default)]
pub struct SecretSources {
    /// A shared secrets directory (`--secrets-dir` / `HARNESS_SECRETS_DIR`).
    pub dir: Option<PathBuf>,
    pub admin_token: Option<String>,
    pub internal_api_key: Option<String>,
    pub gateway_token: Option<String>,
    pub metrics_token: Option<String>,
    pub node_key: Option<String>,
}

impl std::fmt::Debug for SecretSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |v: &Option<String>| if v.is_some() { "set" } else { "unset" };
        f.debug_struct("SecretSources")
            .field("dir", &self.dir)
            .field("admin_token", &set(&self.admin_token))
            .field("internal_api_key", &set(&self.internal_api_key))
            .field("gateway_token", &set(&self.gateway_token))
            .field("metrics_token", &set(&self.metrics_token))
            .field("node_key", &set(&self.node_key))
            .finish()
    }
}

impl SecretSources {
    /// The variables of this process (blank = unset).
    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Self {
            dir: std::env::var_os(SECRETS_DIR_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            admin_token: var(ADMIN_TOKEN_ENV),
            internal_api_key: var(INTERNAL_API_KEY_ENV),
            gateway_token: var(GATEWAY_TOKEN_ENV),
            metrics_token: var(METRICS_TOKEN_ENV),
            node_key: var(NODE_KEY_ENV),
        }
    }
}

impl SecretSources {
    /// The secrets directory of the data directory `root`.
    pub fn dir_for(&self, root: &Path) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| root.join("secrets"))
    }

    /// The admin token as the server of `root` has it (for `harness open`,
    /// `harness doctor`): the variable, else its file.
    pub fn admin_token_for(&self, root: &Path) -> anyhow::Result<String> {
        if let Some(token) = &self.admin_token {
            return Ok(token.clone());
        }
        let path = self.dir_for(root).join("admin.token");
        Ok(fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_string())
    }
}

/// A secret: the given value, else its file (read, or created by `make`).
fn secret(
    given: Option<&String>,
    path: &Path,
    make: impl FnOnce() -> String,
) -> anyhow::Result<String> {
    match given {
        Some(value) => Ok(value.clone()),
        None => read_or_create(path, make),
    }
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
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => read_existing(path),
        Err(err) => Err(err).with_context(|| format!("cannot create {}", path.display())),
    }
}

/// An existing secret file. Another node sharing the directory may have
/// created it an instant ago: an empty file is read again for up to 2 s.
fn read_existing(path: &Path) -> anyhow::Result<String> {
    let mut tries = 0;
    loop {
        match read_existing_once(path) {
            Ok(value) => return Ok(value),
            Err(err) if tries >= 40 => return Err(err),
            Err(_) => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
}

fn read_existing_once(path: &Path) -> anyhow::Result<String> {
    {
        {
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
    }
}

impl DataDir {
    /// The data directory with its own secrets (`<root>/secrets`).
    pub fn prepare(root: &Path) -> anyhow::Result<Self> {
        Self::prepare_with(root, &SecretSources::default())
    }

    /// The data directory, its secrets taken from `sources` first.
    pub fn prepare_with(root: &Path, sources: &SecretSources) -> anyhow::Result<Self> {
        ensure_private_dir(root)?;
        // Canonical: agents' isolation hides this exact directory.
        let root = &std::fs::canonicalize(root)
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        let secrets = sources.dir.clone().unwrap_or_else(|| root.join("secrets"));
        ensure_private_dir(&secrets)?;
        let signals = root.join("signals");
        ensure_private_dir(&signals)?;
        let random_key = || {
            let bytes: [u8; 32] = rand::rng().random();
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        };
        let admin_token = secret(
            sources.admin_token.as_ref(),
            &secrets.join("admin.token"),
            || harness_core::ids::new_token("hxk_"),
        )?;
        let key_text = secret(
            sources.internal_api_key.as_ref(),
            &secrets.join("internal-api.key"),
            random_key,
        )?;
        let metrics_token = secret(
            sources.metrics_token.as_ref(),
            &secrets.join("metrics.token"),
            || harness_core::ids::new_token("hxm_"),
        )?;
        let node_key = secret(
            sources.node_key.as_ref(),
            &secrets.join("node.key"),
            random_key,
        )?;
        if sources.gateway_token.is_none() {
            read_or_create(&secrets.join(GATEWAY_TOKEN_FILE), new_gateway_token)?;
        }
        Ok(Self {
            root: root.to_path_buf(),
            metrics_token,
            admin_token,
            internal_key: key_text.into_bytes(),
            node_key: node_key.into_bytes(),
            signals,
            secrets,
            gateway_token: sources.gateway_token.clone(),
        })
    }
}

impl DataDir {
    pub fn gateway_token_path(&self) -> PathBuf {
        self.secrets.join(GATEWAY_TOKEN_FILE)
    }

    /// The gateway token as the core checks it: the variable's value, else
    /// the (rotatable) file.
    pub fn gateway_secret(&self) -> std::sync::Arc<dyn harness_core::auth::GatewaySecret> {
        match &self.gateway_token {
            Some(token) => std::sync::Arc::new(FixedGatewayToken(token.clone())),
            None => std::sync::Arc::new(GatewayTokenFile::new(self.gateway_token_path())),
        }
    }

    /// The gateway token in clear (`harness gateway-token`).
    pub fn gateway_token(&self) -> anyhow::Result<String> {
        if let Some(token) = &self.gateway_token {
            return Ok(token.clone());
        }
        let path = self.gateway_token_path();
        Ok(fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_string())
    }
}

/// The gateway token given by `HARNESS_GATEWAY_TOKEN`: rotated by changing
/// the variable on every node, not by Harness.
struct FixedGatewayToken(String);

impl harness_core::auth::GatewaySecret for FixedGatewayToken {
    fn token_hash(&self) -> Option<String> {
        Some(harness_core::ids::token_hash(&self.0))
    }

    fn preview(&self) -> Option<String> {
        Some(harness_core::auth::mask_token(&self.0))
    }

    fn rotate(&self) -> Result<String, String> {
        Err(format!(
            "the gateway token is set by {GATEWAY_TOKEN_ENV}: change it there (on every node) and restart"
        ))
    }
}

/// Replace the gateway token in the secrets directory `secrets` with a new one
/// (written to a 0600 temporary file, then renamed over the old one): the
/// old token stops working at once, on a running server too
/// ([`GatewayTokenFile`] re-reads the file when it changes).
pub fn rotate_gateway_token(secrets: &Path) -> anyhow::Result<String> {
    ensure_private_dir(secrets)?;
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

    /// The file is `<secrets dir>/gateway.token`.
    fn rotate(&self) -> Result<String, String> {
        let secrets = self
            .path
            .parent()
            .ok_or_else(|| format!("{} has no directory", self.path.display()))?;
        rotate_gateway_token(secrets).map_err(|e| format!("{e:#}"))
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
        let new = rotate_gateway_token(&data.secrets).unwrap();
        assert_ne!(new, old);
        assert_eq!(
            reader.token_hash(),
            Some(harness_core::ids::token_hash(&new))
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn two_nodes_on_a_shared_secrets_directory_have_the_same_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let shared = SecretSources {
            dir: Some(dir.path().join("shared")),
            ..SecretSources::default()
        };
        let a = DataDir::prepare_with(&dir.path().join("a"), &shared).unwrap();
        let b = DataDir::prepare_with(&dir.path().join("b"), &shared).unwrap();
        assert_eq!(a.admin_token, b.admin_token);
        assert_eq!(a.internal_key, b.internal_key);
        assert_eq!(a.metrics_token, b.metrics_token);
        assert_eq!(a.node_key, b.node_key);
        assert_eq!(a.gateway_token().unwrap(), b.gateway_token().unwrap());
        assert!(!dir.path().join("a/secrets").exists(), "no private copy");
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("shared")), 0o700);
        assert_eq!(mode(&dir.path().join("shared/node.key")), 0o600);
        // A rotation on one node is the other's token too.
        let rotated = a.gateway_secret().rotate().unwrap();
        assert_eq!(
            b.gateway_secret().token_hash(),
            Some(harness_core::ids::token_hash(&rotated))
        );
    }

    #[test]
    fn given_values_win_over_files_and_are_never_printed() {
        let dir = tempfile::tempdir().unwrap();
        let sources = SecretSources {
            admin_token: Some("hxk_given-admin-secret".into()),
            internal_api_key: Some("given-internal-secret".into()),
            gateway_token: Some("hxg_given-gateway-secret".into()),
            metrics_token: Some("hxm_given-metrics-secret".into()),
            node_key: Some("given-node-secret".into()),
            ..SecretSources::default()
        };
        let data = DataDir::prepare_with(&dir.path().join("data"), &sources).unwrap();
        assert_eq!(data.admin_token, "hxk_given-admin-secret");
        assert_eq!(data.internal_key, b"given-internal-secret");
        assert_eq!(data.metrics_token, "hxm_given-metrics-secret");
        assert_eq!(data.node_key, b"given-node-secret");
        assert_eq!(data.gateway_token().unwrap(), "hxg_given-gateway-secret");
        let secret = data.gateway_secret();
        assert_eq!(
            secret.token_hash(),
            Some(harness_core::ids::token_hash("hxg_given-gateway-secret"))
        );
        assert!(secret.rotate().unwrap_err().contains(GATEWAY_TOKEN_ENV));
        // Nothing written for a value given directly.
        assert!(!dir.path().join("data/secrets/gateway.token").exists());
        assert!(!dir.path().join("data/secrets/admin.token").exists());
        let printed = format!("{sources:?} {data:?}");
        assert!(!printed.contains("given-"), "{printed}");
        assert!(printed.contains("set"), "{printed}");
    }
}
