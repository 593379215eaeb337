//! The module's state: the pending plan, the heights at which upgrades were applied, and each
//! module's state version.
//!
//! Keys (verifiable):
//! - `upgrade/plan` → the pending `Plan` (protobuf), absent when none is scheduled;
//! - `upgrade/done/<name>` → the height (8 bytes, big-endian) whose block applied it;
//! - `upgrade/version/<module>` → the module's state version (8 bytes, big-endian); absent:
//!   version 1.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::error::internal;
use lantau_module_api::{store, GasMeter, TxError};

use crate::Plan;

/// `upgrade/plan`.
pub const PLAN: &str = "upgrade/plan";
/// Prefix of the applied upgrades.
pub const DONE_PREFIX: &str = "upgrade/done/";
/// Prefix of the module state versions.
pub const VERSION_PREFIX: &str = "upgrade/version/";

/// `upgrade/done/<name>`.
pub fn done(name: &str) -> String {
    format!("{DONE_PREFIX}{name}")
}

/// `upgrade/version/<module>`.
pub fn version(module: &str) -> String {
    format!("{VERSION_PREFIX}{module}")
}

fn u64_of(key: &str, b: &[u8]) -> Result<u64, TxError> {
    <[u8; 8]>::try_from(b).map(u64::from_be_bytes).map_err(|_| internal(format!("corrupt {key} record ({} bytes)", b.len())))
}

/// Reads of upgrade state.
pub trait UpgradeRead: StateRead {
    /// The pending plan.
    fn plan(&self, gas: &GasMeter) -> impl Future<Output = Result<Option<Plan>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, PLAN).await }
    }

    /// The height whose block applied upgrade `name`.
    fn applied_height(&self, gas: &GasMeter, name: &str) -> impl Future<Output = Result<Option<u64>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let key = done(name);
            match store::get(self, gas, &key).await? {
                Some(b) => Ok(Some(u64_of(&key, &b)?)),
                None => Ok(None),
            }
        }
    }

    /// Module `name`'s state version as the store records it (1 when it records none).
    fn module_version(&self, gas: &GasMeter, module: &str) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let key = version(module);
            match store::get(self, gas, &key).await? {
                Some(b) => u64_of(&key, &b),
                None => Ok(1),
            }
        }
    }
}

impl<T: StateRead + ?Sized> UpgradeRead for T {}

/// Writes of upgrade state.
pub trait UpgradeWrite: StateWrite + UpgradeRead {
    /// Schedules `plan`, replacing any pending one.
    fn put_plan(&mut self, gas: &GasMeter, plan: &Plan) -> Result<(), TxError> {
        store::put_proto(self, gas, PLAN.to_string(), plan)
    }

    /// Clears the pending plan.
    fn clear_plan(&mut self, gas: &GasMeter) -> Result<(), TxError> {
        store::delete(self, gas, PLAN.to_string())
    }

    /// Records that the block at `height` applied upgrade `name`.
    fn mark_applied(&mut self, gas: &GasMeter, name: &str, height: u64) -> Result<(), TxError> {
        store::put(self, gas, done(name), height.to_be_bytes().to_vec())
    }

    /// Records module `module`'s state version.
    fn set_module_version(&mut self, gas: &GasMeter, module: &str, v: u64) -> Result<(), TxError> {
        store::put(self, gas, version(module), v.to_be_bytes().to_vec())
    }
}

impl<T: StateWrite + ?Sized> UpgradeWrite for T {}
