//! Compliance queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};

use crate::state::ComplianceRead;
use crate::audit::{AuditEntry, AuditFilter};
use crate::Params;

/// The params.
pub async fn params<S: StateRead + Sync>(state: &S) -> Result<Params, TxError> {
    state.compliance_params(&GasMeter::infinite()).await
}

/// AuditLog: the complete set of rows matching every given filter (subject exact, tx_type
/// exact, tx_hash case-insensitive, `from` inclusive and `to` exclusive on block time), in
/// sequence order. No filter at all returns the whole log. Pagination is not applied (spec
/// rule 2). See [`crate::audit::scan`] for how indexes are used.
pub async fn audit_log<S: StateRead + Sync + ?Sized>(state: &S, filter: &AuditFilter) -> Result<Vec<AuditEntry>, TxError> {
    crate::audit::scan(state, filter).await
}
