//! Typed access to compliance state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_authority::AuthorityRead;
use lantau_module_api::{store, GasMeter, TxError};

use crate::{default_rules, state_key, Params, Rules};

/// Reads of compliance state.
pub trait ComplianceRead: StateRead {
    /// The rules (defaults until genesis writes them).
    fn rules(&self, gas: &GasMeter) -> impl Future<Output = Result<Rules, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get_proto(self, gas, state_key::RULES).await?.unwrap_or_else(default_rules)) }
    }

    /// The params: the compliance authority and the rules.
    fn compliance_params(&self, gas: &GasMeter) -> impl Future<Output = Result<Params, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            Ok(Params { authority: self.compliance_authority(gas).await?.to_bech32(), rules: Some(self.rules(gas).await?) })
        }
    }
}

impl<T: StateRead + ?Sized> ComplianceRead for T {}

/// Writes of compliance state.
pub trait ComplianceWrite: StateWrite {
    /// Replaces the rules.
    fn put_rules(&mut self, gas: &GasMeter, rules: &Rules) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::RULES.to_string(), rules)
    }
}

impl<T: StateWrite + ?Sized> ComplianceWrite for T {}
