//! Order-free matching: assigns received frames to patterns as a whole. A greedy first match can
//! give a frame to the wrong pattern and then fail a set that does match; this searches the
//! assignments (with captures carried along each branch), so it fails only when none exists.

use serde_json::Value;

use golden::clock::Window;
use golden::pattern::{self, Captures, Mismatch};

/// Why no assignment exists, with the pairing a reader should look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAssignment {
    /// For each pattern, the frame shown beside it in the failure (the best candidate).
    pub pairing: Vec<usize>,
    /// The first pattern that no remaining frame could take, and why its shown frame fails it.
    pub pattern: usize,
    pub mismatch: Mismatch,
}

/// Finds `assignment[pattern] = frame` such that every frame matches its pattern under one set
/// of captures (a `$now` inside `now`), each frame's exact key sets also admitting the members
/// at its `tolerated` paths (none for a frame past the slice's end). On success the captures
/// hold the bindings of that assignment.
pub fn assign(
    patterns: &[Value],
    frames: &[Value],
    tolerated: &[Vec<String>],
    captures: &mut Captures,
    now: Window,
) -> Result<Vec<usize>, NoAssignment> {
    let mut used = vec![false; frames.len()];
    let mut chosen = Vec::with_capacity(patterns.len());
    let mut search = Search {
        patterns,
        frames,
        tolerated,
        now,
    };
    if patterns.len() == frames.len() && search.search(&mut used, &mut chosen, captures) {
        return Ok(chosen);
    }
    Err(search.explain(captures))
}

/// One assignment problem.
struct Search<'a> {
    patterns: &'a [Value],
    frames: &'a [Value],
    tolerated: &'a [Vec<String>],
    now: Window,
}

impl Search<'_> {
    /// Whether frame `frame` matches `pattern`, binding into `captures`.
    fn fits(&self, pattern: &Value, frame: usize, captures: &mut Captures) -> Result<(), Mismatch> {
        let tolerated = self.tolerated.get(frame).map_or(&[][..], Vec::as_slice);
        pattern::matches_tolerating(pattern, &self.frames[frame], captures, self.now, tolerated)
    }

    fn search(
        &mut self,
        used: &mut [bool],
        chosen: &mut Vec<usize>,
        captures: &mut Captures,
    ) -> bool {
        let (patterns, frames) = (self.patterns, self.frames);
        let Some(pattern) = patterns.get(chosen.len()) else {
            return true;
        };
        for frame in 0..frames.len() {
            if used[frame] {
                continue;
            }
            let mut trial = captures.clone();
            if self.fits(pattern, frame, &mut trial).is_err() {
                continue;
            }
            used[frame] = true;
            chosen.push(frame);
            if self.search(used, chosen, &mut trial) {
                *captures = trial;
                return true;
            }
            chosen.pop();
            used[frame] = false;
        }
        false
    }

    /// Similarity of a frame to a pattern: the number of top-level members they agree on.
    fn score(&self, pattern: &Value, frame: &Value, captures: &Captures) -> usize {
        let (Some(pattern), Some(frame)) = (pattern.as_object(), frame.as_object()) else {
            return 0;
        };
        pattern
            .iter()
            .filter(|(key, want)| {
                frame.get(key.as_str()).is_some_and(|got| {
                    pattern::matches(want, got, &mut captures.clone(), self.now).is_ok()
                })
            })
            .count()
    }

    fn explain(&self, captures: &Captures) -> NoAssignment {
        let (patterns, frames) = (self.patterns, self.frames);
        // Pair greedily by similarity, for display only; the search above already proved that no
        // assignment exists.
        let mut taken = vec![false; frames.len()];
        let mut pairing = Vec::new();
        for pattern in patterns {
            let best = (0..frames.len())
                .filter(|f| !taken[*f])
                .max_by_key(|f| (self.score(pattern, &frames[*f], captures), usize::MAX - f));
            if let Some(best) = best {
                taken[best] = true;
            }
            pairing.push(best.unwrap_or(usize::MAX));
        }
        let mut bound = captures.clone();
        for (index, pattern) in patterns.iter().enumerate() {
            if frames.get(pairing[index]).is_none() {
                return NoAssignment {
                    pairing,
                    pattern: index,
                    mismatch: Mismatch {
                        path: String::new(),
                        reason: format!(
                            "{} patterns but {} frames were received",
                            patterns.len(),
                            frames.len()
                        ),
                    },
                };
            }
            if let Err(mismatch) = self.fits(pattern, pairing[index], &mut bound) {
                return NoAssignment {
                    pairing,
                    pattern: index,
                    mismatch,
                };
            }
        }
        NoAssignment {
            pattern: 0,
            mismatch: Mismatch {
                path: String::new(),
                reason: "each frame matches some pattern, but the captures cannot agree on one \
                     assignment"
                    .into(),
            },
            pairing,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn frames_in_any_order_are_assigned() {
        let patterns = [json!({"id": "1"}), json!({"id": "2"})];
        let frames = [json!({"id": "2"}), json!({"id": "1"})];
        assert_eq!(
            assign(&patterns, &frames, &[], &mut Captures::new(), Window::ANY).unwrap(),
            [1, 0]
        );
    }

    #[test]
    fn a_greedy_first_match_would_fail_where_an_assignment_exists() {
        // The wildcard pattern comes first and would greedily take the only frame the literal
        // pattern accepts.
        let patterns = [json!({"to": "$string"}), json!({"to": "idle"})];
        let frames = [json!({"to": "idle"}), json!({"to": "blocked"})];
        assert_eq!(
            assign(&patterns, &frames, &[], &mut Captures::new(), Window::ANY).unwrap(),
            [1, 0]
        );
    }

    #[test]
    fn captures_are_bound_by_the_assignment_that_succeeds() {
        let patterns = [
            json!({"pane": "$string:p", "to": "idle"}),
            json!({"pane": "${p}"}),
        ];
        let frames = [json!({"pane": "%2"}), json!({"pane": "%2", "to": "idle"})];
        let mut captures = Captures::new();
        assert_eq!(
            assign(&patterns, &frames, &[], &mut captures, Window::ANY).unwrap(),
            [1, 0]
        );
        assert_eq!(captures["p"], json!("%2"));
    }

    #[test]
    fn captures_that_cannot_agree_fail_the_set() {
        let patterns = [json!({"a": "$int:x"}), json!({"b": "$int:x"})];
        let frames = [json!({"a": 1}), json!({"b": 2})];
        let err = assign(&patterns, &frames, &[], &mut Captures::new(), Window::ANY).unwrap_err();
        assert_eq!(err.pattern, 1);
        assert!(err.mismatch.reason.contains("bound to 1"), "{err:?}");
    }

    #[test]
    fn the_failure_pairs_each_pattern_with_its_most_similar_frame() {
        let patterns = [
            json!({"id": "1", "t": "ack"}),
            json!({"id": "2", "t": "edge"}),
        ];
        let frames = [
            json!({"id": "2", "t": "snapshot"}),
            json!({"id": "1", "t": "ack"}),
        ];
        let err = assign(&patterns, &frames, &[], &mut Captures::new(), Window::ANY).unwrap_err();
        assert_eq!(err.pairing, [1, 0]);
        assert_eq!(err.pattern, 1);
        assert_eq!(err.mismatch.path, "/t");
    }
}
