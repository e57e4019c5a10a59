//! Known failures: a baseline file lists case ids (optionally `<case>@<backend>`), one per line,
//! `#` starting a comment. A run with a baseline fails on a failure it does not list *and* on a
//! listed case that now passes, so the list only ever shrinks on purpose.

use golden::{Backend, Error};

use super::outcome::{CaseResult, Grade};

/// One listed case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub case: String,
    /// Only on this backend; every backend when absent.
    pub backend: Option<Backend>,
    pub line: usize,
}

/// A parsed baseline file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    pub entries: Vec<Entry>,
}

/// How a run compares with its baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Failed and listed: tolerated.
    pub known: Vec<String>,
    /// Failed and not listed.
    pub new_failures: Vec<String>,
    /// Listed but passed: the baseline must drop them.
    pub now_passing: Vec<String>,
}

impl Verdict {
    /// Whether the run passes against the baseline.
    pub fn ok(&self) -> bool {
        self.new_failures.is_empty() && self.now_passing.is_empty()
    }
}

impl Baseline {
    /// Parses a baseline file's text; an error names its line.
    pub fn parse(text: &str) -> Result<Baseline, Error> {
        let mut entries = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if line.split_whitespace().count() != 1 {
                let one = format!("one case id per line: `{raw}`");
                return Err(Error::new(one).at_line(index + 1));
            }
            let (case, backend) = match line.split_once('@') {
                Some((case, "fake")) => (case, Some(Backend::Fake)),
                Some((case, "real")) => (case, Some(Backend::Real)),
                Some((_, other)) => {
                    let unknown = format!("unknown backend `{other}`");
                    return Err(Error::new(unknown).at_line(index + 1));
                }
                None => (line, None),
            };
            entries.push(Entry {
                case: case.to_owned(),
                backend,
                line: index + 1,
            });
        }
        Ok(Baseline { entries })
    }

    /// Whether a case is listed for a backend.
    pub fn lists(&self, case: &str, backend: Backend) -> bool {
        self.entries
            .iter()
            .any(|e| e.case == case && e.backend.is_none_or(|b| b == backend))
    }

    /// Entries naming no known case.
    pub fn unknown<'a>(&'a self, cases: &[String]) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|e| !cases.contains(&e.case))
            .collect()
    }

    /// Compares results (of one backend) with the baseline.
    pub fn judge(&self, results: &[CaseResult], backend: Backend) -> Verdict {
        let mut verdict = Verdict::default();
        for result in results {
            let listed = self.lists(&result.case, backend);
            match (result.grade, listed) {
                (Grade::Fail | Grade::NonStrict, true) => verdict.known.push(result.case.clone()),
                (Grade::Fail, false) => verdict.new_failures.push(result.case.clone()),
                (Grade::Pass, true) => verdict.now_passing.push(result.case.clone()),
                _ => {}
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn result(case: &str, grade: Grade) -> CaseResult {
        CaseResult {
            case: case.into(),
            file: PathBuf::new(),
            shown: String::new(),
            requirements: Vec::new(),
            suite: golden::Suite::Wire,
            grade,
            notes: Vec::new(),
            log: Vec::new(),
            duration: Duration::ZERO,
            skip_reason: None,
            failure: None,
            blessed: Vec::new(),
        }
    }

    #[test]
    fn parses_ids_backends_and_comments() {
        let baseline =
            Baseline::parse("# known\nframing.long-line  # host bug\nedges.appear@real\n\n")
                .unwrap();
        assert_eq!(baseline.entries.len(), 2);
        assert!(baseline.lists("framing.long-line", Backend::Fake));
        assert!(baseline.lists("edges.appear", Backend::Real));
        assert!(!baseline.lists("edges.appear", Backend::Fake));
    }

    #[test]
    fn a_bad_line_is_an_error() {
        let err = Baseline::parse("a b\n").unwrap_err();
        assert_eq!(err.to_string(), "line 1: one case id per line: `a b`");
        assert!(
            Baseline::parse("a@moon\n")
                .unwrap_err()
                .message
                .contains("moon")
        );
    }

    #[test]
    fn fails_on_new_failures_and_on_listed_cases_that_now_pass() {
        let baseline = Baseline::parse("known\nfixed\n").unwrap();
        let results = [
            result("known", Grade::Fail),
            result("fixed", Grade::Pass),
            result("fresh", Grade::Fail),
            result("fine", Grade::Pass),
            result("soft", Grade::NonStrict),
        ];
        let verdict = baseline.judge(&results, Backend::Fake);
        assert_eq!(verdict.known, ["known"]);
        assert_eq!(verdict.new_failures, ["fresh"]);
        assert_eq!(verdict.now_passing, ["fixed"]);
        assert!(!verdict.ok());
        let clean = Baseline::parse("known\n")
            .unwrap()
            .judge(&results[..1], Backend::Fake);
        assert!(clean.ok());
    }

    #[test]
    fn entries_naming_no_case_are_found() {
        let baseline = Baseline::parse("a\nb@fake\n").unwrap();
        let unknown = baseline.unknown(&["a".to_owned()]);
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].case, "b");
    }
}
