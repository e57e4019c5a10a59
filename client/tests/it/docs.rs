//! What `docs/remote.md` and the README's "Watch your agents from anywhere" tell a person to type
//! works: every `toml` block is a config `corral-remote` loads, every `ndjson` line a headless
//! command it takes, and every `sh` line is run (`ssh-keygen`, `corral device …` in a scratch
//! home) or parsed as `corral-remote` parses its command line and resolves its config. A line of
//! a program this test does not know fails it, so a new command cannot slip in unchecked.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::support::{command, corral};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The fenced blocks of `text`: their info string and lines.
fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(_), Some(block)) => found.push(block),
            (Some(info), None) => open = Some((info.trim().to_owned(), Vec::new())),
            (None, Some(mut block)) => {
                block.1.push(line.to_owned());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a fence is not closed");
    found
}

/// The words of a shell line, without its comment and redirections (`>> FILE`, `< FILE`);
/// single quotes group.
fn words(line: &str) -> Vec<String> {
    let line = line.split("  #").next().unwrap();
    let line = line.split(" >> ").next().unwrap();
    let line = line.split(" < ").next().unwrap();
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Checks every block of `text` (`what` names it in failures): its config examples load, its
/// headless lines parse, its shell lines run or parse, in a scratch home under `dir`.
fn check(what: &str, text: &str, dir: &Path) -> usize {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let blocks = blocks(text);
    let example = blocks
        .iter()
        .find(|(info, _)| info == "toml")
        .map(|(_, lines)| lines.join("\n"))
        .unwrap_or_else(|| panic!("{what} has no config example"));
    let mut checked = 0;
    for (info, lines) in &blocks {
        match info.as_str() {
            "toml" => {
                let config = client::config::parse(&lines.join("\n"))
                    .unwrap_or_else(|err| panic!("{what}'s config example: {err}"));
                assert!(!config.hosts.is_empty(), "{what}: a config without hosts");
                checked += 1;
            }
            "ndjson" => {
                for line in lines {
                    client::headless::parse(line)
                        .unwrap_or_else(|err| panic!("{what}: {line}: {err}"));
                    checked += 1;
                }
            }
            "sh" => {
                for line in lines.iter().filter(|l| !l.trim().is_empty()) {
                    shell_line(what, line, &words(line), &example, dir);
                    checked += 1;
                }
            }
            // A screen, an output: shown, not typed.
            "" => {}
            other => panic!("{what}: a ```{other} block this test does not check"),
        }
    }
    checked
}

fn shell_line(what: &str, line: &str, words: &[String], example: &str, dir: &Path) {
    let home = dir.join("home");
    let in_home = |word: &String| match word.strip_prefix("~/") {
        Some(rest) => home.join(rest).to_string_lossy().into_owned(),
        None => word.clone(),
    };
    match words[0].as_str() {
        "corral-remote" => {
            let cli = client::cli::Cli::try_parse_from(words)
                .unwrap_or_else(|err| panic!("{what}: {line}: {err}"));
            let default = client::config::default_path(None, home.to_str());
            let config = client::config::resolve(&cli.flags(), default, |_| Ok(example.into()))
                .unwrap_or_else(|err| panic!("{what}: {line}: {err}"));
            assert!(!config.hosts.is_empty(), "{what}: {line}");
        }
        "ssh-keygen" => {
            let args: Vec<String> = words[1..].iter().map(in_home).collect();
            let out = command("ssh-keygen", dir).args(&args).output().unwrap();
            assert!(
                out.status.success(),
                "{what}: {line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // The host side is given the public key as it is named there.
            let key = home.join(".ssh/corral-remote.pub");
            std::fs::copy(&key, dir.join("corral-remote.pub")).unwrap();
        }
        "corral" => {
            let out = command(corral(), dir)
                .current_dir(dir)
                .args(&words[1..])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{what}: {line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if words[1..3] == ["device", "add"] {
                let printed = String::from_utf8(out.stdout).unwrap();
                assert!(
                    printed.starts_with("command=\"")
                        && printed.contains(" serve --stdio --device SHA256:")
                        && printed.contains(",restrict ssh-ed25519 "),
                    "{what}: {line} printed {printed}"
                );
            }
        }
        "cargo" => {
            let [install, locked, path, package] = &words[1..] else {
                panic!("{what}: {line}: not `cargo install --locked --path DIR`")
            };
            assert_eq!([install, locked, path], ["install", "--locked", "--path"]);
            let manifest = std::fs::read_to_string(root().join(package).join("Cargo.toml"))
                .unwrap_or_else(|err| panic!("{what}: {line}: {err}"));
            let manifest: toml::Table = manifest.parse().unwrap();
            let bins = manifest["bin"].as_array().unwrap();
            assert!(
                bins.iter()
                    .any(|b| b["name"].as_str() == Some("corral-remote")),
                "{what}: {line}: {package} has no corral-remote"
            );
        }
        other => panic!("{what}: {line}: a command of `{other}`, which this test does not check"),
    }
}

#[test]
fn every_command_and_example_of_the_docs_works() {
    let tmp = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(root().join("docs/remote.md")).unwrap();
    let checked = check("docs/remote.md", &page, tmp.path());
    assert!(
        checked >= 20,
        "only {checked} commands and examples checked"
    );

    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, section) = readme
        .split_once("\n## Watch your agents from anywhere\n")
        .expect("the README's section `Watch your agents from anywhere`");
    let section = section.split("\n## ").next().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let checked = check("the README", section, tmp.path());
    assert!(checked >= 2, "only {checked} commands and examples checked");
}

#[test]
fn the_shell_words_are_read_as_sh_reads_them() {
    assert_eq!(
        words("ssh-keygen -N '' -f ~/.ssh/k   # once"),
        ["ssh-keygen", "-N", "", "-f", "~/.ssh/k"]
    );
    assert_eq!(
        words("corral device add a --key a.pub >> ~/.ssh/authorized_keys"),
        ["corral", "device", "add", "a", "--key", "a.pub"]
    );
    assert_eq!(
        words("corral-remote --ndjson < c.ndjson"),
        ["corral-remote", "--ndjson"]
    );
}
