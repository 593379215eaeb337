//! The flag queue: flags raised by the advisory gates (EMITTED), and the Flags query.
//!
//! A flag is chain state (`compliance/flag/<id>`, ids sequential from 1, rendered in decimal),
//! so every node holds the same queue and its review transitions are committed by the app
//! hash. Every write of a flag emits `EventFlagEmitted` (the spec: "a flag was written, not
//! created").

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, event, store, BlockCtx, Event, GasMeter, TxError};
use lantau_primitives::Address;
use lantau_proto::chain::compliance::v1 as pb;

use crate::audit::{AuditEntry, AuditWrite};
use crate::state_key;
use crate::{Flag, FlagStatus};

/// Filters of the Flags query; every given filter must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagFilter {
    /// Exact VASP (velocity flags have none, so a VASP filter omits them all).
    pub vasp: Option<String>,
    /// A status; `None` (or UNSPECIFIED) matches all.
    pub status: Option<FlagStatus>,
    /// The transaction hash, case-insensitive.
    pub tx_hash: Option<String>,
    /// Inclusive lower bound on `created_at`.
    pub from: Option<lantau_proto::Timestamp>,
    /// Exclusive upper bound on `created_at`.
    pub to: Option<lantau_proto::Timestamp>,
}

impl FlagFilter {
    /// Whether `f` passes every filter.
    pub fn matches(&self, f: &Flag) -> bool {
        let created = f.created_at.unwrap_or_default();
        self.vasp.as_ref().is_none_or(|v| *v == f.vasp)
            && self.status.is_none_or(|s| s == FlagStatus::Unspecified || s as i32 == f.status)
            && self.tx_hash.as_ref().is_none_or(|h| h.eq_ignore_ascii_case(&f.tx_hash))
            && self.from.is_none_or(|t| created >= t)
            && self.to.is_none_or(|t| created < t)
    }
}

/// Reads of the flag queue.
pub trait FlagRead: StateRead {
    /// A flag by id.
    fn flag(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<Flag>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match self.flag_record(gas, id).await? {
                Some(b) => Ok(Some(store::decode(&b, "flag")?)),
                None => Ok(None),
            }
        }
    }

    /// A flag by id, as stored (a non-verifiable record committed by the records lattice).
    fn flag_record(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<Vec<u8>>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { crate::records::get(self, gas, &state_key::flag(id)).await }
    }
}

impl<T: StateRead + ?Sized> FlagRead for T {}

/// What a new flag is about.
#[derive(Debug, Clone)]
pub struct NewFlag<'a> {
    /// `threshold` or `velocity`.
    pub decorator: &'a str,
    /// The subject.
    pub subject: Address,
    /// The counterparty of the flagged transfer.
    pub counterparty: Address,
    /// The amount.
    pub amount: lantau_primitives::Coin,
    /// The subject's VASP (threshold) or empty (velocity).
    pub vasp: String,
    /// The transaction hash (upper-case hex).
    pub tx_hash: &'a str,
}

/// Writes of the flag queue.
pub trait FlagWrite: StateWrite + FlagRead + AuditWrite {
    /// Stores a flag over `old` (the record it replaces, as read with
    /// [`FlagRead::flag_record`]; `None` for a new id) and emits `EventFlagEmitted`.
    fn put_flag(
        &mut self,
        gas: &GasMeter,
        id: u64,
        old: Option<&[u8]>,
        flag: &Flag,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            crate::records::put(self, gas, state_key::flag(id), old, prost::Message::encode_to_vec(flag)).await?;
            events.push(event::typed(&pb::EventFlagEmitted {
                flag_id: flag.flag_id.clone(),
                status: flag.status,
                decorator: flag.decorator.clone(),
                subject: flag.subject.clone(),
                vasp: flag.vasp.clone(),
                tx_hash: flag.tx_hash.clone(),
            }));
            Ok(())
        }
    }

    /// Raises an EMITTED flag and appends its `<decorator>_flag` audit row (metadata `flag_id`
    /// and `decorator`) under the same transaction hash. Returns the flag id.
    fn raise_flag(&mut self, gas: &GasMeter, block: &BlockCtx, new: NewFlag<'_>, events: &mut Vec<Event>) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let id = match store::get(self, gas, state_key::NEXT_FLAG_ID).await? {
                Some(b) => u64::from_be_bytes(b.as_slice().try_into().map_err(|_| internal("corrupt flag counter"))?),
                None => 1,
            };
            let next = id.checked_add(1).ok_or_else(|| internal("flag ids exhausted"))?;
            store::put_singleton(self, gas, state_key::NEXT_FLAG_ID.to_string(), next.to_be_bytes().to_vec())?;
            let now = lantau_module_api::block_timestamp(block);
            let amount = lantau_module_api::pb_coin(&new.amount);
            let flag = Flag {
                flag_id: id.to_string(),
                status: FlagStatus::Emitted as i32,
                decorator: new.decorator.to_string(),
                resolution: String::new(),
                vasp: new.vasp,
                subject: new.subject.to_bech32(),
                counterparty: new.counterparty.to_bech32(),
                amount: Some(amount.clone()),
                tx_hash: new.tx_hash.to_string(),
                block_height: i64::try_from(block.height).unwrap_or(i64::MAX),
                created_at: Some(now),
                updated_at: Some(now),
                reviewer: String::new(),
                officer_note_hash: String::new(),
                evidence_hash: String::new(),
                officer: String::new(),
                proposed_decision: String::new(),
            };
            // The id is fresh (the counter only grows), so no record is replaced.
            self.put_flag(gas, id, None, &flag, events).await?;
            let mut metadata = std::collections::BTreeMap::new();
            metadata.insert("flag_id".to_string(), flag.flag_id.clone());
            metadata.insert("decorator".to_string(), flag.decorator.clone());
            self.append_audit(
                gas,
                block,
                AuditEntry {
                    tx_type: format!("{}_flag", new.decorator),
                    subject: flag.subject.clone(),
                    counterparty: flag.counterparty.clone(),
                    amount: Some(amount),
                    tx_hash: new.tx_hash.to_string(),
                    metadata,
                    ..Default::default()
                },
            )
            .await?;
            Ok(id)
        }
    }
}

impl<T: StateWrite + ?Sized> FlagWrite for T {}

/// Every flag matching `filter`, in id order. Flags are far fewer than audit rows; the queue
/// is scanned in key order and filtered (complete set, no pagination, as the spec says).
pub async fn flags<S: StateRead + Sync + ?Sized>(state: &S, filter: &FlagFilter) -> Result<Vec<Flag>, TxError> {
    use futures::StreamExt;
    let mut stream = std::pin::pin!(state.nonverifiable_prefix_raw(state_key::FLAG_PREFIX.as_bytes()));
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        let (_, v) = item.map_err(|e| store::read_failed("the flag queue", e))?;
        let f: Flag = store::decode(&v, "flag")?;
        if filter.matches(&f) {
            if out.len() >= crate::query::MAX_QUERY_ROWS {
                return Err(crate::query::too_broad(
                    "this Flags filter",
                    crate::query::MAX_QUERY_ROWS,
                    "a status, a vasp, a tx_hash or a shorter from/to window",
                ));
            }
            out.push(f);
        }
    }
    Ok(out)
}
