//! The HTTP side of `--metrics` and `--http`: hyper (HTTP/1.1) on one thread of its own, a
//! tokio runtime of one thread, so a scraper or browser never takes CPU from the workers'
//! threads beyond that one, and a slow or hostile client holds only its own connection:
//! at most [`MAX_CONNECTIONS`] at once (a new one closes the oldest, so clients that keep
//! their connections alive cannot keep a scraper out), [`HEADER_TIMEOUT`] to send a request's
//! head, and [`CONNECTION_LIFE`] in all. The workers and the monitor never wait for it: they
//! update the board, which a request copies under a short lock.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::board::Board;
use super::{metrics, page};
use crate::error::{Result, input};

/// Connections served at once; a new one beyond closes the oldest.
const MAX_CONNECTIONS: usize = 32;
/// A connection closed for a newer one has this long to finish the answer it is sending.
const CLOSING_GRACE: Duration = Duration::from_secs(1);
/// A client has this long to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection (keep-alive included) is closed after this long.
const CONNECTION_LIFE: Duration = Duration::from_secs(60);

/// What an address serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Routes {
    /// `/metrics`.
    pub metrics: bool,
    /// `/` (the live page) and `/live.json` (what it polls).
    pub page: bool,
}

/// `PORT` (on 127.0.0.1) or `ADDR:PORT`, as `flag` was given it.
pub fn parse_addr(flag: &str, text: &str) -> Result<SocketAddr> {
    let bad = || {
        input(format!(
            "{flag} {text}: not a port or ADDR:PORT; give e.g. {flag} 9100 (127.0.0.1) or {flag} 0.0.0.0:9100 (0 picks a free port)"
        ))
    };
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.to_socket_addrs().map_err(|_| bad())?.next().ok_or_else(bad)
}

/// A bound listening socket and what it serves.
pub struct Listener {
    socket: TcpListener,
    routes: Routes,
}

impl Listener {
    /// Binds `addr` now, so a port in use fails before anything is measured.
    pub fn bind(flag: &str, addr: SocketAddr, routes: Routes) -> Result<Listener> {
        let socket = TcpListener::bind(addr).map_err(|e| {
            input(format!("{flag} {addr}: cannot listen there: {e}; give another port (0 picks a free one)"))
        })?;
        Ok(Listener { socket, routes })
    }

    /// The address it listens on (the port 0 picked).
    pub fn addr(&self) -> SocketAddr {
        self.socket.local_addr().expect("a bound socket has an address")
    }
}

/// Serves `listeners` from one new thread until the process ends.
pub fn start(listeners: Vec<Listener>, board: Arc<Board>) -> Result<()> {
    for l in &listeners {
        l.socket.set_nonblocking(true).map_err(|e| input(format!("cannot serve on {}: {e}", l.addr())))?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| input(format!("cannot start the live server: {e}")))?;
    std::thread::Builder::new()
        .name("iogauge-live".into())
        .spawn(move || {
            runtime.block_on(async move {
                let open = Arc::new(Mutex::new(Open::default()));
                let mut accepting = Vec::new();
                for l in listeners {
                    let socket = tokio::net::TcpListener::from_std(l.socket).expect("a non-blocking socket");
                    accepting.push(tokio::spawn(accept(socket, l.routes, Arc::clone(&board), Arc::clone(&open))));
                }
                for a in accepting {
                    let _ = a.await;
                }
            })
        })
        .map_err(|e| input(format!("cannot start the live server's thread: {e}")))?;
    Ok(())
}

/// The connections being served, oldest first, each with what tells it to close.
#[derive(Default)]
struct Open {
    next: u64,
    list: VecDeque<(u64, Arc<tokio::sync::Notify>)>,
}

impl Open {
    /// Takes a new connection in, closing the oldest beyond [`MAX_CONNECTIONS`]: its id, and
    /// what tells it to close in turn.
    fn admit(&mut self) -> (u64, Arc<tokio::sync::Notify>) {
        if self.list.len() >= MAX_CONNECTIONS
            && let Some((_, oldest)) = self.list.pop_front()
        {
            oldest.notify_one();
        }
        let (id, close) = (self.next, Arc::new(tokio::sync::Notify::new()));
        self.next += 1;
        self.list.push_back((id, Arc::clone(&close)));
        (id, close)
    }

    fn ended(&mut self, id: u64) {
        self.list.retain(|(i, _)| *i != id);
    }
}

async fn accept(socket: tokio::net::TcpListener, routes: Routes, board: Arc<Board>, open: Arc<Mutex<Open>>) {
    loop {
        let stream = match socket.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors, say: let some connections end rather than spin.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let (id, close) = open.lock().unwrap_or_else(|e| e.into_inner()).admit();
        let (board, open) = (Arc::clone(&board), Arc::clone(&open));
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let reply = respond(&board, routes, &req);
                async move { Ok::<_, Infallible>(reply) }
            });
            let mut conn = pin!(
                http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
                    .serve_connection(TokioIo::new(stream), service)
            );
            let mut closing = pin!(close.notified());
            let mut life = pin!(tokio::time::sleep(CONNECTION_LIFE));
            let mut told = false;
            std::future::poll_fn(|cx| {
                if !told && closing.as_mut().poll(cx).is_ready() {
                    // A newer connection needs the place: an answer under way may end, then
                    // the connection closes.
                    told = true;
                    conn.as_mut().graceful_shutdown();
                    life.as_mut().reset(tokio::time::Instant::now() + CLOSING_GRACE);
                }
                if life.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(());
                }
                conn.as_mut().poll(cx).map(|_| ())
            })
            .await;
            open.lock().unwrap_or_else(|e| e.into_inner()).ended(id);
        });
    }
}

fn reply(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, content_type.parse().expect("a valid header"));
    h.insert(CACHE_CONTROL, "no-store".parse().expect("a valid header"));
    r
}

/// The answer to one request.
fn respond(board: &Board, routes: Routes, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", b"only GET and HEAD\n".to_vec());
        r.headers_mut().insert(ALLOW, "GET, HEAD".parse().expect("a valid header"));
        return r;
    }
    let head = req.method() == Method::HEAD;
    let body = |b: Vec<u8>| if head { Vec::new() } else { b };
    match req.uri().path() {
        "/metrics" if routes.metrics => {
            let accept = req.headers().get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
            let open = accept.contains("application/openmetrics-text");
            let text = metrics::encode(&board.now(), open);
            reply(StatusCode::OK, if open { metrics::OPEN_METRICS } else { metrics::TEXT }, body(text))
        }
        "/" if routes.page => reply(StatusCode::OK, "text/html; charset=utf-8", body(page::html().into_bytes())),
        "/live.json" if routes.page => {
            let after = req
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("after=")))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            reply(StatusCode::OK, "application/json", body(board.since(after)))
        }
        _ => reply(StatusCode::NOT_FOUND, "text/plain", b"not found\n".to_vec()),
    }
}
