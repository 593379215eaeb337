//! The one HTTP server loop behind every HTTP surface (REST, the CometBFT RPC and its
//! WebSocket, the Ethereum JSON-RPC over HTTP and WebSocket, metrics), with the limits that keep
//! it answering when clients misbehave:
//!
//! - **connections**: at most `max_connections` at once. When full, a new connection evicts the
//!   oldest one that has not yet completed a request (a client that opens sockets and never
//!   finishes its headers cannot hold the server); when every connection has been served, the
//!   new one is answered `503` and closed.
//! - **header read timeout**: a connection that does not complete its request headers within
//!   `header_read_timeout` is closed. hyper starts the same clock when a keep-alive connection
//!   waits for its next request, so it is also the idle keep-alive timeout.
//! - **request timeout**: reading the body and answering take at most `request_timeout`
//!   (`408`, the gateway's error body); a body announced larger than it is sent is cut off by it.
//! - **body size**: at most `max_body_bytes` (`413`).
//! - **requests in flight**: at most `max_requests_in_flight` at once (`503` with
//!   `Retry-After`); requests are refused, never queued behind the engine.
//!
//! Upgraded WebSocket connections leave the count when they upgrade; subscriptions have caps of
//! their own (the CometBFT and Ethereum WebSocket servers).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use parking_lot::Mutex;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};

/// The limits of one HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Requests being answered at once.
    pub max_requests_in_flight: usize,
    /// Time to send a request's headers (and a keep-alive connection's idle time).
    pub header_read_timeout: Duration,
    /// Time to send the body and get the answer.
    pub request_timeout: Duration,
    /// Largest request body.
    pub max_body_bytes: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            max_requests_in_flight: 256,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 16 * 1024 * 1024,
        }
    }
}

/// One accepted connection's place in the table.
struct Slot {
    /// It has completed a request's headers at least once.
    served: AtomicBool,
    /// Told to close (evicted for a newer connection).
    evict: Notify,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    open: BTreeMap<u64, Arc<Slot>>,
}

impl Table {
    /// Admits a new connection, evicting the oldest never-served one when full; `None` when
    /// every open connection has been served and the table is full.
    fn admit(&mut self, max: usize) -> Option<(u64, Arc<Slot>)> {
        if self.open.len() >= max.max(1) {
            let victim = self.open.iter().find(|(_, s)| !s.served.load(Ordering::Relaxed)).map(|(id, _)| *id)?;
            if let Some(s) = self.open.remove(&victim) {
                s.evict.notify_one();
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let slot = Arc::new(Slot { served: AtomicBool::new(false), evict: Notify::new() });
        self.open.insert(id, slot.clone());
        Some((id, slot))
    }
}

/// Per-request guard state: the in-flight permits and the timeout.
#[derive(Clone)]
struct Guard {
    in_flight: Arc<Semaphore>,
    limits: HttpLimits,
}

fn error(status: StatusCode, grpc_code: i32, message: String) -> Response {
    let mut r = (status, axum::Json(serde_json::json!({"code": grpc_code, "message": message, "details": []}))).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

async fn guard(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let announced = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > g.limits.max_body_bytes as u64) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            3,
            format!("request body over {} bytes (http.max_body_bytes)", g.limits.max_body_bytes),
        );
    }
    let Ok(_permit) = g.in_flight.clone().try_acquire_owned() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            14,
            format!("server busy: {} requests in flight (http.max_requests_in_flight); retry shortly", g.limits.max_requests_in_flight),
        );
    };
    match tokio::time::timeout(g.limits.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => error(
            StatusCode::REQUEST_TIMEOUT,
            4,
            format!(
                "request not completed within {} ms (http.request_timeout_ms): send the whole body promptly, or narrow the query",
                g.limits.request_timeout.as_millis()
            ),
        ),
    }
}

/// The router with the per-request limits applied (body size, in flight, timeout).
pub fn limited(router: Router, limits: &HttpLimits) -> Router {
    let g = Guard { in_flight: Arc::new(Semaphore::new(limits.max_requests_in_flight.max(1))), limits: limits.clone() };
    router.layer(axum::middleware::from_fn_with_state(g, guard)).layer(axum::extract::DefaultBodyLimit::max(limits.max_body_bytes))
}

/// The answer to a connection over the cap, written before its request is read.
fn busy() -> Vec<u8> {
    let body = r#"{"code":14,"message":"too many connections (http.max_connections); retry shortly","details":[]}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serves `router` on `listener` with `limits` until `stop` completes; connections in progress
/// are then closed.
pub async fn serve(listener: TcpListener, router: Router, limits: HttpLimits, stop: impl Future<Output = ()> + Send + 'static) {
    let router = limited(router, &limits);
    let table = Arc::new(Mutex::new(Table::default()));
    let closing = Arc::new(Notify::new());
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            a = listener.accept() => a,
        };
        let (mut stream, peer) = match accepted {
            Ok(s) => s,
            Err(e) => {
                // Out of descriptors or a transient network error: do not spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Some((id, slot)) = table.lock().admit(limits.max_connections) else {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&busy())).await;
            });
            continue;
        };
        let (router, table, closing, header_timeout) = (router.clone(), table.clone(), closing.clone(), limits.header_read_timeout);
        tokio::spawn(async move {
            let served = slot.clone();
            let svc = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                served.served.store(true, Ordering::Relaxed);
                // The peer, for handlers that limit per client (`ConnectInfo<SocketAddr>`).
                req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                let mut r = router.clone();
                async move { tower::Service::call(&mut r, req.map(axum::body::Body::new)).await }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder.http1().timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
            builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(header_timeout));
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), svc);
            tokio::select! {
                _ = conn => {}
                _ = slot.evict.notified() => {}
                _ = closing.notified() => {}
            }
            table.lock().open.remove(&id);
        });
    }
    closing.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_evicts_the_oldest_unserved_connection_and_refuses_when_all_were_served() {
        let mut t = Table::default();
        let (a, sa) = t.admit(2).unwrap();
        let (_b, sb) = t.admit(2).unwrap();
        sa.served.store(true, Ordering::Relaxed);
        // Full: b (never served) goes, a stays.
        let (_c, sc) = t.admit(2).unwrap();
        assert!(t.open.contains_key(&a) && t.open.len() == 2);
        assert!(!t.open.values().any(|s| Arc::ptr_eq(s, &sb)));
        sc.served.store(true, Ordering::Relaxed);
        // Every open connection has been served: the new one is refused.
        assert!(t.admit(2).is_none());
        assert_eq!(t.open.len(), 2);
    }

    #[test]
    fn the_busy_answer_is_well_formed() {
        let bytes = busy();
        let text = std::str::from_utf8(&bytes).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let len: usize = head.lines().find_map(|l| l.strip_prefix("content-length: ")).unwrap().parse().unwrap();
        assert_eq!(body.len(), len, "{body}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["code"], 14);
    }
}
