//! The start-up probe: can agents be isolated here, and can Harness's
//! managed settings be laid over `/etc` in their namespace?

use std::path::Path;

use super::{Action, Isolation, PROBE_ENV, SUBCOMMAND, run};

/// `harness agent-sandbox --probe` (or `--probe-layer`): isolates a
/// throw-away directory and checks the result from inside; with the layer,
/// a throw-away `/etc` entry too. Exit code 0 when it all holds here.
pub fn probe_main(with_layer: bool) -> i32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let tag = format!("harness-isolation-probe-{}-{nanos}", std::process::id());
    let dir = std::env::temp_dir().join(&tag);
    let result = (|| -> Result<i32, String> {
        let shown_dir = dir.join("shown");
        std::fs::create_dir_all(&shown_dir).map_err(|e| e.to_string())?;
        let hidden = dir.join("secret");
        let shown = shown_dir.join("visible");
        std::fs::write(&hidden, b"secret").map_err(|e| e.to_string())?;
        std::fs::write(&shown, b"visible").map_err(|e| e.to_string())?;
        let (etc_layer, laid) = if with_layer {
            let layer = dir.join("etc");
            let entry = layer.join(&tag);
            std::fs::create_dir_all(&entry).map_err(|e| e.to_string())?;
            std::fs::write(entry.join("laid"), b"laid").map_err(|e| e.to_string())?;
            (Some(layer), Some(Path::new("/etc").join(&tag).join("laid")))
        } else {
            (None, None)
        };
        let iso = Isolation {
            hide: vec![dir.clone()],
            show: vec![shown_dir],
            etc_layer,
        };
        run(
            &iso,
            Action::Probe {
                hidden,
                shown,
                laid,
            },
        )
    })();
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{err}");
            1
        }
    }
}

/// Whether this process was started by [`probe`] (see [`PROBE_ENV`]).
pub fn inside_probe() -> bool {
    std::env::var_os(PROBE_ENV).is_some()
}

/// Runs the probe through `launcher` (the harness binary) in a child process:
/// `Ok` when agents are isolated, else the reason.
pub fn probe(launcher: &Path) -> Result<(), String> {
    run_probe(launcher, "--probe")
}

/// Like [`probe`], and the `/etc` layer of the managed settings too.
pub fn probe_layer(launcher: &Path) -> Result<(), String> {
    run_probe(launcher, "--probe-layer")
}

fn run_probe(launcher: &Path, flag: &str) -> Result<(), String> {
    if inside_probe() {
        return Err(format!(
            "started by an isolation probe: {PROBE_ENV} is set, so the probe's launcher is \
             not the harness binary"
        ));
    }
    let out = std::process::Command::new(launcher)
        .args([SUBCOMMAND, flag])
        .env(PROBE_ENV, "1")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", launcher.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(if err.is_empty() {
            format!("the isolation probe failed ({})", out.status)
        } else {
            err
        })
    }
}
