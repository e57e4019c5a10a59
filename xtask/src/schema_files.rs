//! `cargo xtask schema [--check]`: writes `schema/json/*.schema.json` from the wire types, or with
//! `--check` fails when a committed file differs from what would be written (or is stale).

use anyhow::{Context, bail};

use crate::workspace_root;

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => bail!("usage: cargo xtask schema [--check]"),
    };
    let dir = workspace_root().join("schema/json");
    let documents = schema::generate::documents();
    let mut drift = Vec::new();
    for document in &documents {
        let path = dir.join(document.file);
        let text = document.render();
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == text {
            continue;
        }
        if check {
            drift.push(document.file.to_owned());
        } else {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if documents.iter().any(|d| d.file == name) {
            continue;
        }
        if check {
            drift.push(format!("{name} (stale)"));
        } else {
            std::fs::remove_file(dir.join(&name))?;
            eprintln!("removed stale {name}");
        }
    }
    if !drift.is_empty() {
        bail!(
            "generated schemas drifted: {}; run `cargo xtask schema`",
            drift.join(", ")
        );
    }
    Ok(())
}
