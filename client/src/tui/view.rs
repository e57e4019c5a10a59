//! Drawing: the header (each host's link and counts), the fleet list (grouped by host, blocked
//! first with how long they waited), the panel (the selected pane's card, its transcript, or one
//! event), the status line (the last receipt or fault) and the key line (or the line editor).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};
use schema::{Binder, Card, EventHeader, Extraction, FleetRow, State};

use super::filter::show_filter;
use super::state::{Absent, Focus, Purpose, Ui, absent_words, waited};
use client_core::client::{CARD_CHANGED, Client, binder_of};
use client_core::fleet::{Link, human_duration};

/// Draws one frame, and records what its panel shows: what the next key acts on.
pub fn draw(frame: &mut Frame<'_>, ui: &mut Ui, client: &Client, now_ms: u64) {
    let area = frame.area();
    ui.size = (area.width, area.height);
    ui.seen(client);
    let hosts = client.fleet().hosts().len() as u16;
    let panel = match ui.focus() {
        Focus::Fleet => Constraint::Percentage(35),
        _ => Constraint::Percentage(55),
    };
    let [header, list, panel, status, keys] = Layout::vertical([
        Constraint::Length(hosts.clamp(1, 6)),
        Constraint::Min(3),
        panel,
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(frame, header, client, now_ms);
    draw_fleet(frame, list, ui, client, now_ms);
    match ui.focus() {
        Focus::Fleet => draw_pane(frame, panel, ui, client, now_ms),
        Focus::Transcript {
            host,
            pane,
            selected,
        } => draw_transcript(frame, panel, client, host, &pane, selected),
        Focus::Event {
            host,
            pane,
            event,
            scroll,
        } => draw_event(frame, panel, client, host, &pane, &event, scroll),
    }
    frame.render_widget(
        Paragraph::new(ui.status.as_str()).style(Style::new().fg(Color::Yellow)),
        status,
    );
    if let Some(read) = ui.keys_read {
        frame.render_widget(
            Paragraph::new(format!(" [keys {read} · sent {}]", ui.answers_sent))
                .alignment(ratatui::layout::Alignment::Right),
            status,
        );
    }
    draw_keys(frame, keys, ui, client);
    if ui.help {
        draw_help(frame, area);
    }
}

fn state_style(row: &FleetRow) -> (String, Style) {
    match row.state {
        State::Blocked => (
            "BLOCKED".into(),
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        State::Working => ("working".into(), Style::new().fg(Color::Yellow)),
        State::Idle if row.done => ("done".into(), Style::new().fg(Color::Cyan)),
        State::Idle => ("idle".into(), Style::new().fg(Color::Green)),
        State::Unknown => ("unknown".into(), Style::new().fg(Color::DarkGray)),
    }
}

fn draw_header(frame: &mut Frame<'_>, area: Rect, client: &Client, now_ms: u64) {
    let fleet = client.fleet();
    let lines: Vec<Line<'_>> = fleet
        .hosts()
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let (mark, style) = match &host.link {
                Link::Connected => ("●", Style::new().fg(Color::Green)),
                Link::Connecting => ("◌", Style::new().fg(Color::Yellow)),
                Link::Down { .. } => ("○", Style::new().fg(Color::Red)),
                Link::Revoked { .. } => ("✗", Style::new().fg(Color::Magenta)),
            };
            let counts = fleet.counts(index);
            let mut spans = vec![
                Span::styled(format!("{mark} "), style),
                Span::styled(host.name.clone(), Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(format!(" {}  ", host.link.word())),
            ];
            if counts.total > 0 || matches!(host.link, Link::Connected) {
                spans.push(Span::raw(format!("{} agents: ", counts.total)));
                spans.push(Span::styled(
                    format!("{} blocked", counts.blocked),
                    if counts.blocked > 0 {
                        Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
                    } else {
                        Style::new()
                    },
                ));
                spans.push(Span::raw(format!(
                    ", {} working, {} idle ({} done), {} unknown",
                    counts.working, counts.idle, counts.done, counts.unknown
                )));
            }
            match &host.link {
                Link::Down { reason, .. } | Link::Revoked { reason } => {
                    if let Some(news) = host.last_news_ms {
                        spans.push(Span::styled(
                            format!(
                                "  rows as of {} ago",
                                human_duration(now_ms.saturating_sub(news))
                            ),
                            Style::new().fg(Color::DarkGray),
                        ));
                    }
                    spans.push(Span::styled(
                        format!("  {reason}"),
                        Style::new().fg(Color::Red),
                    ));
                }
                Link::Connected => {
                    if let Some(hello) = &host.hello {
                        let scopes: Vec<String> =
                            hello.scopes.iter().map(|s| s.to_string()).collect();
                        spans.push(Span::styled(
                            format!("  [{}]", scopes.join(" ")),
                            Style::new().fg(Color::DarkGray),
                        ));
                    }
                }
                Link::Connecting => {}
            }
            if let Some(fault) = &host.fault {
                spans.push(Span::styled(
                    format!("  faults: {}", fault.count),
                    Style::new().fg(Color::Magenta),
                ));
            }
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_fleet(frame: &mut Frame<'_>, area: Rect, ui: &mut Ui, client: &Client, now_ms: u64) {
    let fleet = client.fleet();
    let shown = fleet.shown(&ui.filter);
    let selection = ui.selection();
    let mut selected = None;
    let rows: Vec<Row<'_>> = shown
        .iter()
        .enumerate()
        .map(|(i, (host, row))| {
            if selection.as_ref() == Some(&(*host, row.pane.clone())) {
                selected = Some(i);
            }
            let (state, mut style) = state_style(row);
            // A disconnected host's rows are what it last said: dimmed, never shown as live.
            let stale = fleet.host(*host).stale();
            if stale {
                style = Style::new().fg(Color::DarkGray);
            }
            let wait = if row.state == State::Blocked {
                waited(row.since_ms, now_ms)
            } else {
                String::new()
            };
            let place = match (&row.repo, &row.branch) {
                (Some(repo), Some(branch)) => format!("{repo}/{branch}"),
                (Some(repo), None) => repo.clone(),
                _ => row.session.clone(),
            };
            let context = row.context.map(|c| format!("{c}%")).unwrap_or_default();
            let flags = format!(
                "{}{}",
                if row.muted { "muted " } else { "" },
                if row.attention && !row.done { "*" } else { "" }
            );
            let dim = if stale {
                Style::new().fg(Color::DarkGray)
            } else {
                Style::new()
            };
            Row::new(vec![
                Cell::from(fleet.host(*host).name.clone()),
                Cell::from(row.pane.clone()),
                Cell::from(row.agent.clone()),
                Cell::from(state).style(style),
                Cell::from(wait),
                Cell::from(
                    row.detail
                        .as_ref()
                        .map(|d| d.to_string())
                        .unwrap_or_default(),
                ),
                Cell::from(place),
                Cell::from(context),
                Cell::from(if stale { "stale".to_owned() } else { flags }),
            ])
            .style(dim)
        })
        .collect();
    let title = if ui.filter.is_empty() {
        " agents ".to_owned()
    } else {
        format!(" agents · filter: {} ", show_filter(&ui.filter))
    };
    let table = Table::new(
        rows,
        [
            Constraint::Max(12),
            Constraint::Length(5),
            Constraint::Max(12),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Max(12),
            Constraint::Fill(1),
            Constraint::Length(4),
            Constraint::Length(7),
        ],
    )
    .header(
        Row::new([
            "host",
            "pane",
            "agent",
            "state",
            "waited",
            "detail",
            "repo/branch",
            "ctx",
            "",
        ])
        .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)),
    )
    .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
    .block(Block::bordered().title(title));
    ui.fleet_rows = area.height.saturating_sub(3) as usize;
    let mut state = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
    if shown.is_empty() {
        let inner = area.inner(ratatui::layout::Margin::new(2, 2));
        frame.render_widget(
            Paragraph::new("no agent to show (the filter, or hosts still connecting)")
                .style(Style::new().fg(Color::DarkGray)),
            inner,
        );
    }
}

fn draw_pane(frame: &mut Frame<'_>, area: Rect, ui: &Ui, client: &Client, now_ms: u64) {
    let Some(panel) = &ui.drawn else {
        frame.render_widget(
            Paragraph::new("↑↓ selects a pane").block(Block::bordered().title(" pane ")),
            area,
        );
        return;
    };
    let (host, pane) = (panel.host, &panel.pane);
    let fleet = client.fleet();
    let name = &fleet.host(host).name;
    let row = fleet.row(host, pane);
    let mut title = match row {
        Some(row) => format!(" {name} {pane} {} · {} ", row.agent, row.locator),
        None => format!(" {name} {pane} "),
    };
    let mut lines: Vec<Line<'_>> = Vec::new();
    let warn = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
    if let Some(absent) = panel.absent {
        title.push_str("· not in the list ");
        let mut why = format!("not in the list: {}", absent_words(absent));
        if absent == Absent::HostDown
            && let Some(news) = fleet.host(host).last_news_ms
        {
            why.push_str(&format!(
                " (its rows are as of {} ago)",
                human_duration(now_ms.saturating_sub(news))
            ));
        }
        lines.push(Line::styled(why, warn));
        lines.push(Line::styled(
            "no key acts on this pane: ↑↓ selects a pane in the list",
            Style::new().fg(Color::DarkGray),
        ));
    }
    match &panel.card {
        Some(shown) => {
            if let Some(why) = &shown.changed {
                title.push_str("· CARD CHANGED ");
                lines.push(Line::styled(
                    format!("CARD CHANGED: {why}. {CARD_CHANGED} (Enter)"),
                    Style::new()
                        .fg(Color::Red)
                        .add_modifier(Modifier::BOLD | Modifier::REVERSED),
                ));
            }
            card_lines(&shown.card, ui, &mut lines);
        }
        None => {
            if let Some(row) = row {
                let (state, style) = state_style(row);
                let mut first = vec![Span::styled(state, style)];
                if let Some(detail) = &row.detail {
                    first.push(Span::raw(format!(" ({detail})")));
                }
                if let Some(since) = row.since_ms {
                    first.push(Span::raw(format!(" for {}", waited(Some(since), now_ms))));
                }
                lines.push(Line::from(first));
                if let Some(worktree) = &row.worktree {
                    lines.push(Line::raw(format!("worktree {worktree}")));
                }
                if let Some(tool) = &row.pending_tool {
                    lines.push(Line::raw(format!("pending tool {tool}")));
                }
                if let Some(context) = row.context {
                    lines.push(Line::raw(format!("context {context}%")));
                }
            }
            lines.push(Line::styled(
                "Enter: open its card (answers act on the card shown)   t: its transcript   s: steer",
                Style::new().fg(Color::DarkGray),
            ));
        }
    }
    if let Some(answered) = ui.answered.get(&(host, pane.clone())) {
        lines.push(Line::styled(
            format!("last answer from here: {answered}"),
            Style::new().fg(Color::Cyan),
        ));
    }
    frame.render_widget(
        Paragraph::new(Text::from(lines))
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title)),
        area,
    );
}

/// The card's identity, as an answer to it quotes it: its episode and permission request.
fn binder_line(binder: &Binder) -> Line<'static> {
    let request = binder
        .expect_permission_request
        .as_deref()
        .map(|r| format!(" · request {r}"))
        .unwrap_or_default();
    Line::styled(
        format!("card of episode {}{request}", binder.expect_episode_ms),
        Style::new().fg(Color::DarkGray),
    )
}

fn card_lines(card: &Card, ui: &Ui, lines: &mut Vec<Line<'_>>) {
    let dim = Style::new().fg(Color::DarkGray);
    if let Some(binder) = binder_of(card) {
        lines.push(binder_line(binder));
    }
    match card {
        Card::Permission(card) => {
            lines.push(Line::from(vec![
                Span::styled(
                    "Permission",
                    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!(
                    " · lane {} · dialog read {}",
                    card.lane, card.extraction
                )),
            ]));
            if card.extraction != Extraction::Exact {
                lines.push(Line::styled(
                    "the dialog itself was not read: check the pane on the host before answering",
                    Style::new().fg(Color::Yellow),
                ));
            }
            if let Some(call) = &card.pending_call {
                lines.push(Line::raw(format!(
                    "tool {}{}",
                    call.tool,
                    call.call_id
                        .as_deref()
                        .map(|id| format!("  call {id}"))
                        .unwrap_or_default()
                )));
                if let Some(input) = &call.input {
                    let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
                    for line in pretty.lines().take(12) {
                        lines.push(Line::raw(format!("  {line}")));
                    }
                }
            }
            let options: Vec<String> = card
                .options
                .iter()
                .map(|o| format!("[{}] {}", o.kind, o.name))
                .collect();
            if options.is_empty() {
                lines.push(Line::styled(
                    "the host offers no answer for this agent: answer it on the host",
                    Style::new().fg(Color::Yellow),
                ));
            } else {
                lines.push(Line::raw(format!("options: {}", options.join("   "))));
                lines.push(Line::styled(
                    "a approve   d deny   D deny with a message",
                    dim,
                ));
            }
        }
        Card::Question(card) => {
            lines.push(Line::styled(
                "Question",
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ));
            for (i, question) in card.questions.iter().enumerate() {
                let current = i == ui.answers.current;
                let chosen = ui.answers.chosen.get(i).cloned().unwrap_or_default();
                lines.push(Line::from(vec![
                    Span::raw(if current { "▶ " } else { "  " }),
                    Span::styled(
                        format!("{}: ", question.header),
                        Style::new().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(question.question.clone()),
                    Span::styled(
                        format!(
                            "{}{}",
                            if question.multiple { "  (several)" } else { "" },
                            if question.custom {
                                "  (free text: c)"
                            } else {
                                ""
                            }
                        ),
                        dim,
                    ),
                ]));
                for (n, option) in question.options.iter().enumerate() {
                    let mark = if chosen.contains(&option.label) {
                        "x"
                    } else {
                        " "
                    };
                    lines.push(Line::raw(format!(
                        "    {} [{mark}] {} — {}",
                        n + 1,
                        option.label,
                        option.description
                    )));
                }
                for text in chosen
                    .iter()
                    .filter(|c| !question.options.iter().any(|o| &o.label == *c))
                {
                    lines.push(Line::raw(format!("      [x] \"{text}\"")));
                }
            }
            lines.push(Line::styled(
                "1-9 choose   Tab next question   c free text   y send   x reject",
                dim,
            ));
        }
        Card::Informational(card) => {
            lines.push(Line::from(vec![
                Span::styled(
                    card.headline.clone(),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!(" ({})", card.detail)),
            ]));
            lines.push(Line::styled(
                "nothing to answer from here: open the pane on the host",
                dim,
            ));
        }
        Card::None => lines.push(Line::styled("not blocked: nothing to answer", dim)),
    }
}

/// The kind of an event as the wire names it, with the tool of a call and the status of a
/// result.
fn kind(event: &EventHeader) -> String {
    let Ok(value) = serde_json::to_value(event) else {
        return String::new();
    };
    let kind = value["kind"].as_str().unwrap_or_default();
    let detail = match kind {
        "tool_call" => value["name"].as_str(),
        "tool_result" => value["status"].as_str(),
        "permission_request" => value["tool"].as_str(),
        "bookkeeping" | "unknown" => value["type_name"].as_str(),
        _ => None,
    };
    match detail {
        Some(detail) => format!("{kind} {detail}"),
        None => kind.to_owned(),
    }
}

fn draw_transcript(
    frame: &mut Frame<'_>,
    area: Rect,
    client: &Client,
    host: usize,
    pane: &str,
    selected: usize,
) {
    let name = &client.fleet().host(host).name;
    let Some(transcript) = client.transcript(host, pane) else {
        frame.render_widget(
            Paragraph::new("loading…")
                .block(Block::bordered().title(format!(" {name} {pane} transcript "))),
            area,
        );
        return;
    };
    let rows: Vec<Row<'_>> = transcript
        .events
        .iter()
        .map(|event| {
            Row::new(vec![
                Cell::from(kind(event)),
                Cell::from(event.ts.clone().unwrap_or_default()),
                Cell::from(
                    event
                        .preview
                        .clone()
                        .unwrap_or_default()
                        .replace(['\n', '\r', '\t'], " "),
                ),
            ])
        })
        .collect();
    let end = if transcript.older.is_some() {
        "o: older page"
    } else {
        "the head of the transcript"
    };
    let title = format!(
        " {name} {pane} transcript · {} event(s) loaded, newest first · {end} · Enter: open · Esc ",
        transcript.events.len()
    );
    let table = Table::new(
        rows,
        [
            Constraint::Length(24),
            Constraint::Length(24),
            Constraint::Fill(1),
        ],
    )
    .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
    .block(Block::bordered().title(title));
    let mut state = TableState::default().with_selected(Some(selected));
    frame.render_stateful_widget(table, area, &mut state);
}

fn draw_event(
    frame: &mut Frame<'_>,
    area: Rect,
    client: &Client,
    host: usize,
    pane: &str,
    event: &EventHeader,
    scroll: u16,
) {
    let name = &client.fleet().host(host).name;
    let mut lines = vec![Line::styled(
        format!("{} {}", kind(event), event.ts.clone().unwrap_or_default()),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    match &event.body {
        Some(body) => {
            let text = if body.kind == schema::BodyKind::Json {
                serde_json::from_str::<serde_json::Value>(&body.text)
                    .ok()
                    .and_then(|v| serde_json::to_string_pretty(&v).ok())
                    .unwrap_or_else(|| body.text.clone())
            } else {
                body.text.clone()
            };
            lines.extend(text.lines().map(|l| Line::raw(l.to_owned())));
            if body.truncated {
                lines.push(Line::styled(
                    "(cut at 1 MiB)",
                    Style::new().fg(Color::DarkGray),
                ));
            }
        }
        None => lines.push(Line::raw(event.preview.clone().unwrap_or_default())),
    }
    frame.render_widget(
        Paragraph::new(Text::from(lines))
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(
                Block::bordered().title(format!(" {name} {pane} event · ↑↓ scroll · Esc back ")),
            ),
        area,
    );
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, ui: &Ui, _client: &Client) {
    if let Some((purpose, editor)) = &ui.editor {
        let prompt = match purpose {
            Purpose::Steer { host, pane, now } => {
                format!(
                    "{} {host} {pane}> ",
                    if *now { "steer now" } else { "steer" }
                )
            }
            Purpose::Deny { host, pane, .. } => format!("deny {host} {pane}, telling it> "),
            Purpose::Custom => "answer> ".to_owned(),
            Purpose::Filter => "filter (host=… state=blocked,done agent=…)> ".to_owned(),
        };
        let width = prompt.chars().count() + editor.cursor_chars();
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(prompt, Style::new().fg(Color::Cyan)),
                Span::raw(editor.text().to_owned()),
            ])),
            area,
        );
        frame.set_cursor_position((area.x + width.min(area.width as usize) as u16, area.y));
        return;
    }
    let keys = match ui.focus() {
        Focus::Fleet => {
            "↑↓ select  Enter card  a approve  d deny  s steer  i i interrupt  t transcript  f filter  b blocked  h host  ? help  q quit"
        }
        Focus::Transcript { .. } => "↑↓ select  Enter open  o older page  r newest  Esc back",
        Focus::Event { .. } => "↑↓ PgUp PgDn scroll  Esc back",
    };
    frame.render_widget(
        Paragraph::new(keys).style(Style::new().fg(Color::DarkGray)),
        area,
    );
}

fn draw_help(frame: &mut Frame<'_>, area: Rect) {
    let text = "\
fleet      ↑↓ j k PgUp PgDn Home End  select a pane
           Enter   open (or read again) its card: answers act only on the card shown
           a / d   approve / deny its permission;  D  deny, telling the agent why
           1-9 Tab c y x   on a question: choose, next question, free text, send, reject
           s / S   steer it (type a line; S interrupts first);  i i  interrupt it
           t       its transcript (o: older page, Enter: an event in full)
           r       read the host's fleet again
           f       filter: host=NAME state=blocked,done agent=NAME;  b blocked only;
           h       one host at a time;  Esc  no filter
           q Ctrl-C  quit

A pane that blocks rings once per episode (BEL). A card whose pane moved on says CARD CHANGED
and answers nothing: read it again. Pressing an answer twice sends the same slot.

any key closes this";
    let width = 96.min(area.width);
    let height = 18.min(area.height);
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().title(" corral-remote keys ")),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::Absent;
    use crate::tui::testing::{client, read_card, snapshot, ui};
    use client_core::client::HostEvent;
    use client_core::testing::{permission_card, row};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    /// The screen one draw makes, as lines of text.
    fn draw_text(ui: &mut Ui, client: &Client, now_ms: u64) -> String {
        let mut terminal = Terminal::new(TestBackend::new(120, 36)).unwrap();
        terminal
            .draw(|frame| draw(frame, ui, client, now_ms))
            .unwrap();
        let buffer = terminal.backend().buffer();
        (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn blocked(pane: &str, episode: u64) -> FleetRow {
        let mut row = row(pane, State::Blocked);
        row.since_ms = Some(5);
        row.episode_ms = episode;
        row.permission_request = Some("req-1".into());
        row
    }

    #[test]
    fn the_panel_shows_the_card_it_binds_and_the_draw_records_it() {
        let mut client = client();
        snapshot(
            &mut client,
            0,
            vec![row("%1", State::Working), blocked("%2", 70)],
        );
        read_card(&mut client, "%2", permission_card("%2", 70));
        let mut ui = ui(&client);
        let screen = draw_text(&mut ui, &client, 65_000);
        assert!(screen.contains("┌ a %2 claude · work:0.0 "), "{screen}");
        assert!(
            screen.contains("card of episode 70 · request req-1"),
            "{screen}"
        );
        assert!(
            screen.contains("Permission · lane hook · dialog read exact"),
            "{screen}"
        );
        assert!(
            screen.contains("options: [allow-once] Yes   [reject-once] No"),
            "{screen}"
        );
        assert!(
            screen.contains("BLOCKED  1m"),
            "the wait is drawn: {screen}"
        );
        assert!(!screen.contains("CARD CHANGED"), "{screen}");
        let drawn = ui.drawn.clone().unwrap();
        assert_eq!(
            (drawn.host, drawn.pane.as_str(), drawn.absent),
            (0, "%2", None)
        );
        assert_eq!(drawn.card.unwrap().changed, None);
    }

    #[test]
    fn a_card_whose_pane_moved_on_is_drawn_changed() {
        let mut client = client();
        snapshot(&mut client, 0, vec![blocked("%2", 70)]);
        read_card(&mut client, "%2", permission_card("%2", 70));
        snapshot(&mut client, 0, vec![blocked("%2", 80)]);
        let mut ui = ui(&client);
        let screen = draw_text(&mut ui, &client, 0);
        assert!(
            screen.contains("┌ a %2 claude · work:0.0 · CARD CHANGED "),
            "{screen}"
        );
        assert!(
            screen.contains(
                "CARD CHANGED: the pane is in another episode. the card changed: read it again (Enter)"
            ),
            "{screen}"
        );
        // The old card stays readable under the banner.
        assert!(
            screen.contains("card of episode 70 · request req-1"),
            "{screen}"
        );
    }

    #[test]
    fn a_selected_pane_out_of_the_list_is_drawn_as_such() {
        let mut client = client();
        let mut ui = ui(&client);
        ui.selected = Some((0, "%1".into()));
        ui.filter.states = vec![client_core::fleet::StateWanted::Is(State::Blocked)];
        let screen = draw_text(&mut ui, &client, 0);
        assert!(
            screen.contains("┌ a %1 claude · work:0.0 · not in the list "),
            "{screen}"
        );
        assert!(
            screen.contains("not in the list: the filter hides it"),
            "{screen}"
        );
        assert!(screen.contains("no key acts on this pane"), "{screen}");
        assert_eq!(ui.drawn.as_ref().unwrap().absent, Some(Absent::Filtered));
        // No row of the list is highlighted for it: %2 is drawn, %1 is not.
        assert!(screen.contains("│a            %2"), "{screen}");
        assert!(!screen.contains("│a            %1"), "{screen}");
        snapshot(&mut client, 0, vec![blocked("%2", 70)]);
        let screen = draw_text(&mut ui, &client, 0);
        assert!(screen.contains("not in the list: it is gone"), "{screen}");
    }

    #[test]
    fn a_disconnected_hosts_rows_are_stale_with_the_age_of_its_last_news() {
        let mut client = client();
        client.host_event(
            1,
            HostEvent::Session(client_core::session::SessionEvent::Snapshot {
                rows: vec![row("%1", State::Idle)],
                selector: None,
            }),
            10_000,
        );
        client.host_event(
            1,
            HostEvent::Link(Link::Down {
                reason: "the host closed the connection".into(),
                retry_at_ms: None,
            }),
            0,
        );
        let mut ui = ui(&client);
        let screen = draw_text(&mut ui, &client, 190_000);
        let header = screen.lines().find(|l| l.starts_with("○ b")).unwrap_or("");
        assert!(
            header.contains("rows as of 3m ago  the host closed"),
            "{screen}"
        );
        let row = screen
            .lines()
            .find(|l| l.starts_with("│b "))
            .unwrap_or_default();
        assert!(row.contains("stale"), "{screen}");
        let live = screen
            .lines()
            .find(|l| l.starts_with("│a ") && l.contains("%1"))
            .unwrap_or_default();
        assert!(!live.contains("stale"), "{screen}");
    }
}
