//! The host's device store (`devices.toml`) and the listing `corral device list --json` prints.
//!
//! A device is known by the fingerprint the spawner passes as `--device`. Its record holds its
//! scopes; removing the record revokes it. The store is the only source of a connection's scopes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::Scope;

/// `devices.toml`: `[[device]]` tables. An absent file is an empty store.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DeviceStore {
    /// The enrolled devices.
    #[serde(rename = "device", default)]
    pub devices: Vec<DeviceRecord>,
}

/// One enrolled device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceRecord {
    /// The device fingerprint, as the spawner passes it to `serve --device`.
    pub id: String,
    /// A name unique in the store, chosen by the person enrolling it.
    pub name: String,
    /// What the device may do.
    #[serde(default)]
    pub scopes: Vec<Scope>,
    /// Epoch milliseconds of enrolment.
    pub paired_at_ms: u64,
}

impl DeviceStore {
    /// The record of a fingerprint.
    pub fn by_id(&self, id: &str) -> Option<&DeviceRecord> {
        self.devices.iter().find(|device| device.id == id)
    }

    /// The record of a name.
    pub fn by_name(&self, name: &str) -> Option<&DeviceRecord> {
        self.devices.iter().find(|device| device.name == name)
    }
}

/// What `corral device list --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceList {
    /// Version of this document, 1.
    #[schemars(schema_with = "crate::envelope::document_version_1")]
    pub schema: u32,
    /// Every enrolled device, in store order.
    pub devices: Vec<DeviceRecord>,
}
