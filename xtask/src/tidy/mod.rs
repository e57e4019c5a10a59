//! `cargo xtask tidy`: every `.rs` file opens with a `//!` line, no test is `#[ignore]`d or
//! `#[should_panic]` (assert on the error value or error frame instead), no sibling modules of a
//! crate use each other in a cycle ([`cycles`]), and no code but `schema::PaneOption` spells a
//! pane option of the contract, nor any but `schema::NotifyVar` a notification variable
//! ([`spelled`]); the reference host starts threads only through its `threads` module
//! ([`threads`]); every crate depends only on what its
//! architecture invariant allows ([`crates`], through `cargo metadata`); and the README's two
//! commands resolve every crate to one feature set, so each compiles once ([`one_build`], through
//! `cargo tree`).
//! Also run as a test.

mod attributes;
mod crates;
mod cycles;
mod lex;
mod one_build;
mod spelled;
mod threads;
mod trees;

use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::workspace_root;

pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    let mut problems = check(&root);
    problems.extend(crates::check(&root)?);
    problems.extend(
        one_build::problems(&root)?.into_iter().map(|problem| {
            format!("a crate compiles twice for the README's two commands: {problem}")
        }),
    );
    if problems.is_empty() {
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    bail!("{} tidy problem(s)", problems.len())
}

/// Every violation under `root`, one readable line each.
pub fn check(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    collect_rust_files(root, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut sources = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            problems.push(format!("{}: unreadable", file.display()));
            continue;
        };
        let path = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        problems.extend(check_file(&path.display().to_string(), &text));
        sources.push(spelled::Source { path, text });
    }
    for (tree, files) in trees::trees(root) {
        problems.extend(cycles::check_tree(&tree, &files));
    }
    problems.extend(spelled::check(&sources));
    problems
}

/// The violations of one file's text.
pub fn check_file(shown: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if !text.starts_with("//!") {
        problems.push(format!(
            "{shown}:1: the file must open with a `//!` line saying what it is for"
        ));
    }
    for (line, name) in attributes::banned(text) {
        problems.push(format!(
            "{shown}:{line}: `#[{name}]` is not allowed: a test always runs and asserts on the \
             error value or the error frame"
        ));
    }
    problems.extend(threads::check(shown, text));
    problems
}

fn collect_rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name == "target" || name.starts_with('.') {
                continue;
            }
            collect_rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_tidy() {
        let problems = check(&workspace_root());
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn a_file_without_a_module_doc_is_reported() {
        let problems = check_file("x.rs", "fn main() {}\n");
        assert_eq!(
            problems,
            ["x.rs:1: the file must open with a `//!` line saying what it is for"]
        );
    }

    /// Each form the attributes can take is read in `attributes`' tests; here, the report.
    #[test]
    fn ignored_and_should_panic_tests_are_reported() {
        let text =
            "//! t\n#[ignore]\nfn a() {}\n#[test] #[cfg_attr(unix, should_panic)] fn b() {}\n";
        assert_eq!(
            check_file("t.rs", text),
            [
                "t.rs:2: `#[ignore]` is not allowed: a test always runs and asserts on the error \
                 value or the error frame",
                "t.rs:4: `#[should_panic]` is not allowed: a test always runs and asserts on the \
                 error value or the error frame",
            ]
        );
    }
}
