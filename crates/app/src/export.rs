//! The whole state as a genesis file's `app_state.exported` (`lantaud export`), and a chain
//! started from one (InitChain with an exported state).
//!
//! An export is the state itself, not a re-derivation: every verifiable key and value, and the
//! non-verifiable records the modules declare (the audit log's rows, flags, velocity windows,
//! anchored Travel Rule payloads: what a state-sync snapshot carries), grouped by the module
//! that owns each key (`app` for the app's own keys), each group in key order. Keys are UTF-8
//! strings (`key`) or, for a record whose key is not UTF-8, hex (`key_hex`); values are base64
//! of the stored bytes. `height` is the height whose state it is and `app_hash` the root that
//! height committed.
//!
//! Importing writes the entries as they are, runs each module's restore checks (the audit rows
//! must chain to the verifiable head, the records must match the lattice commitment), records
//! version 0 of the new store as `height`, and, when `app_hash` is not empty, refuses the file
//! unless the written state's root is that app hash: an export imports to exactly the state
//! the old chain committed, checkable against its block header. An operator who changes the
//! state on purpose (a new chain id, consensus `block.max_gas`, an edited entry) empties
//! `app_hash` and takes responsibility for the new root; the restore checks still apply.
//! The node's own indexes (blocks, transactions) are not part of the state, as in a state-sync
//! restore: the new chain's history starts at `height + 1`.

use std::collections::BTreeSet;

use base64::Engine as _;
use cnidarium::{StateDelta, StateRead, StateWrite};
use futures::StreamExt;
use lantau_store::Snapshot;
use serde::{Deserialize, Serialize};

use crate::state_key;

/// The one export format this build writes and reads.
pub const FORMAT: u32 = 1;

/// The section that holds the app's own keys (`app/...`).
pub const APP_SECTION: &str = "app";

/// `app_state.exported` of a genesis file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StateExport {
    /// [`FORMAT`].
    pub format: u32,
    /// The height whose committed state this is; the new chain's first block is `height + 1`.
    #[serde(with = "crate::modules::u64_string")]
    pub height: u64,
    /// The root that height committed (hex, upper case); empty: not checked at import.
    #[serde(default)]
    pub app_hash: String,
    /// One section per module (`app` first, then the module list's order).
    pub modules: Vec<ModuleState>,
}

/// One module's keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ModuleState {
    /// The module's name (`Module::NAME`), or `app`.
    pub module: String,
    /// Its verifiable (Merkle) entries, in key order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<Entry>,
    /// Its non-verifiable records, in key order within each declared prefix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<Entry>,
}

/// One key and its value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The key, when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The key in hex, when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_hex: Option<String>,
    /// The stored value, base64.
    pub value: String,
}

impl Entry {
    fn new(key: Vec<u8>, value: &[u8]) -> Self {
        let value = base64::engine::general_purpose::STANDARD.encode(value);
        match String::from_utf8(key) {
            Ok(k) => Self { key: Some(k), key_hex: None, value },
            Err(e) => Self { key: None, key_hex: Some(const_hex::encode(e.as_bytes())), value },
        }
    }

    /// The key's bytes and the value's.
    fn decode(&self) -> Result<(Vec<u8>, Vec<u8>), String> {
        let key = match (&self.key, &self.key_hex) {
            (Some(k), None) => k.as_bytes().to_vec(),
            (None, Some(h)) => hex::decode(h).map_err(|e| format!("key_hex {h}: {e}"))?,
            _ => return Err(format!("an entry needs exactly one of key and key_hex (value {})", self.value)),
        };
        let value = base64::engine::general_purpose::STANDARD
            .decode(&self.value)
            .map_err(|e| format!("{}: the value is not base64: {e}", String::from_utf8_lossy(&key)))?;
        Ok((key, value))
    }
}

/// The section names, in order: `app`, then every module.
fn sections() -> impl Iterator<Item = &'static str> {
    std::iter::once(APP_SECTION).chain(crate::modules::MODULE_NAMES.iter().copied())
}

/// The section that owns a key: its first path segment, when that names a section.
pub(crate) fn owner(key: &[u8]) -> Option<&'static str> {
    let first = key.split(|b| *b == b'/').next()?;
    sections().find(|s| s.as_bytes() == first)
}

/// The state of `snap` as an export. A key no module owns fails the export (it would be lost).
pub async fn export(snap: &Snapshot) -> anyhow::Result<StateExport> {
    let height = crate::storage::height_at(snap).await?;
    let app_hash = const_hex::encode_upper(snap.root_hash().await?.0);
    let mut modules: Vec<ModuleState> = sections().map(|m| ModuleState { module: m.to_string(), state: Vec::new(), records: Vec::new() }).collect();
    let section = |modules: &mut Vec<ModuleState>, key: &[u8]| -> anyhow::Result<usize> {
        let name = owner(key).ok_or_else(|| anyhow::anyhow!("the key {} belongs to no module; this build cannot export it", String::from_utf8_lossy(key)))?;
        modules.iter().position(|m| m.module == name).ok_or_else(|| anyhow::anyhow!("no section {name}"))
    };
    {
        let mut stream = std::pin::pin!(snap.prefix_raw(""));
        while let Some(item) = stream.next().await {
            let (k, v) = item?;
            let i = section(&mut modules, k.as_bytes())?;
            if let Some(m) = modules.get_mut(i) {
                m.state.push(Entry::new(k.into_bytes(), &v));
            }
        }
    }
    for prefix in crate::modules::snapshot_nonverifiable_prefixes() {
        let mut stream = std::pin::pin!(snap.nonverifiable_prefix_raw(prefix));
        while let Some(item) = stream.next().await {
            let (k, v) = item?;
            let i = section(&mut modules, &k)?;
            if let Some(m) = modules.get_mut(i) {
                m.records.push(Entry::new(k, &v));
            }
        }
    }
    Ok(StateExport { format: FORMAT, height, app_hash, modules })
}

/// The state of the store at `path` (the node stopped): its latest committed height. The
/// store is verified first and released after.
pub async fn export_store(path: std::path::PathBuf) -> anyhow::Result<StateExport> {
    let checked = path.clone();
    tokio::task::spawn_blocking(move || crate::store_check::verify(&checked))
        .await?
        .map_err(|detail| anyhow::anyhow!("the app store at {} is damaged: {detail}", path.display()))?;
    let storage = lantau_store::Storage::load(path.clone()).await.map_err(|e| anyhow::anyhow!("cannot open the app store at {}: {e:#}", path.display()))?;
    let snap = storage.latest_snapshot();
    let out = if snap.get_raw(state_key::CHAIN_ID).await?.is_none() {
        Err(anyhow::anyhow!("the app store at {} holds no chain yet (start the node once, or init from a genesis)", path.display()))
    } else {
        export(&snap).await
    };
    drop(snap);
    storage.release().await;
    out
}

impl StateExport {
    /// Writes the exported entries into `delta` (an empty store's), then what every restored
    /// state goes through ([`crate::statesync::finish_restored`]). Every entry must sit in the
    /// section that owns its key, every record under a prefix a module declares.
    pub(crate) async fn write(&self, delta: &mut StateDelta<Snapshot>) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!("export format {} (this build reads format {FORMAT})", self.format));
        }
        let mut seen = BTreeSet::new();
        for m in &self.modules {
            if !sections().any(|s| s == m.module) {
                return Err(format!("a section for {}, which is not a module of this build", m.module));
            }
            if !seen.insert(m.module.as_str()) {
                return Err(format!("two sections for {}", m.module));
            }
            for e in &m.state {
                let (k, v) = e.decode()?;
                let key = String::from_utf8(k).map_err(|_| format!("{}: a state key must be UTF-8", m.module))?;
                if owner(key.as_bytes()) != Some(m.module.as_str()) {
                    return Err(format!("the key {key} is not the {} module's", m.module));
                }
                delta.put_raw(key, v);
            }
            for e in &m.records {
                let (k, v) = e.decode()?;
                if owner(&k) != Some(m.module.as_str()) {
                    return Err(format!("the record {} is not the {} module's", String::from_utf8_lossy(&k), m.module));
                }
                crate::statesync::check_record_key(&k)?;
                delta.nonverifiable_put_raw(k, v);
            }
        }
        crate::statesync::finish_restored(delta, self.height, "export").await
    }

    /// The exported value of one of the app's own keys (`state_key`).
    pub fn app_value(&self, key: &str) -> Option<Vec<u8>> {
        let app = self.modules.iter().find(|m| m.module == APP_SECTION)?;
        let e = app.state.iter().find(|e| e.key.as_deref() == Some(key))?;
        e.decode().ok().map(|(_, v)| v)
    }

    /// The app hash this export expects the imported state's root to be; `None` when empty.
    pub(crate) fn expected_root(&self) -> Result<Option<Vec<u8>>, String> {
        if self.app_hash.is_empty() {
            return Ok(None);
        }
        hex::decode(&self.app_hash).map(Some).map_err(|e| format!("app_hash {}: {e}", self.app_hash))
    }
}

/// Overwrites a value the genesis file decides (the chain id, consensus `block.max_gas`) when
/// it differs from the exported one; whether it did.
pub(crate) async fn set_if_changed(delta: &mut StateDelta<Snapshot>, key: &'static str, value: Vec<u8>) -> Result<bool, String> {
    let held = delta.get_raw(key).await.map_err(|e| e.to_string())?;
    if held.as_deref() == Some(value.as_slice()) {
        return Ok(false);
    }
    delta.put_raw(key.to_string(), value);
    Ok(true)
}
