//! Git repositories for fixtures: `git init -b <branch>` with one (empty) commit, linked
//! worktrees, and branch switches, run with no system or user git config so results never depend
//! on the machine. Every case of the kit makes its fleet's repositories afresh, so they are made
//! with as few git processes and files as a real repository allows: no template (sample hooks),
//! no automatic maintenance after a commit, no checkout of a worktree (its tree is empty anyway).

use std::path::Path;

use anyhow::{Context, bail};

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = crate::process::command("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=corral-sim",
            "-c",
            "user.email=corral-sim@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "maintenance.auto=false",
            "-c",
            "gc.auto=0",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .context("running git (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Creates `dir` as a repository on `branch` with one empty commit; an existing repository is
/// kept.
pub fn init(dir: &Path, branch: &str) -> anyhow::Result<()> {
    if dir.join(".git").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    git(dir, &["init", "-q", "--template=", "-b", branch])?;
    git(
        dir,
        &["commit", "-q", "--allow-empty", "-m", "initial commit"],
    )?;
    Ok(())
}

/// Adds a linked worktree at `path` on a new `branch`; an existing one is kept.
pub fn worktree(repo: &Path, path: &Path, branch: &str) -> anyhow::Result<()> {
    if path.join(".git").exists() {
        return Ok(());
    }
    let target = path.to_str().context("worktree path is not UTF-8")?;
    git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "--no-checkout",
            "-b",
            branch,
            target,
        ],
    )?;
    Ok(())
}

/// Checks out `branch` in the repository at `dir`, creating it from HEAD when missing.
pub fn checkout(dir: &Path, branch: &str) -> anyhow::Result<()> {
    let exists = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok();
    if exists {
        git(dir, &["checkout", "-q", branch])?;
    } else {
        git(dir, &["checkout", "-q", "-b", branch])?;
    }
    Ok(())
}

/// The branch checked out at `dir`.
pub fn branch(dir: &Path) -> anyhow::Result<String> {
    git(dir, &["rev-parse", "--abbrev-ref", "HEAD"])
}
