//! The lab as a child process on a free port, and plain HTTP to it (shared by the lab's tests).

#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// The lab running as a child process; killed when dropped.
pub struct Lab {
    child: Child,
    pub port: u16,
}

impl Lab {
    pub fn start() -> Lab {
        Lab::start_with(&[])
    }

    /// The lab with more options (`--scenarios DIR`, `--run-timeout-ms N`).
    pub fn start_with(args: &[&str]) -> Lab {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
            .args(["lab", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start cgsim lab");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("lab: listening on http://127.0.0.1:")
            .and_then(|r| r.strip_suffix('/'))
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .unwrap();
        Lab { child, port }
    }

    /// The address of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// One request; returns status, headers and body (read as far as its Content-Length: the
    /// lab may keep the connection open, waiting for a body the request declared).
    pub fn request(&self, raw: &str) -> (u16, String, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = s.read(&mut buf).unwrap();
            out.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&out);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .expect("a Content-Length");
                let _ = body;
                if out.len() >= head.len() + 4 + length || n == 0 {
                    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                    let body = String::from_utf8(out[head.len() + 4..].to_vec()).unwrap();
                    return (status, head.to_string(), body);
                }
            }
            assert!(n > 0, "the lab closed the connection before its answer");
        }
    }

    pub fn get(&self, path: &str) -> (u16, String, String) {
        self.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        ))
    }

    pub fn post(&self, path: &str, body: &str) -> (u16, String, String) {
        self.request(&format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        ))
    }

    pub fn json(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = self.get(path);
        (status, serde_json::from_str(&body).expect("a JSON body"))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cgsim ARGS...`: its stdout, and its exit code.
pub fn cgsim(args: &[&str]) -> (String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_cgsim"))
        .args(args)
        .output()
        .expect("run cgsim");
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

/// Each partition's owner at the end of millisecond `at_ms`, read off a Perfetto trace that
/// `cgsim run --chrome-trace` wrote: a partition's slices are named by who owns and who
/// processes it (`c3`, `c3 (not processing)`, `c1 (owner c3)`, `c1 (no owner)`,
/// `unavailable`); no slice, no owner.
pub fn owners_from_trace(
    trace: &str,
    at_ms: u64,
) -> std::collections::BTreeMap<String, Option<String>> {
    let v: Value = serde_json::from_str(trace).expect("a trace");
    let events = v["traceEvents"].as_array().unwrap();
    let at_us = at_ms * 1000 + 999;
    let mut names = std::collections::BTreeMap::new();
    for e in events {
        if e["ph"] == "M" && e["pid"] == 3 && e["name"] == "thread_name" {
            names.insert(
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            );
        }
    }
    let mut out: std::collections::BTreeMap<String, Option<String>> =
        names.values().map(|n| (n.clone(), None)).collect();
    for e in events {
        if e["ph"] != "X" || e["pid"] != 3 {
            continue;
        }
        let (ts, dur) = (e["ts"].as_u64().unwrap(), e["dur"].as_u64().unwrap());
        if !(ts <= at_us && at_us < ts + dur) {
            continue;
        }
        let name = e["name"].as_str().unwrap();
        let owner = if name == "unavailable" || name.ends_with("(no owner)") {
            None
        } else if let Some((_, o)) = name.split_once(" (owner ") {
            Some(o.trim_end_matches(')').to_string())
        } else {
            Some(name.trim_end_matches(" (not processing)").to_string())
        };
        out.insert(names[&e["tid"].as_u64().unwrap()].clone(), owner);
    }
    out
}
