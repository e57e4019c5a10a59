//! Edges between two reads of the fleet (wire-details "Edges"): one per pane whose state moved,
//! `""` for the open end of a pane's life. A detail change without a state change is no edge.

use std::collections::HashMap;

use schema::{Edge, FleetRow, Selector};

use crate::selector::admits;

/// The edges from `before` to `after`, observed at `at_ms`, for the rows `selector` admits on
/// either side of the move (so a client sees a pane leave its scope). Panes that moved or appeared
/// come in `after`'s order, then panes that vanished in `before`'s order.
pub fn edges(
    before: &[FleetRow],
    after: &[FleetRow],
    selector: Option<&Selector>,
    at_ms: u64,
) -> Vec<Edge> {
    let old: HashMap<&str, &FleetRow> = before.iter().map(|r| (r.pane.as_str(), r)).collect();
    let new: HashMap<&str, &FleetRow> = after.iter().map(|r| (r.pane.as_str(), r)).collect();
    let mut out = Vec::new();
    for row in after {
        let prev = old.get(row.pane.as_str()).copied();
        if prev.is_some_and(|p| p.state == row.state) {
            continue;
        }
        if admits(selector, row) || prev.is_some_and(|p| admits(selector, p)) {
            out.push(edge(prev.map(|p| p.state), Some(row.state), row, at_ms));
        }
    }
    for row in before {
        if !new.contains_key(row.pane.as_str()) && admits(selector, row) {
            out.push(edge(Some(row.state), None, row, at_ms));
        }
    }
    out
}

fn edge(
    from: Option<schema::State>,
    to: Option<schema::State>,
    row: &FleetRow,
    at_ms: u64,
) -> Edge {
    Edge {
        at_ms,
        pane: row.pane.clone(),
        agent: row.agent.clone(),
        from,
        to,
        detail: row.detail.clone(),
        locator: row.locator.clone(),
        repo: row.repo.clone(),
        branch: row.branch.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;
    use schema::{Detail, State};

    fn summary(edges: &[Edge]) -> Vec<(String, Option<State>, Option<State>)> {
        edges
            .iter()
            .map(|e| (e.pane.clone(), e.from, e.to))
            .collect()
    }

    #[test]
    fn a_state_change_is_one_edge_and_a_detail_change_is_none() {
        let before = vec![row("%1", State::Working), row("%2", State::Blocked)];
        let mut after = vec![row("%1", State::Blocked), row("%2", State::Blocked)];
        after[1].detail = Some(Detail::Plan);
        let got = edges(&before, &after, None, 7);
        assert_eq!(
            summary(&got),
            [("%1".to_owned(), Some(State::Working), Some(State::Blocked))]
        );
        assert_eq!(got[0].at_ms, 7);
    }

    #[test]
    fn appear_and_vanish_use_the_open_end() {
        let before = vec![row("%1", State::Idle)];
        let after = vec![row("%2", State::Working)];
        assert_eq!(
            summary(&edges(&before, &after, None, 0)),
            [
                ("%2".to_owned(), None, Some(State::Working)),
                ("%1".to_owned(), Some(State::Idle), None)
            ]
        );
    }

    #[test]
    fn a_turn_completion_is_always_an_edge() {
        let before = vec![row("%1", State::Working)];
        let mut after = vec![row("%1", State::Idle)];
        after[0].attention = true;
        after[0].done = true;
        assert_eq!(summary(&edges(&before, &after, None, 0)).len(), 1);
    }

    #[test]
    fn the_selector_admits_a_move_into_or_out_of_scope() {
        let blocked: Selector = serde_json::from_str(r#"{"state":["blocked"]}"#).unwrap();
        let before = vec![
            row("%1", State::Working),
            row("%2", State::Blocked),
            row("%3", State::Idle),
        ];
        let after = vec![
            row("%1", State::Blocked),
            row("%2", State::Working),
            row("%3", State::Working),
        ];
        assert_eq!(
            summary(&edges(&before, &after, Some(&blocked), 0)),
            [
                ("%1".to_owned(), Some(State::Working), Some(State::Blocked)),
                ("%2".to_owned(), Some(State::Blocked), Some(State::Working)),
            ]
        );
    }
}
