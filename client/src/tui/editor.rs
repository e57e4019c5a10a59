//! The line editor of the TUI: one line of text, a cursor on a character boundary, the keys a
//! shell's line editor has (arrows, Home/End, Backspace/Delete, Ctrl-U, Ctrl-W).

/// One line being typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Editor {
    text: String,
    /// Byte offset of the cursor, always on a character boundary.
    cursor: usize,
}

/// An editing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Insert a character at the cursor.
    Insert(char),
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character at the cursor.
    Delete,
    /// Move one character left.
    Left,
    /// Move one character right.
    Right,
    /// To the start.
    Home,
    /// To the end.
    End,
    /// Delete everything before the cursor.
    KillStart,
    /// Delete the word before the cursor.
    KillWord,
}

impl Editor {
    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many characters come before the cursor (where the terminal cursor goes).
    pub fn cursor_chars(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    /// Applies one key.
    pub fn apply(&mut self, edit: Edit) {
        let before =
            |text: &str, at: usize| text[..at].chars().next_back().map_or(0, char::len_utf8);
        let after = |text: &str, at: usize| text[at..].chars().next().map_or(0, char::len_utf8);
        match edit {
            Edit::Insert(c) if !c.is_control() => {
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
            }
            Edit::Insert(_) => {}
            Edit::Backspace => {
                let n = before(&self.text, self.cursor);
                self.cursor -= n;
                self.text.drain(self.cursor..self.cursor + n);
            }
            Edit::Delete => {
                let n = after(&self.text, self.cursor);
                self.text.drain(self.cursor..self.cursor + n);
            }
            Edit::Left => self.cursor -= before(&self.text, self.cursor),
            Edit::Right => self.cursor += after(&self.text, self.cursor),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.text.len(),
            Edit::KillStart => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            Edit::KillWord => {
                let head = &self.text[..self.cursor];
                let trimmed = head.trim_end();
                let start = trimmed.rfind(char::is_whitespace).map_or(0, |at| {
                    at + trimmed[at..].chars().next().map_or(1, char::len_utf8)
                });
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Editor {
        let mut editor = Editor::default();
        for c in text.chars() {
            editor.apply(Edit::Insert(c));
        }
        editor
    }

    #[test]
    fn typing_moving_and_deleting_keep_the_cursor_on_a_character() {
        let mut editor = typed("héllo wörld");
        assert_eq!(editor.cursor_chars(), 11);
        editor.apply(Edit::Left);
        editor.apply(Edit::Left);
        editor.apply(Edit::Backspace);
        assert_eq!(editor.text(), "héllo wöld");
        editor.apply(Edit::Home);
        editor.apply(Edit::Right);
        editor.apply(Edit::Delete);
        assert_eq!(editor.text(), "hllo wöld");
        editor.apply(Edit::End);
        editor.apply(Edit::KillWord);
        assert_eq!(editor.text(), "hllo ");
        editor.apply(Edit::Insert('\u{7}'));
        assert_eq!(editor.text(), "hllo ", "no control character gets in");
        editor.apply(Edit::KillStart);
        assert_eq!(editor.text(), "");
        editor.apply(Edit::Backspace);
        editor.apply(Edit::Left);
        assert_eq!(editor.cursor_chars(), 0);
    }
}
