//! The rule that sibling modules do not use each other in a circle. Inside every crate of the
//! workspace (each library, binary and integration-test tree), every path a file names through
//! `crate::`, `super::` or `self::` (in a `use` tree or in code) is resolved to the module it
//! reaches; a file of module `a` that reaches its sibling `b` (a module with the same parent) is
//! an edge `a → b`, a file deeper inside `a` counting for `a`. A cycle among siblings is a
//! problem. Parent and child may use each other; a name re-exported by a parent is the parent's.
//! Test code is no edge: a path named inside a module called `tests` or `testing` (the unit
//! tests and their shared builders, compiled only for tests) reaches into the code it tests.
//!
//! The source is read by a small lexer that knows comments, strings, raw strings and character
//! literals, so a path in a comment or a string is not a use. Modules come from the file layout
//! (`a.rs`, `a/mod.rs`, `a/b.rs`) and from inline `mod name { ... }` blocks.

use std::collections::{BTreeMap, BTreeSet};

use super::lex::{Token, lex};

/// One source file of a module tree.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The file as problems name it (`simulator/src/sim/up.rs`).
    pub shown: String,
    /// The module the file is (`["sim", "up"]`; the tree's root is `[]`).
    pub module: Vec<String>,
    /// Its text.
    pub text: String,
}

/// Every cycle among sibling modules of one module tree, one readable line each.
pub fn check_tree(tree: &str, files: &[SourceFile]) -> Vec<String> {
    let mut modules: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut references = Vec::new();
    for file in files {
        for prefix in 0..=file.module.len() {
            modules.insert(file.module[..prefix].to_vec());
        }
        let scan = scan(&file.module, &file.text);
        modules.extend(scan.inline_modules);
        references.extend(scan.paths.into_iter().map(|(from, to, line)| Reference {
            from,
            to,
            at: format!("{}:{line}", file.shown),
        }));
    }
    // Edges per parent module: child → child, with the first place that makes each.
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for reference in references {
        if reference
            .from
            .iter()
            .any(|m| m == "tests" || m == "testing")
        {
            continue;
        }
        let common = reference
            .from
            .iter()
            .zip(&reference.to)
            .take_while(|(a, b)| a == b)
            .count();
        let (Some(a), Some(b)) = (reference.from.get(common), reference.to.get(common)) else {
            continue;
        };
        let parent = reference.from[..common].to_vec();
        let mut sibling = parent.clone();
        sibling.push(b.clone());
        if !modules.contains(&sibling) {
            continue;
        }
        graphs
            .entry(parent)
            .or_default()
            .entry((a.clone(), b.clone()))
            .or_insert(reference.at);
    }
    let mut problems = Vec::new();
    for (parent, edges) in &graphs {
        for cycle in cycles(edges) {
            let shown_parent = if parent.is_empty() {
                "the crate root".to_owned()
            } else {
                format!("`{}`", parent.join("::"))
            };
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|pair| {
                    let at = &edges[&(pair[0].clone(), pair[1].clone())];
                    format!("{} → {} ({at})", pair[0], pair[1])
                })
                .collect();
            problems.push(format!(
                "{tree}: modules under {shown_parent} use each other in a cycle: {}",
                steps.join(", ")
            ));
        }
    }
    problems
}

/// A path a file names, resolved: from the module it is written in to the one it reaches.
#[derive(Debug)]
struct Reference {
    from: Vec<String>,
    to: Vec<String>,
    at: String,
}

/// The cycles of a graph, each a shortest closed walk (`[a, b, a]`) through the smallest module
/// not yet shown in one, so every module that is in some cycle is named.
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for &start in next.keys() {
        if shown.contains(start) {
            continue;
        }
        if let Some(walk) = cycle_through(&next, start) {
            shown.extend(walk.iter().cloned());
            found.push(walk);
        }
    }
    found
}

/// A shortest walk from `start` back to it, found breadth-first.
fn cycle_through(next: &BTreeMap<&str, Vec<&str>>, start: &str) -> Option<Vec<String>> {
    let mut came: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for &to in next.get(at).into_iter().flatten() {
            if to == start {
                let mut walk = vec![start.to_owned(), at.to_owned()];
                let mut node = at;
                while node != start {
                    node = came[node];
                    walk.push(node.to_owned());
                }
                walk.reverse();
                return Some(walk);
            }
            if to != start && !came.contains_key(to) {
                came.insert(to, at);
                queue.push_back(to);
            }
        }
    }
    None
}

/// What a file's text names: inline modules, and resolved paths with their line.
#[derive(Debug, Default)]
struct Scan {
    inline_modules: Vec<Vec<String>>,
    paths: Vec<(Vec<String>, Vec<String>, usize)>,
}

fn scan(module: &[String], text: &str) -> Scan {
    let tokens = lex(text);
    let mut scan = Scan::default();
    // Inline modules open at a brace depth; the module a token is in is the file's plus them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let here = |inline: &[(String, usize)]| -> Vec<String> {
        let mut at = module.to_vec();
        at.extend(inline.iter().map(|(name, _)| name.clone()));
        at
    };
    while i < tokens.len() {
        let (token, line) = (&tokens[i].text, tokens[i].line);
        match token.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if inline.last().is_some_and(|(_, open)| *open == depth + 1) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t.text == "{") => {
                let name = tokens[i + 1].text.clone();
                inline.push((name, depth + 1));
                scan.inline_modules.push(here(&inline));
                depth += 1;
                i += 3;
                continue;
            }
            "use" => {
                let from = here(&inline);
                let mut parser = UseTree {
                    tokens: &tokens,
                    at: i + 1,
                };
                for path in parser.tree(Vec::new()) {
                    if let Some(to) = resolve(&from, &path) {
                        scan.paths.push((from.clone(), to, line));
                    }
                }
                i = parser.at;
                continue;
            }
            "crate" | "super" | "self"
                if tokens.get(i + 1).is_some_and(|t| t.text == "::")
                    && (i == 0 || tokens[i - 1].text != "::") =>
            {
                let mut path = vec![token.clone()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|t| t.text == "::")
                    && tokens.get(j + 1).is_some_and(|t| t.is_ident())
                {
                    path.push(tokens[j + 1].text.clone());
                    j += 2;
                }
                let from = here(&inline);
                if let Some(to) = resolve(&from, &path) {
                    scan.paths.push((from, to, line));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// A path as written (`super::plan::load`) resolved from the module it is written in; `None`
/// for a path that does not start at `crate`, `super` or `self` (an external crate, or a name in
/// scope).
fn resolve(from: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut at: Vec<String>;
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at = Vec::new();
            rest = &rest[1..];
        }
        Some("self") => {
            at = from.to_vec();
            rest = &rest[1..];
        }
        Some("super") => {
            at = from.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// A `use` declaration's tree, read into the paths it names (a glob names its module).
struct UseTree<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl UseTree<'_> {
    fn peek(&self) -> &str {
        self.tokens.get(self.at).map_or("", |t| t.text.as_str())
    }

    fn tree(&mut self, prefix: Vec<String>) -> Vec<Vec<String>> {
        let mut path = prefix;
        loop {
            match self.peek() {
                "::" => self.at += 1,
                "{" => {
                    self.at += 1;
                    let mut paths = Vec::new();
                    while !matches!(self.peek(), "}" | "") {
                        paths.extend(self.tree(path.clone()));
                        if self.peek() == "," {
                            self.at += 1;
                        }
                    }
                    self.at += 1;
                    self.finish();
                    return paths;
                }
                "*" => {
                    self.at += 1;
                    self.finish();
                    return vec![path];
                }
                word if self.tokens[self.at].is_ident() => {
                    path.push(word.to_owned());
                    self.at += 1;
                    if self.peek() == "as" {
                        self.at += 2;
                    }
                    if self.peek() != "::" {
                        self.finish();
                        return vec![path];
                    }
                }
                _ => {
                    self.finish();
                    return vec![path];
                }
            }
        }
    }

    /// Steps over the `;` that ends the declaration, if this is the top of the tree.
    fn finish(&mut self) {
        if self.peek() == ";" {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(module: &str, text: &str) -> SourceFile {
        let module: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        SourceFile {
            shown: format!("src/{}.rs", module.join("/")),
            module,
            text: text.to_owned(),
        }
    }

    #[test]
    fn two_siblings_using_each_other_are_a_cycle() {
        let problems = check_tree(
            "demo/src",
            &[
                file("", "//! r\nmod a;\nmod b;\n"),
                file("a", "//! a\nuse crate::b::Thing;\n"),
                file("b", "//! b\n\nfn f() { super::a::helper(); }\n"),
            ],
        );
        assert_eq!(
            problems,
            [
                "demo/src: modules under the crate root use each other in a cycle: \
                 a → b (src/a.rs:2), b → a (src/b.rs:3)"
            ]
        );
    }

    #[test]
    fn a_longer_cycle_deeper_in_the_tree_is_found_through_every_kind_of_path() {
        let problems = check_tree(
            "demo/src",
            &[
                file("sim::up", "use super::{park::park, tmux};\n"),
                file(
                    "sim::park",
                    "use self::inner::x;\nmod inner { pub fn x() { crate::sim::step::go(); } }\n",
                ),
                file("sim::step", "use super::up;\n"),
                file("sim::tmux", "//! leaf\n"),
            ],
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("demo/src: modules under `sim` use each other in a cycle: "),
            "{problems:?}"
        );
        for edge in ["up → park", "park → step", "step → up"] {
            assert!(problems[0].contains(edge), "{edge}: {problems:?}");
        }
    }

    #[test]
    fn parents_children_tests_comments_and_strings_make_no_cycle() {
        let problems = check_tree(
            "demo/src",
            &[
                file("", "pub use a::Thing;\nfn f() { a::g(); }\n"),
                file(
                    "a",
                    "use crate::helper;\nuse super::b::X;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::a::inner;\n}\n",
                ),
                file("a::inner", "use super::super::a;\n"),
                file(
                    "b",
                    "// use crate::a::x;\nconst S: &str = \"crate::a::x\";\nconst R: &str = r#\"super::a\"#;\nfn l<'a>(x: &'a str) -> char { 'a' }\n",
                ),
            ],
        );
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn test_code_reaching_into_what_it_tests_is_no_edge() {
        let problems = check_tree(
            "demo/src",
            &[
                file(
                    "",
                    "mod devices;
#[cfg(test)]
mod testing;
",
                ),
                file(
                    "devices",
                    "#[cfg(test)]
mod tests {
    use crate::testing::enrol;
}
",
                ),
                file(
                    "testing",
                    "use crate::devices::DeviceFile;
",
                ),
            ],
        );
        assert!(problems.is_empty(), "{problems:?}");
        // The same pair outside test code is a cycle.
        let problems = check_tree(
            "demo/src",
            &[
                file(
                    "devices",
                    "use crate::helpers::enrol;
",
                ),
                file(
                    "helpers",
                    "use crate::devices::DeviceFile;
",
                ),
            ],
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn a_name_that_is_not_a_sibling_module_is_no_edge() {
        let problems = check_tree(
            "demo/src",
            &[
                file("a", "use crate::workspace_root;\n"),
                file("b", "use crate::a::f;\n"),
            ],
        );
        assert!(problems.is_empty(), "{problems:?}");
    }
}
