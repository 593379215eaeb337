//! Integration tests of the client rules: the REST reads against a stub HTTP server on a
//! loopback port, and the pure rules (agent capacity, flag tracking) through the public API.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

mod capacity;
mod delegation;
mod flags;
mod stub;
mod sub_role_parent;
