//! REST routes of the chain's own modules (`/chain/<module>/v1/...`) and Cosmos EVM's token
//! pairs, rendered from their protobuf responses in gRPC-gateway JSON (snake_case, 64-bit
//! integers as strings, enums by name, timestamps RFC 3339, defaults emitted).
//!
//! Every route parses its parameters (with the REST surface's own error texts), builds the
//! request of the module's gRPC method, asks the node's one query router ([`routed`]: the
//! answer gRPC and `abci_query` give, at the `x-cosmos-block-height` header's height) and renders its response message as
//! the gateway does; only the lists' pagination tails (`next_key` null, `total` a string),
//! TxTrace's `trace: null` and ReserveForAddress's null `balance` and `attestation` are
//! written here rather than by the message's JSON.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::routing::get;
use axum::Json;
use lantau_app::{compliance, erc20, group, kyc, reserve, stablecoin};
use lantau_proto::chain::compliance::v1 as compliance_pb;
use lantau_proto::chain::{group::v1 as group_pb, kyc::v1 as kyc_pb, reserve::v1 as reserve_pb, stablecoin::v1 as stablecoin_pb};
use lantau_proto::erc20 as erc20_pb;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::openapi::shapes::{Coin, ErrorBody, PageResponse};
use crate::openapi::{proto_list, proto_ref};

use crate::api::NodeApi;
use crate::error::ApiError;
use crate::rest::{form_urlencoded, parse_bech32, Body};

type Node = Arc<dyn NodeApi>;
type ApiResult<T> = Result<Body<T>, ApiError>;

/// The module routes, each registered from its `#[utoipa::path]` declaration.
pub fn routes() -> OpenApiRouter<Node> {
    OpenApiRouter::new()
        .routes(routes!(identity))
        .routes(routes!(kyc_params))
        .routes(routes!(denoms))
        .routes(routes!(denom))
        .routes(routes!(frozen))
        .routes(routes!(roles))
        .routes(routes!(stablecoin_params))
        .routes(routes!(redemptions))
        .routes(routes!(redemption))
        .routes(routes!(token_pairs))
        .routes(routes!(token_pair))
        .routes(routes!(latest_attestation))
        .routes(routes!(reserve_for_address))
        .routes(routes!(reserve_params))
        .routes(routes!(group_info))
        .routes(routes!(groups_by_member))
        .routes(routes!(group_proposal))
        .routes(routes!(group_proposals))
        .routes(routes!(group_votes))
        .routes(routes!(upgrade_current_plan))
        .routes(routes!(upgrade_applied_plan))
        .routes(routes!(upgrade_module_versions))
        .routes(routes!(upgrade_authority))
        .routes(routes!(compliance_params))
        .routes(routes!(travel_rule))
        .routes(routes!(audit_log))
        .routes(routes!(audit_export))
        .routes(routes!(flags))
        .routes(routes!(sanctions))
        .routes(routes!(report))
        .routes(routes!(tx_trace))
        .routes(routes!(simulate_trace))
        .routes(routes!(sub_roles))
        .routes(routes!(sub_role_parent))
        .routes(routes!(agent_policy))
        // A missing `tx_hash` segment is a 400, as the spec's query errors say (not documented
        // as operations of their own).
        .route("/chain/compliance/v1/tx_trace", get(missing_tx_hash))
        .route("/chain/compliance/v1/tx_trace/", get(missing_tx_hash))
        .route("/chain/compliance/v1/travel_rule", get(missing_tx_hash))
        .route("/chain/compliance/v1/travel_rule/", get(missing_tx_hash))
}

/// Asks the node's one query router for `method` at the request's `x-cosmos-block-height`
/// (the latest without it): the answer gRPC and `abci_query` give for the same request (a
/// query error keeps its gRPC code and text).
async fn routed<Resp: prost::Message + Default>(node: &Node, method: &str, req: &impl prost::Message) -> Result<Resp, ApiError> {
    crate::rest::query(node, 0, method, req).await
}

// === kyc ===

#[utoipa::path(get, path = "/chain/kyc/v1/identity/{address}", tag = "kyc", summary = "Identity record of an address",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = IdentityResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn identity(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<IdentityResponse> {
    let addr = parse_bech32(&address)?;
    // None: 404 `no identity record for <addr>`.
    let r: kyc_pb::QueryIdentityResponse = routed(&node, kyc::query::IDENTITY, &kyc_pb::QueryIdentityRequest { address: addr.to_bech32() }).await?;
    Ok(Body(IdentityResponse { identity: r.identity }))
}

#[utoipa::path(get, path = "/chain/kyc/v1/params", tag = "kyc", summary = "KYC parameters (levels and their limits)",
    responses((status = 200, description = "The answer", body = KycParamsResponse)))]
async fn kyc_params(State(node): State<Node>) -> ApiResult<KycParamsResponse> {
    let r: kyc_pb::QueryParamsResponse = routed(&node, kyc::query::PARAMS, &kyc_pb::QueryParamsRequest {}).await?;
    Ok(Body(KycParamsResponse { params: r.params }))
}

// === stablecoin ===

#[utoipa::path(get, path = "/chain/stablecoin/v1/denoms", tag = "stablecoin", summary = "Registered stablecoin denoms",
    responses((status = 200, description = "The answer", body = DenomsResponse)))]
async fn denoms(State(node): State<Node>) -> ApiResult<DenomsResponse> {
    let r: stablecoin_pb::QueryDenomsResponse = routed(&node, stablecoin::query::DENOMS, &stablecoin_pb::QueryDenomsRequest {}).await?;
    let pagination = crate::json::page(r.denoms.len());
    Ok(Body(DenomsResponse { denoms: r.denoms, pagination }))
}

#[utoipa::path(get, path = "/chain/stablecoin/v1/denoms/{denom}", tag = "stablecoin", summary = "One stablecoin: record, paused features, supply",
    params(("denom" = String, Path, description = "The denom", example = "hkd.demo")),
    responses((status = 200, description = "The answer", body = DenomResponse), (status = 404, description = "Not found", body = ErrorBody)))]
async fn denom(State(node): State<Node>, Path(denom): Path<String>) -> ApiResult<DenomResponse> {
    // Unknown: 404 `unknown stablecoin denom <denom>`.
    let r: stablecoin_pb::QueryDenomResponse = routed(&node, stablecoin::query::DENOM, &stablecoin_pb::QueryDenomRequest { denom }).await?;
    Ok(Body(DenomResponse { denom: r.denom, paused: r.paused, supply: crate::json::coin(&r.supply.unwrap_or_default()), paused_features: r.paused_features }))
}

#[utoipa::path(get, path = "/chain/stablecoin/v1/roles/{denom}", tag = "stablecoin", summary = "The roles the issuer granted for a denom: minters (with their allowances left), pausers, seizers, redeemers",
    params(("denom" = String, Path, description = "The denom", example = "hkd.demo")),
    responses((status = 200, description = "The answer", body = RolesResponse), (status = 404, description = "Not found", body = ErrorBody)))]
async fn roles(State(node): State<Node>, Path(denom): Path<String>) -> ApiResult<RolesResponse> {
    let r: stablecoin_pb::QueryRolesResponse = routed(&node, stablecoin::query::ROLES, &stablecoin_pb::QueryRolesRequest { denom }).await?;
    Ok(Body(RolesResponse { roles: r.roles }))
}

#[utoipa::path(get, path = "/chain/stablecoin/v1/params", tag = "stablecoin", summary = "Stablecoin parameters (the redemption deadline)",
    responses((status = 200, description = "The answer", body = StablecoinParamsResponse)))]
async fn stablecoin_params(State(node): State<Node>) -> ApiResult<StablecoinParamsResponse> {
    let r: stablecoin_pb::QueryParamsResponse = routed(&node, stablecoin::query::PARAMS, &stablecoin_pb::QueryParamsRequest {}).await?;
    Ok(Body(StablecoinParamsResponse { params: r.params }))
}

/// Redemptions: `?denom=&status=&holder=` (each optional; `status` a RedemptionStatus name,
/// with or without its `REDEMPTION_STATUS_` prefix, or number), `pagination.key` (the previous
/// page's `next_key`) and `pagination.limit` (default 100, at most 1000). Statuses are as of the
/// block time of the height read: an open request past its deadline is OVERDUE.
#[utoipa::path(get, path = "/chain/stablecoin/v1/redemptions", tag = "stablecoin", summary = "Redemption requests, oldest first, with their status as of the block read (OVERDUE past the deadline)",
    params(("denom" = Option<String>, Query, description = "Only this denom", example = "hkd.demo"),
        ("status" = Option<String>, Query, description = "A RedemptionStatus (REQUESTED, PAID, REJECTED, OVERDUE; with or without the REDEMPTION_STATUS_ prefix); omitted = all"),
        ("holder" = Option<String>, Query, description = "Only this holder (bech32)"),
        ("pagination.key" = Option<String>, Query, description = "The next_key of the previous page (base64)"),
        ("pagination.limit" = Option<String>, Query, description = "Page size: default 100, at most 1000")),
    responses((status = 200, description = "The answer", body = RedemptionsResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn redemptions(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult<RedemptionsResponse> {
    use base64::Engine as _;
    let mut req = stablecoin_pb::QueryRedemptionsRequest::default();
    let mut page = cosmos_sdk_proto::cosmos::base::query::v1beta1::PageRequest::default();
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        if v.is_empty() {
            continue;
        }
        match k.as_str() {
            "denom" => req.denom = v,
            "holder" => req.holder = parse_bech32(&v)?.to_bech32(),
            "status" => {
                let st = stablecoin_pb::RedemptionStatus::from_str_name(&v)
                    .or_else(|| stablecoin_pb::RedemptionStatus::from_str_name(&format!("REDEMPTION_STATUS_{v}")))
                    .or_else(|| v.parse::<i32>().ok().and_then(|n| stablecoin_pb::RedemptionStatus::try_from(n).ok()))
                    .ok_or_else(|| ApiError::invalid(format!("invalid status {v:?}: expected REQUESTED, PAID, REJECTED or OVERDUE")))?;
                req.status = st as i32;
            }
            "pagination.key" => {
                page.key = base64::engine::general_purpose::STANDARD
                    .decode(v.as_bytes())
                    .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(v.as_bytes()))
                    .map_err(|_| ApiError::invalid(format!("invalid pagination.key {v:?}: base64 expected")))?;
            }
            "pagination.limit" => page.limit = v.parse().map_err(|_| ApiError::invalid(format!("invalid pagination.limit {v:?}")))?,
            _ => {}
        }
    }
    req.pagination = Some(page);
    let r: stablecoin_pb::QueryRedemptionsResponse = routed(&node, stablecoin::query::REDEMPTIONS, &req).await?;
    let next_key = r.pagination.as_ref().map(|p| p.next_key.clone()).filter(|k| !k.is_empty()).map(|k| base64::engine::general_purpose::STANDARD.encode(k));
    let pagination = PageResponse { next_key, total: r.redemptions.len().to_string() };
    Ok(Body(RedemptionsResponse { redemptions: r.redemptions, pagination }))
}

#[utoipa::path(get, path = "/chain/stablecoin/v1/redemptions/{id}", tag = "stablecoin", summary = "One redemption request, with its status as of the block read",
    params(("id" = String, Path, description = "The redemption id", example = "1")),
    responses((status = 200, description = "The answer", body = RedemptionResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn redemption(State(node): State<Node>, Path(id): Path<String>) -> ApiResult<RedemptionResponse> {
    let id: u64 = id.parse().map_err(|_| ApiError::invalid(format!("invalid redemption id {id:?}: a positive integer")))?;
    let r: stablecoin_pb::QueryRedemptionResponse = routed(&node, stablecoin::query::REDEMPTION, &stablecoin_pb::QueryRedemptionRequest { id }).await?;
    Ok(Body(RedemptionResponse { redemption: r.redemption }))
}

#[utoipa::path(get, path = "/chain/stablecoin/v1/frozen/{address}", tag = "stablecoin", summary = "Whether an address is frozen",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = FrozenResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn frozen(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<FrozenResponse> {
    let addr = parse_bech32(&address)?;
    let r: stablecoin_pb::QueryFrozenResponse =
        routed(&node, stablecoin::query::FROZEN, &stablecoin_pb::QueryFrozenRequest { address: addr.to_bech32() }).await?;
    Ok(Body(FrozenResponse { address: r.address, frozen: r.frozen }))
}

// === erc20 ===

#[utoipa::path(get, path = "/cosmos/evm/erc20/v1/token_pairs", tag = "erc20", summary = "Token pairs (stablecoin denom and ERC-20 precompile address)",
    responses((status = 200, description = "The answer", body = TokenPairsResponse)))]
async fn token_pairs(State(node): State<Node>) -> ApiResult<TokenPairsResponse> {
    let r: erc20_pb::QueryTokenPairsResponse = routed(&node, erc20::query::TOKEN_PAIRS, &erc20_pb::QueryTokenPairsRequest::default()).await?;
    let pagination = crate::json::page(r.token_pairs.len());
    Ok(Body(TokenPairsResponse { token_pairs: r.token_pairs, pagination }))
}

/// One pair, by denom or by ERC-20 address (hex), as Cosmos EVM's `TokenPair` query takes it.
#[utoipa::path(get, path = "/cosmos/evm/erc20/v1/token_pairs/{token}", tag = "erc20", summary = "One token pair by denom or ERC-20 address",
    params(("token" = String, Path, description = "A denom or a 0x address", example = "hkd.demo")),
    responses((status = 200, description = "The answer", body = TokenPairResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn token_pair(State(node): State<Node>, Path(token): Path<String>) -> ApiResult<TokenPairResponse> {
    // None: 404 `token pair for <token> not found`.
    let r: erc20_pb::QueryTokenPairResponse = routed(&node, erc20::query::TOKEN_PAIR, &erc20_pb::QueryTokenPairRequest { token }).await?;
    Ok(Body(TokenPairResponse { token_pair: r.token_pair }))
}

// === reserve ===

#[utoipa::path(get, path = "/chain/reserve/v1/attestations/{issuer}/latest", tag = "reserve", summary = "An issuer's latest reserve attestation",
    params(("issuer" = String, Path, description = "Bech32 address of the issuer", example = "lantau183zvmhdk4yq0526cthffncpaztay9yauqqmer8", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = AttestationResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn latest_attestation(State(node): State<Node>, Path(issuer): Path<String>) -> ApiResult<AttestationResponse> {
    let addr = parse_bech32(&issuer)?;
    // None: 404 `no attestation for issuer <addr>`.
    let req = reserve_pb::QueryLatestAttestationRequest { issuer: addr.to_bech32() };
    let r: reserve_pb::QueryLatestAttestationResponse = routed(&node, reserve::query::LATEST_ATTESTATION, &req).await?;
    Ok(Body(AttestationResponse { attestation: r.attestation }))
}

#[utoipa::path(get, path = "/chain/reserve/v1/reserve_for_address/{address}", tag = "reserve", summary = "An address's balances with their issuers' attestations",
    params(("address" = String, Path, description = "Bech32 address", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = ReserveForAddressResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn reserve_for_address(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<ReserveForAddressResponse> {
    let addr = parse_bech32(&address)?;
    let req = reserve_pb::QueryReserveForAddressRequest { address: addr.to_bech32() };
    let r: reserve_pb::QueryReserveForAddressResponse = routed(&node, reserve::query::RESERVE_FOR_ADDRESS, &req).await?;
    let bindings = r
        .bindings
        .into_iter()
        .map(|b| ReserveBinding { denom: b.denom, balance: b.balance.as_ref().map(crate::json::coin), issuer: b.issuer, attestation: b.attestation })
        .collect();
    Ok(Body(ReserveForAddressResponse { bindings }))
}

#[utoipa::path(get, path = "/chain/reserve/v1/params", tag = "reserve", summary = "Reserve parameters",
    responses((status = 200, description = "The answer", body = ReserveParamsResponse)))]
async fn reserve_params(State(node): State<Node>) -> ApiResult<ReserveParamsResponse> {
    let r: reserve_pb::QueryParamsResponse = routed(&node, reserve::query::PARAMS, &reserve_pb::QueryParamsRequest {}).await?;
    Ok(Body(ReserveParamsResponse { params: r.params }))
}

// === group ===

fn proposal_id(id: &str) -> Result<u64, ApiError> {
    id.parse().map_err(|_| ApiError::invalid(format!("invalid proposal id {id:?}: a positive integer")))
}

#[utoipa::path(get, path = "/chain/group/v1/groups/{address}", tag = "group", summary = "A group account: members, threshold, voting period, version",
    params(("address" = String, Path, description = "Bech32 address of the group account", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = GroupResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn group_info(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<GroupResponse> {
    let addr = parse_bech32(&address)?;
    let r: group_pb::QueryGroupResponse = routed(&node, group::query::GROUP, &group_pb::QueryGroupRequest { address: addr.to_bech32() }).await?;
    Ok(Body(GroupResponse { group: r.group }))
}

#[utoipa::path(get, path = "/chain/group/v1/groups_by_member/{address}", tag = "group", summary = "The groups an address is a member of",
    params(("address" = String, Path, description = "Bech32 address of the member", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = GroupsResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn groups_by_member(State(node): State<Node>, Path(address): Path<String>) -> ApiResult<GroupsResponse> {
    let addr = parse_bech32(&address)?;
    let r: group_pb::QueryGroupsByMemberResponse =
        routed(&node, group::query::GROUPS_BY_MEMBER, &group_pb::QueryGroupsByMemberRequest { address: addr.to_bech32() }).await?;
    let pagination = crate::json::page(r.groups.len());
    Ok(Body(GroupsResponse { groups: r.groups, pagination }))
}

#[utoipa::path(get, path = "/chain/group/v1/proposals/{id}", tag = "group", summary = "A group proposal, its status as of the block read (EXPIRED, ABORTED derived)",
    params(("id" = String, Path, description = "The proposal id", example = "1")),
    responses((status = 200, description = "The answer", body = GroupProposalResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn group_proposal(State(node): State<Node>, Path(id): Path<String>) -> ApiResult<GroupProposalResponse> {
    let proposal_id = proposal_id(&id)?;
    let r: group_pb::QueryProposalResponse = routed(&node, group::query::PROPOSAL, &group_pb::QueryProposalRequest { proposal_id }).await?;
    Ok(Body(GroupProposalResponse { proposal: r.proposal }))
}

#[utoipa::path(get, path = "/chain/group/v1/proposals_by_group/{address}", tag = "group", summary = "A group's proposals, newest first (at most 100); `pending_only=true`: the open ones",
    params(("address" = String, Path, description = "Bech32 address of the group account", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$"),
        ("pending_only" = Option<bool>, Query, description = "Only proposals still open (SUBMITTED or ACCEPTED, not executed, not expired)")),
    responses((status = 200, description = "The answer", body = GroupProposalsResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn group_proposals(State(node): State<Node>, Path(address): Path<String>, RawQuery(raw): RawQuery) -> ApiResult<GroupProposalsResponse> {
    let addr = parse_bech32(&address)?;
    let mut pending_only = false;
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        if k == "pending_only" {
            pending_only = match v.as_str() {
                "true" | "1" => true,
                "false" | "0" | "" => false,
                _ => return Err(ApiError::invalid(format!("invalid pending_only {v:?}: true or false"))),
            };
        }
    }
    let req = group_pb::QueryProposalsByGroupRequest { address: addr.to_bech32(), pending_only };
    let r: group_pb::QueryProposalsByGroupResponse = routed(&node, group::query::PROPOSALS_BY_GROUP, &req).await?;
    let pagination = crate::json::page(r.proposals.len());
    Ok(Body(GroupProposalsResponse { proposals: r.proposals, pagination }))
}

#[utoipa::path(get, path = "/chain/group/v1/proposals/{id}/votes", tag = "group", summary = "The votes on a group proposal (the proposer's submission is its YES)",
    params(("id" = String, Path, description = "The proposal id", example = "1")),
    responses((status = 200, description = "The answer", body = GroupVotesResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn group_votes(State(node): State<Node>, Path(id): Path<String>) -> ApiResult<GroupVotesResponse> {
    let proposal_id = proposal_id(&id)?;
    let r: group_pb::QueryVotesResponse = routed(&node, group::query::VOTES, &group_pb::QueryVotesRequest { proposal_id }).await?;
    let pagination = crate::json::page(r.votes.len());
    Ok(Body(GroupVotesResponse { votes: r.votes, pagination }))
}

// === upgrade ===

#[utoipa::path(get, path = "/cosmos/upgrade/v1beta1/current_plan", tag = "upgrade", summary = "The scheduled software upgrade (null when none)",
    responses((status = 200, description = "The answer", body = CurrentPlanResponse)))]
async fn upgrade_current_plan(State(node): State<Node>) -> ApiResult<CurrentPlanResponse> {
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
    let r: pb::QueryCurrentPlanResponse = routed(&node, lantau_app::upgrade::query::CURRENT_PLAN, &pb::QueryCurrentPlanRequest {}).await?;
    Ok(Body(CurrentPlanResponse {
        plan: r.plan.map(|p| Plan { name: p.name, time: None, height: p.height.to_string(), info: p.info, upgraded_client_state: None }),
    }))
}

#[utoipa::path(get, path = "/cosmos/upgrade/v1beta1/applied_plan/{name}", tag = "upgrade", summary = "The height at which an upgrade was applied (0 when never)",
    params(("name" = String, Path, description = "The upgrade's name", example = "v2")),
    responses((status = 200, description = "The answer", body = AppliedPlanResponse)))]
async fn upgrade_applied_plan(State(node): State<Node>, Path(name): Path<String>) -> ApiResult<AppliedPlanResponse> {
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
    let r: pb::QueryAppliedPlanResponse = routed(&node, lantau_app::upgrade::query::APPLIED_PLAN, &pb::QueryAppliedPlanRequest { name }).await?;
    Ok(Body(AppliedPlanResponse { height: r.height.to_string() }))
}

#[utoipa::path(get, path = "/cosmos/upgrade/v1beta1/module_versions", tag = "upgrade", summary = "Each module's state version",
    params(("module_name" = Option<String>, Query, description = "Only this module")),
    responses((status = 200, description = "The answer", body = ModuleVersionsResponse), (status = 404, description = "No such module", body = ErrorBody)))]
async fn upgrade_module_versions(State(node): State<Node>, RawQuery(q): RawQuery) -> ApiResult<ModuleVersionsResponse> {
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
    let module_name = form_urlencoded(q.as_deref().unwrap_or("")).into_iter().find(|(k, _)| k == "module_name").map(|(_, v)| v).unwrap_or_default();
    let r: pb::QueryModuleVersionsResponse =
        routed(&node, lantau_app::upgrade::query::MODULE_VERSIONS, &pb::QueryModuleVersionsRequest { module_name }).await?;
    Ok(Body(ModuleVersionsResponse {
        module_versions: r.module_versions.into_iter().map(|v| ModuleVersion { name: v.name, version: v.version.to_string() }).collect(),
    }))
}

#[utoipa::path(get, path = "/cosmos/upgrade/v1beta1/authority", tag = "upgrade", summary = "The address that schedules upgrades (governance)",
    responses((status = 200, description = "The answer", body = UpgradeAuthorityResponse)))]
async fn upgrade_authority(State(node): State<Node>) -> ApiResult<UpgradeAuthorityResponse> {
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
    let r: pb::QueryAuthorityResponse = routed(&node, lantau_app::upgrade::query::AUTHORITY, &pb::QueryAuthorityRequest {}).await?;
    Ok(Body(UpgradeAuthorityResponse { address: r.address }))
}

// === compliance ===

#[utoipa::path(get, path = "/chain/compliance/v1/params", tag = "compliance", summary = "Compliance parameters (rules)",
    responses((status = 200, description = "The answer", body = ComplianceParamsResponse)))]
async fn compliance_params(State(node): State<Node>) -> ApiResult<ComplianceParamsResponse> {
    Ok(Body(ComplianceParamsResponse(routed(&node, compliance::QUERY_PARAMS, &compliance_pb::QueryParamsRequest {}).await?)))
}

/// The anchored payload. The hash must be given exactly as stored, lower-case hex: an
/// upper-case hash answers 404, as the spec says.
#[utoipa::path(get, path = "/chain/compliance/v1/travel_rule/{tx_hash}", tag = "compliance", summary = "The Travel Rule payload anchored by a transaction",
    params(("tx_hash" = String, Path, description = "The Cosmos tx hash, lower-case hex, exactly as stored")),
    responses((status = 200, description = "The answer", body = TravelRuleResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn travel_rule(State(node): State<Node>, Path(tx_hash): Path<String>) -> ApiResult<TravelRuleResponse> {
    if tx_hash.trim().is_empty() {
        return Err(ApiError::invalid("tx_hash is required"));
    }
    // Any other form than 64 lower-case hex digits, and a hash with nothing anchored: 404.
    Ok(Body(TravelRuleResponse(routed(&node, compliance::QUERY_TRAVEL_RULE_PAYLOAD, &compliance_pb::QueryTravelRulePayloadRequest { tx_hash }).await?)))
}

/// AuditLog: `?subject=&tx_type=&tx_hash=&from=&to=`, every given filter ANDed; an empty value
/// is no filter. `pagination.*` (and any other parameter, as the gateway does) is accepted and
/// ignored: the answer is the complete filtered set and the pagination tail is empty
/// (`next_key` null, `total` the number of entries). An unparseable subject or time bound is
/// 400 InvalidArgument.
#[utoipa::path(get, path = "/chain/compliance/v1/audit_log", tag = "compliance", summary = "Audit log entries, every given filter ANDed",
    params(("subject" = Option<String>, Query, description = "Bech32 address"),
        ("tx_type" = Option<String>, Query, description = "e.g. transfer, sanctions"),
        ("tx_hash" = Option<String>, Query, description = "Cosmos tx hash"),
        ("from" = Option<String>, Query, description = "RFC 3339, inclusive"),
        ("to" = Option<String>, Query, description = "RFC 3339, exclusive")),
    responses((status = 200, description = "The answer", body = AuditLogResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 503, description = "Busy: other broad queries hold every turn; retry", body = ErrorBody)))]
async fn audit_log(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult<AuditLogResponse> {
    let _turn = crate::heavy::turn().await.map_err(ApiError::unavailable)?;
    let req = audit_request(raw.as_deref())?;
    let r: compliance_pb::QueryAuditLogResponse = routed(&node, compliance::QUERY_AUDIT_LOG, &req).await?;
    let pagination = crate::json::page(r.entries.len());
    Ok(Body(AuditLogResponse { entries: r.entries, pagination }))
}

/// An audit export (`lantaud audit export`, docs/audit.md): the rows whose block time is in
/// `[from, to]` whole, every other row as its digest, and the anchor (the committed count and
/// head with their ICS-23 proofs, the header whose app hash they lead to), for `lantaud audit
/// verify` to check offline. 400 when the log is empty or a bound is malformed.
#[utoipa::path(get, path = "/chain/compliance/v1/audit_export", tag = "compliance", summary = "The audit log's rows in a time range, with the hash chain and proofs to check them offline",
    params(("from" = Option<String>, Query, description = "RFC 3339, inclusive"),
        ("to" = Option<String>, Query, description = "RFC 3339, inclusive")),
    responses((status = 200, description = "The export (format lantau-audit-export/1)", body = Object), (status = 400, description = "A malformed bound, or nothing to export", body = ErrorBody), (status = 503, description = "Busy: other broad queries hold every turn; retry", body = ErrorBody)))]
async fn audit_export(State(node): State<Node>, RawQuery(raw): RawQuery) -> Result<axum::Json<Value>, ApiError> {
    let _turn = crate::heavy::turn().await.map_err(ApiError::unavailable)?;
    let at = |name: &str, v: &str| -> Result<time::OffsetDateTime, ApiError> {
        let t = parse_time(name, v)?;
        time::OffsetDateTime::from_unix_timestamp(t.seconds)
            .map(|x| x.saturating_add(time::Duration::nanoseconds(i64::from(t.nanos))))
            .map_err(|_| ApiError::invalid(format!("invalid {name} {v:?}: out of range")))
    };
    let (mut from, mut to) = (None, None);
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        match k.as_str() {
            "from" if !v.is_empty() => from = Some(at("from", &v)?),
            "to" if !v.is_empty() => to = Some(at("to", &v)?),
            _ => {}
        }
    }
    let mut x = node.audit_export(from, to).await?;
    let header_height = x.anchor.height.saturating_add(1);
    let block = node.block(Some(header_height)).await?.ok_or_else(|| ApiError::internal(format!("block {header_height} missing")))?;
    x.anchor.header = Some(serde_json::to_value(&block.header).map_err(|e| ApiError::internal(e.to_string()))?);
    Ok(axum::Json(serde_json::to_value(&x).map_err(|e| ApiError::internal(e.to_string()))?))
}

fn audit_request(raw: Option<&str>) -> Result<compliance_pb::QueryAuditLogRequest, ApiError> {
    let mut req = compliance_pb::QueryAuditLogRequest::default();
    for (k, v) in form_urlencoded(raw.unwrap_or("")) {
        if v.is_empty() {
            continue;
        }
        match k.as_str() {
            "subject" => req.subject = parse_bech32(&v)?.to_bech32(),
            "tx_type" => req.tx_type = v,
            "tx_hash" => req.tx_hash = v,
            "from" => req.from = Some(parse_time("from", &v)?),
            "to" => req.to = Some(parse_time("to", &v)?),
            _ => {}
        }
    }
    Ok(req)
}

/// Flags: `?vasp=&status=&tx_hash=&from=&to=`; `status` omitted or FLAG_STATUS_UNSPECIFIED
/// matches all; `vasp` is exact (so it omits every velocity flag); complete set, empty
/// pagination tail.
#[utoipa::path(get, path = "/chain/compliance/v1/flags", tag = "compliance", summary = "The flag queue",
    params(("vasp" = Option<String>, Query, description = "Exact VASP id"),
        ("status" = Option<String>, Query, description = "A FlagStatus name or number; omitted = all"),
        ("tx_hash" = Option<String>, Query, description = "Cosmos tx hash"),
        ("from" = Option<String>, Query, description = "RFC 3339, inclusive"),
        ("to" = Option<String>, Query, description = "RFC 3339, exclusive")),
    responses((status = 200, description = "The answer", body = FlagsResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 503, description = "Busy: other broad queries hold every turn; retry", body = ErrorBody)))]
async fn flags(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult<FlagsResponse> {
    let _turn = crate::heavy::turn().await.map_err(ApiError::unavailable)?;
    let mut req = compliance_pb::QueryFlagsRequest::default();
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        if v.is_empty() {
            continue;
        }
        match k.as_str() {
            "vasp" => req.vasp = v,
            "status" => {
                let st = compliance::FlagStatus::from_str_name(&v)
                    .or_else(|| v.parse::<i32>().ok().and_then(|n| compliance::FlagStatus::try_from(n).ok()))
                    .ok_or_else(|| ApiError::invalid(format!("invalid status {v:?}: expected a FlagStatus name")))?;
                req.status = st as i32;
            }
            "tx_hash" => req.tx_hash = v,
            "from" => req.from = Some(parse_time("from", &v)?),
            "to" => req.to = Some(parse_time("to", &v)?),
            _ => {}
        }
    }
    let r: compliance_pb::QueryFlagsResponse = routed(&node, compliance::QUERY_FLAGS, &req).await?;
    let pagination = crate::json::page(r.flags.len());
    Ok(Body(FlagsResponse { flags: r.flags, pagination }))
}

/// SubRoleBindings: `?role=` (a SubRole name or number; omitted or SUB_ROLE_UNSPECIFIED = all),
/// revoked bindings included, complete set, empty pagination tail.
#[utoipa::path(get, path = "/chain/compliance/v1/sub_roles/{parent}", tag = "compliance", summary = "Sub-role bindings under a parent (revoked included)",
    params(("parent" = String, Path, description = "Bech32 address of the parent", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$"),
        ("role" = Option<String>, Query, description = "A SubRole name or number; omitted = all")),
    responses((status = 200, description = "The answer", body = SubRolesResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn sub_roles(State(node): State<Node>, Path(parent): Path<String>, RawQuery(raw): RawQuery) -> ApiResult<SubRolesResponse> {
    let parent = parse_bech32(&parent)?;
    let mut req = compliance_pb::QuerySubRoleBindingsRequest { parent: parent.to_bech32(), ..Default::default() };
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        if k == "role" && !v.is_empty() {
            let role = compliance::SubRole::from_str_name(&v)
                .or_else(|| v.parse::<i32>().ok().and_then(|n| compliance::SubRole::try_from(n).ok()))
                .ok_or_else(|| ApiError::invalid(format!("invalid role {v:?}: expected a SubRole name")))?;
            req.role = role as i32;
        }
    }
    let r: compliance_pb::QuerySubRoleBindingsResponse = routed(&node, compliance::QUERY_SUB_ROLE_BINDINGS, &req).await?;
    let pagination = crate::json::page(r.bindings.len());
    Ok(Body(SubRolesResponse { bindings: r.bindings, pagination }))
}

/// SubRoleParent: `{parent, binding}` for a bound address (active or revoked: `revoked_at`
/// tells); 404 with exactly `no sub-role binding for <addr>` (the address as given) otherwise.
#[utoipa::path(get, path = "/chain/compliance/v1/sub_role_parent/{sub_addr}", tag = "compliance", summary = "The binding of a sub-role address",
    params(("sub_addr" = String, Path, description = "Bech32 address of the sub-role key", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = SubRoleParentResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn sub_role_parent(State(node): State<Node>, Path(sub_addr): Path<String>) -> ApiResult<SubRoleParentResponse> {
    parse_bech32(&sub_addr)?;
    // Unbound: 404 with exactly `no sub-role binding for <sub_addr as given>`.
    Ok(Body(SubRoleParentResponse(routed(&node, compliance::QUERY_SUB_ROLE_PARENT, &compliance_pb::QuerySubRoleParentRequest { sub_addr }).await?)))
}

/// AgentPolicy: `{policy, window}`, the window as stored (no 24-hour reset applied); 404 when
/// `sub_addr` has no policy under `parent`.
#[utoipa::path(get, path = "/chain/compliance/v1/agent_policy/{parent}/{sub_addr}", tag = "compliance", summary = "An agent key's policy and spending window",
    params(("parent" = String, Path, description = "Bech32 address of the parent", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$"), ("sub_addr" = String, Path, description = "Bech32 address of the agent key", example = "lantau1n9j4qlg62k7vy62utzapd7ehmqvmpfxudud28p", pattern = "^lantau1[02-9ac-hj-np-z]{38,}$")),
    responses((status = 200, description = "The answer", body = AgentPolicyResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 404, description = "Not found", body = ErrorBody)))]
async fn agent_policy(State(node): State<Node>, Path((parent, sub_addr)): Path<(String, String)>) -> ApiResult<AgentPolicyResponse> {
    let parent = parse_bech32(&parent)?;
    let sub = parse_bech32(&sub_addr)?;
    let req = compliance_pb::QueryAgentPolicyRequest { parent: parent.to_bech32(), sub_addr: sub.to_bech32() };
    Ok(Body(AgentPolicyResponse(routed(&node, compliance::QUERY_AGENT_POLICY, &req).await?)))
}

/// A query whose `tx_hash` path segment is missing: HTTP 400, as the spec's query errors say.
async fn missing_tx_hash() -> ApiError {
    ApiError::invalid("tx_hash is required")
}

/// TxTrace: `{trace, found}`; `found: false` (with an empty trace) is an answer, not an error.
#[utoipa::path(get, path = "/chain/compliance/v1/tx_trace/{tx_hash}", tag = "compliance", summary = "The gate trace of a transaction (Cosmos or Ethereum hash)",
    params(("tx_hash" = String, Path, description = "64 hex digits, with or without 0x, any case")),
    responses((status = 200, description = "The answer", body = TxTraceResponse), (status = 400, description = "A malformed parameter", body = ErrorBody)))]
async fn tx_trace(State(node): State<Node>, Path(tx_hash): Path<String>) -> ApiResult<TxTraceResponse> {
    // The router parses the hash (`lantau_app::grpc::tx_hash`, which `rest::parse_hash` is too).
    let r: compliance_pb::QueryTxTraceResponse = routed(&node, compliance::QUERY_TX_TRACE, &compliance_pb::QueryTxTraceRequest { tx_hash }).await?;
    // `found: false` comes with `trace: null`, as the gateway writes an unset message field.
    Ok(Body(TxTraceResponse { trace: r.trace, found: r.found }))
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
struct TxBytesBody {
    /// A signed Cosmos transaction (`TxRaw`), base64.
    #[serde(default)]
    tx_bytes: String,
}

/// SimulateTrace: POST `{tx_bytes}` (base64 signed Cosmos tx) → `{trace}`. Undecodable bytes →
/// InvalidArgument; a node without the simulation hook → FailedPrecondition.
#[utoipa::path(post, path = "/chain/compliance/v1/simulate_trace", tag = "compliance", summary = "The gate trace a signed transaction would get now",
    request_body = TxBytesBody,
    responses((status = 200, description = "The answer", body = SimulateTraceResponse), (status = 400, description = "Undecodable bytes, or a node without the simulation hook", body = ErrorBody)))]
async fn simulate_trace(
    State(node): State<Node>,
    body: Result<Json<TxBytesBody>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<SimulateTraceResponse> {
    use base64::Engine as _;
    let Json(body) = body.map_err(|e| ApiError::invalid(format!("invalid request body: {}", e.body_text())))?;
    if body.tx_bytes.is_empty() {
        return Err(ApiError::invalid("tx_bytes is required"));
    }
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(&body.tx_bytes).map_err(|e| ApiError::invalid(format!("tx_bytes is not valid base64: {e}")))?;
    // Undecodable bytes: InvalidArgument; a node without the simulation hook: FailedPrecondition.
    let req = compliance_pb::QuerySimulateTraceRequest { tx_bytes: bytes.into() };
    Ok(Body(SimulateTraceResponse(routed(&node, compliance::QUERY_SIMULATE_TRACE, &req).await?)))
}

/// Report: four sections, always present and in this order: `par_value_daily` (always empty:
/// the reserve module serves circulation and reserve figures), `sanctions_hits` (audit entries
/// whose tx_type is exactly `sanctions`), `threshold_flags` (flags created in the period and
/// still EMITTED, velocity included), `review_closures` (flags created in the period that have
/// left EMITTED). Rows are `cells` string maps. `format` is accepted and ignored;
/// `period_start` is inclusive, `period_end` exclusive, either may be omitted.
#[utoipa::path(get, path = "/chain/compliance/v1/report", tag = "compliance", summary = "The compliance report of a period",
    params(("period_start" = Option<String>, Query, description = "RFC 3339, inclusive"),
        ("period_end" = Option<String>, Query, description = "RFC 3339, exclusive"),
        ("format" = Option<String>, Query, description = "Accepted and ignored")),
    responses((status = 200, description = "The answer", body = ReportResponse), (status = 400, description = "A malformed parameter", body = ErrorBody), (status = 503, description = "Busy: other broad queries hold every turn; retry", body = ErrorBody)))]
async fn report(State(node): State<Node>, RawQuery(raw): RawQuery) -> ApiResult<ReportResponse> {
    let _turn = crate::heavy::turn().await.map_err(ApiError::unavailable)?;
    let mut req = compliance_pb::QueryReportRequest::default();
    for (k, v) in form_urlencoded(raw.as_deref().unwrap_or("")) {
        if v.is_empty() {
            continue;
        }
        match k.as_str() {
            "period_start" => req.period_start = Some(parse_time("period_start", &v)?),
            "period_end" => req.period_end = Some(parse_time("period_end", &v)?),
            _ => {}
        }
    }
    Ok(Body(ReportResponse(routed(&node, compliance::QUERY_REPORT, &req).await?)))
}

/// SanctionsSet: `{set: {blocked_addresses, blocked_vasps}}`.
#[utoipa::path(get, path = "/chain/compliance/v1/sanctions", tag = "compliance", summary = "The sanctions set",
    responses((status = 200, description = "The answer", body = SanctionsResponse)))]
async fn sanctions(State(node): State<Node>) -> ApiResult<SanctionsResponse> {
    Ok(Body(SanctionsResponse(routed(&node, compliance::QUERY_SANCTIONS_SET, &compliance_pb::QuerySanctionsSetRequest {}).await?)))
}

/// Parses an RFC 3339 query parameter. An unescaped `+` of a UTC offset arrives as a space
/// (form decoding); it is read back as `+`.
fn parse_time(name: &str, v: &str) -> Result<lantau_proto::Timestamp, ApiError> {
    let parse = |s: &str| serde_json::from_value::<lantau_proto::Timestamp>(Value::String(s.to_string()));
    parse(v)
        .or_else(|e| if v.contains(' ') { parse(&v.replace(' ', "+")) } else { Err(e) })
        .map_err(|_| ApiError::invalid(format!("invalid {name} {v:?}: expected an RFC 3339 timestamp")))
}

/// The response bodies of these routes: what the handlers serialise and, from the same
/// definitions, the schemas of the document (schemathesis checks them on a live chain). A
/// field holding a protobuf message serialises with pbjson and is documented by the schema
/// generated from the same message's descriptor; a route that answers its response message as
/// is wraps it ([`proto_body!`]).
mod bodies {
    use super::*;
    use crate::openapi::proto_nullable;

    /// A protobuf response message written as pbjson writes it and documented by its
    /// generated schema.
    macro_rules! proto_body {
        ($name:ident, $ty:ty) => {
            #[doc = concat!("`", stringify!($ty), "`, as pbjson writes it.")]
            #[derive(Serialize)]
            #[serde(transparent)]
            pub(super) struct $name(pub(super) $ty);
            impl utoipa::PartialSchema for $name {
                fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                    proto_ref::<$ty>().into()
                }
            }
            impl ToSchema for $name {}
        };
    }
    macro_rules! one {
        ($name:ident, $field:ident, $ty:ty) => {
            #[doc = concat!("`{", stringify!($field), "}`")]
            #[derive(Serialize, ToSchema)]
            pub(super) struct $name {
                #[schema(schema_with = proto_nullable::<$ty>)]
                pub(super) $field: Option<$ty>,
            }
        };
    }
    macro_rules! list {
        ($name:ident, $field:ident, $ty:ty) => {
            #[doc = concat!("`{", stringify!($field), ", pagination}`")]
            #[derive(Serialize, ToSchema)]
            pub(super) struct $name {
                #[schema(schema_with = proto_list::<$ty>)]
                pub(super) $field: Vec<$ty>,
                pub(super) pagination: PageResponse,
            }
        };
    }
    one!(IdentityResponse, identity, kyc_pb::Identity);
    one!(KycParamsResponse, params, kyc_pb::Params);
    list!(DenomsResponse, denoms, stablecoin_pb::Denom);
    list!(TokenPairsResponse, token_pairs, lantau_proto::erc20::TokenPair);
    one!(TokenPairResponse, token_pair, lantau_proto::erc20::TokenPair);
    one!(AttestationResponse, attestation, reserve_pb::Attestation);
    one!(ReserveParamsResponse, params, reserve_pb::Params);
    one!(GroupResponse, group, group_pb::GroupInfo);
    list!(GroupsResponse, groups, group_pb::GroupInfo);
    one!(GroupProposalResponse, proposal, group_pb::Proposal);
    list!(GroupProposalsResponse, proposals, group_pb::Proposal);
    list!(GroupVotesResponse, votes, group_pb::Vote);
    one!(StablecoinParamsResponse, params, stablecoin_pb::Params);
    one!(RedemptionResponse, redemption, stablecoin_pb::Redemption);
    list!(RedemptionsResponse, redemptions, stablecoin_pb::Redemption);
    list!(AuditLogResponse, entries, compliance_pb::AuditEntry);
    list!(FlagsResponse, flags, compliance_pb::Flag);
    list!(SubRolesResponse, bindings, compliance_pb::SubRoleBinding);
    proto_body!(ComplianceParamsResponse, compliance_pb::QueryParamsResponse);
    proto_body!(TravelRuleResponse, compliance_pb::QueryTravelRulePayloadResponse);
    proto_body!(SimulateTraceResponse, compliance_pb::QuerySimulateTraceResponse);
    proto_body!(SanctionsResponse, compliance_pb::QuerySanctionsSetResponse);
    proto_body!(SubRoleParentResponse, compliance_pb::QuerySubRoleParentResponse);
    proto_body!(AgentPolicyResponse, compliance_pb::QueryAgentPolicyResponse);
    proto_body!(ReportResponse, compliance_pb::QueryReportResponse);

    /// `cosmos.upgrade.v1beta1.Plan` as the Cosmos SDK's gateway writes it.
    #[derive(Serialize, ToSchema)]
    pub(super) struct Plan {
        /// The upgrade's name (the handler a release carries).
        pub(super) name: String,
        /// Always null (time-based upgrades are deprecated).
        pub(super) time: Option<String>,
        /// The height at which it applies.
        #[schema(pattern = "^[0-9]+$")]
        pub(super) height: String,
        /// Free-form information (a release, a checksum).
        pub(super) info: String,
        /// Always null (deprecated).
        pub(super) upgraded_client_state: Option<Value>,
    }

    /// `{plan}`: null when no upgrade is scheduled.
    #[derive(Serialize, ToSchema)]
    pub(super) struct CurrentPlanResponse {
        pub(super) plan: Option<Plan>,
    }

    /// `{height}`: "0" when the upgrade was never applied.
    #[derive(Serialize, ToSchema)]
    pub(super) struct AppliedPlanResponse {
        #[schema(pattern = "^[0-9]+$")]
        pub(super) height: String,
    }

    /// A module's state version.
    #[derive(Serialize, ToSchema)]
    pub(super) struct ModuleVersion {
        pub(super) name: String,
        #[schema(pattern = "^[0-9]+$")]
        pub(super) version: String,
    }

    /// `{module_versions}`, sorted by name.
    #[derive(Serialize, ToSchema)]
    pub(super) struct ModuleVersionsResponse {
        pub(super) module_versions: Vec<ModuleVersion>,
    }

    /// `{address}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct UpgradeAuthorityResponse {
        pub(super) address: String,
    }

    /// `{roles}`: the grants, by role then address.
    #[derive(Serialize, ToSchema)]
    pub(super) struct RolesResponse {
        #[schema(schema_with = proto_list::<stablecoin_pb::RoleGrant>)]
        pub(super) roles: Vec<stablecoin_pb::RoleGrant>,
    }

    /// `{denom, paused, supply}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct DenomResponse {
        #[schema(schema_with = proto_nullable::<stablecoin_pb::Denom>)]
        pub(super) denom: Option<stablecoin_pb::Denom>,
        /// Transfers are paused.
        pub(super) paused: bool,
        pub(super) supply: Coin,
        /// Every paused feature (TRANSFER, MINT, BURN, SEIZE, REDEEM, in that order).
        pub(super) paused_features: Vec<String>,
    }

    /// `{address, frozen}`.
    #[derive(Serialize, ToSchema)]
    pub(super) struct FrozenResponse {
        pub(super) address: String,
        pub(super) frozen: bool,
    }

    /// A balance with its issuer's latest attestation; `balance` and `attestation` are null
    /// when unset, as the gateway writes unset message fields.
    #[derive(Serialize, ToSchema)]
    pub(super) struct ReserveBinding {
        pub(super) denom: String,
        pub(super) balance: Option<Coin>,
        pub(super) issuer: String,
        #[schema(schema_with = proto_nullable::<reserve_pb::Attestation>)]
        pub(super) attestation: Option<reserve_pb::Attestation>,
    }

    /// `{bindings}`: each balance with its issuer's attestation (null when none).
    #[derive(Serialize, ToSchema)]
    pub(super) struct ReserveForAddressResponse {
        pub(super) bindings: Vec<ReserveBinding>,
    }

    /// `{trace, found}`: `found: false` with a null trace when the node does not hold it.
    #[derive(Serialize, ToSchema)]
    pub(super) struct TxTraceResponse {
        #[schema(schema_with = proto_nullable::<compliance_pb::GateTrace>)]
        pub(super) trace: Option<compliance_pb::GateTrace>,
        pub(super) found: bool,
    }
}
use bodies::*;

#[cfg(test)]
mod audit_tests;
