//! Compliance queries, read from committed snapshots.

use cnidarium::StateRead;
use lantau_module_api::{GasMeter, TxError};

use crate::audit::{AuditEntry, AuditFilter};
use crate::state::ComplianceRead;
use crate::Params;

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

/// AuditLog by its gRPC method: `QueryAuditLogRequest` in, `QueryAuditLogResponse` out (the
/// complete filtered set, in sequence order; pagination declared and not applied, as the REST
/// route answers it).
pub async fn audit_log_grpc<S: StateRead + Sync + ?Sized>(state: &S, request: &[u8]) -> Result<Vec<u8>, lantau_module_api::QueryError> {
    use lantau_module_api::QueryError;
    let req = <lantau_proto::chain::compliance::v1::QueryAuditLogRequest as prost::Message>::decode(request)
        .map_err(|e| QueryError::InvalidArgument(format!("invalid QueryAuditLogRequest: {e}")))?;
    let subject = match req.subject.as_str() {
        "" => None,
        s => Some(lantau_primitives::Address::from_bech32(s).map_err(|e| QueryError::InvalidArgument(format!("subject {s:?}: {e}")))?),
    };
    let non_empty = |s: String| if s.is_empty() { None } else { Some(s) };
    let filter = AuditFilter { subject, tx_type: non_empty(req.tx_type), tx_hash: non_empty(req.tx_hash), from: req.from, to: req.to };
    let entries = audit_log(state, &filter).await.map_err(QueryError::from)?;
    let resp = lantau_proto::chain::compliance::v1::QueryAuditLogResponse {
        entries,
        pagination: Some(cosmos_sdk_proto::cosmos::base::query::v1beta1::PageResponse::default()),
    };
    Ok(prost::Message::encode_to_vec(&resp))
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
