//! The kit's data a run reads: the requirement ledger, every golden session (through the kit's
//! one loader), the two frame schemas, the config schema and the schemas of the local documents
//! the sessions name; a session naming a requirement the ledger lacks, or a document with no
//! schema, is refused, and every other disagreement between them is a warning. It comes from a
//! directory laid out as a checkout: `--kit DIR`, the checkout `cargo xtask` runs in, or the copy
//! embedded in `corral-conformance` written out into the run's work dir.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::Ledger;
use golden::session::{self, Session};
use golden::validate::{DocumentSchema, FrameSchema};

use super::cli::Options;
use super::{Launcher, ledger};

/// The directory a run loads the kit from: `--kit`, else the checkout, else the embedded copy
/// written out under `work`. Blessing rewrites session files, so it needs a kit on disk.
pub fn place(options: &Options, launcher: &Launcher, work: &Path) -> anyhow::Result<PathBuf> {
    let root = match (&options.kit, launcher) {
        (Some(dir), _) => std::path::absolute(dir)
            .with_context(|| format!("resolving --kit {}", dir.display()))?,
        (None, Launcher::Checkout { root }) => root.clone(),
        (None, Launcher::Installed) => {
            if options.bless {
                bail!(
                    "--bless rewrites session files: give the checkout whose sessions to rewrite \
                     with --kit DIR"
                );
            }
            let Some(embedded) = crate::embedded::files() else {
                bail!(
                    "this runner was built without its kit (the conformance crate's `embed` \
                     feature): give a checkout with --kit DIR"
                );
            };
            let dir = work.join("kit");
            golden::kit::write(&dir, embedded)
                .map_err(|err| anyhow::anyhow!("writing out the embedded kit: {err}"))?;
            dir
        }
    };
    Ok(root)
}

/// The ledger, the sessions and the frame schemas.
#[derive(Debug)]
pub struct Kit {
    /// `golden/requirements.toml`.
    pub ledger: Ledger,
    /// `golden/sessions/*.ndjson`, in file-name order.
    pub sessions: Vec<Session>,
    /// `schema/json/requests.schema.json`.
    pub requests: FrameSchema,
    /// `schema/json/responses.schema.json`.
    pub responses: FrameSchema,
    /// `schema/json/config.schema.json`: a header's config is checked against it.
    pub config: DocumentSchema,
    /// `schema/json/<name>.schema.json` for every document a `run` or `file` step names.
    pub documents: BTreeMap<String, DocumentSchema>,
}

impl Kit {
    /// Loads it from the checkout (or written-out kit) at `root`; every session that does not
    /// load is named.
    pub fn load(root: &Path) -> anyhow::Result<Kit> {
        golden::kit::list(root).map_err(|err| {
            anyhow::anyhow!(
                "{} is not a whole kit ({err}): a kit is laid out as a corral checkout",
                root.display()
            )
        })?;
        let golden = root.join("golden");
        let schemas = root.join("schema/json");
        let frames = |file| FrameSchema::load(&schemas, file);
        let sessions = load_sessions(&golden.join("sessions"))?;
        let mut documents = BTreeMap::new();
        for session in &sessions {
            for name in session.documents() {
                if !documents.contains_key(name) {
                    let schema = DocumentSchema::load(&schemas, &format!("{name}.schema.json"))
                        .with_context(|| {
                            format!("{} names the document `{name}`", session.path.display())
                        })?;
                    documents.insert(name.to_owned(), schema);
                }
            }
        }
        Ok(Kit {
            ledger: golden::ledger::load(&golden.join("requirements.toml"))?,
            sessions,
            requests: frames("requests.schema.json")?,
            responses: frames("responses.schema.json")?,
            config: DocumentSchema::load(&schemas, "config.schema.json")?,
            documents,
        })
    }

    /// Every frame variant of the generated schemas.
    pub fn variants(&self) -> Vec<String> {
        ledger::variants(&self.requests, &self.responses)
    }

    /// Fails when a session names a requirement the ledger does not have.
    pub fn refuse_unknown_requirements(&self) -> anyhow::Result<()> {
        let refused: Vec<String> = self
            .sessions
            .iter()
            .filter_map(|session| {
                let unknown = ledger::unknown_ids(&self.ledger, session);
                (!unknown.is_empty()).then(|| {
                    format!(
                        "{}: names requirements the ledger does not have: {}",
                        session.path.display(),
                        unknown.join(", ")
                    )
                })
            })
            .collect();
        if !refused.is_empty() {
            bail!("{}", refused.join("\n"));
        }
        Ok(())
    }

    /// Every disagreement between the ledger and the sessions, and every frame variant neither
    /// a session nor a pending requirement stands for, one line each.
    pub fn warnings(&self) -> Vec<String> {
        let variants = self.variants();
        let mut warnings = ledger::check(&self.ledger, &self.sessions, &variants);
        warnings.extend(
            ledger::uncovered(&variants, &self.sessions, &self.ledger)
                .into_iter()
                .map(|v| {
                    format!(
                        "frame variant `{v}` is in no golden session and no pending requirement"
                    )
                }),
        );
        warnings
    }
}

fn load_sessions(dir: &Path) -> anyhow::Result<Vec<Session>> {
    let mut sessions = Vec::new();
    let mut errors = Vec::new();
    for path in session::files(dir)? {
        match session::load(&path) {
            Ok(session) => sessions.push(session),
            Err(err) => errors.push(err.to_string()),
        }
    }
    if !errors.is_empty() {
        bail!("golden sessions that cannot be run:\n{}", errors.join("\n"));
    }
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use golden::Step;
    use golden::pattern;

    use super::*;
    use crate::checkout as workspace_root;

    #[test]
    fn every_golden_session_loads_and_agrees_with_the_ledger() {
        let kit = Kit::load(&workspace_root()).unwrap();
        kit.refuse_unknown_requirements().unwrap();
        let problems = ledger::check(&kit.ledger, &kit.sessions, &kit.variants());
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_frame_variant_appears_in_a_golden_session_or_is_pending() {
        let kit = Kit::load(&workspace_root()).unwrap();
        let uncovered = ledger::uncovered(&kit.variants(), &kit.sessions, &kit.ledger);
        assert!(
            uncovered.is_empty(),
            "frame variants in no golden session and in no pending requirement's `frames`: {uncovered:?}"
        );
    }

    #[test]
    fn every_concrete_golden_send_validates_against_the_request_schema() {
        let kit = Kit::load(&workspace_root()).unwrap();
        for session in &kit.sessions {
            for located in &session.steps {
                if let Step::Send(frame) = &located.step.step
                    && pattern::is_concrete(frame)
                {
                    let checked = kit.requests.validate(frame);
                    assert!(
                        checked.is_ok(),
                        "{}:{}: {checked:?}",
                        session.path.display(),
                        located.line
                    );
                }
            }
        }
    }

    #[test]
    #[cfg(feature = "embed")]
    fn the_embedded_kit_written_out_loads_as_the_checkout_does() {
        let work = tempfile::tempdir().unwrap();
        let options = super::super::cli::parse(&[], &Launcher::Installed).unwrap();
        let super::super::cli::Invocation::Run(options) = options else {
            panic!("a run");
        };
        let root = place(&options, &Launcher::Installed, work.path()).unwrap();
        assert_eq!(root, work.path().join("kit"));
        let embedded = Kit::load(&root).unwrap();
        let checkout = Kit::load(&workspace_root()).unwrap();
        let cases = |kit: &Kit| -> Vec<String> {
            kit.sessions.iter().map(|s| s.case().to_owned()).collect()
        };
        assert_eq!(cases(&embedded), cases(&checkout));
        assert_eq!(
            embedded.ledger.requirements.len(),
            checkout.ledger.requirements.len()
        );
    }

    #[test]
    fn blessing_needs_a_kit_on_disk() {
        let work = tempfile::tempdir().unwrap();
        let args = ["--bless".to_owned()];
        let super::super::cli::Invocation::Run(options) =
            super::super::cli::parse(&args, &Launcher::Installed).unwrap()
        else {
            panic!("a run");
        };
        let err = place(&options, &Launcher::Installed, work.path()).unwrap_err();
        assert!(err.to_string().contains("--kit DIR"), "{err}");
        let mut options = options;
        options.kit = Some(workspace_root());
        assert_eq!(
            place(&options, &Launcher::Installed, work.path()).unwrap(),
            workspace_root()
        );
    }

    #[test]
    fn a_directory_that_is_no_kit_is_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let err = Kit::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is not a whole kit"), "{err}");
        assert!(err.contains("golden/requirements.toml is missing"), "{err}");
    }
}
