//! `corral device add | list | grant | revoke`: the device store from the command line.
#![allow(clippy::print_stdout, reason = "a listing command's output is stdout")]

use anyhow::{Context, bail};
use schema::{DeviceList, DeviceRecord, SCHEMA_VERSION, Scope};

use crate::cli::DeviceCommand;
use crate::clock::now_ms;
use crate::devices::DeviceFile;
use crate::paths::Paths;
use crate::sshkey::PublicKey;

pub fn run(command: DeviceCommand, paths: &Paths) -> anyhow::Result<u8> {
    let file = DeviceFile::new(paths.device_store.clone());
    match command {
        DeviceCommand::Add {
            name,
            id,
            key,
            scopes,
        } => {
            let scopes = if scopes.is_empty() {
                vec![Scope::Read]
            } else {
                parse_scopes(&scopes)?
            };
            let key = key.as_deref().map(read_key).transpose()?;
            let id = match (&key, id) {
                (Some(key), _) => key.fingerprint(),
                (None, Some(id)) => id,
                (None, None) => bail!("give the device's --key or its --id"),
            };
            if name.trim().is_empty() || id.trim().is_empty() {
                bail!("a device needs a non-empty name and id");
            }
            file.update(|store| {
                if store.by_name(&name).is_some() {
                    bail!("a device named {name} already exists");
                }
                if let Some(other) = store.by_id(&id) {
                    bail!("device id {id} is already enrolled as {}", other.name);
                }
                store.devices.push(DeviceRecord {
                    id: id.clone(),
                    name: name.clone(),
                    scopes: scopes.clone(),
                    paired_at_ms: now_ms(),
                });
                Ok(())
            })?;
            let shown: Vec<&str> = scopes.iter().map(Scope::as_str).collect();
            eprintln!("enrolled {name} ({id}) with {}", shown.join(", "));
            if let Some(key) = key {
                let corral = std::env::current_exe()
                    .and_then(std::fs::canonicalize)
                    .context("finding this binary's path")?;
                println!("{}", key.authorized_keys_line(&corral.to_string_lossy()));
            }
        }
        DeviceCommand::List { json } => {
            let store = file.load()?;
            if json {
                let list = DeviceList {
                    schema: SCHEMA_VERSION,
                    devices: store.devices,
                };
                println!(
                    "{}",
                    serde_json::to_string(&list).context("encoding the device list")?
                );
            } else {
                for device in &store.devices {
                    let scopes: Vec<&str> = device.scopes.iter().map(Scope::as_str).collect();
                    println!("{}\t{}\t{}", device.name, device.id, scopes.join(","));
                }
            }
        }
        DeviceCommand::Grant { name, scope } => {
            let scope = parse_scopes(std::slice::from_ref(&scope))?.remove(0);
            file.update(|store| {
                let Some(device) = store.devices.iter_mut().find(|d| d.name == name) else {
                    bail!("no device named {name}");
                };
                if !device.scopes.contains(&scope) {
                    device.scopes.push(scope);
                }
                Ok(())
            })?;
        }
        DeviceCommand::Revoke { name } => {
            file.update(|store| {
                let before = store.devices.len();
                store.devices.retain(|d| d.name != name);
                if store.devices.len() == before {
                    bail!("no device named {name}");
                }
                Ok(())
            })?;
        }
    }
    Ok(0)
}

/// A public key given as a file path or as the key line itself.
fn read_key(given: &str) -> anyhow::Result<PublicKey> {
    let looks_like_a_line = given.trim_start().starts_with("ssh-")
        || given.trim_start().starts_with("ecdsa-")
        || given.trim_start().starts_with("sk-");
    let text = if looks_like_a_line {
        given.to_owned()
    } else {
        std::fs::read_to_string(given).with_context(|| format!("reading the key {given}"))?
    };
    PublicKey::parse(&text).map_err(|why| anyhow::anyhow!("the key {given}: {why}"))
}

/// Scopes from the command line: only tokens this build knows, so a typo is not enrolled.
fn parse_scopes(tokens: &[String]) -> anyhow::Result<Vec<Scope>> {
    tokens
        .iter()
        .map(|token| match Scope::parse(token) {
            Some(scope) if !scope.is_other() => Ok(scope),
            _ => bail!(
                "unknown scope {token:?}; known scopes: {}",
                Scope::KNOWN.join(", ")
            ),
        })
        .collect()
}
