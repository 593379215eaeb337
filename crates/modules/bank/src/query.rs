//! Bank queries, read from committed snapshots: the typed reads, and the
//! `cosmos.bank.v1beta1.Query` methods over them (protobuf in and out), which `abci_query`,
//! gRPC and REST all answer through. Denom metadata is the app's (it knows the native coin; the
//! stablecoin denom records are read here).

use cnidarium::StateRead;
use cosmos_sdk_proto::cosmos::bank::v1beta1 as pb;
use cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse;
use lantau_module_api::{decode_query, pb_coin, query_address, GasMeter, QueryError, TxError};
use lantau_primitives::{Address, Amount, Coin, Denom};
use prost::Message as _;

use crate::state::BankRead;
use crate::state_key;

/// Every stablecoin denom record, in denom order.
pub async fn denom_records<S: StateRead + Sync>(state: &S) -> Result<Vec<crate::DenomRecord>, TxError> {
    let rows = lantau_module_api::store::scan_prefix(state, state_key::DENOM_PREFIX).await?;
    rows.into_iter().map(|(k, v)| lantau_module_api::store::decode(&v, &k)).collect()
}

/// `/cosmos.bank.v1beta1.Query/Balance`.
pub const BALANCE: &str = "/cosmos.bank.v1beta1.Query/Balance";
/// `/cosmos.bank.v1beta1.Query/AllBalances`.
pub const ALL_BALANCES: &str = "/cosmos.bank.v1beta1.Query/AllBalances";
/// `/cosmos.bank.v1beta1.Query/SpendableBalances`.
pub const SPENDABLE_BALANCES: &str = "/cosmos.bank.v1beta1.Query/SpendableBalances";
/// `/cosmos.bank.v1beta1.Query/SpendableBalanceByDenom`.
pub const SPENDABLE_BALANCE_BY_DENOM: &str = "/cosmos.bank.v1beta1.Query/SpendableBalanceByDenom";
/// `/cosmos.bank.v1beta1.Query/SupplyOf`.
pub const SUPPLY_OF: &str = "/cosmos.bank.v1beta1.Query/SupplyOf";
/// `/cosmos.bank.v1beta1.Query/TotalSupply`.
pub const TOTAL_SUPPLY: &str = "/cosmos.bank.v1beta1.Query/TotalSupply";
/// `/cosmos.bank.v1beta1.Query/Params`.
pub const PARAMS: &str = "/cosmos.bank.v1beta1.Query/Params";

/// Every balance of `addr`, sorted by denom.
pub async fn balances<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Vec<Coin>, TxError> {
    state.all_balances(addr).await
}

/// One balance.
pub async fn balance<S: StateRead + Sync>(state: &S, addr: &Address, denom: &str) -> Result<Amount, TxError> {
    state.balance(&GasMeter::infinite(), addr, denom).await
}

/// The supply of a denom.
pub async fn supply<S: StateRead + Sync>(state: &S, denom: &str) -> Result<Amount, TxError> {
    state.supply(&GasMeter::infinite(), denom).await
}

/// Every denom's supply, sorted by denom.
pub async fn total_supply<S: StateRead + Sync>(state: &S) -> Result<Vec<Coin>, TxError> {
    let rows = lantau_module_api::store::scan_prefix(state, state_key::SUPPLY_PREFIX).await?;
    rows.into_iter().map(|(k, v)| Ok(Coin::new(k.strip_prefix(state_key::SUPPLY_PREFIX).unwrap_or(&k).to_string(), crate::state::decode_amount(&v)?))).collect()
}

/// What `addr` can send now: its balances, less the stablecoins it cannot move (all of them
/// while it is frozen; a paused denom's).
pub async fn spendable<S: StateRead + Sync>(state: &S, addr: &Address) -> Result<Vec<Coin>, TxError> {
    let gas = GasMeter::infinite();
    let frozen = state.is_frozen(&gas, addr).await?;
    let mut out = Vec::new();
    for c in state.all_balances(addr).await? {
        let stable = lantau_primitives::is_stablecoin(&c.denom);
        if stable && (frozen || state.is_send_paused(&gas, &c.denom).await?) {
            continue;
        }
        out.push(c);
    }
    Ok(out)
}

fn denom(field: &str, d: &str) -> Result<Denom, QueryError> {
    Denom::new(d).map_err(|e| QueryError::InvalidArgument(format!("invalid {field} {d:?}: {e}")))
}

fn page(n: usize) -> Option<PageResponse> {
    Some(PageResponse { next_key: Vec::new(), total: u64::try_from(n).unwrap_or(u64::MAX) })
}

/// Answers the `cosmos.bank.v1beta1.Query` methods this module serves; `None` for another.
/// The lists are complete (no next page): an account holds a handful of denoms.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
    let r: Result<Vec<u8>, QueryError> = match method {
        BALANCE => {
            async {
                let req: pb::QueryBalanceRequest = decode_query(request)?;
                let addr = query_address("address", &req.address)?;
                let d = denom("denom", &req.denom)?;
                let amount = balance(state, &addr, d.as_str()).await?;
                Ok(pb::QueryBalanceResponse { balance: Some(pb_coin(&Coin::new(d.as_str(), amount))) }.encode_to_vec())
            }
            .await
        }
        ALL_BALANCES => {
            async {
                let req: pb::QueryAllBalancesRequest = decode_query(request)?;
                let coins = balances(state, &query_address("address", &req.address)?).await?;
                Ok(pb::QueryAllBalancesResponse { balances: coins.iter().map(pb_coin).collect(), pagination: page(coins.len()) }.encode_to_vec())
            }
            .await
        }
        SPENDABLE_BALANCES => {
            async {
                let req: pb::QuerySpendableBalancesRequest = decode_query(request)?;
                let coins = spendable(state, &query_address("address", &req.address)?).await?;
                Ok(pb::QuerySpendableBalancesResponse { balances: coins.iter().map(pb_coin).collect(), pagination: page(coins.len()) }.encode_to_vec())
            }
            .await
        }
        SPENDABLE_BALANCE_BY_DENOM => {
            async {
                let req: pb::QuerySpendableBalanceByDenomRequest = decode_query(request)?;
                let d = denom("denom", &req.denom)?;
                let coins = spendable(state, &query_address("address", &req.address)?).await?;
                let amount = coins.into_iter().find(|c| c.denom == d.as_str()).map_or(Amount::ZERO, |c| c.amount);
                Ok(pb::QuerySpendableBalanceByDenomResponse { balance: Some(pb_coin(&Coin::new(d.as_str(), amount))) }.encode_to_vec())
            }
            .await
        }
        SUPPLY_OF => {
            async {
                let req: pb::QuerySupplyOfRequest = decode_query(request)?;
                let d = denom("denom", &req.denom)?;
                let amount = supply(state, d.as_str()).await?;
                Ok(pb::QuerySupplyOfResponse { amount: Some(pb_coin(&Coin::new(d.as_str(), amount))) }.encode_to_vec())
            }
            .await
        }
        TOTAL_SUPPLY => {
            async {
                let _: pb::QueryTotalSupplyRequest = decode_query(request)?;
                let coins = total_supply(state).await?;
                Ok(pb::QueryTotalSupplyResponse { supply: coins.iter().map(pb_coin).collect(), pagination: page(coins.len()) }.encode_to_vec())
            }
            .await
        }
        PARAMS => {
            async {
                let _: pb::QueryParamsRequest = decode_query(request)?;
                Ok(pb::QueryParamsResponse { params: Some(pb::Params { default_send_enabled: true, ..Default::default() }) }.encode_to_vec())
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}
