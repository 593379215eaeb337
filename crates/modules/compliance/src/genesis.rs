//! Compliance genesis: the params (an empty `authority` becomes the governance address), the
//! sanctions set, and sub-role bindings that exist from the first block (a dev chain's reviewer
//! and officer), held to the rules MsgBindSubRole applies.

use cnidarium::StateWrite;
use lantau_authority::AuthorityWrite;
use lantau_module_api::{GasMeter, SdkError, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

use crate::msg::validate_rules;
use crate::state::ComplianceWrite;
use crate::{default_rules, Params};

/// The compliance section of the genesis file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GenesisState {
    /// Params; defaults when absent.
    #[serde(default)]
    pub params: Option<Params>,
    /// The initial sanctions set. `blocked_addresses` is stored as given (not validated, read
    /// by no gate) until the first push empties it.
    #[serde(default)]
    pub sanctions: Option<crate::SanctionsSet>,
    /// Sub-role bindings from genesis: `parent`, `sub_addr`, `role`, `label` (active; no
    /// policy). Each parent's identity must satisfy the role, as at bind time; a sub-key is
    /// bound once and has no identity of its own. No audit row or event (genesis writes none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sub_roles: Vec<GenesisBinding>,
}

/// A sub-role binding in the genesis file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GenesisBinding {
    /// The parent (bech32).
    pub parent: String,
    /// The sub-key (bech32).
    pub sub_addr: String,
    /// `SUB_ROLE_REVIEWER`, `SUB_ROLE_OFFICER` or `SUB_ROLE_AGENT`.
    pub role: String,
    /// The label.
    #[serde(default)]
    pub label: String,
}

/// Validates and writes the genesis bindings (after the KYC module's genesis: it reads the
/// parents' identities).
pub async fn init_bindings<S: StateWrite + Send + Sync + ?Sized>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    use lantau_kyc::KycRead;

    use crate::state::{parent_level_satisfies, ComplianceRead};
    let gas = GasMeter::infinite();
    let bad = |m: String| -> TxError { SdkError::InvalidRequest(format!("genesis compliance.sub_roles: {m}")).into() };
    for b in &genesis.sub_roles {
        let parent = Address::from_bech32(&b.parent).map_err(|e| bad(format!("parent: {e}")))?;
        let sub = Address::from_bech32(&b.sub_addr).map_err(|e| bad(format!("sub_addr: {e}")))?;
        let role = crate::SubRole::from_str_name(&b.role)
            .filter(|r| *r != crate::SubRole::Unspecified)
            .ok_or_else(|| bad(format!("role {:?} is not a sub-role", b.role)))?;
        if parent == sub {
            return Err(bad(format!("{} cannot be its own sub-key", b.sub_addr)));
        }
        let level = state.identity(&gas, &parent).await?.as_ref().map(lantau_kyc::state::level_of).unwrap_or(lantau_kyc::Level::Unspecified);
        if !parent_level_satisfies(role, level) {
            return Err(bad(format!("parent {} is {} and cannot hold {}", b.parent, level.as_str_name(), b.role)));
        }
        if state.identity(&gas, &sub).await?.is_some() {
            return Err(bad(format!("{} has an identity record of its own", b.sub_addr)));
        }
        if state.binding(&gas, &sub).await?.is_some() {
            return Err(bad(format!("{} is bound twice", b.sub_addr)));
        }
        let binding = crate::SubRoleBinding {
            parent: parent.to_bech32(),
            sub_addr: sub.to_bech32(),
            role: role as i32,
            label: b.label.clone(),
            revoked_at: Some(lantau_proto::Timestamp::default()),
        };
        state.put_binding(&gas, &parent, &sub, &binding)?;
    }
    Ok(())
}

/// Validates and writes the genesis state.
pub fn init_genesis<S: StateWrite + ?Sized>(state: &mut S, genesis: &GenesisState, governance: &Address) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let bad = |m: String| -> TxError { SdkError::InvalidRequest(format!("genesis compliance: {m}")).into() };
    let params = genesis.params.clone().unwrap_or_default();
    let authority =
        if params.authority.is_empty() { *governance } else { Address::from_bech32(&params.authority).map_err(|e| bad(format!("params.authority: {e}")))? };
    let rules = params.rules.unwrap_or_else(default_rules);
    validate_rules(&rules).map_err(|e| bad(e.to_string()))?;
    state.set_compliance_authority(&gas, &authority)?;
    if let Some(set) = &genesis.sanctions {
        state.put_sanctions(&gas, set)?;
    }
    if params.block_requires_officer {
        state.set_block_requires_officer(&gas, true)?;
    }
    state.put_rules(&gas, &rules)
}
