//! `lantaud testnet init|start`: a local network of validators under real CometBFT.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use lantau_node::home::DEV_CHAIN_ID;
use lantau_node::testnet::{self, Testnet, TestnetOptions};

/// `lantaud testnet`.
#[derive(Debug, Subcommand)]
pub(crate) enum TestnetCmd {
    /// Write a local network: app homes, one genesis, CometBFT homes and config (loopback
    /// ports only, short timeouts).
    Init(InitArgs),
    /// Run validators of a local network (app and CometBFT each) until Ctrl-C or SIGTERM,
    /// then stop them cleanly.
    Start(StartArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Validators.
    #[arg(long, default_value_t = 4)]
    validators: usize,
    /// Full nodes that join by state sync (numbered after the validators; start them once
    /// the validators have taken a snapshot).
    #[arg(long, default_value_t = 0)]
    full_nodes: usize,
    /// Every app takes a state-sync snapshot every this many heights (0: none).
    #[arg(long, default_value_t = 20)]
    snapshot_interval: u64,
    /// Output directory (created; must be empty). `--output` is the CLI-wide output format,
    /// so this is simd's `--output-dir`.
    #[arg(long = "output-dir", short = 'o')]
    output_dir: PathBuf,
    /// First port: validator N uses base+10N (P2P), +1 (CometBFT RPC), +2 (ABCI), +3 (metrics),
    /// +4 (REST), +5 (Ethereum JSON-RPC), +6 (its WebSocket).
    #[arg(long, default_value_t = 26600)]
    base_port: u16,
    /// Cosmos chain id.
    #[arg(long, default_value = DEV_CHAIN_ID)]
    chain_id: String,
    /// CometBFT's pause after each block.
    #[arg(long, default_value = "300ms")]
    timeout_commit: String,
    /// The cometbft binary (default: $LANTAU_COMETBFT, the prereqs cache, PATH).
    #[arg(long)]
    cometbft: Option<PathBuf>,
    /// CometBFT keeps the mempool (its `flood` mempool, CheckTx and Recheck over ABCI)
    /// instead of the apps. By default the apps keep it (`[mempool] app_side`, each
    /// forwarding what its clients give it to the validators) and CometBFT's is off
    /// (`mempool.type = "nop"`): clients broadcast to the apps (their RPC front, REST or
    /// JSON-RPC), not to CometBFT's own RPC (docs/operations.md).
    #[arg(long)]
    cometbft_mempool: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StartArgs {
    /// The directory `testnet init` wrote.
    dir: PathBuf,
    /// Only these nodes (comma-separated indexes); all by default. A full node joining by
    /// state sync takes its trusted header from the first validator when it first starts.
    #[arg(long, value_delimiter = ',')]
    nodes: Vec<usize>,
}

pub(crate) async fn run(cmd: TestnetCmd) -> anyhow::Result<()> {
    match cmd {
        TestnetCmd::Init(a) => {
            let cometbft = testnet::find_cometbft(a.cometbft.as_deref())?;
            let opts = TestnetOptions {
                validators: a.validators,
                full_nodes: a.full_nodes,
                snapshot_interval: a.snapshot_interval,
                base_port: a.base_port,
                chain_id: a.chain_id,
                timeout_commit: a.timeout_commit,
                cometbft,
                extra_accounts: Vec::new(),
                app_mempool: !a.cometbft_mempool,
            };
            let out = a.output_dir;
            let net = tokio::task::spawn_blocking(move || testnet::init(&out, &opts).map(|n| (n, out))).await??;
            let (net, out) = net;
            let full = net.nodes.iter().filter(|n| n.full_node).count();
            println!("wrote a network of {} validators and {full} full nodes for {} in {}", net.nodes.len() - full, net.chain_id, out.display());
            for n in &net.nodes {
                println!(
                    "  {}: RPC for clients {} (CometBFT's own {}), REST {}, JSON-RPC {}, ABCI {}, P2P {}, metrics {}",
                    n.moniker, n.rpc_front, n.rpc, n.rest, n.json_rpc, n.abci, n.p2p, n.metrics
                );
            }
            println!("start it with: lantaud testnet start {}", out.display());
        }
        TestnetCmd::Start(a) => {
            let net = Testnet::load(&a.dir)?;
            let which: Vec<usize> = if a.nodes.is_empty() { (0..net.nodes.len()).collect() } else { a.nodes };
            let exe = std::env::current_exe()?;
            let mut running = Vec::new();
            for &i in &which {
                let started = match testnet::fill_state_sync_trust(&net, i).await {
                    Ok(()) => testnet::start_validator(&a.dir, &net, i, &exe),
                    Err(e) => Err(e),
                };
                match started {
                    Ok(v) => running.push((i, v)),
                    Err(e) => {
                        for (_, v) in running {
                            v.stop(Duration::from_secs(10));
                        }
                        return Err(e);
                    }
                }
                if let Some(n) = net.nodes.get(i) {
                    eprintln!("started {} (CometBFT RPC {})", n.moniker, n.rpc);
                }
            }
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            // Wait for a signal, or for a process of the network to exit on its own.
            let exited = loop {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => break None,
                    _ = term.recv() => break None,
                    () = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
                if let Some(i) = running.iter_mut().find_map(|(i, v)| {
                    let gone = matches!(v.app.try_wait(), Ok(Some(_))) || matches!(v.cometbft.try_wait(), Ok(Some(_)));
                    gone.then_some(*i)
                }) {
                    break Some(i);
                }
            };
            eprintln!("stopping the network");
            tokio::task::spawn_blocking(move || {
                for (_, v) in running {
                    v.stop(Duration::from_secs(10));
                }
            })
            .await?;
            if let Some(i) = exited {
                anyhow::bail!("a process of node {i} exited; see {}", a.dir.join(format!("node{i}")).display());
            }
        }
    }
    Ok(())
}
