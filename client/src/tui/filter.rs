//! The filter of the fleet list as a line the person types and reads back:
//! `host=NAME state=blocked,done agent=NAME` (any of them; empty: no filter).

use client_core::client::Client;
use client_core::fleet::{Filter, StateWanted};

use super::editor::{Edit, Editor};

/// The filter editor starts with the filter as it is.
pub(super) fn filter_editor(filter: &Filter, _client: &Client) -> Editor {
    let mut editor = Editor::default();
    for c in show_filter(filter).chars() {
        editor.apply(Edit::Insert(c));
    }
    editor
}

/// The filter as the editor reads it.
pub fn show_filter(filter: &Filter) -> String {
    let mut words = Vec::new();
    if let Some(host) = &filter.host {
        words.push(format!("host={host}"));
    }
    if !filter.states.is_empty() {
        let states: Vec<String> = filter
            .states
            .iter()
            .map(|s| match s {
                StateWanted::Is(state) => state.to_string(),
                StateWanted::Done => "done".to_owned(),
            })
            .collect();
        words.push(format!("state={}", states.join(",")));
    }
    if let Some(agent) = &filter.agent {
        words.push(format!("agent={agent}"));
    }
    words.join(" ")
}

/// Reads `host=NAME state=blocked,done agent=NAME` (any of them; empty: no filter).
pub fn parse_filter(text: &str, client: &Client) -> Result<Filter, String> {
    let mut filter = Filter::default();
    for word in text.split_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            return Err(format!(
                "filter: {word:?} is not KEY=VALUE (host, state, agent)"
            ));
        };
        match key {
            "host" => {
                if client.fleet().find(value).is_none() {
                    return Err(format!("filter: no host is named {value}"));
                }
                filter.host = Some(value.to_owned());
            }
            "agent" => filter.agent = Some(value.to_owned()),
            "state" => {
                for state in value.split(',') {
                    filter.states.push(StateWanted::parse(state).ok_or_else(|| {
                        format!(
                            "filter: unknown state {state} (idle, working, blocked, unknown, done)"
                        )
                    })?);
                }
            }
            other => return Err(format!("filter: unknown key {other} (host, state, agent)")),
        }
    }
    Ok(filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::client;

    #[test]
    fn the_filter_is_typed_and_read_back() {
        let client = client();
        let filter = parse_filter("host=b state=blocked,done agent=claude", &client).unwrap();
        assert_eq!(
            show_filter(&filter),
            "host=b state=blocked,done agent=claude"
        );
        assert_eq!(
            parse_filter("state=sleeping", &client).unwrap_err(),
            "filter: unknown state sleeping (idle, working, blocked, unknown, done)"
        );
        assert_eq!(
            parse_filter("host=zzz", &client).unwrap_err(),
            "filter: no host is named zzz"
        );
        assert_eq!(
            parse_filter("blocked", &client).unwrap_err(),
            "filter: \"blocked\" is not KEY=VALUE (host, state, agent)"
        );
        assert_eq!(parse_filter("", &client).unwrap(), Filter::default());
        let editor = filter_editor(&filter, &client);
        assert_eq!(editor.text(), "host=b state=blocked,done agent=claude");
    }
}
