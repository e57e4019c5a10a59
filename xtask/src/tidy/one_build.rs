//! The README's two commands compile each workspace crate once: `cargo xtask conformance` (xtask,
//! then the kit's binaries) and `cargo test --workspace` must resolve every crate to one feature
//! set, or cargo compiles a crate (and everything above it) again for the second command. A new
//! dependency that turns on a feature of a shared crate in one of the three selections only
//! breaks that; the check says which crate and which features.
//!
//! Each selection is read from what builds it: `cargo xtask` from its alias in
//! `.cargo/config.toml`, the kit's binaries from the kit's own `cargo build` arguments
//! ([`conformance::BUILD_ARGS`]), `cargo test --workspace` from the README's command.
//! A selection that resolves to nothing, or to one crate two ways (compiled twice within one
//! command), is a problem too: a check that compares nothing must not pass.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};

/// One command of the README's as `cargo tree` arguments: what it is called, and the packages,
/// features and dependency kinds it builds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The command, as the README writes it.
    pub name: &'static str,
    /// `cargo tree` arguments.
    pub args: Vec<String>,
}

/// The three selections the README's commands build.
pub fn selections(root: &Path) -> anyhow::Result<Vec<Selection>> {
    Ok(vec![
        Selection {
            name: "cargo xtask",
            args: tree_args(&xtask_alias(root)?)?,
        },
        Selection {
            name: "the kit's binaries",
            args: tree_args(conformance::BUILD_ARGS)?,
        },
        Selection {
            name: "cargo test --workspace",
            args: ["--workspace", "-e", "normal,build,dev"]
                .map(str::to_owned)
                .to_vec(),
        },
    ])
}

/// The arguments `cargo xtask` stands for (`run --package xtask --`), from `.cargo/config.toml`.
fn xtask_alias(root: &Path) -> anyhow::Result<Vec<String>> {
    let path = root.join(".cargo/config.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let config: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    match config.get("alias").and_then(|alias| alias.get("xtask")) {
        Some(toml::Value::String(line)) => Ok(line.split_whitespace().map(str::to_owned).collect()),
        Some(toml::Value::Array(words)) => words
            .iter()
            .map(|word| word.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .with_context(|| format!("{}: alias.xtask holds a non-string", path.display())),
        _ => bail!("{}: no alias.xtask", path.display()),
    }
}

/// The `cargo tree` arguments that select what `cargo build` (or `cargo run`) with `cargo_args`
/// builds: its packages and features, normal and build dependencies (neither builds dev ones).
/// An argument it cannot place is an error, never passed over: it may change the resolution.
pub fn tree_args(cargo_args: &[impl AsRef<str>]) -> anyhow::Result<Vec<String>> {
    let mut args = cargo_args.iter().map(AsRef::as_ref);
    let mut out = Vec::new();
    match args.next() {
        Some("build" | "run") => {}
        other => bail!("not a `cargo build` or `cargo run` command line: starts {other:?}"),
    }
    let mut packages = false;
    while let Some(arg) = args.next() {
        match arg {
            // What follows goes to the program `cargo run` starts.
            "--" => break,
            // Which of the packages' targets: not which crates, nor their features.
            "--bins" | "--lib" | "--locked" | "--offline" | "--frozen" | "--quiet" | "-q" => {}
            "-p" | "--package" | "--features" | "-F" => {
                let value = args
                    .next()
                    .with_context(|| format!("`{arg}` without its value"))?;
                packages |= matches!(arg, "-p" | "--package");
                out.extend([arg.to_owned(), value.to_owned()]);
            }
            "--workspace" => {
                packages = true;
                out.push(arg.to_owned());
            }
            "--no-default-features" | "--all-features" => out.push(arg.to_owned()),
            other => bail!(
                "cannot tell how the cargo argument `{other}` changes what is built; teach \
                 xtask's one_build::tree_args"
            ),
        }
    }
    if !packages {
        bail!(
            "names no package (`-p`) nor `--workspace`: which crates it builds depends on where \
             it runs"
        );
    }
    out.extend(["-e".to_owned(), "normal,build".to_owned()]);
    Ok(out)
}

/// What one selection resolves: `name version` → its features (`a,b`).
pub type Resolution = BTreeMap<String, String>;

/// Reads `cargo tree --prefix none -f '{p}|{f}'` output: every crate with its features. A crate
/// listed twice with the same features is one crate (`(*)` marks a repeat); listed with other
/// features it is compiled twice within the one command, and an error says so. No crate at all,
/// a line that is not `{p}|{f}`, or a package `args` names (`-p`) missing is an error too.
pub fn parse_tree(args: &[String], stdout: &str) -> Result<Resolution, String> {
    let mut crates = Resolution::new();
    for line in stdout.lines().filter(|line| !line.trim().is_empty()) {
        let Some((package, features)) = line.trim_end_matches(" (*)").split_once('|') else {
            return Err(format!(
                "`cargo tree` printed a line that is not `{{p}}|{{f}}`: {line}"
            ));
        };
        let package = package.trim_end_matches(" (proc-macro)");
        match crates.get(package) {
            Some(seen) if seen != features => {
                return Err(format!(
                    "{package} resolves two ways, [{seen}] and [{features}], so it compiles twice"
                ));
            }
            Some(_) => {}
            None => {
                crates.insert(package.to_owned(), features.to_owned());
            }
        }
    }
    if crates.is_empty() {
        return Err("`cargo tree` resolved no crate: there is nothing to compare".to_owned());
    }
    let named = args
        .windows(2)
        .filter(|pair| pair[0] == "-p" || pair[0] == "--package")
        .map(|pair| &pair[1]);
    for package in named {
        let prefix = format!("{package} v");
        if !crates.keys().any(|name| name.starts_with(&prefix)) {
            return Err(format!(
                "the package {package} it names is not in what it resolved"
            ));
        }
    }
    Ok(crates)
}

/// Crates two selections both build with different features, one readable line each.
pub fn compare(resolved: &[(&str, Resolution)]) -> Vec<String> {
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
    out
}

/// `cargo tree` for one selection: its stdout.
fn tree(root: &Path, args: &[String]) -> anyhow::Result<String> {
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
        .args(args)
        .output()?;
    if !output.status.success() {
        bail!(
            "cargo tree {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Every way the README's two commands would compile a crate twice, one readable line each:
/// a crate two selections resolve differently, or one selection resolves two ways, or a
/// selection that resolves nothing. `cargo xtask tidy` reports them.
pub fn problems(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut resolved = Vec::new();
    for selection in selections(root)? {
        let stdout = tree(root, &selection.args)?;
        match parse_tree(&selection.args, &stdout) {
            Ok(crates) => resolved.push((selection.name, crates)),
            Err(why) => out.push(format!(
                "{} (cargo tree {}): {why}",
                selection.name,
                selection.args.join(" ")
            )),
        }
    }
    out.extend(compare(&resolved));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn the_readmes_two_commands_resolve_every_crate_alike() {
        let root = crate::workspace_root();
        let problems = problems(&root).unwrap();
        assert!(
            problems.is_empty(),
            "a crate compiles twice for the README's two commands:\n{}",
            problems.join("\n")
        );
    }

    /// The kit's selection is its own build's packages; xtask's, its alias's.
    #[test]
    fn the_selections_come_from_what_builds_them() {
        let selections = selections(&crate::workspace_root()).unwrap();
        let shown: Vec<(&str, String)> = selections
            .iter()
            .map(|selection| (selection.name, selection.args.join(" ")))
            .collect();
        assert_eq!(
            shown,
            [
                ("cargo xtask", "--package xtask -e normal,build".to_owned()),
                (
                    "the kit's binaries",
                    "-p conformance -p reference-host -p client -e normal,build".to_owned()
                ),
                (
                    "cargo test --workspace",
                    "--workspace -e normal,build,dev".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn build_arguments_become_tree_arguments_or_an_error() {
        assert_eq!(
            tree_args(&[
                "build",
                "--bins",
                "-p",
                "a",
                "--features",
                "x",
                "--no-default-features"
            ])
            .unwrap(),
            args(&[
                "-p",
                "a",
                "--features",
                "x",
                "--no-default-features",
                "-e",
                "normal,build"
            ])
        );
        assert_eq!(
            tree_args(&["run", "--package", "xtask", "--", "--release"]).unwrap(),
            args(&["--package", "xtask", "-e", "normal,build"])
        );
        let err = |line: &[&str]| tree_args(line).unwrap_err().to_string();
        assert!(err(&["build", "-p", "a", "--target", "x"]).contains("`--target`"));
        assert!(err(&["build", "-p"]).contains("`-p` without its value"));
        assert!(err(&["build", "--bins"]).starts_with("names no package"));
        assert!(err(&["test", "-p", "a"]).starts_with("not a `cargo build`"));
    }

    #[test]
    fn a_tree_reads_as_every_crate_once_with_its_features() {
        let stdout = "\
kit v0.1.0 (/w/kit)|
serde v1.0.0|default,derive,std
serde_derive v1.0.0 (proc-macro)|default
serde v1.0.0|default,derive,std (*)
unicode-ident v1.0.0|
unicode-ident v1.0.0|

rand v0.8.5|std
rand v0.9.0|alloc
";
        let crates = parse_tree(&args(&["-p", "kit"]), stdout).unwrap();
        let listed: Vec<(&str, &str)> = crates
            .iter()
            .map(|(name, features)| (name.as_str(), features.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("kit v0.1.0 (/w/kit)", ""),
                ("rand v0.8.5", "std"),
                ("rand v0.9.0", "alloc"),
                ("serde v1.0.0", "default,derive,std"),
                ("serde_derive v1.0.0", "default"),
                ("unicode-ident v1.0.0", ""),
            ]
        );
    }

    #[test]
    fn a_crate_resolved_two_ways_in_one_selection_is_a_problem() {
        let stdout = "kit v0.1.0|\nserde v1.0.0|std\nsyn v2.0.0|full\nserde v1.0.0|derive,std\n";
        assert_eq!(
            parse_tree(&[], stdout).unwrap_err(),
            "serde v1.0.0 resolves two ways, [std] and [derive,std], so it compiles twice"
        );
        // Two versions are two crates, not one resolved twice.
        assert!(parse_tree(&[], "rand v0.8.5|std\nrand v0.9.0|alloc\n").is_ok());
    }

    #[test]
    fn a_selection_that_resolves_nothing_is_a_problem() {
        for stdout in ["", "\n \n"] {
            assert_eq!(
                parse_tree(&args(&["-p", "kit"]), stdout).unwrap_err(),
                "`cargo tree` resolved no crate: there is nothing to compare"
            );
        }
        assert_eq!(
            parse_tree(
                &args(&["-p", "kit", "-p", "host"]),
                "kit v0.1.0|\nserde v1.0.0|\n"
            )
            .unwrap_err(),
            "the package host it names is not in what it resolved"
        );
        assert_eq!(
            parse_tree(&[], "kit v0.1.0\n").unwrap_err(),
            "`cargo tree` printed a line that is not `{p}|{f}`: kit v0.1.0"
        );
    }

    #[test]
    fn crates_two_selections_resolve_differently_are_named() {
        let tree = |stdout: &str| parse_tree(&[], stdout).unwrap();
        let resolved = [
            ("xtask", tree("serde v1.0.0|std\nonly v1.0.0|a\n")),
            ("kit", tree("serde v1.0.0|derive,std\nonly v2.0.0|b\n")),
            ("test", tree("serde v1.0.0|std\n")),
        ];
        assert_eq!(
            compare(&resolved),
            [
                "serde v1.0.0: xtask [std] / kit [derive,std]",
                "serde v1.0.0: kit [derive,std] / test [std]",
            ]
        );
        assert!(compare(&resolved[..1]).is_empty());
    }
}
