//! `lantaud portal` and `lantaud console`: the two web faces (`lantau-web`), and the portal
//! beside a dev chain (`lantaud start --portal`).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use clap::Args;
use lantau_web::console::{Console, ConsoleConfig};
use lantau_web::portal::{Portal, PortalConfig};

use super::{KeyringArgs, NodeArgs};

/// The onboarding portal's settings.
#[derive(Debug, Args, Clone)]
pub(crate) struct PortalArgs {
    /// Listen address (loopback by default; a test network's public portal sits behind a proxy).
    #[arg(long = "portal.address", default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,
    /// The Ethereum JSON-RPC URL the page gives wallets.
    #[arg(long = "portal.evm-rpc-url", default_value = "http://127.0.0.1:8545")]
    pub(crate) evm_rpc_url: String,
    /// The portal's URL as browsers reach it (its host:port is the sign-in challenge's domain);
    /// default http://<portal.address>.
    #[arg(long = "portal.public-url")]
    pub(crate) public_url: Option<String>,
    /// Keyring name of the native faucet's key.
    #[arg(long = "portal.faucet-key", default_value = "faucet")]
    pub(crate) faucet_key: String,
    /// Keyring name of the key that mints the HKD faucet's coins (the denom's issuer).
    #[arg(long = "portal.hkd-key", default_value = "issuer")]
    pub(crate) hkd_key: String,
    /// Keyring name of the registrar key that enrols applicants.
    #[arg(long = "portal.registrar-key", default_value = "registrar")]
    pub(crate) registrar_key: String,
    /// The stablecoin denom of the HKD faucet.
    #[arg(long = "portal.hkd-denom", default_value = "hkd.demo")]
    pub(crate) hkd_denom: String,
    /// alantau per native faucet request (default 10 LANTAU).
    #[arg(long = "portal.native-amount", default_value = "10000000000000000000")]
    pub(crate) native_amount: u128,
    /// Base units (cents) per HKD faucet request (default HKD 1,000.00).
    #[arg(long = "portal.hkd-amount", default_value = "100000")]
    pub(crate) hkd_amount: u128,
    /// The faucets' rate-limit window, e.g. 60s, 24h.
    #[arg(long = "portal.window", default_value = "60s")]
    pub(crate) window: String,
    /// Requests per address per faucet per window.
    #[arg(long = "portal.per-address", default_value = "1")]
    pub(crate) per_address: u32,
    /// Requests per client IP per faucet per window.
    #[arg(long = "portal.per-client", default_value = "20")]
    pub(crate) per_client: u32,
    /// The level applicants are enrolled at.
    #[arg(long = "portal.kyc-level", default_value = "LEVEL_RETAIL_BASIC")]
    pub(crate) kyc_level: String,
    /// Applications wait for an operator (default: enrolled at once, as on a dev chain).
    #[arg(long = "portal.manual-approval")]
    pub(crate) manual_approval: bool,
    /// The operator routes' bearer token (default: a random one, printed at start).
    #[arg(long = "portal.operator-token", env = "LANTAU_PORTAL_OPERATOR_TOKEN", hide_env_values = true)]
    pub(crate) operator_token: Option<String>,
}

/// `lantaud portal`.
#[derive(Debug, Args)]
pub(crate) struct PortalCmd {
    #[command(flatten)]
    portal: PortalArgs,
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    kr: KeyringArgs,
}

/// `lantaud console`: the compliance desk.
#[derive(Debug, Args)]
pub(crate) struct ConsoleCmd {
    /// Keyring name of a key the service holds (repeat for each person); the first also gets a
    /// session at start, whose URL is printed. None: every key of the keyring, and everyone
    /// signs in with their wallet.
    #[arg(long = "key")]
    keys: Vec<String>,
    /// Open no session at start even with --key: everyone signs in.
    #[arg(long)]
    sign_in_only: bool,
    /// The node's Ethereum JSON-RPC (the chain id in the sign-in message).
    #[arg(long, default_value = "http://127.0.0.1:8545")]
    evm_rpc: String,
    /// The URL people open (the institution's TLS proxy in front of the service): the sign-in
    /// message's domain. Default: http://<address>.
    #[arg(long)]
    public_url: Option<String>,
    /// How long a signed-in session lasts, e.g. 8h, 30m.
    #[arg(long, default_value = "8h")]
    session_ttl: String,
    /// Listen address: loopback only.
    #[arg(long, default_value = "127.0.0.1:8081")]
    address: SocketAddr,
    /// The node's CometBFT RPC (to rebuild a trace the node no longer holds).
    #[arg(long, default_value = "http://127.0.0.1:26657")]
    rpc: String,
    /// The access token (default: a random one, printed at start).
    #[arg(long, env = "LANTAU_CONSOLE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    kr: KeyringArgs,
}

fn portal_config(home: &Path, a: &PortalArgs, kr: &KeyringArgs, node: String) -> anyhow::Result<PortalConfig> {
    let keys = kr.open(home)?;
    let key = |name: &str, what: &str| {
        keys.secret(name).map_err(|e| anyhow::anyhow!("the portal's {what} key {name:?}: {e} (name another with --portal.{what}-key)"))
    };
    let level = lantau_proto::chain::kyc::v1::Level::from_str_name(&a.kyc_level.to_ascii_uppercase())
        .ok_or_else(|| anyhow::anyhow!("--portal.kyc-level {:?} is not a LEVEL_… name", a.kyc_level))?;
    let mut cfg = PortalConfig::dev(
        node,
        a.evm_rpc_url.clone(),
        key(&a.faucet_key, "faucet")?,
        key(&a.hkd_key, "hkd")?,
        key(&a.registrar_key, "registrar")?,
        home.join("data/portal"),
    );
    cfg.listen = a.listen;
    cfg.public_url = a.public_url.clone();
    cfg.hkd_denom = a.hkd_denom.clone();
    cfg.native_amount = a.native_amount;
    cfg.hkd_amount = a.hkd_amount;
    cfg.window = Duration::from_millis(super::parse_duration(&a.window)?);
    cfg.per_address = a.per_address;
    cfg.per_client = a.per_client;
    cfg.kyc_level = level;
    cfg.auto_approve = !a.manual_approval;
    cfg.operator_token = a.operator_token.clone();
    Ok(cfg)
}

/// Binds the portal and serves it in the background until `stop`; prints where.
pub(crate) async fn spawn_portal(
    home: &Path,
    a: &PortalArgs,
    kr: &KeyringArgs,
    node: String,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let cfg = portal_config(home, a, kr, node)?;
    let listener = tokio::net::TcpListener::bind(cfg.listen).await.map_err(|e| anyhow::anyhow!("portal: cannot listen on {}: {e}", cfg.listen))?;
    let local = listener.local_addr()?;
    let portal = Portal::new(cfg).await?;
    println!("Portal:     http://{local} (operator token: {})", portal.operator_token());
    Ok(tokio::spawn(portal.serve(listener, stop)))
}

/// Waits for Ctrl-C, then tells the server to stop (through `tx`) and waits for it.
async fn until_ctrl_c(tx: tokio::sync::oneshot::Sender<()>, task: tokio::task::JoinHandle<()>) -> anyhow::Result<()> {
    tokio::signal::ctrl_c().await?;
    let _ = tx.send(());
    let _ = task.await;
    Ok(())
}

/// A stop signal for a server, and the future the server waits on.
fn stop_signal() -> (tokio::sync::oneshot::Sender<()>, impl std::future::Future<Output = ()> + Send + 'static) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    (tx, async move {
        let _ = rx.await;
    })
}

/// `lantaud portal`: serves until Ctrl-C.
pub(crate) async fn portal(home: &Path, c: PortalCmd) -> anyhow::Result<()> {
    let (tx, stop) = stop_signal();
    let task = spawn_portal(home, &c.portal, &c.kr, c.node.url(), stop).await?;
    until_ctrl_c(tx, task).await
}

/// `lantaud console`: serves until Ctrl-C.
pub(crate) async fn console(home: &Path, c: ConsoleCmd) -> anyhow::Result<()> {
    let keyring = c.kr.open(home)?;
    let names: Vec<String> = if c.keys.is_empty() { keyring.list()?.into_iter().map(|k| k.name).collect() } else { c.keys.clone() };
    let keys = names.iter().map(|n| Ok((n.clone(), keyring.secret(n)?))).collect::<anyhow::Result<Vec<_>>>()?;
    let open_for = if c.sign_in_only || c.keys.is_empty() { None } else { c.keys.first().cloned() };
    let ttl = super::parse_duration(&c.session_ttl)?;
    let cfg = ConsoleConfig {
        listen: c.address,
        node: c.node.url(),
        rpc: c.rpc.clone(),
        evm_rpc: Some(c.evm_rpc.clone()),
        keys,
        open_for,
        data_dir: home.join("console").join("desk.db"),
        public_url: c.public_url.clone(),
        token: c.token.clone(),
        session_ttl: Duration::from_millis(ttl),
        challenge_ttl: Duration::from_secs(300),
        confirm_timeout: Duration::from_secs(30),
    };
    let console = Console::new(cfg).await?;
    let listener = tokio::net::TcpListener::bind(c.address).await.map_err(|e| anyhow::anyhow!("console: cannot listen on {}: {e}", c.address))?;
    let local = listener.local_addr()?;
    match c.keys.first().filter(|_| !c.sign_in_only) {
        Some(k) => println!("Console (the desk; signed in as {k}, {}): open {}", console.address(), console.url(local)),
        None => println!("Console (the desk, holding {} keys): open {} and sign in with your wallet", names.len(), console.url(local)),
    }
    let (tx, stop) = stop_signal();
    until_ctrl_c(tx, tokio::spawn(console.serve(listener, stop))).await
}
