//! A scripted stand-in for the Anthropic Messages API, on loopback only.
//!
//! A `POST /v1/messages` whose body offers tools is a main-loop request: it is answered with
//! the scenario's turn number *k*, where *k* is the number of assistant messages the request
//! already holds (so a retried request gets the same turn). Past the last turn the answer is
//! `final_text` ("Done.") with `end_turn`. A request without tools (a helper call) gets
//! `side_response_text`. Before turn *k* is first served, its `before_turn` actions change the
//! workspace. Every request is kept in the log, in arrival order, with a sequence number that
//! `before_turn` entries share.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// The model named in answers when a request names none.
const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The largest request head or body read (a whole conversation of large reads fits).
const MAX_BODY: usize = 256 << 20;

/// The scripted turns and the log of what was asked.
#[derive(Debug)]
pub(crate) struct Script {
    turns: Vec<Value>,
    workspace: PathBuf,
    final_text: String,
    side_text: String,
    input_tokens: u64,
    before_done: Mutex<HashSet<usize>>,
    log: Mutex<Vec<Value>>,
    ids: AtomicU64,
}

impl Script {
    /// The script of `scenario` (placeholders already replaced), acting on `workspace`.
    pub(crate) fn new(scenario: &Value, workspace: PathBuf) -> anyhow::Result<Self> {
        let turns = scenario
            .get("turns")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, t)| match t {
                Value::Array(_) => Ok(json!({ "content": t })),
                Value::Object(o) if o.contains_key("content") => Ok(t.clone()),
                _ => bail!("turn {i} is neither a list of blocks nor an object with `content`"),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let text = |key: &str, default: &str| {
            scenario
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or(default)
                .to_owned()
        };
        Ok(Self {
            turns,
            workspace,
            final_text: text("final_text", "Done."),
            side_text: text("side_response_text", ""),
            input_tokens: scenario
                .get("usage_input_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(1000),
            before_done: Mutex::new(HashSet::new()),
            log: Mutex::new(Vec::new()),
            ids: AtomicU64::new(0),
        })
    }

    /// Everything logged so far, in order.
    pub(crate) fn log(&self) -> Vec<Value> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn push(&self, mut entry: Value) {
        if let Ok(mut log) = self.log.lock() {
            entry["seq"] = Value::from(log.len() as u64 + 1);
            log.push(entry);
        }
    }

    /// A fresh hex string for ids (unique in this run).
    fn fresh(&self, len: usize) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let hex = format!(
            "{:016x}{:016x}",
            nanos as u64,
            n.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        );
        hex[hex.len() - len.min(hex.len())..].to_owned()
    }

    /// Apply turn `idx`'s `before_turn` actions, once.
    fn before_turn(&self, idx: usize) {
        let Ok(mut done) = self.before_done.lock() else {
            return;
        };
        if !done.insert(idx) {
            return;
        }
        drop(done);
        let actions = self
            .turns
            .get(idx)
            .and_then(|t| t.get("before_turn"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if actions.is_empty() {
            return;
        }
        let results: Vec<String> = actions
            .iter()
            .map(
                |a| match toolgate::scenario::apply_action(&self.workspace, a) {
                    Ok(()) => "ok".to_owned(),
                    Err(e) => format!("error: {e}"),
                },
            )
            .collect();
        self.push(json!({"kind": "before_turn", "turn_index": idx, "actions": actions, "results": results}));
    }

    /// The answer to a `/v1/messages` body: kind, turn index, blocks, stop reason.
    fn pick(&self, body: &Value) -> (&'static str, Option<usize>, Vec<Value>, String) {
        let offers_tools = body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        if !offers_tools {
            return (
                "side",
                None,
                vec![json!({"type": "text", "text": self.side_text})],
                "end_turn".into(),
            );
        }
        let idx = body
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .count();
        let Some(turn) = self.turns.get(idx) else {
            return (
                "main",
                Some(idx),
                vec![json!({"type": "text", "text": self.final_text})],
                "end_turn".into(),
            );
        };
        self.before_turn(idx);
        let blocks = turn
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let has_tool = blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
        let stop = turn
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| if has_tool { "tool_use" } else { "end_turn" }.to_owned());
        ("main", Some(idx), blocks, stop)
    }
}

/// A running server; stops when dropped.
#[derive(Debug)]
pub(crate) struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Serve `script` on 127.0.0.1 at a free port.
    pub(crate) fn start(script: Arc<Script>) -> anyhow::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .context("binding the fake Messages API to 127.0.0.1")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("fake-api".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let script = Arc::clone(&script);
                    let _ = std::thread::Builder::new()
                        .name("fake-api-conn".into())
                        .spawn(move || serve(&script, conn));
                }
            })?;
        Ok(Self { port, stop })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)));
    }
}

/// One request as read off the wire.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Serve one connection's requests until it closes.
fn serve(script: &Script, conn: TcpStream) {
    let Ok(writer) = conn.try_clone() else {
        return;
    };
    let mut writer = writer;
    let mut reader = BufReader::new(conn);
    loop {
        let request = match read_request(&mut reader, &mut writer) {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => return,
        };
        let close = request
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let (status, content_type, payload) = answer(script, &request);
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nrequest-id: req_fake_{}\r\nCache-Control: no-cache\r\n{}\r\n",
            payload.len(),
            script.fresh(16),
            if close { "Connection: close\r\n" } else { "" },
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(&payload).is_err()
            || writer.flush().is_err()
            || close
        {
            return;
        }
    }
}

/// Read one request; `None` when the peer closed the connection between requests.
fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> anyhow::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        bail!("bad request line {line:?}");
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    let mut head_size = line.len();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            bail!("connection closed in the request head");
        }
        head_size += h.len();
        if head_size > 1 << 20 {
            bail!("request head too large");
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .context("bad chunk size")?;
            if request.body.len() + size > MAX_BODY {
                bail!("request body too large");
            }
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    let mut t = String::new();
                    if reader.read_line(&mut t)? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = request.body.len();
            request.body.resize(start + size, 0);
            reader.read_exact(&mut request.body[start..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    } else if let Some(n) = request.header("content-length") {
        let n: usize = n.parse().context("bad Content-Length")?;
        if n > MAX_BODY {
            bail!("request body too large");
        }
        request.body.resize(n, 0);
        reader.read_exact(&mut request.body)?;
    }
    Ok(Some(request))
}

/// Status line, content type and payload for one request; the request is logged.
fn answer(script: &Script, r: &Request) -> (&'static str, &'static str, Vec<u8>) {
    let path = r.path.split(['?', '#']).next().unwrap_or("").to_owned();
    let body: Option<Value> = serde_json::from_slice(&r.body).ok();
    let mut entry = json!({"method": r.method, "path": r.path});
    match &body {
        Some(b) => entry["body"] = b.clone(),
        None if !r.body.is_empty() => {
            entry["raw_body"] = Value::from(String::from_utf8_lossy(&r.body).into_owned());
        }
        None => {}
    }
    let not_found = |what: &str| {
        let e = json!({"type": "error", "error": {"type": "not_found_error", "message": format!("fake API: no {} {what}", r.method)}});
        (
            "404 Not Found",
            "application/json",
            e.to_string().into_bytes(),
        )
    };
    match (r.method.as_str(), path.as_str(), &body) {
        ("POST", "/v1/messages", Some(b)) if b.is_object() => {
            let (kind, idx, blocks, stop) = script.pick(b);
            entry["kind"] = kind.into();
            entry["turn_index"] = idx.map_or(Value::Null, Value::from);
            entry["reply_blocks"] = Value::Array(blocks.clone());
            entry["reply_stop_reason"] = stop.clone().into();
            script.push(entry);
            let model = b
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(DEFAULT_MODEL);
            let id = format!("msg_fake_{}", script.fresh(20));
            if b.get("stream").and_then(Value::as_bool) == Some(true) {
                let payload = stream(script, &blocks, &stop, model, &id);
                ("200 OK", "text/event-stream; charset=utf-8", payload)
            } else {
                let message = whole(script, &blocks, &stop, model, &id);
                (
                    "200 OK",
                    "application/json",
                    message.to_string().into_bytes(),
                )
            }
        }
        ("POST", "/v1/messages/count_tokens", _) => {
            entry["kind"] = "count_tokens".into();
            // The reference harness's rough estimate: a quarter of the length of the body as
            // Python's `json.dumps` writes it (the CLI quotes the figure in its texts).
            let tokens = (body.as_ref().map_or(4, python_json_len) / 4).max(1);
            script.push(entry);
            (
                "200 OK",
                "application/json",
                json!({"input_tokens": tokens}).to_string().into_bytes(),
            )
        }
        ("GET", "/v1/models", _) => {
            script.push(entry);
            let m = json!({"type": "model", "id": DEFAULT_MODEL, "display_name": "Fake", "created_at": "2025-01-01T00:00:00Z"});
            let list = json!({"data": [m], "has_more": false, "first_id": DEFAULT_MODEL, "last_id": DEFAULT_MODEL});
            ("200 OK", "application/json", list.to_string().into_bytes())
        }
        ("GET", p, _) if p.starts_with("/v1/models/") => {
            script.push(entry);
            let id = p.rsplit('/').next().unwrap_or(DEFAULT_MODEL);
            let m = json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"});
            ("200 OK", "application/json", m.to_string().into_bytes())
        }
        ("HEAD", _, _) => {
            script.push(entry);
            ("200 OK", "text/plain", Vec::new())
        }
        _ => {
            entry["kind"] = "other".into();
            script.push(entry);
            not_found(&path)
        }
    }
}

/// The text a `tool_use` block's input streams as: `raw_input_json` verbatim, or its input
/// written as Python's `json.dumps` writes it (the reference harness's spacing).
fn input_text(block: &Value) -> String {
    if let Some(raw) = block.get("raw_input_json").and_then(Value::as_str) {
        return raw.to_owned();
    }
    spaced_json(block.get("input").unwrap_or(&json!({})))
}

/// JSON with `", "` between items and `": "` after keys.
pub(crate) fn spaced_json(v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(spaced_json).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), spaced_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The length of `v` as Python's `json.dumps(v)` writes it: `", "` and `": "` between items,
/// everything outside ASCII escaped as `\\uXXXX` (two escapes past the Basic Multilingual
/// Plane), floats as Python prints them.
fn python_json_len(v: &Value) -> usize {
    fn string_len(s: &str) -> usize {
        2 + s
            .chars()
            .map(|c| match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                c if (c as u32) < 0x20 => 6,
                c if c.is_ascii() => 1,
                c => 6 * c.len_utf16(),
            })
            .sum::<usize>()
    }
    match v {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => {
            let text = n.to_string();
            if n.is_f64() {
                let mut t = format!("{:?}", n.as_f64().unwrap_or_default());
                if let Some(i) = t.find('e')
                    && !t[i + 1..].starts_with('-')
                {
                    t.insert(i + 1, '+');
                }
                t.len()
            } else {
                text.len()
            }
        }
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            2 + items.iter().map(python_json_len).sum::<usize>() + 2 * items.len().saturating_sub(1)
        }
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, v)| string_len(k) + 2 + python_json_len(v))
                .sum::<usize>()
                + 2 * o.len().saturating_sub(1)
        }
    }
}

fn tool_use_id(script: &Script, block: &Value) -> String {
    block
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("toolu_{}", script.fresh(24)), str::to_owned)
}

/// The answer as server-sent events, as the API streams it.
fn stream(script: &Script, blocks: &[Value], stop: &str, model: &str, id: &str) -> Vec<u8> {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": script.input_tokens, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    );
    event("ping", json!({"type": "ping"}));
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let start = json!({"type": "tool_use", "id": tool_use_id(script, b),
                                   "name": b.get("name").cloned().unwrap_or(Value::Null), "input": {}});
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": start}),
                );
                let raw = input_text(b);
                // Two chunks, as the API streams partial JSON.
                let mut cut = raw.len() / 2;
                while !raw.is_char_boundary(cut) {
                    cut -= 1;
                }
                for chunk in [&raw[..cut], &raw[cut..]] {
                    if !chunk.is_empty() {
                        event(
                            "content_block_delta",
                            json!({"type": "content_block_delta", "index": i,
                                   "delta": {"type": "input_json_delta", "partial_json": chunk}}),
                        );
                    }
                }
            }
            _ => {
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i,
                           "content_block": {"type": "text", "text": ""}}),
                );
                let text = b.get("text").and_then(Value::as_str).unwrap_or("");
                if !text.is_empty() {
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": i,
                               "delta": {"type": "text_delta", "text": text}}),
                    );
                }
            }
        }
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out.into_bytes()
}

/// The answer as one JSON message.
fn whole(script: &Script, blocks: &[Value], stop: &str, model: &str, id: &str) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let input = match b.get("raw_input_json").and_then(Value::as_str) {
                    Some(raw) => serde_json::from_str(raw).unwrap_or_else(|_| json!({})),
                    None => b.get("input").cloned().unwrap_or_else(|| json!({})),
                };
                json!({"type": "tool_use", "id": tool_use_id(script, b),
                       "name": b.get("name").cloned().unwrap_or(Value::Null), "input": input})
            }
            _ => {
                json!({"type": "text", "text": b.get("text").and_then(Value::as_str).unwrap_or("")})
            }
        })
        .collect();
    json!({"id": id, "type": "message", "role": "assistant", "model": model,
           "content": content, "stop_reason": stop, "stop_sequence": null,
           "usage": {"input_tokens": script.input_tokens, "output_tokens": 10,
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(port: u16, body: &Value) -> String {
        let mut s =
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap_or_else(|e| panic!("{e}"));
        let text = body.to_string();
        let req = format!(
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        s.write_all(req.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap_or_else(|e| panic!("{e}"));
        out
    }

    /// The `input_json_delta` chunks of a streamed answer, joined.
    fn joined_input(answer: &str) -> String {
        answer
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| {
                v.pointer("/delta/partial_json")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }

    #[test]
    fn python_lengths() {
        // Lengths of `json.dumps` of these values, as Python 3 gives them.
        let cases = [
            (json!({"a": [1, 2.5, null, true], "b": "x\"y"}), 40),
            (json!("é😀\n\u{1}"), 2 + 6 + 12 + 2 + 6),
            (json!([1e20, 100.0]), 14),
            (json!({}), 2),
        ];
        for (v, want) in cases {
            assert_eq!(python_json_len(&v), want, "{v}");
        }
    }

    #[test]
    fn turns_follow_the_assistant_messages_and_before_turn_runs_once() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let scenario = json!({"turns": [
            [{"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "/x/é"}}],
            {"before_turn": [{"op": "write", "path": "f.txt", "content": "new"}],
             "content": [{"type": "tool_use", "id": "toolu_b", "name": "Bash", "raw_input_json": "{\"command\": "}]}
        ]});
        let script = Arc::new(
            Script::new(&scenario, ws.path().to_path_buf()).unwrap_or_else(|e| panic!("{e}")),
        );
        let server = Server::start(Arc::clone(&script)).unwrap_or_else(|e| panic!("{e}"));
        let first = post(
            server.port(),
            &json!({"stream": true, "tools": [{}], "messages": [{"role": "user", "content": "go"}]}),
        );
        assert!(first.contains("\"id\":\"toolu_a\""), "{first}");
        assert!(first.contains("stop_reason\":\"tool_use"), "{first}");
        // The input streams in two chunks that join to Python's spacing.
        assert_eq!(joined_input(&first), "{\"file_path\": \"/x/é\"}");
        assert!(!ws.path().join("f.txt").exists());
        let second_body = json!({"stream": true, "tools": [{}], "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": []}, {"role": "user", "content": []}]});
        let second = post(server.port(), &second_body);
        assert_eq!(joined_input(&second), "{\"command\": ");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("f.txt")).unwrap_or_default(),
            "new"
        );
        // A retry does not apply the actions again.
        std::fs::write(ws.path().join("f.txt"), "kept").unwrap_or_else(|e| panic!("{e}"));
        post(server.port(), &second_body);
        assert_eq!(
            std::fs::read_to_string(ws.path().join("f.txt")).unwrap_or_default(),
            "kept"
        );
        let past = post(
            server.port(),
            &json!({"tools": [{}], "messages": [
            {"role": "assistant"}, {"role": "assistant"}, {"role": "assistant"}]}),
        );
        assert!(
            past.contains("\"text\":\"Done.\"") && past.contains("end_turn"),
            "{past}"
        );
        let side = post(server.port(), &json!({"messages": []}));
        assert!(
            side.contains("end_turn") && !side.contains("tool_use"),
            "{side}"
        );
        let kinds: Vec<String> = script
            .log()
            .iter()
            .map(|e| format!("{}:{}", e["seq"], e["kind"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(
            kinds,
            [
                "1:main",
                "2:before_turn",
                "3:main",
                "4:main",
                "5:main",
                "6:side"
            ]
        );
    }
}
