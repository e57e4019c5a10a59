//! `corral`: the reference host. Built out in the host issues.

fn main() {}
