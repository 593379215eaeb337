//! `lantaud tx|query` for the registries: kyc, stablecoin, erc20, reserve, and the compliance
//! params. Each transaction command builds one message and hands it to the shared signing and
//! confirmation path (`send_tx`); each query prints the node's JSON (`--output json`) or a
//! short human rendering.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Subcommand;
use lantau_client::{pb_coin, to_any, RestClient};
use lantau_proto::chain::{kyc::v1 as kpb, reserve::v1 as rpb, stablecoin::v1 as spb};
use serde_json::{json, Value};

use super::{print, resolve_address, send_tx, NodeArgs, Output, TxArgs};

/// Parses a level: `LEVEL_RETAIL_BASIC`, `retail_basic` or `1`.
fn parse_level(s: &str) -> anyhow::Result<i32> {
    if let Ok(n) = s.parse::<i32>() {
        return Ok(n);
    }
    kpb::Level::from_str_name(&enum_name(s, "LEVEL_"))
        .map(|l| l as i32)
        .with_context(|| format!("unknown level {s:?}: retail_basic, retail_plus, professional, institutional or licensed_issuer"))
}

/// The protobuf enum name a user means: `retail_basic` or `LEVEL_RETAIL_BASIC` with prefix
/// `LEVEL_` both give `LEVEL_RETAIL_BASIC`.
pub(super) fn enum_name(s: &str, prefix: &str) -> String {
    let upper = s.to_ascii_uppercase();
    if upper.starts_with(prefix) {
        upper
    } else {
        format!("{prefix}{upper}")
    }
}

/// Why an address is acted against, and the document behind it.
#[derive(Debug, clap::Args, Clone)]
pub(super) struct ReasonArgs {
    /// Why.
    #[arg(long, default_value = "")]
    pub(super) reason: String,
    /// The source document.
    #[arg(long, default_value = "")]
    pub(super) evidence_ref: String,
}

fn read_json_file<T: serde::de::DeserializeOwned>(path: &PathBuf) -> anyhow::Result<T> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value = serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))?;
    // Accept both the bare params and the query's `{"params": ...}` answer.
    let v = v.get("params").cloned().unwrap_or(v);
    serde_json::from_value(v).with_context(|| format!("{} does not hold valid params", path.display()))
}

// === tx ===

/// The arguments of `tx stablecoin pause` and `unpause`.
#[derive(Debug, clap::Args)]
pub(super) struct PauseArgs {
    /// Key name of the issuer (or a pauser of the denom).
    from: String,
    /// The denom (default: the signer's own).
    #[arg(long, default_value = "")]
    denom: String,
    /// Features, comma-separated: TRANSFER, MINT, BURN, SEIZE, REDEEM (default: all).
    #[arg(long, value_delimiter = ',')]
    features: Vec<String>,
    #[command(flatten)]
    tx: TxArgs,
}

/// An identity as a registrar enrols or updates it.
#[derive(Debug, clap::Args)]
pub(super) struct IdentityArgs {
    /// Key name of the registrar.
    from: String,
    /// The identity's address (or key name).
    address: String,
    /// Level: retail_basic, retail_plus, professional, institutional, licensed_issuer.
    level: String,
    /// VASP identifier.
    #[arg(long, default_value = "")]
    vasp: String,
    /// IVMS 101 off-chain reference.
    #[arg(long = "ivms-ref", default_value = "")]
    ivms_ref: String,
    /// When the identity lapses (RFC 3339, e.g. 2027-06-30T00:00:00Z): from then on the KYC
    /// gate refuses it until a registrar renews it. Without it: never.
    #[arg(long = "expires-at", value_name = "TIME")]
    expires_at: Option<String>,
    #[command(flatten)]
    tx: TxArgs,
}

fn parse_expiry(t: Option<&str>) -> anyhow::Result<Option<lantau_proto::Timestamp>> {
    t.map(|t| {
        let at = time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
            .map_err(|e| anyhow::anyhow!("--expires-at {t}: not an RFC 3339 time ({e})"))?;
        Ok(lantau_proto::timestamp(at))
    })
    .transpose()
}

/// KYC transactions.
#[derive(Debug, Subcommand)]
pub(super) enum KycTx {
    /// Enrol an identity (signed by a registrar).
    Enroll(IdentityArgs),
    /// Replace level, VASP and reference of an identity (signed by a registrar).
    Update(IdentityArgs),
    /// Blacklist one address (signed by the compliance authority).
    Blacklist {
        /// Key name of the compliance authority.
        from: String,
        /// The address.
        address: String,
        #[command(flatten)]
        why: ReasonArgs,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace the KYC params (signed by governance) with a JSON file: the answer of
    /// `query kyc params --output json`, edited.
    UpdateParams {
        /// Key name of the governance authority.
        from: String,
        /// JSON file.
        file: PathBuf,
        #[command(flatten)]
        tx: TxArgs,
    },
}

/// Stablecoin transactions.
#[derive(Debug, Subcommand)]
pub(super) enum StablecoinTx {
    /// Whitelist an issuer and create its denom (signed by governance).
    CreateDenom {
        /// Key name of the governance authority.
        from: String,
        /// The issuer's address.
        issuer: String,
        /// The denom, hkd.<name>.
        denom: String,
        /// Display name.
        #[arg(long, default_value = "HKD")]
        display: String,
        /// Decimals (must be 2).
        #[arg(long, default_value_t = 2)]
        decimals: u32,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Mint coins of the issuer's denom: `mint <issuer-key> <recipient> 1000hkd.demo`.
    Mint {
        /// Key name of the issuer.
        from: String,
        /// Recipient.
        recipient: String,
        /// Amount with denom.
        amount: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Burn coins from the issuer's own balance.
    Burn {
        /// Key name of the issuer.
        from: String,
        /// Amount with denom.
        amount: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Pause features of a denom (every feature by default: transfers, mint, burn, seize,
    /// redeem).
    Pause(PauseArgs),
    /// Lift the pause of features (all by default).
    Unpause(PauseArgs),
    /// Grant a role of the issuer's denom (or replace the grant): minter (with
    /// --allowance), pauser, seizer, redeemer.
    SetRole {
        /// Key name of the issuer.
        from: String,
        /// minter, pauser, seizer or redeemer.
        role: String,
        /// Who gets it (address or key name).
        address: String,
        /// The denom (default: the signer's own, read from the chain).
        #[arg(long, default_value = "")]
        denom: String,
        /// A minter's allowance, e.g. `5000.00hkd.demo`.
        #[arg(long)]
        allowance: Option<String>,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Revoke a role grant.
    RevokeRole {
        /// Key name of the issuer.
        from: String,
        /// minter, pauser, seizer or redeemer.
        role: String,
        /// The holder (address or key name).
        address: String,
        /// The denom (default: the signer's own, read from the chain).
        #[arg(long, default_value = "")]
        denom: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Seize coins from any holder (frozen or blacklisted included) to a recipient that passes
    /// the KYC gate, under a court order (signed by a seizer of the denom, or its issuer).
    Seize {
        /// Key name of the seizer.
        from: String,
        /// The holder seized from (address or key name).
        holder: String,
        /// The recipient (address or key name).
        to: String,
        /// Amount with denom, e.g. `1000.00hkd.demo`.
        amount: String,
        /// The court order or other evidence (required).
        #[arg(long = "evidence-ref")]
        evidence_ref: String,
        /// Why (required; the message's `memo`, not the transaction's).
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Request the redemption of coins for fiat: the amount moves into the module escrow until
    /// the issuer settles (pays) or rejects the request, within the redemption deadline.
    RequestRedemption {
        /// Key name of the holder.
        from: String,
        /// Amount with denom, e.g. `250.00hkd.demo`.
        amount: String,
        /// Where the fiat goes (a bank account reference).
        #[arg(long = "payout-ref")]
        payout_ref: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Settle an open redemption (the fiat is paid): its escrow is burned. Signed by the issuer
    /// or a redeemer of the denom.
    SettleRedemption {
        /// Key name of the issuer or redeemer.
        from: String,
        /// The redemption id.
        id: u64,
        /// The payment's reference.
        #[arg(long = "payment-ref")]
        payment_ref: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Reject an open redemption: its escrow goes back to the holder. Signed by the issuer or a
    /// redeemer of the denom.
    RejectRedemption {
        /// Key name of the issuer or redeemer.
        from: String,
        /// The redemption id.
        id: u64,
        /// Why (required).
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace the stablecoin params (signed by governance) with a JSON file: the answer of
    /// `query stablecoin params --output json`, edited.
    UpdateParams {
        /// Key name of the governance authority.
        from: String,
        /// JSON file.
        file: PathBuf,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Freeze an address (signed by the compliance authority).
    Freeze {
        /// Key name of the compliance authority.
        from: String,
        /// The address.
        address: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Unfreeze an address (signed by the compliance authority).
    Unfreeze {
        /// Key name of the compliance authority.
        from: String,
        /// The address.
        address: String,
        #[command(flatten)]
        tx: TxArgs,
    },
}

/// Reserve transactions.
#[derive(Debug, Subcommand)]
pub(super) enum ReserveTx {
    /// Submit a reserve attestation (signed by the issuer).
    SubmitAttestation {
        /// Key name of the issuer.
        from: String,
        /// Circulation, e.g. 300000000hkd.demo.
        circulation: String,
        /// Reserve market value, e.g. 300500000hkd.demo.
        reserve_market_value: String,
        /// The day the reserve was measured (RFC 3339).
        #[arg(long)]
        random_day: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Co-sign an attestation (signed by a registered auditor).
    Cosign {
        /// Key name of the auditor.
        from: String,
        /// Attestation id.
        id: u64,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace the reserve params (registered auditors) from a JSON file (signed by governance).
    UpdateParams {
        /// Key name of the governance authority.
        from: String,
        /// JSON file.
        file: PathBuf,
        #[command(flatten)]
        tx: TxArgs,
    },
}

/// Software upgrade transactions (signed by the governance authority).
#[derive(Debug, Subcommand)]
pub(super) enum UpgradeTx {
    /// Schedule a software upgrade at a height (replaces a pending one).
    Schedule {
        /// Key name of the governance authority.
        from: String,
        /// The upgrade's name: the handler the new release carries.
        name: String,
        /// The height at which every node stops for it (or applies it).
        #[arg(long)]
        height: i64,
        /// Free-form information for operators (the release, its checksum).
        #[arg(long, default_value = "")]
        info: String,
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Cancel the pending upgrade.
    Cancel {
        /// Key name of the governance authority.
        from: String,
        #[command(flatten)]
        tx: TxArgs,
    },
}

pub(super) async fn upgrade_tx(home: &std::path::Path, out: Output, t: UpgradeTx) -> anyhow::Result<()> {
    use cosmos_sdk_proto::cosmos::upgrade::v1beta1 as upb;
    let (from, tx, msg) = match t {
        UpgradeTx::Schedule { from, name, height, info, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            #[allow(deprecated)]
            let plan = upb::Plan { name, height, info, time: None, upgraded_client_state: None };
            let m = upb::MsgSoftwareUpgrade { authority: key.address().to_bech32(), plan: Some(plan) };
            (key, tx, to_any(&m))
        }
        UpgradeTx::Cancel { from, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = upb::MsgCancelUpgrade { authority: key.address().to_bech32() };
            (key, tx, to_any(&m))
        }
    };
    send_tx(out, &tx, &from, vec![msg]).await
}

fn coin(s: &str) -> anyhow::Result<cosmos_sdk_proto::cosmos::base::v1beta1::Coin> {
    Ok(pb_coin(&super::amount::parse_coin(s)?))
}

/// The denom given, or the one `issuer` issues (asked of the node).
async fn issuer_denom(tx: &TxArgs, issuer: &lantau_primitives::Address, denom: String) -> anyhow::Result<String> {
    if !denom.is_empty() {
        return Ok(denom);
    }
    let v = lantau_client::RestClient::new(tx.node.url()).query("/chain/stablecoin/v1/denoms").await?;
    v["denoms"]
        .as_array()
        .and_then(|ds| ds.iter().find(|d| d["issuer"] == issuer.to_bech32()))
        .and_then(|d| d["denom"].as_str())
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("{issuer} issues no denom: pass --denom"))
}

pub(super) async fn kyc_tx(home: &std::path::Path, out: Output, t: KycTx) -> anyhow::Result<()> {
    let (from, tx, msg) = match t {
        KycTx::Enroll(a) => {
            let key = a.tx.kr.open(home)?.secret(&a.from)?;
            let m = kpb::MsgEnrollIdentity {
                registrar: key.address().to_bech32(),
                address: resolve_address(home, &a.address)?.to_bech32(),
                level: parse_level(&a.level)?,
                vasp_identifier: a.vasp,
                ivms101_off_chain_ref: a.ivms_ref,
                expires_at: parse_expiry(a.expires_at.as_deref())?,
            };
            (key, a.tx, to_any(&m))
        }
        KycTx::Update(a) => {
            let key = a.tx.kr.open(home)?.secret(&a.from)?;
            let m = kpb::MsgUpdateIdentity {
                registrar: key.address().to_bech32(),
                address: resolve_address(home, &a.address)?.to_bech32(),
                level: parse_level(&a.level)?,
                vasp_identifier: a.vasp,
                ivms101_off_chain_ref: a.ivms_ref,
                expires_at: parse_expiry(a.expires_at.as_deref())?,
            };
            (key, a.tx, to_any(&m))
        }
        KycTx::Blacklist { from, address, why: ReasonArgs { reason, evidence_ref }, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m =
                kpb::MsgBlacklistAddress { authority: key.address().to_bech32(), address: resolve_address(home, &address)?.to_bech32(), reason, evidence_ref };
            (key, tx, to_any(&m))
        }
        KycTx::UpdateParams { from, file, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = kpb::MsgUpdateParams { authority: key.address().to_bech32(), params: Some(read_json_file(&file)?) };
            (key, tx, to_any(&m))
        }
    };
    send_tx(out, &tx, &from, vec![msg]).await
}

pub(super) async fn stablecoin_tx(home: &std::path::Path, out: Output, t: StablecoinTx) -> anyhow::Result<()> {
    let (from, tx, msg) = match t {
        StablecoinTx::CreateDenom { from, issuer, denom, display, decimals, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgCreateDenom { authority: key.address().to_bech32(), issuer: resolve_address(home, &issuer)?.to_bech32(), denom, display, decimals };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Mint { from, recipient, amount, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgMint { issuer: key.address().to_bech32(), recipient: resolve_address(home, &recipient)?.to_bech32(), amount: Some(coin(&amount)?) };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Burn { from, amount, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgBurn { issuer: key.address().to_bech32(), amount: Some(coin(&amount)?) };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Pause(PauseArgs { from, denom, features, tx }) => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgPause { authority: key.address().to_bech32(), denom, features };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Unpause(PauseArgs { from, denom, features, tx }) => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgUnpause { authority: key.address().to_bech32(), denom, features };
            (key, tx, to_any(&m))
        }
        StablecoinTx::SetRole { from, role, address, denom, allowance, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let denom = issuer_denom(&tx, &key.address(), denom).await?;
            let allowance = allowance.as_deref().map(coin).transpose()?;
            let m = spb::MsgSetRole { issuer: key.address().to_bech32(), denom, role, address: resolve_address(home, &address)?.to_bech32(), allowance };
            (key, tx, to_any(&m))
        }
        StablecoinTx::RevokeRole { from, role, address, denom, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let denom = issuer_denom(&tx, &key.address(), denom).await?;
            let m = spb::MsgRevokeRole { issuer: key.address().to_bech32(), denom, role, address: resolve_address(home, &address)?.to_bech32() };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Seize { from, holder, to, amount, evidence_ref, reason: memo, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let c = super::amount::parse_coin(&amount)?;
            let m = spb::MsgSeize {
                seizer: key.address().to_bech32(),
                denom: c.denom.to_string(),
                from: resolve_address(home, &holder)?.to_bech32(),
                to: resolve_address(home, &to)?.to_bech32(),
                amount: c.amount.to_string(),
                evidence_ref,
                memo,
            };
            (key, tx, to_any(&m))
        }
        StablecoinTx::RequestRedemption { from, amount, payout_ref, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let c = super::amount::parse_coin(&amount)?;
            let m = spb::MsgRequestRedemption { holder: key.address().to_bech32(), denom: c.denom.to_string(), amount: c.amount.to_string(), payout_ref };
            (key, tx, to_any(&m))
        }
        StablecoinTx::SettleRedemption { from, id, payment_ref, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgSettleRedemption { redeemer: key.address().to_bech32(), id, payment_ref };
            (key, tx, to_any(&m))
        }
        StablecoinTx::RejectRedemption { from, id, reason, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgRejectRedemption { redeemer: key.address().to_bech32(), id, reason };
            (key, tx, to_any(&m))
        }
        StablecoinTx::UpdateParams { from, file, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgUpdateParams { authority: key.address().to_bech32(), params: Some(read_json_file(&file)?) };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Freeze { from, address, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgFreeze { authority: key.address().to_bech32(), address: resolve_address(home, &address)?.to_bech32() };
            (key, tx, to_any(&m))
        }
        StablecoinTx::Unfreeze { from, address, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = spb::MsgUnfreeze { authority: key.address().to_bech32(), address: resolve_address(home, &address)?.to_bech32() };
            (key, tx, to_any(&m))
        }
    };
    send_tx(out, &tx, &from, vec![msg]).await
}

pub(super) async fn reserve_tx(home: &std::path::Path, out: Output, t: ReserveTx) -> anyhow::Result<()> {
    let (from, tx, msg) = match t {
        ReserveTx::SubmitAttestation { from, circulation, reserve_market_value, random_day, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let day: lantau_proto::Timestamp = serde_json::from_value(json!(random_day)).context("--random-day must be an RFC 3339 timestamp")?;
            let m = rpb::MsgSubmitAttestation {
                issuer: key.address().to_bech32(),
                circulation: Some(coin(&circulation)?),
                reserve_market_value: Some(coin(&reserve_market_value)?),
                random_day: Some(day),
            };
            (key, tx, to_any(&m))
        }
        ReserveTx::Cosign { from, id, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = rpb::MsgCosignAttestation { auditor: key.address().to_bech32(), attestation_id: id };
            (key, tx, to_any(&m))
        }
        ReserveTx::UpdateParams { from, file, tx } => {
            let key = tx.kr.open(home)?.secret(&from)?;
            let m = rpb::MsgUpdateParams { authority: key.address().to_bech32(), params: Some(read_json_file(&file)?) };
            (key, tx, to_any(&m))
        }
    };
    send_tx(out, &tx, &from, vec![msg]).await
}

// === query ===

/// KYC queries.
#[derive(Debug, Subcommand)]
pub(super) enum KycQuery {
    /// The identity record of an address (or key name).
    Identity {
        /// Address or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Level definitions and registrars.
    Params {
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// Stablecoin queries.
#[derive(Debug, Subcommand)]
pub(super) enum StablecoinQuery {
    /// Every stablecoin denom.
    Denoms {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// One denom with its pause state and supply.
    Denom {
        /// The denom.
        denom: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Whether an address is frozen.
    Frozen {
        /// Address or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The roles granted for a denom (minters with their allowances, pausers, seizers,
    /// redeemers).
    Roles {
        /// The denom.
        denom: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The stablecoin params (the redemption deadline).
    Params {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Redemption requests, oldest first, with their status now (OVERDUE past the deadline).
    Redemptions {
        /// Only this denom.
        #[arg(long)]
        denom: Option<String>,
        /// Only this status: REQUESTED, PAID, REJECTED or OVERDUE.
        #[arg(long)]
        status: Option<String>,
        /// Only this holder (address or key name).
        #[arg(long)]
        holder: Option<String>,
        /// Page size (default 100, at most 1000).
        #[arg(long)]
        limit: Option<u64>,
        /// The next_key of the previous page.
        #[arg(long = "page-key")]
        page_key: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// One redemption request.
    Redemption {
        /// The id.
        id: u64,
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// erc20 queries.
#[derive(Debug, Subcommand)]
pub(super) enum Erc20Query {
    /// Every token pair (denom ↔ ERC-20 address).
    TokenPairs {
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// Reserve queries.
#[derive(Debug, Subcommand)]
pub(super) enum ReserveQuery {
    /// The latest attestation of an issuer.
    Latest {
        /// Issuer address or key name.
        issuer: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The stablecoins an address holds, with their issuers' latest attestations.
    ForAddress {
        /// Address or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Registered auditors.
    Params {
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// Software upgrade queries.
#[derive(Debug, Subcommand)]
pub(super) enum UpgradeQuery {
    /// The scheduled upgrade (null when none).
    Plan {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The height at which an upgrade was applied (0 when never).
    Applied {
        /// The upgrade's name.
        name: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Each module's state version.
    ModuleVersions {
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// Runs a module query and prints it.
pub(super) async fn module_query(home: &std::path::Path, out: Output, q: ModuleQuery) -> anyhow::Result<()> {
    let mut flags_listing = false;
    let (node, path) = match q {
        ModuleQuery::Compliance(ComplianceQuery::SubRoles { parent, role, node }) => {
            return super::compliance::sub_roles(home, out, &parent, role, &node.url()).await;
        }
        ModuleQuery::Compliance(ComplianceQuery::SubRoleParent { address, node }) => {
            return super::compliance::sub_role_parent(home, out, &address, &node.url()).await;
        }
        ModuleQuery::Compliance(ComplianceQuery::AgentPolicy { parent, sub, node }) => {
            return super::compliance::agent_policy(home, out, &parent, &sub, &node.url()).await;
        }
        ModuleQuery::Kyc(KycQuery::Identity { address, node }) => (node, format!("/chain/kyc/v1/identity/{}", resolve_address(home, &address)?.to_bech32())),
        ModuleQuery::Kyc(KycQuery::Params { node }) => (node, "/chain/kyc/v1/params".to_string()),
        ModuleQuery::Stablecoin(StablecoinQuery::Denoms { node }) => (node, "/chain/stablecoin/v1/denoms".to_string()),
        ModuleQuery::Stablecoin(StablecoinQuery::Denom { denom, node }) => (node, format!("/chain/stablecoin/v1/denoms/{denom}")),
        ModuleQuery::Stablecoin(StablecoinQuery::Roles { denom, node }) => (node, format!("/chain/stablecoin/v1/roles/{denom}")),
        ModuleQuery::Stablecoin(StablecoinQuery::Params { node }) => (node, "/chain/stablecoin/v1/params".to_string()),
        ModuleQuery::Stablecoin(StablecoinQuery::Redemptions { denom, status, holder, limit, page_key, node }) => {
            let holder = holder.map(|h| resolve_address(home, &h).map(|a| a.to_bech32())).transpose()?;
            let q = query_string(&[
                ("denom", denom),
                ("status", status),
                ("holder", holder),
                ("pagination.limit", limit.map(|l| l.to_string())),
                ("pagination.key", page_key),
            ]);
            (node, format!("/chain/stablecoin/v1/redemptions{q}"))
        }
        ModuleQuery::Stablecoin(StablecoinQuery::Redemption { id, node }) => (node, format!("/chain/stablecoin/v1/redemptions/{id}")),
        ModuleQuery::Stablecoin(StablecoinQuery::Frozen { address, node }) => {
            (node, format!("/chain/stablecoin/v1/frozen/{}", resolve_address(home, &address)?.to_bech32()))
        }
        ModuleQuery::Erc20(Erc20Query::TokenPairs { node }) => (node, "/cosmos/evm/erc20/v1/token_pairs".to_string()),
        ModuleQuery::Reserve(ReserveQuery::Latest { issuer, node }) => {
            (node, format!("/chain/reserve/v1/attestations/{}/latest", resolve_address(home, &issuer)?.to_bech32()))
        }
        ModuleQuery::Reserve(ReserveQuery::ForAddress { address, node }) => {
            (node, format!("/chain/reserve/v1/reserve_for_address/{}", resolve_address(home, &address)?.to_bech32()))
        }
        ModuleQuery::Reserve(ReserveQuery::Params { node }) => (node, "/chain/reserve/v1/params".to_string()),
        ModuleQuery::Group(q) => super::group::query_path(home, q)?,
        ModuleQuery::Upgrade(UpgradeQuery::Plan { node }) => (node, "/cosmos/upgrade/v1beta1/current_plan".to_string()),
        ModuleQuery::Upgrade(UpgradeQuery::Applied { name, node }) => {
            anyhow::ensure!(!name.is_empty() && !name.contains('/'), "an upgrade name is non-empty and has no '/'");
            (node, format!("/cosmos/upgrade/v1beta1/applied_plan/{name}"))
        }
        ModuleQuery::Upgrade(UpgradeQuery::ModuleVersions { node }) => (node, "/cosmos/upgrade/v1beta1/module_versions".to_string()),
        ModuleQuery::Compliance(ComplianceQuery::Params { node }) => (node, "/chain/compliance/v1/params".to_string()),
        ModuleQuery::Compliance(ComplianceQuery::AuditLog { subject, tx_type, tx_hash, from, to, node }) => {
            let subject = subject.map(|s| resolve_address(home, &s).map(|a| a.to_bech32())).transpose()?;
            let q = query_string(&[("subject", subject), ("tx_type", tx_type), ("tx_hash", tx_hash), ("from", from), ("to", to)]);
            (node, format!("/chain/compliance/v1/audit_log{q}"))
        }
        ModuleQuery::Compliance(ComplianceQuery::Flags { vasp, status, tx_hash, from, to, node }) => {
            flags_listing = true;
            let status = status.map(|s| if s.parse::<i32>().is_ok() { s } else { enum_name(&s, "FLAG_STATUS_") });
            let q = query_string(&[("vasp", vasp), ("status", status), ("tx_hash", tx_hash), ("from", from), ("to", to)]);
            (node, format!("/chain/compliance/v1/flags{q}"))
        }
        ModuleQuery::Compliance(ComplianceQuery::Report { period_start, period_end, format, node }) => {
            let q = query_string(&[("period_start", period_start), ("period_end", period_end), ("format", format)]);
            (node, format!("/chain/compliance/v1/report{q}"))
        }
        ModuleQuery::Compliance(ComplianceQuery::TravelRule { tx_hash, node }) => (node, format!("/chain/compliance/v1/travel_rule/{tx_hash}")),
        ModuleQuery::Compliance(ComplianceQuery::Sanctions { node }) => (node, "/chain/compliance/v1/sanctions".to_string()),
        ModuleQuery::Compliance(ComplianceQuery::TxTrace { tx_hash, node }) => (node, format!("/chain/compliance/v1/tx_trace/{tx_hash}")),
    };
    let v = match RestClient::new(node.url()).query_opt(&path).await? {
        Some(v) => v,
        None => anyhow::bail!("not found: {path}"),
    };
    if flags_listing {
        print(out, v.clone(), || super::compliance::flags_table(&v));
    } else {
        print(out, v.clone(), || render(&v));
    }
    Ok(())
}

/// A compact human rendering: `key: value` lines, nested objects indented.
fn render(v: &Value) -> String {
    fn walk(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x {
                        Value::Object(_) | Value::Array(_) => {
                            out.push_str(&format!("{pad}{k}:\n"));
                            walk(x, indent + 2, out);
                        }
                        _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(x))),
                    }
                }
            }
            Value::Array(a) if a.is_empty() => out.push_str(&format!("{pad}(none)\n")),
            Value::Array(a) => {
                for x in a {
                    out.push_str(&format!("{pad}-\n"));
                    walk(x, indent + 2, out);
                }
            }
            x => out.push_str(&format!("{pad}{}\n", scalar(x))),
        }
    }
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            x => x.to_string(),
        }
    }
    let mut s = String::new();
    walk(v, 0, &mut s);
    s.trim_end().to_string()
}

/// Queries of the registries.
#[derive(Debug, Subcommand)]
pub(super) enum ModuleQuery {
    /// KYC queries.
    #[command(subcommand)]
    Kyc(KycQuery),
    /// Stablecoin queries.
    #[command(subcommand)]
    Stablecoin(StablecoinQuery),
    /// erc20 queries.
    #[command(subcommand)]
    Erc20(Erc20Query),
    /// Reserve queries.
    #[command(subcommand)]
    Reserve(ReserveQuery),
    /// Group account queries.
    #[command(subcommand)]
    Group(super::group::GroupQuery),
    /// Software upgrade queries.
    #[command(subcommand)]
    Upgrade(UpgradeQuery),
    /// Compliance queries.
    #[command(subcommand)]
    Compliance(ComplianceQuery),
}

/// Compliance queries.
#[derive(Debug, Subcommand)]
pub(super) enum ComplianceQuery {
    /// The compliance authority and the rules.
    Params {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The audit log (complete filtered set).
    AuditLog {
        /// Subject address or key name.
        #[arg(long)]
        subject: Option<String>,
        /// Exact tx_type (transfer, threshold_flag, ...).
        #[arg(long)]
        tx_type: Option<String>,
        /// Transaction hash (any case).
        #[arg(long)]
        tx_hash: Option<String>,
        /// Inclusive lower bound, RFC 3339.
        #[arg(long)]
        from: Option<String>,
        /// Exclusive upper bound, RFC 3339.
        #[arg(long)]
        to: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The flag queue.
    Flags {
        /// Exact VASP (omits every velocity flag).
        #[arg(long)]
        vasp: Option<String>,
        /// emitted, pending_officer, resolved_approved, resolved_blocked (or the full
        /// FLAG_STATUS_ name; omit for all).
        #[arg(long)]
        status: Option<String>,
        /// Transaction hash.
        #[arg(long)]
        tx_hash: Option<String>,
        /// Inclusive lower bound, RFC 3339.
        #[arg(long)]
        from: Option<String>,
        /// Exclusive upper bound, RFC 3339.
        #[arg(long)]
        to: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The compliance report.
    Report {
        /// Inclusive start, RFC 3339.
        #[arg(long)]
        period_start: Option<String>,
        /// Exclusive end, RFC 3339.
        #[arg(long)]
        period_end: Option<String>,
        /// Accepted and ignored.
        #[arg(long)]
        format: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The Travel Rule payload anchored for a transaction (lower-case hash).
    TravelRule {
        /// Transaction hash.
        tx_hash: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The sanctions set.
    Sanctions {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A parent's sub-role bindings (revoked ones included).
    SubRoles {
        /// The parent's address or key name.
        parent: String,
        /// reviewer, officer or agent (omit for all).
        #[arg(long)]
        role: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Whose sub-key an address is: a primary key only on the node's exact answer; anything
    /// else is unknown and the command fails (fail closed).
    SubRoleParent {
        /// Address or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// An agent's policy and stored window, with the remaining capacity computed.
    AgentPolicy {
        /// The parent's address or key name.
        parent: String,
        /// The agent's address or key name.
        sub: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The gate trace this node kept for a transaction.
    TxTrace {
        /// Transaction hash.
        tx_hash: String,
        #[command(flatten)]
        node: NodeArgs,
    },
}

fn query_string(pairs: &[(&str, Option<String>)]) -> String {
    let q: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", v.replace('%', "%25").replace('+', "%2B").replace('&', "%26").replace(' ', "%20"))))
        .collect();
    if q.is_empty() {
        String::new()
    } else {
        format!("?{}", q.join("&"))
    }
}

/// Renders a gate trace as a table a compliance reader can scan.
pub(super) fn trace_table(trace: &Value) -> String {
    let mut out = format!(
        "tx {}  accepted: {}\n{:<22} {:<9} {:<9} {:>7}  reason\n",
        trace["tx_hash"].as_str().unwrap_or(""),
        trace["accepted"],
        "gate",
        "status",
        "kind",
        "gas"
    );
    for r in trace["results"].as_array().into_iter().flatten() {
        let status = r["status"].as_str().unwrap_or("").trim_start_matches("DECORATOR_RESULT_");
        let kind = if r["blocking"] == true { "blocking" } else { "advisory" };
        out.push_str(&format!(
            "{:<22} {:<9} {:<9} {:>7}  {}\n",
            r["name"].as_str().unwrap_or(""),
            status,
            kind,
            r["gas_used"].as_str().unwrap_or("0"),
            r["reason"].as_str().unwrap_or("")
        ));
    }
    out.trim_end().to_string()
}
