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
    assert!(
        home.ok(&["device", "list"])
            .contains("phone\tSHA256:phone\tread,act:answer")
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
    std::fs::write(
        home.dir.path().join("config/corral/devices.toml"),
        "[[device]\n",
    )
    .unwrap();
    fails(&home, &["device", "list"], "is malformed");
    let mut host = home.serve("fp1");
    let frame = host.recv();
    assert!(is_error(&frame, "0", "internal"), "{frame}");
    assert_eq!(host.exit_code(), 1);
}
