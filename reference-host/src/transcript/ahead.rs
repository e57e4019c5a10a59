//! The look-ahead of a record: the [`Mark`]s of the records after it, as many as
//! [`AHEAD_RECORDS`] and [`AHEAD_BYTES`] allow, and whether they reach the end of the file. It says
//! whether a Claude Code assistant record is the last part of its message ([`last_part`]).
//!
//! The records it covers depend on the file alone, never on where a page started: a window that
//! reads its first record's look-ahead forwards ([`Ahead::read`]) and one that builds it backwards
//! record by record ([`Ahead::step_back`]) keep the same records (the longest run after the record
//! of at most `AHEAD_RECORDS` records whose footprints sum to at most `AHEAD_BYTES`, the first
//! always), so a record's events are the same in every window and in an `event` answer.

use std::collections::VecDeque;
use std::fs::File;

use super::classify::{self, AHEAD_BYTES, AHEAD_RECORDS, Format, Mark, last_part};
use super::json::{self, Limits};
use super::scan::{Forward, RecordReader};

/// What is kept of a record read only for its mark.
const MARK_LIMITS: Limits = Limits {
    string: 256,
    total: 4096,
    depth: 128,
};

/// The marks of the records after one.
#[derive(Debug, Clone, Default)]
pub struct Ahead {
    /// Marks and footprints, in file order.
    marks: VecDeque<(Mark, u64)>,
    bytes: u64,
    /// The marks run to the end of the file (not to a bound).
    at_end: bool,
}

impl Ahead {
    /// The look-ahead of a record that ends at `from` (a record boundary), in a file whose records
    /// end at `end`. Only Claude Code needs one: other formats get an empty one without reading.
    pub fn read(file: &File, format: Format, from: u64, end: u64) -> std::io::Result<Ahead> {
        let mut ahead = Ahead::default();
        if format != Format::Claude {
            return Ok(ahead);
        }
        let mut forward = Forward::from(file, from, end);
        loop {
            let Some(record) = forward.next_record()? else {
                ahead.at_end = true;
                return Ok(ahead);
            };
            let footprint = record.footprint();
            let full = ahead.marks.len() == AHEAD_RECORDS
                || (!ahead.marks.is_empty() && ahead.bytes + footprint > AHEAD_BYTES);
            if full {
                return Ok(ahead);
            }
            let node = json::parse(RecordReader::new(file, record), MARK_LIMITS).ok();
            ahead
                .marks
                .push_back((classify::mark(format, node.as_ref()), footprint));
            ahead.bytes += footprint;
        }
    }

    /// Moves the look-ahead one record back: the record marked `mark`, of `footprint` bytes, is
    /// now the first after.
    pub fn step_back(&mut self, mark: Mark, footprint: u64) {
        self.marks.push_front((mark, footprint));
        self.bytes += footprint;
        while self.marks.len() > AHEAD_RECORDS || (self.marks.len() > 1 && self.bytes > AHEAD_BYTES)
        {
            let (_, dropped) = self.marks.pop_back().expect("longer than one");
            self.bytes -= dropped;
            self.at_end = false;
        }
    }

    /// True when the record marked `this` is the last part of its message ([`last_part`]).
    pub fn last_part(&self, this: &Mark) -> bool {
        last_part(this, self.marks.iter().map(|(mark, _)| mark), self.at_end)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::transcript::scan::Backward;

    /// Every record's look-ahead, read forwards from it and stepped back from the end, is the
    /// same, in a file with records of every size around the bounds.
    #[test]
    fn reading_forwards_and_stepping_back_keep_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = File::create(&path).unwrap();
        for i in 0..120u64 {
            let pad = "p".repeat(usize::try_from((i * 7919) % 40_000).unwrap());
            let line = match i % 5 {
                0 => format!(
                    r#"{{"type":"assistant","message":{{"id":"m{}"}},"pad":"{pad}"}}"#,
                    i / 10
                ),
                1 => format!(r#"{{"type":"progress","pad":"{pad}"}}"#),
                2 => r#"{"type":"user","message":{"content":"go"}}"#.to_owned(),
                _ => format!(r#"{{"type":"assistant","message":{{"id":"m{}"}}}}"#, i / 10),
            };
            writeln!(file, "{line}").unwrap();
        }
        drop(file);
        let file = File::open(&path).unwrap();
        let end = file.metadata().unwrap().len();
        let mut scan = Backward::from(&file, end);
        let mut stepped = Ahead::read(&file, Format::Claude, end, end).unwrap();
        assert!(stepped.at_end && stepped.marks.is_empty());
        while let Some(record) = scan.next_record().unwrap() {
            let read = Ahead::read(
                &file,
                Format::Claude,
                record.offset + record.footprint(),
                end,
            )
            .unwrap();
            assert_eq!(read.marks, stepped.marks, "at {}", record.offset);
            assert_eq!(read.at_end, stepped.at_end, "at {}", record.offset);
            let node = json::parse(RecordReader::new(&file, record), MARK_LIMITS).ok();
            stepped.step_back(
                classify::mark(Format::Claude, node.as_ref()),
                record.footprint(),
            );
        }
    }
}
