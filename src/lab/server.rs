//! The lab's HTTP side: two pages, their assets and the JSON API, on 127.0.0.1 only.
//!
//! Requests are answered by a few threads taking turns at tiny_http's queue. The assignment
//! table's handlers are pure functions of the request (`api`); the rebalance view's share the
//! scenario folder and the runner (`runs`: bounded runs, a few at a time, the recent ones
//! kept). The Host header must name the loopback address the lab listens on, so a web page
//! elsewhere cannot reach it through a DNS name rebound to 127.0.0.1. Every request's body is
//! bounded before any of it is read.

use super::api::{self, ApiError, MAX_BODY_BYTES, MAX_URL_BYTES};
use super::limits::{RunLimits, MAX_REQUEST_BODY_BYTES};
use super::rebalance::{self, Spec};
use super::runs::Runner;
use super::scenarios::ScenarioDir;
use serde_json::Value;
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use tiny_http::{Header, Method, Request, Response, Server};

const INDEX_HTML: &str = include_str!("assets/index.html");
const LAB_JS: &str = include_str!("assets/lab.js");
const LAB_CSS: &str = include_str!("assets/lab.css");
const REBALANCE_HTML: &str = include_str!("assets/rebalance.html");
const REBALANCE_JS: &str = include_str!("assets/rebalance.js");

/// How the lab was started: where its scenarios are, and its runs' bounds.
#[derive(Clone, Debug)]
pub struct Config {
    pub scenarios: PathBuf,
    pub run_limits: RunLimits,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            scenarios: PathBuf::from("scenarios"),
            run_limits: RunLimits::default(),
        }
    }
}

/// Threads answering requests: the page's assets and API call arrive together.
const WORKERS: usize = 4;

/// A bound lab server.
pub struct Lab {
    server: Server,
    port: u16,
    dir: ScenarioDir,
    runner: Runner,
}

impl Lab {
    /// Listens on 127.0.0.1:`port` (0: a free port the system picks).
    pub fn bind(port: u16, config: Config) -> Result<Lab, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot read the address listened on: {e}"))?
            .port();
        let server = Server::from_listener(listener, None)
            .map_err(|e| format!("cannot serve on 127.0.0.1:{port}: {e}"))?;
        Ok(Lab {
            server,
            port,
            dir: ScenarioDir::new(config.scenarios),
            runner: Runner::new(config.run_limits),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Answers requests until the process ends.
    pub fn serve(&self) {
        std::thread::scope(|s| {
            for _ in 0..WORKERS {
                s.spawn(|| {
                    for request in self.server.incoming_requests() {
                        // A client that hung up before its answer is no concern of the others.
                        let _ = answer(request, self);
                    }
                });
            }
        });
    }
}

/// What a request gets back: status, content type, body (and, for a download, its file name).
struct Reply {
    status: u16,
    content_type: &'static str,
    body: String,
    download: Option<String>,
}

impl Reply {
    fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: serde_json::to_string_pretty(value).expect("JSON serializes"),
            download: None,
        }
    }

    fn download(content_type: &'static str, d: rebalance::Download) -> Reply {
        Reply {
            status: 200,
            content_type,
            body: d.body,
            download: Some(d.file_name),
        }
    }

    fn error(e: &ApiError) -> Reply {
        Reply::json(e.status, &e.to_json())
    }

    fn asset(content_type: &'static str, body: &str) -> Reply {
        Reply {
            status: 200,
            content_type,
            body: body.to_string(),
            download: None,
        }
    }
}

fn answer(mut request: Request, lab: &Lab) -> std::io::Result<()> {
    let reply = route(&mut request, lab);
    let header = |k: &str, v: &str| Header::from_bytes(k, v).expect("an ASCII header");
    let mut response = Response::from_string(reply.body)
        .with_status_code(reply.status)
        // Content-Length rather than chunks: the simplest client reads the body as it is.
        .with_chunked_threshold(usize::MAX)
        .with_header(header(
            "Content-Type",
            &format!("{}; charset=utf-8", reply.content_type),
        ))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"));
    if let Some(name) = &reply.download {
        response.add_header(header(
            "Content-Disposition",
            &format!("attachment; filename=\"{name}\""),
        ));
    }
    if reply.status == 503 {
        response.add_header(header("Retry-After", "5"));
    }
    if reply.status == 405 {
        let allow = if request.url().starts_with("/api/assign") {
            "POST"
        } else {
            "GET"
        };
        response.add_header(header("Allow", allow));
    }
    // tiny_http reads what is left of a request's body after the answer, before the
    // connection is free: a client that declares a body and sends it slowly (or never) would
    // hold this worker. Such answers go out on a thread of their own (a few at most).
    let has_body = request.body_length().is_some_and(|n| n > 0)
        || request
            .headers()
            .iter()
            .any(|h| h.field.equiv("Transfer-Encoding"));
    let read_whole = request.method() == &Method::Post
        && request.url().starts_with("/api/assign")
        && reply.status < 400;
    if !has_body || read_whole {
        return request.respond(response);
    }
    response.add_header(header("Connection", "close"));
    if DRAINING.fetch_add(1, Ordering::SeqCst) >= MAX_DRAINING {
        DRAINING.fetch_sub(1, Ordering::SeqCst);
        return request.respond(response);
    }
    std::thread::spawn(move || {
        let _ = request.respond(response);
        DRAINING.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(())
}

/// Answers whose request body is still being read and dropped (see [`answer`]).
static DRAINING: AtomicUsize = AtomicUsize::new(0);
const MAX_DRAINING: usize = 32;

fn route(request: &mut Request, lab: &Lab) -> Reply {
    let port = lab.port;
    let refuse = |status: u16, field: Option<&str>, message: String| {
        Reply::error(&ApiError {
            status,
            field: field.map(str::to_string),
            message,
        })
    };
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_string());
    let allowed = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !host.as_ref().is_some_and(|h| allowed.contains(h)) {
        return refuse(
            403,
            None,
            format!(
                "the lab answers only requests for http://127.0.0.1:{port}/ (Host was {host:?})"
            ),
        );
    }
    let url = request.url().to_string();
    if url.len() > MAX_URL_BYTES {
        return refuse(
            414,
            Some("query"),
            format!(
                "the address is {} bytes long: the lab takes at most {MAX_URL_BYTES}",
                url.len()
            ),
        );
    }
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    // Every body is bounded before any of it is read; only POST /api/assign reads one.
    let limit = if path == "/api/assign" {
        MAX_BODY_BYTES
    } else {
        MAX_REQUEST_BODY_BYTES
    };
    if let Some(n) = request.body_length().filter(|&n| n > limit) {
        return refuse(
            413,
            Some("body"),
            format!("the body is {n} bytes: the lab takes at most {limit} on {path}"),
        );
    }
    let get = request.method() == &Method::Get || request.method() == &Method::Head;
    let json = |r: Result<Value, ApiError>| match r {
        Ok(v) => Reply::json(200, &v),
        Err(e) => Reply::error(&e),
    };
    let spec = || Spec::parse(query, &lab.dir);
    let wrong_method = |allowed: &str| {
        refuse(
            405,
            None,
            format!("{path} takes {allowed}, not {}", request.method()),
        )
    };
    match path {
        "/" | "/index.html" if get => Reply::asset("text/html", INDEX_HTML),
        "/lab.js" if get => Reply::asset("text/javascript", LAB_JS),
        "/lab.css" if get => Reply::asset("text/css", LAB_CSS),
        "/rebalance" if get => Reply::asset("text/html", REBALANCE_HTML),
        "/rebalance.js" if get => Reply::asset("text/javascript", REBALANCE_JS),
        "/api/info" if get => {
            let mut info = api::info();
            info["rebalance"] = rebalance::info();
            Reply::json(200, &info)
        }
        "/api/scenarios" if get => Reply::json(200, &rebalance::scenario_list(&lab.dir)),
        "/api/scenario" if get => json(rebalance::scenario_text(query, &lab.dir)),
        "/api/runs" if get => json(spec().and_then(|s| rebalance::runs(&s, &lab.runner))),
        "/api/instant" if get => json(spec().and_then(|s| rebalance::instant(&s, &lab.runner))),
        "/api/scenario.toml" if get => match spec() {
            Ok(s) => Reply::download("application/toml", rebalance::scenario_toml(&s)),
            Err(e) => Reply::error(&e),
        },
        "/api/report.json" if get => {
            match spec().and_then(|s| rebalance::report_json(&s, &lab.runner)) {
                Ok(d) => Reply::download("application/json", d),
                Err(e) => Reply::error(&e),
            }
        }
        "/api/trace.json" if get => {
            match spec().and_then(|s| rebalance::trace_json(&s, &lab.runner)) {
                Ok(d) => Reply::download("application/json", d),
                Err(e) => Reply::error(&e),
            }
        }
        "/api/table" if get => match api::table(query) {
            Ok(v) => Reply::json(200, &v),
            Err(e) => Reply::error(&e),
        },
        "/api/assign" if request.method() == &Method::Post => match read_body(request) {
            Ok(body) => match api::assign(&body) {
                Ok(v) => Reply::json(200, &v),
                Err(e) => Reply::error(&e),
            },
            Err(e) => Reply::error(&e),
        },
        "/api/assign" => wrong_method("POST"),
        "/" | "/index.html" | "/lab.js" | "/lab.css" | "/api/info" | "/api/table"
        | "/rebalance" | "/rebalance.js" | "/api/scenarios" | "/api/scenario" | "/api/runs"
        | "/api/instant" | "/api/scenario.toml" | "/api/report.json" | "/api/trace.json" => {
            wrong_method("GET")
        }
        _ => refuse(404, None, format!("nothing at {path}")),
    }
}

/// The body, refused above [`MAX_BODY_BYTES`] before more than that is read.
fn read_body(request: &mut Request) -> Result<String, ApiError> {
    let too_large = |n: String| {
        ApiError::too_large(
            "body",
            format!("the body is {n} bytes: the lab takes at most {MAX_BODY_BYTES}"),
        )
    };
    if let Some(n) = request.body_length().filter(|&n| n > MAX_BODY_BYTES) {
        return Err(too_large(n.to_string()));
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| ApiError::bad("body", format!("cannot read the body: {e}")))?;
    if body.len() > MAX_BODY_BYTES {
        return Err(too_large(format!("more than {MAX_BODY_BYTES}")));
    }
    String::from_utf8(body).map_err(|_| ApiError::bad("body", "the body is not UTF-8"))
}
