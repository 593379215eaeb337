//! The node's home directory and the dev home that `lantaud start` creates when none exists.
//!
//! ```text
//! <home>/config/config.toml          listen addresses, block time, mempool bounds
//! <home>/config/genesis.json         CometBFT-layout genesis with our app_state
//! <home>/config/priv_validator_key.json   the embedded validator's ed25519 key
//! <home>/data/state/                 the store (JMT over RocksDB, crates/store): state, tx index, blocks
//! <home>/keyring-test/               dev keys (unencrypted test keyring)
//! <home>/dev-accounts.json           dev accounts with their keys and HD paths, like anvil prints
//! ```

use std::path::{Path, PathBuf};

use base64::Engine as _;
use lantau_app::bank::genesis::Balance;
use lantau_app::AppGenesis;
use lantau_crypto::{eth_hd_path, secret_key_from_mnemonic_at, Keyring, KeyringBackend};
use lantau_primitives::{Coin, NATIVE_DENOM};
use serde::{Deserialize, Serialize};

use crate::config::NodeConfig;
use crate::genesis::GenesisFile;

/// The well-known development mnemonic (the one anvil and Hardhat use): dev keys are public.
pub const DEV_MNEMONIC: &str = "test test test test test test test test test test test junk";

/// Named dev accounts, at HD indices 0.. of [`DEV_MNEMONIC`]. Later capabilities give these
/// names their roles (governance, compliance authority, issuer, registrar, auditor, customers,
/// the onboarding portal's faucet, which holds only native coin and no identity, and the issuer's
/// reviewer and officer, bound at genesis, for the reviewers' console).
pub const DEV_ACCOUNT_NAMES: [&str; 12] =
    ["governance", "compliance_authority", "issuer", "registrar", "auditor", "alice", "bob", "carol", "faucet", "reviewer", "officer", "treasury"];

/// Native coin each dev account starts with: 1,000,000 LANTAU.
pub const DEV_NATIVE_BALANCE: u128 = 1_000_000 * 1_000_000_000_000_000_000;

/// The dev chain's stablecoin.
pub const DEV_DENOM: &str = "hkd.demo";

/// `hkd.demo` each dev customer (alice, bob, carol) starts with: 1,000,000.00 HKD.
pub const DEV_HKD_BALANCE: u128 = 100_000_000;
/// The dev `treasury`'s minter allowance of `hkd.demo`: 50,000.00 (the genesis reserve leaves
/// 60,000.00 of headroom over circulation).
pub const DEV_MINTER_ALLOWANCE: u128 = 5_000_000;

/// VASP identifier of the dev issuer.
pub const DEV_ISSUER_VASP: &str = "VASP-LANTAU-DEMO-ISSUER";

/// VASP identifier of alice's VASP.
pub const DEV_ALICE_VASP: &str = "VASP-HARBOUR-EXCHANGE";

/// Default dev chain ids.
pub const DEV_CHAIN_ID: &str = "lantau-local-1";
/// Default dev EVM chain id.
pub const DEV_EVM_CHAIN_ID: u64 = 852;

/// One dev account, as written to `dev-accounts.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DevAccount {
    /// Role name.
    pub name: String,
    /// bech32 address.
    pub address: String,
    /// EIP-55 hex address.
    pub hex_address: String,
    /// The dev mnemonic, shared by all dev accounts. A wallet importing it derives account 0
    /// (`governance`) unless told this entry's `hd_path`.
    pub mnemonic: String,
    /// The BIP-44 path that derives this account's key from `mnemonic`: `m/44'/60'/0'/0/{index}`.
    pub hd_path: String,
    /// HD index under m/44'/60'/0'/0.
    pub index: u32,
    /// Private key, 0x-prefixed hex (import into MetaMask).
    pub private_key: String,
}

/// Paths inside a home.
#[derive(Debug, Clone)]
pub struct Home(pub PathBuf);

impl Home {
    /// `config/config.toml`.
    pub fn config(&self) -> PathBuf {
        self.0.join("config/config.toml")
    }
    /// `config/genesis.json`.
    pub fn genesis(&self) -> PathBuf {
        self.0.join("config/genesis.json")
    }
    /// `config/priv_validator_key.json`.
    pub fn validator_key(&self) -> PathBuf {
        self.0.join("config/priv_validator_key.json")
    }
    /// `data/state`.
    pub fn state(&self) -> PathBuf {
        self.0.join("data/state")
    }
    /// `keyring-test`.
    pub fn test_keyring(&self) -> PathBuf {
        self.0.join("keyring-test")
    }
    /// `keyring-file`.
    pub fn file_keyring(&self) -> PathBuf {
        self.0.join("keyring-file")
    }
    /// `dev-accounts.json`.
    pub fn dev_accounts(&self) -> PathBuf {
        self.0.join("dev-accounts.json")
    }
    /// True once `init` ran.
    pub fn is_initialized(&self) -> bool {
        self.genesis().exists()
    }
}

/// Options of `lantaud init`.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Cosmos chain id.
    pub chain_id: String,
    /// EVM chain id.
    pub evm_chain_id: u64,
    /// Moniker.
    pub moniker: String,
    /// Create the dev accounts and fund them.
    pub dev: bool,
    /// Extra addresses funded with native coin (benchmarks).
    pub extra_accounts: Vec<lantau_primitives::Address>,
    /// Genesis time (RFC 3339).
    pub genesis_time: String,
    /// The governance authority; the dev `governance` account when `dev`, required otherwise.
    pub governance: Option<lantau_primitives::Address>,
}

impl Default for InitOptions {
    fn default() -> Self {
        Self {
            chain_id: DEV_CHAIN_ID.into(),
            evm_chain_id: DEV_EVM_CHAIN_ID,
            moniker: "lantau-dev".into(),
            dev: true,
            extra_accounts: Vec::new(),
            genesis_time: "2026-01-01T00:00:00Z".into(),
            governance: None,
        }
    }
}

/// The dev account at `index` of the dev mnemonic.
pub fn dev_account(name: &str, index: u32) -> anyhow::Result<DevAccount> {
    let hd_path = eth_hd_path(index);
    let sk = secret_key_from_mnemonic_at(DEV_MNEMONIC, &hd_path)?;
    let addr = sk.address();
    Ok(DevAccount {
        name: name.to_string(),
        address: addr.to_bech32(),
        hex_address: addr.to_hex(),
        mnemonic: DEV_MNEMONIC.into(),
        hd_path,
        index,
        private_key: format!("0x{}", sk.to_hex()),
    })
}

/// Creates a home: config, validator key, genesis, and (dev) funded accounts in the test
/// keyring and `dev-accounts.json`. Fails if the home already has a genesis.
pub fn init_home(home: &Path, opts: &InitOptions) -> anyhow::Result<Vec<DevAccount>> {
    let h = Home(home.to_path_buf());
    anyhow::ensure!(!h.is_initialized(), "{} is already initialized", home.display());
    std::fs::create_dir_all(home.join("config"))?;
    std::fs::create_dir_all(home.join("data"))?;

    // A dev chain serves browser apps from any origin; a production home allows none until
    // its operator lists them.
    let cors_allowed_origins = if opts.dev { vec!["*".to_string()] } else { Vec::new() };
    let cfg = NodeConfig { moniker: opts.moniker.clone(), cors_allowed_origins, ..NodeConfig::default() };
    cfg.save(&h.config())?;
    write_validator_key(&h.validator_key())?;

    let mut accounts = Vec::new();
    if opts.dev {
        for (i, name) in DEV_ACCOUNT_NAMES.iter().enumerate() {
            accounts.push(dev_account(name, u32::try_from(i)?)?);
        }
    }
    let mut app_state = AppGenesis { evm_chain_id: opts.evm_chain_id, ..Default::default() };
    let funded = accounts.iter().map(|a| lantau_primitives::Address::from_bech32(&a.address)).collect::<Result<Vec<_>, _>>()?;
    for addr in funded.iter().copied().chain(opts.extra_accounts.iter().copied()) {
        app_state.auth.accounts.push(addr);
        app_state.bank.balances.push(Balance { address: addr, coins: vec![Coin::new(NATIVE_DENOM, DEV_NATIVE_BALANCE)] });
    }
    if opts.dev {
        dev_roles(&mut app_state, &accounts, &opts.genesis_time)?;
        // anvil_impersonateAccount: the dev chain runs transactions that name their sender.
        app_state.evm.dev_impersonation = true;
    }
    if let Some(g) = opts.governance {
        app_state.authority.governance = Some(g);
    }
    anyhow::ensure!(app_state.authority.governance.is_some(), "a governance authority is required: pass one, or create the dev accounts");
    let genesis = GenesisFile {
        genesis_time: opts.genesis_time.clone(),
        chain_id: opts.chain_id.clone(),
        initial_height: "1".into(),
        app_hash: String::new(),
        consensus_params: Some(crate::node::default_consensus_params()),
        app_state,
    };
    std::fs::write(h.genesis(), serde_json::to_vec_pretty(&genesis)?)?;

    if !accounts.is_empty() {
        let kr = Keyring::open(&h.test_keyring(), KeyringBackend::Test)?;
        for a in &accounts {
            kr.add_from_mnemonic(&a.name, DEV_MNEMONIC, a.index)?;
        }
        std::fs::write(h.dev_accounts(), serde_json::to_vec_pretty(&accounts)?)?;
    }
    Ok(accounts)
}

fn lantau_compliance_genesis_binding(parent: String, sub_addr: String, role: &str, label: &str) -> lantau_app::compliance::genesis::GenesisBinding {
    lantau_app::compliance::genesis::GenesisBinding { parent, sub_addr, role: role.into(), label: label.into() }
}

/// Gives the named dev accounts their roles: governance; the compliance authority; `issuer`
/// (LEVEL_LICENSED_ISSUER with a VASP id, issuer of `hkd.demo`, with `reviewer` and `officer`
/// bound as its sub-keys; `treasury`, its operations desk, holds every role of `hkd.demo`:
/// minter with an allowance of 50,000.00, pauser, seizer, redeemer); `registrar`; `auditor`;
/// `alice` (full tier, VASP and reference), `bob` (minimal tier, reference), `carol` (no
/// identity); the customers hold `hkd.demo`.
fn dev_roles(g: &mut AppGenesis, accounts: &[DevAccount], genesis_time: &str) -> anyhow::Result<()> {
    use lantau_proto::chain::kyc::v1::{Identity, Level};
    let addr = |name: &str| -> anyhow::Result<String> {
        Ok(accounts.iter().find(|a| a.name == name).ok_or_else(|| anyhow::anyhow!("no dev account {name}"))?.address.clone())
    };
    let t = time::OffsetDateTime::parse(genesis_time, &time::format_description::well_known::Rfc3339)?;
    let ts = lantau_proto::timestamp(t);
    let id = |name: &str, level: Level, vasp: &str, reference: &str| -> anyhow::Result<Identity> {
        Ok(Identity {
            address: addr(name)?,
            level: level as i32,
            vasp_identifier: vasp.into(),
            ivms101_off_chain_ref: reference.into(),
            enrolled_at: Some(ts),
            last_level_change: Some(ts),
            expires_at: None,
        })
    };
    g.authority.governance = Some(lantau_primitives::Address::from_bech32(&addr("governance")?)?);
    g.compliance.params = Some(lantau_app::compliance::Params {
        authority: addr("compliance_authority")?,
        rules: Some(lantau_app::compliance::default_rules()),
        block_requires_officer: false,
    });
    for (name, role, label) in [("reviewer", "SUB_ROLE_REVIEWER", "dev review desk"), ("officer", "SUB_ROLE_OFFICER", "dev MLRO")] {
        g.compliance.sub_roles.push(lantau_compliance_genesis_binding(addr("issuer")?, addr(name)?, role, label));
    }
    let mut kyc_params = lantau_app::kyc::tier::default_params();
    kyc_params.registrars.push(addr("registrar")?);
    g.kyc.params = Some(kyc_params);
    g.kyc.identities = vec![
        id("issuer", Level::LicensedIssuer, DEV_ISSUER_VASP, "ivms101:lantau-demo-issuer")?,
        id("alice", Level::RetailPlus, DEV_ALICE_VASP, "ivms101:alice-0001")?,
        id("bob", Level::RetailBasic, "", "ivms101:bob-0001")?,
    ];
    g.stablecoin.denoms.push(lantau_proto::chain::stablecoin::v1::Denom {
        denom: DEV_DENOM.into(),
        display: "HKD".into(),
        issuer: addr("issuer")?,
        decimals: 2,
    });
    for role in ["minter", "pauser", "seizer", "redeemer"] {
        g.stablecoin.roles.push(lantau_proto::chain::stablecoin::v1::RoleGrant {
            denom: DEV_DENOM.into(),
            role: role.into(),
            address: addr("treasury")?,
            allowance: (role == "minter")
                .then(|| cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: DEV_DENOM.into(), amount: DEV_MINTER_ALLOWANCE.to_string() }),
            granted_at: Some(ts),
        });
    }
    // Generous on a dev chain: the genesis attestation (dated at the genesis time) backs mints
    // for ten years.
    g.reserve.params = Some(lantau_proto::chain::reserve::v1::Params { auditors: vec![addr("auditor")?], max_attestation_age: "315360000s".into() });
    let customers = ["alice", "bob", "carol"];
    for customer in customers {
        let a = lantau_primitives::Address::from_bech32(&addr(customer)?)?;
        if let Some(b) = g.bank.balances.iter_mut().find(|b| b.address == a) {
            b.coins.push(Coin::new(DEV_DENOM, DEV_HKD_BALANCE));
            b.coins.sort();
        }
    }
    // The issuer's reserve, measured at genesis and co-signed by the dev auditor: what is in
    // circulation, backed at 102 %.
    let circulation = DEV_HKD_BALANCE.saturating_mul(customers.len() as u128);
    let coin = |amount: u128| cosmos_sdk_proto::cosmos::base::v1beta1::Coin { denom: DEV_DENOM.into(), amount: amount.to_string() };
    g.reserve.attestations = vec![lantau_proto::chain::reserve::v1::Attestation {
        id: 1,
        issuer: addr("issuer")?,
        state: lantau_proto::chain::reserve::v1::AttestationState::Attested as i32,
        circulation: Some(coin(circulation)),
        reserve_market_value: Some(coin(circulation.saturating_mul(102) / 100)),
        random_day: Some(ts),
        submitted_at: Some(ts),
        submitted_height: 0,
        auditor: addr("auditor")?,
        attested_at: Some(ts),
    }];
    Ok(())
}

/// The embedded validator's key file, in CometBFT's `priv_validator_key.json` layout.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValidatorKeyFile {
    /// Upper-hex address: first 20 bytes of sha256(pub key).
    pub address: String,
    /// `{type: "tendermint/PubKeyEd25519", value: base64}`.
    pub pub_key: KeyJson,
    /// `{type: "tendermint/PrivKeyEd25519", value: base64(seed ‖ pub)}`.
    pub priv_key: KeyJson,
}

/// A typed key in CometBFT's amino JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyJson {
    /// Amino type name.
    #[serde(rename = "type")]
    pub kind: String,
    /// base64 bytes.
    pub value: String,
}

pub(crate) fn write_validator_key(path: &Path) -> anyhow::Result<()> {
    let sk = ed25519_consensus::SigningKey::new(rand::rngs::OsRng);
    let vk = sk.verification_key();
    let b64 = base64::engine::general_purpose::STANDARD;
    let addr = lantau_crypto::sha256(vk.as_bytes());
    let file = ValidatorKeyFile {
        address: const_hex::encode_upper(&addr[..20]),
        pub_key: KeyJson { kind: "tendermint/PubKeyEd25519".into(), value: b64.encode(vk.as_bytes()) },
        priv_key: KeyJson { kind: "tendermint/PrivKeyEd25519".into(), value: b64.encode([sk.as_bytes().as_slice(), vk.as_bytes().as_slice()].concat()) },
    };
    std::fs::write(path, serde_json::to_vec_pretty(&file)?)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Reads the validator key file.
pub fn read_validator_key(path: &Path) -> anyhow::Result<ValidatorKeyFile> {
    Ok(serde_json::from_slice(&std::fs::read(path)?)?)
}

/// Takes the home's lock (`<home>/data/lantaud.lock`, an advisory lock the OS drops when the
/// process exits, even by `kill -9`): one process per home. A second one gets a one-line
/// error instead of RocksDB's LOCK failure deep inside the store. Hold the file while the
/// home is in use.
pub fn lock(home: &Path) -> anyhow::Result<std::fs::File> {
    let dir = home.join("data");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("lantaud.lock");
    let f = std::fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path)?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => {
            anyhow::bail!("the home {} is in use by another lantaud process (stop it first, or use another --home)", home.display())
        }
        Err(std::fs::TryLockError::Error(e)) => Err(anyhow::anyhow!("locking {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dev_account_derives_from_the_mnemonic_at_its_hd_path() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        init_home(dir.path(), &InitOptions::default())?;
        let accounts: Vec<DevAccount> = serde_json::from_slice(&std::fs::read(Home(dir.path().into()).dev_accounts())?)?;
        assert_eq!(accounts.len(), DEV_ACCOUNT_NAMES.len());
        for a in &accounts {
            let sk = secret_key_from_mnemonic_at(&a.mnemonic, &a.hd_path)?;
            assert_eq!(sk.address().to_bech32(), a.address, "{} at {}", a.name, a.hd_path);
            assert_eq!(sk.address().to_hex(), a.hex_address, "{}", a.name);
            assert_eq!(format!("0x{}", sk.to_hex()), a.private_key, "{}", a.name);
        }
        // Only governance sits at the path a wallet derives by default.
        let alice = accounts.iter().find(|a| a.name == "alice").ok_or_else(|| anyhow::anyhow!("no alice"))?;
        assert_eq!(alice.hd_path, "m/44'/60'/0'/0/5");
        assert_eq!(alice.hex_address, "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc", "Hardhat account #5");
        let mut addresses: Vec<&str> = accounts.iter().map(|a| a.address.as_str()).collect();
        addresses.sort_unstable();
        addresses.dedup();
        assert_eq!(addresses.len(), accounts.len(), "every entry is a different account");
        Ok(())
    }
}
