//! A test-only module wired through the one module list (`crate::modules`, under
//! `#[cfg(test)]`) and nowhere else: its genesis section, its message and its query work
//! with no other edit in the app.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use cnidarium::{StateRead, StateWrite};
use cosmos_sdk_proto::Any;
use lantau_module_api::{store, BlockCtx, ExecCtx, Fact, GasMeter, Module, ModuleMsg, MsgHandler, QueryError, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

const COUNTER: &str = "probe/counter";
const MSG_BUMP: &str = "/lantau.probe.v1.MsgBump";
const QUERY_COUNTER: &str = "/lantau.probe.v1.Query/Counter";

/// `lantau.probe.v1.MsgBump { signer = 1; by = 2; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MsgBump {
    /// Who signs.
    #[prost(string, tag = "1")]
    pub signer: String,
    /// How much to add.
    #[prost(uint64, tag = "2")]
    pub by: u64,
}

/// `lantau.probe.v1.QueryCounterResponse { value = 1; }`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct QueryCounterResponse {
    /// The counter.
    #[prost(uint64, tag = "1")]
    pub value: u64,
}

/// The probe's genesis section: where its counter starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeGenesis {
    /// The counter's first value.
    pub start: u64,
}

/// The probe's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bump {
    signer: Address,
    by: u64,
}

async fn counter<S: StateRead + Sync>(state: &S, gas: &GasMeter) -> Result<u64, TxError> {
    Ok(match store::get(state, gas, COUNTER).await? {
        Some(b) => u64::from_be_bytes(b.as_slice().try_into().map_err(lantau_module_api::error::internal)?),
        None => 0,
    })
}

impl MsgHandler for Bump {
    fn check_stateless(&self) -> Result<(), TxError> {
        Ok(())
    }

    async fn check_and_execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
        let v = counter(state, ctx.gas).await?.saturating_add(self.by);
        store::put(state, ctx.gas, COUNTER.into(), v.to_be_bytes().to_vec())?;
        ctx.emit(lantau_module_api::event("probe_bumped", [("value", v.to_string())]));
        Ok(())
    }
}

impl ModuleMsg for Bump {
    fn type_url(&self) -> &'static str {
        MSG_BUMP
    }
    fn signer(&self) -> Address {
        self.signer
    }
    fn facts(&self, _msg_index: usize) -> Vec<Fact> {
        Vec::new()
    }
}

/// The probe module.
pub struct Probe;

impl Module for Probe {
    const NAME: &'static str = "probe";
    type Genesis = ProbeGenesis;
    type Msg = Bump;

    fn default_genesis() -> ProbeGenesis {
        ProbeGenesis::default()
    }

    async fn init_genesis<S: StateWrite + Send + Sync>(state: &mut S, g: &ProbeGenesis, _block: &BlockCtx) -> Result<(), TxError> {
        store::put(state, &GasMeter::infinite(), COUNTER.into(), g.start.to_be_bytes().to_vec())
    }

    fn decode(any: &Any) -> Option<Result<Bump, TxError>> {
        (any.type_url == MSG_BUMP).then(|| {
            let m: MsgBump = lantau_module_api::decode_any(any)?;
            Ok(Bump { signer: lantau_module_api::parse_address(&m.signer, "signer")?, by: m.by })
        })
    }

    async fn query<S: StateRead + Sync>(state: &S, method: &str, _request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
        if method != QUERY_COUNTER {
            return None;
        }
        Some(counter(state, &GasMeter::infinite()).await.map(|value| prost::Message::encode_to_vec(&QueryCounterResponse { value })).map_err(QueryError::from))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lantau_client::{SignerData, TxBuilder};
    use tendermint::abci::{request, types::CommitInfo};

    use super::*;
    use crate::{App, AppConfig, NoHook};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_module_in_the_list_gets_genesis_routing_and_a_query() {
        let key = lantau_crypto::SecretKey::from_bytes(&[7; 32]).unwrap();
        let mut g = crate::AppGenesis { evm_chain_id: 852, ..Default::default() };
        g.bank.balances.push(lantau_bank::genesis::Balance {
            address: key.address(),
            coins: vec![lantau_primitives::Coin::new(lantau_primitives::NATIVE_DENOM, 10u128.pow(24))],
        });
        g.authority.governance = Some(key.address());
        g.probe.start = 5;
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["probe"], serde_json::json!({"start": 5}), "the section is in the genesis file");

        let dir = tempfile::tempdir().unwrap();
        let app = App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
        app.init_chain(request::InitChain {
            time: tendermint::Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
            chain_id: "probe-1".into(),
            consensus_params: tendermint::consensus::Params {
                block: tendermint::block::Size { max_bytes: 4_194_304, max_gas: -1, time_iota_ms: 1 },
                evidence: tendermint::evidence::Params {
                    max_age_num_blocks: 100_000,
                    max_age_duration: tendermint::evidence::Duration(std::time::Duration::from_secs(172_800)),
                    max_bytes: 1_048_576,
                },
                validator: tendermint::consensus::params::ValidatorParams { pub_key_types: vec![tendermint::public_key::Algorithm::Ed25519] },
                version: None,
                abci: Default::default(),
            },
            validators: vec![],
            app_state_bytes: serde_json::to_vec(&g).unwrap().into(),
            initial_height: 1u32.into(),
        })
        .await
        .unwrap();
        // Genesis.
        let value = |bytes: Vec<u8>| <QueryCounterResponse as prost::Message>::decode(bytes.as_slice()).unwrap().value;
        assert_eq!(value(app.query(QUERY_COUNTER, &[]).await.unwrap()), 5);

        // Routing: a signed MsgBump is decoded by the probe and executed by it.
        let any = Any { type_url: MSG_BUMP.into(), value: prost::Message::encode_to_vec(&MsgBump { signer: key.address().to_bech32(), by: 3 }) };
        let tx = TxBuilder::new(vec![any]).gas(200_000).sign(&key, &SignerData { chain_id: "probe-1".into(), account_number: 0, sequence: 0 });
        assert!(app.check_tx_bytes(&tx).await.result.is_ok());
        let r = app
            .finalize_block(request::FinalizeBlock {
                txs: vec![tx.into()],
                decided_last_commit: CommitInfo { round: Default::default(), votes: vec![] },
                misbehavior: vec![],
                hash: tendermint::Hash::Sha256([1; 32]),
                height: 1u32.into(),
                time: tendermint::Time::from_unix_timestamp(1_700_000_005, 0).unwrap(),
                next_validators_hash: tendermint::Hash::None,
                proposer_address: tendermint::account::Id::new([1; 20]),
            })
            .await
            .unwrap();
        app.commit().await.unwrap();
        let res = &r.tx_results[0];
        assert!(res.code.is_ok(), "{}", res.log);
        let module = res
            .events
            .iter()
            .find(|e| e.kind == "message")
            .unwrap()
            .attributes
            .iter()
            .find(|a| a.key_str().unwrap() == "module")
            .unwrap()
            .value_str()
            .unwrap()
            .to_string();
        assert_eq!(module, "probe");
        assert!(res.events.iter().any(|e| e.kind == "probe_bumped"));

        // The query, through the list.
        assert_eq!(value(app.query(QUERY_COUNTER, &[]).await.unwrap()), 8);
        assert!(matches!(app.query("/lantau.nothing.v1.Query/X", &[]).await, Err(QueryError::InvalidArgument(_))));
        assert!(crate::modules::MODULE_NAMES.contains(&"probe"));
        app.release().await;
    }
}
