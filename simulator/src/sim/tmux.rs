//! Runs tmux commands on the fleet's backend, real or fake, through the same command line:
//! `<tmux_bin> -L <socket> -f /dev/null cmd ... ; cmd ...`, batched so a 1000-pane fleet takes a
//! few dozen processes rather than thousands. A real tmux client refuses a command message over
//! 16 KiB, so real batches stay under 12 KB of arguments.

use std::path::Path;

use anyhow::{Context, bail};
use golden::{Backend, SimFile};

/// One tmux command (its argv without the program).
pub type Cmd = Vec<String>;

/// Builds a command from string slices.
pub fn cmd(words: &[&str]) -> Cmd {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The tmux to talk to.
#[derive(Debug, Clone)]
pub struct Tmux {
    /// Binary.
    pub bin: String,
    /// `-L` name.
    pub socket: String,
    /// Which backend.
    pub backend: Backend,
}

/// What a tmux invocation printed.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Exit status (-1 when killed by a signal).
    pub code: i32,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
}

/// Escapes an argument so tmux's `;` splitting leaves it whole: a trailing `;` becomes `\;`.
pub fn escape_arg(arg: &str) -> String {
    match arg.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => arg.to_owned(),
    }
}

impl Tmux {
    /// The fleet's tmux, from sim.json.
    pub fn of(sim: &SimFile) -> Tmux {
        Tmux {
            bin: sim.tmux_bin.clone(),
            socket: sim.socket.clone(),
            backend: sim.backend,
        }
    }

    /// Runs one invocation made of `commands` joined by `;`.
    pub fn run(&self, commands: &[Cmd], sim_dir: &Path) -> anyhow::Result<Ran> {
        let mut args: Vec<String> = vec![
            "-L".into(),
            self.socket.clone(),
            "-f".into(),
            "/dev/null".into(),
        ];
        for (i, command) in commands.iter().enumerate() {
            if i > 0 {
                args.push(";".into());
            }
            args.extend(command.iter().map(|a| escape_arg(a)));
        }
        let output = crate::process::command(&self.bin)
            .args(&args)
            .env(crate::env::SIM_DIR_VAR, sim_dir)
            .env("LC_ALL", "C.UTF-8")
            .output()
            .with_context(|| format!("running {}", self.bin))?;
        Ok(Ran {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }

    /// Runs one invocation and fails on a non-zero exit.
    pub fn ok(&self, commands: &[Cmd], sim_dir: &Path) -> anyhow::Result<String> {
        let ran = self.run(commands, sim_dir)?;
        if ran.code != 0 {
            bail!(
                "{} failed ({}): {}",
                commands.first().map(|c| c.join(" ")).unwrap_or_default(),
                ran.code,
                ran.stderr.trim()
            );
        }
        Ok(ran.stdout)
    }

    /// Runs `commands` in as few invocations as the backend allows; returns all stdout.
    pub fn batch(&self, commands: &[Cmd], sim_dir: &Path) -> anyhow::Result<String> {
        let limit = match self.backend {
            Backend::Real => 12_000,
            Backend::Fake => 400_000,
        };
        let mut out = String::new();
        let mut chunk: Vec<Cmd> = Vec::new();
        let mut size = 0;
        for command in commands {
            let len: usize = command.iter().map(|a| a.len() + 2).sum::<usize>() + 2;
            if !chunk.is_empty() && size + len > limit {
                out.push_str(&self.ok(&chunk, sim_dir)?);
                chunk.clear();
                size = 0;
            }
            size += len;
            chunk.push(command.clone());
        }
        if !chunk.is_empty() {
            out.push_str(&self.ok(&chunk, sim_dir)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_semicolons_survive() {
        assert_eq!(escape_arg("a;"), "a\\;");
        assert_eq!(escape_arg("a;b"), "a;b");
        assert_eq!(escape_arg(";"), "\\;");
        let split = crate::fake::cli::split_commands(&[
            "set".into(),
            escape_arg("x;"),
            ";".into(),
            "b".into(),
        ]);
        assert_eq!(
            split,
            vec![
                vec!["set".to_owned(), "x;".to_owned()],
                vec!["b".to_owned()]
            ]
        );
    }
}
