//! The REST server's OpenAPI document, from outside: `GET /openapi.json` is an OpenAPI 3
//! document and `/swagger` serves Swagger UI; then `tests/openapi/run.py` (openapi-spec-validator
//! and schemathesis, in tests/openapi/.venv) validates the document and runs schemathesis
//! against the dev chain, bounded: no 5xx, and every status code, content type and body as the
//! document declares it.

use std::process::Command;

use lantau_primitives::{Coin, NATIVE_DENOM};
use lantau_test_utils::{dev_addr, dev_key, TestNode};
use serde_json::Value;

use crate::support::{ok, send};

fn content_type(r: &reqwest::Response) -> String {
    r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_document_is_served_valid_and_schemathesis_finds_no_5xx_and_no_undeclared_answer() {
    let n = TestNode::start().await.unwrap();
    // One executed transaction, so the tx routes (by hash, search, a block's) have one to render.
    let t = ok(&n, &dev_key("alice"), &send(&dev_addr("alice"), &dev_addr("bob"), Coin::new(NATIVE_DENOM, 1u128))).await;
    eprintln!("a transfer at height {}: {}", t.height, t.txhash);

    let r = reqwest::get(format!("{}/openapi.json", n.rest_url)).await.unwrap();
    let ctype = content_type(&r);
    assert_eq!(r.status(), 200, "GET /openapi.json");
    assert!(ctype.starts_with("application/json"), "GET /openapi.json: content-type {ctype:?}");
    let doc: Value = r.json().await.unwrap();
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")), "not an OpenAPI 3 document: openapi = {}", doc["openapi"]);
    // `/swagger` may redirect to `/swagger/` (reqwest follows it, as a browser does).
    for path in ["/swagger/", "/swagger"] {
        let r = reqwest::get(format!("{}{path}", n.rest_url)).await.unwrap();
        let (status, ctype) = (r.status(), content_type(&r));
        let body = r.text().await.unwrap();
        assert_eq!(status, 200, "GET {path}: {body}");
        assert!(ctype.starts_with("text/html"), "GET {path}: content-type {ctype:?}");
        assert!(body.contains("swagger-ui"), "GET {path}: not Swagger UI:\n{body}");
    }

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/openapi");
    let python = dir.join(".venv/bin/python");
    assert!(python.exists(), "the OpenAPI test's virtualenv is missing: run scripts/prereqs.sh (it installs tests/openapi/requirements.txt)");
    // Off the runtime's workers: the node answers schemathesis from them meanwhile. run.py
    // bounds the run's wall clock itself.
    let (script, url) = (dir.join("run.py"), n.rest_url.clone());
    let out = tokio::task::spawn_blocking(move || Command::new(&python).arg(script).arg(url).output().expect("python runs")).await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "tests/openapi/run.py failed ({}):\n{stdout}\n{stderr}", out.status);
    eprintln!("{stdout}");
    n.stop().await;
}
