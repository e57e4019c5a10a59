//! The rule that two vocabularies of names are spelled in one place, `schema/src/vocab.rs`: the
//! pane options of the contract (`schema::PaneOption`) and the variables of a notification
//! command's environment (`schema::NotifyVar`). Anywhere else in the workspace's Rust source, a
//! string literal (plain, raw or byte) whose text starts with `@agent_`, or is one of the
//! `CORRAL_*` names of `NotifyVar`, is a problem: code names them through the vocabulary, so a
//! typo cannot hide in one file and a new name is one arm of one closed vocabulary. (A shell
//! command that reads `$CORRAL_PANE`, as a user's notify command does, is not a name spelled.)
//!
//! Test code may spell options literally, as the contract's other side does: a test that spells
//! them on its own catches a typo in the table. Test code is a file under a `tests/` directory,
//! an item under `#[cfg(test)]` (an inline `mod tests { ... }`, a helper), and a module file that
//! a `#[cfg(test)] mod name;` declares, with every module file declared inside it. Comments are
//! not code: a doc comment may name `@agent_state`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schema::NotifyVar;

use super::lex::{Kind, Token, lex_with_strings};

/// The one file that spells the names.
const HOME: &str = "schema/src/vocab.rs";

/// What every option's name starts with (built from parts, so this file passes its own rule).
const PREFIX: &str = concat!("@agent", "_");

/// One Rust file of the workspace.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its path from the workspace root (`reference-host/src/tmux/read.rs`).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// Every name spelled outside [`HOME`] in code that is not test code, one line each.
pub fn check(sources: &[Source]) -> Vec<String> {
    let tests = test_files(sources);
    let mut problems = Vec::new();
    for source in sources {
        if source.path == Path::new(HOME)
            || tests.contains(&source.path)
            || in_tests_dir(&source.path)
        {
            continue;
        }
        let shown = source.path.display().to_string();
        problems.extend(check_text(&shown, &source.text));
    }
    problems
}

/// The problems of one file's text, test items skipped.
fn check_text(shown: &str, text: &str) -> Vec<String> {
    let tokens = lex_with_strings(text);
    let mut skipped = vec![false; tokens.len()];
    for item in test_items(&tokens) {
        skipped[item.tokens].fill(true);
    }
    tokens
        .iter()
        .zip(skipped)
        .filter(|(token, skipped)| !skipped && token.kind == Kind::Str)
        .filter_map(|(token, _)| {
            let what = if token.text.starts_with(PREFIX) {
                "a pane option: name it through `schema::PaneOption`"
            } else if NotifyVar::KNOWN.contains(&token.text.as_str()) {
                "a notification variable: name it through `schema::NotifyVar`"
            } else {
                return None;
            };
            Some(format!(
                "{shown}:{}: \"{}\" spells {what}",
                token.line, token.text
            ))
        })
        .collect()
}

/// Whether a directory on the way to `path` is a `tests/` directory.
fn in_tests_dir(path: &Path) -> bool {
    path.parent()
        .is_some_and(|dir| dir.components().any(|c| c.as_os_str() == "tests"))
}

/// One item under `#[cfg(test)]`: its tokens (the attribute's included), and the module it
/// declares when it is `mod name;`.
struct TestItem {
    tokens: std::ops::Range<usize>,
    declares: Option<String>,
}

/// The items of `tokens` under `#[cfg(test)]`; with `#![cfg(test)]`, the whole file.
fn test_items(tokens: &[Token]) -> Vec<TestItem> {
    let texts: Vec<&str> = tokens
        .iter()
        .map(|t| match t.kind {
            Kind::Code => t.text.as_str(),
            Kind::Str => "\"",
        })
        .collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let inner = texts[i..].starts_with(&["#", "!", "[", "cfg", "(", "test", ")", "]"]);
        if inner {
            items.push(TestItem {
                tokens: 0..tokens.len(),
                declares: None,
            });
            return items;
        }
        if !texts[i..].starts_with(&["#", "[", "cfg", "(", "test", ")", "]"]) {
            i += 1;
            continue;
        }
        let end = item_end(&texts, i + 7);
        let item = &texts[i..end];
        let declares = match item {
            [.., "mod", name, ";"] => Some((*name).to_owned()),
            _ => None,
        };
        items.push(TestItem {
            tokens: i..end,
            declares,
        });
        i = end;
    }
    items
}

/// Just past the end of the item that starts at `from`: a `;` or `,` outside brackets, or the
/// `}` that closes its body; at the latest, before the bracket that closes what holds it.
fn item_end(texts: &[&str], from: usize) -> usize {
    let mut depth = 0usize;
    for (i, text) in texts.iter().enumerate().skip(from) {
        match *text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth == 0 => return i,
            ")" | "]" => depth -= 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            ";" | "," if depth == 0 => return i + 1,
            _ => {}
        }
    }
    texts.len()
}

/// The module files that `#[cfg(test)] mod name;` declares, and every module file declared in
/// one of them (`mod name;` at its top level).
fn test_files(sources: &[Source]) -> BTreeSet<PathBuf> {
    let mut tests = BTreeSet::new();
    let mut queue: Vec<PathBuf> = Vec::new();
    for source in sources {
        let tokens = lex_with_strings(&source.text);
        for item in test_items(&tokens) {
            if let Some(name) = item.declares {
                queue.extend(module_file(&source.path, &name, sources));
            }
        }
    }
    while let Some(path) = queue.pop() {
        if !tests.insert(path.clone()) {
            continue;
        }
        let Some(source) = sources.iter().find(|s| s.path == path) else {
            continue;
        };
        for name in declared_modules(&lex_with_strings(&source.text)) {
            queue.extend(module_file(&source.path, &name, sources));
        }
    }
    tests
}

/// The modules `mod name;` declares at the top level of a file.
fn declared_modules(tokens: &[Token]) -> Vec<String> {
    let mut depth = 0usize;
    let mut names = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if token.is("{") {
            depth += 1;
        } else if token.is("}") {
            depth = depth.saturating_sub(1);
        } else if depth == 0
            && token.is("mod")
            && let [name, semicolon, ..] = &tokens[i + 1..]
            && name.is_ident()
            && semicolon.is(";")
        {
            names.push(name.text.clone());
        }
    }
    names
}

/// The file of module `name` declared in `parent`: beside it for `lib.rs`, `main.rs` and
/// `mod.rs`, in the folder named after it otherwise; as `name.rs` or `name/mod.rs`.
fn module_file(parent: &Path, name: &str, sources: &[Source]) -> Option<PathBuf> {
    let dir = parent.parent()?;
    let stem = parent.file_stem()?.to_str()?;
    let dir = match stem {
        "lib" | "main" | "mod" => dir.to_path_buf(),
        _ => dir.join(stem),
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|path| sources.iter().any(|s| &s.path == path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option the checks look for, built from parts so this file does not spell one.
    const OPTION: &str = concat!("\"@agent", "_state\"");

    fn source(path: &str, text: &str) -> Source {
        Source {
            path: path.into(),
            text: text.replace("OPTION", OPTION),
        }
    }

    fn lines(problems: &[String]) -> Vec<&str> {
        problems
            .iter()
            .map(|p| p.split(": ").next().unwrap())
            .collect()
    }

    #[test]
    fn a_literal_in_code_is_reported_with_its_file_and_line() {
        let text = "//! x\nfn f() {\n    set(OPTION);\n    set(r#OPTION#, b\"x\");\n}\n";
        let problems = check(&[source("a/src/lib.rs", text)]);
        assert_eq!(lines(&problems), ["a/src/lib.rs:3", "a/src/lib.rs:4"]);
        assert!(problems[0].contains("@agent_state"), "{problems:?}");
    }

    #[test]
    fn a_notification_variable_in_code_is_reported_and_a_shell_reading_one_is_not() {
        let name = concat!("CORRAL", "_TITLE");
        let text = format!(
            "//! x\nfn f() {{\n    env(\"{name}\");\n    sh(\"echo ${name}\");\n    env(\"CORRAL_SIM_DIR\");\n}}\n"
        );
        let problems = check(&[source("a/src/lib.rs", &text)]);
        assert_eq!(
            problems,
            [format!(
                "a/src/lib.rs:3: \"{name}\" spells a notification variable: name it through \
                 `schema::NotifyVar`"
            )]
        );
    }

    #[test]
    fn comments_and_other_literals_are_not() {
        let text = "//! Writes `@agent_state`.\n/// Sets OPTION.\n// OPTION\n/* OPTION */\n\
                    fn f() { set(\"#{@agent_state}\"); set('@'); }\n";
        assert!(check(&[source("a/src/lib.rs", text)]).is_empty());
    }

    #[test]
    fn test_code_is_not_and_code_after_it_is() {
        let text = "//! x\nfn f() {}\n#[cfg(test)]\nmod tests {\n    fn g() { set(OPTION); }\n}\n\
                    #[cfg(test)]\n#[allow(dead_code)]\nfn helper() { set(OPTION) }\n\
                    #[cfg(test)]\nconst X: &[&str] = &[OPTION];\nfn h() { set(OPTION); }\n";
        assert_eq!(
            lines(&check(&[source("a/src/lib.rs", text)])),
            ["a/src/lib.rs:12"]
        );
        let whole = "#![cfg(test)]\n//! x\nfn f() { set(OPTION); }\n";
        assert!(check_text("a.rs", &whole.replace("OPTION", OPTION)).is_empty());
    }

    #[test]
    fn files_under_tests_and_the_vocabulary_are_not() {
        let text = "//! x\nfn f() { set(OPTION); }\n";
        let sources = [
            source("a/tests/it/main.rs", text),
            source("a/tests/it/sub/part.rs", text),
            source("schema/src/vocab.rs", text),
            source("a/src/tests.rs", text),
        ];
        assert_eq!(lines(&check(&sources)), ["a/src/tests.rs:2"]);
    }

    #[test]
    fn a_module_file_a_cfg_test_declares_is_test_code_with_what_it_declares() {
        let text = "//! x\nfn f() { set(OPTION); }\n";
        let sources = [
            source(
                "a/src/lib.rs",
                "//! x\nmod plain;\nmod notify;\n#[cfg(test)]\nmod testing;\n",
            ),
            source("a/src/plain.rs", text),
            source("a/src/testing.rs", "//! x\nmod builders;\n"),
            source("a/src/testing/builders.rs", text),
            source(
                "a/src/notify/mod.rs",
                "//! x\n#[cfg(test)]\nmod tests;\nfn f() {}\n",
            ),
            source("a/src/notify/tests.rs", text),
            source("a/src/notify/fire.rs", "//! x\n#[cfg(test)]\nmod tests;\n"),
            source("a/src/notify/fire/tests/mod.rs", text),
        ];
        assert_eq!(lines(&check(&sources)), ["a/src/plain.rs:2"]);
    }
}
