//! `corral-sim`: fleet fixtures on the fake or a real scratch tmux, steps, transcripts, the agent
//! HTTP API.
