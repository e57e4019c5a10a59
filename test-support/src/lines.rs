//! A child's output read as lines ([`lines`]), on a thread of their own, through `stdx`'s capped
//! splitter: a test waits for the line it wants with a deadline and prints what came instead.

use std::io::Read;
use std::sync::mpsc::{self, Receiver};

/// The longest line a test takes from a child; a longer one is said as such, not kept.
pub const LINE_CAP: usize = 1024 * 1024;

/// The lines of `stream` (a child's stdout or stderr), read on a thread of their own until it
/// ends, as a person reads them (`stdx::lines::each_text_line`, capped at [`LINE_CAP`]).
pub fn lines(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (to, from) = mpsc::channel();
    std::thread::spawn(move || {
        stdx::lines::each_text_line(stream, LINE_CAP, |line| to.send(line).is_ok());
    });
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streams_lines_come_as_text_until_it_ends() {
        let mut input = b"one\n\xffx\n".to_vec();
        input.extend(std::iter::repeat_n(b'y', LINE_CAP + 1));
        input.extend_from_slice(b"\nlast");
        let got: Vec<String> = lines(std::io::Cursor::new(input)).iter().collect();
        assert_eq!(
            got,
            [
                "one".to_owned(),
                "\u{fffd}x".to_owned(),
                format!("(a line longer than {LINE_CAP} bytes)"),
                "last".to_owned(),
            ]
        );
    }
}
