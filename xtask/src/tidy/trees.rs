//! The module trees of the workspace's crates, read from the file layout: each package's `src`
//! (without `src/bin`), each `src/bin/<name>/` and each `tests/<name>/`, every file with the
//! module it is (`a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`, `lib.rs` and `main.rs` the
//! root).

use std::path::{Path, PathBuf};

use super::cycles::SourceFile;

/// Every module tree of every crate under `root`: each package's `src` (without `src/bin`),
/// each `src/bin/<name>/`, and each `tests/<name>/`, with the module each file is.
pub fn trees(root: &Path) -> Vec<(String, Vec<SourceFile>)> {
    let mut packages: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| dir.join("Cargo.toml").is_file() && dir.join("src").is_dir())
        .collect();
    packages.sort();
    let mut trees = Vec::new();
    for package in packages {
        let mut dirs = vec![package.join("src")];
        for extra in ["src/bin", "tests"] {
            let mut found: Vec<PathBuf> = std::fs::read_dir(package.join(extra))
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect();
            found.sort();
            dirs.extend(found);
        }
        for dir in dirs {
            let mut files = Vec::new();
            collect(&dir, &dir, root, &mut files);
            if !files.is_empty() {
                let shown = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
                trees.push((shown, files));
            }
        }
    }
    trees
}

fn collect(dir: &Path, tree: &Path, root: &Path, out: &mut Vec<SourceFile>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            // `src/bin` holds crates of their own.
            if path != tree.join("bin") {
                collect(&path, tree, root, out);
            }
            continue;
        }
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let relative = path.strip_prefix(tree).unwrap_or(&path).with_extension("");
        let mut module: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        // `a/mod.rs` is `a`; the tree's root file (`lib.rs`, `main.rs`) is the root.
        let root_file = module.len() == 1 && matches!(module[0].as_str(), "lib" | "main");
        if root_file || (module.len() > 1 && module.last().is_some_and(|m| m == "mod")) {
            module.pop();
        }
        out.push(SourceFile {
            shown: path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string(),
            module,
            text,
        });
    }
}
