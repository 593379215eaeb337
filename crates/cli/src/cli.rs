//! Command-line interface. Human output by default, `--output json` for tools.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use lantau_client::{msg_send, Confirmation, RestClient, SignerData, TxBuilder};
use lantau_crypto::{Keyring, KeyringBackend, SecretKey, ETH_HD_PATH_PREFIX};
use lantau_node::home::{init_home, Home, InitOptions, DEV_CHAIN_ID, DEV_EVM_CHAIN_ID};
use lantau_node::{start, StartOptions};
use lantau_primitives::Address;
use serde_json::json;

mod amount;
mod compliance;
mod evm;
mod group;
mod registry;
mod testnet;
mod txfile;
mod web;

/// The Lantau node and CLI.
#[derive(Debug, Parser)]
#[command(name = "lantaud", version, about = "Lantau: a regulated-stablecoin chain node (Cosmos SDK style, with an EVM interface)")]
pub(crate) struct Cli {
    /// Node home directory.
    #[arg(long, global = true, env = "LANTAU_HOME", default_value_os_t = default_home())]
    home: PathBuf,
    /// Output format (default: the client config's `output`, else text).
    #[arg(long, global = true, value_enum)]
    output: Option<Output>,
    /// The node's Cosmos REST address (default: `$LANTAU_NODE`, the client config's `node`,
    /// else http://127.0.0.1:1317); `host:port` means http.
    #[arg(long, global = true, env = "LANTAU_NODE")]
    node: Option<String>,
    /// Amounts in base units, in and out (`15000hkd.demo`, `777alantau`), instead of display
    /// units (`150.00hkd.demo`, `2.5lantau`).
    #[arg(long, global = true)]
    base_units: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

impl Cli {
    /// The output format: the flag, else the client config's, else text.
    pub(crate) fn output_format(&self) -> Output {
        self.output.or_else(|| client_config::load(&self.home).ok().and_then(|c| c.output)).unwrap_or(Output::Text)
    }
}

/// The node address every client command talks to, resolved once in [`run`].
static NODE_URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

mod client_config {
    //! `<home>/config/client.toml`: the client's defaults (`lantaud config set node ...`).
    use serde::{Deserialize, Serialize};

    /// The client config.
    #[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
    pub(crate) struct ClientConfig {
        /// The node's Cosmos REST address.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub(crate) node: Option<String>,
        /// `text` or `json`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub(crate) output: Option<super::Output>,
    }

    pub(crate) fn path(home: &std::path::Path) -> std::path::PathBuf {
        home.join("config/client.toml")
    }

    /// The config (empty when the file does not exist).
    pub(crate) fn load(home: &std::path::Path) -> anyhow::Result<ClientConfig> {
        match std::fs::read_to_string(path(home)) {
            Ok(t) => toml::from_str(&t).map_err(|e| anyhow::anyhow!("{}: {e}", path(home).display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ClientConfig::default()),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) fn save(home: &std::path::Path, c: &ClientConfig) -> anyhow::Result<()> {
        let p = path(home);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        let text = format!("# lantaud's client defaults (`lantaud config set KEY VALUE`); flags and LANTAU_NODE win.\n{}", toml::to_string_pretty(c)?);
        std::fs::write(p, text)?;
        Ok(())
    }
}

/// `http://host:port` from what a user typed: `host:port` means http; anything but http(s) or
/// without a host is refused.
pub(crate) fn normalize_node(s: &str) -> anyhow::Result<String> {
    let s = s.trim().trim_end_matches('/');
    let url = if s.contains("://") { s.to_string() } else { format!("http://{s}") };
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with(':') => Ok(url),
        _ => anyhow::bail!("invalid node address {s:?}: expected http://host:port (or host:port)"),
    }
}

fn default_home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".")).join(".lantau")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Output {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
enum Cmd {
    /// Create a node home: config, genesis, validator key (and dev accounts with --dev).
    Init(InitArgs),
    /// Run the node (initialises a dev home first when the home does not exist).
    Start(StartArgs),
    /// Manage keys in the keyring.
    #[command(subcommand)]
    Keys(KeysCmd),
    /// Sign and broadcast transactions.
    #[command(subcommand)]
    Tx(TxCmd),
    /// Query the chain.
    #[command(subcommand)]
    Query(QueryCmd),
    /// Benchmark: signed transfers through broadcast, committed tx/s and latencies.
    Bench(crate::bench::BenchArgs),
    /// Local networks of validators under real CometBFT.
    #[command(subcommand)]
    Testnet(testnet::TestnetCmd),
    /// The onboarding portal of a test network: faucets and identity applications (a page and
    /// a JSON API, docs/portal.md).
    Portal(web::PortalCmd),
    /// The reviewers' console: a local web application for a reviewer's or officer's key
    /// (docs/reviewer-workflow.md).
    Console(web::ConsoleCmd),
    /// The client defaults in `<home>/config/client.toml` (node, output).
    #[command(subcommand)]
    Config(ConfigCmd),
    /// The version (with `--long`: the commit and build details).
    Version {
        /// Name, version, commit, build profile, the CometBFT and ABCI versions it speaks.
        #[arg(long)]
        long: bool,
    },
    /// Write a stopped node's whole state as a genesis file to stdout (every module, the audit
    /// log with its hash chain, flags, records, EVM code and storage, sequences, consensus
    /// params); `lantaud init --genesis FILE` starts a chain from it (docs/operations.md).
    Export {
        /// The height to export: the store's latest (the only one it keeps for export).
        #[arg(long)]
        height: Option<u64>,
    },
    /// The audit log taken away: an export of a time range with the hash chain and the proofs
    /// against the chain, and its offline check (docs/audit.md).
    #[command(subcommand)]
    Audit(AuditCmd),
    /// Delete a dev chain's state (blocks, index, snapshots) to start again from genesis;
    /// config, genesis and keys stay. Refused while the node runs.
    Reset {
        /// Required: only a dev home (one with dev accounts) is reset.
        #[arg(long)]
        dev: bool,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCmd {
    /// Write the audit rows whose block time is in [--from, --to] to stdout, with every other
    /// row's digest, the committed chain head and count with their ICS-23 proofs, and the block
    /// header whose app hash they lead to (from the node `--node` names).
    Export {
        /// The range's start (RFC 3339, inclusive); the log's start when omitted.
        #[arg(long)]
        from: Option<String>,
        /// The range's end (RFC 3339, inclusive); the latest row when omitted.
        #[arg(long)]
        to: Option<String>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Check an export offline (no node): every row against its bytes, the hash chain, the
    /// proofs against the header's app hash. Names the first row that breaks the chain; exits
    /// non-zero when anything fails.
    Verify {
        /// The export file (`-` for stdin).
        file: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigCmd {
    /// Set a client default: `node` (REST address) or `output` (text|json).
    Set {
        /// `node` or `output`.
        key: String,
        /// The value.
        value: String,
    },
    /// Print a client default, or all of them.
    Get {
        /// `node` or `output`; all when omitted.
        key: Option<String>,
    },
}

#[derive(Debug, Args)]
struct InitArgs {
    /// Cosmos chain id.
    #[arg(long, default_value = DEV_CHAIN_ID)]
    chain_id: String,
    /// EVM chain id.
    #[arg(long, default_value_t = DEV_EVM_CHAIN_ID)]
    evm_chain_id: u64,
    /// Moniker.
    #[arg(long, default_value = "lantau-dev")]
    moniker: String,
    /// Create and fund the named dev accounts and give them their roles.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    dev: bool,
    /// The governance authority (bech32); the dev `governance` account by default.
    #[arg(long)]
    governance: Option<String>,
    /// Start from this genesis file instead of writing one (for instance one `lantaud export`
    /// wrote): the home gets a config, a new validator key and a copy of the file; no dev
    /// accounts.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["governance", "chain_id", "evm_chain_id"])]
    genesis: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
struct StartArgs {
    /// Cosmos REST listen address.
    #[arg(long = "api.address", alias = "api-address")]
    api_address: Option<String>,
    /// CometBFT RPC listen address.
    #[arg(long = "rpc.laddr", alias = "rpc-address")]
    rpc_address: Option<String>,
    /// Ethereum JSON-RPC (HTTP) listen address (Cosmos EVM's flag name).
    #[arg(long = "json-rpc.address")]
    json_rpc_address: Option<String>,
    /// Ethereum JSON-RPC (WebSocket) listen address.
    #[arg(long = "json-rpc.ws-address")]
    json_rpc_ws_address: Option<String>,
    /// Block interval, e.g. 1s or 500ms.
    #[arg(long)]
    block_time: Option<String>,
    /// Prometheus endpoint listen address (`GET /metrics`).
    #[arg(long = "metrics.laddr")]
    metrics_address: Option<String>,
    /// gRPC (and gRPC-web) listen address.
    #[arg(long = "grpc.address")]
    grpc_address: Option<String>,
    /// Serve the app to a CometBFT process over ABCI++ on this address (`tcp://IP:PORT` or
    /// `unix:///PATH`) instead of running the embedded engine.
    #[arg(long, value_name = "ADDR")]
    abci: Option<lantau_node::abci::AbciAddr>,
    /// Also serve the onboarding portal (faucets, identity applications) on --portal.address.
    #[arg(long)]
    portal: bool,
    /// A block as soon as each transaction is admitted (a dev chain only, as Hardhat's and
    /// anvil's automine; `evm_setAutomine` switches it too).
    #[arg(long)]
    automine: bool,
    #[command(flatten)]
    portal_args: web::PortalArgs,
    #[command(flatten)]
    kr: KeyringArgs,
}

#[derive(Debug, Args, Clone)]
struct KeyringArgs {
    /// Keyring backend: `test` (unencrypted, dev) or `file` (encrypted keystore files).
    #[arg(long, default_value = "test")]
    keyring_backend: String,
}

impl KeyringArgs {
    fn open(&self, home: &std::path::Path) -> anyhow::Result<Keyring> {
        let h = Home(home.to_path_buf());
        match self.keyring_backend.as_str() {
            "test" => Ok(Keyring::open(&h.test_keyring(), KeyringBackend::Test)?),
            "file" => {
                let passphrase = match std::env::var("LANTAU_KEYRING_PASSPHRASE") {
                    Ok(p) => p,
                    Err(_) => rpassword::prompt_password("Keyring passphrase: ")?,
                };
                Ok(Keyring::open(&h.file_keyring(), KeyringBackend::File { passphrase })?)
            }
            other => anyhow::bail!("unknown keyring backend {other:?}: use test or file"),
        }
    }
}

#[derive(Debug, Subcommand)]
enum KeysCmd {
    /// Create a key (or recover one from a mnemonic read on stdin with --recover).
    Add {
        /// Key name.
        name: String,
        /// Read a BIP-39 mnemonic from stdin.
        #[arg(long)]
        recover: bool,
        /// HD account index (m/44'/60'/0'/0/<index>).
        #[arg(long, default_value_t = 0)]
        index: u32,
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// List keys.
    List {
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// Show a key's addresses.
    Show {
        /// Key name.
        name: String,
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// Print a key's private key (hex), for import into a wallet.
    Export {
        /// Key name.
        name: String,
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// Import a private key (hex, 0x optional), read from a prompt, or from stdin when it is
    /// not a terminal (never from the command line, which lands in shell history).
    Import {
        /// Key name.
        name: String,
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// Delete a key.
    Delete {
        /// Key name.
        name: String,
        #[command(flatten)]
        kr: KeyringArgs,
    },
}

/// Where a client command talks to: the global `--node` (see [`Cli`]), resolved once.
#[derive(Debug, Args, Clone, Default)]
struct NodeArgs {}

impl NodeArgs {
    /// The node's REST address.
    fn url(&self) -> String {
        NODE_URL.get().cloned().unwrap_or_else(|| "http://127.0.0.1:1317".to_string())
    }
}

#[derive(Debug, Args, Clone)]
struct TxArgs {
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    kr: KeyringArgs,
    /// Gas limit (`auto` simulates and adds 30%).
    #[arg(long, default_value = "auto")]
    gas: String,
    /// Fee in alantau (default: 1 gwei x gas).
    #[arg(long)]
    fees: Option<String>,
    /// Memo.
    #[arg(long, default_value = "")]
    memo: String,
    /// Broadcast mode: sync (wait for the verdict, then confirm) or async.
    #[arg(long, default_value = "sync")]
    broadcast_mode: String,
    /// Do not wait for the transaction to be included.
    #[arg(long)]
    no_wait: bool,
    /// Do not sign or broadcast: print the unsigned transaction as JSON (for `tx sign`).
    #[arg(long)]
    generate_only: bool,
}

#[derive(Debug, Subcommand)]
enum TxCmd {
    /// Bank transactions.
    #[command(subcommand)]
    Bank(BankTx),
    /// Identity registry transactions.
    #[command(subcommand)]
    Kyc(registry::KycTx),
    /// Stablecoin transactions.
    #[command(subcommand)]
    Stablecoin(registry::StablecoinTx),
    /// Reserve attestation transactions.
    #[command(subcommand)]
    Reserve(registry::ReserveTx),
    /// Group accounts: create, propose, vote, execute.
    #[command(subcommand)]
    Group(group::GroupTx),
    /// Software upgrades scheduled on chain (signed by governance).
    #[command(subcommand)]
    Upgrade(registry::UpgradeTx),
    /// Compliance transactions.
    #[command(subcommand)]
    Compliance(compliance::ComplianceTx),
    /// EVM transactions over the Ethereum JSON-RPC.
    #[command(subcommand)]
    Evm(evm::EvmTx),
    /// Sign a transaction file (JSON from `--generate-only`) with a key; prints the signed JSON.
    Sign {
        /// The file (`-`: stdin).
        file: std::path::PathBuf,
        /// Key name of the signer.
        #[arg(long)]
        from: String,
        /// Sign without asking the node: give --chain-id, --account-number and --sequence.
        #[arg(long)]
        offline: bool,
        /// Chain id (default: the node's).
        #[arg(long)]
        chain_id: Option<String>,
        /// Account number (default: the node's).
        #[arg(long)]
        account_number: Option<u64>,
        /// Sequence (default: the next one the node expects).
        #[arg(long)]
        sequence: Option<u64>,
        #[command(flatten)]
        kr: KeyringArgs,
    },
    /// Print the base64 `TxRaw` bytes of a transaction file (what REST's broadcast takes).
    Encode {
        /// The file (`-`: stdin).
        file: std::path::PathBuf,
    },
    /// Print a transaction's JSON from its base64 `TxRaw` bytes.
    Decode {
        /// Base64 bytes.
        tx_bytes: String,
    },
    /// Broadcast a signed transaction file (JSON or base64 bytes).
    Broadcast {
        /// The file (`-`: stdin).
        file: std::path::PathBuf,
        /// sync (wait for the verdict, then confirm) or async.
        #[arg(long, default_value = "sync")]
        broadcast_mode: String,
        /// Do not wait for the transaction to be included.
        #[arg(long)]
        no_wait: bool,
    },
}

#[derive(Debug, Subcommand)]
enum BankTx {
    /// Send coins: `send <from-key> <to-address> <amount><denom>[,<amount><denom>...]`.
    Send {
        /// Key name of the sender.
        from: String,
        /// Recipient (bech32 or 0x hex).
        to: String,
        /// Coins, e.g. 1000000alantau or 2500hkd.demo.
        amount: String,
        /// The Travel Rule payload of a stablecoin send, as JSON (`originator_ref`,
        /// `beneficiary_ref`, `originator_vasp`, `beneficiary_vasp`, `tier`); filled from the
        /// identity registry when omitted.
        #[arg(long)]
        travel_rule: Option<String>,
        /// Do not broadcast: print the gate-by-gate trace the node simulates for this send.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        tx: TxArgs,
    },
}

#[derive(Debug, Subcommand)]
enum QueryCmd {
    /// Bank queries.
    #[command(subcommand)]
    Bank(BankQuery),
    /// Auth queries.
    #[command(subcommand)]
    Auth(AuthQuery),
    /// Registry queries (kyc, stablecoin, erc20, reserve, group, upgrade, compliance).
    #[command(flatten)]
    Module(registry::ModuleQuery),
    /// A transaction by hash.
    Tx {
        /// Hash (hex).
        hash: String,
        #[command(flatten)]
        node: NodeArgs,
    },
}

#[derive(Debug, Subcommand)]
enum BankQuery {
    /// Balances of an address.
    Balances {
        /// Address (bech32 or 0x hex) or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
}

#[derive(Debug, Subcommand)]
enum AuthQuery {
    /// Account number and sequence.
    Account {
        /// Address (bech32 or 0x hex) or key name.
        address: String,
        #[command(flatten)]
        node: NodeArgs,
    },
}

fn print(output: Output, json_value: serde_json::Value, text: impl FnOnce() -> String) {
    match output {
        Output::Json => println!("{}", serde_json::to_string_pretty(&json_value).unwrap_or_default()),
        Output::Text => println!("{}", text()),
    }
}

/// A duration in milliseconds: `300ms`, `30s`, `1.5s`, `5m`, `8h`, or a bare number of
/// milliseconds.
fn parse_duration(s: &str) -> anyhow::Result<u64> {
    let s = s.trim();
    let (num, unit_ms) = if let Some(x) = s.strip_suffix("ms") {
        (x, 1.0)
    } else if let Some(x) = s.strip_suffix('s') {
        (x, 1_000.0)
    } else if let Some(x) = s.strip_suffix('m') {
        (x, 60_000.0)
    } else if let Some(x) = s.strip_suffix('h') {
        (x, 3_600_000.0)
    } else {
        (s, 1.0)
    };
    let f: f64 = num.trim().parse().map_err(|_| anyhow::anyhow!("{s:?} is not a duration: a number with ms, s, m or h (e.g. 300ms, 30s, 5m, 8h)"))?;
    anyhow::ensure!(f.is_finite() && f >= 0.0, "{s:?} is not a duration: it must be a non-negative number");
    Ok((f * unit_ms).round() as u64)
}

fn resolve_address(home: &std::path::Path, s: &str) -> anyhow::Result<Address> {
    if let Ok(a) = Address::parse_any(s) {
        return Ok(a);
    }
    let kr = Keyring::open(&Home(home.to_path_buf()).test_keyring(), KeyringBackend::Test)?;
    let info = kr.get(s).with_context(|| format!("{s:?} is neither an address nor a key name"))?;
    Ok(Address::from_bech32(&info.address)?)
}

pub(crate) async fn run(cli: Cli) -> anyhow::Result<()> {
    let home = cli.home.clone();
    let out = cli.output_format();
    let node = match cli.node.clone() {
        Some(n) => n,
        None => client_config::load(&home)?.node.unwrap_or_else(|| "http://127.0.0.1:1317".to_string()),
    };
    let _ = NODE_URL.set(normalize_node(&node).context("--node")?);
    amount::set_base_units(cli.base_units);
    match cli.cmd {
        Cmd::Config(c) => config_cmd(&home, out, c)?,
        Cmd::Version { long } => {
            let commit = env!("LANTAU_GIT_COMMIT");
            let v = json!({
                "name": "lantaud",
                "version": env!("CARGO_PKG_VERSION"),
                "commit": commit,
                "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
                "cometbft": lantau_node::testnet::COMETBFT_VERSION,
                "abci": "2.0.0 (CometBFT v0.38 ABCI++)",
                "target": env!("LANTAU_TARGET"),
            });
            if long {
                print(out, v.clone(), || {
                    format!(
                        "name: lantaud\nversion: {}\ncommit: {commit}\nbuild_profile: {}\ncometbft: {}\nabci: {}\ntarget: {}",
                        env!("CARGO_PKG_VERSION"),
                        v["build_profile"].as_str().unwrap_or_default(),
                        lantau_node::testnet::COMETBFT_VERSION,
                        v["abci"].as_str().unwrap_or_default(),
                        env!("LANTAU_TARGET"),
                    )
                });
            } else {
                print(out, json!({"version": env!("CARGO_PKG_VERSION")}), || env!("CARGO_PKG_VERSION").to_string());
            }
        }
        Cmd::Audit(AuditCmd::Export { from, to, node }) => {
            let mut q = Vec::new();
            for (k, v) in [("from", from), ("to", to)] {
                if let Some(v) = v {
                    q.push(format!("{k}={}", url_escape(&v)));
                }
            }
            let path =
                if q.is_empty() { "/chain/compliance/v1/audit_export".to_string() } else { format!("/chain/compliance/v1/audit_export?{}", q.join("&")) };
            let x = RestClient::new(node.url()).query(&path).await?;
            println!("{}", serde_json::to_string_pretty(&x)?);
        }
        Cmd::Audit(AuditCmd::Verify { file }) => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?
            };
            let x: lantau_app::audit_export::AuditExport = serde_json::from_str(&text).context("not an audit export")?;
            let v = lantau_app::audit_export::verify(&x).map_err(|e| anyhow::anyhow!("the export does not verify: {e}"))?;
            let range = v.sequences.map(|(a, b)| format!("rows {a} to {b}")).unwrap_or_else(|| "no rows".into());
            print(
                out,
                json!({
                    "verified": true,
                    "rows": v.rows,
                    "first_sequence": v.sequences.map(|s| s.0),
                    "last_sequence": v.sequences.map(|s| s.1),
                    "chain_rows": v.total,
                    "header_height": v.header_height,
                    "header_hash": v.header_hash,
                    "app_hash": v.app_hash,
                }),
                || {
                    format!(
                        "verified: {range} ({} in the range) chain to the committed head of {} rows, proven against app hash {} in the header of block {}.\nCompare that header's hash with block {}'s on a node you trust (CometBFT RPC /block?height=, block_id.hash): {}",
                        v.rows, v.total, v.app_hash, v.header_height, v.header_height, v.header_hash
                    )
                },
            );
        }
        Cmd::Export { height } => {
            let genesis = lantau_node::export::export_home(&home, height).await?;
            println!("{}", serde_json::to_string_pretty(&genesis)?);
        }
        Cmd::Reset { dev } => {
            anyhow::ensure!(dev, "lantaud reset deletes the chain's state: say --dev (only a dev home is reset)");
            let h = Home(home.clone());
            anyhow::ensure!(h.dev_accounts().exists(), "{} is not a dev home (no dev-accounts.json): refusing to delete its state", home.display());
            let _lock = lantau_node::home::lock(&home)?;
            let mut removed = Vec::new();
            for d in ["data/state", "data/snapshots"] {
                let p = home.join(d);
                if p.exists() {
                    std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
                    removed.push(p);
                }
            }
            print(out, json!({"home": home, "removed": removed}), || format!("reset {}: the next start begins again from genesis", home.display()));
        }
        Cmd::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "lantaud", &mut std::io::stdout());
        }
        Cmd::Init(a) if a.genesis.is_some() => {
            let file = a.genesis.unwrap_or_default();
            let g = lantau_node::export::init_home_from_genesis(&home, &file, &a.moniker)?;
            let height = g.app_state.exported.as_ref().map(|e| e.height);
            print(out, json!({"home": home, "chain_id": g.chain_id, "initial_height": g.initial_height, "exported_height": height}), || {
                format!("initialised {} for chain {} from {} (first block {})", home.display(), g.chain_id, file.display(), g.initial_height)
            });
        }
        Cmd::Init(a) => {
            let governance = a.governance.as_deref().map(Address::from_bech32).transpose()?;
            let opts = InitOptions { chain_id: a.chain_id, evm_chain_id: a.evm_chain_id, moniker: a.moniker, dev: a.dev, governance, ..Default::default() };
            let accounts = init_home(&home, &opts)?;
            print(out, json!({"home": home, "chain_id": opts.chain_id, "accounts": accounts}), || {
                format!("initialised {} for chain {} ({} dev accounts)", home.display(), opts.chain_id, accounts.len())
            });
        }
        Cmd::Start(a) => {
            let h = Home(home.clone());
            if !h.is_initialized() {
                init_home(&home, &InitOptions::default())?;
                eprintln!("initialised a dev home at {}", home.display());
            }
            if let Some(addr) = &a.abci {
                eprintln!("serving the app of {} over ABCI on {addr}", home.display());
                let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
                let stop = async move {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                };
                let opts = StartOptions {
                    api_address: a.api_address.clone(),
                    rpc_address: None,
                    block_time_ms: None,
                    json_rpc_address: a.json_rpc_address.clone(),
                    json_rpc_ws_address: a.json_rpc_ws_address.clone(),
                    metrics_address: a.metrics_address.clone(),
                    grpc_address: a.grpc_address.clone(),
                };
                lantau_node::node::serve_abci(&home, addr, opts, stop).await?;
                eprintln!("shutting down");
                return Ok(());
            }
            let block_time_ms = a.block_time.as_deref().map(parse_duration).transpose()?;
            let mut node = start(
                &home,
                StartOptions {
                    api_address: a.api_address,
                    rpc_address: a.rpc_address,
                    block_time_ms,
                    json_rpc_address: a.json_rpc_address,
                    json_rpc_ws_address: a.json_rpc_ws_address,
                    metrics_address: a.metrics_address,
                    grpc_address: a.grpc_address,
                },
            )
            .await?;
            let evm_chain_id = node.node.app().queries().evm_chain_id().await?;
            if a.automine {
                use lantau_rpc::api::NodeApi as _;
                node.node.dev(lantau_rpc::api::DevOp::SetAutomine(true)).await.map_err(|e| anyhow::anyhow!("--automine: {e}"))?;
            }
            print_banner(&h, &node, evm_chain_id)?;
            let (portal_stop, portal_stopped) = tokio::sync::oneshot::channel::<()>();
            let portal = if a.portal {
                let mut args = a.portal_args.clone();
                // The wallet URL is this node's own Ethereum JSON-RPC unless given.
                if args.evm_rpc_url == "http://127.0.0.1:8545" {
                    args.evm_rpc_url = format!("http://{}", node.eth_addr);
                }
                Some(
                    web::spawn_portal(&home, &args, &a.kr, format!("http://{}", node.api_addr), async move {
                        let _ = portal_stopped.await;
                    })
                    .await?,
                )
            } else {
                None
            };
            // SIGINT (Ctrl-C) and SIGTERM (systemd, docker stop, kill) stop the node cleanly.
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            let failed = tokio::select! {
                r = tokio::signal::ctrl_c() => { r?; None }
                _ = term.recv() => None,
                fault = node.engine_stopped() => Some(fault),
            };
            eprintln!("shutting down");
            let _ = portal_stop.send(());
            if let Some(p) = portal {
                let _ = p.await;
            }
            node.stop().await;
            match failed {
                Some(Some(fault)) => return Err(fault.into()),
                Some(None) => anyhow::bail!("block production stopped (see the log above)"),
                None => {}
            }
        }
        Cmd::Portal(c) => web::portal(&home, c).await?,
        Cmd::Console(c) => web::console(&home, c).await?,
        Cmd::Keys(k) => keys(&home, out, k)?,
        Cmd::Tx(TxCmd::Bank(BankTx::Send { from, to, amount, travel_rule, dry_run, tx })) => {
            let kr = tx.kr.open(&home)?;
            let key = kr.secret(&from)?;
            let to = resolve_address(&home, &to)?;
            let coins = amount.split(',').map(amount::parse_coin).collect::<Result<Vec<_>, _>>()?;
            let msg = msg_send(&key.address(), &to, &coins);
            let stablecoin = coins.iter().any(|c| c.is_stablecoin());
            let ext = match (travel_rule, stablecoin) {
                (Some(json), _) => {
                    let p: lantau_proto::chain::compliance::v1::TravelRulePayload =
                        serde_json::from_str(&json).context("--travel-rule must be a JSON Travel Rule payload")?;
                    vec![lantau_client::travel_rule_option(&p)]
                }
                (None, true) => {
                    let p = RestClient::new(tx.node.url()).travel_rule_payload(&key.address(), &to).await?;
                    vec![lantau_client::travel_rule_option(&p)]
                }
                (None, false) => vec![],
            };
            if dry_run {
                let client = RestClient::new(tx.node.url());
                let chain_id = client.chain_id().await?;
                let (account_number, sequence) = client.account(&key.address()).await?.unwrap_or((0, 0));
                let mut b = TxBuilder::new(vec![msg]).gas(200_000).fee(0);
                b.extension_options = ext;
                let bytes = b.sign(&key, &SignerData { chain_id, account_number, sequence });
                let v = client.simulate_trace(&bytes).await?;
                print(out, v.clone(), || registry::trace_table(&v["trace"]));
                return Ok(());
            }
            send_tx_with(out, &tx, &key, vec![msg], ext).await?;
        }
        Cmd::Tx(TxCmd::Kyc(t)) => registry::kyc_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Stablecoin(t)) => registry::stablecoin_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Reserve(t)) => registry::reserve_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Group(t)) => group::group_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Upgrade(t)) => registry::upgrade_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Compliance(t)) => compliance::compliance_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Evm(t)) => evm::evm_tx(&home, out, t).await?,
        Cmd::Tx(TxCmd::Sign { file, from, offline, chain_id, account_number, sequence, kr }) => {
            let key = kr.open(&home)?.secret(&from)?;
            let v = txfile::read_json(&file)?;
            let (chain_id, account_number, sequence) = if offline {
                (
                    chain_id.context("--offline needs --chain-id")?,
                    account_number.context("--offline needs --account-number")?,
                    sequence.context("--offline needs --sequence")?,
                )
            } else {
                let client = RestClient::new(NodeArgs::default().url());
                let (n, s) = client.next_sequence(&key.address()).await?.with_context(|| format!("account {} does not exist on chain", key.address()))?;
                (
                    match chain_id {
                        Some(c) => c,
                        None => client.chain_id().await?,
                    },
                    account_number.unwrap_or(n),
                    sequence.unwrap_or(s),
                )
            };
            let signed = txfile::sign(&v, &key, &chain_id, account_number, sequence)?;
            let j = txfile::decode(&signed)?;
            print(out, j.clone(), || serde_json::to_string_pretty(&j).unwrap_or_default());
        }
        Cmd::Tx(TxCmd::Encode { file }) => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD.encode(txfile::read(&file)?);
            print(out, json!({"tx_bytes": b64}), || b64.clone());
        }
        Cmd::Tx(TxCmd::Decode { tx_bytes }) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD.decode(tx_bytes.trim()).context("not base64")?;
            let j = txfile::decode(&bytes)?;
            print(out, j.clone(), || serde_json::to_string_pretty(&j).unwrap_or_default());
        }
        Cmd::Tx(TxCmd::Broadcast { file, broadcast_mode, no_wait }) => {
            let bytes = txfile::read(&file)?;
            broadcast_and_report(out, &RestClient::new(NodeArgs::default().url()), &bytes, &broadcast_mode, no_wait).await?;
        }
        Cmd::Query(q) => query(&home, out, q).await?,
        Cmd::Bench(b) => crate::bench::run(b, out == Output::Json).await?,
        Cmd::Testnet(t) => testnet::run(t).await?,
    }
    Ok(())
}

fn print_banner(h: &Home, node: &lantau_node::RunningNode, evm_chain_id: u64) -> anyhow::Result<()> {
    let accounts: Vec<lantau_node::home::DevAccount> = match std::fs::read(h.dev_accounts()) {
        Ok(b) => serde_json::from_slice(&b)?,
        Err(_) => vec![],
    };
    println!("\n  _             _\n | |__ _ _ _ _| |_ __ _ _  _\n | / _` | ' \\  _/ _` | || |\n |_\\__,_|_||_\\__\\__,_|\\_,_|\n");
    if !accounts.is_empty() {
        println!("Available Accounts\n==================");
        for (i, a) in accounts.iter().enumerate() {
            println!("({i}) {:<22} {} {} (1000000 LANTAU)", a.name, a.address, a.hex_address);
        }
        println!("\nPrivate Keys\n==================");
        for (i, a) in accounts.iter().enumerate() {
            println!("({i}) {}", a.private_key);
        }
        println!(
            "\nWallet\n==================\nMnemonic:        {}\nDerivation path: {ETH_HD_PATH_PREFIX}/<index>, the (index) above (a wallet's default, index 0, is {})",
            lantau_node::home::DEV_MNEMONIC,
            accounts.first().map_or("", |a| a.name.as_str()),
        );
        println!("Accounts file:   {}", h.dev_accounts().display());
    }
    println!("\nHome:       {}", h.0.display());
    println!("REST:       http://{}", node.api_addr);
    println!("RPC:        http://{} (WebSocket ws://{}/websocket)", node.rpc_addr, node.rpc_addr);
    println!(
        "JSON-RPC:   http://{} (WebSocket ws://{}): MetaMask network: RPC URL http://{}, chain id {evm_chain_id}, symbol LANTAU",
        node.eth_addr, node.eth_ws_addr, node.eth_addr
    );
    println!("gRPC:       {} (reflection; gRPC-web on the same port)", node.grpc_addr);
    println!("Metrics:    http://{}/metrics\n", node.metrics_addr);
    Ok(())
}

async fn send_tx(out: Output, a: &TxArgs, key: &SecretKey, msgs: Vec<cosmos_sdk_proto::Any>) -> anyhow::Result<()> {
    send_tx_with(out, a, key, msgs, vec![]).await
}

async fn send_tx_with(
    out: Output,
    a: &TxArgs,
    key: &SecretKey,
    msgs: Vec<cosmos_sdk_proto::Any>,
    extension_options: Vec<cosmos_sdk_proto::Any>,
) -> anyhow::Result<()> {
    let client = RestClient::new(a.node.url());
    let signer = lantau_client::sender::signer_data(&client, key).await?;
    let mut b = TxBuilder::new(msgs).memo(a.memo.clone());
    b.extension_options = extension_options;
    b.gas_limit = if a.gas == "auto" {
        lantau_client::sender::auto_gas(&client, &b, key, &signer).await?
    } else {
        a.gas.parse().context("--gas must be a number or auto")?
    };
    if let Some(f) = &a.fees {
        let c = amount::parse_coin(f).or_else(|_| amount::parse_coin(&format!("{f}alantau")))?;
        b.fee = Some(c.amount.0);
    }
    if a.generate_only {
        let (body_bytes, auth_info_bytes) = b.unsigned(key, &signer);
        let unsigned = cosmos_sdk_proto::cosmos::tx::v1beta1::TxRaw { body_bytes, auth_info_bytes, signatures: vec![] };
        let j = txfile::decode(&prost::Message::encode_to_vec(&unsigned))?;
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    let bytes = b.sign(key, &signer);
    broadcast_and_report(out, &client, &bytes, &a.broadcast_mode, a.no_wait).await
}

/// Broadcasts signed bytes and reports as every `tx` command does: the admission verdict (the
/// hash, and for a refusal the codespace, code and log, exit status 1), then, unless async or
/// `no_wait`, the inclusion.
async fn broadcast_and_report(out: Output, client: &RestClient, bytes: &[u8], broadcast_mode: &str, no_wait: bool) -> anyhow::Result<()> {
    let mode = if broadcast_mode == "async" { "BROADCAST_MODE_ASYNC" } else { "BROADCAST_MODE_SYNC" };
    let br = client.broadcast(bytes, mode).await?;
    if br.code != 0 || no_wait || mode == "BROADCAST_MODE_ASYNC" {
        print(out, json!({"txhash": br.txhash, "code": br.code, "codespace": br.codespace, "raw_log": br.raw_log}), || {
            if br.code == 0 {
                format!("broadcast {} (not yet confirmed)", br.txhash)
            } else {
                format!("rejected {}: codespace {} code {}: {}", br.txhash, br.codespace, br.code, br.raw_log)
            }
        });
        if br.code != 0 {
            anyhow::bail!("transaction rejected at admission");
        }
        return Ok(());
    }
    match client.wait_for_tx(&br.txhash, Duration::from_secs(30), Duration::from_millis(200)).await.map(Confirmation::Included) {
        Ok(Confirmation::Included(r)) => {
            print(
                out,
                json!({"txhash": r.txhash, "height": r.height, "code": r.code, "codespace": r.codespace, "raw_log": r.raw_log, "gas_used": r.gas_used}),
                || {
                    if r.code == 0 {
                        format!("committed {} at height {} (gas used {})", r.txhash, r.height, r.gas_used)
                    } else {
                        format!("included {} at height {} but failed: codespace {} code {}: {}", r.txhash, r.height, r.codespace, r.code, r.raw_log)
                    }
                },
            );
            if r.code != 0 {
                anyhow::bail!("transaction failed");
            }
        }
        Ok(Confirmation::Rejected(b)) => anyhow::bail!("rejected: {}", b.raw_log),
        Err(e) => anyhow::bail!("{} broadcast, but {e}", br.txhash),
    }
    Ok(())
}

fn config_cmd(home: &std::path::Path, out: Output, c: ConfigCmd) -> anyhow::Result<()> {
    let mut cfg = client_config::load(home)?;
    match c {
        ConfigCmd::Set { key, value } => {
            match key.as_str() {
                "node" => cfg.node = Some(normalize_node(&value)?),
                "output" => {
                    cfg.output = Some(<Output as ValueEnum>::from_str(&value, true).map_err(|_| anyhow::anyhow!("output is text or json, not {value:?}"))?)
                }
                other => anyhow::bail!("unknown client config key {other:?}: node or output"),
            }
            client_config::save(home, &cfg)?;
            print(out, json!(cfg), || format!("{key} = {value} ({})", client_config::path(home).display()));
        }
        ConfigCmd::Get { key } => {
            let v = serde_json::to_value(&cfg)?;
            match key {
                None => print(out, v.clone(), || toml::to_string_pretty(&cfg).unwrap_or_default().trim_end().to_string()),
                Some(k) if k == "node" || k == "output" => {
                    let val = v.get(&k).cloned().unwrap_or(serde_json::Value::Null);
                    print(out, json!({ k.clone(): val.clone() }), || val.as_str().map(str::to_string).unwrap_or_default());
                }
                Some(k) => anyhow::bail!("unknown client config key {k:?}: node or output"),
            }
        }
    }
    Ok(())
}

fn keys(home: &std::path::Path, out: Output, k: KeysCmd) -> anyhow::Result<()> {
    match k {
        KeysCmd::Add { name, recover, index, kr } => {
            let kr = kr.open(home)?;
            let (info, mnemonic) = if recover {
                let mut phrase = String::new();
                std::io::stdin().read_line(&mut phrase)?;
                (kr.add_from_mnemonic(&name, phrase.trim(), index)?, None)
            } else {
                let (i, m) = kr.add_new(&name)?;
                (i, Some(m))
            };
            print(out, json!({"key": info, "mnemonic": mnemonic}), || {
                let mut s = format!("{}  {}  {}", info.name, info.address, info.hex_address);
                if let Some(m) = &mnemonic {
                    s.push_str(&format!("\n\nWrite this mnemonic down; it is the only way to recover the key:\n{m}"));
                }
                s
            });
        }
        KeysCmd::List { kr } => {
            let list = kr.open(home)?.list()?;
            print(out, json!(list), || list.iter().map(|i| format!("{:<22} {}  {}", i.name, i.address, i.hex_address)).collect::<Vec<_>>().join("\n"));
        }
        KeysCmd::Show { name, kr } => {
            let i = kr.open(home)?.get(&name)?;
            print(out, json!(i), || format!("{}  {}  {}", i.name, i.address, i.hex_address));
        }
        KeysCmd::Export { name, kr } => {
            let hexkey = kr.open(home)?.export_private_key(&name)?;
            print(out, json!({"name": name, "private_key": format!("0x{hexkey}")}), || format!("0x{hexkey}"));
        }
        KeysCmd::Import { name, kr } => {
            use std::io::IsTerminal as _;
            let private_key = if std::io::stdin().is_terminal() {
                rpassword::prompt_password("Private key (hex): ")?
            } else {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                line
            };
            let private_key = private_key.trim();
            anyhow::ensure!(!private_key.is_empty(), "no private key given (type it at the prompt or pipe it on stdin)");
            let i = kr.open(home)?.import_private_key(&name, private_key)?;
            print(out, json!(i), || format!("imported {}  {}  {}", i.name, i.address, i.hex_address));
        }
        KeysCmd::Delete { name, kr } => {
            kr.open(home)?.delete(&name)?;
            print(out, json!({"deleted": name}), || format!("deleted {name}"));
        }
    }
    Ok(())
}

async fn query(home: &std::path::Path, out: Output, q: QueryCmd) -> anyhow::Result<()> {
    match q {
        QueryCmd::Bank(BankQuery::Balances { address, node }) => {
            let addr = resolve_address(home, &address)?;
            let coins = RestClient::new(node.url()).balances(&addr).await?;
            print(out, json!({"balances": coins}), || {
                if coins.is_empty() {
                    format!("{addr}: no balances")
                } else {
                    coins.iter().map(amount::format_coin).collect::<Vec<_>>().join("\n")
                }
            });
        }
        QueryCmd::Auth(AuthQuery::Account { address, node }) => {
            let addr = resolve_address(home, &address)?;
            match RestClient::new(node.url()).account(&addr).await? {
                Some((n, s)) => print(out, json!({"address": addr, "account_number": n.to_string(), "sequence": s.to_string()}), || {
                    format!("{addr}\naccount_number: {n}\nsequence: {s}")
                }),
                None => anyhow::bail!("account {addr} not found"),
            }
        }
        QueryCmd::Module(q) => registry::module_query(home, out, q).await?,
        QueryCmd::Tx { hash, node } => match RestClient::new(node.url()).tx(&hash).await? {
            Some(r) => print(
                out,
                json!({"txhash": r.txhash, "height": r.height, "code": r.code, "codespace": r.codespace, "raw_log": r.raw_log, "gas_wanted": r.gas_wanted, "gas_used": r.gas_used, "events": r.events}),
                || {
                    format!(
                        "{} height {} code {} {}{}",
                        r.txhash,
                        r.height,
                        r.code,
                        r.codespace,
                        if r.raw_log.is_empty() { String::new() } else { format!(": {}", r.raw_log) }
                    )
                },
            ),
            None => anyhow::bail!("tx {hash} not found (not included yet, or never will be)"),
        },
    }
    Ok(())
}

/// A query-string value, percent-encoded (RFC 3339 times carry `+` and `:`).
fn url_escape(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_read_in_milliseconds_with_their_unit() {
        for (text, ms) in [("300ms", 300), ("30s", 30_000), ("1.5s", 1_500), ("5m", 300_000), ("8h", 28_800_000), ("250", 250)] {
            assert_eq!(super::parse_duration(text).unwrap(), ms, "{text}");
        }
        for bad in ["", "h", "-1s", "8d", "NaNs"] {
            assert!(super::parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// clap's own checks of every command (unique argument names, valid defaults): a mistake
    /// there panics only when that command is parsed.
    #[test]
    fn every_command_and_argument_is_well_formed() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
