//! One invocation against a server directory, the way tmux's server would see it: refused when
//! no server runs, else under the server's exclusive lock the state is loaded, an injected fault
//! applied, the commands run, the state written back whole and the observable log appended. Also
//! [`edit`], for what the simulator changes that no tmux command can.

use super::cli::Command;
use super::commands;
use super::faults::{self, Effect};
use super::state::{Server, ServerDir};
use super::target;
use super::{Output, PREFIX};

/// Runs parsed commands against the server in `dir`; `with_faults` is false for the second run
/// of a hanging fault, which has been taken already.
pub fn execute(dir: &ServerDir, commands: &[Command], utf8: bool, with_faults: bool) -> Output {
    let starts = commands[0].name == "new-session";
    if !dir.running() && !starts {
        let path = dir.path.display();
        return if dir.exists() {
            Output::fail(&format!("no server running on {path}"))
        } else {
            Output::fail(&format!(
                "error connecting to {path} (No such file or directory)"
            ))
        };
    }
    let lock = match dir.lock(starts) {
        Ok(lock) => lock,
        Err(e) => return Output::fail(&format!("{PREFIX}: locking {}: {e}", dir.path.display())),
    };
    let server = match dir.load() {
        Ok(Some(server)) => server,
        Ok(None) if starts => {
            if let Err(e) = dir.reset() {
                return Output::fail(&format!("{PREFIX}: {}: {e}", dir.path.display()));
            }
            Server {
                next_pid: 100_000,
                start_time: super::state::now_secs(),
                ..Server::default()
            }
        }
        Ok(None) => return Output::fail(&format!("no server running on {}", dir.path.display())),
        Err(e) => return Output::fail(&format!("{PREFIX}: reading state: {e}")),
    };
    if with_faults {
        match injected(dir, &server, commands) {
            Ok(None) => {}
            Ok(Some(Effect::Fail {
                exit_code,
                stderr,
                stdout,
            })) => {
                let line = |text: String| {
                    if text.is_empty() {
                        Vec::new()
                    } else {
                        format!("{text}\n").into_bytes()
                    }
                };
                return Output {
                    stdout: line(stdout),
                    stderr: line(stderr),
                    code: exit_code,
                };
            }
            Ok(Some(Effect::Hang { ms })) => {
                drop(lock);
                faults::hang(dir, ms);
                return execute(dir, commands, utf8, false);
            }
            Ok(Some(Effect::HangAfter { ms })) => {
                drop(lock);
                let output = execute(dir, commands, utf8, false);
                faults::hang(dir, ms);
                return output;
            }
            Err(output) => return output,
        }
    }
    let ran = commands::run(dir, server, commands, utf8, starts, with_faults);
    let stopped = ran.stopped || ran.server.sessions.is_empty();
    let stored = if stopped {
        dir.store(None)
    } else if ran.dirty {
        dir.store(Some(&ran.server))
    } else {
        Ok(())
    };
    let logged = dir.append(&dir.log_file(), &ran.log);
    drop(lock);
    if let Err(e) = stored.and(logged) {
        return Output::fail(&format!("{PREFIX}: writing state: {e}"));
    }
    Output {
        stdout: ran.stdout,
        stderr: ran.stderr,
        code: ran.code,
    }
}

/// The injected fault the invocation hits, taken from the list (its `--times` counted down),
/// or the output of failing to read or write the list.
fn injected(
    dir: &ServerDir,
    server: &Server,
    commands: &[Command],
) -> Result<Option<Effect>, Output> {
    let mut list =
        faults::load(dir).map_err(|e| Output::fail(&format!("{PREFIX}: reading faults: {e}")))?;
    if list.is_empty() {
        return Ok(None);
    }
    let hit = commands.iter().find_map(|command| {
        let pane = command
            .value('t')
            .and_then(|t| target::pane(server, t).ok())
            .map(|pos| format!("%{}", server.pane(pos).id));
        faults::take(&mut list, command.name, pane.as_deref())
    });
    if hit.is_some() {
        faults::store(dir, &list)
            .map_err(|e| Output::fail(&format!("{PREFIX}: writing faults: {e}")))?;
    }
    Ok(hit)
}

/// Changes a running fake server's state under its lock (what the simulator does that no tmux
/// command can, such as attaching a client). Fails when the server does not run.
pub fn edit<T>(dir: &ServerDir, change: impl FnOnce(&mut Server) -> T) -> std::io::Result<T> {
    let _lock = dir.lock(false)?;
    let mut server = dir.load()?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no server running on {}", dir.path.display()),
        )
    })?;
    let result = change(&mut server);
    dir.store(Some(&server))?;
    Ok(result)
}
