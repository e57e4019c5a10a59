//! The transport: small and dumb. A reader that cuts stdin into lines (64 KiB cap, UTF-8 check)
//! and a writer that writes each frame as one whole line and flushes, into a [`Sink`] (stdout's
//! is `outbox.rs`). Nothing else in `serve` touches stdin or stdout.

use std::io::{BufRead, Write};
use std::time::Duration;

use schema::{Envelope, Response, encode_line};

pub use schema::LINE_CAP;

/// What the reader found next on its input.
#[derive(Debug)]
pub enum Incoming {
    /// A complete line, without its `\n`.
    Line(String),
    /// A line longer than the cap; its bytes were discarded up to its newline.
    TooLong,
    /// A line that is not UTF-8.
    NotUtf8,
    /// End of input. An unterminated fragment before it is dropped.
    Eof,
    /// The input failed.
    Failed(std::io::Error),
}

/// Cuts a byte stream into request lines.
#[derive(Debug)]
pub struct LineReader<R> {
    input: R,
    cap: usize,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the protocol's line cap.
    pub fn new(input: R) -> LineReader<R> {
        LineReader {
            input,
            cap: LINE_CAP,
        }
    }

    /// The next line, never holding more than `cap` bytes of it in memory.
    pub fn next_line(&mut self) -> Incoming {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Incoming::Failed(err),
            };
            if buf.is_empty() {
                return Incoming::Eof;
            }
            let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(at) => (&buf[..at], at + 1, true),
                None => (buf, buf.len(), false),
            };
            if !too_long && line.len() + chunk.len() > self.cap {
                too_long = true;
                line = Vec::new();
            }
            if !too_long {
                line.extend_from_slice(chunk);
            }
            self.input.consume(used);
            if done {
                break;
            }
        }
        if too_long {
            return Incoming::TooLong;
        }
        match String::from_utf8(line) {
            Ok(text) => Incoming::Line(text),
            Err(_) => Incoming::NotUtf8,
        }
    }
}

/// Where frames are written: an output that can also say whether its reader is still there and
/// keeping up, and wait a bounded time for what it holds to be read.
pub trait Sink: Write {
    /// Whether the output is still usable; an error ends the session. Run once per cycle, so a
    /// reader that left is noticed with nothing to write.
    fn check(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Waits up to `within` for every written frame to be read; whether they all were.
    fn drain(&mut self, within: Duration) -> bool {
        let _ = within;
        self.flush().is_ok()
    }
}

/// A buffer is always usable and always read (tests).
impl Sink for Vec<u8> {}

/// Writes frames, one whole line each, flushed.
#[derive(Debug)]
pub struct FrameWriter<W> {
    output: W,
}

impl<W: Write> FrameWriter<W> {
    /// A writer over `output`.
    pub fn new(output: W) -> FrameWriter<W> {
        FrameWriter { output }
    }

    /// Writes one frame. An error (a closed pipe) means the peer is gone.
    pub fn send(&mut self, frame: &Envelope<Response>) -> std::io::Result<()> {
        self.output.write_all(encode_line(frame).as_bytes())?;
        self.output.flush()
    }

    /// The underlying output, for tests.
    #[cfg(test)]
    pub fn get_ref(&self) -> &W {
        &self.output
    }
}

impl<W: Sink> FrameWriter<W> {
    /// [`Sink::check`].
    pub fn check(&mut self) -> std::io::Result<()> {
        self.output.check()
    }

    /// [`Sink::drain`].
    pub fn drain(&mut self, within: Duration) -> bool {
        self.output.drain(within)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<String> {
        let mut reader = LineReader {
            input: std::io::BufReader::with_capacity(7, input),
            cap,
        };
        let mut out = Vec::new();
        loop {
            match reader.next_line() {
                Incoming::Line(l) => out.push(format!("line:{l}")),
                Incoming::TooLong => out.push("too-long".into()),
                Incoming::NotUtf8 => out.push("not-utf8".into()),
                Incoming::Eof => return out,
                Incoming::Failed(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn lines_are_cut_at_newlines_across_buffer_boundaries() {
        assert_eq!(
            lines(b"abc\ndefghijklmnop\n\nq\n", 100),
            ["line:abc", "line:defghijklmnop", "line:", "line:q"]
        );
    }

    #[test]
    fn an_over_long_line_is_discarded_up_to_its_newline_and_reading_goes_on() {
        let mut input = vec![b'x'; 40];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(lines(&input, 16), ["too-long", "line:ok"]);
        // Exactly at the cap is still a line.
        assert_eq!(lines(b"0123456789abcdef\n", 16), ["line:0123456789abcdef"]);
        assert_eq!(lines(b"0123456789abcdefg\n", 16), ["too-long"]);
    }

    #[test]
    fn invalid_utf8_is_reported_and_reading_goes_on() {
        assert_eq!(lines(b"\xff\xfe\nok\n", 100), ["not-utf8", "line:ok"]);
    }

    #[test]
    fn an_unterminated_fragment_at_eof_is_dropped() {
        assert_eq!(lines(b"one\ntw", 100), ["line:one"]);
    }

    #[test]
    fn frames_are_written_as_whole_lines() {
        let mut writer = FrameWriter::new(Vec::new());
        writer.send(&Envelope::new("1", Response::Ack)).unwrap();
        writer.send(&Envelope::new("2", Response::Ack)).unwrap();
        assert_eq!(
            String::from_utf8(writer.get_ref().clone()).unwrap(),
            "{\"schema\":1,\"id\":\"1\",\"t\":\"ack\"}\n{\"schema\":1,\"id\":\"2\",\"t\":\"ack\"}\n"
        );
    }
}
