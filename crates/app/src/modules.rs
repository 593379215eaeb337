//! The app's one ordered module list. Everything that names every module follows from the
//! [`modules!`] invocation at the bottom of this file:
//!
//! - [`AppGenesis`]: the genesis file's `app_state`, one section per module, written in list
//!   order ([`AppGenesis::apply`]);
//! - [`Msg`]: every message the chain accepts, one variant per module, decoded by asking each
//!   module in turn ([`Msg::from_any`]) and routed by one `match` per concern (type URL,
//!   signer, module name, facts, execution);
//! - [`query`]: query routing by gRPC method name.
//!
//! Adding a module touches that list and the module's own crate.

use cnidarium::{StateRead, StateWrite};
use cosmos_sdk_proto::Any;
use lantau_module_api::{BlockCtx, ExecCtx, Fact, Module, ModuleMsg, MsgHandler, QueryError, SdkError, TxError};
use lantau_primitives::Address;
use serde::{Deserialize, Serialize};

pub(crate) mod u64_string {
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

/// Declares the module list. Each entry: `genesis_field: MsgVariant => ModuleType`, in genesis
/// order; attributes (such as `#[cfg(test)]`) apply to the entry.
macro_rules! modules {
    ($( $(#[$attr:meta])* $field:ident : $variant:ident => $module:ty ),* $(,)?) => {
        /// `app_state` in the genesis file: the EVM chain id and one section per module, in
        /// the module list's order. A section the file omits is the module's default.
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
        #[serde(default)]
        pub struct AppGenesis {
            /// The EVM chain id (EIP-155), e.g. 852 on a dev chain.
            #[serde(with = "u64_string")]
            pub evm_chain_id: u64,
            /// An exported state to start from (`lantaud export`, [`crate::export`]): the
            /// module sections then stay empty.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub exported: Option<crate::export::StateExport>,
            $(
                $(#[$attr])*
                #[doc = concat!("The `", stringify!($field), "` module's section.")]
                pub $field: <$module as Module>::Genesis,
            )*
        }

        impl Default for AppGenesis {
            fn default() -> Self {
                Self {
                    evm_chain_id: 0,
                    exported: None,
                    $( $(#[$attr])* $field: <$module as Module>::default_genesis(), )*
                }
            }
        }

        impl AppGenesis {
            pub(crate) async fn apply_modules<S: StateWrite + Send + Sync>(&self, state: &mut S, block: &BlockCtx) -> Result<(), TxError> {
                $(
                    $(#[$attr])*
                    <$module as Module>::init_genesis(state, &self.$field, block).await?;
                )*
                Ok(())
            }
        }

        /// A decoded, statelessly validated message: one variant per module.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Msg {
            $(
                $(#[$attr])*
                #[doc = concat!("A message of the `", stringify!($field), "` module.")]
                $variant(<$module as Module>::Msg),
            )*
        }

        impl Msg {
            /// Decodes and validates an `Any`, asking each module in list order. An unknown
            /// type URL is a decode error (sdk code 2), as in the Cosmos SDK, whose interface
            /// registry cannot resolve it.
            pub fn from_any(any: &Any) -> Result<Self, TxError> {
                $(
                    $(#[$attr])*
                    if let Some(r) = <$module as Module>::decode(any) {
                        return r.map(Msg::$variant);
                    }
                )*
                Err(SdkError::TxDecode(format!("unable to resolve type URL {}", any.type_url)).into())
            }

            /// The message's type URL (`message.action`).
            pub fn type_url(&self) -> &'static str {
                match self { $( $(#[$attr])* Msg::$variant(m) => m.type_url(), )* }
            }

            /// The address that must sign the message.
            pub fn signer(&self) -> Address {
                match self { $( $(#[$attr])* Msg::$variant(m) => m.signer(), )* }
            }

            /// The module that handles it (`message.module`).
            pub fn module(&self) -> &'static str {
                match self { $( $(#[$attr])* Msg::$variant(_) => <$module as Module>::NAME, )* }
            }

            /// The stablecoin movements the message makes, as its module declares them.
            pub fn facts(&self, msg_index: usize) -> Vec<Fact> {
                match self { $( $(#[$attr])* Msg::$variant(m) => m.facts(msg_index), )* }
            }

            /// Stateless checks.
            pub fn check_stateless(&self) -> Result<(), TxError> {
                match self { $( $(#[$attr])* Msg::$variant(m) => m.check_stateless(), )* }
            }

            /// State checks and execution.
            pub async fn execute<S: StateWrite + Send + Sync>(&self, state: &mut S, ctx: &mut ExecCtx<'_>) -> Result<(), TxError> {
                match self { $( $(#[$attr])* Msg::$variant(m) => m.check_and_execute(state, ctx).await, )* }
            }
        }

        /// Answers a query by its gRPC method name (protobuf in and out), asking each module
        /// in list order; an unknown method is `InvalidArgument`, as the Cosmos SDK's router
        /// answers it.
        pub async fn query<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Result<Vec<u8>, QueryError> {
            match answer(state, method, request).await {
                Some(r) => r,
                None => Err(QueryError::InvalidArgument(format!("unknown query path {method}"))),
            }
        }

        /// The module that serves `method` answers it; `None` when none does.
        pub async fn answer<S: StateRead + Sync>(state: &S, method: &str, request: &[u8]) -> Option<Result<Vec<u8>, QueryError>> {
            // Only the list knows every module.
            if method == lantau_upgrade::query::MODULE_VERSIONS {
                return Some(lantau_upgrade::query::module_versions_query(state, MODULE_NAMES, request).await);
            }
            $(
                $(#[$attr])*
                if let Some(r) = <$module as Module>::query(state, method, request).await {
                    return Some(r);
                }
            )*
            None
        }

        /// The non-verifiable prefixes a state-sync snapshot carries, in list order.
        pub fn snapshot_nonverifiable_prefixes() -> Vec<&'static [u8]> {
            let mut v: Vec<&'static [u8]> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::SNAPSHOT_NONVERIFIABLE); )*
            v
        }

        /// The non-verifiable prefixes whose records are written once, in list order.
        pub fn write_once_nonverifiable() -> Vec<&'static [u8]> {
            let mut v: Vec<&'static [u8]> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::WRITE_ONCE_NONVERIFIABLE); )*
            v
        }

        /// The appended, sequence-keyed non-verifiable records with their counters, in list
        /// order.
        pub fn sequenced_nonverifiable() -> Vec<(&'static [u8], &'static str)> {
            let mut v: Vec<(&'static [u8], &'static str)> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::SEQUENCED_NONVERIFIABLE); )*
            v
        }

        /// The verifiable prefixes whose scans the read cache memoizes, in list order.
        pub fn memoized_scans() -> Vec<&'static str> {
            let mut v: Vec<&'static str> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::MEMOIZED_SCANS); )*
            v
        }

        /// The verifiable prefixes whose point reads the read cache answers from a scan, in
        /// list order.
        pub fn sparse_prefixes() -> Vec<&'static str> {
            let mut v: Vec<&'static str> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::SPARSE_PREFIXES); )*
            v
        }

        /// The non-verifiable prefixes whose records the read cache keeps, in list order.
        pub fn cached_nonverifiable() -> Vec<&'static str> {
            let mut v: Vec<&'static str> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::CACHED_NONVERIFIABLE); )*
            v
        }

        /// The verifiable prefixes an older layout used (prefix, what lived there), in list
        /// order.
        pub fn retired_verifiable() -> Vec<(&'static str, &'static str)> {
            let mut v: Vec<(&'static str, &'static str)> = Vec::new();
            $( $(#[$attr])* v.extend_from_slice(<$module as Module>::RETIRED_VERIFIABLE); )*
            v
        }

        /// Each module's check and rebuild of a state restored from a snapshot, in list order.
        pub async fn restore_snapshot<S: StateWrite + Send + Sync>(state: &mut S) -> Result<(), TxError> {
            $( $(#[$attr])* <$module as Module>::restore_snapshot(state).await?; )*
            Ok(())
        }

        /// Each module's state version as this binary knows it (`Module::STATE_VERSION`), in
        /// list order.
        pub const STATE_VERSIONS: &[(&str, u64)] = &[ $( $(#[$attr])* (<$module as Module>::NAME, <$module as Module>::STATE_VERSION), )* ];

        /// Runs module `name`'s migration from state version `from` to `from + 1`.
        pub async fn migrate<S: StateWrite + Send + Sync>(state: &mut S, name: &str, from: u64, gas: &lantau_module_api::GasMeter, block: &BlockCtx) -> Result<(), TxError> {
            $(
                $(#[$attr])*
                if name == <$module as Module>::NAME {
                    return <$module as Module>::migrate(state, from, gas, block).await;
                }
            )*
            Err(lantau_module_api::error::internal(format!("no module {name} to migrate")))
        }

        /// The names of the modules, in list order.
        pub const MODULE_NAMES: &[&str] = &[ $( $(#[$attr])* <$module as Module>::NAME, )* ];
    };
}

// === the list ===

modules! {
    auth: Auth => lantau_auth::Auth,
    bank: Bank => lantau_bank::Bank,
    authority: Authority => lantau_authority::Authority,
    kyc: Kyc => lantau_kyc::Kyc,
    erc20: Erc20 => lantau_erc20::Erc20,
    stablecoin: Stablecoin => lantau_stablecoin::Stablecoin,
    reserve: Reserve => lantau_reserve::Reserve,
    compliance: Compliance => lantau_compliance::Compliance,
    group: Group => lantau_group::Group,
    evm: Evm => lantau_evm::Evm,
    upgrade: Upgrade => lantau_upgrade::Upgrade,
    #[cfg(test)]
    probe: Probe => crate::probe::Probe,
}
