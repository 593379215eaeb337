//! Reserve genesis: the params (registered auditors) and the attestations carried in.

use cnidarium::StateWrite;
use lantau_bank::BankRead;
use lantau_module_api::{GasMeter, SdkError, TxError};
use lantau_primitives::Address;

use crate::msg::validate_params;
use crate::state::ReserveWrite;
use crate::AttestationState;

pub use lantau_proto::chain::reserve::v1::GenesisState;

fn invalid(msg: String) -> TxError {
    TxError::from(SdkError::InvalidRequest(format!("genesis reserve: {msg}")))
}

/// Validates and writes the genesis state. Runs after the stablecoin module's genesis (module
/// order), so an attestation's issuer must already issue the denom its amounts are in.
pub async fn init_genesis<S: StateWrite + Send + Sync + ?Sized>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let params = genesis.params.clone().unwrap_or_default();
    validate_params(&params).map_err(|e| invalid(e.to_string()))?;
    state.put_reserve_params(&gas, &params)?;
    let mut last_id = 0u64;
    for a in &genesis.attestations {
        let at = |m: &str| invalid(format!("attestation {}: {m}", a.id));
        if a.id <= last_id {
            return Err(at("ids must be non-zero and strictly ascending"));
        }
        last_id = a.id;
        let issuer = Address::from_bech32(&a.issuer).map_err(|e| at(&format!("issuer: {e}")))?;
        let denom = state.issuer_denom(&gas, &issuer).await?.ok_or_else(|| at(&format!("{} issues no stablecoin", a.issuer)))?;
        for (field, c) in [("circulation", &a.circulation), ("reserve_market_value", &a.reserve_market_value)] {
            let c = c.as_ref().ok_or_else(|| at(&format!("{field} is required")))?;
            if c.denom != denom || c.amount.parse::<u128>().is_err() {
                return Err(at(&format!("{field} must be an amount of {denom}, got {}{}", c.amount, c.denom)));
            }
        }
        if a.random_day.is_none() || a.submitted_at.is_none() {
            return Err(at("random_day and submitted_at are required"));
        }
        match AttestationState::try_from(a.state) {
            Ok(AttestationState::Submitted) if a.auditor.is_empty() && a.attested_at.is_none() => {}
            Ok(AttestationState::Attested) => {
                if !params.auditors.contains(&a.auditor) {
                    return Err(at(&format!("co-signer {:?} is not a registered auditor", a.auditor)));
                }
                if a.auditor == a.issuer || a.attested_at.is_none() {
                    return Err(at("an attested record needs attested_at and an auditor other than the issuer"));
                }
            }
            _ => return Err(at("state must be SUBMITTED (no auditor) or ATTESTED")),
        }
        state.put_attestation(&gas, a, Some(&issuer))?;
        if a.state == AttestationState::Attested as i32 {
            state.record_attested(&gas, &issuer, a.id).await?;
        }
    }
    if last_id > 0 {
        state.set_next_attestation_id(&gas, last_id.checked_add(1).ok_or_else(|| invalid("attestation ids exhausted".into()))?)?;
    }
    Ok(())
}
