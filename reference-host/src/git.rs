//! Repository facts of a pane's working directory (repo name, branch, worktree), read from the
//! repository's own files instead of spawning git: a fleet of a thousand panes must cost one
//! tmux call per cycle, not a thousand git calls.
//!
//! Discovery (walking up to the `.git` entry) is cached per directory and revalidated after
//! [`DISCOVERY_TTL`]; the branch is re-read only when `HEAD`'s stat changes, and `HEAD` is
//! stat'ed once per fleet read ([`GitCache::next_read`]), so a steady cycle costs one `stat` per
//! distinct repository, not one per pane, and every pane of a repository shows one branch.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a discovery result is trusted before the directory is walked again.
pub const DISCOVERY_TTL: Duration = Duration::from_secs(30);

/// What the row shows of a directory's repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoFacts {
    /// The repository's name: the main worktree's directory name (a bare `x.git` gives `x`).
    pub repo: Option<String>,
    /// The checked-out branch; `None` when detached.
    pub branch: Option<String>,
    /// The top-level directory of the working tree containing the directory.
    pub worktree: Option<String>,
}

/// Where a directory's repository is, once discovered.
#[derive(Debug, Clone)]
struct Location {
    worktree: PathBuf,
    git_dir: PathBuf,
    repo: String,
}

#[derive(Debug)]
struct Discovery {
    at: Instant,
    location: Option<Location>,
}

/// `HEAD`'s identity and what it said.
#[derive(Debug)]
struct HeadMemo {
    stamp: (u64, i64, i64, u64),
    branch: Option<String>,
    /// The read (see [`GitCache::next_read`]) that last stat'ed it.
    read: u64,
}

/// Caches of repository facts, per directory and per git dir.
#[derive(Debug, Default)]
pub struct GitCache {
    directories: HashMap<PathBuf, Discovery>,
    heads: HashMap<PathBuf, HeadMemo>,
    /// The current read; 0 until the first [`GitCache::next_read`], which stats `HEAD` on every
    /// lookup.
    read: u64,
}

impl GitCache {
    /// Starts a new fleet read: each repository's `HEAD` is stat'ed again on its first lookup,
    /// and that answer holds for the rest of the read.
    pub fn next_read(&mut self) {
        self.read += 1;
    }

    /// The facts of `dir`; all `None` outside a repository or for an unreadable one.
    pub fn facts(&mut self, dir: &str) -> RepoFacts {
        if dir.is_empty() {
            return RepoFacts::default();
        }
        let dir = PathBuf::from(dir);
        let now = Instant::now();
        let fresh = self
            .directories
            .get(&dir)
            .is_some_and(|d| now.duration_since(d.at) < DISCOVERY_TTL);
        if !fresh {
            let location = discover(&dir);
            self.directories
                .insert(dir.clone(), Discovery { at: now, location });
        }
        let Some(location) = self.directories.get(&dir).and_then(|d| d.location.clone()) else {
            return RepoFacts::default();
        };
        let branch = self.branch(&location.git_dir);
        RepoFacts {
            repo: Some(location.repo),
            branch,
            worktree: Some(location.worktree.to_string_lossy().into_owned()),
        }
    }

    fn branch(&mut self, git_dir: &Path) -> Option<String> {
        if let Some(memo) = self.heads.get(git_dir)
            && self.read != 0
            && memo.read == self.read
        {
            return memo.branch.clone();
        }
        let head = git_dir.join("HEAD");
        let meta = std::fs::metadata(&head).ok()?;
        let stamp = (meta.ino(), meta.mtime(), meta.mtime_nsec(), meta.len());
        let read = self.read;
        if let Some(memo) = self.heads.get_mut(git_dir)
            && memo.stamp == stamp
        {
            memo.read = read;
            return memo.branch.clone();
        }
        let branch = std::fs::read_to_string(&head)
            .ok()
            .and_then(|text| branch_of_head(&text));
        self.heads.insert(
            git_dir.to_owned(),
            HeadMemo {
                stamp,
                branch: branch.clone(),
                read,
            },
        );
        branch
    }
}

/// The branch a `HEAD` file names, if it is a symbolic ref to a branch.
fn branch_of_head(text: &str) -> Option<String> {
    let target = text.trim().strip_prefix("ref:")?.trim();
    Some(
        target
            .strip_prefix("refs/heads/")
            .unwrap_or(target)
            .to_owned(),
    )
}

/// Walks up from `dir` to the nearest `.git` entry.
fn discover(dir: &Path) -> Option<Location> {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            let repo = name_of(candidate)?;
            return Some(Location {
                worktree: candidate.to_owned(),
                git_dir: dot_git,
                repo,
            });
        }
        // A linked worktree or submodule: `.git` is a file naming the git dir.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let git_dir = candidate.join(text.trim().strip_prefix("gitdir:")?.trim());
        let common = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(rel) => git_dir.join(rel.trim()),
            Err(_) => git_dir.clone(),
        };
        let repo = repo_name_of_common_dir(&common).or_else(|| name_of(candidate))?;
        return Some(Location {
            worktree: candidate.to_owned(),
            git_dir,
            repo,
        });
    }
    None
}

/// The repository name behind a common git dir: `/src/corral/.git` gives `corral`, a bare
/// `/srv/corral.git` gives `corral`.
fn repo_name_of_common_dir(common: &Path) -> Option<String> {
    let common = common.canonicalize().ok()?;
    let base = common.file_name()?.to_string_lossy().into_owned();
    if base == ".git" {
        return name_of(common.parent()?);
    }
    Some(base.strip_suffix(".git").unwrap_or(&base).to_owned())
}

fn name_of(dir: &Path) -> Option<String> {
    Some(dir.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_plain_repository_gives_name_branch_and_worktree() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("corral");
        write(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        let mut cache = GitCache::default();
        let facts = cache.facts(repo.join("src/deep").to_str().unwrap());
        assert_eq!(facts.repo.as_deref(), Some("corral"));
        assert_eq!(facts.branch.as_deref(), Some("main"));
        assert_eq!(facts.worktree.as_deref(), repo.to_str());
    }

    #[test]
    fn a_checkout_is_seen_on_the_next_lookup() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        write(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
        let mut cache = GitCache::default();
        assert_eq!(
            cache.facts(repo.to_str().unwrap()).branch.as_deref(),
            Some("main")
        );
        // A checkout rewrites HEAD through a new file (a new inode), as git does.
        write(&repo.join(".git/HEAD.lock"), "ref: refs/heads/feature/x\n");
        std::fs::rename(repo.join(".git/HEAD.lock"), repo.join(".git/HEAD")).unwrap();
        assert_eq!(
            cache.facts(repo.to_str().unwrap()).branch.as_deref(),
            Some("feature/x")
        );
    }

    #[test]
    fn a_read_sees_one_head_per_repository_and_the_next_read_sees_a_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        write(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        let mut cache = GitCache::default();
        cache.next_read();
        let branch = |cache: &mut GitCache, dir: &str| cache.facts(dir).branch;
        let (top, sub) = (repo.to_str().unwrap(), repo.join("sub"));
        assert_eq!(branch(&mut cache, top).as_deref(), Some("main"));
        write(&repo.join(".git/HEAD.lock"), "ref: refs/heads/next\n");
        std::fs::rename(repo.join(".git/HEAD.lock"), repo.join(".git/HEAD")).unwrap();
        // The same read: every pane of the repository, in any of its directories, shows the
        // branch the read saw first.
        assert_eq!(branch(&mut cache, top).as_deref(), Some("main"));
        assert_eq!(
            branch(&mut cache, sub.to_str().unwrap()).as_deref(),
            Some("main")
        );
        cache.next_read();
        assert_eq!(branch(&mut cache, top).as_deref(), Some("next"));
        assert_eq!(
            branch(&mut cache, sub.to_str().unwrap()).as_deref(),
            Some("next")
        );
    }

    #[test]
    fn a_detached_head_has_no_branch() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            &tmp.path().join("r/.git/HEAD"),
            "3f786850e387550fdab836ed7e6dc881de23001b\n",
        );
        let facts = GitCache::default().facts(tmp.path().join("r").to_str().unwrap());
        assert_eq!(facts.repo.as_deref(), Some("r"));
        assert_eq!(facts.branch, None);
    }

    #[test]
    fn a_linked_worktree_is_named_after_its_main_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("corral");
        write(&main.join(".git/HEAD"), "ref: refs/heads/main\n");
        let admin = main.join(".git/worktrees/fix");
        write(&admin.join("HEAD"), "ref: refs/heads/fix-flaky\n");
        write(&admin.join("commondir"), "../..\n");
        let linked = tmp.path().join("corral-fix");
        write(
            &linked.join(".git"),
            &format!("gitdir: {}\n", admin.display()),
        );
        let facts = GitCache::default().facts(linked.to_str().unwrap());
        assert_eq!(facts.repo.as_deref(), Some("corral"));
        assert_eq!(facts.branch.as_deref(), Some("fix-flaky"));
        assert_eq!(facts.worktree.as_deref(), linked.to_str());
    }

    #[test]
    fn outside_a_repository_everything_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            GitCache::default().facts(tmp.path().to_str().unwrap()),
            RepoFacts::default()
        );
        assert_eq!(GitCache::default().facts(""), RepoFacts::default());
    }
}
