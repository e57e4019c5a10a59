//! Integration tests of the conformance kit, run as built binaries: `corral-conformance` against
//! the reference host (installed, disguised, dying, minimal, its HTML report), `corral-sim
//! replay` against scripted clients, and the `--help` and versions of the three binaries the kit
//! installs. Each runs in its own temp dirs with unique socket names.

mod common;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod disguise;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod dying_host;
mod help;
// `corral-conformance` is built only with the kit embedded (the default).
#[cfg(feature = "embed")]
mod installed;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod minimal_host;
mod replay;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod report_html;
