//! The format language, construct by construct. Unless a test says otherwise, each expected
//! output is what tmux 3.3a's `display-message -p -t %0` printed for the same format, on a pane
//! `%0` with the values [`lookup`] gives (`@v0` set to `plain`, `@path` to `/a/b.c/d`, `@fmt` to
//! `#{pane_id}-#{@v0}`).

use super::*;
use crate::fake::vars;

fn lookup(var: &Var) -> Result<Option<String>, FormatError> {
    Ok(match var {
        Var::Builtin(variable) => match variable.name {
            "pane_id" => Some("%0".into()),
            "session_name" => Some("s1".into()),
            "window_index" => Some("0".into()),
            "pane_index" => Some("0".into()),
            "pane_title" => Some("vm".into()),
            "pane_active" => Some("1".into()),
            "pane_in_mode" => Some("0".into()),
            "session_created" => Some("1795748939".into()),
            "host" => Some("box.example".into()),
            _ => None,
        },
        Var::Option(name) => match name.as_str() {
            "@v0" => Some("plain".into()),
            "@path" => Some("/a/b.c/d".into()),
            "@fmt" => Some("#{pane_id}-#{@v0}".into()),
            "@odd" => Some("a b$c'd#e=f%g*h~i!j{k}l".into()),
            "@n" => Some("3".into()),
            _ => None,
        },
        Var::TmuxOption(name) if name == "default-size" => Some("400x200".into()),
        Var::TmuxOption(name) => {
            return Err(FormatError::new(format!("option {name}")));
        }
    })
}

fn check(format: &str, expected: &str) {
    let parsed = Format::parse(format).unwrap_or_else(|e| panic!("{format}: {e}"));
    let out = parsed.expand(lookup).unwrap();
    assert_eq!(out, expected, "format {format:?}");
}

fn refused(format: &str) -> String {
    match Format::parse(format) {
        Err(e) => e.to_string(),
        Ok(parsed) => match parsed.expand(lookup) {
            Err(e) => e.to_string(),
            Ok(out) => panic!("{format} expanded to {out:?}"),
        },
    }
}

#[test]
fn escapes_and_aliases() {
    check("a##b", "a#b");
    check("a##[x", "a##[x");
    check("a###[x|a####[x", "a###[x|a####[x");
    check("a#,b", "a,b");
    check("a#}b", "a}b");
    check("a#xb", "a#xb");
    check("a#[fg=red]b", "a#[fg=red]b");
    check("trail#", "trail#");
    check("#D#S#I#P#T", "%0s100vm");
    check("#H", "box.example");
    check("#{@v0}#{@v0}", "plainplain");
    check("x#{pane_id}##y#{@v0}z#{@nope}w", "x%0#yplainzw");
    check("###{pane_id}", "#%0");
    check("####", "##");
    check("\x1f#{pane_id}\t", "\x1f%0\t");
    check("é#é", "é#é");
}

#[test]
fn unknown_names_expand_to_nothing() {
    check("[#{nonsense}]", "[]");
    check("x#{}y", "xy");
    check("#{pane_id;x}|#{;pane_id}|#{:pane_id}", "||%0");
    check("#{=3}x", "x");
    check("#{s/a/b}", "");
    check("#{@}", "");
    check("#{ pane_id}", "");
}

#[test]
fn malformed_replacements_end_the_format_as_tmux_does() {
    check("x#{pane_id", "x");
    check("#{?a}x", "");
    check("a#{==:a}x", "a");
    check("#{m:a}x", "");
    check("#{?1,a}x", "");
    // Only the nested format ends; the one around it goes on.
    check("#{?pane_id,y#{?z},n}!", "y!");
}

#[test]
fn comparisons() {
    check("#{==:#{@v0},plain}", "1");
    check("#{!=:#{@v0},plain}", "0");
    check("#{==:#{@nope},}", "1");
    check("#{!=:#{@nope},}", "0");
    check("x#{==:a#,b,a#,b}y", "x1y");
    check("#{==:#{pane_index}#{@v0},0plain} #{==:1,2}", "1 0");
    check("#{!=:#{==:a,a},0}", "1");
    check("#{==:a,b,c}", "0");
    check("#{!=:a#}b,a}", "1");
    check("#{<:a,b}#{>:a,b}#{<=:a,a}#{>=:a,b}", "1010");
    check("#{<:10,9}", "1");
    check("#{||:0,1}#{&&:1,0}#{&&:1,x}#{||:,0}", "1010");
    check("#{==:#{l:#{x}},#{x}}", "0");
}

#[test]
fn matches() {
    check("#{m:*a*,bab}#{m:a,b}#{m/i:A*,abc}", "101");
    check(
        "#{m:a[bc]?,abd}#{m:a\\*,a*}#{m:A*,abc}#{m:[!a]*,abc}#{m:*,}",
        "11001",
    );
    check("#{m:*plain*,#{@v0}}", "1");
}

#[test]
fn conditionals() {
    check("x#{?pane_active,y,n}y", "xyy");
    check("#{?pane_in_mode,y,n}", "n");
    check("#{?pane_active,a,b,c}", "a");
    check("#{?0,a,1,b,c}", "1,b,c");
    check("#{?#{==:1,1},y,n}", "y");
    check("#{?,y,n}#{?@v0,y,n}#{?@none,y,n}", "nyn");
    check("#{?pane_id,y,n}#{?0,y,n}#{?00,y,n}#{?1,y,n}", "ynnn");
    check("#{?nosuch_var,y,n}", "n");
    check("#{?a#,b,y,n}", "y");
    check("#{?#{@v0},y,n}|#{?#{@none},y,n}", "y|n");
    check("#{?@v0,#{?1,a,b},c}", "b");
    check("#{?pane_id,#{pane_id}#,x,n}", "%0,x");
    check(
        "#{?pane_in_mode,#[fg=white#,bg=red],#[fg=red#,bg=white]}#T",
        "#[fg=red,bg=white]vm",
    );
    check("#{?#{==:#{@v0},plain},#{?pane_active,A#}B,C},D}", "A}B");
}

#[test]
fn modifiers() {
    check("#{=3:pane_title}|#{=2:@v0}|#{=-2:@v0}", "vm|pl|in");
    // `=-3/…` is one argument, no number: no trim.
    check(
        "#{=/3/…:@odd}|#{=-3/…:@v0}|#{=0:@v0}|#{=x:@v0}",
        "a b…|plain|plain|plain",
    );
    check("#{=/-3/…:@v0}", "…ain");
    check("#{=2:#{@v0}}|#{=#{@n}:@v0}", "pl|=3:@v0");
    check("#{=/#{@n}/!:@v0}", "pla!");
    check("#{b:@path}|#{d:@path}|#{b:}|#{d:nosuch}|", "d|/a/b.c|||");
    check("#{l:#{pane_id}}|#{l:a#,b}|#{l:}", "#{pane_id}|a#,b|");
    check(
        "#{E:@fmt}|#{T:@fmt}|#{E:@v0}|#{E:@none}",
        "%0-plain|%0-plain|plain|",
    );
    check(
        "#{s/a/b/:@v0}|#{s/a/#{pane_id}/:@v0}|#{s/x/y/:@v0}",
        "plbin|pl%0in|plain",
    );
    check("#{q:@odd}", "a\\ b\\$c\\'d\\#e\\=f\\%g\\*h~i!j{k}l");
    check("#{q/h:@odd}|#{q:nosuch}", "a b$c'd##e=f%g*h~i!j{k}l|");
    check("#{n:}#{n:nosuch}#{n:@v0}|#{w:@v0}|#{n:é}", "005|5|0");
    check(
        "#{t:session_created}|#{t:pane_id}|#{t:nosuch}",
        "Fri Nov 27 03:08:59 2026||",
    );
    check(
        "[#{p7:@v0}][#{p-7:pane_index}][#{p3:@v0}]",
        "[plain  ][      0][plain]",
    );
    check("#{a:98}|#{a:300}|#{a:x}", "b||");
    check("#{=2;b:@path}|#{E;b:@v0}|#{b;=2:@path}", "d|plain|d");
    check("#{default-size}", "400x200");
}

#[test]
fn arithmetic() {
    check(
        "#{e|+|:1,2}#{e|*|f|2:3,4}#{e|/|:7,2}#{e|%|:7,2}#{e|-|:1,5}",
        "312.0031-4",
    );
    check("#{e|==|:1,1}#{e|<|:2,1}#{e|m|:9,4}", "101");
    check("#{e|+|:1, 2}|#{e|+|:0x10,1}|#{e|*|f:2,1e1}", "3|17|20.00");
    check("#{e|+|:a,1}x|#{e|+|:1.5,1}|#{e|+|f:1.5,1}", "x|2|2.50");
    check("#{e|/|:7,0}", "-9223372036854775808");
    check("#{e|+|:#{@n},#{pane_index}}", "3");
    check("#{e|+|:1}x", "x");
}

#[test]
fn what_the_fake_cannot_do_is_one_clear_line() {
    for (format, says) in [
        ("#(date)", "runs no shell commands"),
        (
            "#{client_termname}",
            "format variable #{client_termname} is not modelled",
        ),
        (
            "#{?cursor_character,a,b}",
            "#{cursor_character} is not modelled",
        ),
        ("#{==:#{config_files},x}", "#{config_files} is not modelled"),
        ("#{m/r:^a,abc}", "a regular expression"),
        ("#{S:#{session_name}}", "a loop"),
        ("#{W:x}", "a loop"),
        ("#{C:text}", "a search"),
        ("#{N/s:x}", "a name check"),
        ("#{t/p:session_created}", "another time format"),
        ("#{s/a./b/:@v0}", "a regular expression"),
        ("#{s/a/b/i:@v0}", "a substitution with flags"),
        ("#{e|^|:1,2}", "an operator"),
        ("#{T:@odd}", "strftime"),
        ("#{status}", "option status"),
    ] {
        let line = refused(format);
        assert!(line.contains(says), "{format}: {line}");
        assert_eq!(line.lines().count(), 1, "{format}");
    }
}

#[test]
fn every_unmodelled_variable_is_refused_wherever_it_is() {
    for name in vars::UNMODELLED {
        for format in [
            format!("#{{{name}}}"),
            format!("#{{?{name},a,b}}"),
            format!("#{{=3:{name}}}"),
            format!("#{{?1,#{{{name}}},}}"),
        ] {
            assert_eq!(
                refused(&format),
                format!("format variable #{{{name}}} is not modelled by the fake")
            );
        }
    }
}

#[test]
fn what_needs_a_target_is_found_in_nested_formats() {
    let needs = |format: &str| Format::parse(format).unwrap().needs_target();
    assert!(needs("#{pane_id}"));
    assert!(needs("#{?#{==:#{@x},1},a,b}"));
    assert!(needs("#{=#{pane_index}/x:host}"));
    assert!(needs("#{?pane_active,a,b}"));
    assert!(!needs("#{host} #{version} #{==:a,b} #{l:#{pane_id}}"));
    assert!(!needs("#{client_name}"));
}
