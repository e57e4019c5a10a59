//! Loading golden sessions: every line valid JSON in canonical form, a header then steps, patterns
//! that parse, captures referenced only after they are bound, and concrete frames that decode and
//! re-encode byte-identically through the `schema` types.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use golden::pattern::{self, Use};
use golden::{Backend, SessionHeader, Step, StepLine};
use schema::{Request, Response, decode_line, encode_line};
use serde::Serialize;
use serde_json::Value;

/// Capture names the runner binds before the first step.
pub const PREBOUND: &[&str] = &["socket_path", "sim_dir"];

/// Prefix of the pre-bound capture naming each fixture pane's id (`pane.worker` = `%1`).
pub const PANE_PREFIX: &str = "pane.";

/// The connection a step acts on when it names none.
pub const MAIN_CONN: &str = "main";

/// A loaded session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The file, as given.
    pub path: PathBuf,
    /// The first line.
    pub header: SessionHeader,
    /// The steps with their 1-based line numbers.
    pub steps: Vec<Located>,
    /// The file's lines, for rewriting (bless).
    pub lines: Vec<String>,
}

/// A step and where it is written.
#[derive(Debug, Clone)]
pub struct Located {
    pub line: usize,
    pub step: StepLine,
}

impl Located {
    /// The connection the step acts on.
    pub fn conn(&self) -> &str {
        self.step.conn.as_deref().unwrap_or(MAIN_CONN)
    }
}

impl Session {
    /// Whether the case runs on a backend.
    pub fn runs_on(&self, backend: Backend) -> bool {
        self.header.backends.contains(&backend)
    }
}

/// The canonical text of a line: compact JSON of the kit's own types.
pub fn canonical<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("golden lines always encode")
}

/// Loads and checks one session file.
pub fn load(path: &Path) -> Result<Session, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    parse(path, &text)
}

/// Checks one session's text; every error names the file and line.
pub fn parse(path: &Path, text: &str) -> Result<Session, String> {
    let shown = path.display();
    if !text.ends_with('\n') {
        return Err(format!("{shown}: the last line has no `\\n`"));
    }
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(first) = lines.first() else {
        return Err(format!("{shown}: empty session"));
    };
    let at = |line: usize, message: String| format!("{shown}:{line}: {message}");
    let header: SessionHeader =
        serde_json::from_str(first).map_err(|err| at(1, format!("not a session header: {err}")))?;
    if canonical(&header) != *first {
        return Err(at(
            1,
            format!("not in canonical form; write it as\n{}", canonical(&header)),
        ));
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if header.case != stem {
        return Err(at(
            1,
            format!(
                "case `{}` must match the file name `{stem}.ndjson`",
                header.case
            ),
        ));
    }
    if header.requirements.is_empty() {
        return Err(at(1, "a case names at least one requirement".into()));
    }
    if header.backends.is_empty() {
        return Err(at(1, "a case runs on at least one backend".into()));
    }
    if header.backends.len() < Backend::ALL.len() && header.backends_reason.is_none() {
        return Err(at(
            1,
            "a case that skips a backend says why in `backends_reason`".into(),
        ));
    }
    let mut bound: BTreeSet<String> = PREBOUND.iter().map(|s| (*s).to_owned()).collect();
    let mut steps = Vec::new();
    for (index, text) in lines.iter().enumerate().skip(1) {
        let line = index + 1;
        let value: Value =
            serde_json::from_str(text).map_err(|err| at(line, format!("not JSON: {err}")))?;
        let step: StepLine =
            serde_json::from_value(value).map_err(|err| at(line, format!("not a step: {err}")))?;
        if canonical(&step) != *text {
            return Err(at(
                line,
                format!(
                    "not in canonical form (an unknown key, or keys out of order); write it as\n{}",
                    canonical(&step)
                ),
            ));
        }
        check_step(&step.step, &mut bound).map_err(|err| at(line, err))?;
        steps.push(Located { line, step });
    }
    Ok(Session {
        path: path.to_owned(),
        header,
        steps,
        lines,
    })
}

fn check_refs(refs: Vec<String>, bound: &BTreeSet<String>) -> Result<(), String> {
    for name in refs {
        if !bound.contains(&name) && !name.starts_with(PANE_PREFIX) {
            return Err(format!("`${{{name}}}` is used before any pattern binds it"));
        }
    }
    Ok(())
}

fn check_expect(pattern: &Value, bound: &mut BTreeSet<String>) -> Result<(), String> {
    let (binds, refs) = pattern::check(pattern, Use::Expect).map_err(|e| e.to_string())?;
    check_refs(refs, bound)?;
    bound.extend(binds);
    if pattern::is_concrete(pattern) {
        round_trips::<Response>(pattern)?;
    }
    Ok(())
}

fn check_step(step: &Step, bound: &mut BTreeSet<String>) -> Result<(), String> {
    match step {
        Step::Send(frame) => {
            let (_, refs) = pattern::check(frame, Use::Send).map_err(|e| e.to_string())?;
            check_refs(refs, bound)?;
            if pattern::is_concrete(frame) {
                round_trips::<Request>(frame)?;
            }
        }
        Step::Expect(frame) => check_expect(frame, bound)?,
        Step::ExpectUnordered(frames) => {
            if frames.len() < 2 {
                return Err("`expect_unordered` takes two patterns or more; use `expect`".into());
            }
            for frame in frames {
                check_expect(frame, bound)?;
            }
        }
        Step::SendRaw(segments) => {
            if segments.is_empty() {
                return Err("`send_raw` needs a segment".into());
            }
            for segment in segments {
                super::runner::segment_bytes(segment)?;
            }
        }
        Step::Sim(args) => {
            if args.is_empty() {
                return Err("`sim` needs a subcommand".into());
            }
            for arg in args {
                let (_, refs) = pattern::check(&Value::String(arg.clone()), Use::Send)
                    .map_err(|e| e.to_string())?;
                check_refs(refs, bound)?;
            }
        }
        Step::SimBackground(background) => {
            if background.args.is_empty() {
                return Err("`sim_background` needs a subcommand".into());
            }
            for arg in &background.args {
                let (_, refs) = pattern::check(&Value::String(arg.clone()), Use::Send)
                    .map_err(|e| e.to_string())?;
                check_refs(refs, bound)?;
            }
        }
        Step::Barrier(id) if id.is_empty() => return Err("a barrier needs an id".into()),
        Step::Comment(_)
        | Step::Spawn(_)
        | Step::ExpectSilence(_)
        | Step::Barrier(_)
        | Step::Revoke(_)
        | Step::Close(_)
        | Step::Terminate(_)
        | Step::Exit(_) => {}
    }
    Ok(())
}

/// A concrete frame must decode through the wire types and re-encode to the same bytes.
fn round_trips<F: schema::Frames>(frame: &Value) -> Result<(), String> {
    let text = frame.to_string();
    let decoded = decode_line::<F>(&text)
        .map_err(|err| format!("the frame does not decode ({err}): {text}"))?;
    let again = encode_line(&decoded);
    if again.trim_end() != text {
        return Err(format!(
            "the frame does not re-encode byte-identically:\n  golden  {text}\n  encoded {}",
            again.trim_end()
        ));
    }
    Ok(())
}

/// Every `*.ndjson` under a directory, sorted.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ndjson"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Session, String> {
        parse(Path::new("golden/sessions/x.ndjson"), text)
    }

    const HEADER: &str = r#"{"case":"x","about":"a","requirements":["a.b"],"fixture":"small"}"#;

    #[test]
    fn a_well_formed_session_loads_with_line_numbers() {
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n",
            r#"{"spawn":{"device":"d"}}"#,
            r#"{"send":{"schema":1,"id":"1","t":"hello","app":"kit","app_version":"1","device":"d"}}"#,
            r#"{"expect":{"schema":1,"id":"1","t":"hello","host":"$string:host","tool_version":"$string","reconcile_interval_ms":200,"scopes":["read"]}}"#,
        );
        let session = parse_text(&text).unwrap();
        assert_eq!(session.steps.len(), 3);
        assert_eq!(session.steps[2].line, 4);
        assert_eq!(session.steps[0].conn(), "main");
    }

    #[test]
    fn a_line_out_of_canonical_form_is_refused_with_its_canonical_text() {
        let text = format!("{HEADER}\n{}\n", r#"{"conn":"b","close":{}}"#);
        let err = parse_text(&text).unwrap_err();
        assert!(
            err.starts_with("golden/sessions/x.ndjson:2: not in canonical form"),
            "{err}"
        );
        assert!(err.ends_with(r#"{"close":{},"conn":"b"}"#), "{err}");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let text = format!("{HEADER}\n{}\n", r#"{"close":{},"timeout":5}"#);
        assert!(
            parse_text(&text)
                .unwrap_err()
                .contains(":2: not in canonical form")
        );
    }

    #[test]
    fn the_case_must_match_the_file_name() {
        let text = HEADER.replace(r#""x""#, r#""y""#) + "\n";
        assert!(
            parse_text(&text)
                .unwrap_err()
                .contains("must match the file name")
        );
    }

    #[test]
    fn a_reference_before_its_capture_is_refused() {
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"send":{"schema":1,"id":"1","t":"card","pane":"${p}"}}"#
        );
        assert!(
            parse_text(&text)
                .unwrap_err()
                .contains("`${p}` is used before")
        );
    }

    #[test]
    fn a_concrete_frame_must_round_trip_through_the_wire_types() {
        // Body keys out of the wire order: valid JSON, but not what the types write.
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"send":{"schema":1,"id":"1","t":"hello","device":"d","app":"kit","app_version":"1"}}"#
        );
        let err = parse_text(&text).unwrap_err();
        assert!(err.contains("does not re-encode byte-identically"), "{err}");
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"expect":{"schema":1,"id":"1","t":"ack","x":1}}"#
        );
        assert!(parse_text(&text).unwrap_err().contains("re-encode"));
    }

    #[test]
    fn a_case_skipping_a_backend_must_say_why() {
        let header = HEADER.replace(
            r#""fixture":"small""#,
            r#""fixture":"small","backends":["real"]"#,
        );
        assert!(
            parse_text(&format!("{header}\n"))
                .unwrap_err()
                .contains("backends_reason")
        );
    }

    #[test]
    fn a_bad_directive_names_its_line() {
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"expect":{"schema":1,"id":"$ID","t":"ack"}}"#
        );
        let err = parse_text(&text).unwrap_err();
        assert!(err.contains(":2: at /id:"), "{err}");
    }
}
