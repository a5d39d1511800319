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
        let mut child = Command::new(env!("CARGO_BIN_EXE_cgsim"))
            .args(["lab", "--port", "0"])
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

    /// One request; returns status, headers and body.
    pub fn request(&self, raw: &str) -> (u16, String, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").expect("a response head");
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, head.to_string(), body.to_string())
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
