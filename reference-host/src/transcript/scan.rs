//! Finding records (lines) in a transcript file without reading the file whole: backwards from a
//! record boundary in fixed chunks (what a window pages through), forwards from the head (where a
//! store keeps its session metadata), and a reader over one record's bytes.
//!
//! A record is a line without its `\n`. Bytes after the last `\n` are a record still being
//! written and are never served; empty lines are skipped.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

/// Bytes read per step of a scan.
const CHUNK: u64 = 64 * 1024;

/// Where one record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Offset of its first byte.
    pub offset: u64,
    /// Its length, without the `\n`.
    pub len: u64,
}

impl Record {
    /// The bytes the record takes in the file, its `\n` included.
    pub fn footprint(&self) -> u64 {
        self.len + 1
    }
}

/// A window of the file held in memory.
#[derive(Debug, Default)]
struct Chunk {
    start: u64,
    bytes: Vec<u8>,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    fn load(&mut self, file: &File, start: u64, end: u64) -> std::io::Result<()> {
        self.start = start;
        self.bytes
            .resize(usize::try_from(end - start).unwrap_or(0), 0);
        read_exact_at(file, &mut self.bytes, start)
    }
}

fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// Records from an end boundary towards the head of the file, newest first.
#[derive(Debug)]
pub struct Backward<'f> {
    file: &'f File,
    /// Every record still to yield ends before this offset; it is 0 or just after a `\n`.
    pos: u64,
    chunk: Chunk,
}

impl<'f> Backward<'f> {
    /// Scans backwards from `end`, which must be 0 or the offset just after a `\n`.
    pub fn from(file: &'f File, end: u64) -> Backward<'f> {
        Backward {
            file,
            pos: end,
            chunk: Chunk::default(),
        }
    }

    /// The record boundary at or before `size`: just after the last `\n`, or 0.
    pub fn last_boundary(file: &File, size: u64) -> std::io::Result<u64> {
        let mut scan = Backward::from(file, size);
        Ok(scan.newline_before(size)?.map_or(0, |at| at + 1))
    }

    /// The offset of the last `\n` before `before`.
    fn newline_before(&mut self, before: u64) -> std::io::Result<Option<u64>> {
        let mut hi = before;
        while hi > 0 {
            if !(self.chunk.start < hi && hi <= self.chunk.end()) {
                let lo = hi.saturating_sub(CHUNK);
                self.chunk.load(self.file, lo, hi)?;
            }
            let upto = usize::try_from(hi - self.chunk.start).unwrap_or(0);
            if let Some(at) = memchr::memrchr(b'\n', &self.chunk.bytes[..upto]) {
                return Ok(Some(self.chunk.start + at as u64));
            }
            hi = self.chunk.start;
        }
        Ok(None)
    }

    /// The next older record, or `None` at the head.
    pub fn next_record(&mut self) -> std::io::Result<Option<Record>> {
        while self.pos > 0 {
            let newline = self.pos - 1;
            let start = self.newline_before(newline)?.map_or(0, |at| at + 1);
            self.pos = start;
            let record = Record {
                offset: start,
                len: newline - start,
            };
            if !self.is_blank(record) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// True for an empty line, or a short one of only whitespace.
    fn is_blank(&self, record: Record) -> bool {
        if record.len == 0 {
            return true;
        }
        let chunk = &self.chunk;
        if record.len > 64
            || record.offset < chunk.start
            || record.offset + record.len > chunk.end()
        {
            return false;
        }
        let from = usize::try_from(record.offset - chunk.start).unwrap_or(0);
        let to = from + usize::try_from(record.len).unwrap_or(0);
        chunk.bytes[from..to].iter().all(u8::is_ascii_whitespace)
    }
}

/// Records from a record boundary onwards (the head, or just after a record), oldest first, up to
/// a boundary.
#[derive(Debug)]
pub struct Forward<'f> {
    file: &'f File,
    pos: u64,
    end: u64,
    chunk: Chunk,
}

impl<'f> Forward<'f> {
    /// Scans forward from the head up to `end` (a record boundary).
    pub fn from_head(file: &'f File, end: u64) -> Forward<'f> {
        Forward::from(file, 0, end)
    }

    /// Scans forward from `start` up to `end`, both record boundaries.
    pub fn from(file: &'f File, start: u64, end: u64) -> Forward<'f> {
        Forward {
            file,
            pos: start,
            end,
            chunk: Chunk::default(),
        }
    }

    /// The next record, or `None` at `end`.
    pub fn next_record(&mut self) -> std::io::Result<Option<Record>> {
        while self.pos < self.end {
            let start = self.pos;
            let mut at = start;
            let newline = loop {
                if !(self.chunk.start <= at && at < self.chunk.end()) {
                    let hi = (at + CHUNK).min(self.end);
                    self.chunk.load(self.file, at, hi)?;
                }
                let from = usize::try_from(at - self.chunk.start).unwrap_or(0);
                match memchr::memchr(b'\n', &self.chunk.bytes[from..]) {
                    Some(i) => break at + i as u64,
                    None => at = self.chunk.end(),
                }
                if at >= self.end {
                    // `end` is a boundary, so this cannot happen for a well-formed call; stop.
                    self.pos = self.end;
                    return Ok(None);
                }
            };
            self.pos = newline + 1;
            if newline > start {
                return Ok(Some(Record {
                    offset: start,
                    len: newline - start,
                }));
            }
        }
        Ok(None)
    }
}

/// Reads one record's bytes (without its `\n`) from the file.
#[derive(Debug)]
pub struct RecordReader<'f> {
    file: &'f File,
    pos: u64,
    end: u64,
}

impl<'f> RecordReader<'f> {
    /// A reader over `record`.
    pub fn new(file: &'f File, record: Record) -> RecordReader<'f> {
        RecordReader {
            file,
            pos: record.offset,
            end: record.offset + record.len,
        }
    }
}

impl Read for RecordReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.pos).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the transcript is shorter than the record",
            ));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// The first and last `edge` bytes of a record (all of it when short): what a cursor's MAC
/// covers, so a record rewritten in place no longer matches its cursors.
pub fn record_edges(file: &File, record: Record, edge: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes;
    if record.len <= 2 * edge {
        bytes = vec![0; usize::try_from(record.len).unwrap_or(0)];
        read_exact_at(file, &mut bytes, record.offset)?;
    } else {
        let edge_len = usize::try_from(edge).unwrap_or(0);
        bytes = vec![0; 2 * edge_len];
        let (head, tail) = bytes.split_at_mut(edge_len);
        read_exact_at(file, head, record.offset)?;
        read_exact_at(file, tail, record.offset + record.len - edge)?;
    }
    // The record's own end must still be a line end: a file cut inside the record is not it.
    let mut newline = [0u8];
    read_exact_at(file, &mut newline, record.offset + record.len)?;
    if newline[0] != b'\n' {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the record no longer ends where it did",
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let file = File::open(&path).unwrap();
        (dir, file)
    }

    fn text(file: &File, r: Record) -> String {
        let mut s = String::new();
        RecordReader::new(file, r).read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn backwards_yields_complete_records_newest_first_and_skips_blanks() {
        let (_dir, file) = file_with(b"one\n\ntwo\n  \nthree\npartial");
        let size = file.metadata().unwrap().len();
        let end = Backward::last_boundary(&file, size).unwrap();
        assert_eq!(end, size - "partial".len() as u64);
        let mut scan = Backward::from(&file, end);
        let mut seen = Vec::new();
        while let Some(r) = scan.next_record().unwrap() {
            seen.push(text(&file, r));
        }
        assert_eq!(seen, ["three", "two", "one"]);
    }

    #[test]
    fn records_longer_than_a_chunk_are_found_whole_in_both_directions() {
        let big = "x".repeat(3 * CHUNK as usize + 17);
        let content = format!("a\n{big}\nb\n");
        let (_dir, file) = file_with(content.as_bytes());
        let size = content.len() as u64;
        let mut back = Backward::from(&file, size);
        let lens: Vec<u64> = std::iter::from_fn(|| back.next_record().unwrap())
            .map(|r| r.len)
            .collect();
        assert_eq!(lens, [1, big.len() as u64, 1]);
        let mut fwd = Forward::from_head(&file, size);
        let lens: Vec<u64> = std::iter::from_fn(|| fwd.next_record().unwrap())
            .map(|r| r.len)
            .collect();
        assert_eq!(lens, [1, big.len() as u64, 1]);
    }

    #[test]
    fn a_file_without_a_newline_has_no_records() {
        let (_dir, file) = file_with(b"only a fragment");
        assert_eq!(Backward::last_boundary(&file, 15).unwrap(), 0);
        assert_eq!(Backward::from(&file, 0).next_record().unwrap(), None);
    }

    #[test]
    fn record_edges_cover_both_ends_and_notice_a_moved_line_end() {
        let (_dir, file) = file_with(b"0123456789\nab\n");
        let r = Record { offset: 0, len: 10 };
        assert_eq!(record_edges(&file, r, 3).unwrap(), b"012789");
        assert_eq!(
            record_edges(&file, Record { offset: 11, len: 2 }, 3).unwrap(),
            b"ab"
        );
        assert!(record_edges(&file, Record { offset: 0, len: 9 }, 3).is_err());
    }
}
