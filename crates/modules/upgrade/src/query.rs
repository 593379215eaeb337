//! `cosmos.upgrade.v1beta1.Query`, read from committed snapshots, as the Cosmos SDK answers it.

use cnidarium::StateRead;
use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as pb;
use lantau_authority::AuthorityRead;
use lantau_module_api::{decode_query, GasMeter, QueryError, TxError};
use prost::Message as _;

use crate::state::UpgradeRead;

/// `/cosmos.upgrade.v1beta1.Query/CurrentPlan`.
pub const CURRENT_PLAN: &str = "/cosmos.upgrade.v1beta1.Query/CurrentPlan";
/// `/cosmos.upgrade.v1beta1.Query/AppliedPlan`.
pub const APPLIED_PLAN: &str = "/cosmos.upgrade.v1beta1.Query/AppliedPlan";
/// `/cosmos.upgrade.v1beta1.Query/ModuleVersions`.
pub const MODULE_VERSIONS: &str = "/cosmos.upgrade.v1beta1.Query/ModuleVersions";
/// `/cosmos.upgrade.v1beta1.Query/Authority`.
pub const AUTHORITY: &str = "/cosmos.upgrade.v1beta1.Query/Authority";

/// Every module's state version as the store records it, by module name. The module list is
/// the app's, so the app passes the names it knows ([`module_versions`]).
pub async fn module_versions<S: StateRead + Sync>(state: &S, names: &[&str]) -> Result<Vec<pb::ModuleVersion>, TxError> {
    let gas = GasMeter::infinite();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        out.push(pb::ModuleVersion { name: (*name).to_string(), version: state.module_version(&gas, name).await? });
    }
    // The Cosmos SDK lists them sorted by name.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Answers `ModuleVersions` for the modules `names` (the app's list: the app routes this
/// method here itself, since only it knows every module).
pub async fn module_versions_query<S: StateRead + Sync>(state: &S, names: &[&str], request: &[u8]) -> Result<Vec<u8>, QueryError> {
    let req: pb::QueryModuleVersionsRequest = decode_query(request)?;
    let mut versions = module_versions(state, names).await?;
    if !req.module_name.is_empty() {
        versions.retain(|v| v.name == req.module_name);
        if versions.is_empty() {
            return Err(QueryError::NotFound(format!("x/upgrade: QueryModuleVersions module {} not found", req.module_name)));
        }
    }
    Ok(pb::QueryModuleVersionsResponse { module_versions: versions }.encode_to_vec())
}

/// Answers `cosmos.upgrade.v1beta1.Query` (protobuf in and out) but `ModuleVersions`
/// ([`module_versions_query`]); `None` for another method.
pub async fn grpc<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
    let gas = GasMeter::infinite();
    let r = match method {
        CURRENT_PLAN => {
            async {
                let _: pb::QueryCurrentPlanRequest = decode_query(request)?;
                Ok(pb::QueryCurrentPlanResponse { plan: state.plan(&gas).await? }.encode_to_vec())
            }
            .await
        }
        APPLIED_PLAN => {
            async {
                let req: pb::QueryAppliedPlanRequest = decode_query(request)?;
                // The Cosmos SDK answers height 0 for a name never applied.
                let height = state.applied_height(&gas, &req.name).await?.unwrap_or(0);
                Ok(pb::QueryAppliedPlanResponse { height: i64::try_from(height).unwrap_or(i64::MAX) }.encode_to_vec())
            }
            .await
        }
        AUTHORITY => {
            async {
                let _: pb::QueryAuthorityRequest = decode_query(request)?;
                Ok(pb::QueryAuthorityResponse { address: state.governance_authority(&gas).await?.to_bech32() }.encode_to_vec())
            }
            .await
        }
        _ => return None,
    };
    Some(r)
}
