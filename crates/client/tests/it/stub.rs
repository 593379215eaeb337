//! A stub node: an HTTP server on 127.0.0.1:0 that answers canned responses and records the
//! paths it was asked for.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, Response};
use axum::Router;
use lantau_primitives::Address;

/// One canned HTTP answer.
pub(crate) struct Canned {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: String,
}

impl Canned {
    /// A JSON answer.
    pub(crate) fn json(status: u16, body: &serde_json::Value) -> Self {
        Self { status, headers: vec![("content-type", "application/json".into())], body: body.to_string() }
    }

    /// An answer with any content type and raw body.
    pub(crate) fn raw(status: u16, content_type: &str, body: &str) -> Self {
        Self { status, headers: vec![("content-type", content_type.into())], body: body.into() }
    }
}

/// A running stub; stopped when dropped.
pub(crate) struct Stub {
    pub(crate) base: String,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stub {
    /// Serves `answer(path_and_query)` for every request. The listener is bound before this
    /// returns, so requests can be sent at once.
    pub(crate) async fn start(answer: impl Fn(&str) -> Canned + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let log = seen.clone();
        let app = Router::new().fallback(move |req: Request<Body>| {
            let (log, answer) = (log.clone(), answer.clone());
            async move {
                let pq = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
                log.lock().unwrap().push(pq.clone());
                let c = answer(&pq);
                let mut b = Response::builder().status(c.status);
                for (k, v) in c.headers {
                    b = b.header(k, v);
                }
                b.body(Body::from(c.body)).unwrap()
            }
        });
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base: format!("http://{addr}"), seen, task }
    }

    /// Serves the same answer to every request.
    pub(crate) async fn fixed(status: u16, body: serde_json::Value) -> Self {
        let body = body.to_string();
        Self::start(move |_| Canned::raw(status, "application/json", &body)).await
    }

    /// The paths (with query) asked so far, in order.
    pub(crate) fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// A client of this stub.
    pub(crate) fn client(&self) -> lantau_client::RestClient {
        lantau_client::RestClient::new(self.base.clone())
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A deterministic test address.
pub(crate) fn addr(n: u8) -> Address {
    Address([n; 20])
}
