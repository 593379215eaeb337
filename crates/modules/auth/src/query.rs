//! Auth queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};
use lantau_primitives::Address;

use crate::state::AuthRead;
use crate::StoredAccount;

/// The account at `addr` (None when it does not exist).
pub async fn account<S: StateRead + Sync>(
    state: &S,
    addr: &Address,
) -> Result<Option<StoredAccount>, TxError> {
    state.account(&GasMeter::infinite(), addr).await
}
