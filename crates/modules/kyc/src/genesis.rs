//! KYC genesis: params and identity records, in the gRPC-gateway JSON of `GenesisState`.

use cnidarium::StateWrite;
use lantau_module_api::{GasMeter, SdkError, TxError};
use lantau_primitives::Address;

use crate::msg::validate_params;
use crate::state::KycWrite;
use crate::tier::default_params;

pub use lantau_proto::chain::kyc::v1::GenesisState;

/// The default genesis: default params, no identities.
pub fn default_genesis() -> GenesisState {
    GenesisState { params: Some(default_params()), identities: Vec::new() }
}

/// Validates and writes the genesis state.
pub fn init_genesis<S: StateWrite + ?Sized>(state: &mut S, genesis: &GenesisState) -> Result<(), TxError> {
    let gas = GasMeter::infinite();
    let bad = |m: String| -> TxError { SdkError::InvalidRequest(format!("genesis kyc: {m}")).into() };
    let params = genesis.params.clone().unwrap_or_else(default_params);
    validate_params(&params).map_err(|e| bad(e.to_string()))?;
    state.put_kyc_params(&gas, &params)?;
    let mut seen = std::collections::BTreeSet::new();
    for id in &genesis.identities {
        let addr = Address::from_bech32(&id.address).map_err(|e| bad(format!("identity {:?}: {e}", id.address)))?;
        if seen.contains(&addr) {
            return Err(bad(format!("identity {} listed twice", id.address)));
        }
        if crate::Level::try_from(id.level).is_err() || id.level == 0 {
            return Err(bad(format!("identity {}: invalid level {}", id.address, id.level)));
        }
        seen.insert(addr);
        let mut rec = id.clone();
        rec.address = addr.to_bech32();
        state.put_identity(&gas, &addr, &rec)?;
    }
    Ok(())
}
