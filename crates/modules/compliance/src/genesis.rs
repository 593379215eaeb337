//! Compliance genesis: the params. An empty `authority` becomes the governance address.

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
}

/// Validates and writes the genesis state.
pub fn init_genesis<S: StateWrite + ?Sized>(state: &mut S, genesis: &GenesisState, governance: &Address) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let bad = |m: String| -> TxError { SdkError::InvalidRequest(format!("genesis compliance: {m}")).into() };
    let params = genesis.params.clone().unwrap_or_default();
    let authority = if params.authority.is_empty() {
        *governance
    } else {
        Address::from_bech32(&params.authority).map_err(|e| bad(format!("params.authority: {e}")))?
    };
    let rules = params.rules.unwrap_or_else(default_rules);
    validate_rules(&rules).map_err(|e| bad(e.to_string()))?;
    state.set_compliance_authority(&gas, &authority)?;
    if let Some(set) = &genesis.sanctions {
        state.put_sanctions(&gas, set)?;
    }
    state.put_rules(&gas, &rules)
}
