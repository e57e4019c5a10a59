//! Dispatch end to end: `corral act`, `corral receipts` and `corral actions` at the host, and
//! `dispatch`/`receipts` over `serve`, on the fake tmux and on a scratch real tmux server. Races
//! are `races.rs`'s, a dispatcher killed mid-dispatch `kills.rs`'s.

use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Backend, Fleet, Home, fleet_with_phone};

on_both_backends!(act_at_the_host, dispatch_from_devices);

pub fn act(home: &Home, args: &[&str]) -> Output {
    home.corral().arg("act").args(args).output().unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fake's `send-keys` calls (argv after the socket flags), in order.
pub fn sent_keys(fleet: &Fleet) -> Vec<Vec<String>> {
    fleet
        .fake_calls()
        .into_iter()
        .filter_map(|argv| {
            let at = argv.iter().position(|a| a == "send-keys")?;
            Some(argv[at..].to_vec())
        })
        .collect()
}

pub fn act_log(home: &Home) -> Vec<Value> {
    std::fs::read_to_string(home.dir.path().join("act.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn home_with_act_log(fleet: &Fleet) -> Home {
    let home = fleet.home();
    home.write_config(&format!(
        "[serve]\nreconcile_interval_ms = 100\n\n[act]\nlog = \"{}\"\n",
        home.dir.path().join("act.log").display()
    ));
    home
}

fn act_at_the_host(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = home_with_act_log(&fleet);
    let blocked = fleet.pane("blocked");
    let idle = fleet.pane("idle");

    // The parked request makes approve a hook-lane verdict.
    let out = act(&home, &[&blocked, "approve", "--slot", "a1"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).starts_with("replied "), "{}", stdout(&out));
    let verdict =
        std::fs::read_to_string(home.runtime().join("corral/verdicts/req-blocked")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&verdict).unwrap(),
        json!({"decision": "allow", "request": "req-blocked"})
    );
    let again = act(&home, &[&blocked, "approve", "--slot", "a1"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout(&again).ends_with(", cached\n"), "{}", stdout(&again));

    // Text is typed literally, then submitted.
    let out = act(
        &home,
        &[&idle, "steer", "--text", "add a test;", "--slot", "a2"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if backend == Backend::Fake {
        // One invocation: the text after `--` (a final `;` escaped, as tmux reads it), then
        // Enter, chained with tmux's `;`.
        let keys = sent_keys(&fleet);
        let want: Vec<String> = [
            "send-keys",
            "-t",
            &idle,
            "-l",
            "--",
            "add a test\\;",
            ";",
            "send-keys",
            "-t",
            &idle,
            "Enter",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(keys, [want]);
    }

    // Refusals carry their exit codes; a malformed request is a usage error.
    assert_eq!(
        act(&home, &["%404", "approve", "--slot", "a3"])
            .status
            .code(),
        Some(3)
    );
    let refused = act(&home, &[&blocked, "steer", "--text", "x", "--slot", "a4"]);
    assert_eq!(refused.status.code(), Some(4));
    assert!(
        stdout(&refused).starts_with("refused/requires-unmet"),
        "{}",
        stdout(&refused)
    );
    assert_eq!(
        act(&home, &[&idle, "steer", "--slot", "a5"]).status.code(),
        Some(2)
    );

    let receipts: Value = serde_json::from_str(&home.ok(&["receipts", "--json"])).unwrap();
    let slots: Vec<&str> = receipts["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["slot"].as_str().unwrap())
        .collect();
    assert_eq!(slots.len(), 4, "{receipts}");
    assert!(
        receipts["receipts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["cached"] == true && r["device"] == "cli")
    );
    let one: Value =
        serde_json::from_str(&home.ok(&["receipts", "--json", "--slot", "a2"])).unwrap();
    assert_eq!(one["receipts"][0]["outcome"], "sent");
    // The act log has one line per fired action: the verdict and the steer.
    let log = act_log(&home);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|l| l["surface"] == "cli"));
}

fn dispatch_from_devices(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    home.enrol("tablet", "fp-tablet", &["read", "act:answer"]);
    home.enrol("watch", "fp-watch", &["read"]);
    let blocked = fleet.pane("blocked");
    let approve = |id: &str, slot: &str| {
        json!({"schema":1,"id":id,"t":"dispatch","slot":slot,"host":"","pane":blocked,
               "action":"approve","binder":{"expect_episode_ms":0,"expect_permission_request":"req-blocked"}})
        .to_string()
    };

    let mut watch = home.serve("fp-watch");
    watch.hello();
    watch.send(&approve("w", "ro"));
    let refused = watch.recv();
    assert_eq!(
        (
            &refused["outcome"],
            &refused["reason"],
            &refused["exit_code"],
            &refused["cached"]
        ),
        (
            &json!("refused"),
            &json!("scope-denied"),
            &json!(4),
            &json!(false)
        )
    );

    let mut phone = home.serve("fp-phone");
    phone.hello();
    phone.send(&approve("p", "slot-1"));
    let first = phone.recv();
    assert_eq!(
        (&first["outcome"], &first["cached"], &first["device"]),
        (&json!("replied"), &json!(false), &json!("fp-phone"))
    );

    let mut tablet = home.serve("fp-tablet");
    tablet.hello();
    tablet.send(&approve("t", "slot-1"));
    let second = tablet.recv();
    assert_eq!(second["cached"], true, "{second}");
    assert_eq!(
        second["device"], "fp-phone",
        "the stored receipt, whoever asks"
    );

    // Looked up from another connection, by a device that holds only read.
    watch.send(&json!({"schema":1,"id":"r","t":"receipts","slot":"slot-1"}).to_string());
    let found = watch.recv();
    assert_eq!(found["receipts"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found["receipts"][0]["outcome"], "replied");
    watch.send(&json!({"schema":1,"id":"r2","t":"receipts","slot":"ro"}).to_string());
    assert_eq!(
        watch.recv()["receipts"],
        json!([]),
        "a scope refusal records nothing"
    );
}

#[test]
fn actions_lists_the_bundled_and_the_users_manifests_and_names_a_broken_one() {
    let home = Home::new("unused");
    let table = home.ok(&["actions"]);
    assert!(table.starts_with("AGENT"), "{table}");
    assert!(table.contains("bundled:claude.toml"), "{table}");
    let actions_dir = home.dir.path().join("config/corral/actions");
    std::fs::create_dir_all(&actions_dir).unwrap();
    let mine = actions_dir.join("mine.toml");
    std::fs::write(
        &mine,
        "agent = \"claude\"\n[[action]]\nname = \"run-tests\"\nkind = \"exec\"\ncommand = \"cargo test\"\n",
    )
    .unwrap();
    let list: Value = serde_json::from_str(&home.ok(&["actions", "--json"])).unwrap();
    assert_eq!(list["schema"], 1);
    let run = list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "run-tests")
        .unwrap();
    assert_eq!(
        (&run["kind"], &run["scope"]),
        (&json!("exec"), &Value::Null)
    );
    assert_eq!(run["source"], mine.display().to_string());
    let approve = list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == "claude" && a["name"] == "approve")
        .unwrap();
    assert_eq!(approve["scope"], "act:answer");

    std::fs::write(
        actions_dir.join("zz-broken.toml"),
        "agent = \"x\"\n\n[[action]]\nname = \"approve\"\nkind = \"keys\"\nkyes = [\"1\"]\n",
    )
    .unwrap();
    let out = home.corral().arg("actions").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("zz-broken.toml") && stderr.contains("line 3") && stderr.contains("kyes"),
        "{stderr}"
    );
}
