//! What the host writes to tmux: keys and text to a pane (dispatch), pane options (the hook's
//! stamps, the notification markers, mute), and status-line messages to clients (notifications).
//! Each call is one tmux invocation; several commands are chained with tmux's `;` separator.
//!
//! tmux reads an argument that *ends* in `;` as the end of a command (tmux 3.3a drops the `;`),
//! and an argument ending in `\;` as a literal `;`. So every argument that carries data (text,
//! option values, messages) goes through [`data`], which turns a final `;` into `\;`; and text is
//! sent after `--`, so a text that starts with `-` is not read as flags.
//!
//! A notification marker's claim ([`MarkerClaim`]) is one `if-shell -F`: tmux tests the marker
//! itself, and its command string (which tmux parses as its own command language, so every word
//! in it is single-quoted by [`quoted`]) writes the marker, reads it back, prints the pane's tty
//! and directory as they are at the claim, and shows the fire's status-line message.

use schema::PaneOption;

use super::{Tmux, TmuxError};

/// tmux's command separator, as its own argument.
const THEN: &str = ";";

/// A data argument that tmux will pass through unchanged.
pub fn data(text: &str) -> String {
    match text.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => text.to_owned(),
    }
}

/// A word of a tmux command string, single-quoted: tmux takes everything inside literally (`;`,
/// `#`, `$`, `~`, braces, spaces), and a `'` is closed, escaped and reopened (`'\''`).
pub fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` as a literal inside a format's `#{...}`: `#`, `,` and `}` escaped as tmux reads them.
fn format_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '#' | ',' | '}') {
            out.push('#');
        }
        out.push(c);
    }
    out
}

/// When a marker already announces what a claim would write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// While it holds the claim's value (an episode, a run).
    WhileEqual,
    /// While it holds anything (`context_high` until rearmed).
    WhileSet,
}

/// One claim of a notification marker, and the status-line message of the fire it claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerClaim<'a> {
    /// The pane (`%N`).
    pub pane: &'a str,
    /// The marker option ([`PaneOption::NotifiedAt`], ...).
    pub option: PaneOption,
    /// What the claim writes.
    pub value: &'a str,
    /// When the marker already announces it.
    pub held: Held,
    /// The clients shown `message` once the claim is won.
    pub clients: &'a [String],
    /// The status-line message (tmux expands it as a format: `#` doubled by the caller); none
    /// for a claim that rings nothing (a muted pane).
    pub message: Option<&'a str>,
}

/// A pane's tty and directory, as a won claim printed them (or as read on their own,
/// `Tmux::pane_place`): where a fire's terminal sinks write and where its payload's repository
/// comes from. The notification daemon's cycle read does not ask for them: they are among the
/// dearest fields of a read (`pane_current_path` costs tmux a lookup of each pane's foreground
/// process).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PanePlace {
    /// `pane_tty`.
    pub tty: String,
    /// `pane_current_path`.
    pub current_path: String,
}

/// The format the claim prints [`PanePlace`] with: a tty path has no space.
const PLACE_FORMAT: &str = "#{pane_tty} #{pane_current_path}";

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// tmux holds the value now, written by this claim; the status-line messages were shown, or
    /// why not all were.
    Won {
        /// Why tmux failed after the read-back (a message that was not shown).
        status: Option<String>,
        /// The pane at the claim; empty fields when tmux printed nothing after the read-back.
        pane: PanePlace,
    },
    /// The marker already announced it: nothing was written or shown.
    Held,
}

impl MarkerClaim<'_> {
    /// The one invocation: `if-shell -F -t PANE CONDITION HELD-BRANCH CLAIM-BRANCH`. The
    /// condition is the marker as tmux holds it now; the held branch prints `held`; the claim
    /// branch writes the value, prints it as read back (`show-options -v`), prints the pane's
    /// [`PanePlace`] line and shows the message to each client. A pane tmux does not have fails the write (tmux's may-fail `-t` expands as
    /// no pane, so the condition is false), and nothing after it runs.
    pub fn args(&self) -> Vec<String> {
        let option = format_literal(self.option.as_str());
        let condition = match self.held {
            Held::WhileEqual => format!("#{{==:#{{{option}}},{}}}", format_literal(self.value)),
            Held::WhileSet => format!("#{{!=:#{{{option}}},}}"),
        };
        let pane = quoted(self.pane);
        let mut claim = vec![
            format!(
                "set-option -p -t {pane} {} {}",
                quoted(self.option.as_str()),
                quoted(self.value)
            ),
            format!(
                "show-options -p -v -t {pane} {}",
                quoted(self.option.as_str())
            ),
            format!("display-message -p -t {pane} {}", quoted(PLACE_FORMAT)),
        ];
        if let Some(message) = self.message {
            claim.extend(self.clients.iter().map(|client| {
                format!("display-message -c {} {}", quoted(client), quoted(message))
            }));
        }
        vec![
            "if-shell".into(),
            "-F".into(),
            "-t".into(),
            self.pane.into(),
            data(&condition),
            "display-message -p held".into(),
            data(&claim.join(" ; ")),
        ]
    }

    /// What the claim's invocation answered: `stdout`, and its failure (exit status, first line
    /// of stderr) if it failed. Held only on the held branch's word alone; won only when tmux
    /// printed the value read back after the write (a failure after that is a message that did
    /// not go), with the pane's [`PanePlace`] line after it. A marker value of `held` would read
    /// as held: a dropped fire, never a double one (the values are decimal epoch milliseconds).
    fn answer(
        &self,
        stdout: &[u8],
        failed: Option<(String, String)>,
    ) -> Result<Claimed, TmuxError> {
        let text = String::from_utf8_lossy(stdout);
        if failed.is_none() && text == "held\n" {
            return Ok(Claimed::Held);
        }
        if let Some((first, rest)) = text.split_once('\n')
            && first == self.value
        {
            // The directory is the rest of the output: it may hold a space or a newline.
            let line = rest.strip_suffix('\n').unwrap_or(rest);
            let (tty, current_path) = line.split_once(' ').unwrap_or((line, ""));
            return Ok(Claimed::Won {
                status: failed.map(|(_, stderr)| stderr),
                pane: PanePlace {
                    tty: tty.to_owned(),
                    current_path: current_path.to_owned(),
                },
            });
        }
        if let Some((status, stderr)) = failed {
            return Err(TmuxError::Failed { status, stderr });
        }
        let first: String = text.lines().next().unwrap_or("").chars().take(80).collect();
        Err(TmuxError::Unreadable { output: first })
    }
}

/// What one write of a contract option of a pane does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionWrite<'a> {
    /// `set-option -p -t <pane> <option> <value>`.
    Set(PaneOption, &'a str),
    /// `set-option -p -u -t <pane> <option>`.
    Unset(PaneOption),
    /// [`OptionWrite::Set`] unless the pane's option `.2.0` holds `.2.1` when tmux comes to it:
    /// one `if-shell -F` that tests it as it writes (a hook's stamp moves `@agent_since` only
    /// when the state changes, which a blind write cannot know).
    SetUnless(PaneOption, &'a str, (PaneOption, &'a str)),
}

/// One piece of what a dispatch sends to a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input<'a> {
    /// tmux key names (`Enter`, `Escape`, `1`, `C-c`).
    Keys(&'a [String]),
    /// Text typed literally.
    Text(&'a str),
}

impl Tmux {
    /// Sends `inputs` to `pane`, in order, in one invocation.
    pub fn send(&self, pane: &str, inputs: &[Input<'_>]) -> Result<(), TmuxError> {
        let mut args: Vec<String> = Vec::new();
        for input in inputs {
            let command = match input {
                Input::Keys([]) => continue,
                Input::Keys(keys) => {
                    let mut command = vec!["send-keys".into(), "-t".into(), pane.into()];
                    command.extend(keys.iter().map(|k| data(k)));
                    command
                }
                Input::Text(text) => vec![
                    "send-keys".into(),
                    "-t".into(),
                    pane.into(),
                    "-l".into(),
                    "--".into(),
                    data(text),
                ],
            };
            if !args.is_empty() {
                args.push(THEN.into());
            }
            args.extend(command);
        }
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }

    /// Sets and unsets options of `pane`, in one invocation.
    pub fn set_pane_options(
        &self,
        pane: &str,
        writes: &[OptionWrite<'_>],
    ) -> Result<(), TmuxError> {
        let args = option_args(pane, writes);
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }

    /// Sets option `option` of `pane` to `value` and reads it back, in one invocation: true
    /// only when tmux holds `value` afterwards. A server that went away answers nothing, so a
    /// notification marker is never taken as written when it was not.
    pub fn set_pane_option_confirmed(
        &self,
        pane: &str,
        option: PaneOption,
        value: &str,
    ) -> Result<bool, TmuxError> {
        let out = self.run(&[
            "set-option".into(),
            "-p".into(),
            "-t".into(),
            pane.into(),
            option.as_str().into(),
            data(value),
            THEN.into(),
            "show-options".into(),
            "-p".into(),
            "-v".into(),
            "-t".into(),
            pane.into(),
            option.as_str().into(),
        ])?;
        let text = String::from_utf8_lossy(&out);
        Ok(text.strip_suffix('\n').unwrap_or(&text) == value)
    }

    /// Claims a notification marker in one invocation (see [`MarkerClaim`]). A server that went
    /// away, a pane that is gone, a value tmux did not keep: an error, never a win.
    pub fn claim_marker(&self, claim: &MarkerClaim<'_>) -> Result<Claimed, TmuxError> {
        let attempt = self.attempt(&claim.args())?;
        let failed = attempt
            .failed
            .clone()
            .map(|status| (status, attempt.stderr.clone()));
        claim.answer(&attempt.stdout, failed)
    }

    /// The names of the clients attached to the server.
    pub fn list_clients(&self) -> Result<Vec<String>, TmuxError> {
        let out = self.run(&["list-clients".into(), "-F".into(), "#{client_name}".into()])?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Shows `message` on the status line of every client in `clients`, in one invocation.
    /// tmux expands the message as a format: a caller doubles every `#` it means literally.
    pub fn display_message(&self, clients: &[String], message: &str) -> Result<(), TmuxError> {
        let mut args: Vec<String> = Vec::new();
        for client in clients {
            if !args.is_empty() {
                args.push(THEN.into());
            }
            args.extend([
                "display-message".into(),
                "-c".into(),
                client.clone(),
                data(message),
            ]);
        }
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }
}

/// The arguments of one invocation that makes `writes` to `pane`, in order.
pub(super) fn option_args(pane: &str, writes: &[OptionWrite<'_>]) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    for write in writes {
        if !args.is_empty() {
            args.push(THEN.into());
        }
        match write {
            OptionWrite::Set(option, value) => args.extend([
                "set-option".into(),
                "-p".into(),
                "-t".into(),
                pane.into(),
                option.as_str().into(),
                data(value),
            ]),
            OptionWrite::Unset(option) => args.extend([
                "set-option".into(),
                "-p".into(),
                "-u".into(),
                "-t".into(),
                pane.into(),
                option.as_str().into(),
            ]),
            OptionWrite::SetUnless(option, value, (tested, held)) => args.extend([
                "if-shell".into(),
                "-F".into(),
                "-t".into(),
                pane.into(),
                data(&format!(
                    "#{{!=:#{{{}}},{}}}",
                    format_literal(tested.as_str()),
                    format_literal(held)
                )),
                data(&format!(
                    "set-option -p -t {} {} {}",
                    quoted(pane),
                    quoted(option.as_str()),
                    quoted(value)
                )),
            ]),
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_word_is_literal_to_tmux_whatever_it_holds() {
        assert_eq!(quoted("plain"), "'plain'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(quoted(""), "''");
        assert_eq!(quoted("a ; #{x} $HOME ~ }"), "'a ; #{x} $HOME ~ }'");
        assert_eq!(format_literal("a#b,c}d"), "a##b#,c#}d");
    }

    fn claim<'a>(clients: &'a [String], message: Option<&'a str>) -> MarkerClaim<'a> {
        MarkerClaim {
            pane: "%4",
            option: PaneOption::NotifiedAt,
            value: "1763780412000",
            held: Held::WhileEqual,
            clients,
            message,
        }
    }

    #[test]
    fn a_claim_is_one_if_shell_with_the_message_in_its_claim_branch() {
        let clients = ["/dev/pts/1".to_owned(), "/dev/pts/2".to_owned()];
        assert_eq!(
            claim(&clients, Some("corral: claude blocked at it's")).args(),
            [
                "if-shell",
                "-F",
                "-t",
                "%4",
                "#{==:#{@agent_notified_at},1763780412000}",
                "display-message -p held",
                "set-option -p -t '%4' '@agent_notified_at' '1763780412000' ; \
                 show-options -p -v -t '%4' '@agent_notified_at' ; \
                 display-message -p -t '%4' '#{pane_tty} #{pane_current_path}' ; \
                 display-message -c '/dev/pts/1' 'corral: claude blocked at it'\\''s' ; \
                 display-message -c '/dev/pts/2' 'corral: claude blocked at it'\\''s'",
            ]
        );
        let muted = claim(&clients, None).args();
        assert!(!muted[6].contains("-c "), "a muted claim shows nothing");
        let mut set = claim(&[], None);
        set.held = Held::WhileSet;
        assert_eq!(set.args()[4], "#{!=:#{@agent_notified_at},}");
    }

    #[test]
    fn a_claim_is_won_only_when_tmux_printed_the_value_read_back() {
        let c = claim(&[], None);
        let failed = Some(("exit status: 1".to_owned(), "no such pane: %4".to_owned()));
        let at = |tty: &str, current_path: &str| PanePlace {
            tty: tty.into(),
            current_path: current_path.into(),
        };
        assert_eq!(
            c.answer(b"1763780412000\n/dev/pts/4 /src/my repo\n", None)
                .unwrap(),
            Claimed::Won {
                status: None,
                pane: at("/dev/pts/4", "/src/my repo"),
            }
        );
        assert_eq!(
            c.answer(b"1763780412000\n/dev/pts/4 /src/two\nlines\n\n", None)
                .unwrap(),
            Claimed::Won {
                status: None,
                pane: at("/dev/pts/4", "/src/two\nlines\n"),
            },
            "a directory keeps its own newlines"
        );
        assert_eq!(
            c.answer(b"1763780412000\n/dev/pts/4 /w\n", failed.clone())
                .unwrap(),
            Claimed::Won {
                status: Some("no such pane: %4".into()),
                pane: at("/dev/pts/4", "/w"),
            },
            "a failure after the read-back: the claim stands, a message did not go"
        );
        assert_eq!(
            c.answer(b"1763780412000\n", None).unwrap(),
            Claimed::Won {
                status: None,
                pane: PanePlace::default(),
            },
            "nothing after the read-back: won, the pane unknown"
        );
        assert_eq!(c.answer(b"held\n", None).unwrap(), Claimed::Held);
        assert!(matches!(
            c.answer(b"", failed.clone()),
            Err(TmuxError::Failed { .. })
        ));
        assert!(
            matches!(
                c.answer(b"held\n", failed.clone()),
                Err(TmuxError::Failed { .. })
            ),
            "a held branch that failed is no answer"
        );
        for other in [&b""[..], b"1\n", b"\n", b"usage: tmux\n", b"held\nheld\n"] {
            assert!(
                matches!(c.answer(other, None), Err(TmuxError::Unreadable { .. })),
                "{other:?}"
            );
        }
    }

    #[test]
    fn a_guarded_write_is_an_if_shell_that_tmux_tests_as_it_writes() {
        let args = option_args(
            "%4",
            &[
                OptionWrite::SetUnless(PaneOption::Since, "7", (PaneOption::State, "blocked")),
                OptionWrite::Set(PaneOption::State, "blocked;"),
                OptionWrite::Unset(PaneOption::Detail),
            ],
        );
        assert_eq!(
            args,
            [
                "if-shell",
                "-F",
                "-t",
                "%4",
                "#{!=:#{@agent_state},blocked}",
                "set-option -p -t '%4' '@agent_since' '7'",
                ";",
                "set-option",
                "-p",
                "-t",
                "%4",
                "@agent_state",
                "blocked\\;",
                ";",
                "set-option",
                "-p",
                "-u",
                "-t",
                "%4",
                "@agent_detail",
            ]
        );
    }

    #[test]
    fn a_final_semicolon_is_escaped_and_nothing_else_changes() {
        assert_eq!(data("abc;"), "abc\\;");
        assert_eq!(data(";"), "\\;");
        assert_eq!(data("a;b"), "a;b");
        assert_eq!(data("z\\;"), "z\\\\;");
        assert_eq!(data("-rf"), "-rf");
    }
}
