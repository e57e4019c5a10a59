//! A capped line reader ([`each_line`]): a stream of NDJSON (or any) lines read to its end, each
//! line handed on whole, a line past the cap dropped (and said so) without holding more than the
//! cap in memory, bytes that are not UTF-8 handed on as bytes, an unterminated last line said so
//! with its bytes, and the end (or the read error that ended the stream) said once, last. And the
//! same lines as a person reads them ([`each_text_line`]), for a child's stderr.

use std::io::{BufRead, BufReader, Read};

/// What one read of the stream gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line, without its `\n`.
    Text(String),
    /// A line longer than the cap, whether or not its `\n` came; its bytes were dropped.
    TooLong,
    /// A line (without its `\n`) whose bytes are not UTF-8.
    NotUtf8(Vec<u8>),
    /// Bytes after the last `\n`, at the end of the stream (within the cap).
    Unterminated(Vec<u8>),
    /// The end of the stream, said once, last.
    End,
    /// A read error, which ends the stream: said once, last, instead of [`Line::End`].
    Failed(String),
}

/// Reads `reader` line by line into `sink` until its end, which is handed on once, last; `sink`
/// returns false to stop early. A line holds at most `cap` bytes (its `\n` not counted).
pub fn each_line(reader: impl Read, cap: usize, mut sink: impl FnMut(Line) -> bool) {
    let mut reader = BufReader::new(reader);
    let mut line: Vec<u8> = Vec::new();
    let mut over = false;
    let failed = loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break None,
            Ok(chunk) => chunk,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => break Some(err.to_string()),
        };
        let (taken, ended) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        let body = &chunk[..if ended { taken - 1 } else { taken }];
        if !over {
            if line.len() + body.len() > cap {
                over = true;
                line.clear();
            } else {
                line.extend_from_slice(body);
            }
        }
        reader.consume(taken);
        if ended {
            let got = if over {
                Line::TooLong
            } else {
                match String::from_utf8(std::mem::take(&mut line)) {
                    Ok(text) => Line::Text(text),
                    Err(err) => Line::NotUtf8(err.into_bytes()),
                }
            };
            over = false;
            line.clear();
            if !sink(got) {
                return;
            }
        }
    };
    let tail = if over {
        Some(Line::TooLong)
    } else {
        (!line.is_empty()).then_some(Line::Unterminated(line))
    };
    if let Some(tail) = tail
        && !sink(tail)
    {
        return;
    }
    sink(failed.map_or(Line::End, Line::Failed));
}

/// Reads `reader`'s lines as text until its end, for what a person reads (a child's stderr, what
/// a test shows of a child's output): bytes that are not UTF-8 replaced, an unterminated last line
/// as it came, a line past the cap said as `(a line longer than <cap> bytes)`. `sink` returns
/// false to stop early.
pub fn each_text_line(reader: impl Read, cap: usize, mut sink: impl FnMut(String) -> bool) {
    each_line(reader, cap, |line| match line {
        Line::Text(text) => sink(text),
        Line::NotUtf8(bytes) | Line::Unterminated(bytes) => {
            sink(String::from_utf8_lossy(&bytes).into_owned())
        }
        Line::TooLong => sink(format!("(a line longer than {cap} bytes)")),
        Line::End | Line::Failed(_) => false,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read, to hit every boundary.
    struct Dribble<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn read_all(bytes: &[u8], cap: usize, step: usize) -> Vec<Line> {
        let mut got = Vec::new();
        each_line(Dribble { bytes, step }, cap, |line| {
            got.push(line);
            true
        });
        got
    }

    #[test]
    fn lines_at_every_boundary_are_whole_and_the_end_comes_once_last() {
        let input = b"{\"a\":1}\n\nthe cap!\nthe cap!!\n\xff\xfe\nlast";
        for step in [1, 2, 3, 7, 4096] {
            assert_eq!(
                read_all(input, 8, step),
                [
                    Line::Text("{\"a\":1}".into()),
                    Line::Text(String::new()),
                    Line::Text("the cap!".into()),
                    Line::TooLong,
                    Line::NotUtf8(b"\xff\xfe".to_vec()),
                    Line::Unterminated(b"last".to_vec()),
                    Line::End,
                ],
                "step {step}"
            );
        }
        assert_eq!(read_all(b"", 8, 1), [Line::End]);
        assert_eq!(
            read_all(b"a\nlonger than eight", 8, 3),
            [Line::Text("a".into()), Line::TooLong, Line::End]
        );
    }

    /// A reader that gives its bytes, then an error.
    struct Broken<'a>(&'a [u8]);

    impl Read for Broken<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("the disk is on fire"));
            }
            let n = self.0.len().min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_read_error_ends_the_stream_after_what_came_before_it() {
        let mut got = Vec::new();
        each_line(Broken(b"a\nhalf"), 8, |line| {
            got.push(line);
            true
        });
        assert_eq!(
            got,
            [
                Line::Text("a".into()),
                Line::Unterminated(b"half".to_vec()),
                Line::Failed("the disk is on fire".into()),
            ]
        );
    }

    #[test]
    fn text_lines_are_what_a_person_reads() {
        let mut got = Vec::new();
        each_text_line(
            Dribble {
                bytes: b"one\n\xffx\nthe cap!!\nlast",
                step: 3,
            },
            8,
            |line| {
                got.push(line);
                true
            },
        );
        assert_eq!(
            got,
            ["one", "\u{fffd}x", "(a line longer than 8 bytes)", "last"]
        );
    }

    #[test]
    fn the_sink_stops_the_reading() {
        let mut got = Vec::new();
        each_line(&b"a\nb\nc\n"[..], 8, |line| {
            got.push(line);
            got.len() < 2
        });
        assert_eq!(got, [Line::Text("a".into()), Line::Text("b".into())]);
    }
}
