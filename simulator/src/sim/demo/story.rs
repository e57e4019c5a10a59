//! The demo's story: what each agent of the fleet does, tick by tick, as a pure function of the
//! seed. Every pane draws from a random stream of its own (seeded from the seed and its index),
//! so what an app does to one pane (approving it early) never changes what the others do; with
//! no app acting, a seed always tells the same story.
//!
//! An idle agent starts a turn; a working one makes progress (its transcript grows, its context
//! fills), asks for something (a permission, a question, or hits a rate limit) or finishes with
//! output nobody has looked at; a blocked one waits long enough for a person to answer from an
//! app, then is answered "at the desk" and works on.

/// The agents the fleet cycles through: every four panes have one of each.
pub const AGENTS: [&str; 4] = ["claude", "opencode", "codex", "gemini"];

/// Tool calls an agent asks permission for: the tool's name and its input, the agent's own JSON
/// object.
pub const CALLS: [(&str, &str); 5] = [
    (
        "Bash",
        r#"{"command":"cargo test --workspace","description":"Run the test suite"}"#,
    ),
    (
        "Bash",
        r#"{"command":"rm -rf target/debug/incremental","description":"Free disk space"}"#,
    ),
    (
        "Edit",
        r#"{"file_path":"src/parser.rs","old_string":"todo!()","new_string":"Ok(tree)"}"#,
    ),
    (
        "Bash",
        r#"{"command":"git push origin HEAD","description":"Push the branch"}"#,
    ),
    (
        "WebFetch",
        r#"{"url":"https://docs.rs/serde","prompt":"How are fields renamed?"}"#,
    ),
];

/// Question sets an agent asks through its HTTP API: JSON arrays of question records.
pub const QUESTIONS: [&str; 3] = [
    r#"[{"question":"Which directories should I clean?","header":"Clean","options":[{"label":"src/","description":"Sources"},{"label":"tests/","description":"Tests"}],"multiple":true,"custom":false}]"#,
    r#"[{"question":"Keep the old API as a deprecated alias?","header":"Compat","options":[{"label":"Yes","description":"One more release"},{"label":"No","description":"Remove it now"}],"multiple":false,"custom":true}]"#,
    r#"[{"question":"Which database should the tests use?","header":"Tests","options":[{"label":"SQLite","description":"In memory, fast"},{"label":"Postgres","description":"As in production"}],"multiple":false,"custom":false}]"#,
];

/// A small, fast generator (SplitMix64): the demo needs repeatable draws, not strong ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    /// A stream for a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }
}

/// What a blocked agent waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// A tool call needs permission (a permission card).
    Permission,
    /// The agent asked questions through its API (a question card).
    Question,
    /// The provider's rate limit (an informational card).
    RateLimit,
}

impl Block {
    /// The `@agent_detail` token.
    pub fn detail(self) -> &'static str {
        match self {
            Block::Permission => "permission",
            Block::Question => "question",
            Block::RateLimit => "rate_limit",
        }
    }
}

/// Where an agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for a prompt.
    Idle,
    /// In a turn.
    Working,
    /// Waiting for a person.
    Blocked(Block),
}

impl Phase {
    /// The `@agent_state` token.
    pub fn state(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Working => "working",
            Phase::Blocked(_) => "blocked",
        }
    }
}

/// One thing an agent does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Idle → working: a new prompt.
    Start,
    /// Working: the transcript grows by `records`, the context window is `context` percent full.
    Progress {
        /// Transcript records added.
        records: u64,
        /// Context use, percent.
        context: u8,
    },
    /// Working → blocked.
    Ask {
        /// On what.
        block: Block,
        /// The agent's own count of its requests, from 1 (request ids are made of it).
        ask: u32,
        /// Which entry of [`CALLS`] (a permission) or [`QUESTIONS`] (a question).
        pick: usize,
    },
    /// Blocked → working: answered at the desk, since no app did.
    Resume,
    /// Working → idle, with output nobody has looked at.
    Finish,
}

/// A move of one pane at one tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beat {
    /// The tick it happens at (the first is 1).
    pub tick: u64,
    /// The pane's index in the fleet.
    pub pane: usize,
    /// What happens.
    pub what: Move,
}

/// One agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Its agent name.
    pub agent: &'static str,
    /// Where it is.
    pub phase: Phase,
    /// Context use, percent.
    pub context: u8,
    rng: Rng,
    /// The tick of its next move.
    due: u64,
    asks: u32,
}

/// Ticks an agent stays in a phase before its next move.
fn pause(phase: Phase, rng: &mut Rng) -> u64 {
    match phase {
        Phase::Idle => rng.range(4, 12),
        Phase::Working => rng.range(2, 5),
        // Long enough to pick up the phone and answer.
        Phase::Blocked(_) => rng.range(24, 48),
    }
}

impl Actor {
    fn new(seed: u64, index: usize) -> Actor {
        let lane = (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut rng = Rng::new(seed ^ lane);
        rng.next_u64();
        let phase = if rng.range(0, 99) < 60 {
            Phase::Working
        } else {
            Phase::Idle
        };
        let context = rng.range(5, 40) as u8;
        // The first moves come soon, so the fleet is lively from the start.
        let due = rng.range(1, 6);
        Actor {
            agent: AGENTS[index % AGENTS.len()],
            phase,
            context,
            rng,
            due,
            asks: 0,
        }
    }

    /// What an agent of this kind blocks on.
    fn block(&mut self) -> Block {
        let roll = self.rng.range(0, 99);
        match self.agent {
            // Only the agent with an HTTP question API asks questions there.
            "opencode" if roll < 50 => Block::Question,
            "opencode" if roll < 90 => Block::Permission,
            "opencode" => Block::RateLimit,
            _ if roll < 85 => Block::Permission,
            _ => Block::RateLimit,
        }
    }

    fn decide(&mut self) -> Move {
        match self.phase {
            Phase::Idle => {
                if self.context > 85 {
                    // Compacted between tasks.
                    self.context = self.rng.range(5, 20) as u8;
                }
                self.phase = Phase::Working;
                Move::Start
            }
            Phase::Working => {
                let roll = self.rng.range(0, 99);
                if roll < 55 {
                    let records = self.rng.range(2, 8);
                    let context = (u64::from(self.context) + self.rng.range(1, 6)).min(97) as u8;
                    self.context = context;
                    Move::Progress { records, context }
                } else if roll < 80 {
                    let block = self.block();
                    self.asks += 1;
                    let choices = match block {
                        Block::Question => QUESTIONS.len(),
                        Block::Permission | Block::RateLimit => CALLS.len(),
                    };
                    let pick = self.rng.range(0, choices as u64 - 1) as usize;
                    self.phase = Phase::Blocked(block);
                    Move::Ask {
                        block,
                        ask: self.asks,
                        pick,
                    }
                } else {
                    self.phase = Phase::Idle;
                    Move::Finish
                }
            }
            Phase::Blocked(_) => {
                self.phase = Phase::Working;
                Move::Resume
            }
        }
    }
}

/// The whole fleet's story.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    /// The agents, by pane index.
    pub actors: Vec<Actor>,
    tick: u64,
}

impl Story {
    /// The story of `panes` agents told from `seed`.
    pub fn new(seed: u64, panes: usize) -> Story {
        Story {
            actors: (0..panes).map(|i| Actor::new(seed, i)).collect(),
            tick: 0,
        }
    }

    /// The next tick: every move due at it, by pane.
    pub fn advance(&mut self) -> Vec<Beat> {
        self.tick += 1;
        let tick = self.tick;
        let mut beats = Vec::new();
        for (pane, actor) in self.actors.iter_mut().enumerate() {
            if actor.due > tick {
                continue;
            }
            let what = actor.decide();
            actor.due = tick + pause(actor.phase, &mut actor.rng);
            beats.push(Beat { tick, pane, what });
        }
        beats
    }

    /// Something outside the story moved a pane (an app answered it, steered it, interrupted
    /// it): it goes on from `phase`, its next move drawn from its own stream.
    pub fn moved(&mut self, pane: usize, phase: Phase) {
        let tick = self.tick;
        if let Some(actor) = self.actors.get_mut(pane) {
            actor.phase = phase;
            actor.due = tick + pause(phase, &mut actor.rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(seed: u64, panes: usize, ticks: u64) -> Vec<Beat> {
        let mut story = Story::new(seed, panes);
        (0..ticks).flat_map(|_| story.advance()).collect()
    }

    #[test]
    fn a_seed_tells_the_same_story_and_another_seed_another() {
        assert_eq!(told(7, 6, 400), told(7, 6, 400));
        assert_ne!(told(7, 6, 400), told(8, 6, 400));
        assert_eq!(Story::new(7, 6), Story::new(7, 6));
    }

    #[test]
    fn moves_follow_the_phases() {
        let mut story = Story::new(3, 8);
        let mut phases: Vec<Phase> = story.actors.iter().map(|a| a.phase).collect();
        for _ in 0..2000 {
            for beat in story.advance() {
                let before = phases[beat.pane];
                let after = match (before, beat.what) {
                    (Phase::Idle, Move::Start) => Phase::Working,
                    (Phase::Working, Move::Progress { context, .. }) => {
                        assert!(context <= 97);
                        Phase::Working
                    }
                    (Phase::Working, Move::Ask { block, pick, .. }) => {
                        let choices = match block {
                            Block::Question => QUESTIONS.len(),
                            _ => CALLS.len(),
                        };
                        assert!(pick < choices);
                        Phase::Blocked(block)
                    }
                    (Phase::Working, Move::Finish) => Phase::Idle,
                    (Phase::Blocked(_), Move::Resume) => Phase::Working,
                    (phase, what) => panic!("{what:?} from {phase:?}"),
                };
                assert_eq!(story.actors[beat.pane].phase, after);
                phases[beat.pane] = after;
            }
        }
    }

    #[test]
    fn every_kind_of_move_happens_soon_and_only_opencode_asks_questions() {
        let beats = told(1, 4, 300);
        let any = |f: &dyn Fn(&Beat) -> bool| beats.iter().any(f);
        assert!(any(&|b| b.what == Move::Start));
        assert!(any(&|b| matches!(b.what, Move::Progress { .. })));
        assert!(any(&|b| b.what == Move::Resume));
        assert!(any(&|b| b.what == Move::Finish));
        for block in [Block::Permission, Block::Question, Block::RateLimit] {
            assert!(
                any(&|b| matches!(b.what, Move::Ask { block: got, .. } if got == block)),
                "no {block:?}"
            );
        }
        for beat in &beats {
            if let Move::Ask {
                block: Block::Question,
                ..
            } = beat.what
            {
                assert_eq!(AGENTS[beat.pane % 4], "opencode");
            }
        }
        // The first block comes within the first few seconds at any speed.
        let first = beats
            .iter()
            .find(|b| matches!(b.what, Move::Ask { .. }))
            .unwrap();
        assert!(first.tick <= 20, "{first:?}");
    }

    #[test]
    fn asks_are_counted_per_agent() {
        let beats = told(5, 2, 500);
        for pane in 0..2 {
            let asks: Vec<u32> = beats
                .iter()
                .filter(|b| b.pane == pane)
                .filter_map(|b| match b.what {
                    Move::Ask { ask, .. } => Some(ask),
                    _ => None,
                })
                .collect();
            assert!(!asks.is_empty());
            assert_eq!(asks, (1..=asks.len() as u32).collect::<Vec<_>>());
        }
    }

    #[test]
    fn what_an_app_does_to_one_pane_leaves_the_others_story_alone() {
        let mut plain = Story::new(11, 4);
        let mut touched = Story::new(11, 4);
        let mut others_plain = Vec::new();
        let mut others_touched = Vec::new();
        for tick in 0..300 {
            others_plain.extend(plain.advance().into_iter().filter(|b| b.pane != 2));
            let beats = touched.advance();
            if tick % 7 == 0 {
                touched.moved(2, Phase::Working);
            }
            others_touched.extend(beats.into_iter().filter(|b| b.pane != 2));
        }
        assert_eq!(others_plain, others_touched);
    }

    #[test]
    fn a_moved_pane_goes_on_from_its_new_phase() {
        let mut story = Story::new(2, 1);
        story.actors[0].phase = Phase::Blocked(Block::Permission);
        story.moved(0, Phase::Working);
        let next = (0..100).flat_map(|_| story.advance()).next().unwrap();
        assert!(
            matches!(
                next.what,
                Move::Progress { .. } | Move::Ask { .. } | Move::Finish
            ),
            "{next:?}"
        );
    }
}
