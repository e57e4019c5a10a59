//! `corral device add | list | grant | revoke`.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::support::{Home, is_error};

#[test]
fn devices_are_enrolled_listed_granted_and_revoked() {
    let home = Home::new("unused");
    home.enrol("phone", "SHA256:phone", &["read"]);
    home.ok(&["device", "add", "tablet", "--id", "SHA256:tablet"]);
    home.ok(&["device", "grant", "phone", "act:answer"]);
    home.ok(&["device", "grant", "phone", "act:answer"]);
    let list: Value = serde_json::from_str(&home.ok(&["device", "list", "--json"])).unwrap();
    assert_eq!(list["schema"], 1);
    let devices = list["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    assert_eq!(
        devices[0]["scopes"],
        serde_json::json!(["read", "act:answer"]),
        "grant is idempotent"
    );
    assert_eq!(
        devices[1]["scopes"],
        serde_json::json!(["read"]),
        "read by default"
    );
    let table = home.ok(&["device", "list"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [
            vec!["NAME", "ID", "SCOPES"],
            vec!["phone", "SHA256:phone", "read,act:answer"],
            vec!["tablet", "SHA256:tablet", "read"],
        ],
        "{table}"
    );

    home.ok(&["device", "revoke", "phone"]);
    let list: Value = serde_json::from_str(&home.ok(&["device", "list", "--json"])).unwrap();
    assert_eq!(list["devices"].as_array().unwrap().len(), 1);

    let store = home.dir.path().join("config/corral/devices.toml");
    assert_eq!(
        std::fs::metadata(&store).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let text = std::fs::read_to_string(&store).unwrap();
    assert!(
        text.contains("[[device]]") && text.contains("paired_at_ms"),
        "{text}"
    );
}

/// Writes a store by hand, private as `corral device` would leave it (one others could read would
/// add a warning to every command's stderr).
fn write_store(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn fails(home: &Home, args: &[&str], needle: &str) {
    let out = home.corral().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("corral: ") && stderr.contains(needle),
        "{args:?}: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "one readable line: {stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn mistakes_are_one_readable_line_and_change_nothing() {
    let home = Home::new("unused");
    home.enrol("phone", "fp1", &["read"]);
    fails(
        &home,
        &["device", "add", "phone", "--id", "fp2"],
        "already exists",
    );
    fails(
        &home,
        &["device", "add", "other", "--id", "fp1"],
        "already enrolled as phone",
    );
    fails(
        &home,
        &["device", "add", "x", "--id", "fp3", "--scope", "act:anwser"],
        "unknown scope",
    );
    fails(
        &home,
        &["device", "grant", "ghost", "read"],
        "no device named ghost",
    );
    fails(
        &home,
        &["device", "revoke", "ghost"],
        "no device named ghost",
    );
    let list: Value = serde_json::from_str(&home.ok(&["device", "list", "--json"])).unwrap();
    assert_eq!(list["devices"].as_array().unwrap().len(), 1);
}

#[test]
fn a_malformed_store_is_a_hard_error() {
    let home = Home::new("unused");
    write_store(
        &home.dir.path().join("config/corral/devices.toml"),
        "[[device]\n",
    );
    fails(&home, &["device", "list"], "is malformed");
    let mut host = home.serve("fp1");
    let frame = host.recv();
    assert!(is_error(&frame, "0", "internal"), "{frame}");
    assert_eq!(host.exit_code(), 1);
}

/// A hand-edited store with two records of one device (the old code answered every lookup with
/// the first, so revoking it left the device connectable with the second's scopes): every device
/// command refuses it, pointing at both records, and changes nothing; serve cannot start.
#[test]
fn a_store_that_repeats_an_id_or_a_name_is_refused_everywhere() {
    let home = Home::new("unused");
    let store = home.dir.path().join("config/corral/devices.toml");
    let repeated_id = "[[device]]\nid = \"fp1\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 1\n\n[[device]]\nid = \"fp2\"\nname = \"tablet\"\nscopes = [\"read\"]\npaired_at_ms = 2\n\n[[device]]\nid = \"fp1\"\nname = \"old\"\nscopes = [\"read\", \"act:answer\"]\npaired_at_ms = 3\n";
    let repeated_name = "[[device]]\nid = \"fp1\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 1\n\n[[device]]\nid = \"fp2\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 2\n";
    for (text, needle) in [
        (
            repeated_id,
            "records 1 (\"phone\", line 1) and 3 (\"old\", line 13) share the id \"fp1\"",
        ),
        (
            repeated_name,
            "records 1 (\"phone\", line 1) and 2 (\"phone\", line 7) share the name \"phone\"",
        ),
    ] {
        write_store(&store, text);
        for args in [
            &["device", "list"][..],
            &["device", "list", "--json"],
            &["device", "add", "watch", "--id", "fp9"],
            &["device", "grant", "phone", "act:steer"],
            &["device", "revoke", "phone"],
        ] {
            fails(&home, args, needle);
        }
        assert_eq!(
            std::fs::read_to_string(&store).unwrap(),
            text,
            "nothing changed"
        );
        let mut host = home.serve("fp1");
        let frame = host.recv();
        assert!(is_error(&frame, "0", "internal"), "{frame}");
        assert_eq!(host.exit_code(), 1);
        let stderr = host.stderr();
        assert!(stderr.contains(needle), "the log points at both: {stderr}");
    }
}

/// A key this build does not know (a newer corral's, a person's note) survives every device
/// command that rewrites the store.
#[test]
fn keys_the_host_does_not_know_survive_device_commands() {
    let home = Home::new("unused");
    let store = home.dir.path().join("config/corral/devices.toml");
    write_store(
        &store,
        "owner = \"ana\"\n\n[[device]]\nid = \"fp1\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 1\nnote = \"the blue one\"\n\n[[device]]\nid = \"fp2\"\nname = \"tablet\"\nscopes = [\"read\"]\npaired_at_ms = 2\nnote = \"lost\"\n",
    );
    home.ok(&["device", "add", "watch", "--id", "fp3"]);
    home.ok(&["device", "grant", "phone", "act:answer"]);
    home.ok(&["device", "revoke", "tablet"]);
    let text = std::fs::read_to_string(&store).unwrap();
    assert!(
        text.contains("owner = \"ana\"") && text.contains("note = \"the blue one\""),
        "{text}"
    );
    assert!(
        !text.contains("lost"),
        "the revoked record's keys went with it: {text}"
    );
    let list: Value = serde_json::from_str(&home.ok(&["device", "list", "--json"])).unwrap();
    assert_eq!(
        list["devices"][0],
        serde_json::json!({"id":"fp1","name":"phone","scopes":["read","act:answer"],"paired_at_ms":1}),
        "unknown keys stay out of the listing"
    );
}
