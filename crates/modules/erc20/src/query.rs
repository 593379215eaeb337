//! erc20 queries.

use cnidarium::StateRead;
use lantau_module_api::{store, TxError};

use crate::{state_key, TokenPair};

/// Every token pair, in denom order.
pub async fn token_pairs<S: StateRead + Sync>(state: &S) -> Result<Vec<TokenPair>, TxError> {
    store::scan_prefix(state, state_key::PAIR_PREFIX)
        .await?
        .into_iter()
        .map(|(k, v)| store::decode(&v, &k))
        .collect()
}
