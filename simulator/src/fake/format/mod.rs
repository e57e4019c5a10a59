//! tmux's `-F` format language, as tmux 3.3a's manual (FORMATS) states it and its
//! `display-message -p` was seen to print: `#{variable}` ([`super::vars`]), user options
//! `#{@name}` (pane, window, session, then global), tmux options the fake stores
//! (`#{default-size}` after `set-option -g default-size`), the aliases `#D #F #H #I #P #S #T #W
//! #h`, the escapes `##`, `#,` and `#}`, `#{?cond,a,b}` conditionals (nested), the comparisons
//! `==`, `!=`, `<`, `>`, `<=`, `>=`, `||` and `&&`, `#{m:pattern,string}` (fnmatch(3), with
//! `/i`), and the modifiers `l` (literal), `E` and `T` (expand again), `b` and `d` (basename,
//! dirname), `q` and `q/h` (shell quote, `#` doubled), `t` (a time as ctime(3) prints it, in
//! UTC), `n` and `w` (length and width), `=N`, `=-N` and `=/N/marker` (trim), `pN` (pad), `a`
//! (a character), `s/from/to/` (substitution of a plain string: a pattern or replacement with
//! regular-expression syntax is refused) and `e|op|flags|digits` (arithmetic). Several modifiers
//! are joined with `;` (`#{=5;b:pane_current_path}`).
//!
//! Refused with one line each, never expanded wrongly: `#(...)` shell commands, the loops
//! `S: W: P: L:`, `N:` (name exists), `C:` (search the pane's content), `c:` (colour), `m/r`
//! (regular expressions), `t/p` and `t/f` (other time formats), strftime specifiers under `T:`,
//! and the variables [`super::vars::UNMODELLED`] names. A name tmux does not know expands to
//! nothing, as in tmux; a tmux option the fake has no value for is refused.
//!
//! What tmux does with a malformed `#{...}` is kept: an unterminated one, or a conditional or
//! comparison without its comma, ends the expansion of the format it is in (what came before it
//! stays); a failed arithmetic expands to nothing.
//!
//! A format is parsed once, before any pane is visited, so an unsupported format fails even on an
//! empty server. Only a value expanded again (`E:`, `T:`) is parsed when it is expanded.

mod expand;
mod parse;

use std::fmt;

use super::vars::Variable;

/// A value the expansion looks up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// A variable of the table.
    Builtin(&'static Variable),
    /// A user option, `@name` (with the `@`).
    Option(String),
    /// A tmux option (`default-size`): its value if the fake stores one, else refused.
    TmuxOption(String),
}

/// A parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pieces: Vec<Piece>,
}

/// One piece of a parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Replace(Box<Replace>),
    /// tmux gives up on the rest of the format here.
    Stop,
}

/// One `#{...}`: its modifiers and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Replace {
    mods: Mods,
    body: Body,
}

/// What a `#{...}` is, after its modifiers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Body {
    /// A name tmux does not know: nothing.
    #[default]
    Nothing,
    /// `l:`: the text as it is.
    Literal(String),
    /// A variable or option.
    Lookup(Var),
    /// A "name" with a `#{` in it: tmux expands it as a format.
    Nested(Format),
    /// `a:`: the character of a number.
    Char(Format),
    /// `#{?cond,yes,no}`.
    Cond { cond: Cond, yes: Format, no: Format },
    /// `#{==:left,right}` and the like.
    Compare {
        op: Compare,
        left: Format,
        right: Format,
    },
    /// `#{e|op|flags|digits:left,right}`.
    Arith {
        op: Arith,
        float: bool,
        digits: usize,
        left: Format,
        right: Format,
    },
}

/// A conditional's condition: a name looked up, or a format whose expansion is tested (false
/// when it expands to its own text, as tmux decides).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cond {
    Var(Var),
    Text { raw: String, format: Format },
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Or,
    And,
    /// `m`, with `/i`: fnmatch(3).
    Match {
        icase: bool,
    },
}

/// An arithmetic operator of `e|op|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// The modifiers that change a value once it is known, in the order tmux applies them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Mods {
    /// `t:`: a time.
    time: bool,
    basename: bool,
    dirname: bool,
    /// `q:` (shell) or `q/h` (`#` doubled).
    quote: Option<Quote>,
    /// `E:` or `T:`.
    again: bool,
    /// `T:`: strftime(3) too.
    strftime: bool,
    /// `s/from/to/`, in order.
    subs: Vec<(Format, Format)>,
    /// `=N` with its marker.
    trim: Option<(Format, Option<Format>)>,
    /// `pN`.
    pad: Option<Format>,
    /// `n:` (bytes) or `w:` (width).
    measure: Option<Measure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Shell,
    Hash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Length,
    Width,
}

/// A format the fake cannot expand: one line saying what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The line, without the fake's prefix.
    pub message: String,
}

impl FormatError {
    fn new(message: impl Into<String>) -> FormatError {
        FormatError {
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// Answers a lookup: `Ok(None)` expands to nothing.
pub type Lookup<'a> = dyn Fn(&Var) -> Result<Option<String>, FormatError> + 'a;

impl Format {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Format, FormatError> {
        parse::format(text)
    }

    /// Expands the format; `lookup` answers each variable and option.
    pub fn expand(
        &self,
        lookup: impl Fn(&Var) -> Result<Option<String>, FormatError>,
    ) -> Result<String, FormatError> {
        expand::format(self, &lookup)
    }

    /// Whether the format names a variable or option that needs a pane, window or session.
    pub fn needs_target(&self) -> bool {
        self.vars().iter().any(|var| match var {
            Var::Builtin(variable) => variable.needs_target(),
            Var::Option(_) => true,
            Var::TmuxOption(_) => false,
        })
    }

    /// Every variable and option the format names, nested ones too.
    fn vars(&self) -> Vec<&Var> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Var>) {
        for piece in &self.pieces {
            let Piece::Replace(replace) = piece else {
                continue;
            };
            let mods = &replace.mods;
            let formats = mods
                .subs
                .iter()
                .flat_map(|(from, to)| [from, to])
                .chain(
                    mods.trim
                        .iter()
                        .flat_map(|(n, marker)| std::iter::once(n).chain(marker.iter())),
                )
                .chain(mods.pad.iter());
            let body: Vec<&Format> = match &replace.body {
                Body::Nothing | Body::Literal(_) => Vec::new(),
                Body::Lookup(var) => {
                    out.push(var);
                    Vec::new()
                }
                Body::Nested(format) | Body::Char(format) => vec![format],
                Body::Cond { cond, yes, no } => {
                    match cond {
                        Cond::Var(var) => out.push(var),
                        Cond::Text { format, .. } => format.collect(out),
                    }
                    vec![yes, no]
                }
                Body::Compare { left, right, .. } | Body::Arith { left, right, .. } => {
                    vec![left, right]
                }
            };
            for format in formats.chain(body) {
                format.collect(out);
            }
        }
    }
}

#[cfg(test)]
mod tests;
