//! Typed access to compliance state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_authority::AuthorityRead;
use lantau_module_api::{store, GasMeter, TxError};

use crate::error::ComplianceError;
use crate::{default_rules, state_key, AgentPolicy, AgentWindow, Params, Rules, SanctionsSet, SubRole, SubRoleBinding};

/// Reads of compliance state.
pub trait ComplianceRead: StateRead {
    /// The rules (defaults until genesis writes them).
    fn rules(&self, gas: &GasMeter) -> impl Future<Output = Result<Rules, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get_proto(self, gas, state_key::RULES).await?.unwrap_or_else(default_rules)) }
    }

    /// The params: the compliance authority, the rules, and whether a BLOCKED needs an officer.
    fn compliance_params(&self, gas: &GasMeter) -> impl Future<Output = Result<Params, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            Ok(Params {
                authority: self.compliance_authority(gas).await?.to_bech32(),
                rules: Some(self.rules(gas).await?),
                block_requires_officer: self.block_requires_officer(gas).await?,
            })
        }
    }

    /// Whether a reviewer's BLOCKED escalates to an officer instead of blacklisting.
    fn block_requires_officer(&self, gas: &GasMeter) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get(self, gas, state_key::BLOCK_REQUIRES_OFFICER).await?.is_some()) }
    }

    /// The sanctions set (empty until genesis or a push writes it).
    fn sanctions(&self, gas: &GasMeter) -> impl Future<Output = Result<SanctionsSet, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get_proto(self, gas, state_key::SANCTIONS).await?.unwrap_or_default()) }
    }

    /// The sub-role binding of `sub`, active or revoked.
    fn binding(&self, gas: &GasMeter, sub: &lantau_primitives::Address) -> impl Future<Output = Result<Option<SubRoleBinding>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::binding(sub)).await }
    }

    /// Every binding under `parent` (active and revoked), in sub-key order. Unmetered: for
    /// queries only.
    fn bindings_of(&self, parent: &lantau_primitives::Address) -> impl Future<Output = Result<Vec<SubRoleBinding>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let gas = GasMeter::infinite();
            let mut out = Vec::new();
            for (k, _) in store::scan_prefix(self, &state_key::sub_keys_prefix(parent)).await? {
                let hex = k.rsplit('/').next().unwrap_or_default();
                let sub = lantau_primitives::Address::from_hex(hex).map_err(|_| lantau_module_api::error::internal(format!("corrupt parent index key {k}")))?;
                if let Some(b) = self.binding(&gas, &sub).await? {
                    out.push(b);
                }
            }
            Ok(out)
        }
    }

    /// The agent policy of `sub`.
    fn agent_policy(&self, gas: &GasMeter, sub: &lantau_primitives::Address) -> impl Future<Output = Result<Option<AgentPolicy>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::policy(sub)).await }
    }

    /// The stored spend window of `sub` (no reset applied).
    fn agent_window(&self, gas: &GasMeter, sub: &lantau_primitives::Address) -> impl Future<Output = Result<Option<AgentWindow>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::window(sub)).await }
    }

    /// The sender's velocity window as stored (a non-verifiable record), if any.
    fn velocity_record(&self, gas: &GasMeter, addr: &lantau_primitives::Address) -> impl Future<Output = Result<Option<Vec<u8>>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { crate::records::get(self, gas, &state_key::velocity(addr)).await }
    }

    /// The block times (unix seconds) of the sender's last screened transfers, oldest first.
    fn velocity_times(&self, gas: &GasMeter, addr: &lantau_primitives::Address) -> impl Future<Output = Result<Vec<i64>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(self.velocity_record(gas, addr).await?.as_deref().map(velocity_decode).unwrap_or_default()) }
    }
}

impl<T: StateRead + ?Sized> ComplianceRead for T {}

/// A stored velocity window's block times.
pub fn velocity_decode(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8).map(|c| i64::from_be_bytes(c.try_into().unwrap_or([0; 8]))).collect()
}

/// Whether a binding still delegates at block time `now`: never revoked (`revoked_at` unset
/// or the zero timestamp), or revoked in the block at `now` itself (revocation takes effect
/// from the next block, whose time is later: block times strictly increase).
pub fn binding_active(b: &SubRoleBinding, now: &lantau_proto::Timestamp) -> bool {
    match b.revoked_at {
        None => true,
        Some(r) if r == lantau_proto::Timestamp::default() => true,
        Some(r) => *now <= r,
    }
}

/// Whether a binding has been revoked at all (effective or not yet).
pub fn binding_revoked(b: &SubRoleBinding) -> bool {
    b.revoked_at.is_some_and(|r| r != lantau_proto::Timestamp::default())
}

/// Writes of compliance state.
pub trait ComplianceWrite: StateWrite {
    /// Replaces the rules.
    fn put_rules(&mut self, gas: &GasMeter, rules: &Rules) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::RULES.to_string(), rules)
    }

    /// Sets whether a reviewer's BLOCKED needs an officer (false removes the key).
    fn set_block_requires_officer(&mut self, gas: &GasMeter, on: bool) -> Result<(), TxError> {
        if on {
            store::put(self, gas, state_key::BLOCK_REQUIRES_OFFICER.to_string(), vec![1])
        } else {
            store::delete(self, gas, state_key::BLOCK_REQUIRES_OFFICER.to_string())
        }
    }

    /// Stores a sub-role binding of `sub` under `parent`, with its parent-index entry.
    fn put_binding(
        &mut self,
        gas: &GasMeter,
        parent: &lantau_primitives::Address,
        sub: &lantau_primitives::Address,
        b: &SubRoleBinding,
    ) -> Result<(), TxError> {
        // The role's number in the parent index; a role outside the enum never reaches state.
        let role = u8::try_from(b.role)
            .ok()
            .filter(|r| SubRole::try_from(i32::from(*r)).is_ok_and(|r| r != SubRole::Unspecified))
            .ok_or_else(|| ComplianceError::InvalidBinding(format!("role {} is not a sub-role", b.role)))?;
        store::put(self, gas, state_key::sub_key_of(parent, sub), vec![role])?;
        store::put_proto(self, gas, state_key::binding(sub), b)
    }

    /// Stores an agent policy.
    fn put_agent_policy(&mut self, gas: &GasMeter, sub: &lantau_primitives::Address, p: &AgentPolicy) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::policy(sub), p)
    }

    /// Stores an agent's spend window.
    fn put_agent_window(&mut self, gas: &GasMeter, sub: &lantau_primitives::Address, w: &AgentWindow) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::window(sub), w)
    }

    /// Replaces the sanctions set.
    fn put_sanctions(&mut self, gas: &GasMeter, set: &SanctionsSet) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::SANCTIONS.to_string(), set)
    }
}

impl<T: StateWrite + ?Sized> ComplianceWrite for T {}

/// Whether a parent at `level` may hold a binding of `role`: LEVEL_LICENSED_ISSUER for
/// reviewers and officers, LEVEL_RETAIL_BASIC or above for agents. LEVEL_BLACKLISTED and
/// LEVEL_UNSPECIFIED (no record) satisfy nothing.
pub fn parent_level_satisfies(role: crate::SubRole, level: lantau_kyc::Level) -> bool {
    use lantau_kyc::Level;
    match role {
        crate::SubRole::Reviewer | crate::SubRole::Officer => level == Level::LicensedIssuer,
        crate::SubRole::Agent => matches!(level, Level::RetailBasic | Level::RetailPlus | Level::Professional | Level::Institutional | Level::LicensedIssuer),
        crate::SubRole::Unspecified => false,
    }
}
