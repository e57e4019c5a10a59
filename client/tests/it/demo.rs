//! The headless client against `corral-sim demo` (the real host on the fake tmux): it follows the
//! fleet, rings when a pane blocks, reads the pane's card and approves the permission it shows,
//! quoting its binder (pressed twice: one slot, the second receipt cached), and steers an idle
//! agent.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Demo, Remote, is};

#[test]
fn a_permission_is_approved_once_and_an_idle_agent_is_steered() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = Demo::start(tmp.path(), 4, 2);
    let mut remote = Remote::start(tmp.path(), &demo.host("demo", ""));
    let connected = remote.wait(Duration::from_secs(30), "the connection", |l| {
        is(l, "host", "demo") && l["link"] == "connected"
    });
    assert_eq!(
        connected["scopes"],
        json!(["read", "act:answer", "act:steer"])
    );
    remote.wait(Duration::from_secs(30), "the first snapshot", |l| {
        is(l, "snapshot", "demo") && l["rows"] == 4
    });

    // Approve what the card line showed, quoting its binder; both presses send one slot.
    let deadline = Instant::now() + Duration::from_secs(120);
    let approved = loop {
        assert!(
            Instant::now() < deadline,
            "no permission answered:\n{}",
            remote.shown()
        );
        let ring = remote.wait(Duration::from_secs(60), "a ring for a permission", |l| {
            is(l, "attention", "demo") && l["detail"] == "permission"
        });
        let pane = ring["pane"].as_str().unwrap().to_owned();
        // The ring says which episode rang, as the row that rang showed it.
        assert_ne!(ring["episode_ms"], 0, "{ring}");
        remote.send(&json!({"cmd":"card","host":"demo","pane":pane}).to_string());
        let card = remote.wait(Duration::from_secs(30), "the pane's card", |l| {
            is(l, "card", "demo") && l["pane"] == pane.as_str()
        });
        if card["card"]["card"] != "permission" {
            continue;
        }
        let binder = card["card"]["binder"].clone();
        let press = json!({"cmd":"approve","host":"demo","pane":pane,"binder":binder}).to_string();
        remote.send(&press);
        remote.send(&press);
        let mut receipts: Vec<Value> = Vec::new();
        let mut failed = false;
        while receipts.len() < 2 && !failed {
            let line = remote.wait(Duration::from_secs(30), "the approve's receipts", |l| {
                (is(l, "receipt", "demo")
                    && l["receipt"]["pane"] == pane.as_str()
                    && l.get("retry").is_none())
                    || (is(l, "failed", "demo") && l["pane"] == pane.as_str())
                    || (l["ev"] == "error" && l["line"].as_str() == Some(press.as_str()))
            });
            if line["ev"] != "receipt" {
                // Not sent: the card changed under the press (the desk answered first).
                failed = true;
            } else {
                receipts.push(line["receipt"].clone());
            }
        }
        // The desk may answer first: then the press was refused here, or the host's binder said
        // the episode moved.
        if failed || receipts[0]["outcome"] == "refused" {
            continue;
        }
        break receipts;
    };
    assert_eq!(approved[0]["slot"], approved[1]["slot"]);
    assert!(
        approved[0]["slot"].as_str().unwrap().ends_with(":approve"),
        "{approved:?}"
    );
    assert!(
        ["replied", "sent"].contains(&approved[0]["outcome"].as_str().unwrap()),
        "{approved:?}"
    );
    assert_eq!(approved[0]["cached"], false);
    assert_eq!(approved[1]["cached"], true);
    assert_eq!(approved[1]["at_ms"], approved[0]["at_ms"]);

    // Steer an idle agent.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "no idle agent steered:\n{}",
            remote.shown()
        );
        remote.send(r#"{"cmd":"fleet","state":["idle"]}"#);
        let fleet = remote.wait(Duration::from_secs(10), "the fleet", |l| l["ev"] == "fleet");
        let Some(idle) = fleet["rows"].as_array().unwrap().first() else {
            std::thread::sleep(Duration::from_millis(300));
            continue;
        };
        let pane = idle["row"]["pane"].as_str().unwrap().to_owned();
        remote.send(
            &json!({"cmd":"steer","host":"demo","pane":pane,"text":"Run the tests first."})
                .to_string(),
        );
        let receipt = remote.wait(Duration::from_secs(30), "the steer's receipt", |l| {
            is(l, "receipt", "demo") && l["receipt"]["action"] == "steer"
        });
        if receipt["receipt"]["outcome"] == "refused" {
            continue;
        }
        assert_eq!(receipt["receipt"]["outcome"], "sent", "{receipt}");
        assert!(
            receipt["receipt"]["slot"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{pane}:"))
        );
        break;
    }
    let (code, stderr) = remote.quit();
    assert_eq!(code, 0, "{stderr}");
}
