//! Integration tests of the `corral` binary: `serve` over real pipes against a scratch tmux
//! server (and the fake tmux), the device commands, and `corral ls`.

mod support;

mod devices;
mod faults;
mod ls;
mod permissions;
mod serve;
