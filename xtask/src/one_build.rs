//! The README's two commands compile each workspace crate once: `cargo xtask conformance` (xtask,
//! then the kit's binaries) and `cargo test --workspace` must resolve every crate to one feature
//! set, or cargo compiles a crate (and everything above it) again for the second command. A new
//! dependency that turns on a feature of a shared crate in one of the three selections only
//! breaks that; the test here says which crate and which features.

use std::collections::BTreeMap;
use std::path::Path;

/// The three selections the README's commands build: xtask (`cargo xtask`), the kit's binaries
/// (`BUILD_ARGS` in `simulator/src/conformance/binaries.rs`), and `cargo test --workspace` (with
/// dev-dependencies).
pub const SELECTIONS: &[(&str, &[&str])] = &[
    ("cargo xtask", &["-p", "xtask", "-e", "normal,build"]),
    (
        "the kit's binaries",
        &[
            "-p",
            "simulator",
            "-p",
            "reference-host",
            "-p",
            "client",
            "-e",
            "normal,build",
        ],
    ),
    (
        "cargo test --workspace",
        &["--workspace", "-e", "normal,build,dev"],
    ),
];

/// Every crate of one selection with its features: `name version` → `[features]`.
fn resolve(root: &Path, selection: &[&str]) -> anyhow::Result<BTreeMap<String, String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = crate::bench::process::command(cargo)
        .current_dir(root)
        .args([
            "tree",
            "--locked",
            "--offline",
            "--prefix",
            "none",
            "-f",
            "{p}|{f}",
        ])
        .args(selection)
        .output()?;
    if !output.status.success() {
        anyhow::bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let mut crates = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        if let Some((package, features)) = line.split_once('|') {
            let package = package.trim_end_matches(" (proc-macro)");
            crates.insert(
                package.to_owned(),
                features.trim_end_matches(" (*)").to_owned(),
            );
        }
    }
    Ok(crates)
}

/// Crates two selections both build with different features, one readable line each; `cargo
/// xtask tidy` reports them.
pub fn differences(root: &Path) -> anyhow::Result<Vec<String>> {
    let resolved = SELECTIONS
        .iter()
        .map(|(name, selection)| Ok((*name, resolve(root, selection)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for (at, (a, left)) in resolved.iter().enumerate() {
        for (b, right) in &resolved[at + 1..] {
            for (package, features) in left {
                if let Some(other) = right.get(package)
                    && other != features
                {
                    out.push(format!("{package}: {a} [{features}] / {b} [{other}]"));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readmes_two_commands_resolve_every_crate_alike() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let differences = differences(&root).unwrap();
        assert!(
            differences.is_empty(),
            "a crate compiles twice for the README's two commands:\n{}",
            differences.join("\n")
        );
    }
}
