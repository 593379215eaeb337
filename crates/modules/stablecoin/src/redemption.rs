//! Redemption on a clock: a holder's request moves the amount into the module escrow
//! ([`lantau_bank::redemption_escrow`]) and opens a record with a deadline; the issuer (or a
//! redeemer) settles it (the escrow is burned) or rejects it (the escrow goes back). A request
//! still open past its deadline shows as OVERDUE: judged when read, against the block time of
//! the state read, so nothing has to run at the deadline.
//!
//! State:
//! - `stablecoin/params` → `chain.stablecoin.v1.Params`.
//! - `stablecoin/redemption_seq` → u64 big-endian: the last id given (ids start at 1).
//! - `stablecoin/redemption/<id, 20 decimal digits>` → `chain.stablecoin.v1.Redemption`
//!   (status REQUESTED, PAID or REJECTED; never OVERDUE), so keys sort in id order.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_proto::chain::stablecoin::v1::{Params, Redemption, RedemptionStatus};

use crate::error::StablecoinError;

/// `stablecoin/params`.
pub const PARAMS_KEY: &str = "stablecoin/params";
/// `stablecoin/redemption_seq`.
pub const SEQ_KEY: &str = "stablecoin/redemption_seq";
/// `stablecoin/redemption/`.
pub const PREFIX: &str = "stablecoin/redemption/";

/// The default `redemption_deadline`: one day.
pub const DEFAULT_REDEMPTION_DEADLINE: &str = "86400s";
/// Longest `payout_ref`, `payment_ref` and `reason`.
pub const MAX_REF_LEN: usize = 256;
/// A page of the Redemptions query: its default and largest size.
pub const DEFAULT_PAGE: usize = 100;
/// The largest page.
pub const MAX_PAGE: usize = 1000;

/// The params a chain without any starts from.
pub fn default_params() -> Params {
    Params { redemption_deadline: DEFAULT_REDEMPTION_DEADLINE.to_string() }
}

/// Validates params; the deadline in seconds.
pub fn deadline_secs(p: &Params) -> Result<u64, StablecoinError> {
    let s = p.redemption_deadline.as_str();
    lantau_module_api::duration_secs(s)
        .filter(|secs| i64::try_from(*secs).is_ok())
        .ok_or_else(|| StablecoinError::InvalidParams(format!("redemption_deadline {s:?}: whole seconds, e.g. \"86400s\"")))
}

/// The key of redemption `id`.
pub fn key(id: u64) -> String {
    format!("{PREFIX}{id:020}")
}

/// The status a query shows: REQUESTED past its deadline is OVERDUE at `now`.
pub fn shown_status(r: &Redemption, now: &lantau_proto::Timestamp) -> RedemptionStatus {
    let stored = RedemptionStatus::try_from(r.status).unwrap_or(RedemptionStatus::Unspecified);
    match (&r.deadline, stored) {
        (Some(d), RedemptionStatus::Requested) if (now.seconds, now.nanos) > (d.seconds, d.nanos) => RedemptionStatus::Overdue,
        (_, s) => s,
    }
}

/// Reads of redemption state.
pub trait RedemptionRead: StateRead {
    /// The params (the defaults when none are stored).
    fn stablecoin_params(&self, gas: &GasMeter) -> impl Future<Output = Result<Params, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get_proto(self, gas, PARAMS_KEY).await?.unwrap_or_else(default_params)) }
    }

    /// Redemption `id`, as stored.
    fn redemption(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<Redemption>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &key(id)).await }
    }
}

impl<T: StateRead + ?Sized> RedemptionRead for T {}

/// Writes of redemption state.
pub trait RedemptionWrite: StateWrite + RedemptionRead {
    /// Stores the params.
    fn put_stablecoin_params(&mut self, gas: &GasMeter, p: &Params) -> Result<(), TxError> {
        store::put_proto(self, gas, PARAMS_KEY.to_string(), p)
    }

    /// The next redemption id (1, 2, ...), recorded as given.
    fn next_redemption_id(&mut self, gas: &GasMeter) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let last = match store::get(self, gas, SEQ_KEY).await? {
                Some(b) => u64::from_be_bytes(b.as_slice().try_into().map_err(|_| internal(format!("{SEQ_KEY}: {} bytes, not 8", b.len())))?),
                None => 0,
            };
            let id = last.checked_add(1).ok_or_else(|| internal("redemption ids exhausted"))?;
            store::put(self, gas, SEQ_KEY.to_string(), id.to_be_bytes().to_vec())?;
            Ok(id)
        }
    }

    /// Stores a redemption record.
    fn put_redemption(&mut self, gas: &GasMeter, r: &Redemption) -> Result<(), TxError> {
        store::put_proto(self, gas, key(r.id), r)
    }
}

impl<T: StateWrite + ?Sized> RedemptionWrite for T {}

/// The filters of the Redemptions query.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only this denom.
    pub denom: Option<String>,
    /// Only this status (as shown: OVERDUE and REQUESTED split the open ones).
    pub status: Option<RedemptionStatus>,
    /// Only this holder (bech32).
    pub holder: Option<String>,
}

/// A page of redemptions matching `filter` (their status as shown at `now`), from id `from`
/// on, at most `limit`; with the id the next page starts at, when there are more. Walks the
/// records in id order (a query: unmetered).
pub async fn page<S: StateRead + Sync>(
    state: &S,
    filter: &Filter,
    from: u64,
    limit: usize,
    now: &lantau_proto::Timestamp,
) -> Result<(Vec<Redemption>, Option<u64>), TxError> {
    use futures::StreamExt;
    let start = key(from);
    let mut stream = std::pin::pin!(state.prefix_raw(PREFIX));
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        let (k, v) = item.map_err(|e| store::read_failed(PREFIX, e))?;
        if k < start {
            continue;
        }
        let mut r: Redemption = store::decode(&v, &k)?;
        let status = shown_status(&r, now);
        let keep = filter.denom.as_ref().is_none_or(|d| r.amount.as_ref().is_some_and(|a| &a.denom == d))
            && filter.holder.as_ref().is_none_or(|h| &r.holder == h)
            && filter.status.is_none_or(|s| s == status);
        if !keep {
            continue;
        }
        if out.len() >= limit {
            return Ok((out, Some(r.id)));
        }
        r.status = status as i32;
        out.push(r);
    }
    Ok((out, None))
}
