//! Every token vocabulary of the wire, open or closed.
//!
//! An *open* vocabulary (detail, outcome, reason, error code, option kind, scope, ...) keeps a token
//! minted after this build verbatim in its `Other` arm and writes it back unchanged, so a client
//! built today round-trips a frame from a host built tomorrow. A *closed* vocabulary (state, lane,
//! extraction) refuses an unknown token: `state` is frozen by the spec. Tokens are never empty.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A token an open vocabulary did not know when this build was made, kept byte for byte.
///
/// It can only be made by parsing, so a known token is never carried as `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OtherToken(String);

impl OtherToken {
    /// Keeps a token read off the wire that no known arm claimed.
    pub(crate) fn from_wire(token: String) -> Self {
        OtherToken(token)
    }

    /// The token as it arrived.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Schema of an open vocabulary: one of the known tokens, or any other non-empty string.
///
/// The second arm is still a string, so the `Other` arm never turns the field into "anything goes".
pub(crate) fn open_schema(known: &[&str], description: &str) -> Schema {
    json_schema!({
        "description": description,
        "anyOf": [
            { "type": "string", "enum": known },
            {
                "type": "string",
                "minLength": 1,
                "description": "A token minted after this build. Clients keep it verbatim and write it back unchanged."
            }
        ]
    })
}

/// Schema of a closed vocabulary: exactly one of the known tokens.
pub(crate) fn closed_schema(known: &[&str], description: &str) -> Schema {
    json_schema!({
        "description": description,
        "type": "string",
        "enum": known
    })
}

/// Declares an open vocabulary: known arms, an `Other(OtherToken)` arm, string (de)serialisation
/// and a schema that lists the known tokens.
macro_rules! open_vocab {
    (
        $(#[doc = $doc:literal])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $token:literal, )* }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A token minted after this build, kept verbatim.
            Other(OtherToken),
        }

        impl $name {
            /// The tokens this build knows, in the order the spec lists them.
            pub const KNOWN: &'static [&'static str] = &[$($token),*];

            /// The token as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $token, )*
                    Self::Other(token) => token.as_str(),
                }
            }

            /// Parses a token; an unknown one lands in `Other`. Fails only on the empty string.
            pub fn parse(token: &str) -> Option<Self> {
                Some(match token {
                    "" => return None,
                    $( $token => Self::$variant, )*
                    other => Self::Other(OtherToken(other.to_owned())),
                })
            }

            /// True when this build does not know the token.
            pub fn is_other(&self) -> bool {
                matches!(self, Self::Other(_))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let token = Cow::<'de, str>::deserialize(deserializer)?;
                Self::parse(&token).ok_or_else(|| {
                    serde::de::Error::custom(concat!("empty ", stringify!($name), " token"))
                })
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                open_schema(Self::KNOWN, concat!($($doc, "\n"),*).trim())
            }
        }
    };
}

/// Declares a closed vocabulary: known arms only; an unknown token is a decode error.
macro_rules! closed_vocab {
    (
        $(#[doc = $doc:literal])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $token:literal, )* }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// Every token of the vocabulary.
            pub const KNOWN: &'static [&'static str] = &[$($token),*];
            /// Every arm of the vocabulary, in the order of `KNOWN`.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The token as written on the wire.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $( Self::$variant => $token, )*
                }
            }

            /// Parses a token; `None` for anything outside the vocabulary.
            pub fn parse(token: &str) -> Option<Self> {
                match token {
                    $( $token => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let token = Cow::<'de, str>::deserialize(deserializer)?;
                Self::parse(&token).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&token, Self::KNOWN)
                })
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                closed_schema(Self::KNOWN, concat!($($doc, "\n"),*).trim())
            }
        }
    };
}

closed_vocab! {
    /// A pane's state as the cycle sees it. Closed and frozen: a client may rely on these four.
    State {
        Idle = "idle",
        Working = "working",
        Blocked = "blocked",
        Unknown = "unknown",
    }
}

closed_vocab! {
    /// The pane user options of the contract (docs/protocol.md, "Pane options"): the one place
    /// their names are spelled. Agents' hooks and the simulator stamp them; the host reads them
    /// with every cycle, and the daemon writes its markers. [`PaneOption::fills`] says what each
    /// fills.
    PaneOption {
        /// The agent's name; a pane without it is not an agent pane.
        Name = "@agent_name",
        /// `idle`, `working`, `blocked` or `unknown`.
        State = "@agent_state",
        /// Why a blocked pane is blocked (an open token).
        Detail = "@agent_detail",
        /// Epoch ms when the current state began.
        Since = "@agent_since",
        /// Epoch ms of the latest turn inside the state.
        TurnAt = "@agent_turn_at",
        /// Epoch ms of the latest stamp.
        StampedAt = "@agent_stamped_at",
        /// Set while a finished turn's output is unseen.
        Attention = "@agent_attention",
        /// The agent's own session id.
        Session = "@agent_session",
        /// The absolute path of the session's transcript.
        Transcript = "@agent_transcript",
        /// The pending permission request's id (a parked hook request's file name).
        PermissionRequest = "@agent_permission_request",
        /// A pending question's id, asked of the agent's HTTP API.
        QuestionRequest = "@agent_question_request",
        /// The base URL of the agent's own HTTP API.
        ApiEndpoint = "@agent_api_endpoint",
        /// The tool the agent is blocked on.
        PendingTool = "@agent_pending_tool",
        /// The call id the agent is blocked on.
        PendingCall = "@agent_pending_call",
        /// Context-window utilisation, percent.
        Context = "@agent_context",
        /// When the context gauge was read, epoch ms.
        ContextAt = "@agent_context_at",
        /// Muted while this epoch ms is in the future.
        MuteUntil = "@agent_mute_until",
        /// The episode a notification already fired for.
        NotifiedAt = "@agent_notified_at",
        /// The `context_high` trigger's arming marker.
        ContextNotifiedAt = "@agent_context_notified_at",
        /// The `stall` trigger's arming marker: the run it fired for.
        StallNotifiedAt = "@agent_stall_notified_at",
    }
}

closed_vocab! {
    /// The variables a notification command finds in its environment (docs/protocol.md,
    /// "Notification environment"): the one place their names are spelled. [`crate::NotifyEnv`]
    /// says which a fire or a completion sets and which it removes.
    NotifyVar {
        /// The agent's name.
        Agent = "CORRAL_AGENT",
        /// The pane id.
        Pane = "CORRAL_PANE",
        /// The trigger.
        State = "CORRAL_STATE",
        /// `session:window.pane`.
        Locator = "CORRAL_LOCATOR",
        /// The repository.
        Repo = "CORRAL_REPO",
        /// The branch.
        Branch = "CORRAL_BRANCH",
        /// Why a blocked pane is blocked.
        Detail = "CORRAL_DETAIL",
        /// The tmux session.
        Session = "CORRAL_SESSION",
        /// How long the episode has lasted, ms.
        SinceMs = "CORRAL_SINCE_MS",
        /// The episode, epoch ms.
        EpisodeMs = "CORRAL_EPISODE_MS",
        /// Context-window utilisation, percent.
        ContextPct = "CORRAL_CONTEXT_PCT",
        /// The pane title, only with `include_title`.
        Title = "CORRAL_TITLE",
        /// A detached action's name.
        Action = "CORRAL_ACTION",
        /// A detached action's outcome.
        Outcome = "CORRAL_OUTCOME",
        /// A detached action's exit code.
        ExitCode = "CORRAL_EXIT_CODE",
        /// corral-remote's ring command: the configured name of the host the pane is on.
        Host = "CORRAL_HOST",
    }
}

/// What a pane option fills: the fleet row's fields it is read into, or, for an option no row
/// field shows, what reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fills {
    /// These fields of a fleet row ([`crate::FleetRow`]).
    Row(&'static [&'static str]),
    /// Read by the host for this purpose; no row field shows it.
    Host(&'static str),
}

impl PaneOption {
    /// The table from option to what it fills.
    pub fn fills(self) -> Fills {
        use Fills::{Host, Row};
        match self {
            Self::Name => Row(&["agent"]),
            Self::State => Row(&["state", "done"]),
            Self::Detail => Row(&["detail"]),
            Self::Since => Row(&["since_ms", "episode_ms"]),
            Self::TurnAt => Row(&["episode_ms"]),
            Self::StampedAt => Row(&["stamped_at_ms"]),
            Self::Attention => Row(&["attention", "done"]),
            Self::Session => Host("transcript resolution: the agent's session id"),
            Self::Transcript => Row(&["transcript"]),
            Self::PermissionRequest => Row(&["permission_request"]),
            Self::QuestionRequest => Host("question cards: the request id asked of the API"),
            Self::ApiEndpoint => Host("the api lane: where the agent's HTTP API answers"),
            Self::PendingTool => Row(&["pending_tool"]),
            Self::PendingCall => Row(&["pending_call"]),
            Self::Context => Row(&["context"]),
            Self::ContextAt => Row(&["context_at_ms"]),
            Self::MuteUntil => Row(&["muted"]),
            Self::NotifiedAt => Host("the notifier's once-per-episode marker"),
            Self::ContextNotifiedAt => Host("the context_high trigger's arming marker"),
            Self::StallNotifiedAt => Host("the stall trigger's arming marker"),
        }
    }

    /// The option's name without its `@`, as `corral-sim step --unset` and tmux's `show-options`
    /// output spell it after the sigil: `agent_state`.
    pub fn bare(self) -> &'static str {
        &self.as_str()[1..]
    }

    /// The key after the `@agent_` prefix: `state` for `@agent_state`.
    pub fn key(self) -> &'static str {
        &self.as_str()[Self::PREFIX.len()..]
    }

    /// The option whose key after `@agent_` is `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|option| option.key() == key)
    }

    /// The prefix every contract option's name starts with.
    pub const PREFIX: &'static str = "@agent_";

    /// The tmux format that expands to the option's value: `#{@agent_state}`.
    pub fn format(self) -> String {
        format!("#{{{}}}", self.as_str())
    }
}

closed_vocab! {
    /// How a permission card's reply travels: a parked agent hook, the agent's own HTTP API, or
    /// keys sent to the screen.
    Lane {
        Hook = "hook",
        Api = "api",
        Screen = "screen",
    }
}

closed_vocab! {
    /// How well the host read the dialog. Only `exact` licenses drawing the dialog's own controls;
    /// `wrapped` and `failed` mean "open the pane on the host".
    Extraction {
        Exact = "exact",
        Wrapped = "wrapped",
        Failed = "failed",
    }
}

closed_vocab! {
    /// How an event body is carried: plain text, or the store's own JSON as text.
    BodyKind {
        Text = "text",
        Json = "json",
    }
}

open_vocab! {
    /// Why a blocked pane is blocked.
    Detail {
        Permission = "permission",
        Plan = "plan",
        Trust = "trust",
        Question = "question",
        Error = "error",
        RateLimit = "rate_limit",
        Background = "background",
        Compacting = "compacting",
    }
}

open_vocab! {
    /// A state token of a selector: the four states plus `done` (idle with unreviewed output). An
    /// unknown token narrows the selection to nothing instead of failing the frame.
    StateFilter {
        Idle = "idle",
        Working = "working",
        Blocked = "blocked",
        Unknown = "unknown",
        Done = "done",
    }
}

open_vocab! {
    /// What one dispatch resolved to.
    Outcome {
        Sent = "sent",
        Replied = "replied",
        Exited = "exited",
        Spawned = "spawned",
        Timeout = "timeout",
        Refused = "refused",
        Vanished = "vanished",
        Error = "error",
    }
}

open_vocab! {
    /// Why a dispatch was refused or failed.
    Reason {
        WrongAgent = "wrong-agent",
        NoCoverage = "no-coverage",
        RequiresUnmet = "requires-unmet",
        Gated = "gated",
        Locked = "locked",
        EpisodeChanged = "episode-changed",
        RequestGone = "request-gone",
        PaneGone = "pane-gone",
        Sigil = "sigil",
        ControlBytes = "control-bytes",
        TooLong = "too-long",
        Empty = "empty",
        FiredUnknown = "fired-unknown",
        ScopeDenied = "scope-denied",
    }
}

open_vocab! {
    /// The code of an error frame. Clients branch on the code only, never on the message.
    ErrorCode {
        UnsupportedSchema = "unsupported-schema",
        BadRequest = "bad-request",
        NotFound = "not-found",
        CursorInvalid = "cursor-invalid",
        ScopeDenied = "scope-denied",
        TooManyConnections = "too-many-connections",
        Unsupported = "unsupported",
        Internal = "internal",
    }
}

open_vocab! {
    /// The kind of a permission option.
    OptionKind {
        AllowOnce = "allow-once",
        AllowAlways = "allow-always",
        RejectOnce = "reject-once",
        RejectAlways = "reject-always",
    }
}

open_vocab! {
    /// A permission a device holds, granted in the host's device store.
    Scope {
        Read = "read",
        ActAnswer = "act:answer",
        ActAlways = "act:always",
        ActSteer = "act:steer",
    }
}

open_vocab! {
    /// An action a device can dispatch. Any other name is refused at the scope gate.
    Action {
        Approve = "approve",
        Deny = "deny",
        ApproveAlways = "approve_always",
        QuestionReply = "question_reply",
        QuestionReject = "question_reject",
        Steer = "steer",
        SteerNow = "steer_now",
        Interrupt = "interrupt",
        DenyWithMessage = "deny_with_message",
    }
}

open_vocab! {
    /// The status of a tool result in a transcript.
    ToolStatus {
        Ok = "ok",
        Error = "error",
        Pending = "pending",
        Unknown = "unknown",
    }
}

open_vocab! {
    /// Which end of a turn a turn boundary marks.
    Boundary {
        Start = "start",
        End = "end",
    }
}

open_vocab! {
    /// The trigger word a notification fired for (the payload's `state`).
    Trigger {
        Blocked = "blocked",
        Done = "done",
        ContextHigh = "context_high",
        Stall = "stall",
    }
}

open_vocab! {
    /// Which detection path observed a transition: the daemon's poll cycle or an agent's event hook.
    TransitionSource {
        Poll = "poll",
        Hook = "hook",
    }
}

/// The two ends of a transition: a state, or `""` for the open end of a pane's life (`""`→state:
/// the pane appeared after the baseline; state→`""`: it vanished).
pub mod open_end {
    use super::*;

    /// Writes `None` as `""`.
    pub fn serialize<S: Serializer>(end: &Option<State>, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(end.map_or("", |state| state.as_str()))
    }

    /// Reads `""` as `None`; any other token must be a state.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<State>, D::Error> {
        let token = Cow::<'de, str>::deserialize(deserializer)?;
        if token.is_empty() {
            return Ok(None);
        }
        State::parse(&token)
            .map(Some)
            .ok_or_else(|| serde::de::Error::unknown_variant(&token, State::KNOWN))
    }

    /// The schema: a state token or the empty string.
    pub fn schema(_: &mut SchemaGenerator) -> Schema {
        let mut tokens = vec![""];
        tokens.extend_from_slice(State::KNOWN);
        closed_schema(
            &tokens,
            "A state, or \"\" for the open end of a pane's life (appeared or vanished).",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_options_are_the_protocols_table_and_fill_real_row_fields() {
        let doc = include_str!("../../docs/protocol.md");
        let mut documented: Vec<&str> = doc
            .lines()
            .filter(|line| line.starts_with("| `@agent_"))
            .flat_map(|line| line.split('|').nth(1).unwrap_or_default().split(','))
            .map(|name| name.trim().trim_matches('`'))
            .collect();
        documented.sort_unstable();
        documented.dedup();
        let mut known = PaneOption::KNOWN.to_vec();
        known.sort_unstable();
        assert_eq!(known, documented, "docs/protocol.md's pane-option table");
        let schema = serde_json::to_value(schemars::schema_for!(crate::FleetRow)).unwrap();
        let row = &schema["properties"];
        for option in PaneOption::ALL {
            assert!(option.as_str().starts_with(PaneOption::PREFIX));
            assert_eq!(PaneOption::from_key(option.key()), Some(*option));
            assert_eq!(format!("@{}", option.bare()), option.as_str());
            if let Fills::Row(fields) = option.fills() {
                for field in fields {
                    assert!(row.get(field).is_some(), "{option}: no row field `{field}`");
                }
            }
        }
        assert_eq!(PaneOption::State.format(), "#{@agent_state}");
    }

    #[test]
    fn open_vocabulary_keeps_an_unknown_token_verbatim() {
        let detail: Detail = serde_json::from_str(r#""sandbox_escape""#).unwrap();
        assert!(detail.is_other());
        assert_eq!(detail.as_str(), "sandbox_escape");
        assert_eq!(
            serde_json::to_string(&detail).unwrap(),
            r#""sandbox_escape""#
        );
    }

    #[test]
    fn open_vocabulary_parses_a_known_token_to_its_arm() {
        assert_eq!(Detail::parse("rate_limit"), Some(Detail::RateLimit));
        assert_eq!(Scope::parse("act:answer"), Some(Scope::ActAnswer));
        assert_eq!(
            Reason::parse("episode-changed"),
            Some(Reason::EpisodeChanged)
        );
    }

    #[test]
    fn open_vocabulary_refuses_the_empty_token() {
        let err = serde_json::from_str::<ErrorCode>(r#""""#).unwrap_err();
        assert!(err.to_string().contains("empty ErrorCode token"), "{err}");
    }

    #[test]
    fn closed_vocabulary_refuses_an_unknown_token() {
        let err = serde_json::from_str::<State>(r#""done""#).unwrap_err();
        assert!(err.to_string().contains("unknown variant `done`"), "{err}");
        assert!(serde_json::from_str::<Lane>(r#""carrier-pigeon""#).is_err());
    }

    macro_rules! check_known {
        ($($vocab:ident),*) => {$(
            for token in $vocab::KNOWN {
                let json = format!("\"{token}\"");
                let parsed: $vocab = serde_json::from_str(&json).unwrap();
                assert!(!parsed.is_other(), "{} {token}", stringify!($vocab));
                assert_eq!(serde_json::to_string(&parsed).unwrap(), json);
            }
        )*};
    }

    #[test]
    fn every_known_token_parses_to_a_known_arm_and_back() {
        check_known!(
            Detail,
            StateFilter,
            Outcome,
            Reason,
            ErrorCode,
            OptionKind,
            Scope,
            Action,
            ToolStatus,
            Boundary,
            Trigger,
            TransitionSource
        );
        for state in State::ALL {
            assert_eq!(State::parse(state.as_str()), Some(*state));
        }
    }
}
