//! `minimal-host`: a deliberately minimal host of the fleet wire protocol, written from
//! docs/protocol.md alone (never from corral's code, and using none of its crates), for the
//! conformance kit's test that a doc-following host fails only the cases whose requirements it
//! breaks on purpose (`conformance/tests/it/minimal_host.rs`, its profile `minimal.toml` beside
//! this directory). It has no action manifests (so every dispatch is refused at the scope gate), no
//! transcript reader (every window and event on a transcript it finds is `unsupported`), no hook
//! entry, no notification daemon and no command line but `serve`:
//!
//! ```text
//! minimal-host serve --device <device id>
//! ```
//!
//! Its tool name is `minimal`: its config is `$MINIMAL_CONFIG` (else
//! `$XDG_CONFIG_HOME/minimal/config.toml`), its device store
//! `$XDG_CONFIG_HOME/minimal/devices.toml`, its runtime dir `$XDG_RUNTIME_DIR/minimal` (else
//! `$TMPDIR/minimal-<uid>`), its tmux `$MINIMAL_TMUX_BIN` on `$MINIMAL_TMUX_SOCKET`. Everything
//! else is as the protocol says, section by section, in these modules: `places` (the config,
//! the device store, the runtime dir, connection slots), `wire` (lines, envelopes and request
//! bodies), `fleet` (the tmux read, rows, selectors, edges), `cards` (cards and the question
//! fetch), `session` (the serve loop, streams and the outbox).

mod cards;
mod fleet;
mod places;
mod session;
mod wire;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let device = match args.as_slice() {
        [serve, flag, device] if serve == "serve" && flag == "--device" => device.clone(),
        _ => {
            eprintln!("usage: minimal-host serve --device <device id>");
            std::process::exit(2);
        }
    };
    session::serve(&device);
}
