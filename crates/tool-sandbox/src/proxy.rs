//! The network filter: an HTTP proxy on the sandbox's loopback (see `netns`), the sandbox's only
//! way out. It takes `CONNECT host:port` (HTTPS and any TCP a client tunnels) and plain HTTP
//! requests with an absolute URI, asks the judge about the host by name, and either relays the
//! connection or answers `403` with the reason. Plain HTTP requests are sent upstream with
//! `Connection: close`, so one connection carries one request to one host.

use std::io::{BufRead as _, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use tool_core::Verdict;
use tool_core::sandbox::RunJudge;

use crate::{Refusal, Resolver, Shared};

/// Longest request head read.
const MAX_HEAD: usize = 64 * 1024;
/// How long an upstream connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

pub(crate) fn system_resolve(host: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
    Ok((host, port).to_socket_addrs()?.collect())
}

/// Accept connections on `listener` until the sandbox ends.
pub(crate) fn serve(
    listener: TcpListener,
    judge: Arc<dyn RunJudge>,
    shared: Arc<Shared>,
    resolve: Arc<Resolver>,
) {
    match listener.try_clone() {
        Ok(kept) => {
            *shared
                .listener
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(kept)
        }
        Err(e) => {
            tracing::warn!(target: "toolgate::sandbox", error = %e, "the network filter's listener cannot be closed early")
        }
    }
    let spawned = std::thread::Builder::new()
        .name("toolgate-sandbox-proxy".into())
        .spawn(move || {
            for conn in listener.incoming() {
                if shared.is_finished() {
                    break;
                }
                let Ok(conn) = conn else {
                    if shared.is_finished() {
                        break;
                    }
                    continue;
                };
                let (judge, shared, resolve) = (judge.clone(), shared.clone(), resolve.clone());
                let _ = std::thread::Builder::new()
                    .name("toolgate-sandbox-proxy-conn".into())
                    .spawn(move || handle(conn, judge.as_ref(), &shared, resolve.as_ref()));
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the sandbox's network filter");
    }
}

/// The request's target: host, port, and for plain HTTP the request head to send upstream.
struct Target {
    host: String,
    port: u16,
    tunnel: bool,
    /// For plain HTTP: the head rewritten to origin form.
    head: Vec<u8>,
}

fn split_host_port(s: &str, default: u16) -> Option<(String, u16)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        return Some((host.to_owned(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h.to_owned(), p.parse().ok()?)),
        Some(_) => None,
        None => Some((s.to_owned(), default)),
    }
}

/// The host as the judge sees it: lower case, no trailing dot.
fn canonical_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn parse(head: &[u8]) -> Result<Target, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "the request is not text")?;
    let mut lines = text.split("\r\n");
    let first = lines.next().ok_or("empty request")?;
    let mut parts = first.split(' ');
    let (method, target, version) = (
        parts.next().ok_or("no method")?,
        parts.next().ok_or("no target")?,
        parts.next().ok_or("no version")?,
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_host_port(target, 443).ok_or("a CONNECT target is host:port")?;
        return Ok(Target {
            host: canonical_host(&host),
            port,
            tunnel: true,
            head: Vec::new(),
        });
    }
    let rest = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("HTTP://"))
        .ok_or("only http:// URLs and CONNECT go through this proxy")?;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    // user:password@ is never the host.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_host_port(authority, 80).ok_or("the URL's host does not parse")?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines {
        if line.is_empty() {
            break;
        }
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "proxy-authorization" | "keep-alive"
        ) {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        host: canonical_host(&host),
        port,
        tunnel: false,
        head: out.into_bytes(),
    })
}

fn read_head(r: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = r
            .by_ref()
            .take(MAX_HEAD as u64)
            .read_until(b'\n', &mut line)
            .ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return None;
        }
        if line == b"\r\n" || line == b"\n" {
            return Some(head);
        }
    }
}

/// Answer with `status` and `body` the way Claude Code's sandbox proxy answers (chunked, with
/// `X-Proxy-Error` when given), then close.
fn refuse(mut conn: TcpStream, status: &str, body: &str, proxy_error: Option<&str>) {
    let marker = proxy_error.map_or(String::new(), |e| format!("X-Proxy-Error: {e}\r\n"));
    let _ = write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n{marker}Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let _ = conn.shutdown(Shutdown::Both);
}

fn handle(conn: TcpStream, judge: &dyn RunJudge, shared: &Shared, resolve: &Resolver) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(60)));
    let Ok(reader_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reader_half);
    let Some(head) = read_head(&mut reader) else {
        return;
    };
    let target = match parse(&head) {
        Ok(t) => t,
        Err(why) => {
            refuse(conn, "400 Bad Request", why, None);
            return;
        }
    };
    let decision = judge.connect(&target.host, target.port);
    if decision.verdict != Verdict::Allow {
        shared.record_refusal(Refusal {
            host: target.host.clone(),
            port: target.port,
            decision,
        });
        refuse(
            conn,
            "403 Forbidden",
            "Connection blocked by network allowlist",
            Some("blocked-by-allowlist"),
        );
        return;
    }
    let upstream = resolve(&target.host, target.port).and_then(|addrs| {
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    });
    let mut upstream = match upstream {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(target: "toolgate::sandbox", host = %target.host, port = target.port, error = %e, "upstream unreachable");
            refuse(conn, "502 Bad Gateway", "Bad Gateway", None);
            return;
        }
    };
    let _ = conn.set_read_timeout(None);
    let mut client = conn;
    if target.tunnel {
        if client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .is_err()
        {
            return;
        }
    } else if upstream.write_all(&target.head).is_err() {
        return;
    }
    // Whatever the client sent after the head is already in the reader's buffer.
    let buffered = reader.buffer().to_vec();
    if !buffered.is_empty() && upstream.write_all(&buffered).is_err() {
        return;
    }
    relay(client.try_clone().ok(), upstream, &mut client);
}

/// Copy both ways until either side closes.
fn relay(client_reader: Option<TcpStream>, upstream: TcpStream, client: &mut TcpStream) {
    let (Some(mut from_client), Ok(mut to_upstream)) = (client_reader, upstream.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .name("toolgate-sandbox-proxy-up".into())
        .spawn(move || {
            let _ = std::io::copy(&mut from_client, &mut to_upstream);
            let _ = to_upstream.shutdown(Shutdown::Write);
        });
    let mut from_upstream = upstream;
    let _ = std::io::copy(&mut from_upstream, client);
    let _ = client.shutdown(Shutdown::Write);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_by_host_name() {
        let t = parse(b"CONNECT Example.COM.:8443 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (t.host.as_str(), t.port, t.tunnel),
            ("example.com", 8443, true)
        );
        let t = parse(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.host.as_str(), t.port), ("::1", 443));
        let t = parse(
            b"GET http://user:pw@evil.example@docs.rs/x?y HTTP/1.1\r\nHost: docs.rs\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.host.as_str(), t.port, t.tunnel), ("docs.rs", 80, false));
        assert_eq!(
            String::from_utf8_lossy(&t.head),
            "GET /x?y HTTP/1.1\r\nHost: docs.rs\r\nConnection: close\r\n\r\n"
        );
        assert!(parse(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse(b"CONNECT a:b:c HTTP/1.1\r\n\r\n").is_err());
    }
}
