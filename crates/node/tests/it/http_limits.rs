//! The HTTP servers' limits against clients that hold sockets, never finish their headers,
//! announce bodies they do not send, or open more connections than allowed: the REST API keeps
//! answering ordinary requests, and each refusal is the documented one (408, 413, 503).

use std::time::Duration;

use lantau_node::config::NodeConfig;
use lantau_node::home::{init_home, InitOptions};
use lantau_test_utils::TestNode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A dev chain whose HTTP servers have small limits.
async fn node_with_small_limits() -> TestNode {
    let home = tempfile::tempdir().unwrap();
    init_home(home.path(), &InitOptions::default()).unwrap();
    let path = home.path().join("config/config.toml");
    let mut cfg = NodeConfig::load(&path).unwrap();
    cfg.http.max_connections = 16;
    cfg.http.header_read_timeout_ms = 500;
    cfg.http.request_timeout_ms = 1_000;
    cfg.http.max_body_bytes = 64 * 1024;
    cfg.save(&path).unwrap();
    TestNode::start_in(home, 100).await.unwrap()
}

/// Reads what the server sends until it closes or `bound` passes.
async fn read_until_close(s: &mut TcpStream, bound: Duration) -> Option<String> {
    let mut buf = Vec::new();
    match tokio::time::timeout(bound, s.read_to_end(&mut buf)).await {
        Ok(_) => Some(String::from_utf8_lossy(&buf).into_owned()),
        Err(_) => None,
    }
}

fn host(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_hoarding_clients_do_not_stop_the_rest_api() {
    let n = node_with_small_limits().await;
    let addr = host(&n.rest_url);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let config_url = format!("{}/cosmos/base/node/v1beta1/config", n.rest_url);

    // 1. Ten times the connection cap of sockets that never finish their headers: the oldest
    //    are closed for the newer ones, and an ordinary request still gets through.
    let mut hoard = Vec::new();
    for _ in 0..160 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(b"GET /cosmos/base/node/v1beta1/config HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        hoard.push(s);
    }
    let r = client.get(&config_url).send().await.expect("REST answers while sockets are hoarded");
    assert_eq!(r.status(), 200);
    // A hoarded socket is closed, by eviction or by the header read timeout, within a bound.
    let first = read_until_close(&mut hoard[0], Duration::from_secs(5)).await;
    assert!(first.is_some(), "an unfinished request's socket was kept open");
    let last = read_until_close(hoard.last_mut().unwrap(), Duration::from_secs(5)).await;
    assert!(last.is_some(), "the header read timeout did not close the socket");
    drop(hoard);

    // 2. A body announced larger than the limit: 413 at once, without waiting for it.
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"POST /cosmos/tx/v1beta1/txs HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n\r\n{\"tx_bytes\"")
        .await
        .unwrap();
    let mut head = [0u8; 64];
    let got = tokio::time::timeout(Duration::from_secs(5), s.read(&mut head)).await.expect("answered").unwrap();
    let text = String::from_utf8_lossy(&head[..got]).to_string();
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    drop(s);

    // 3. A body within the limit that never arrives in full: 408 after the request timeout,
    //    with the gateway's error body.
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"POST /cosmos/tx/v1beta1/txs HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"tx_bytes\"")
        .await
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let got = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.expect("answered").unwrap();
    let text = String::from_utf8_lossy(&buf[..got]).to_string();
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("http.request_timeout_ms"), "{text}");
    drop(s);

    // 4. Every slot held by a connection that has been served: a new one is told 503.
    let mut served = Vec::new();
    let mut refused = None;
    for _ in 0..40 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        let _ = s.write_all(b"GET /cosmos/base/node/v1beta1/config HTTP/1.1\r\nHost: x\r\n\r\n").await;
        let mut buf = vec![0u8; 4096];
        let got = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.expect("answered").unwrap_or(0);
        let text = String::from_utf8_lossy(&buf[..got]).to_string();
        if text.starts_with("HTTP/1.1 200") {
            served.push(s);
        } else {
            refused = Some(text);
            break;
        }
    }
    let text = refused.expect("a connection over the cap is refused");
    assert!(text.starts_with("HTTP/1.1 503") && text.contains("http.max_connections"), "{text}");
    assert!(served.len() <= 16, "{} connections served at once over a cap of 16", served.len());
    // Their keep-alive idle time ends (the header read timeout), and the API answers again.
    for s in &mut served {
        assert!(read_until_close(s, Duration::from_secs(5)).await.is_some(), "an idle keep-alive connection stayed open");
    }
    drop(served);
    let r = client.get(&config_url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    n.stop().await;
}
