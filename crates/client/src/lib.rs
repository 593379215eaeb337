//! The Lantau client library: build and sign transactions, broadcast them, and confirm them,
//! following the spec's client rules (a broadcast is not a confirmation; a poll timeout is
//! neither failure nor success; confirm by the transaction query).
//!
//! - [`tx`]: messages and SIGN_MODE_DIRECT signing with eth_secp256k1 keys.
//! - [`eth`]: Ethereum transactions signed with the same keys, the stablecoin precompile's
//!   calldata.
//! - [`rest`]: a typed client of the Cosmos REST surface.
//! - [`sender`]: sign, simulate, broadcast and confirm, as a wallet does (one key, one at a time).
//! - [`compliance`]: the compliance module's client rules for delegation and flags: fail-closed
//!   SubRoleParent, agent policies and their remaining capacity, a flag-event consumer.

#![cfg_attr(test, allow(unused_crate_dependencies))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // client code, not state machine

pub mod compliance;
pub mod eth;
pub mod msgs;
pub mod rest;
pub mod sender;
pub mod tx;

pub use compliance::{remaining_capacity, AgentPolicy, AgentWindow, Capacity, FlagTracker, ParentAnswer, Sighting, SubRoleBinding, TrackedFlag};
pub use rest::{Broadcast, ClientError, Confirmation, RestClient, TxResponse};
pub use tx::{msg_multi_send, msg_send, pb_coin, to_any, travel_rule_option, SignerData, TxBuilder};
