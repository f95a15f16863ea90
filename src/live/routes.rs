//! What `--metrics` and `--http` answer: `/metrics` (Prometheus's format, OpenMetrics when the
//! scraper asks), `/` (the live page) and `/live.json` (what it polls), read from the board.

use std::sync::Arc;

use hyper::header::{ACCEPT, ALLOW};
use hyper::http::request::Parts;
use hyper::{Method, StatusCode};

use super::board::Board;
use super::{metrics, page};
use crate::http::{Handler, Reply, reply};

/// What an address serves, from one board.
pub(super) struct Routes {
    pub(super) board: Arc<Board>,
    /// `/metrics`.
    pub(super) metrics: bool,
    /// `/` (the live page) and `/live.json` (what it polls).
    pub(super) page: bool,
}

impl Handler for Routes {
    fn respond(&self, head: &Parts, _: &[u8]) -> Reply {
        if head.method != Method::GET && head.method != Method::HEAD {
            let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", b"only GET and HEAD\n".to_vec());
            r.headers_mut().insert(ALLOW, "GET, HEAD".parse().expect("a valid header"));
            return r;
        }
        let head_only = head.method == Method::HEAD;
        let body = |b: Vec<u8>| if head_only { Vec::new() } else { b };
        match head.uri.path() {
            "/metrics" if self.metrics => {
                let accept = head.headers.get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
                let open = accept.contains("application/openmetrics-text");
                let text = metrics::encode(&self.board.now(), open);
                reply(StatusCode::OK, if open { metrics::OPEN_METRICS } else { metrics::TEXT }, body(text))
            }
            "/" if self.page => reply(StatusCode::OK, "text/html; charset=utf-8", body(page::html().into_bytes())),
            "/live.json" if self.page => {
                let after = head
                    .uri
                    .query()
                    .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("after=")))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                reply(StatusCode::OK, "application/json", body(self.board.since(after)))
            }
            _ => reply(StatusCode::NOT_FOUND, "text/plain", b"not found\n".to_vec()),
        }
    }
}
