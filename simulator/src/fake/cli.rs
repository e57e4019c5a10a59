//! tmux's command line as the fake parses it: the global flags (`-L`, `-S`, `-u`, `-f`, ...), the
//! command sequence split on `;` arguments exactly as tmux splits it, and each command's flags
//! parsed getopt-style against tmux 3.3a's own flag templates, with tmux's error texts.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which server the invocation talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    /// `-L name` (or the default name `default`).
    Name(String),
    /// `-S path`.
    Path(PathBuf),
}

/// The global part of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Global {
    /// Socket selection.
    pub socket: Socket,
    /// `-u`: the client claims UTF-8 support.
    pub utf8: bool,
    /// `-V`: print the version.
    pub version: bool,
}

/// One parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The canonical command name.
    pub name: &'static str,
    /// Flags given, each with its argument if it takes one; the last occurrence wins.
    pub flags: BTreeMap<char, Option<String>>,
    /// Positional arguments.
    pub args: Vec<String>,
}

impl Command {
    /// Whether a flag was given.
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains_key(&flag)
    }

    /// A flag's argument.
    pub fn value(&self, flag: char) -> Option<&str> {
        self.flags.get(&flag).and_then(|v| v.as_deref())
    }
}

/// A command the fake knows: tmux's name, alias, flag template and argument bounds, and which of
/// the flags the fake implements.
struct Spec {
    name: &'static str,
    alias: &'static str,
    template: &'static str,
    min: usize,
    max: Option<usize>,
    supported: &'static str,
}

const SPECS: &[Spec] = &[
    Spec {
        name: "list-panes",
        alias: "lsp",
        template: "aF:f:st:",
        min: 0,
        max: Some(0),
        supported: "aFst",
    },
    Spec {
        name: "display-message",
        alias: "display",
        template: "ac:d:INpt:F:v",
        min: 0,
        max: Some(1),
        supported: "cdptF",
    },
    Spec {
        name: "show-options",
        alias: "show",
        template: "AgHpqst:vw",
        min: 0,
        max: Some(1),
        supported: "gpqstvw",
    },
    Spec {
        name: "set-option",
        alias: "set",
        template: "aFgopqst:uUw",
        min: 1,
        max: Some(2),
        supported: "gpqstuw",
    },
    Spec {
        name: "send-keys",
        alias: "send",
        template: "c:FHlMN:Rt:X",
        min: 0,
        max: None,
        supported: "lt",
    },
    Spec {
        name: "list-clients",
        alias: "lsc",
        template: "F:f:t:",
        min: 0,
        max: Some(0),
        supported: "Ft",
    },
    Spec {
        name: "if-shell",
        alias: "if",
        template: "bFt:",
        min: 2,
        max: Some(3),
        supported: "Ft",
    },
    Spec {
        name: "has-session",
        alias: "has",
        template: "t:",
        min: 0,
        max: Some(0),
        supported: "t",
    },
    Spec {
        name: "kill-pane",
        alias: "killp",
        template: "at:",
        min: 0,
        max: Some(0),
        supported: "t",
    },
    Spec {
        name: "kill-session",
        alias: "",
        template: "aCt:",
        min: 0,
        max: Some(0),
        supported: "t",
    },
    Spec {
        name: "kill-server",
        alias: "",
        template: "",
        min: 0,
        max: Some(0),
        supported: "",
    },
    Spec {
        name: "new-session",
        alias: "new",
        template: "Ac:dDEF:f:h:n:Ps:t:x:X:y:",
        min: 0,
        max: None,
        supported: "cdFnPsxy",
    },
    Spec {
        name: "new-window",
        alias: "neww",
        template: "abc:de:F:kn:PSt:",
        min: 0,
        max: None,
        supported: "cdFnPt",
    },
    Spec {
        name: "split-window",
        alias: "splitw",
        template: "bc:de:fF:hIl:p:Pt:vZ",
        min: 0,
        max: None,
        supported: "cdFhlPtv",
    },
    Spec {
        name: "select-pane",
        alias: "selectp",
        template: "DdegLlMmP:RT:t:UZ",
        min: 0,
        max: Some(0),
        supported: "Tt",
    },
    Spec {
        name: "select-layout",
        alias: "selectl",
        template: "Enopt:",
        min: 0,
        max: Some(1),
        supported: "t",
    },
    Spec {
        name: "respawn-pane",
        alias: "respawnp",
        template: "c:e:kt:",
        min: 0,
        max: None,
        supported: "ckt",
    },
];

/// A command-line error: the text to print and whether it is tmux's own or the fake's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Exactly what tmux prints (without the newline).
    Tmux(String),
    /// Something tmux accepts that the fake does not implement.
    Unsupported(String),
}

/// Parses the global flags; returns them and the rest of argv.
pub fn parse_global(args: &[String]) -> Result<(Global, &[String]), CliError> {
    let mut global = Global {
        socket: Socket::Name("default".into()),
        utf8: false,
        version: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let flags: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < flags.len() {
            let flag = flags[j];
            match flag {
                '2' | 'l' | 'N' | 'v' | 'D' => {}
                'u' => global.utf8 = true,
                'V' => global.version = true,
                'C' => {
                    return Err(CliError::Unsupported(
                        "-C (control mode) is not supported".into(),
                    ));
                }
                'c' | 'f' | 'L' | 'S' | 'T' => {
                    let rest: String = flags[j + 1..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else {
                        i += 1;
                        args.get(i).cloned().ok_or_else(|| {
                            CliError::Tmux(
                                "usage: tmux [-2CDlNuvV] [-c shell-command] [-f file] [-L socket-name]\n            [-S socket-path] [-T features] [command [flags]]".to_owned(),
                            )
                        })?
                    };
                    match flag {
                        'L' => global.socket = Socket::Name(value),
                        'S' => global.socket = Socket::Path(PathBuf::from(value)),
                        'c' => {
                            return Err(CliError::Unsupported(
                                "-c (shell command) is not supported".into(),
                            ));
                        }
                        _ => {}
                    }
                    j = flags.len();
                    continue;
                }
                other => {
                    return Err(CliError::Tmux(format!("tmux: unknown option -- {other}")));
                }
            }
            j += 1;
        }
        i += 1;
    }
    Ok((global, &args[i..]))
}

/// Splits argv into commands at `;` as tmux does: an argument `;` separates; an argument ending in
/// `;` ends its command (the text before is an argument); one ending in `\;` is a literal `;`.
pub fn split_commands(args: &[String]) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut current = Vec::new();
    for arg in args {
        if let Some(head) = arg.strip_suffix("\\;") {
            current.push(format!("{head};"));
        } else if let Some(head) = arg.strip_suffix(';') {
            if !head.is_empty() {
                current.push(head.to_owned());
            }
            commands.push(std::mem::take(&mut current));
        } else {
            current.push(arg.clone());
        }
    }
    if !current.is_empty() {
        commands.push(current);
    }
    commands.retain(|c| !c.is_empty());
    commands
}

/// Splits a command string (what `if-shell` parses as its command) into commands and their
/// words, as tmux's own parser does for the subset the fake takes: words parted by spaces and
/// tabs, `;` ending a command, `'...'` taken literally, `"..."` and a backslash outside quotes
/// escaping one punctuation character or space, and a quote left open ending at the end of the
/// text (as tmux 3.3a ends it). Everything else tmux's parser does (`$` and `~` expansion, `{}`
/// blocks, `#` comments, `%if`, newlines, `\n`-style escapes) is refused, never half done.
pub fn split_string(text: &str) -> Result<Vec<Vec<String>>, CliError> {
    let unsupported = |what: &str| {
        Err(CliError::Unsupported(format!(
            "{what} in a command string is not supported"
        )))
    };
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars().peekable();
    let escaped = |c: char| c.is_ascii_punctuation() || c == ' ';
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                words.extend(word.take());
            }
            ';' => {
                words.extend(word.take());
                commands.push(std::mem::take(&mut words));
            }
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(c) if escaped(c) => word.push(c),
                            _ => return unsupported("a backslash escape other than punctuation"),
                        },
                        '$' => return unsupported("$ (environment) expansion"),
                        '\n' => return unsupported("a newline"),
                        c => word.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) if escaped(c) => word.get_or_insert_with(String::new).push(c),
                _ => return unsupported("a backslash escape other than punctuation"),
            },
            '$' => return unsupported("$ (environment) expansion"),
            '~' if word.is_none() => return unsupported("~ (home) expansion"),
            '#' if word.is_none() => return unsupported("a # comment"),
            '%' if word.is_none() && words.is_empty() => return unsupported("a % directive"),
            '{' | '}' => return unsupported("a {} block"),
            '\n' => return unsupported("a newline"),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word.take());
    commands.push(words);
    commands.retain(|words| !words.is_empty());
    Ok(commands)
}

/// Parses one command's argv.
pub fn parse_command(argv: &[String]) -> Result<Command, CliError> {
    let Some((word, rest)) = argv.split_first() else {
        return Err(CliError::Tmux("no command".into()));
    };
    let Some(spec) = SPECS
        .iter()
        .find(|s| s.name == word || (!s.alias.is_empty() && s.alias == word))
    else {
        return Err(CliError::Tmux(format!("unknown command: {word}")));
    };
    let mut flags = BTreeMap::new();
    let mut i = 0;
    while i < rest.len() {
        let arg = &rest[i];
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let chars: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let flag = chars[j];
            let Some(at) = spec.template.find(flag).filter(|_| flag != ':') else {
                return Err(CliError::Tmux(format!(
                    "command {}: unknown flag -{flag}",
                    spec.name
                )));
            };
            let takes_value = spec.template[at + 1..].starts_with(':');
            if takes_value {
                let attached: String = chars[j + 1..].iter().collect();
                let value = if !attached.is_empty() {
                    attached
                } else {
                    i += 1;
                    rest.get(i).cloned().ok_or_else(|| {
                        CliError::Tmux(format!(
                            "command {}: -{flag} expects an argument",
                            spec.name
                        ))
                    })?
                };
                flags.insert(flag, Some(value));
                j = chars.len();
            } else {
                flags.insert(flag, None);
                j += 1;
            }
        }
        i += 1;
    }
    let args: Vec<String> = rest[i..].to_vec();
    if args.len() < spec.min {
        return Err(CliError::Tmux(format!(
            "command {}: too few arguments (need at least {})",
            spec.name, spec.min
        )));
    }
    if let Some(max) = spec.max
        && args.len() > max
    {
        return Err(CliError::Tmux(format!(
            "command {}: too many arguments (need at most {max})",
            spec.name
        )));
    }
    if let Some(flag) = flags.keys().find(|f| !spec.supported.contains(**f)) {
        return Err(CliError::Unsupported(format!(
            "{} -{flag} is not supported",
            spec.name
        )));
    }
    Ok(Command {
        name: spec.name,
        flags,
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn global_flags_pick_the_socket() {
        let args = argv(&["-u", "-f", "/dev/null", "-L", "x", "list-panes", "-a"]);
        let (global, rest) = parse_global(&args).unwrap();
        assert_eq!(global.socket, Socket::Name("x".into()));
        assert!(global.utf8);
        assert_eq!(rest, &argv(&["list-panes", "-a"])[..]);
        let args = argv(&["-S/tmp/s", "has"]);
        assert_eq!(
            parse_global(&args).unwrap().0.socket,
            Socket::Path("/tmp/s".into())
        );
    }

    /// Probed against tmux 3.3a: what `set-option -p -t %0 @v <arg>` stored.
    #[test]
    fn semicolons_split_like_tmux() {
        let split = |words: &[&str]| split_commands(&argv(words));
        assert_eq!(split(&["set", "@v", "a;"]), vec![argv(&["set", "@v", "a"])]);
        assert_eq!(
            split(&["set", "@v", "a\\;"]),
            vec![argv(&["set", "@v", "a;"])]
        );
        assert_eq!(
            split(&["set", "@v", "a\\\\;"]),
            vec![argv(&["set", "@v", "a\\;"])]
        );
        assert_eq!(
            split(&["set", "@v", "a;b"]),
            vec![argv(&["set", "@v", "a;b"])]
        );
        assert_eq!(
            split(&["a", ";", "b", "x;", "c"]),
            vec![argv(&["a"]), argv(&["b", "x"]), argv(&["c"])]
        );
    }

    /// What tmux 3.3a's parser made of the same strings (each run as `if-shell -F 1 <string>`
    /// with `display -p` printing the words).
    #[test]
    fn command_strings_split_like_tmux() {
        let split = |text: &str| split_string(text).unwrap();
        assert_eq!(
            split("set -p -t '%1' '@m' '5' ; display -p -t '%1' 'set #{@m}'"),
            vec![
                argv(&["set", "-p", "-t", "%1", "@m", "5"]),
                argv(&["display", "-p", "-t", "%1", "set #{@m}"]),
            ]
        );
        assert_eq!(
            split(r#"display -p 'x'\''y ; #{pane_id} $HOME ~ } z'"#),
            vec![argv(&["display", "-p", "x'y ; #{pane_id} $HOME ~ } z"])]
        );
        assert_eq!(
            split(r#"display -p "a\"b\\c \$" a\;b;display -p 'open"#),
            vec![
                argv(&["display", "-p", "a\"b\\c $", "a;b"]),
                argv(&["display", "-p", "open"]),
            ]
        );
        assert_eq!(split(""), Vec::<Vec<String>>::new());
        assert_eq!(split(" ; "), Vec::<Vec<String>>::new());
        assert_eq!(split("a#b ''"), vec![argv(&["a#b", ""])]);
        for refused in [
            "display -p $HOME",
            "display -p \"$HOME\"",
            "display -p ~",
            "display -p #x",
            "%if 1",
            "display -p {",
            "display -p a\nb",
            "display -p \\n",
        ] {
            assert!(
                matches!(split_string(refused), Err(CliError::Unsupported(_))),
                "{refused}"
            );
        }
    }

    #[test]
    fn flags_parse_getopt_style() {
        let cmd = parse_command(&argv(&["show", "-pqv", "-t%3", "@agent_state"])).unwrap();
        assert_eq!(cmd.name, "show-options");
        assert!(cmd.has('p') && cmd.has('q') && cmd.has('v'));
        assert_eq!(cmd.value('t'), Some("%3"));
        assert_eq!(cmd.args, argv(&["@agent_state"]));
    }

    /// Error texts printed by tmux 3.3a.
    #[test]
    fn errors_read_like_tmux() {
        let err = |words: &[&str]| parse_command(&argv(words)).unwrap_err();
        assert_eq!(
            err(&["frob"]),
            CliError::Tmux("unknown command: frob".into())
        );
        assert_eq!(
            err(&["list-panes", "-Z"]),
            CliError::Tmux("command list-panes: unknown flag -Z".into())
        );
        assert_eq!(
            err(&["kill-pane", "x"]),
            CliError::Tmux("command kill-pane: too many arguments (need at most 0)".into())
        );
        assert_eq!(
            err(&["set-option", "-p", "-t", "%0"]),
            CliError::Tmux("command set-option: too few arguments (need at least 1)".into())
        );
        assert!(matches!(
            err(&["list-panes", "-f", "x"]),
            CliError::Unsupported(_)
        ));
    }
}
