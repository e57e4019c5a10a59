//! The crate graph's invariants, as ARCHITECTURE.md states them ("Architecture invariant: ..."),
//! checked from `cargo metadata`: which of the workspace's own crates each crate may depend on
//! (normal and build dependencies; a dev-dependency only serves its tests, but a product never
//! reaches `test-support` or `xtask` at all), and, for the crates that must stay small, every
//! dependency they may have. A crate with no rule is a problem too: a new crate states its
//! invariant before it lands.

use std::path::Path;

use anyhow::bail;
use serde_json::Value;

/// How a crate depends on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[dependencies]`.
    Normal,
    /// `[dev-dependencies]`.
    Dev,
    /// `[build-dependencies]`.
    Build,
}

/// One declared dependency of a workspace crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The crate that declares it.
    pub from: String,
    /// The crate it names.
    pub to: String,
    /// Whether `to` is a crate of this workspace.
    pub workspace: bool,
    /// How.
    pub kind: Kind,
}

/// What one crate may depend on.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The crate.
    pub krate: &'static str,
    /// The workspace crates its normal and build dependencies may be.
    pub may: &'static [&'static str],
    /// When set, every normal dependency it may have, workspace or not.
    pub only: Option<&'static [&'static str]>,
    /// Why, as ARCHITECTURE.md says it.
    pub why: &'static str,
}

/// The invariants. Every workspace crate has one.
pub const RULES: &[Rule] = &[
    Rule {
        krate: "schema",
        may: &[],
        only: Some(&["serde", "serde_json", "schemars"]),
        why: "the API boundary does no I/O and depends on no crate of ours",
    },
    Rule {
        krate: "golden",
        may: &["schema", "stdx"],
        only: None,
        why: "the kit's formats know the wire's types and nothing of the host, the simulator or the client",
    },
    Rule {
        krate: "reference-host",
        may: &["schema", "stdx"],
        only: None,
        why: "the host is judged by the kit, so it never reaches the kit, the simulator or the client (stdx holds chores, never protocol logic)",
    },
    Rule {
        krate: "simulator",
        may: &["schema", "golden", "stdx"],
        only: None,
        why: "the simulator plays agents and tmux; it never reaches the host it stands in front of, the kit or the client",
    },
    Rule {
        krate: "conformance",
        may: &["schema", "golden", "simulator", "stdx"],
        only: None,
        why: "the kit judges any host from outside: it never links the reference host or the client",
    },
    Rule {
        krate: "client-core",
        may: &["schema"],
        only: Some(&["schema"]),
        why: "the client's core is the protocol without I/O: schema alone",
    },
    Rule {
        krate: "client",
        may: &["schema", "client-core", "stdx"],
        only: None,
        why: "the reference client speaks the protocol; it never links the host or the kit",
    },
    Rule {
        krate: "stdx",
        may: &[],
        only: None,
        why: "chores every binary needs, and nothing the protocol specifies",
    },
    Rule {
        krate: "test-support",
        may: &["stdx"],
        only: None,
        why: "what tests share; only tests depend on it",
    },
    Rule {
        krate: "xtask",
        may: &[
            "schema",
            "golden",
            "reference-host",
            "simulator",
            "conformance",
            "client",
            "client-core",
            "stdx",
        ],
        only: None,
        why: "project automation may use every product",
    },
];

/// Every declared dependency of every workspace crate, from `cargo metadata --no-deps`.
pub fn dependencies(metadata: &Value) -> Result<Vec<Dependency>, String> {
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata has no `packages`")?;
    let mut out = Vec::new();
    for package in packages {
        let from = package["name"].as_str().ok_or("a package has no name")?;
        let deps = package["dependencies"]
            .as_array()
            .ok_or_else(|| format!("{from} has no `dependencies`"))?;
        for dep in deps {
            let to = dep["name"]
                .as_str()
                .ok_or_else(|| format!("a dependency of {from} has no name"))?;
            let kind = match dep["kind"].as_str() {
                None => Kind::Normal,
                Some("dev") => Kind::Dev,
                Some("build") => Kind::Build,
                Some(other) => return Err(format!("{from} → {to}: unknown kind {other:?}")),
            };
            out.push(Dependency {
                from: from.to_owned(),
                to: to.to_owned(),
                workspace: dep["path"].is_string(),
                kind,
            });
        }
    }
    Ok(out)
}

/// The workspace's crates, from `cargo metadata --no-deps`.
pub fn members(metadata: &Value) -> Vec<String> {
    metadata["packages"]
        .as_array()
        .map(|packages| {
            packages
                .iter()
                .filter_map(|p| p["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every edge that breaks a rule, one readable line each.
pub fn problems(members: &[String], deps: &[Dependency], rules: &[Rule]) -> Vec<String> {
    let mut out = Vec::new();
    for member in members {
        if !rules.iter().any(|r| r.krate == member) {
            out.push(format!(
                "crate {member} has no architecture rule: say in ARCHITECTURE.md and in \
                 xtask/src/tidy/crates.rs what it may depend on"
            ));
        }
    }
    for dep in deps {
        let Some(rule) = rules.iter().find(|r| r.krate == dep.from) else {
            continue;
        };
        let product_edge = dep.kind != Kind::Dev;
        if dep.workspace
            && ["test-support", "xtask"].contains(&dep.to.as_str())
            && dep.kind != Kind::Dev
        {
            out.push(format!(
                "{} depends on {} ({:?}): only tests may use it",
                dep.from, dep.to, dep.kind
            ));
            continue;
        }
        if dep.workspace && product_edge && !rule.may.contains(&dep.to.as_str()) {
            out.push(format!(
                "{} may not depend on {}: {} (allowed: {})",
                dep.from,
                dep.to,
                rule.why,
                if rule.may.is_empty() {
                    "none of ours".to_owned()
                } else {
                    rule.may.join(", ")
                }
            ));
        }
        if let Some(only) = rule.only
            && dep.kind == Kind::Normal
            && !only.contains(&dep.to.as_str())
        {
            out.push(format!(
                "{} may not depend on {}: {} (it may depend on {} only)",
                dep.from,
                dep.to,
                rule.why,
                only.join(", ")
            ));
        }
    }
    out
}

/// The problems of the workspace at `root`.
pub fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = crate::bench::process::command(cargo)
        .current_dir(root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--locked",
            "--offline",
        ])
        .output()?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)?;
    let deps = dependencies(&metadata).map_err(anyhow::Error::msg)?;
    Ok(problems(&members(&metadata), &deps, RULES))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up package: its name, and each dependency's name, kind and whether it is ours.
    type Package<'a> = (&'a str, &'a [(&'a str, Option<&'a str>, bool)]);

    /// `cargo metadata --no-deps` for these packages.
    fn metadata(packages: &[Package<'_>]) -> Value {
        let packages: Vec<Value> = packages
            .iter()
            .map(|(name, deps)| {
                let deps: Vec<Value> = deps
                    .iter()
                    .map(|(dep, kind, ours)| {
                        let mut d = serde_json::json!({"name": dep, "kind": kind});
                        if *ours {
                            d["path"] = Value::from(format!("/w/{dep}"));
                        }
                        d
                    })
                    .collect();
                serde_json::json!({"name": name, "dependencies": deps})
            })
            .collect();
        serde_json::json!({ "packages": packages })
    }

    fn check_made_up(packages: &[Package<'_>]) -> Vec<String> {
        let metadata = metadata(packages);
        problems(
            &members(&metadata),
            &dependencies(&metadata).unwrap(),
            RULES,
        )
    }

    #[test]
    fn the_workspace_keeps_its_crate_invariants() {
        let root = crate::workspace_root();
        let problems = check(&root).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn an_edge_that_breaks_an_invariant_is_named_with_its_reason() {
        let broken = check_made_up(&[
            ("schema", &[("serde", None, false), ("tokio", None, false)]),
            ("conformance", &[("reference-host", None, true)]),
            (
                "client-core",
                &[("schema", None, true), ("serde_json", Some("dev"), false)],
            ),
            (
                "client",
                &[("client-core", None, true), ("test-support", None, true)],
            ),
            ("golden", &[("test-support", Some("dev"), true)]),
        ]);
        assert_eq!(
            broken,
            [
                "schema may not depend on tokio: the API boundary does no I/O and depends on no \
                 crate of ours (it may depend on serde, serde_json, schemars only)",
                "conformance may not depend on reference-host: the kit judges any host from \
                 outside: it never links the reference host or the client (allowed: schema, \
                 golden, simulator, stdx)",
                "client depends on test-support (Normal): only tests may use it",
            ]
        );
    }

    #[test]
    fn a_crate_without_a_rule_is_a_problem() {
        assert_eq!(
            check_made_up(&[("newcomer", &[])]),
            [
                "crate newcomer has no architecture rule: say in ARCHITECTURE.md and in \
              xtask/src/tidy/crates.rs what it may depend on"
            ]
        );
    }

    #[test]
    fn a_dev_dependency_serves_tests_only_and_unknown_kinds_are_refused() {
        assert!(check_made_up(&[("reference-host", &[("golden", Some("dev"), true)])]).is_empty());
        assert!(
            check_made_up(&[("reference-host", &[("golden", Some("build"), true)])])[0]
                .starts_with("reference-host may not depend on golden")
        );
        let odd = metadata(&[("schema", &[("serde", Some("weird"), false)])]);
        assert_eq!(
            dependencies(&odd).unwrap_err(),
            "schema → serde: unknown kind \"weird\""
        );
    }
}
