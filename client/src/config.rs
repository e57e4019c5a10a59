//! Which hosts to watch, and how to ring: `remote.toml`, or hosts named on the command line.
//!
//! The file is `--config FILE`, else `$XDG_CONFIG_HOME/corral/remote.toml`, else
//! `~/.config/corral/remote.toml`. With `--host` or `--local` on the command line the hosts come
//! from the flags, and a file is read only when `--config` names one (its hosts come first).
//!
//! ```toml
//! [notify]
//! bell = true                       # BEL when a pane blocks (default true)
//! command = "ntfy publish corral"   # run (sh -c) on every ring, the payload JSON on stdin
//!
//! [[host]]
//! name = "studio"                   # shown on every line; unique
//! ssh = "ana@studio.lan"            # `ssh -T ana@studio.lan`: its forced command picks the device
//!
//! [[host]]
//! name = "build"
//! ssh = "ci@build"
//! device = "SHA256:q3b1YwZk"        # no forced command: `ssh ci@build corral serve --stdio --device …`
//! corral = "/opt/corral/bin/corral" # the program run there (default `corral`)
//! ssh_options = ["-p", "2222", "-i", "~/.ssh/corral"]  # ssh's own options, before the destination
//!
//! [[host]]
//! name = "here"
//! local = true                      # `corral serve --stdio --device …` on this machine
//! device = "SHA256:q3b1YwZk"        # required with `local`
//!
//! [[host]]
//! name = "fake"
//! command = ["sh", "-c", "exec my-host --stdio"]  # any argv speaking the protocol (tests)
//! ```
//!
//! The file's format is a `schema` type, [`RemoteConfig`] (`schema/json/remote-config.schema.json`).
//! A host has exactly one of `ssh`, `local = true` and `command`; `ssh_options` goes with `ssh`.
//! An unknown key, a wrong type, a duplicate name or a file that does not parse is one line naming
//! the file and the line (for what spans a host's keys, the line its `[[host]]` starts), and
//! `corral-remote` exits 2.

use std::fmt;
use std::path::{Path, PathBuf};

use schema::{RemoteConfig, RemoteHost};
use toml::Spanned;

/// Everything the client needs to know before it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// The hosts, in the order they are shown.
    pub hosts: Vec<HostConfig>,
    /// What a ring does.
    pub notify: NotifyConfig,
}

/// One host to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostConfig {
    /// The name shown for it (and used by headless commands): the user's label, not the host's own.
    pub name: String,
    /// How its `serve` process is reached.
    pub target: Target,
}

/// How a host's `corral serve --stdio` is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Over ssh. Without a device, the destination's forced command picks it (`ssh -T <dest>`).
    Ssh {
        /// The ssh destination (`user@host`, a `Host` alias of `~/.ssh/config`).
        destination: String,
        /// The device fingerprint to serve, when no forced command names it.
        device: Option<String>,
        /// The remote program (default `corral`).
        corral: Option<String>,
        /// ssh's own options, put before the destination (`-p 2222`, `-i KEY`, `-o Name=value`).
        options: Vec<String>,
    },
    /// This machine's fleet: `corral serve --stdio --device <device>` run here.
    Local {
        /// The device fingerprint.
        device: String,
        /// The program (default `corral` from PATH).
        corral: Option<String>,
    },
    /// Any argv whose stdin and stdout speak the protocol.
    Command(Vec<String>),
}

/// What a ring does besides showing the pane: `[notify]` as the file says it.
pub use schema::RemoteNotify as NotifyConfig;

/// What the command line says about hosts and notification.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--host NAME=DEST`, in order.
    pub hosts: Vec<String>,
    /// `--local NAME`, in order.
    pub locals: Vec<String>,
    /// `--device NAME=FINGERPRINT`.
    pub devices: Vec<String>,
    /// `--corral PATH`: the program of `--local` hosts.
    pub corral: Option<String>,
    /// `--notify-command CMD`.
    pub notify_command: Option<String>,
    /// `--no-bell`.
    pub no_bell: bool,
}

/// Why the configuration cannot be used: one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file at fault, when a file is.
    pub file: Option<PathBuf>,
    /// Its line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{}:{line}: {}", file.display(), self.message),
            (Some(file), None) => write!(f, "{}: {}", file.display(), self.message),
            (None, Some(line)) => write!(f, "line {line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

fn flag_error(message: impl Into<String>) -> ConfigError {
    ConfigError {
        file: None,
        line: None,
        message: message.into(),
    }
}

/// The default file: `$XDG_CONFIG_HOME/corral/remote.toml`, else `$HOME/.config/corral/remote.toml`.
pub fn default_path(xdg_config_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    match xdg_config_home.filter(|dir| Path::new(dir).is_absolute()) {
        Some(dir) => Some(Path::new(dir).join("corral/remote.toml")),
        None => home
            .filter(|dir| !dir.is_empty())
            .map(|home| Path::new(home).join(".config/corral/remote.toml")),
    }
}

/// Resolves the flags and the file into a configuration. `read` reads a file (the tests pass
/// text); `default` is the default file's path.
pub fn resolve(
    flags: &Flags,
    default: Option<PathBuf>,
    read: impl Fn(&Path) -> std::io::Result<String>,
) -> Result<Config, ConfigError> {
    let from_flags = !flags.hosts.is_empty() || !flags.locals.is_empty();
    let file = match (&flags.config, from_flags) {
        (Some(path), _) => Some((path.clone(), true)),
        (None, false) => default.map(|path| (path, false)),
        (None, true) => None,
    };
    let mut config = Config::default();
    if let Some((path, named)) = file {
        match read(&path) {
            Ok(text) => {
                config = parse(&text).map_err(|mut err| {
                    err.file = Some(path.clone());
                    err
                })?
            }
            Err(err) if !named && err.kind() == std::io::ErrorKind::NotFound => {
                if !from_flags {
                    return Err(ConfigError {
                        file: Some(path),
                        line: None,
                        message: "no such file: write one (the format is in `corral-remote --help`) or name hosts with --host NAME=DEST or --local NAME".into(),
                    });
                }
            }
            Err(err) => {
                return Err(ConfigError {
                    file: Some(path),
                    line: None,
                    message: format!("cannot read it: {err}"),
                });
            }
        }
    }
    add_flag_hosts(&mut config, flags)?;
    if let Some(command) = &flags.notify_command {
        config.notify.command = Some(command.clone());
    }
    if flags.no_bell {
        config.notify.bell = false;
    }
    if config.hosts.is_empty() {
        return Err(flag_error(
            "no host to watch: add [[host]] tables to the config file, or pass --host NAME=DEST or --local NAME",
        ));
    }
    Ok(config)
}

fn add_flag_hosts(config: &mut Config, flags: &Flags) -> Result<(), ConfigError> {
    let mut devices: Vec<(String, String)> = Vec::new();
    for pair in &flags.devices {
        let (name, device) = split_pair(pair, "--device", "NAME=FINGERPRINT")?;
        devices.push((name, device));
    }
    let mut take_device = |name: &str| {
        devices
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| devices.remove(i).1)
    };
    let mut added = Vec::new();
    for pair in &flags.hosts {
        let (name, destination) = split_pair(pair, "--host", "NAME=DEST")?;
        let device = take_device(&name);
        added.push(HostConfig {
            name,
            target: Target::Ssh {
                destination,
                device,
                corral: None,
                options: Vec::new(),
            },
        });
    }
    for name in &flags.locals {
        check_name(name).map_err(flag_error)?;
        let Some(device) = take_device(name) else {
            return Err(flag_error(format!(
                "--local {name} needs the device to serve: add --device {name}=SHA256:…"
            )));
        };
        added.push(HostConfig {
            name: name.clone(),
            target: Target::Local {
                device,
                corral: flags.corral.clone(),
            },
        });
    }
    if let Some((name, _)) = devices.first() {
        return Err(flag_error(format!(
            "--device {name}=…: no --host or --local is named {name}"
        )));
    }
    for host in added {
        if config.hosts.iter().any(|h| h.name == host.name) {
            return Err(flag_error(format!(
                "two hosts are named {}: names must be unique",
                host.name
            )));
        }
        config.hosts.push(host);
    }
    Ok(())
}

fn split_pair(pair: &str, flag: &str, form: &str) -> Result<(String, String), ConfigError> {
    match pair.split_once('=') {
        Some((name, value)) if !value.is_empty() => {
            check_name(name).map_err(flag_error)?;
            Ok((name.to_owned(), value.to_owned()))
        }
        _ => Err(flag_error(format!("{flag} {pair}: expected {form}"))),
    }
}

/// A host name is what headless commands and the screen call it: printable, no spaces.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a host name cannot be empty".into());
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "host name {name:?} has a space or a control character"
        ));
    }
    Ok(())
}

/// Parses the text of a `remote.toml` ([`RemoteConfig`], the published format, with each host's
/// place in the file kept), then checks what spans several keys of a host, naming the line where
/// that host's table starts.
pub fn parse(text: &str) -> Result<Config, ConfigError> {
    let file: RemoteConfig<Spanned<RemoteHost>> =
        toml::from_str(text).map_err(|err| ConfigError {
            file: None,
            line: err.span().map(|span| line_of(text, span.start)),
            message: err.message().trim().to_owned(),
        })?;
    if file.notify.command.as_deref() == Some("") {
        return Err(flag_error("`command` in [notify] cannot be empty"));
    }
    let mut config = Config {
        hosts: Vec::new(),
        notify: file.notify,
    };
    for host in file.hosts {
        let at = |message: String| ConfigError {
            file: None,
            line: Some(line_of(text, host.span().start)),
            message,
        };
        let checked = host_config(host.get_ref()).map_err(at)?;
        if config.hosts.iter().any(|h| h.name == checked.name) {
            return Err(at(format!(
                "two hosts are named {}: names must be unique",
                checked.name
            )));
        }
        config.hosts.push(checked);
    }
    Ok(config)
}

/// A `[[host]]` table as the client uses it, or why it cannot be used.
fn host_config(host: &RemoteHost) -> Result<HostConfig, String> {
    let RemoteHost {
        name,
        ssh,
        ssh_options,
        local,
        command,
        device,
        corral,
    } = host.clone();
    check_name(&name)?;
    for (key, value) in [("ssh", &ssh), ("device", &device), ("corral", &corral)] {
        if value.as_deref() == Some("") {
            return Err(format!("host {name}: `{key}` cannot be empty"));
        }
    }
    for (key, argv) in [("command", &command), ("ssh_options", &ssh_options)] {
        if argv
            .as_ref()
            .is_some_and(|a| a.iter().any(String::is_empty))
        {
            return Err(format!("host {name}: `{key}` holds an empty string"));
        }
    }
    if command.as_ref().is_some_and(Vec::is_empty) {
        return Err(format!("host {name}: `command` cannot be empty"));
    }
    if ssh.is_none() && ssh_options.is_some() {
        return Err(format!(
            "host {name} has `ssh_options` but no `ssh`: they are options of ssh"
        ));
    }
    let target = match (ssh, local == Some(true), command) {
        (Some(destination), false, None) => Target::Ssh {
            destination,
            device,
            corral,
            options: ssh_options.unwrap_or_default(),
        },
        (None, true, None) => match device {
            Some(device) => Target::Local { device, corral },
            None => {
                return Err(format!(
                    "host {name} is local and needs `device`: the fingerprint it is served for"
                ));
            }
        },
        (None, false, Some(argv)) => {
            if device.is_some() || corral.is_some() {
                return Err(format!(
                    "host {name} runs `command`, which takes neither `device` nor `corral`"
                ));
            }
            Target::Command(argv)
        }
        (None, false, None) => {
            return Err(format!(
                "host {name} needs one of `ssh`, `local = true` and `command`"
            ));
        }
        _ => {
            return Err(format!(
                "host {name} has more than one of `ssh`, `local = true` and `command`"
            ));
        }
    };
    Ok(HostConfig { name, target })
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn every_kind_of_host_parses() {
        let config = parse(
            r#"
[notify]
bell = false
command = "ntfy publish corral"

[[host]]
name = "studio"
ssh = "ana@studio"

[[host]]
name = "build"
ssh = "ci@build"
device = "SHA256:abc"
corral = "/opt/corral"
ssh_options = ["-p", "2222"]

[[host]]
name = "here"
local = true
device = "SHA256:def"

[[host]]
name = "fake"
command = ["sh", "-c", "cat"]
"#,
        )
        .unwrap();
        assert_eq!(
            config.notify,
            NotifyConfig {
                bell: false,
                command: Some("ntfy publish corral".into())
            }
        );
        let targets: Vec<_> = config.hosts.iter().map(|h| h.target.clone()).collect();
        assert_eq!(
            targets,
            [
                Target::Ssh {
                    destination: "ana@studio".into(),
                    device: None,
                    corral: None,
                    options: Vec::new(),
                },
                Target::Ssh {
                    destination: "ci@build".into(),
                    device: Some("SHA256:abc".into()),
                    corral: Some("/opt/corral".into()),
                    options: vec!["-p".into(), "2222".into()],
                },
                Target::Local {
                    device: "SHA256:def".into(),
                    corral: None
                },
                Target::Command(vec!["sh".into(), "-c".into(), "cat".into()]),
            ]
        );
    }

    #[test]
    fn mistakes_are_one_line_naming_the_line() {
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = \"x\"\nport = 22\n"),
            "line 4: unknown field `port`, expected one of `name`, `ssh`, `ssh_options`, `local`, `command`, `device`, `corral`"
        );
        assert_eq!(
            err("[notify]\nbel = true\n"),
            "line 2: unknown field `bel`, expected `bell` or `command`"
        );
        assert_eq!(
            err("hosts = 1\n"),
            "line 1: unknown field `hosts`, expected `notify` or `host`"
        );
        assert_eq!(
            err("\n[[host]]\nname = \"a\"\nlocal = true\n"),
            "line 2: host a is local and needs `device`: the fingerprint it is served for"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\ncommand = [\"x\"]\nssh_options = [\"-p\", \"22\"]\n"),
            "line 1: host a has `ssh_options` but no `ssh`: they are options of ssh"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = \"x\"\nssh_options = \"-p 22\"\n"),
            "line 4: invalid type: string \"-p 22\", expected a sequence"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = \"x\"\n[[host]]\nname = \"a\"\nssh = \"y\"\n"),
            "line 4: two hosts are named a: names must be unique"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = 3\n"),
            "line 3: invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            err("[[host]]\nname = \"a b\"\nssh = \"x\"\n"),
            "line 1: host name \"a b\" has a space or a control character"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = \"\"\n"),
            "line 1: host a: `ssh` cannot be empty"
        );
        assert_eq!(
            err("[[host]]\nname = \"a\"\nssh = \"x\"\ncommand = [\"y\"]\n"),
            "line 1: host a has more than one of `ssh`, `local = true` and `command`"
        );
        let broken = err("[[host]\n");
        assert!(broken.starts_with("line 1: "), "{broken}");
        assert!(!broken.contains('\n'), "{broken}");
    }

    #[test]
    fn flags_make_hosts_and_a_named_file_comes_first() {
        let flags = Flags {
            hosts: vec!["studio=ana@studio".into()],
            locals: vec!["here".into()],
            devices: vec!["here=SHA256:x".into(), "studio=SHA256:y".into()],
            corral: Some("/bin/corral".into()),
            ..Flags::default()
        };
        let never = |_: &Path| -> std::io::Result<String> { panic!("no file is read") };
        let config = resolve(&flags, Some("/nowhere/remote.toml".into()), never).unwrap();
        assert_eq!(config.hosts.len(), 2);
        assert_eq!(
            config.hosts[0].target,
            Target::Ssh {
                destination: "ana@studio".into(),
                device: Some("SHA256:y".into()),
                corral: None,
                options: Vec::new(),
            }
        );
        assert_eq!(
            config.hosts[1].target,
            Target::Local {
                device: "SHA256:x".into(),
                corral: Some("/bin/corral".into())
            }
        );

        let named = Flags {
            config: Some("/etc/r.toml".into()),
            hosts: vec!["b=b.lan".into()],
            ..Flags::default()
        };
        let file = |_: &Path| Ok("[[host]]\nname = \"a\"\nssh = \"a.lan\"\n".to_owned());
        let config = resolve(&named, None, file).unwrap();
        let names: Vec<_> = config.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn flag_mistakes_are_refused() {
        let no_file = |_: &Path| Err(std::io::ErrorKind::NotFound.into());
        let check = |flags: Flags, want: &str| {
            let got = resolve(
                &flags,
                Some("/home/u/.config/corral/remote.toml".into()),
                no_file,
            )
            .unwrap_err()
            .to_string();
            assert_eq!(got, want);
        };
        check(
            Flags {
                locals: vec!["here".into()],
                ..Flags::default()
            },
            "--local here needs the device to serve: add --device here=SHA256:…",
        );
        check(
            Flags {
                hosts: vec!["nohost".into()],
                ..Flags::default()
            },
            "--host nohost: expected NAME=DEST",
        );
        check(
            Flags {
                hosts: vec!["a=x".into()],
                devices: vec!["b=SHA256:z".into()],
                ..Flags::default()
            },
            "--device b=…: no --host or --local is named b",
        );
        check(
            Flags::default(),
            "/home/u/.config/corral/remote.toml: no such file: write one (the format is in `corral-remote --help`) or name hosts with --host NAME=DEST or --local NAME",
        );
    }

    #[test]
    fn the_default_file_honours_xdg_config_home() {
        assert_eq!(
            default_path(Some("/x/conf"), Some("/home/u")),
            Some(PathBuf::from("/x/conf/corral/remote.toml"))
        );
        assert_eq!(
            default_path(Some("relative"), Some("/home/u")),
            Some(PathBuf::from("/home/u/.config/corral/remote.toml"))
        );
        assert_eq!(default_path(None, None), None);
    }
}
