//! Compliance queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};

use crate::state::ComplianceRead;
use crate::Params;

/// The params.
pub async fn params<S: StateRead + Sync>(state: &S) -> Result<Params, TxError> {
    state.compliance_params(&GasMeter::infinite()).await
}
