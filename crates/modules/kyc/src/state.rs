//! Typed access to KYC state: the module's keeper.

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;

use cnidarium::{StateRead, StateWrite};
use lantau_module_api::{event, store, BlockCtx, Event, GasMeter, TxError};
use lantau_primitives::Address;

use crate::tier::{default_params, tier_for, Tier};
use crate::{state_key, Identity, Level, Params};

/// Reads of KYC state.
pub trait KycRead: StateRead {
    /// The identity record of `addr`, if any.
    fn identity(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<Option<Identity>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::identity(addr)).await }
    }

    /// The params (the defaults until genesis writes them).
    fn kyc_params(&self, gas: &GasMeter) -> impl Future<Output = Result<Params, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(Arc::unwrap_or_clone(self.kyc_params_shared(gas).await?)) }
    }

    /// The params as [`KycRead::kyc_params`] reads them (the same read, the same gas), shared:
    /// the stored bytes are decoded once per thread for as long as they stay the same, since
    /// every gate run reads them for each party with an identity.
    fn kyc_params_shared(&self, gas: &GasMeter) -> impl Future<Output = Result<Arc<Params>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, state_key::PARAMS).await? {
                Some(bytes) => decoded_params(bytes),
                None => Ok(Arc::new(default_params())),
            }
        }
    }

    /// The level of `addr` (UNSPECIFIED without a record) and its Travel Rule tier.
    fn level_and_tier(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<(Option<Identity>, Tier), TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let id = self.identity(gas, addr).await?;
            let tier = match &id {
                Some(i) => tier_for(&*self.kyc_params_shared(gas).await?, level_of(i)),
                None => Tier::None,
            };
            Ok((id, tier))
        }
    }
}

impl<T: StateRead + ?Sized> KycRead for T {}

thread_local! {
    /// The params' stored bytes this thread last decoded, with their decoding.
    static PARAMS: RefCell<Option<(Vec<u8>, Arc<Params>)>> = const { RefCell::new(None) };
}

/// The params stored as `bytes`: the decoding this thread kept when it is of these very bytes,
/// a new one (kept in its place) otherwise. A function of the bytes read alone.
fn decoded_params(bytes: Vec<u8>) -> Result<Arc<Params>, TxError> {
    if let Some(p) = PARAMS.with_borrow(|kept| kept.as_ref().filter(|(b, _)| *b == bytes).map(|(_, p)| p.clone())) {
        return Ok(p);
    }
    let params = Arc::new(store::decode::<Params>(&bytes, state_key::PARAMS)?);
    PARAMS.with_borrow_mut(|kept| *kept = Some((bytes, params.clone())));
    Ok(params)
}

/// The level of a record; an out-of-range stored value reads as UNSPECIFIED.
pub fn level_of(id: &Identity) -> Level {
    Level::try_from(id.level).unwrap_or(Level::Unspecified)
}

/// Writes of KYC state.
pub trait KycWrite: StateWrite + KycRead {
    /// Stores an identity record.
    fn put_identity(&mut self, gas: &GasMeter, addr: &Address, id: &Identity) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::identity(addr), id)
    }

    /// Stores the params.
    fn put_kyc_params(&mut self, gas: &GasMeter, params: &Params) -> Result<(), TxError> {
        store::put_proto(self, gas, state_key::PARAMS.to_string(), params)
    }

    /// Sets `addr` to LEVEL_BLACKLISTED, keeping its VASP and reference; an address without a
    /// record gets one with empty fields. Idempotent: an address already blacklisted is left
    /// as it is and no event is emitted. Otherwise emits `EventLevelChanged` carrying `reason`
    /// and `evidence_ref`. Returns whether the level changed. Callers validate the lengths of
    /// `reason` and `evidence_ref`.
    #[allow(clippy::too_many_arguments)]
    fn blacklist(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        addr: &Address,
        reason: &str,
        evidence_ref: &str,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let now = lantau_module_api::block_timestamp(block);
            let mut id = match self.identity(gas, addr).await? {
                Some(id) if level_of(&id) == Level::Blacklisted => return Ok(false),
                Some(id) => id,
                None => Identity {
                    address: addr.to_bech32(),
                    level: Level::Unspecified as i32,
                    vasp_identifier: String::new(),
                    ivms101_off_chain_ref: String::new(),
                    enrolled_at: Some(now),
                    last_level_change: None,
                    expires_at: None,
                },
            };
            let previous = level_of(&id);
            id.level = Level::Blacklisted as i32;
            id.last_level_change = Some(now);
            self.put_identity(gas, addr, &id)?;
            let meta = [("reason", reason.to_string()), ("evidence_ref", evidence_ref.to_string()), ("previous_level", previous.as_str_name().to_string())];
            audit_identity(self, gas, block, tx_hash, "blacklist", addr, &meta).await?;
            events.push(event::typed(&lantau_proto::chain::kyc::v1::EventLevelChanged {
                address: addr.to_bech32(),
                previous_level: previous as i32,
                level: Level::Blacklisted as i32,
                reason: reason.to_string(),
                evidence_ref: evidence_ref.to_string(),
            }));
            Ok(true)
        }
    }

    /// Makes `addr` a LEVEL_LICENSED_ISSUER, as governance's issuer whitelisting does: an
    /// address without a record gets one with empty VASP and reference (EventIdentityEnrolled,
    /// `registrar` = the authority); a record at another level is raised to it, keeping its
    /// fields (EventLevelChanged, reason `issuer_whitelisted`); a blacklisted record fails with
    /// [`KycError::Blacklisted`](crate::KycError::Blacklisted).
    fn ensure_licensed_issuer(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        addr: &Address,
        authority: &Address,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let now = lantau_module_api::block_timestamp(block);
            match self.identity(gas, addr).await? {
                None => {
                    let id = Identity {
                        address: addr.to_bech32(),
                        level: Level::LicensedIssuer as i32,
                        vasp_identifier: String::new(),
                        ivms101_off_chain_ref: String::new(),
                        enrolled_at: Some(now),
                        last_level_change: Some(now),
                        expires_at: None,
                    };
                    self.put_identity(gas, addr, &id)?;
                    let meta = [("level", Level::LicensedIssuer.as_str_name().to_string()), ("registrar", authority.to_bech32())];
                    audit_identity(self, gas, block, tx_hash, "identity_enrolled", addr, &meta).await?;
                    events.push(event::typed(&lantau_proto::chain::kyc::v1::EventIdentityEnrolled {
                        address: addr.to_bech32(),
                        level: Level::LicensedIssuer as i32,
                        registrar: authority.to_bech32(),
                    }));
                    Ok(())
                }
                Some(id) if level_of(&id) == Level::Blacklisted => Err(crate::KycError::Blacklisted(addr.to_bech32()).into()),
                Some(id) if level_of(&id) == Level::LicensedIssuer => Ok(()),
                Some(mut id) => {
                    let previous = level_of(&id);
                    id.level = Level::LicensedIssuer as i32;
                    id.last_level_change = Some(now);
                    self.put_identity(gas, addr, &id)?;
                    let meta = [
                        ("previous_level", previous.as_str_name().to_string()),
                        ("level", Level::LicensedIssuer.as_str_name().to_string()),
                        ("reason", "issuer_whitelisted".to_string()),
                        ("authority", authority.to_bech32()),
                    ];
                    audit_identity(self, gas, block, tx_hash, "level_change", addr, &meta).await?;
                    events.push(event::typed(&lantau_proto::chain::kyc::v1::EventLevelChanged {
                        address: addr.to_bech32(),
                        previous_level: previous as i32,
                        level: Level::LicensedIssuer as i32,
                        reason: "issuer_whitelisted".into(),
                        evidence_ref: String::new(),
                    }));
                    Ok(())
                }
            }
        }
    }
}

impl<T: StateWrite + ?Sized> KycWrite for T {}

/// Appends an identity audit row (`identity_enrolled`, `level_change`, `blacklist`) through the
/// audit log's one writer: subject the address, the rest in metadata. Not at genesis (height
/// 0), whose file is its own record.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn audit_identity<S: StateWrite + Send + Sync + ?Sized>(
    state: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx_hash: &str,
    tx_type: &str,
    addr: &Address,
    metadata: &[(&str, String)],
) -> Result<(), TxError> {
    use lantau_audit::AuditWrite;
    if block.height == 0 {
        return Ok(());
    }
    state.append_audit(gas, block, lantau_audit::action_entry(tx_type, addr, tx_hash, metadata)).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    #[test]
    fn params_are_decoded_again_only_when_their_bytes_change() {
        let a = default_params();
        let mut b = default_params();
        b.level_definitions.pop();
        let first = decoded_params(a.encode_to_vec()).unwrap();
        assert_eq!(*first, a);
        // The same bytes: the kept decoding.
        assert!(Arc::ptr_eq(&first, &decoded_params(a.encode_to_vec()).unwrap()));
        // Other bytes: their own decoding, kept in its place.
        let second = decoded_params(b.encode_to_vec()).unwrap();
        assert_eq!(*second, b);
        assert!(Arc::ptr_eq(&second, &decoded_params(b.encode_to_vec()).unwrap()));
        // Bytes that do not decode are an error and leave the kept decoding as it was.
        assert!(decoded_params(vec![0xff, 0xff, 0xff]).is_err());
        assert!(Arc::ptr_eq(&second, &decoded_params(b.encode_to_vec()).unwrap()));
        assert_eq!(*decoded_params(a.encode_to_vec()).unwrap(), a);
    }
}
