//! Auth queries, read from committed snapshots: the typed reads, and the
//! `cosmos.auth.v1beta1.Query` methods over them (protobuf in and out), which `abci_query`,
//! gRPC and REST all answer through.

use cnidarium::StateRead;
use cosmos_sdk_proto::cosmos::auth::v1beta1 as pb;
use lantau_module_api::{decode_query, query_address, GasMeter, QueryError, TxError};
use lantau_primitives::Address;
use prost::Message as _;

use crate::state::AuthRead;
use crate::StoredAccount;

/// `/cosmos.auth.v1beta1.Query/Account`.
pub const ACCOUNT: &str = "/cosmos.auth.v1beta1.Query/Account";
/// `/cosmos.auth.v1beta1.Query/AccountInfo`.
pub const ACCOUNT_INFO: &str = "/cosmos.auth.v1beta1.Query/AccountInfo";
/// `/cosmos.auth.v1beta1.Query/Bech32Prefix`.
pub const BECH32_PREFIX: &str = "/cosmos.auth.v1beta1.Query/Bech32Prefix";
/// `/cosmos.auth.v1beta1.Query/Params` (answered by the app, which holds the limits).
pub const PARAMS: &str = "/cosmos.auth.v1beta1.Query/Params";

/// The account at `addr` (None when it does not exist).
pub async fn account<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Option<StoredAccount>, TxError> {
    state.account(&GasMeter::infinite(), addr).await
}

/// An account as the Cosmos SDK presents it: a `BaseAccount` whose `pub_key` is the
/// eth_secp256k1 key (`/cosmos.evm.crypto.v1.ethsecp256k1.PubKey`), absent until the
/// account's first signed transaction.
pub fn base_account(addr: &Address, a: &StoredAccount) -> pb::BaseAccount {
    let pub_key = (!a.pub_key.is_empty()).then(|| cosmos_sdk_proto::Any {
        type_url: lantau_proto::ETH_SECP256K1_PUBKEY_TYPE_URL.into(),
        value: lantau_proto::ethsecp256k1::PubKey { key: a.pub_key.clone() }.encode_to_vec(),
    });
    pb::BaseAccount { address: addr.to_bech32(), pub_key, account_number: a.account_number, sequence: a.sequence }
}

async fn base_account_at<S: StateRead + Sync>(state: &S, address: &str) -> Result<pb::BaseAccount, QueryError> {
    let addr = query_address("address", address)?;
    match account(state, &addr).await? {
        Some(a) => Ok(base_account(&addr, &a)),
        None => Err(QueryError::NotFound(format!("account {address} not found"))),
    }
}

/// Answers the `cosmos.auth.v1beta1.Query` methods this module serves; `None` for another.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
    let r = match method {
        ACCOUNT => {
            async {
                let req: pb::QueryAccountRequest = decode_query(request)?;
                let acct = base_account_at(state, &req.address).await?;
                let any = cosmos_sdk_proto::Any { type_url: "/cosmos.auth.v1beta1.BaseAccount".into(), value: acct.encode_to_vec() };
                Ok(pb::QueryAccountResponse { account: Some(any) }.encode_to_vec())
            }
            .await
        }
        ACCOUNT_INFO => {
            async {
                let req: pb::QueryAccountInfoRequest = decode_query(request)?;
                Ok(pb::QueryAccountInfoResponse { info: Some(base_account_at(state, &req.address).await?) }.encode_to_vec())
            }
            .await
        }
        BECH32_PREFIX => Ok(pb::Bech32PrefixResponse { bech32_prefix: lantau_primitives::BECH32_PREFIX.into() }.encode_to_vec()),
        _ => return None,
    };
    Some(r)
}
