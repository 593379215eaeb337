//! Roles per denom: the issuer grants `minter` (with an allowance), `pauser`, `seizer` and
//! `redeemer` to addresses; it holds every role itself.
//!
//! State: `stablecoin/role/<denom>/<role>/<hex address>` → `chain.stablecoin.v1.RoleGrant`.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{store, GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::stablecoin::v1::RoleGrant;

/// A role of a denom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Mints within its allowance.
    Minter,
    /// Pauses and unpauses features.
    Pauser,
    /// Seizes under a court order.
    Seizer,
    /// Settles and rejects redemptions.
    Redeemer,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 4] = [Role::Minter, Role::Pauser, Role::Seizer, Role::Redeemer];

    /// Its name in messages and queries.
    pub fn name(self) -> &'static str {
        match self {
            Role::Minter => "minter",
            Role::Pauser => "pauser",
            Role::Seizer => "seizer",
            Role::Redeemer => "redeemer",
        }
    }

    /// The role with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// `stablecoin/role/<denom>/`.
pub fn prefix(denom: &str) -> String {
    format!("stablecoin/role/{denom}/")
}

/// The key of one grant.
pub fn key(denom: &str, role: Role, addr: &Address) -> String {
    format!("stablecoin/role/{denom}/{}/{}", role.name(), addr.to_key_hex())
}

/// Reads of roles.
pub trait RoleRead: StateRead {
    /// The grant of `role` of `denom` to `addr`, if any.
    fn role_grant(&self, gas: &GasMeter, denom: &str, role: Role, addr: &Address) -> impl Future<Output = Result<Option<RoleGrant>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &key(denom, role, addr)).await }
    }
}

impl<T: StateRead + ?Sized> RoleRead for T {}

/// Writes of roles.
pub trait RoleWrite: StateWrite {
    /// Writes a grant.
    fn put_role(&mut self, gas: &GasMeter, role: Role, addr: &Address, grant: &RoleGrant) -> Result<(), TxError> {
        store::put_proto(self, gas, key(&grant.denom, role, addr), grant)
    }

    /// Removes a grant.
    fn delete_role(&mut self, gas: &GasMeter, denom: &str, role: Role, addr: &Address) -> Result<(), TxError> {
        store::delete(self, gas, key(denom, role, addr))
    }
}

impl<T: StateWrite + ?Sized> RoleWrite for T {}

/// Every grant of `denom`, by role then address (a query: unmetered).
pub async fn grants<S: StateRead + Sync>(state: &S, denom: &str) -> Result<Vec<RoleGrant>, TxError> {
    let mut out = Vec::new();
    for (k, v) in store::scan_prefix(state, &prefix(denom)).await? {
        out.push(store::decode::<RoleGrant>(&v, &k)?);
    }
    Ok(out)
}
