//! The one HTTP server loop behind every HTTP surface (REST, the CometBFT RPC and its
//! WebSocket, the Ethereum JSON-RPC over HTTP and WebSocket, gRPC and gRPC-web, metrics), with
//! the limits that keep it answering when clients misbehave:
//!
//! - **connections**: at most `max_connections` at once, counted until the socket closes (an
//!   upgraded WebSocket keeps its place). When full, a new connection evicts the oldest one
//!   that has not yet begun a request (a client that opens sockets and never finishes its
//!   headers, or sends only the HTTP/2 preface, cannot hold the server); when every connection
//!   has been served, the new one is answered `503` and closed.
//! - **header read timeout = handshake and idle timeout**: a connection with no request in
//!   progress for `header_read_timeout` is closed: one that sends nothing, only the HTTP/2
//!   preface or part of its headers, and one left idle after its requests (HTTP/1.1
//!   keep-alive and HTTP/2 alike; HTTP/2 gets a GOAWAY first). HTTP/2 connections are pinged
//!   at the same interval, so a vanished peer is noticed while a stream is open.
//! - **request timeout**: reading the body and answering take at most `request_timeout`
//!   (`408`, the gateway's error body); a body announced larger than it is sent is cut off by it.
//! - **body size**: at most `max_body_bytes` (`413`).
//! - **requests in flight**: at most `max_requests_in_flight` at once (`503` with
//!   `Retry-After`); requests are refused, never queued behind the engine.
//! - **accept failures** (out of descriptors, `EMFILE`/`ENFILE`): the loop waits, doubling the
//!   wait up to a second, and logs once per streak and then at most every ten seconds, instead
//!   of spinning on `accept` and logging each failure.
//!
//! A refusal is written in the request's protocol: the gateway's JSON error body, or a gRPC
//! status for `application/grpc*` requests. WebSocket subscriptions have caps of their own (the
//! CometBFT and Ethereum WebSocket servers).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// The limits of one HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Requests being answered at once.
    pub max_requests_in_flight: usize,
    /// Time to send a request's headers, and the longest a connection stays open with no
    /// request in progress (before its first: the handshake; after its last: idle).
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
    /// It has begun a request at least once.
    served: AtomicBool,
    /// Requests in progress (until their response body is done).
    active: AtomicUsize,
    /// When a request last began or ended (or the connection was accepted), in milliseconds
    /// since the table's epoch.
    last: AtomicU64,
    /// Told to close (evicted for a newer connection).
    evict: Notify,
}

impl Slot {
    fn touch(&self, epoch: Instant) {
        self.last.store(u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// How long the connection has had no request in progress (`None`: one is).
    fn idle_for(&self, epoch: Instant) -> Option<Duration> {
        if self.active.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        Some(epoch.elapsed().saturating_sub(last))
    }
}

struct Table {
    next_id: u64,
    open: BTreeMap<u64, Arc<Slot>>,
    epoch: Instant,
}

impl Default for Table {
    fn default() -> Self {
        Self { next_id: 0, open: BTreeMap::new(), epoch: Instant::now() }
    }
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
        let slot = Arc::new(Slot { served: AtomicBool::new(false), active: AtomicUsize::new(0), last: AtomicU64::new(0), evict: Notify::new() });
        slot.touch(self.epoch);
        self.open.insert(id, slot.clone());
        Some((id, slot))
    }
}

/// A connection's socket holding its place in the table: the place is freed when the socket
/// is closed, also when an upgraded WebSocket outlives its HTTP connection.
struct Held {
    stream: TcpStream,
    table: Arc<Mutex<Table>>,
    id: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.table.lock().open.remove(&self.id);
    }
}

impl AsyncRead for Held {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A request in progress on a connection, until its response body is done or dropped.
struct Active {
    slot: Arc<Slot>,
    epoch: Instant,
}

impl Active {
    fn begin(slot: Arc<Slot>, epoch: Instant) -> Self {
        slot.served.store(true, Ordering::Relaxed);
        slot.active.fetch_add(1, Ordering::Relaxed);
        slot.touch(epoch);
        Self { slot, epoch }
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.slot.touch(self.epoch);
        self.slot.active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that keeps its request counted as in progress.
struct Tracked {
    inner: axum::body::Body,
    _active: Active,
}

impl http_body::Body for Tracked {
    type Data = bytes::Bytes;
    type Error = axum::Error;
    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Resolves once the connection has had no request in progress for `limit`.
async fn idle(slot: &Slot, epoch: Instant, limit: Duration) {
    loop {
        let wait = match slot.idle_for(epoch) {
            Some(d) if d >= limit => return,
            Some(d) => limit - d,
            None => limit,
        };
        tokio::time::sleep(wait).await;
    }
}

/// Waits after failed `accept`s: out of descriptors or memory, the wait doubles from 10 ms to
/// a second while the failures last; a failure of one connection (reset, aborted) is not
/// waited for. Logs the first failure of a streak, then at most every ten seconds.
#[derive(Default)]
struct AcceptBackoff {
    wait: Option<Duration>,
    unlogged: u64,
    logged_at: Option<Instant>,
}

impl AcceptBackoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MOST: Duration = Duration::from_secs(1);
    const LOG_EVERY: Duration = Duration::from_secs(10);

    /// The wait after `e`.
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        let exhausted = matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM));
        self.unlogged += 1;
        if self.logged_at.is_none_or(|t| t.elapsed() >= Self::LOG_EVERY) {
            tracing::warn!(error = %e, failures = self.unlogged, "accept failed; raise `ulimit -n` if out of open files");
            self.unlogged = 0;
            self.logged_at = Some(Instant::now());
        }
        if !exhausted {
            return Duration::ZERO;
        }
        let next = self.wait.map_or(Self::FIRST, |w| (w * 2).min(Self::MOST));
        self.wait = Some(next);
        next
    }

    fn succeeded(&mut self) {
        if self.wait.take().is_some() && self.unlogged > 0 {
            tracing::warn!(failures = self.unlogged, "accept failed; accepting again");
            self.unlogged = 0;
        }
    }
}

/// Per-request guard state: the in-flight permits and the timeout.
#[derive(Clone)]
struct Guard {
    in_flight: Arc<Semaphore>,
    limits: HttpLimits,
}

/// A refusal: the gateway's JSON error body with `status`, or, to a gRPC or gRPC-web request
/// (`grpc`: its content type), the gRPC status `grpc_code` in a trailers-only answer.
fn error(grpc: Option<HeaderValue>, status: StatusCode, grpc_code: i32, message: String) -> Response {
    if let Some(content_type) = grpc {
        let mut r = tonic::Status::new(tonic::Code::from_i32(grpc_code), message).into_http::<axum::body::Body>();
        r.headers_mut().insert(header::CONTENT_TYPE, content_type);
        return r;
    }
    let mut r = (status, axum::Json(serde_json::json!({"code": grpc_code, "message": message, "details": []}))).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

/// The content type of a gRPC or gRPC-web request.
fn grpc_content_type(req: &Request) -> Option<HeaderValue> {
    req.headers().get(header::CONTENT_TYPE).filter(|v| v.as_bytes().starts_with(b"application/grpc")).cloned()
}

async fn guard(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let grpc = grpc_content_type(&req);
    let announced = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > g.limits.max_body_bytes as u64) {
        return error(grpc, StatusCode::PAYLOAD_TOO_LARGE, 3, format!("request body over {} bytes (http.max_body_bytes)", g.limits.max_body_bytes));
    }
    let Ok(_permit) = g.in_flight.clone().try_acquire_owned() else {
        return error(
            grpc,
            StatusCode::SERVICE_UNAVAILABLE,
            14,
            format!("server busy: {} requests in flight (http.max_requests_in_flight); retry shortly", g.limits.max_requests_in_flight),
        );
    };
    match tokio::time::timeout(g.limits.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => error(
            grpc,
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

/// How long an idle HTTP/2 connection has to finish after its GOAWAY.
const GOAWAY_GRACE: Duration = Duration::from_secs(1);

/// Why a connection's task ended.
enum Ended {
    /// The connection ended (or upgraded), was evicted, or the server stops.
    Done,
    /// No request in progress for the header read timeout.
    Idle,
}

/// Serves `router` on `listener` with `limits` until `stop` completes; connections in progress
/// are then closed.
pub async fn serve(listener: TcpListener, router: Router, limits: HttpLimits, stop: impl Future<Output = ()> + Send + 'static) {
    let router = limited(router, &limits);
    let table = Arc::new(Mutex::new(Table::default()));
    let epoch = table.lock().epoch;
    let closing = Arc::new(Notify::new());
    let mut backoff = AcceptBackoff::default();
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            a = listener.accept() => a,
        };
        let (mut stream, peer) = match accepted {
            Ok(s) => {
                backoff.succeeded();
                s
            }
            Err(e) => {
                let wait = backoff.failed(&e);
                tokio::select! {
                    _ = &mut stop => break,
                    _ = tokio::time::sleep(wait) => continue,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let Some((id, slot)) = table.lock().admit(limits.max_connections) else {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&busy())).await;
            });
            continue;
        };
        let io = TokioIo::new(Held { stream, table: table.clone(), id });
        let (router, closing, header_timeout) = (router.clone(), closing.clone(), limits.header_read_timeout);
        tokio::spawn(async move {
            let on_request = slot.clone();
            let svc = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                let active = Active::begin(on_request.clone(), epoch);
                // The peer, for handlers that limit per client (`ConnectInfo<SocketAddr>`).
                req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                let mut r = router.clone();
                async move {
                    let resp = tower::Service::call(&mut r, req.map(axum::body::Body::new)).await?;
                    Ok::<_, std::convert::Infallible>(resp.map(|inner| axum::body::Body::new(Tracked { inner, _active: active })))
                }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder.http1().timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
            builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(header_timeout));
            let conn = builder.serve_connection_with_upgrades(io, svc);
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
                _ = conn.as_mut() => Ended::Done,
                _ = slot.evict.notified() => Ended::Done,
                _ = closing.notified() => Ended::Done,
                () = idle(&slot, epoch, header_timeout) => Ended::Idle,
            };
            if let Ended::Idle = ended {
                // HTTP/2: a GOAWAY, so that the client opens a new connection for its next call.
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(GOAWAY_GRACE, conn.as_mut()).await;
            }
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

    /// Reads from `s` until the server closes it; `false` if it is still open after `bound`.
    async fn closed_within(s: &mut TcpStream, bound: Duration) -> bool {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 256];
        tokio::time::timeout(bound, async {
            while let Ok(n) = s.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        })
        .await
        .is_ok()
    }

    #[tokio::test]
    async fn a_connection_that_sends_nothing_or_only_the_http2_preface_is_closed_at_the_header_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = HttpLimits { header_read_timeout: Duration::from_millis(300), ..HttpLimits::default() };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, Router::new().route("/", axum::routing::get(|| async { "ok" })), limits, async move {
            let _ = stopped.await;
        }));
        for (what, first) in [("the HTTP/2 preface", &b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..]), ("nothing", b"")] {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(first).await.unwrap();
            assert!(closed_within(&mut s, Duration::from_secs(20)).await, "a connection that sent {what} is still open");
        }
        // A keep-alive connection after its request: idle, closed the same way.
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
        assert!(closed_within(&mut s, Duration::from_secs(20)).await, "an idle keep-alive connection is still open");
        let _ = stop.send(());
        server.await.unwrap();
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
