//! Compliance queries, read from committed snapshots: the typed query functions, and
//! [`answer`], the module's part of the app's one query router (gRPC method name and protobuf
//! request in, protobuf response out), which gRPC, `abci_query` and the REST routes all reach.
//!
//! TxTrace and SimulateTrace read the node (its trace ring buffer, its admission state), not a
//! snapshot: the app's router answers them (`lantau_app::grpc`), with the request and response
//! types of this module's service.

use std::collections::BTreeMap;

use cnidarium::StateRead;
use cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse;
use lantau_module_api::{decode_query, query_address, GasMeter, QueryError, TxError};
use lantau_proto::chain::compliance::v1 as pb;

use crate::audit::{AuditEntry, AuditFilter};
use crate::flags::FlagFilter;
use crate::state::ComplianceRead;
use crate::{Flag, FlagStatus, Params};

/// Most entries an AuditLog or Flags answer carries (and so the report, built from both). The
/// spec's answers are complete sets (pagination declared, not applied), so a filter that
/// matches more is refused with how to narrow it, rather than cut short: a bound on the memory
/// and time one query may take (a 1,000,000-row log answers a 3-block window of 30,000 rows).
pub const MAX_QUERY_ROWS: usize = 50_000;

/// Most index entries one AuditLog query walks before it is refused (the filter after the
/// index narrows less than the index: e.g. a busy subject with a rare tx_type).
pub const MAX_QUERY_SCAN: usize = 500_000;

/// A query refused for its size: the Cosmos SDK's `ErrInvalidRequest` (`sdk` 18), which every
/// query surface answers as InvalidArgument (HTTP 400) with this text.
pub fn too_broad(what: &str, limit: usize, narrow: &str) -> TxError {
    TxError { codespace: "sdk", code: 18, log: format!("{what} matches more than {limit} entries (the query limit): narrow it with {narrow}") }
}

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

/// SubRoleBindings: every binding under `parent` (revoked ones included), optionally only of
/// `role`, in sub-key order; a complete set.
pub async fn sub_role_bindings<S: StateRead + Sync>(
    state: &S,
    parent: &lantau_primitives::Address,
    role: Option<crate::SubRole>,
) -> Result<Vec<crate::SubRoleBinding>, TxError> {
    let all = state.bindings_of(parent).await?;
    Ok(all.into_iter().filter(|b| role.is_none_or(|r| r == crate::SubRole::Unspecified || b.role == r as i32)).collect())
}

/// SubRoleParent: the binding of `sub` (active or revoked), `None` when unbound.
pub async fn sub_role_parent<S: StateRead + Sync>(state: &S, sub: &lantau_primitives::Address) -> Result<Option<crate::SubRoleBinding>, TxError> {
    state.binding(&GasMeter::infinite(), sub).await
}

/// AgentPolicy: the policy of `sub` under `parent` and its window as stored (no reset
/// applied), `None` when there is no policy under this parent. An agent that never spent has
/// no stored window; it is answered as spent 0 in the cap's denom from the zero timestamp
/// (which is more than 24 hours old, so a client computes the whole daily cap as available).
pub async fn agent_policy<S: StateRead + Sync>(
    state: &S,
    parent: &lantau_primitives::Address,
    sub: &lantau_primitives::Address,
) -> Result<Option<(crate::AgentPolicy, crate::AgentWindow)>, TxError> {
    let gas = GasMeter::infinite();
    let Some(policy) = state.agent_policy(&gas, sub).await?.filter(|p| p.parent == parent.to_bech32()) else { return Ok(None) };
    let window = match state.agent_window(&gas, sub).await? {
        Some(w) => w,
        None => crate::AgentWindow {
            parent: policy.parent.clone(),
            sub_addr: policy.sub_addr.clone(),
            spent_last_24h: policy.daily_cap.as_ref().map(|c| cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: c.denom.clone(), amount: "0".into() }),
            window_start: Some(lantau_proto::Timestamp::default()),
        },
    };
    Ok(Some((policy, window)))
}

// === the Report ===

/// The report's sections, always all four and in this order.
pub const REPORT_SECTIONS: [&str; 4] = ["par_value_daily", "sanctions_hits", "threshold_flags", "review_closures"];

/// The columns of a `sanctions_hits` row.
pub const REPORT_SANCTIONS_COLUMNS: [&str; 6] = ["sequence", "block_time", "subject", "counterparty", "amount", "tx_hash"];

/// The columns of a `threshold_flags` or `review_closures` row.
pub const REPORT_FLAG_COLUMNS: [&str; 10] =
    ["flag_id", "status", "decorator", "subject", "counterparty", "vasp", "amount", "tx_hash", "created_at", "resolution"];

/// Report: the four [`REPORT_SECTIONS`] of the period (`from` inclusive, `to` exclusive, on
/// block time and `created_at`): `par_value_daily` always empty (the reserve module serves
/// circulation and reserve figures), `sanctions_hits` (audit entries whose tx_type is exactly
/// `sanctions`), `threshold_flags` (flags still EMITTED, velocity included), `review_closures`
/// (flags that have left EMITTED). Every cell is text: times RFC 3339, amounts `<amount><denom>`.
pub async fn report<S: StateRead + Sync + ?Sized>(
    state: &S,
    from: Option<lantau_proto::Timestamp>,
    to: Option<lantau_proto::Timestamp>,
) -> Result<Vec<pb::ReportSection>, TxError> {
    let hits = audit_log(state, &AuditFilter { tx_type: Some("sanctions".into()), from, to, ..Default::default() }).await?;
    let all = crate::flags::flags(state, &FlagFilter { from, to, ..Default::default() }).await?;
    let ts = |t: &Option<lantau_proto::Timestamp>| t.and_then(|t| t.to_rfc3339()).unwrap_or_default();
    let coin = |c: &Option<cosmos_sdk_proto::cosmos::base::v1beta1::Coin>| c.as_ref().map(|c| format!("{}{}", c.amount, c.denom)).unwrap_or_default();
    let cells = |columns: &[&str], values: Vec<String>| pb::ReportRow { cells: columns.iter().map(|c| c.to_string()).zip(values).collect::<BTreeMap<_, _>>() };
    let flag_row = |f: &Flag| {
        cells(
            &REPORT_FLAG_COLUMNS,
            vec![
                f.flag_id.clone(),
                FlagStatus::try_from(f.status).map(|s| s.as_str_name()).unwrap_or("FLAG_STATUS_UNSPECIFIED").to_string(),
                f.decorator.clone(),
                f.subject.clone(),
                f.counterparty.clone(),
                f.vasp.clone(),
                coin(&f.amount),
                f.tx_hash.clone(),
                ts(&f.created_at),
                f.resolution.clone(),
            ],
        )
    };
    let hit_row = |e: &AuditEntry| {
        cells(
            &REPORT_SANCTIONS_COLUMNS,
            vec![e.sequence.to_string(), ts(&e.block_time), e.subject.clone(), e.counterparty.clone(), coin(&e.amount), e.tx_hash.clone()],
        )
    };
    let emitted = FlagStatus::Emitted as i32;
    let [par, sanctions, threshold, closures] = REPORT_SECTIONS;
    let section = |name: &str, rows: Vec<pb::ReportRow>| pb::ReportSection { name: name.into(), rows };
    Ok(vec![
        section(par, vec![]),
        section(sanctions, hits.iter().map(hit_row).collect()),
        section(threshold, all.iter().filter(|f| f.status == emitted).map(flag_row).collect()),
        section(closures, all.iter().filter(|f| f.status != emitted).map(flag_row).collect()),
    ])
}

// === by gRPC method ===

/// A complete list's pagination tail, as every surface answers it: no next key, the number of
/// items as the total.
fn complete(n: usize) -> Option<PageResponse> {
    Some(PageResponse { next_key: vec![], total: u64::try_from(n).unwrap_or(u64::MAX) })
}

fn encode(m: &impl prost::Message) -> Result<Vec<u8>, QueryError> {
    Ok(m.encode_to_vec())
}

/// An optional string filter: empty is no filter.
fn non_empty(s: String) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// The module's queries by gRPC method name (`/chain.compliance.v1.Query/<Method>`): `None`
/// for a method it does not serve (TxTrace and SimulateTrace are the app's: see the crate
/// docs).
pub async fn answer<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
    let r = match method {
        crate::QUERY_PARAMS => query_params(state, request).await,
        crate::QUERY_AUDIT_LOG => query_audit_log(state, request).await,
        crate::QUERY_FLAGS => query_flags(state, request).await,
        crate::QUERY_REPORT => query_report(state, request).await,
        crate::QUERY_TRAVEL_RULE_PAYLOAD => query_travel_rule_payload(state, request).await,
        crate::QUERY_SUB_ROLE_BINDINGS => query_sub_role_bindings(state, request).await,
        crate::QUERY_SUB_ROLE_PARENT => query_sub_role_parent(state, request).await,
        crate::QUERY_AGENT_POLICY => query_agent_policy(state, request).await,
        crate::QUERY_SANCTIONS_SET => query_sanctions_set(state, request).await,
        _ => return None,
    };
    Some(r)
}

async fn query_params<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let _: pb::QueryParamsRequest = decode_query(request)?;
    encode(&pb::QueryParamsResponse { params: Some(params(state).await?) })
}

/// AuditLog: the complete filtered set, in sequence order (pagination declared, not applied).
async fn query_audit_log<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryAuditLogRequest = decode_query(request)?;
    let subject = match req.subject.as_str() {
        "" => None,
        s => Some(lantau_primitives::Address::from_bech32(s).map_err(|e| QueryError::InvalidArgument(format!("subject {s:?}: {e}")))?),
    };
    let filter = AuditFilter { subject, tx_type: non_empty(req.tx_type), tx_hash: non_empty(req.tx_hash), from: req.from, to: req.to };
    let entries = audit_log(state, &filter).await?;
    let pagination = complete(entries.len());
    encode(&pb::QueryAuditLogResponse { entries, pagination })
}

/// Flags: the complete filtered set (pagination declared, not applied).
async fn query_flags<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryFlagsRequest = decode_query(request)?;
    let status = FlagStatus::try_from(req.status).map_err(|_| QueryError::InvalidArgument(format!("invalid status {}: expected a FlagStatus", req.status)))?;
    let filter = FlagFilter { vasp: non_empty(req.vasp), status: Some(status), tx_hash: non_empty(req.tx_hash), from: req.from, to: req.to };
    let flags = crate::flags::flags(state, &filter).await?;
    let pagination = complete(flags.len());
    encode(&pb::QueryFlagsResponse { flags, pagination })
}

async fn query_report<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryReportRequest = decode_query(request)?;
    encode(&pb::QueryReportResponse { sections: report(state, req.period_start, req.period_end).await? })
}

/// TravelRulePayload: the hash exactly as stored (64 lower-case hex digits); any other form
/// is NotFound, as the spec says, and so is a hash with nothing anchored.
async fn query_travel_rule_payload<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryTravelRulePayloadRequest = decode_query(request)?;
    let h = req.tx_hash;
    if h.trim().is_empty() {
        return Err(QueryError::InvalidArgument("tx_hash is required".into()));
    }
    let not_found = || QueryError::NotFound(format!("no Travel Rule payload anchored for {h}"));
    if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(not_found());
    }
    match crate::effects::anchored_payload(state, &h).await? {
        Some(p) => encode(&pb::QueryTravelRulePayloadResponse { payload: Some(p) }),
        None => Err(not_found()),
    }
}

async fn query_sub_role_bindings<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QuerySubRoleBindingsRequest = decode_query(request)?;
    let parent = query_address("parent", &req.parent)?;
    let role = crate::SubRole::try_from(req.role).map_err(|_| QueryError::InvalidArgument(format!("invalid role {}: expected a SubRole", req.role)))?;
    let bindings = sub_role_bindings(state, &parent, Some(role)).await?;
    let pagination = complete(bindings.len());
    encode(&pb::QuerySubRoleBindingsResponse { bindings, pagination })
}

/// SubRoleParent: NotFound with exactly `no sub-role binding for <sub_addr>`, the address as
/// given (spec rule 7: a client compares the whole text).
async fn query_sub_role_parent<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QuerySubRoleParentRequest = decode_query(request)?;
    let sub = query_address("sub_addr", &req.sub_addr)?;
    match sub_role_parent(state, &sub).await? {
        Some(b) => encode(&pb::QuerySubRoleParentResponse { parent: b.parent.clone(), binding: Some(b) }),
        None => Err(QueryError::NotFound(format!("no sub-role binding for {}", req.sub_addr))),
    }
}

async fn query_agent_policy<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryAgentPolicyRequest = decode_query(request)?;
    let parent = query_address("parent", &req.parent)?;
    let sub = query_address("sub_addr", &req.sub_addr)?;
    match agent_policy(state, &parent, &sub).await? {
        Some((policy, window)) => encode(&pb::QueryAgentPolicyResponse { policy: Some(policy), window: Some(window) }),
        None => Err(QueryError::NotFound(format!("no agent policy for {} under {}", sub.to_bech32(), parent.to_bech32()))),
    }
}

async fn query_sanctions_set<S: StateRead + Sync>(state: &S, request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let _: pb::QuerySanctionsSetRequest = decode_query(request)?;
    encode(&pb::QuerySanctionsSetResponse { set: Some(state.sanctions(&GasMeter::infinite()).await?) })
}
