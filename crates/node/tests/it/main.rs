//! End-to-end tests of the node over real HTTP and WebSocket on loopback ports.

#![allow(unused_crate_dependencies, clippy::unwrap_used, clippy::disallowed_types, clippy::disallowed_methods)]

mod abci_conformance;
mod ante;
mod compliance_grpc;
mod cosmos_client;
mod cosmos_rest;
mod delegation;
mod evm_client;
mod evm_rpc;
mod gates;
mod golden;
mod group;
mod grpc_client;
mod history;
mod http_limits;
mod metrics;
mod openapi;
mod registries;
mod review;
mod support;
mod tx_service;
