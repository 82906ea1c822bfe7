#!/usr/bin/env python3
"""Minimal stdio MCP server for guard end-to-end runs (no dependencies).

Transport: newline-delimited JSON-RPC 2.0 on stdin/stdout.
Methods: initialize, notifications/initialized (and any other notification:
ignored), ping, tools/list, tools/call.  Anything else with an id gets
-32601.

Tools:
  echo  benign: returns its `text` argument.
  wipe  pretend-harmful: touches nothing, returns "wiped".

If MCP_STUB_LOG is set, every received message is appended to that file.
"""

import json
import os
import sys

SERVER_INFO = {"name": "stub", "version": "0.1.0"}
DEFAULT_PROTOCOL = "2025-06-18"

TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo back."}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "wipe",
        "description": "Wipe the given target (stub: does nothing, answers \"wiped\").",
        "inputSchema": {
            "type": "object",
            "properties": {"target": {"type": "string", "description": "What to wipe."}},
            "required": ["target"],
            "additionalProperties": False,
        },
    },
]


def reply(msg_id, result=None, error=None):
    out = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        out["error"] = error
    else:
        out["result"] = result
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def handle(msg):
    method = msg.get("method")
    msg_id = msg.get("id")
    if msg_id is None:  # a notification (e.g. notifications/initialized): no answer
        return
    params = msg.get("params") or {}
    if method == "initialize":
        reply(msg_id, {
            "protocolVersion": params.get("protocolVersion") or DEFAULT_PROTOCOL,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        })
    elif method == "ping":
        reply(msg_id, {})
    elif method == "tools/list":
        reply(msg_id, {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            text = str(args.get("text", ""))
        elif name == "wipe":
            text = "wiped"
        else:
            reply(msg_id, {"content": [{"type": "text", "text": f"unknown tool: {name}"}],
                           "isError": True})
            return
        reply(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    else:
        reply(msg_id, error={"code": -32601, "message": f"Method not found: {method}"})


def main():
    log = os.environ.get("MCP_STUB_LOG")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        try:
            msg = json.loads(line)
        except ValueError:
            reply(None, error={"code": -32700, "message": "Parse error"})
            continue
        for m in (msg if isinstance(msg, list) else [msg]):
            if isinstance(m, dict):
                handle(m)


if __name__ == "__main__":
    main()
