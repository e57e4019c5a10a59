//! `corral-remote`: parses the command line, resolves the configuration, runs a front-end, and
//! maps the outcome to an exit code (2: a bad command line or config, 1: a failure).

use std::process::ExitCode;

use clap::Parser;

use client::cli::Cli;
use client::config;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.replay {
        return client::replay::main(cli.list);
    }
    let default = config::default_path(
        std::env::var("XDG_CONFIG_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    );
    let config = match config::resolve(&cli.flags(), default, |path| std::fs::read_to_string(path))
    {
        Ok(config) => config,
        Err(err) => {
            eprintln!("corral-remote: {err}");
            return ExitCode::from(2);
        }
    };
    let ran = if cli.ndjson {
        client::headless::run(config)
    } else {
        client::tui::run(config)
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("corral-remote: {err:#}");
            ExitCode::from(1)
        }
    }
}
