//! Integration tests of the `corral` binary: `serve` over real pipes against a scratch tmux
//! server (and the fake tmux), dispatch and its ledger, the device commands, and `corral ls`.

/// Runs each scenario once per backend: `<name>::fake` and `<name>::real`.
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use crate::support::Backend;
            #[test]
            fn fake() {
                super::$scenario(Backend::Fake);
            }
            #[test]
            fn real() {
                super::$scenario(Backend::Real);
            }
        }
    )*};
}

mod support;

mod cli;
mod cursors;
mod devices;
mod disk;
mod dispatch;
mod event;
mod faults;
mod hygiene;
mod kills;
mod ls;
mod notify;
mod permissions;
mod profile;
mod push;
mod races;
mod revocation;
mod serve;
mod shared;
mod ssh;
