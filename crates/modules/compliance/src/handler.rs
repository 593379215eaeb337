//! Compliance message handlers.

use cnidarium::StateWrite;
use lantau_authority::{AuthorityRead, AuthorityWrite};
use lantau_module_api::{ExecCtx, MsgHandler, TxError};
use lantau_proto::chain::compliance::v1 as pb;

use crate::error::ComplianceError;
use crate::msg::ComplianceMsg;
use crate::state::ComplianceWrite;

impl MsgHandler for ComplianceMsg {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        match self {
            ComplianceMsg::UpdateParams(m) => {
                let gov = state.governance_authority(ctx.gas).await?;
                if m.authority != gov {
                    return Err(ComplianceError::NotGovernance { expected: gov.to_bech32(), signer: m.authority.to_bech32() }.into());
                }
                state.set_compliance_authority(ctx.gas, &m.compliance_authority)?;
                state.put_rules(ctx.gas, &m.rules)?;
                ctx.emit_typed(&pb::EventParamsUpdated {
                    authority: m.authority.to_bech32(),
                    compliance_authority: m.compliance_authority.to_bech32(),
                });
                Ok(())
            }
        }
    }
}
