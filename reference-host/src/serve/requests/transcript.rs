//! `window` and `event`: a pane's transcript through the connection's one reader. The pane read
//! comes first (`not-found`); the file is the pane's own (`@agent_transcript`, else its agent's
//! store layout), never a path a request names; a refused store is `unsupported` with its reason.

use schema::{
    Cursor, Envelope, ErrorCode, ErrorFrame, EventReply, EventRequest, Response, Window,
    WindowLimits, WindowRequest, encode_line,
};

use super::{Answer, Connection, refusal};
use crate::fleet::{FleetSource, Pane};
use crate::transcript::locate::{self, Missing, PaneStore};
use crate::transcript::{PageLimits, Source, TranscriptError};

pub fn window<S: FleetSource>(
    conn: &mut Connection<S>,
    id: &str,
    request: &WindowRequest,
) -> Answer {
    let pane = conn.agent_pane(&request.pane)?;
    let path = transcript_of(conn, &pane)?;
    let limits = WindowLimits::clamp(request.last, request.budget);
    let room = events_room(&pane, id, limits.frame_bytes);
    let source = Source {
        pane: &pane.row.pane,
        agent: &pane.row.agent,
        path: &path,
    };
    let page = conn
        .reader()?
        .window(
            &source,
            PageLimits {
                window: limits,
                room,
            },
            request.before.as_ref(),
        )
        .map_err(|err| match err {
            TranscriptError::FrameTooSmall { short } => refusal(
                ErrorCode::BadRequest,
                format!(
                    "budget.frame_bytes {} leaves no room for one event of this transcript; the smallest usable is {}",
                    limits.frame_bytes,
                    u64::from(limits.frame_bytes) + short as u64
                ),
            ),
            other => refused(&pane, other),
        })?;
    Ok(Response::Window(Window {
        pane: pane.row.pane.clone(),
        agent: pane.row.agent.clone(),
        session: page.session,
        older: page.older,
        budget_truncated: page.budget_truncated,
        unknown: page.unknown,
        events: page.events,
    }))
}

pub fn event<S: FleetSource>(conn: &mut Connection<S>, request: &EventRequest) -> Answer {
    let pane = conn.agent_pane(&request.pane)?;
    let path = transcript_of(conn, &pane)?;
    let source = Source {
        pane: &pane.row.pane,
        agent: &pane.row.agent,
        path: &path,
    };
    let event = conn
        .reader()?
        .event(&source, &request.cursor)
        .map_err(|err| refused(&pane, err))?;
    Ok(Response::Event(EventReply { event }))
}

/// The pane's transcript file: `unsupported` for a refused store, `not-found` when the pane
/// leads to none.
fn transcript_of<S>(conn: &Connection<S>, pane: &Pane) -> Result<std::path::PathBuf, ErrorFrame> {
    let store = PaneStore {
        agent: &pane.row.agent,
        transcript: pane.row.transcript.as_deref(),
        session: pane.facts.agent_session.as_deref(),
        cwd: Some(&pane.facts.cwd),
    };
    locate::locate(&store, &conn.services.stores).map_err(|missing| match missing {
        Missing::Unsupported(reason) => refusal(ErrorCode::Unsupported, reason),
        Missing::NotFound => refusal(
            ErrorCode::NotFound,
            format!(
                "pane {} has no transcript this host can find",
                pane.row.pane
            ),
        ),
    })
}

fn refused(pane: &Pane, err: TranscriptError) -> ErrorFrame {
    match err {
        TranscriptError::NotFound(_) => refusal(
            ErrorCode::NotFound,
            format!("pane {}'s transcript file is gone", pane.row.pane),
        ),
        TranscriptError::CursorInvalid(why) => refusal(
            ErrorCode::CursorInvalid,
            format!("{why}; ask for a fresh window from the end"),
        ),
        TranscriptError::Unsupported(why) => refusal(ErrorCode::Unsupported, why),
        // Only a window has a frame budget; it answers this itself.
        TranscriptError::FrameTooSmall { short } => refusal(
            ErrorCode::BadRequest,
            format!("the frame budget is {short} bytes short of one event"),
        ),
        TranscriptError::Io { .. } => {
            tracing::error!(%err, "reading a transcript failed");
            refusal(
                ErrorCode::Internal,
                "the host could not read the transcript",
            )
        }
    }
}

/// The bytes the session metadata and the events of a window may take within `frame_bytes`:
/// the frame's budget minus everything else this answer's frame carries (the envelope with the
/// request's own id, pane, agent, a cursor-sized `older`, the other fields at their longest and
/// the newline). The reader measures the session and every header against it, so a page fills
/// its frame to within a few bytes.
fn events_room(pane: &Pane, id: &str, frame_bytes: u32) -> usize {
    let empty = Window {
        pane: pane.row.pane.clone(),
        agent: pane.row.agent.clone(),
        session: None,
        older: Some(Cursor("x".repeat(crate::transcript::header::CURSOR_MAX))),
        budget_truncated: false,
        unknown: u32::MAX,
        events: Vec::new(),
    };
    let overhead = encode_line(&Envelope::new(id.to_owned(), Response::Window(empty))).len();
    (frame_bytes as usize).saturating_sub(overhead)
}
