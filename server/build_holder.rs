//! The small holder binary (`crates/holder`'s `harness-hold`), built by a
//! cargo of its own and embedded, so `harness` stays the one file to deploy
//! while its holders do not run from this large image (a holder of
//! `harness` carries ≈ 1.4 MB of relocated data of its own; see
//! `server/src/private_exe`). `HARNESS_EMBED_HOLDER=off` builds without it:
//! holders then run as `harness hold`.
//!
//! The inner build uses the outer one's cargo, rustc, flags, profile and
//! target, and its own target directory (`<target>/holder`), so it never
//! waits on the outer build's lock. It re-runs when a source file the
//! holder binary was built from changes (its dep-info), or `Cargo.lock`.

use std::{
    collections::BTreeSet,
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
};

use sha2::{Digest, Sha256};

const NONE: &str = "pub(super) const HOLDER: Option<(&[u8], &str)> = None;\n";

/// The code of `embedded_holder.rs`.
pub fn generate(out_dir: &Path, target_dir: &Path) -> String {
    println!("cargo:rerun-if-env-changed=HARNESS_EMBED_HOLDER");
    if std::env::var("HARNESS_EMBED_HOLDER").as_deref() == Ok("off") {
        println!(
            "cargo:warning=no holder binary embedded (HARNESS_EMBED_HOLDER=off): holders run as \
             `harness hold`, ~1.4 MB more memory per agent"
        );
        return NONE.to_string();
    }
    match build(out_dir, target_dir) {
        Ok((path, sha256)) => format!(
            "pub(super) const HOLDER: Option<(&[u8], &str)> = Some((include_bytes!({:?}), {sha256:?}));\n",
            path.display().to_string()
        ),
        Err(err) => panic!(
            "cannot build the holder binary (crates/holder, bin harness-hold): {err}\n\
             (HARNESS_EMBED_HOLDER=off builds without it)"
        ),
    }
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("cargo did not set {name}"))
}

/// Builds the holder; answers its copy in `out_dir` and its SHA-256.
fn build(out_dir: &Path, target_dir: &Path) -> Result<(PathBuf, String), String> {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir
        .parent()
        .ok_or("the server crate has no parent directory")?
        .to_path_buf();
    let release = env("PROFILE")? == "release";
    let (target, host) = (env("TARGET")?, env("HOST")?);
    let inner = target_dir.join("holder");
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(workspace.join("crates/holder/Cargo.toml"))
        .args(["--bin", "harness-hold", "--target-dir"])
        .arg(&inner)
        // Clippy's driver (`cargo clippy`) is for the outer build only.
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    if release {
        cmd.arg("--release");
    }
    let mut bin_dir = inner.clone();
    if target != host {
        cmd.args(["--target", &target]);
        bin_dir.push(&target);
    }
    bin_dir.push(if release { "release" } else { "debug" });
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let built = bin_dir.join("harness-hold");
    for path in sources(&built.with_extension("d"), &workspace, target_dir) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.toml").display()
    );
    let bytes = std::fs::read(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    // A copy of its own: the inner build may replace `built` while rustc
    // reads this one.
    let embedded = out_dir.join("harness-hold");
    if std::fs::read(&embedded).ok().as_deref() != Some(bytes.as_slice()) {
        std::fs::write(&embedded, &bytes).map_err(|e| format!("{}: {e}", embedded.display()))?;
    }
    let mut sha256 = String::with_capacity(64);
    for b in Sha256::digest(&bytes) {
        let _ = write!(sha256, "{b:02x}");
    }
    Ok((embedded, sha256))
}

/// The workspace's files the binary was built from (its dep-info, a make
/// rule `<bin>: <dep> <dep> …` with `\ ` for a space), with the manifest of
/// each of their packages.
fn sources(dep_info: &Path, workspace: &Path, target_dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let Ok(text) = std::fs::read_to_string(dep_info) else {
        // Without dep-info: every change of the holder crate counts.
        out.insert(workspace.join("crates/holder"));
        return out;
    };
    let Some(rule) = text.lines().next() else {
        return out;
    };
    // After the target's own name.
    let deps = rule.split_once(": ").map_or("", |(_, d)| d);
    let mut path = String::new();
    let mut chars = deps.chars().peekable();
    let push = |path: &mut String, out: &mut BTreeSet<PathBuf>| {
        let p = PathBuf::from(std::mem::take(path));
        if p.starts_with(workspace) && !p.starts_with(target_dir) {
            if let Some(manifest) = p
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(workspace))
                .map(|a| a.join("Cargo.toml"))
                .find(|m| m.is_file())
            {
                out.insert(manifest);
            }
            out.insert(p);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                path.push(' ');
                chars.next();
            }
            ' ' if !path.is_empty() => push(&mut path, &mut out),
            ' ' => {}
            c => path.push(c),
        }
    }
    if !path.is_empty() {
        push(&mut path, &mut out);
    }
    out
}
