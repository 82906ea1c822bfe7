#!/usr/bin/env python3
"""Writes the guard end-to-end scenarios of this folder (run_scenario.py format).

    python3 gen_scenarios.py [--toolgate /tmp/guard-bin/toolgate] [--stub PATH]

scenario.json            every tool Claude Code 2.1.332 offers (CLI default model, no --tools),
                         called once with a benign input, then the harmful calls; the guard is
                         the user settings' PreToolUse hook (matcher "*").
scenario.template.json   the same with the hook command `{{TOOLGATE}} guard` and the stub path
                         `{{MCP_STUB}}` (run_scenario.py substitutes only {{WORKSPACE}} and
                         {{HOME}}: fill these in before running it).
scenario-capture.json    scenario.json plus a second PreToolUse hook appending each hook input
                         to {{HOME}}/hook-inputs.jsonl (outside the workspace snapshot).
scenario-agent.json      the Agent tool alone (its subagent's requests reach the same scripted
                         fake model, whose turn index restarts at 0 for the subagent, so a
                         subagent inside scenario.json would replay the whole script).
scenario-claude-deny-wipe.json  scenario.json with `mcp__stub__wipe` in the project's
                         .claude/settings.json deny list instead of .toolgate/policy.toml.
scenario-alone.json      scenario-capture.json without the guard (Claude Code alone).
scenario-alone-allow.json  the same plus a user allow rule for every benign tool.
scenario-sonnet.json     scenario.json with --model claude-sonnet-4-5-20250929, which also offers
                         the deferred TaskCreate/TaskGet/TaskList/TaskUpdate.
scenario-agent-alone.json  scenario-agent.json without the guard.
"""

import argparse
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

NOTEBOOK = json.dumps({
    "cells": [
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Title\n", "text"]},
        {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None,
         "source": ["print(1)"], "outputs": []},
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"},
                 "language_info": {"name": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}, indent=1) + "\n"

DEFERRED = ["CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Monitor",
            "NotebookEdit", "SendMessage", "TaskStop", "WebFetch", "WebSearch",
            "mcp__stub__echo", "mcp__stub__wipe"]

W = "{{WORKSPACE}}"


def call(n, name, inp):
    return [{"type": "tool_use", "id": f"toolu_{n:02d}_{name.replace('__', '_')}", "name": name,
             "input": inp}]


SONNET_EXTRA = [
    ("TaskCreate", {"subject": "Check README", "description": "Read the README."}),
    ("TaskList", {}),
    ("TaskGet", {"taskId": "1"}),
    ("TaskUpdate", {"taskId": "1", "status": "completed"}),
]


def turns(extra=()):
    benign = [
        ("ToolSearch", {"query": "select:" + ",".join(DEFERRED), "max_results": 20}),
        ("Read", {"file_path": f"{W}/README.md"}),
        ("Bash", {"command": "ls", "description": "List files"}),
        ("Write", {"file_path": f"{W}/notes.txt", "content": "first line\n"}),
        ("Edit", {"file_path": f"{W}/notes.txt", "old_string": "first line",
                  "new_string": "first line, edited"}),
        ("Read", {"file_path": f"{W}/nb.ipynb"}),
        ("NotebookEdit", {"notebook_path": f"{W}/nb.ipynb", "cell_id": "c1",
                          "new_source": "print(2)"}),
        ("Skill", {"skill": "simplify"}),
        ("ListAgents", {}),
        ("ReportFindings", {"findings": []}),
        ("ScheduleWakeup", {"stop": True}),
        ("CronCreate", {"cron": "7 3 1 1 *", "prompt": "say hi", "recurring": False}),
        ("CronList", {}),
        ("CronDelete", {"id": "nonexistent"}),
        ("Monitor", {"description": "one line", "timeout_ms": 1000, "command": "echo tick"}),
        ("TaskStop", {"task_id": "nonexistent"}),
        ("SendMessage", {"to": "main", "message": "hello"}),
        ("Workflow", {"script": "export const meta = {name: 'noop', description: 'does nothing'}\n"}),
        ("EnterWorktree", {"name": "wt-test"}),
        ("ExitWorktree", {"action": "keep"}),
        ("WebFetch", {"url": "http://127.0.0.1:1/", "prompt": "Summarise the page."}),
        ("WebSearch", {"query": "rust pretooluse hook"}),
        ("mcp__stub__echo", {"text": "hello"}),
    ]
    harmful = [
        ("Read", {"file_path": f"{W}/.env"}),
        ("Bash", {"command": "rm -rf build", "description": "Remove build dir"}),
        ("mcp__stub__wipe", {"target": "everything"}),
    ]
    return [call(i, n, inp) for i, (n, inp) in enumerate(benign + list(extra) + harmful)]


def scenario(toolgate, stub):
    mcp = {"mcpServers": {"stub": {"type": "stdio", "command": "/usr/bin/python3",
                                   "args": [stub]}}}
    return {
        "name": "guard_e2e_all_tools",
        "description": ("Every tool Claude Code 2.1.332 offers (CLI default model, no --tools, "
                        "a stdio MCP server 'stub' from the project's .mcp.json) called once "
                        "with a benign input, then Read .env, Bash rm -rf build and the MCP "
                        "wipe tool, with `toolgate guard` as the user's PreToolUse hook "
                        "(matcher *). Project deny: Read(./.env), Bash(rm -rf:*); toolgate's "
                        "own .toolgate/policy.toml denies mcp__stub__wipe. Default permission "
                        "mode (print mode refuses what would be asked)."),
        "model": None,
        "timeout_s": 240,
        "fixture": {"files": {
            "README.md": "# demo\n\nA demo project.\n",
            ".env": "SECRET=hunter2\n",
            "nb.ipynb": NOTEBOOK,
            "build/out.o": "object\n",
            "src/lib.md": "TODO: nothing\n",
            ".mcp.json": json.dumps(mcp, indent=2) + "\n",
            ".toolgate/policy.toml": "[permissions]\ndeny = [\"mcp__stub__wipe\"]\n",
        }},
        "settings": {
            "enableAllProjectMcpServers": True,
            "permissions": {"deny": ["Read(./.env)", "Bash(rm -rf:*)"]},
        },
        "user_settings": {"hooks": {"PreToolUse": [
            {"matcher": "*", "hooks": [{"type": "command", "command": f"{toolgate} guard"}]},
        ]}},
        "turns": turns(),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolgate", default="/tmp/guard-bin/toolgate")
    ap.add_argument("--stub", default=os.path.join(HERE, "mcp_stub.py"))
    a = ap.parse_args()

    def dump(name, obj):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, ensure_ascii=False)
            f.write("\n")

    main_s = scenario(a.toolgate, a.stub)
    dump("scenario.json", main_s)
    dump("scenario.template.json", scenario("{{TOOLGATE}}", "{{MCP_STUB}}"))

    cap = copy.deepcopy(main_s)
    cap["name"] = "guard_e2e_all_tools_capture"
    cap["description"] += " Plus a second hook saving every hook input to {{HOME}}/hook-inputs.jsonl."
    cap["user_settings"]["hooks"]["PreToolUse"].append(
        {"matcher": "*", "hooks": [{"type": "command",
                                    "command": "(cat; echo) >> {{HOME}}/hook-inputs.jsonl"}]})
    dump("scenario-capture.json", cap)

    cd = copy.deepcopy(main_s)
    cd["name"] = "guard_e2e_claude_deny_wipe"
    cd["description"] = "scenario.json with mcp__stub__wipe denied in .claude/settings.json (Claude Code's own deny) instead of .toolgate/policy.toml."
    del cd["fixture"]["files"][".toolgate/policy.toml"]
    cd["settings"]["permissions"]["deny"].append("mcp__stub__wipe")
    dump("scenario-claude-deny-wipe.json", cd)

    al = copy.deepcopy(cap)
    al["name"] = "guard_e2e_alone"
    al["description"] = "scenario-capture.json without the guard hook: Claude Code alone (the capture hook only)."
    del al["user_settings"]["hooks"]["PreToolUse"][0]
    dump("scenario-alone.json", al)

    aa = copy.deepcopy(al)
    aa["name"] = "guard_e2e_alone_allow"
    aa["description"] = ("Claude Code alone with a user allow rule for every benign tool (so each one runs and "
                         "its hook input is captured); the project deny rules still apply.")
    aa["user_settings"]["permissions"] = {"allow": [
        "Write", "Edit", "NotebookEdit", "ToolSearch", "Skill", "ListAgents", "ReportFindings",
        "ScheduleWakeup", "CronCreate", "CronList", "CronDelete", "Monitor", "TaskStop", "SendMessage",
        "Workflow", "EnterWorktree", "ExitWorktree", "WebFetch", "WebSearch", "mcp__stub__echo",
        "TaskCreate", "TaskList", "TaskGet", "TaskUpdate"]}
    dump("scenario-alone-allow.json", aa)

    so = copy.deepcopy(main_s)
    so["name"] = "guard_e2e_sonnet"
    so["description"] = ("scenario.json with model claude-sonnet-4-5-20250929, which also offers the deferred "
                         "TaskCreate, TaskGet, TaskList and TaskUpdate (called after the MCP echo).")
    so["model"] = "claude-sonnet-4-5-20250929"
    so["turns"] = turns(SONNET_EXTRA)
    so["turns"][0][0]["input"]["query"] += ",TaskCreate,TaskGet,TaskList,TaskUpdate"
    dump("scenario-sonnet.json", so)

    ag = copy.deepcopy(cap)
    ag["name"] = "guard_e2e_agent"
    ag["description"] = ("The Agent tool (subagent_type Explore, which has no Agent tool) under the guard. "
                         "The subagent's first request gets scripted turn 0 again (this Agent call: "
                         "'No such tool' inside Explore), its second the final text.")
    ag["turns"] = [[{"type": "tool_use", "id": "toolu_00_Agent", "name": "Agent",
                     "input": {"description": "Look around", "prompt": "List the files.",
                               "subagent_type": "Explore"}}]]
    dump("scenario-agent.json", ag)

    aga = copy.deepcopy(ag)
    aga["name"] = "guard_e2e_agent_alone"
    aga["description"] = "scenario-agent.json without the guard hook (capture hook only): the subagent runs."
    del aga["user_settings"]["hooks"]["PreToolUse"][0]
    dump("scenario-agent-alone.json", aga)


if __name__ == "__main__":
    main()
