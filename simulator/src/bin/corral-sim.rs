//! `corral-sim`: the agent simulator's command line; everything is in [`simulator::sim`].

fn main() -> std::process::ExitCode {
    simulator::sim::main()
}
