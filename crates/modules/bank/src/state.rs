//! Typed access to bank state: the module's keeper, and the one transfer chokepoint.

use std::future::Future;

use cnidarium::{StateRead, StateWrite};
use futures::StreamExt;
use lantau_compliance::audit::{AuditEntry, AuditWrite};
use lantau_compliance::screening::Screened;
use lantau_module_api::{error::internal, pb_coin, reads, store, BlockCtx, Event, GasMeter, SdkError, TxError};
use lantau_primitives::{Address, Amount, Coin};

use crate::{event, msg::coins_to_string, state_key, Balances, BankError, DenomRecord};

pub(crate) fn decode_amount(bytes: &[u8]) -> Result<Amount, TxError> {
    Amount::from_be_slice(bytes).ok_or_else(|| internal("corrupt balance record"))
}

/// Reads of bank state.
pub trait BankRead: StateRead {
    /// The balance of `addr` in `denom` (zero when absent). A run whose reads are logged logs
    /// it as the denom's part of the record ([`RecordRead`]).
    fn balance(&self, gas: &GasMeter, addr: &Address, denom: &str) -> impl Future<Output = Result<Amount, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(RecordRead::of(self, gas, addr).await?.take(denom)) }
    }

    /// Every non-zero balance of `addr`: its record, or, in a state of version 1 (a height
    /// before the upgrade that migrated it), its keys of that layout.
    fn balances(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<Balances, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let key = state_key::balances(addr);
            let raw = store::get(self, gas, &key).await?;
            balances_from(self, addr, &key, raw).await
        }
    }

    /// Every non-zero balance of `addr`, sorted by denom. Unmetered: queries only.
    fn all_balances(&self, addr: &Address) -> impl Future<Output = Result<Vec<Coin>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(self.balances(&GasMeter::infinite(), addr).await?.coins()) }
    }

    /// The supply of `denom`.
    fn supply(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Amount, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::supply(denom)).await? {
                Some(b) => decode_amount(&b),
                None => Ok(Amount::ZERO),
            }
        }
    }

    /// True when transfers of `denom` are paused.
    fn is_send_paused(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(self.paused_features(gas, denom).await?.contains(crate::Feature::Transfer)) }
    }

    /// The features of `denom` that are paused.
    fn paused_features(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<crate::Features, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            Ok(match store::get(self, gas, &state_key::paused(denom)).await? {
                None => crate::Features::NONE,
                Some(v) => crate::Features::decode(&v).ok_or_else(|| internal(format!("corrupt {}: {v:?}", state_key::paused(denom))))?,
            })
        }
    }

    /// The record of a stablecoin denom (display, decimals, issuer).
    fn denom_record(&self, gas: &GasMeter, denom: &str) -> impl Future<Output = Result<Option<DenomRecord>, TxError>> + Send
    where
        Self: Sync,
    {
        async move { store::get_proto(self, gas, &state_key::denom(denom)).await }
    }

    /// The denom `issuer` issues.
    fn issuer_denom(&self, gas: &GasMeter, issuer: &Address) -> impl Future<Output = Result<Option<String>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            match store::get(self, gas, &state_key::issuer(issuer)).await? {
                Some(b) => Ok(Some(String::from_utf8(b).map_err(|_| internal("corrupt issuer index"))?)),
                None => Ok(None),
            }
        }
    }

    /// Whether `denom` and `issuer` are both free, so the denom can be created for the issuer:
    /// the [`NewDenom`] that [`BankWrite::create_denom`] takes, or what is in the way.
    fn new_denom(&self, gas: &GasMeter, denom: &str, issuer: &Address) -> impl Future<Output = Result<Result<NewDenom, DenomClash>, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            if store::get(self, gas, &state_key::denom(denom)).await?.is_some() {
                return Ok(Err(DenomClash::DenomExists));
            }
            if let Some(existing) = self.issuer_denom(gas, issuer).await? {
                return Ok(Err(DenomClash::IssuerHasDenom(existing)));
            }
            Ok(Ok(NewDenom { denom: denom.to_string(), issuer: *issuer }))
        }
    }

    /// What the denom record says of `signer`: the [`Issuer`] proof that mint and burn take
    /// when `signer` issues `denom`.
    fn issuer_of(&self, gas: &GasMeter, denom: &str, signer: &Address) -> impl Future<Output = Result<IssuerOf, TxError>> + Send
    where
        Self: Sync,
    {
        async move {
            let Some(rec) = self.denom_record(gas, denom).await? else { return Ok(IssuerOf::UnknownDenom) };
            if rec.issuer != signer.to_bech32() {
                return Ok(IssuerOf::Other(rec.issuer));
            }
            Ok(IssuerOf::Issuer(Issuer { address: *signer, denom: rec.denom }))
        }
    }

    /// True when `addr` is frozen.
    fn is_frozen(&self, gas: &GasMeter, addr: &Address) -> impl Future<Output = Result<bool, TxError>> + Send
    where
        Self: Sync,
    {
        async move { Ok(store::get(self, gas, &state_key::frozen(addr)).await?.is_some()) }
    }
}

impl<T: StateRead + ?Sized> BankRead for T {}

// === denoms and their issuers ===

/// A denom that does not exist yet, for an issuer that issues none: only
/// [`BankRead::new_denom`] makes one, after reading both.
#[derive(Debug)]
pub struct NewDenom {
    denom: String,
    issuer: Address,
}

/// Why a denom cannot be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenomClash {
    /// The denom exists.
    DenomExists,
    /// The issuer already issues this denom.
    IssuerHasDenom(String),
}

/// Proof that an address issues a denom: only [`BankRead::issuer_of`] makes one, from the
/// denom record, so mint and burn cannot be called on another's behalf.
#[derive(Debug, PartialEq, Eq)]
pub struct Issuer {
    address: Address,
    denom: String,
}

impl Issuer {
    /// The issuer.
    pub fn address(&self) -> &Address {
        &self.address
    }

    /// The denom it issues.
    pub fn denom(&self) -> &str {
        &self.denom
    }
}

/// What the denom record says of a signer.
#[derive(Debug, PartialEq, Eq)]
pub enum IssuerOf {
    /// No such denom.
    UnknownDenom,
    /// Another address (bech32) issues it.
    Other(String),
    /// The signer issues it.
    Issuer(Issuer),
}

// === the one transfer function ===

/// One leg of a balance movement. A stablecoin leg carries the value that proves it may move:
/// a [`Screened`] token (only the gate chain makes one, for exactly that movement), an
/// [`IssueLeg`] (only the bank's [`BankWrite::mint`] and [`BankWrite::burn`] make one, for the
/// holder of an [`Issuer`] proof, and they write its audit row), or a [`GenesisLeg`] (only the
/// bank's own genesis makes one). A plain leg moves only denoms outside compliance's scope (the
/// native gas coin): its constructor refuses `hkd.`.
#[derive(Debug)]
pub enum Leg {
    /// A denom compliance does not govern, between two accounts.
    Plain(PlainLeg),
    /// A stablecoin between two accounts, screened by the gate chain.
    Screened(Screened),
    /// A stablecoin created (mint) or destroyed (burn) by its issuer.
    Issue(IssueLeg),
    /// A balance the genesis file allocates.
    Genesis(GenesisLeg),
    /// A stablecoin seized from a holder under a court order.
    Seize(SeizeLeg),
    /// A stablecoin into (a request) or out of (settlement: burned; rejection: returned) the
    /// redemption escrow.
    Redeem(RedeemLeg),
}

/// One step of a redemption through the escrow ([`crate::redemption_escrow`]). Private to
/// this crate: made by [`BankWrite::redemption_request`] and
/// [`BankWrite::redemption_closed`] only, which write its audit row.
#[derive(Debug, PartialEq, Eq)]
pub struct RedeemLeg {
    from: Option<Address>,
    to: Option<Address>,
    coin: Coin,
    step: RedeemStep,
}

/// Which step of a redemption a [`RedeemLeg`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedeemStep {
    /// Holder → escrow: the REDEEM feature, paused or not; the holder must not be frozen.
    Request,
    /// Escrow → burned, or escrow → holder: discharges a request already made, so neither a
    /// pause nor a freeze (since the request) holds it back.
    Close,
}

/// A stablecoin a seizer of its denom moves from any holder (frozen included) to a recipient
/// the stablecoin module has checked. Private to this crate: made by [`BankWrite::seize`]
/// only, for the holder of an [`Issuer`] proof, which writes its audit row.
#[derive(Debug, PartialEq, Eq)]
pub struct SeizeLeg {
    from: Address,
    to: Address,
    coin: Coin,
}

/// A balance the genesis file allocates (any denom). Only the bank's genesis
/// ([`crate::genesis::init_genesis`]) can make one: its constructor is private to this crate,
/// so no other module can create coins this way. The genesis file, which every validator
/// starts from, is its record.
#[derive(Debug, PartialEq, Eq)]
pub struct GenesisLeg {
    to: Address,
    coin: Coin,
}

impl GenesisLeg {
    pub(crate) fn new(to: &Address, coin: &Coin) -> Self {
        Self { to: *to, coin: coin.clone() }
    }
}

/// A stablecoin its issuer creates in an account (mint) or destroys from its own balance
/// (burn). Private to this crate: made by [`BankWrite::mint`] and [`BankWrite::burn`] only.
#[derive(Debug, PartialEq, Eq)]
pub struct IssueLeg {
    from: Option<Address>,
    to: Option<Address>,
    coin: Coin,
}

/// A movement of a denom that compliance does not govern (the native gas coin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainLeg {
    from: Address,
    to: Address,
    coin: Coin,
}

impl PlainLeg {
    /// A plain movement; a stablecoin (`hkd.`) is refused: it needs a proof of screening.
    pub fn new(from: &Address, to: &Address, coin: &Coin) -> Result<Self, TxError> {
        if coin.is_stablecoin() {
            return Err(BankError::NeedsScreening(coin.to_string()).into());
        }
        Ok(Self { from: *from, to: *to, coin: coin.clone() })
    }
}

/// What one leg does to balances and supply, the feature of its denom it uses, and which of
/// the send restrictions hold it back.
struct Effect<'a> {
    from: Option<&'a Address>,
    to: Option<&'a Address>,
    coin: &'a Coin,
    feature: crate::Feature,
    checks: Checks,
}

/// The send restrictions a leg obeys.
#[derive(Clone, Copy)]
struct Checks {
    /// Refused while its feature is paused.
    pause: bool,
    /// Refused when the debited party is frozen.
    frozen_from: bool,
    /// Refused when the credited party is frozen.
    frozen_to: bool,
}

impl Checks {
    const ALL: Checks = Checks { pause: true, frozen_from: true, frozen_to: true };
    const NONE: Checks = Checks { pause: false, frozen_from: false, frozen_to: false };
}

impl Leg {
    fn effect(&self) -> Effect<'_> {
        use crate::Feature;
        match self {
            Leg::Plain(l) => Effect { from: Some(&l.from), to: Some(&l.to), coin: &l.coin, feature: Feature::Transfer, checks: Checks::ALL },
            Leg::Screened(t) => Effect { from: Some(t.from()), to: Some(t.to()), coin: t.coin(), feature: Feature::Transfer, checks: Checks::ALL },
            Leg::Issue(l) => Effect {
                from: l.from.as_ref(),
                to: l.to.as_ref(),
                coin: &l.coin,
                feature: if l.from.is_none() { Feature::Mint } else { Feature::Burn },
                checks: Checks::ALL,
            },
            Leg::Genesis(g) => Effect { from: None, to: Some(&g.to), coin: &g.coin, feature: Feature::Transfer, checks: Checks::ALL },
            // A seizure takes from a frozen holder too (that is what a court order is for); its
            // recipient, like every other party, must not be frozen.
            Leg::Seize(l) => {
                Effect { from: Some(&l.from), to: Some(&l.to), coin: &l.coin, feature: Feature::Seize, checks: Checks { frozen_from: false, ..Checks::ALL } }
            }
            Leg::Redeem(l) => Effect {
                from: l.from.as_ref(),
                to: l.to.as_ref(),
                coin: &l.coin,
                feature: Feature::Redeem,
                checks: match l.step {
                    RedeemStep::Request => Checks { frozen_to: false, ..Checks::ALL },
                    RedeemStep::Close => Checks::NONE,
                },
            },
        }
    }
}

/// The balances of `addr` given what its record key `key` holds (`raw`): the record, or, when
/// there is none in a state of version 1 (a height before the upgrade that migrated it), the
/// keys of that layout.
async fn balances_from<S: StateRead + Sync + ?Sized>(s: &S, addr: &Address, key: &str, raw: Option<Vec<u8>>) -> Result<Balances, TxError> {
    if let Some(b) = raw {
        return Balances::decode_at(key, &b);
    }
    let meta = GasMeter::infinite();
    if lantau_upgrade::UpgradeRead::module_version(s, &meta, crate::MODULE_NAME).await? >= 2 {
        return Ok(Balances::default());
    }
    let prefix = state_key::v1_balance_prefix(addr);
    let mut stream = std::pin::pin!(s.prefix_raw(&prefix));
    let mut out = Balances::default();
    while let Some(item) = stream.next().await {
        let (key, value) = item.map_err(|e| store::read_failed(&prefix, e))?;
        out.set(key.strip_prefix(&prefix).unwrap_or(&key), decode_amount(&value)?);
    }
    Ok(out)
}

/// An address's balance record as a run reads it to take single balances from it. When the
/// run's reads are logged ([`reads::log_of`]: an admission, whose verdict is kept while what
/// it read holds), the record is read unlogged and each balance taken from it is logged as
/// that denom's part ([`crate::balances::part`]: the amount and the record's length, which
/// the read's gas depends on). So a block that moves another denom of the record (the
/// stablecoin a sender's earlier transfer moved, when the admission only took the fee) leaves
/// the verdict standing. The reads of the version-1 fallback are logged as they happen.
#[derive(Default)]
struct RecordRead {
    balances: Balances,
    /// The run's log, the record's key and the length of what it held (`None`: absent).
    log: Option<(std::sync::Arc<reads::ReadLog>, String, Option<usize>)>,
}

impl RecordRead {
    async fn of<S: StateRead + Sync + ?Sized>(s: &S, gas: &GasMeter, addr: &Address) -> Result<Self, TxError> {
        let key = state_key::balances(addr);
        let Some(log) = reads::log_of(s) else {
            let raw = store::get(s, gas, &key).await?;
            return Ok(Self { balances: balances_from(s, addr, &key, raw).await?, log: None });
        };
        let raw = {
            let _unlogged = log.unlogged();
            store::get(s, gas, &key).await?
        };
        let len = raw.as_ref().map(Vec::len);
        Ok(Self { balances: balances_from(s, addr, &key, raw).await?, log: Some((log, key, len)) })
    }

    /// The balance of `denom`, logged as taken (the first take of a denom is what the record
    /// held as read; a later one may follow the run's own change and is not logged again).
    fn take(&self, denom: &str) -> Amount {
        let v = self.balances.get(denom);
        if let Some((log, key, len)) = &self.log {
            log.part(key, denom.as_bytes(), Some(crate::balances::part_value(*len, v)), crate::balances::part);
        }
        v
    }
}

/// Balances and supplies as a movement computes them, before anything is written.
#[derive(Default)]
struct Ledger {
    /// The balance records of the addresses read, as the legs leave them.
    balances: std::collections::BTreeMap<Address, RecordRead>,
    /// The addresses whose balances the legs changed.
    moved: std::collections::BTreeSet<Address>,
    supplies: std::collections::BTreeMap<String, Amount>,
    paused: std::collections::BTreeMap<String, crate::Features>,
    frozen: std::collections::BTreeMap<Address, bool>,
}

impl Ledger {
    async fn balance<S: StateRead + Sync + ?Sized>(&mut self, s: &S, gas: &GasMeter, a: &Address, denom: &str) -> Result<Amount, TxError> {
        if let Some(b) = self.balances.get(a) {
            return Ok(b.take(denom));
        }
        let b = RecordRead::of(s, gas, a).await?;
        let v = b.take(denom);
        self.balances.insert(*a, b);
        Ok(v)
    }

    /// Sets a balance the legs computed (its record was read by [`Ledger::balance`]).
    fn set(&mut self, a: &Address, denom: &str, amount: Amount) {
        self.balances.entry(*a).or_default().balances.set(denom, amount);
        self.moved.insert(*a);
    }

    async fn supply<S: StateRead + Sync + ?Sized>(&mut self, s: &S, gas: &GasMeter, denom: &str) -> Result<Amount, TxError> {
        if let Some(v) = self.supplies.get(denom) {
            return Ok(*v);
        }
        let v = s.supply(gas, denom).await?;
        self.supplies.insert(denom.to_string(), v);
        Ok(v)
    }

    /// The send restrictions every movement of a stablecoin obeys: the feature it uses is not
    /// paused for the denom and neither party is frozen. Other denoms (the native gas coin) are
    /// never restricted, so fees can always be paid.
    async fn check_restrictions<S: StateRead + Sync + ?Sized>(&mut self, s: &S, gas: &GasMeter, e: &Effect<'_>) -> Result<(), TxError> {
        if !e.coin.is_stablecoin() {
            return Ok(());
        }
        if e.checks.pause {
            let paused = match self.paused.get(&e.coin.denom) {
                Some(p) => *p,
                None => {
                    let p = s.paused_features(gas, &e.coin.denom).await?;
                    self.paused.insert(e.coin.denom.clone(), p);
                    p
                }
            };
            if paused.contains(e.feature) {
                return Err(match e.feature {
                    crate::Feature::Transfer => BankError::SendDisabled(e.coin.denom.clone()),
                    f => BankError::FeaturePaused { denom: e.coin.denom.clone(), feature: f.name() },
                }
                .into());
            }
        }
        let from = e.from.filter(|_| e.checks.frozen_from);
        let to = e.to.filter(|_| e.checks.frozen_to);
        for a in from.into_iter().chain(to) {
            let frozen = match self.frozen.get(a) {
                Some(f) => *f,
                None => {
                    let f = s.is_frozen(gas, a).await?;
                    self.frozen.insert(*a, f);
                    f
                }
            };
            if frozen {
                return Err(BankError::AddressFrozen(a.to_bech32()).into());
            }
        }
        Ok(())
    }
}

/// Writes the balances of `addr`; an address that holds nothing has no record. Private: a
/// balance changes only through [`BankWrite::transfer`].
fn write_balances<S: StateWrite + ?Sized>(s: &mut S, gas: &GasMeter, addr: &Address, balances: &Balances) -> Result<(), TxError> {
    let key = state_key::balances(addr);
    if balances.is_empty() {
        store::delete(s, gas, key)
    } else {
        store::put(s, gas, key, balances.encode()?)
    }
}

/// Writes of bank state.
pub trait BankWrite: StateWrite + BankRead {
    /// The transfer chokepoint, the one function through which any balance changes: sends,
    /// multi-sends, fee payment, mint, burn, genesis (and the ERC-20 precompile). Computes every
    /// leg in order with checked arithmetic (send restrictions, debits, credits, supply) before
    /// writing anything, so on error nothing is written by this call; then creates the
    /// accounts of new recipients, writes, and appends the Cosmos SDK's events
    /// (`coin_spent`/`coin_received`/`transfer`, `coinbase`, `burn`), one set per run of
    /// consecutive legs between the same parties.
    fn transfer(&mut self, gas: &GasMeter, legs: Vec<Leg>, events: &mut Vec<Event>) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        self.transfer_into(gas, legs, Some(events))
    }

    /// [`BankWrite::transfer`], with the events appended to `events` when there is a list to
    /// take them: a caller whose events are discarded (admission's fee payment) passes `None`
    /// and no event is built. The same reads, writes and gas either way.
    fn transfer_into(&mut self, gas: &GasMeter, legs: Vec<Leg>, events: Option<&mut Vec<Event>>) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let mut ledger = Ledger::default();
            for leg in &legs {
                let e = leg.effect();
                ledger.check_restrictions(self, gas, &e).await?;
                let c = e.coin;
                if let Some(from) = e.from {
                    let have = ledger.balance(self, gas, from, &c.denom).await?;
                    let left = have
                        .checked_sub(c.amount)
                        .map_err(|_| SdkError::InsufficientFunds(format!("spendable balance {have}{} is smaller than {c}", c.denom)))?;
                    ledger.set(from, &c.denom, left);
                }
                if let Some(to) = e.to {
                    let have = ledger.balance(self, gas, to, &c.denom).await?;
                    let new = have.checked_add(c.amount).map_err(|_| internal("balance overflow"))?;
                    ledger.set(to, &c.denom, new);
                }
                match (e.from, e.to) {
                    (None, _) => {
                        let supply = ledger.supply(self, gas, &c.denom).await?;
                        let supply = supply.checked_add(c.amount).map_err(|_| internal("supply overflow"))?;
                        ledger.supplies.insert(c.denom.clone(), supply);
                    }
                    (_, None) => {
                        let supply = ledger.supply(self, gas, &c.denom).await?;
                        let supply = supply.checked_sub(c.amount).map_err(|_| internal("supply underflow"))?;
                        ledger.supplies.insert(c.denom.clone(), supply);
                    }
                    _ => {}
                }
            }
            // Everything computed: a recipient that has never held anything gets an account
            // now, so it can sign; then the writes.
            for leg in &legs {
                if let Some(to) = leg.effect().to {
                    crate::deps::AccountKeeper::ensure_account_exists(self, gas, to).await?;
                }
            }
            for addr in &ledger.moved {
                if let Some(b) = ledger.balances.get(addr) {
                    write_balances(self, gas, addr, &b.balances)?;
                }
            }
            for (denom, supply) in &ledger.supplies {
                store::put(self, gas, state_key::supply(denom), supply.to_be_bytes().to_vec())?;
            }
            if let Some(events) = events {
                emit_events(&legs, events);
            }
            Ok(())
        }
    }

    /// Moves denoms outside compliance's scope (the native coin: fees, gas money); a
    /// stablecoin among `coins` is refused before anything moves. The events go to `events`
    /// when given (see [`BankWrite::transfer_into`]).
    fn transfer_plain(
        &mut self,
        gas: &GasMeter,
        from: &Address,
        to: &Address,
        coins: &[Coin],
        events: Option<&mut Vec<Event>>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        async move {
            let legs = coins.iter().map(|c| PlainLeg::new(from, to, c).map(Leg::Plain)).collect::<Result<Vec<_>, _>>()?;
            self.transfer_into(gas, legs, events).await
        }
    }

    /// Creates a stablecoin denom for its issuer: the record and the issuer index. The issuer
    /// never changes afterwards.
    fn create_denom(&mut self, gas: &GasMeter, new: NewDenom, display: &str, decimals: u32) -> Result<DenomRecord, TxError> {
        let rec = DenomRecord { denom: new.denom, display: display.to_string(), issuer: new.issuer.to_bech32(), decimals };
        store::put_proto(self, gas, state_key::denom(&rec.denom), &rec)?;
        store::put(self, gas, state_key::issuer(&new.issuer), rec.denom.as_bytes().to_vec())?;
        Ok(rec)
    }

    /// The issuer creates `amount` of its denom in `to`'s balance, through the chokepoint, and
    /// appends the `mint` audit row (subject the issuer, counterparty `to`). On error neither
    /// is written.
    #[allow(clippy::too_many_arguments)]
    fn mint(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Issuer,
        to: &Address,
        amount: Amount,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        issue(self, gas, block, tx_hash, issuer, None, Some(*to), amount, &[], events)
    }

    /// [`BankWrite::mint`] by one of the issuer's minters (the stablecoin module checked its
    /// role and allowance): the `mint` audit row names it (`minter` in the metadata).
    #[allow(clippy::too_many_arguments)]
    fn mint_by(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Issuer,
        minter: &Address,
        to: &Address,
        amount: Amount,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        let meta = [("minter", minter.to_bech32())];
        async move { issue(self, gas, block, tx_hash, issuer, None, Some(*to), amount, &meta, events).await }
    }

    /// The issuer destroys `amount` of its denom from its own balance, through the chokepoint,
    /// and appends the `burn` audit row (subject and counterparty the issuer). On error neither
    /// is written.
    fn burn(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Issuer,
        amount: Amount,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        issue(self, gas, block, tx_hash, issuer, Some(issuer.address), None, amount, &[], events)
    }

    /// A seizer of the issuer's denom moves `amount` from `from` (any holder, frozen included)
    /// to `to` (checked by the caller: it passes the KYC gate) through the chokepoint, supply
    /// unchanged, and appends the `seize` audit row (subject the holder seized from,
    /// counterparty the recipient; `seizer`, `evidence_ref`, `memo` in the metadata). On error
    /// neither is written.
    #[allow(clippy::too_many_arguments)]
    fn seize(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Issuer,
        seizer: &Address,
        from: &Address,
        to: &Address,
        amount: Amount,
        evidence_ref: &str,
        memo: &str,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        let coin = Coin::new(issuer.denom.as_str(), amount);
        let entry = AuditEntry {
            tx_type: "seize".into(),
            subject: from.to_bech32(),
            counterparty: to.to_bech32(),
            amount: Some(pb_coin(&coin)),
            tx_hash: tx_hash.to_string(),
            metadata: [("seizer", seizer.to_bech32()), ("evidence_ref", evidence_ref.to_string()), ("memo", memo.to_string())]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            ..Default::default()
        };
        let leg = Leg::Seize(SeizeLeg { from: *from, to: *to, coin });
        async move {
            self.transfer(gas, vec![leg], events).await?;
            self.append_audit(gas, block, entry).await.map(|_| ())
        }
    }

    /// The holder moves `coin` into the redemption escrow for request `id` (the stablecoin
    /// module checked the holder passes the KYC gate), through the chokepoint (refused while
    /// REDEEM is paused or the holder is frozen), and appends the `redemption_request` audit
    /// row (subject the holder, counterparty the escrow; `redemption_id`, `payout_ref`,
    /// `deadline` in the metadata). On error neither is written.
    #[allow(clippy::too_many_arguments)]
    fn redemption_request(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        holder: &Address,
        coin: &Coin,
        id: u64,
        payout_ref: &str,
        deadline: &str,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        let escrow = crate::redemption_escrow();
        let meta = [("redemption_id", id.to_string()), ("payout_ref", payout_ref.to_string()), ("deadline", deadline.to_string())];
        let entry = redemption_entry("redemption_request", holder, &escrow, coin, tx_hash, &meta);
        let leg = Leg::Redeem(RedeemLeg { from: Some(*holder), to: Some(escrow), coin: coin.clone(), step: RedeemStep::Request });
        async move {
            self.transfer(gas, vec![leg], events).await?;
            self.append_audit(gas, block, entry).await.map(|_| ())
        }
    }

    /// Closes redemption `id`, for the issuer (or a redeemer): `Paid` burns its escrow (`amount`
    /// of the issuer's denom) and appends `redemption_paid` (subject the holder, counterparty the
    /// issuer; `redemption_id`, `redeemer`, `payment_ref`); `Rejected` returns the escrow to the
    /// holder and appends `redemption_rejected` (counterparty the escrow; `reason`). Through the
    /// chokepoint; on error nothing is written.
    #[allow(clippy::too_many_arguments)]
    fn redemption_closed(
        &mut self,
        gas: &GasMeter,
        block: &BlockCtx,
        tx_hash: &str,
        issuer: &Issuer,
        redeemer: &Address,
        holder: &Address,
        amount: Amount,
        id: u64,
        outcome: RedemptionOutcome<'_>,
        events: &mut Vec<Event>,
    ) -> impl Future<Output = Result<(), TxError>> + Send
    where
        Self: Sync + Send,
    {
        let escrow = crate::redemption_escrow();
        let coin = Coin::new(issuer.denom.as_str(), amount);
        let (tx_type, counterparty, to, (key, text)) = match outcome {
            RedemptionOutcome::Paid { payment_ref } => ("redemption_paid", issuer.address, None, ("payment_ref", payment_ref)),
            RedemptionOutcome::Rejected { reason } => ("redemption_rejected", escrow, Some(*holder), ("reason", reason)),
        };
        let meta = [("redemption_id", id.to_string()), ("redeemer", redeemer.to_bech32()), (key, text.to_string())];
        let entry = redemption_entry(tx_type, holder, &counterparty, &coin, tx_hash, &meta);
        let leg = Leg::Redeem(RedeemLeg { from: Some(escrow), to, coin, step: RedeemStep::Close });
        async move {
            self.transfer(gas, vec![leg], events).await?;
            self.append_audit(gas, block, entry).await.map(|_| ())
        }
    }

    /// Pauses or resumes every feature of `denom`.
    fn set_send_paused(&mut self, gas: &GasMeter, denom: &str, paused: bool) -> Result<(), TxError> {
        self.set_paused_features(gas, denom, if paused { crate::Features::ALL } else { crate::Features::NONE })
    }

    /// Sets the paused features of `denom` (none: the record is removed).
    fn set_paused_features(&mut self, gas: &GasMeter, denom: &str, features: crate::Features) -> Result<(), TxError> {
        match features.encode() {
            Some(v) => store::put(self, gas, state_key::paused(denom), v),
            None => store::delete(self, gas, state_key::paused(denom)),
        }
    }

    /// Freezes or unfreezes `addr` for stablecoins.
    fn set_frozen(&mut self, gas: &GasMeter, addr: &Address, frozen: bool) -> Result<(), TxError> {
        if frozen {
            store::put(self, gas, state_key::frozen(addr), vec![1])
        } else {
            store::delete(self, gas, state_key::frozen(addr))
        }
    }
}

impl<T: StateWrite + ?Sized> BankWrite for T {}

/// How a redemption closes ([`BankWrite::redemption_closed`]).
#[derive(Debug, Clone, Copy)]
pub enum RedemptionOutcome<'a> {
    /// The issuer paid: the escrow is burned.
    Paid {
        /// The payment's reference.
        payment_ref: &'a str,
    },
    /// Refused: the escrow goes back to the holder.
    Rejected {
        /// Why.
        reason: &'a str,
    },
}

/// The audit row of a redemption step.
fn redemption_entry(tx_type: &str, subject: &Address, counterparty: &Address, coin: &Coin, tx_hash: &str, meta: &[(&str, String)]) -> AuditEntry {
    AuditEntry {
        tx_type: tx_type.into(),
        subject: subject.to_bech32(),
        counterparty: counterparty.to_bech32(),
        amount: Some(pb_coin(coin)),
        tx_hash: tx_hash.to_string(),
        metadata: meta.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect(),
        ..Default::default()
    }
}

/// A mint (`to` only) or burn (`from` only) of the issuer's denom: one issuance leg through
/// the chokepoint, then its audit row (subject the issuer, counterparty the account).
#[allow(clippy::too_many_arguments)]
async fn issue<S: StateWrite + Sync + Send + ?Sized>(
    s: &mut S,
    gas: &GasMeter,
    block: &BlockCtx,
    tx_hash: &str,
    issuer: &Issuer,
    from: Option<Address>,
    to: Option<Address>,
    amount: Amount,
    metadata: &[(&str, String)],
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let coin = Coin::new(issuer.denom.as_str(), amount);
    let (tx_type, account) = match (from, to) {
        (None, Some(to)) => ("mint", to),
        _ => ("burn", issuer.address),
    };
    let entry = AuditEntry {
        tx_type: tx_type.into(),
        subject: issuer.address.to_bech32(),
        counterparty: account.to_bech32(),
        amount: Some(pb_coin(&coin)),
        tx_hash: tx_hash.to_string(),
        metadata: metadata.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect(),
        ..Default::default()
    };
    s.transfer(gas, vec![Leg::Issue(IssueLeg { from, to, coin })], events).await?;
    s.append_audit(gas, block, entry).await.map(|_| ())
}

/// One set of events per run of consecutive legs of the same kind between the same parties,
/// amounts joined as the SDK renders coins (`1alantau,5hkd.demo`).
fn emit_events(legs: &[Leg], events: &mut Vec<Event>) {
    let mut i = 0;
    while let Some(first) = legs.get(i) {
        let e = first.effect();
        let mut coins = vec![e.coin.clone()];
        let mut j = i.saturating_add(1);
        while let Some(next) = legs.get(j) {
            let n = next.effect();
            if n.from != e.from || n.to != e.to {
                break;
            }
            coins.push(n.coin.clone());
            j = j.saturating_add(1);
        }
        let amount = coins_to_string(&coins);
        match (e.from, e.to) {
            (Some(from), Some(to)) => {
                events.push(event::coin_spent(from, &amount));
                events.push(event::coin_received(to, &amount));
                events.push(event::transfer(from, to, &amount));
            }
            (None, Some(to)) => {
                events.push(event::coinbase(to, &amount));
                events.push(event::coin_received(to, &amount));
            }
            (Some(from), None) => {
                events.push(event::coin_spent(from, &amount));
                events.push(event::burn(from, &amount));
            }
            (None, None) => {}
        }
        i = j;
    }
}

/// The migration to state version 2: every address's version-1 balance keys
/// (`bank/bal/<address>/<denom>`) become its one record (`bank/balances/<address>`), and the
/// old keys go. Reads the whole prefix once (an upgrade block's work), in key order, so the
/// records are written in address order.
pub(crate) async fn migrate_balances_to_records<S: StateWrite + Send + Sync + ?Sized>(state: &mut S, gas: &GasMeter) -> Result<(), TxError> {
    let prefix = state_key::V1_BALANCE_PREFIX;
    let mut old: Vec<(String, Vec<u8>)> = Vec::new();
    {
        let mut stream = std::pin::pin!(state.prefix_raw(prefix));
        while let Some(item) = stream.next().await {
            old.push(item.map_err(|e| store::read_failed(prefix, e))?);
        }
    }
    let mut records: std::collections::BTreeMap<String, Balances> = std::collections::BTreeMap::new();
    for (key, value) in &old {
        let (hex, denom) = key.strip_prefix(prefix).and_then(|rest| rest.split_once('/')).ok_or_else(|| internal(format!("corrupt balance key {key}")))?;
        records.entry(hex.to_string()).or_default().set(denom, decode_amount(value)?);
    }
    for (key, _) in old {
        store::delete(state, gas, key)?;
    }
    for (hex, balances) in records.into_iter().filter(|(_, b)| !b.is_empty()) {
        store::put(state, gas, format!("{}{hex}", state_key::BALANCES_PREFIX), balances.encode()?)?;
    }
    Ok(())
}
