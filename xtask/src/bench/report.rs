//! The report: one row per measure with what it is against, its figure and target, rendered as
//! a Markdown table (stdout) and as JSON (`--json FILE`).

use serde::Serialize;

use super::machine::Machine;
use super::stats::Summary;

/// Every row, in report order, with the group that measures it (`--only` takes either).
pub const ROWS: [(&str, &str); 31] = [
    ("P1", "P1"),
    ("P2", "P2"),
    ("P2b", "P2"),
    ("P3", "P3"),
    ("P4", "P4"),
    ("P4b", "P4"),
    ("P4c", "P4"),
    ("P5", "P5"),
    ("P5b", "P5"),
    ("P6", "P6"),
    ("P7", "P7"),
    ("P7b", "P7"),
    ("P8", "P8"),
    ("P8b", "P8"),
    ("P8c", "P8"),
    ("P8d", "P8"),
    ("H1", "H1"),
    ("H1b", "H1"),
    ("H1c", "H1"),
    ("H1d", "H1"),
    ("H2", "H1"),
    ("H2b", "H1"),
    ("E1", "E1"),
    ("E1b", "E1"),
    ("C1", "C1"),
    ("C1b", "C1"),
    ("C1c", "C1"),
    ("C2", "C2"),
    ("C2b", "C2"),
    ("C2c", "C2"),
    ("C2d", "C2"),
];

/// What a row's figure must be to pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Target {
    /// The figure is at most this.
    AtMost(f64),
    /// The figure is below this.
    Below(f64),
    /// The figure is at least this.
    AtLeast(f64),
    /// The figure is exactly this.
    Exactly(f64),
    /// No target: the row is reported for what it shows.
    Report,
}

/// How a row came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The figure meets the target.
    Pass,
    /// The figure misses the target.
    Fail,
    /// The row has no target: the figure is shown for what it says.
    Report,
    /// The measure could not be taken.
    Error,
}

/// A baseline measured in the same run.
#[derive(Debug, Clone, Serialize)]
pub struct Against {
    /// What it is.
    pub what: String,
    /// Its samples, in the row's unit.
    pub summary: Summary,
}

/// What a row is before it is measured: its id, what it measures and the target it is judged
/// by (`bench::rows::describe`).
#[derive(Debug, Clone)]
pub struct Spec {
    pub id: &'static str,
    pub measure: String,
    pub target: Target,
    pub target_text: String,
}

/// One measure.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub measure: String,
    /// The unit of `summary` (and of the baseline's).
    pub unit: String,
    pub summary: Option<Summary>,
    pub against: Option<Against>,
    /// The number the target judges (a ratio, or an absolute value).
    pub figure: Option<f64>,
    /// The figure as shown: `1.12×`, `231 ms`, `1 fire`.
    pub figure_text: String,
    pub target: Target,
    /// The target as shown.
    pub target_text: String,
    pub verdict: Verdict,
    /// Anything a reader needs to read the row (sizes, counts, an error).
    pub note: String,
}

impl Row {
    /// The row of `spec` with samples `summary` in `unit`; no figure yet.
    pub fn new(spec: &Spec, unit: &str, summary: Summary) -> Row {
        Row {
            id: spec.id.to_owned(),
            measure: spec.measure.clone(),
            unit: unit.to_owned(),
            summary: Some(summary),
            against: None,
            figure: None,
            figure_text: "-".into(),
            target: spec.target,
            target_text: spec.target_text.clone(),
            verdict: Verdict::Error,
            note: String::new(),
        }
    }

    /// The baseline measured beside it, in the same unit.
    pub fn against(mut self, what: impl Into<String>, summary: Summary) -> Row {
        self.against = Some(Against {
            what: what.into(),
            summary,
        });
        self
    }

    /// The figure: the median over the baseline's median, shown as `1.12×`.
    pub fn ratio(mut self) -> Row {
        if let (Some(s), Some(a)) = (&self.summary, &self.against) {
            let ratio = s.median / a.summary.median;
            self.figure = ratio.is_finite().then_some(ratio);
            self.figure_text = format!("{ratio:.2}×");
        }
        self
    }

    /// The figure, and how it is shown.
    pub fn figure(mut self, value: f64, text: impl Into<String>) -> Row {
        self.figure = Some(value);
        self.figure_text = text.into();
        self
    }

    /// What a reader needs to read the row.
    pub fn note(mut self, note: impl Into<String>) -> Row {
        self.note = note.into();
        self
    }

    /// The row judged: its figure against its target.
    pub fn judged(mut self) -> Row {
        self.verdict = match (self.target, self.figure) {
            (_, None) => Verdict::Error,
            (Target::Report, Some(_)) => Verdict::Report,
            (Target::AtMost(max), Some(f)) => pass_if(f <= max),
            (Target::Below(max), Some(f)) => pass_if(f < max),
            (Target::AtLeast(min), Some(f)) => pass_if(f >= min),
            (Target::Exactly(want), Some(f)) => pass_if(f == want),
        };
        self
    }

    /// The row of a measure that could not be taken.
    pub fn failed(spec: &Spec, error: &anyhow::Error) -> Row {
        Row {
            id: spec.id.to_owned(),
            measure: spec.measure.clone(),
            unit: String::new(),
            summary: None,
            against: None,
            figure: None,
            figure_text: "-".into(),
            target: spec.target,
            target_text: spec.target_text.clone(),
            verdict: Verdict::Error,
            note: format!("error: {error:#}"),
        }
    }
}

fn pass_if(ok: bool) -> Verdict {
    if ok { Verdict::Pass } else { Verdict::Fail }
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    pub machine: Machine,
    /// The load averages when the run ended.
    pub load_end: String,
    /// `real` or `fake`.
    pub backend: String,
    /// The build the host and the simulator ran from (`release`).
    pub build: String,
    pub quick: bool,
    /// Samples per timed measure (unless a row says otherwise).
    pub samples: usize,
    pub panes: usize,
    pub transcript_bytes: u64,
    /// The reconcile interval of every serve and daemon, in ms.
    pub interval_ms: u64,
    /// Lines about the run as a whole (the fleet's bring-up).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

impl Report {
    /// The rows whose measure could not be taken.
    pub fn errors(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Error)
            .map(|r| r.id.as_str())
            .collect()
    }

    /// The Markdown: a header naming the run, then the table and the rows' notes.
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let mut out = format!(
            "## corral bench: {} backend, {} build{}\n\n\
             {} cores ({}), kernel {}, {}; load average {} at the start, {} at the end. \
             {} panes, a {} transcript, reconcile interval {} ms; {} samples per measure unless \
             noted. Median and p95 are nearest-rank; a ratio is median over median.\n\n",
            self.backend,
            self.build,
            if self.quick { ", quick" } else { "" },
            m.cores,
            m.cpu,
            m.kernel,
            m.tmux,
            m.load,
            self.load_end,
            self.panes,
            bytes(self.transcript_bytes),
            self.interval_ms,
            self.samples,
        );
        if self.quick {
            out.push_str(
                "A quick run: small sizes and few samples, to show the bench runs end to end; its \
                 figures are not the host's cost.\n\n",
            );
        }
        out.push_str(
            "| id | measure | against | median | p95 | ratio / figure | target | result |\n",
        );
        out.push_str("|---|---|---|---:|---:|---:|---|---|\n");
        for row in &self.rows {
            let value = |pick: fn(&Summary) -> f64| {
                row.summary
                    .map_or_else(|| "-".to_owned(), |s| number(pick(&s), &row.unit))
            };
            let against = row.against.as_ref().map_or_else(
                || "-".to_owned(),
                |a| format!("{} ({})", a.what, number(a.summary.median, &row.unit)),
            );
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                row.id,
                row.measure,
                against,
                value(|s| s.median),
                value(|s| s.p95),
                row.figure_text,
                row.target_text,
                verdict(row.verdict),
            ));
        }
        let notes: Vec<String> = self
            .notes
            .iter()
            .cloned()
            .chain(
                self.rows
                    .iter()
                    .filter(|r| !r.note.is_empty())
                    .map(|r| format!("{}: {}", r.id, r.note)),
            )
            .map(|note| format!("- {}", note.replace('\n', " ")))
            .collect();
        if !notes.is_empty() {
            out.push_str("\nNotes:\n\n");
            out.push_str(&notes.join("\n"));
            out.push('\n');
        }
        out
    }
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Fail => "**FAIL**",
        Verdict::Report => "REPORT",
        Verdict::Error => "**ERROR**",
    }
}

/// A value with its unit, to a sensible precision.
pub fn number(value: f64, unit: &str) -> String {
    let digits = if value.abs() >= 100.0 {
        0
    } else if value.abs() >= 10.0 {
        1
    } else {
        2
    };
    if unit.is_empty() {
        format!("{value:.digits$}")
    } else {
        format!("{value:.digits$} {unit}")
    }
}

/// A size in KiB, MiB or GiB.
pub fn bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    const GIB: u64 = KIB * KIB * KIB;
    match n {
        n if n >= GIB && n % GIB == 0 => format!("{} GiB", n >> 30),
        n if n >= GIB => format!("{:.1} GiB", n as f64 / GIB as f64),
        n if n >= KIB * KIB => format!("{:.0} MiB", n as f64 / (KIB * KIB) as f64),
        n => format!("{:.0} KiB", n as f64 / KIB as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(target: Target, figure: Option<f64>) -> Row {
        Row {
            id: "P0".into(),
            measure: "m".into(),
            unit: "ms".into(),
            summary: Some(Summary::one(1.0)),
            against: None,
            figure,
            figure_text: String::new(),
            target,
            target_text: String::new(),
            verdict: Verdict::Error,
            note: String::new(),
        }
        .judged()
    }

    #[test]
    fn a_row_is_judged_by_its_figure_against_its_target() {
        assert_eq!(row(Target::AtMost(3.0), Some(3.0)).verdict, Verdict::Pass);
        assert_eq!(row(Target::AtMost(3.0), Some(3.1)).verdict, Verdict::Fail);
        assert_eq!(
            row(Target::AtLeast(2000.0), Some(1999.0)).verdict,
            Verdict::Fail
        );
        assert_eq!(row(Target::Exactly(1.0), Some(1.0)).verdict, Verdict::Pass);
        assert_eq!(row(Target::Exactly(1.0), Some(2.0)).verdict, Verdict::Fail);
        assert_eq!(row(Target::Report, Some(9.0)).verdict, Verdict::Report);
        assert_eq!(row(Target::AtMost(3.0), None).verdict, Verdict::Error);
    }

    #[test]
    fn sizes_and_numbers_read_well() {
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(number(1234.5, "ms"), "1234 ms");
        assert_eq!(number(1.234, "ms"), "1.23 ms");
        assert_eq!(number(12.34, ""), "12.3");
    }
}
