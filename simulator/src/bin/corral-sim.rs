//! `corral-sim`: the agent simulator's command line.

fn main() {}
