//! Embeds the built browser site (`<target>/site`, written by
//! `scripts/build-site.sh`: hashed names, `.br`/`.gz` copies) into the binary,
//! so `harness` is the one file to deploy. `HARNESS_SITE_DIR` picks another
//! directory. Without a built site the binary still builds (with a warning)
//! and serves pages that do not hydrate unless `HARNESS_SITE_ROOT` points at
//! a site at run time.
//!
//! Also builds and embeds the small holder binary (`build_holder.rs`).

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

#[path = "src/assets/site_dir.rs"]
#[allow(dead_code)]
mod site_dir;

#[path = "build_holder.rs"]
mod build_holder;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/assets/site_dir.rs");
    println!("cargo:rerun-if-env-changed=HARNESS_SITE_DIR");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let site = match std::env::var_os("HARNESS_SITE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => target_dir(&out_dir).join("site"),
    };
    // A directory: cargo re-runs this script when anything in it changes
    // (build-site.sh swaps in a new one). Created empty when missing so the
    // server is not rebuilt on every build until the site exists.
    if !site.exists() {
        let _ = std::fs::create_dir_all(&site);
    }
    println!("cargo:rerun-if-changed={}", site.display());

    let code = match embed(&site) {
        Ok(code) => code,
        Err(reason) => {
            println!(
                "cargo:warning=web UI not embedded ({reason}): run scripts/build-site.sh before \
                 building the server, or set HARNESS_SITE_ROOT when running it"
            );
            "pub(super) const OUTPUT_NAME: Option<&str> = None;\n\
             pub(super) const SPLIT_MANIFEST: Option<&str> = None;\n\
             pub(super) static FILES: &[Embedded] = &[];\n"
                .to_string()
        }
    };
    write_if_changed(&out_dir.join("embedded_site.rs"), &code);
    let holder = build_holder::generate(&out_dir, &target_dir(&out_dir));
    write_if_changed(&out_dir.join("embedded_holder.rs"), &holder);
}

fn write_if_changed(path: &Path, code: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(code)
        && let Err(err) = std::fs::write(path, code)
    {
        panic!("cannot write {}: {err}", path.display());
    }
}

fn embed(site: &Path) -> Result<String, String> {
    let name = site_dir::output_name(site).map_err(|e| format!("{}: {e}", site.display()))?;
    let files = site_dir::scan(site).map_err(|e| format!("{}: {e}", site.display()))?;
    let mut code = format!("pub(super) const OUTPUT_NAME: Option<&str> = Some({name:?});\n");
    let manifest =
        site_dir::split_manifest(site).map_err(|e| format!("{}: {e}", site.display()))?;
    let _ = match manifest {
        Some(_) => writeln!(
            code,
            "pub(super) const SPLIT_MANIFEST: Option<&str> = Some(include_str!({:?}));",
            site.join(site_dir::SPLIT_MANIFEST_FILE)
                .display()
                .to_string()
        ),
        None => writeln!(
            code,
            "pub(super) const SPLIT_MANIFEST: Option<&str> = None;"
        ),
    };
    code.push_str("pub(super) static FILES: &[Embedded] = &[\n");
    let bytes = |path: &Option<PathBuf>| match path {
        Some(p) => format!("Some(include_bytes!({:?}))", p.display().to_string()),
        None => "None".to_string(),
    };
    for file in &files {
        let _ = writeln!(
            code,
            "    Embedded {{ url: {:?}, raw: include_bytes!({:?}), br: {}, gz: {} }},",
            file.url,
            file.path.display().to_string(),
            bytes(&file.br),
            bytes(&file.gz),
        );
    }
    code.push_str("];\n");
    Ok(code)
}

/// The cargo target directory: the ancestor of OUT_DIR holding CACHEDIR.TAG
/// (`<target>/<profile>/build/server-*/out`), else `<workspace>/target`.
fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        })
}
