//! The app's genesis state: the `app_state` of the genesis file.

use cnidarium::StateWrite;
use lantau_module_api::{store, BlockCtx, GasMeter, SdkError, TxError};
use serde::{Deserialize, Serialize};

use crate::state_key;

/// `app_state` in the genesis file. The module order here is the app's one ordered module list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AppGenesis {
    /// The EVM chain id (EIP-155), e.g. 852 on a dev chain.
    #[serde(with = "u64_string")]
    pub evm_chain_id: u64,
    /// Accounts.
    #[serde(default)]
    pub auth: lantau_auth::genesis::GenesisState,
    /// Balances.
    #[serde(default)]
    pub bank: lantau_bank::genesis::GenesisState,
    /// The governance authority.
    #[serde(default)]
    pub authority: lantau_authority::genesis::GenesisState,
    /// Identity records, level definitions, registrars.
    #[serde(default = "lantau_kyc::genesis::default_genesis")]
    pub kyc: lantau_kyc::genesis::GenesisState,
    /// Stablecoin denoms (each gets its ERC-20 token pair), paused issuers, frozen addresses.
    #[serde(default)]
    pub stablecoin: lantau_stablecoin::genesis::GenesisState,
    /// Registered auditors.
    #[serde(default)]
    pub reserve: lantau_reserve::genesis::GenesisState,
    /// The compliance authority and the rules.
    #[serde(default)]
    pub compliance: lantau_compliance::genesis::GenesisState,
}

mod u64_string {
    use serde::{Deserialize, Deserializer, Serializer};
    pub(crate) fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            S(String),
            N(u64),
        }
        match Either::deserialize(d)? {
            Either::S(s) => s.parse().map_err(serde::de::Error::custom),
            Either::N(n) => Ok(n),
        }
    }
}

impl AppGenesis {
    /// Parses `app_state` bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Self, TxError> {
        serde_json::from_slice(bytes).map_err(|e| SdkError::InvalidRequest(format!("invalid app_state: {e}")).into())
    }

    /// Writes the genesis state of every module, in module order.
    pub async fn apply<S: StateWrite + Send + Sync>(&self, state: &mut S, chain_id: &str, genesis_time: time::OffsetDateTime) -> Result<(), TxError> {
        let gas = GasMeter::infinite();
        store::put(state, &gas, state_key::CHAIN_ID.to_string(), chain_id.as_bytes().to_vec())?;
        store::put(state, &gas, state_key::EVM_CHAIN_ID.to_string(), self.evm_chain_id.to_be_bytes().to_vec())?;
        // Every address with a genesis balance gets an account, numbered after the explicit ones.
        let mut auth = self.auth.clone();
        for b in &self.bank.balances {
            if !auth.accounts.contains(&b.address) {
                auth.accounts.push(b.address);
            }
        }
        lantau_auth::genesis::init_genesis(state, &auth).await?;
        lantau_bank::genesis::init_genesis(state, &self.bank).await?;
        let governance = lantau_authority::genesis::init_genesis(state, &self.authority)?;
        lantau_kyc::genesis::init_genesis(state, &self.kyc)?;
        let block = BlockCtx { height: 0, time: genesis_time, chain_id: chain_id.to_string() };
        lantau_stablecoin::genesis::init_genesis(state, &self.stablecoin, &block, &governance).await?;
        lantau_reserve::genesis::init_genesis(state, &self.reserve)?;
        lantau_compliance::genesis::init_genesis(state, &self.compliance, &governance)?;
        Ok(())
    }
}
