//! Integration tests of corral-fake-tmux and corral-sim, run as built binaries.
