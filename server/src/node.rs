//! This process's node id: stable across restarts, stored in the data
//! directory (`<data-dir>/node-id`). Executions record the node that spawned
//! them and deliveries the node that owns their PTY; start-up interrupts only
//! this node's executions and releases only this node's delivery leases.

use std::path::Path;

use anyhow::Context;

const FILE: &str = "node-id";

fn valid(id: &str) -> bool {
    harness_core::validate::is_node_id(id)
}

/// This node's name when `--node-name` is not given: the machine's hostname
/// (`None` when it has none a node name may be: then the id is shown).
pub fn default_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is valid for `buf.len()` bytes; gethostname writes at
    // most that many and NUL-terminates when the name fits.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0)?;
    let host = std::str::from_utf8(&buf[..end]).ok()?;
    harness_core::validate::node_name(host).ok()
}

/// Read the node id, creating it (a CUID) on first start.
pub fn load_or_create(data_dir: &Path) -> anyhow::Result<String> {
    let path = data_dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let id = text.trim();
            anyhow::ensure!(
                valid(id),
                "{} does not hold a valid node id",
                path.display()
            );
            return Ok(id.to_string());
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
    let id = harness_core::ids::new_id();
    let tmp = data_dir.join(format!("{FILE}.tmp"));
    std::fs::write(&tmp, format!("{id}\n"))
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    #[test]
    fn stable_across_loads() {
        let dir = tempfile::tempdir().unwrap();
        let a = super::load_or_create(dir.path()).unwrap();
        let b = super::load_or_create(dir.path()).unwrap();
        assert_eq!(a, b);
        std::fs::write(dir.path().join("node-id"), "bad id!\n").unwrap();
        assert!(super::load_or_create(dir.path()).is_err());
    }
}
