//! The agent simulator and the fake tmux. Built out in the simulator issue.
