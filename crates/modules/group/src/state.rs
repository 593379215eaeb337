//! Typed access to group state.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{error::internal, store, GasMeter, TxError};
use lantau_primitives::Address;

use crate::{state_key, GroupInfo, Proposal, Vote};

fn u64_of(b: &[u8]) -> Result<u64, TxError> {
    let arr: [u8; 8] = b.try_into().map_err(|_| internal("corrupt u64 record"))?;
    Ok(u64::from_be_bytes(arr))
}

/// Reads of group state.
pub trait GroupRead: StateRead {
    /// A group by id.
    fn group_by_id(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<GroupInfo>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::group(id)).await }
    }

    /// The group at this address (`None`: the address is not a group account).
    fn group(&self, gas: &GasMeter, address: &Address) -> impl Future<Output = Result<Option<GroupInfo>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::address(address)).await? {
                Some(b) => self.group_by_id(gas, u64_of(&b)?).await,
                None => Ok(None),
            }
        }
    }

    /// A proposal by id.
    fn proposal(&self, gas: &GasMeter, id: u64) -> impl Future<Output = Result<Option<Proposal>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::proposal(id)).await }
    }

    /// A member's vote on a proposal.
    fn vote(&self, gas: &GasMeter, proposal_id: u64, voter: &Address) -> impl Future<Output = Result<Option<Vote>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::vote(proposal_id, voter)).await }
    }
}

impl<T: StateRead + ?Sized> GroupRead for T {}

/// Writes of group state.
pub trait GroupWrite: StateWrite + GroupRead {
    /// Takes the next id of a counter (groups or proposals), from 1.
    fn take_id(&mut self, gas: &GasMeter, key: &'static str) -> impl Future<Output = Result<u64, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let id = match store::get(self, gas, key).await? {
                Some(b) => u64_of(&b)?,
                None => 1,
            };
            let next = id.checked_add(1).ok_or_else(|| internal(format!("{key}: ids exhausted")))?;
            store::put_singleton(self, gas, key.to_string(), next.to_be_bytes().to_vec())?;
            Ok(id)
        }
    }

    /// Sets a counter's next id (genesis).
    fn set_next_id(&mut self, gas: &GasMeter, key: &'static str, next: u64) -> Result<(), TxError> {
        store::put_singleton(self, gas, key.to_string(), next.to_be_bytes().to_vec())
    }

    /// Stores a group with its address and membership indexes; `old` is the record it
    /// replaces (its memberships are removed first).
    fn put_group(&mut self, gas: &GasMeter, g: &GroupInfo, address: &Address, old: Option<&GroupInfo>) -> Result<(), TxError> {
        if let Some(old) = old {
            for m in &old.members {
                let a = Address::from_bech32(&m.address).map_err(|e| internal(format!("group {}: member: {e}", old.id)))?;
                store::delete(self, gas, state_key::member(&a, old.id))?;
            }
        }
        for m in &g.members {
            let a = Address::from_bech32(&m.address).map_err(|e| internal(format!("group {}: member: {e}", g.id)))?;
            store::put(self, gas, state_key::member(&a, g.id), Vec::new())?;
        }
        store::put(self, gas, state_key::address(address), g.id.to_be_bytes().to_vec())?;
        store::put_proto(self, gas, state_key::group(g.id), g)
    }

    /// Stores a proposal (and, when `group` is given, indexes it under that group).
    fn put_proposal(&mut self, gas: &GasMeter, p: &Proposal, group: Option<&Address>) -> Result<(), TxError> {
        if let Some(g) = group {
            store::put(self, gas, state_key::by_group(g, p.id), Vec::new())?;
        }
        store::put_proto(self, gas, state_key::proposal(p.id), p)
    }

    /// Stores a vote.
    fn put_vote(&mut self, gas: &GasMeter, v: &Vote, voter: &Address) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::vote(v.proposal_id, voter), v)
    }
}

impl<T: StateWrite + ?Sized> GroupWrite for T {}
