//! State-machine tests on temporary stores: determinism (replay and side by side) and the
//! decoder's behaviour on arbitrary bytes.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

mod compliance_props;
mod decode_fuzz;
mod determinism;
mod evm;
mod export;
mod genesis;
mod history;
mod layout;
mod proposals;
mod recheck;
mod results;
mod rows;
