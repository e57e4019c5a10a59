//! `corral device add | list | grant | revoke`: the device store from the command line.
//!
//! stdout holds only what a script would capture: the listing, and `add --key`'s
//! `authorized_keys` line. What a change did is confirmed in one line on stderr.

use super::output::{say, say_raw, tell};
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
            tell!("enrolled {name} ({id}) with {}", shown(&scopes));
            if let Some(key) = key {
                let corral = std::env::current_exe()
                    .and_then(std::fs::canonicalize)
                    .context("finding this binary's path")?;
                say!("{}", key.authorized_keys_line(&corral.to_string_lossy()));
            }
        }
        DeviceCommand::List { json } => {
            let store = file.load()?;
            if json {
                let list = DeviceList {
                    schema: SCHEMA_VERSION,
                    devices: store.devices,
                };
                say!(
                    "{}",
                    serde_json::to_string(&list).context("encoding the device list")?
                );
            } else {
                say_raw!("{}", listing(&store.devices, &paths.device_store));
            }
        }
        DeviceCommand::Grant { name, scope } => {
            let scope = parse_scopes(std::slice::from_ref(&scope))?.remove(0);
            let (device, added) = file.update(|store| {
                let Some(device) = store.devices.iter_mut().find(|d| d.name == name) else {
                    bail!("no device named {name}");
                };
                let added = !device.scopes.contains(&scope);
                if added {
                    device.scopes.push(scope.clone());
                }
                Ok((device.clone(), added))
            })?;
            let (name, id, now) = (&device.name, &device.id, shown(&device.scopes));
            if added {
                tell!("granted {} to {name} ({id}): it has {now}", scope.as_str());
            } else {
                tell!("{name} ({id}) already has {}: it has {now}", scope.as_str());
            }
        }
        DeviceCommand::Revoke { name } => {
            let removed = file.update(|store| {
                let Some(at) = store.devices.iter().position(|d| d.name == name) else {
                    bail!("no device named {name}");
                };
                Ok(store.devices.remove(at))
            })?;
            tell!(
                "revoked {name} ({}): its live connections end at their next request or publish",
                removed.id
            );
        }
    }
    Ok(0)
}

/// Scopes as a person reads them: `read, act:answer`, or `no scope`.
fn shown(scopes: &[Scope]) -> String {
    if scopes.is_empty() {
        return "no scope".to_owned();
    }
    scopes
        .iter()
        .map(Scope::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `device list`'s table: a header and one row per device, scopes as the store holds them
/// (a token this build does not know verbatim); or, for an empty store, a line saying so.
fn listing(devices: &[DeviceRecord], store: &std::path::Path) -> String {
    if devices.is_empty() {
        return format!(
            "no device is enrolled (the store is {}); enrol one with `corral device add`\n",
            store.display()
        );
    }
    let mut rows = vec![["NAME", "ID", "SCOPES"].map(str::to_owned)];
    for device in devices {
        let scopes: Vec<&str> = device.scopes.iter().map(Scope::as_str).collect();
        rows.push([device.name.clone(), device.id.clone(), scopes.join(",")]);
    }
    super::table(&rows)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn device(name: &str, id: &str, scopes: &[&str]) -> DeviceRecord {
        DeviceRecord {
            id: id.to_owned(),
            name: name.to_owned(),
            scopes: scopes.iter().map(|s| Scope::parse(s).unwrap()).collect(),
            paired_at_ms: 1,
        }
    }

    #[test]
    fn the_listing_has_a_header_and_aligned_rows() {
        let devices = [
            device("phone", "SHA256:phone", &["read", "act:answer"]),
            device("tablet-of-ann", "SHA256:t", &["read", "act:anwser"]),
        ];
        assert_eq!(
            listing(&devices, std::path::Path::new("/s")),
            "NAME           ID            SCOPES\n\
             phone          SHA256:phone  read,act:answer\n\
             tablet-of-ann  SHA256:t      read,act:anwser\n"
        );
    }

    #[test]
    fn an_empty_store_is_said_to_be_empty() {
        let text = listing(&[], std::path::Path::new("/c/corral/devices.toml"));
        assert_eq!(
            text,
            "no device is enrolled (the store is /c/corral/devices.toml); enrol one with `corral device add`\n"
        );
    }

    #[test]
    fn scopes_read_as_a_list_or_as_none() {
        assert_eq!(shown(&[Scope::Read, Scope::ActAnswer]), "read, act:answer");
        assert_eq!(shown(&[]), "no scope");
    }
}
