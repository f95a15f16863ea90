//! HTTP serving for `--metrics`, `--http` and `iogauge ui`: hyper (HTTP/1.1) on one thread of
//! its own, a tokio runtime of one thread, so a scraper or browser never takes CPU from the
//! workers' threads beyond that one, and a slow or hostile client holds only its own connection:
//! at most [`MAX_CONNECTIONS`] at once (a new one closes the oldest, so clients that keep
//! their connections alive cannot keep a scraper out), [`HEADER_TIMEOUT`] to send a request's
//! head, [`MAX_BODY`] of body, and [`CONNECTION_LIFE`] in all. What each path answers is a
//! [`Handler`]'s (live/routes.rs, ui/api.rs); a handler that may block (reads a database,
//! probes a device) answers on a thread of a small pool, never on the one that serves.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use crate::error::{Result, input};

/// Connections served at once; a new one beyond closes the oldest.
const MAX_CONNECTIONS: usize = 32;
/// A connection closed for a newer one has this long to finish the answer it is sending.
const CLOSING_GRACE: Duration = Duration::from_secs(1);
/// A client has this long to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection (keep-alive included) is closed after this long.
const CONNECTION_LIFE: Duration = Duration::from_secs(60);
/// The largest request body taken (a job file's limit, with room for its JSON quoting).
const MAX_BODY: usize = 2 * crate::import::MAX_JOB_BYTES as usize;
/// Threads that answer a [`Handler`] that blocks.
const BLOCKING_THREADS: usize = 4;

/// An answer.
pub type Reply = Response<Full<Bytes>>;

/// What a server answers.
pub trait Handler: Send + Sync + 'static {
    /// The answer to a request whose body (at most [`MAX_BODY`]) has been read.
    fn respond(&self, head: &Parts, body: &[u8]) -> Reply;

    /// Whether [`Handler::respond`] may block (files, databases, devices, child processes):
    /// it then runs on a thread of its own, so that other connections are served meanwhile.
    fn blocks(&self) -> bool {
        false
    }
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

/// A bound listening socket and what answers there.
pub struct Listener {
    socket: TcpListener,
    handler: Arc<dyn Handler>,
}

impl Listener {
    /// Binds `addr` now, so a port in use fails before anything is measured.
    pub fn bind(flag: &str, addr: SocketAddr, handler: Arc<dyn Handler>) -> Result<Listener> {
        let socket = TcpListener::bind(addr).map_err(|e| {
            input(format!("{flag} {addr}: cannot listen there: {e}; give another port (0 picks a free one)"))
        })?;
        Ok(Listener { socket, handler })
    }

    /// The address it listens on (the port 0 picked).
    pub fn addr(&self) -> SocketAddr {
        self.socket.local_addr().expect("a bound socket has an address")
    }
}

/// Serves `listeners` from one new thread until the process ends.
pub fn start(listeners: Vec<Listener>) -> Result<()> {
    for l in &listeners {
        l.socket.set_nonblocking(true).map_err(|e| input(format!("cannot serve on {}: {e}", l.addr())))?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .map_err(|e| input(format!("cannot start the HTTP server: {e}")))?;
    std::thread::Builder::new()
        .name("iogauge-http".into())
        .spawn(move || {
            runtime.block_on(async move {
                let open = Arc::new(Mutex::new(Open::default()));
                let mut accepting = Vec::new();
                for l in listeners {
                    let socket = tokio::net::TcpListener::from_std(l.socket).expect("a non-blocking socket");
                    accepting.push(tokio::spawn(accept(socket, l.handler, Arc::clone(&open))));
                }
                for a in accepting {
                    let _ = a.await;
                }
            })
        })
        .map_err(|e| input(format!("cannot start the HTTP server's thread: {e}")))?;
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

async fn accept(socket: tokio::net::TcpListener, handler: Arc<dyn Handler>, open: Arc<Mutex<Open>>) {
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
        let (handler, open) = (Arc::clone(&handler), Arc::clone(&open));
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(Arc::clone(&handler), req));
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

/// Reads a request's body and has `handler` answer it.
async fn answer(handler: Arc<dyn Handler>, req: Request<Incoming>) -> std::result::Result<Reply, Infallible> {
    let (head, body) = req.into_parts();
    let Ok(body) = Limited::new(body, MAX_BODY).collect().await.map(|b| b.to_bytes()) else {
        return Ok(reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            b"request body too large or cut short\n".to_vec(),
        ));
    };
    if !handler.blocks() {
        return Ok(handler.respond(&head, &body));
    }
    let answered = tokio::task::spawn_blocking(move || handler.respond(&head, &body)).await;
    Ok(answered
        .unwrap_or_else(|_| reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", b"the answer failed\n".to_vec())))
}

/// An answer of `status` with `body`, never cached.
pub fn reply(status: StatusCode, content_type: &str, body: Vec<u8>) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, content_type.parse().expect("a valid header"));
    h.insert(CACHE_CONTROL, "no-store".parse().expect("a valid header"));
    r
}
