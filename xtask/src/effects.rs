//! `cargo xtask security --effects [--assume-allow] [--cases PATH]`: run the Bash cases of the
//! security corpora for real, each in a world staged for it, and check what the command
//! actually did, not what was decided about it.
//!
//! Each case runs in a container of its own (bubblewrap, in a user namespace of its own, with
//! no network): the host's directories read-only, and the case's world at the paths it names
//! (`/w/p` the project, `/home/u` the home, `/tmp`), staged on the host: a small git
//! repository, agent and shell configuration, dummy secrets (a unique marker per file) at every
//! path a Read deny rule covers and every path the command names. The programs Bash deny rules
//! name are replaced by stand-ins (`effects-stub`) that note they ran and then run the real
//! program. Host names the command names resolve to loopback addresses of the container, where
//! a listener notes every connection that gets through. Inside, the case goes through toolgate's
//! own pipeline (with `--assume-allow`, a policy that allows every call, so only the sandbox
//! and the supervisor stand between the command and its effect).
//!
//! An effect is harmful when it breaks a deny rule (a denied file's marker in the output, a
//! denied program that ran, a denied path changed), a protected path, the working-directory
//! boundary for writes, or the network policy. A change inside the project that only needed a
//! prompt is counted and listed apart. The run ends with `N cases run, N harmful effects`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Value, json};
use tool_core::{PermissionPolicy as _, RuleList, ToolContext, Verdict};

/// Ports the container's listener answers on.
const PORTS: &[u16] = &[80, 443, 8080, 8443, 21, 22, 25, 4444, 1337, 9000];
/// How long a case's command may run.
const COMMAND_TIMEOUT_MS: u64 = 15_000;
/// The marker dummy secrets carry.
const SECRET: &str = "TOOLGATE-SECRET";

/// How the effects run goes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// Allow every call: only the sandbox and the supervisor stand in the way.
    pub assume_allow: bool,
    /// Run the commands without the sandbox (to see that the cases' attacks do harm when
    /// nothing stops them: the harness's own check).
    pub unconfined: bool,
}

/// What became of one case.
enum Effects {
    /// It could not be staged, and why.
    Skipped(String),
    /// It ran: the harmful effects, and those that only needed a prompt.
    Ran {
        harmful: Vec<String>,
        prompt_only: Vec<String>,
    },
}

/// The world's files: what each path held, to compare before and after.
type Snapshot = BTreeMap<PathBuf, String>;

fn snapshot(root: &Path) -> Snapshot {
    fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let virt = Path::new("/").join(p.strip_prefix(root).unwrap_or(&p));
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap_or_default();
                out.insert(virt, format!("-> {}", t.display()));
            } else if m.is_dir() {
                out.insert(virt, "dir".into());
                walk(root, &p, out);
            } else if !m.is_file() {
                // A FIFO, socket or device: its kind, never opened (a FIFO's open would wait
                // for a writer).
                use std::os::unix::fs::FileTypeExt as _;
                let ft = m.file_type();
                let kind = if ft.is_fifo() {
                    "fifo"
                } else if ft.is_socket() {
                    "socket"
                } else {
                    "device"
                };
                out.insert(virt, kind.into());
            } else {
                use sha2::Digest as _;
                let bytes = std::fs::read(&p).unwrap_or_default();
                let h = sha2::Sha256::digest(&bytes);
                use std::os::unix::fs::PermissionsExt as _;
                out.insert(
                    virt,
                    format!("{:x} {:o}", h, m.permissions().mode() & 0o7777),
                );
            }
        }
    }
    let mut out = Snapshot::new();
    walk(root, root, &mut out);
    out
}

/// The policy a case names, as the engine builds it (paths as the case writes them: inside the
/// container they are real).
fn case_policy(case: &Value, trusted: bool) -> Result<tool_permissions::Policy, String> {
    let policy = &case["policy"];
    let mut b = tool_permissions::PolicyBuilder::new();
    b.trust_project(trusted);
    for (key, list) in [
        ("allow", RuleList::Allow),
        ("ask", RuleList::Ask),
        ("deny", RuleList::Deny),
    ] {
        for r in policy[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let (text, layer) = crate::security::layer_of(r);
            b.rule(list, text, layer, None)
                .map_err(|e| format!("rule not loadable: {e}"))?;
        }
    }
    Ok(b.build())
}

/// A context for deciding about paths of the case's world.
fn case_ctx(project_root: &str, cwd: &str, mode: tool_core::PermissionMode) -> ToolContext {
    let mut ctx = ToolContext::new(project_root, "/home/u", "/tmp/harness/results");
    ctx.cwd = PathBuf::from(cwd);
    ctx = ctx.with_permission_mode(mode);
    ctx
}

/// Words of a command line that look like paths (to put a dummy file at), and host names.
fn mentioned(command: &str) -> (Vec<String>, Vec<String>) {
    let mut paths = Vec::new();
    let mut hosts = BTreeSet::new();
    let host_re = regex::Regex::new(r"(?i)\b((?:[a-z0-9-]+\.)+[a-z]{2,})\b").ok();
    for w in command.split(|c: char| c.is_whitespace() || "'\";|&<>()=`,".contains(c)) {
        let w = w.trim_start_matches('@');
        if w.is_empty() {
            continue;
        }
        if w.contains("://")
            && let Some(re) = &host_re
        {
            for c in re.captures_iter(w) {
                hosts.insert(c[1].to_ascii_lowercase());
            }
            continue;
        }
        if (w.contains('/') || w.starts_with('.') || w.starts_with('~'))
            && !w.contains(['*', '?', '[', '$', '{'])
            && !w.starts_with('-')
        {
            paths.push(w.to_owned());
        }
    }
    (paths, hosts.into_iter().collect())
}

/// Where a path word of the command lands, as an absolute path of the case's world.
fn absolute(word: &str, cwd: &str) -> Option<PathBuf> {
    let p = if let Some(rest) = word.strip_prefix("~/") {
        PathBuf::from("/home/u").join(rest)
    } else if word.starts_with('/') {
        PathBuf::from(word)
    } else {
        Path::new(cwd).join(word)
    };
    Some(tool_core::normalize(&p))
}

/// The staged world's root of a path of the case's world, when it is one the container takes
/// from the stage (`/w`, `/home`, `/tmp`).
fn staged(root: &Path, p: &Path) -> Option<PathBuf> {
    let rel = p.strip_prefix("/").ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    matches!(first, "w" | "home" | "tmp").then(|| root.join(rel))
}

/// Write `content` at `p` unless the case's setup already put something there.
fn default_file(p: &Path, content: &str) {
    if std::fs::symlink_metadata(p).is_err() {
        write_file(p, content);
    }
}

fn write_file(p: &Path, content: &str) {
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let _ = std::fs::write(p, content);
}

/// The literal path a deny rule's pattern starts with (`./.env` → `/w/p/.env`, `~/.ssh/**` →
/// `/home/u/.ssh/id_rsa`), for a dummy file there.
fn representative(pattern: &str, project: &str, cwd: &str) -> Option<PathBuf> {
    let p = pattern.trim();
    let (base, rest): (PathBuf, &str) = if let Some(r) = p.strip_prefix("//") {
        (PathBuf::from("/"), r)
    } else if let Some(r) = p.strip_prefix("~/") {
        (PathBuf::from("/home/u"), r)
    } else if let Some(r) = p.strip_prefix('/') {
        (PathBuf::from(project), r)
    } else {
        (PathBuf::from(cwd), p.strip_prefix("./").unwrap_or(p))
    };
    let mut out = base;
    let mut literal = true;
    for seg in rest.split('/') {
        if seg.is_empty() || seg == "**" {
            continue;
        }
        if seg.contains(['*', '?', '[']) {
            // `*.pem` → `key.pem`; a wildcard directory → `d`.
            out.push(seg.replace(['*', '?'], "key").replace(['[', ']'], ""));
            literal = false;
            continue;
        }
        out.push(seg);
    }
    if rest.ends_with("/**") || rest == "**" || (literal && rest.ends_with('/')) {
        out.push("id_rsa");
    }
    Some(tool_core::normalize(&out))
}

/// Lay the case's world out under `root`; the dummy secrets (path → marker) a Read deny rule
/// covers.
fn stage_world(
    root: &Path,
    case: &Value,
    policy: &tool_permissions::Policy,
    ctx: &ToolContext,
) -> BTreeMap<PathBuf, String> {
    use tool_core::PathPolicy as _;
    let project = ctx.project_root.display().to_string();
    let cwd = ctx.cwd.display().to_string();
    let at = |p: &str| root.join(p.trim_start_matches('/'));
    // A small repository and the configuration an agent's tools read.
    let proj = |rel: &str| at(&format!("{project}/{rel}"));
    default_file(&proj("README.md"), "readme\n");
    default_file(&proj("src/main.rs"), "fn main() {}\n");
    default_file(&proj(".git/HEAD"), "ref: refs/heads/main\n");
    default_file(
        &proj(".git/config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
    );
    default_file(&proj(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
    let _ = std::fs::create_dir_all(proj(".git/objects/info"));
    let _ = std::fs::create_dir_all(proj(".git/refs/heads"));
    default_file(&proj(".claude/settings.json"), "{}\n");
    default_file(&proj("Makefile"), "all:\n\t@echo built\n");
    default_file(
        &proj("package.json"),
        "{\"name\":\"p\",\"scripts\":{\"test\":\"echo ok\"}}\n",
    );
    default_file(&at("/home/u/.bashrc"), "# bashrc\n");
    default_file(&at("/home/u/.profile"), "# profile\n");
    default_file(&at("/home/u/.gitconfig"), "[user]\n\tname = u\n");
    default_file(&at("/home/u/.claude/settings.json"), "{}\n");
    let _ = std::fs::create_dir_all(at(&cwd));
    // Dummy files at every path a Read deny rule starts with and every path the command names.
    let mut candidates: Vec<PathBuf> = Vec::new();
    for r in case["policy"]["deny"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let (text, _) = crate::security::layer_of(r);
        if let Some(inner) = text
            .strip_prefix("Read(")
            .or_else(|| text.strip_prefix("Edit("))
            .and_then(|t| t.strip_suffix(')'))
            && let Some(p) = representative(inner, &project, &cwd)
        {
            candidates.push(p);
        }
    }
    let command = case["input"]["command"].as_str().unwrap_or_default();
    let (words, _) = mentioned(command);
    candidates.extend(words.iter().filter_map(|w| absolute(w, &cwd)));
    let mut secrets = BTreeMap::new();
    for (n, p) in candidates.into_iter().enumerate() {
        let Some(on_disk) = staged(root, &p) else {
            continue;
        };
        if std::fs::symlink_metadata(&on_disk).is_ok() {
            // Already staged (the case's setup, or the repository above): a secret only if the
            // file is one, and it is covered.
            if on_disk.is_file() && policy.read_denied(&p, ctx) {
                let marker = format!("{SECRET}-{n}-{}", p.display());
                let _ = std::fs::write(&on_disk, format!("{marker}\n"));
                secrets.insert(p, marker);
            }
            continue;
        }
        // Only files a Read deny covers are made (others the command may mean to create).
        if policy.read_denied(&p, ctx) {
            let marker = format!("{SECRET}-{n}-{}", p.display());
            write_file(&on_disk, &format!("{marker}\n"));
            secrets.insert(p, marker);
        }
    }
    secrets
}

/// The programs Bash deny rules name (their first word), found on the container's `PATH`:
/// (name, the file it is).
fn denied_programs(case: &Value) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for r in case["policy"]["deny"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let (text, _) = crate::security::layer_of(r);
        let Some(inner) = text.strip_prefix("Bash(").and_then(|t| t.strip_suffix(')')) else {
            continue;
        };
        let Some(first) = inner
            .trim_end_matches(":*")
            .split_whitespace()
            .next()
            .filter(|w| !w.contains(['*', '/']))
        else {
            continue;
        };
        if out.iter().any(|(n, _): &(String, PathBuf)| n == first) {
            continue;
        }
        for dir in ["/usr/local/bin", "/usr/bin", "/usr/sbin"] {
            let p = Path::new(dir).join(first);
            if p.is_file()
                && let Ok(real) = std::fs::canonicalize(&p)
            {
                out.push((first.to_owned(), real));
                break;
            }
        }
    }
    out
}

/// A stand-in for `name`: the stub binary with its name written at its end.
fn make_stub(stub_bin: &Path, name: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut bytes = std::fs::read(stub_bin).context("reading the stub")?;
    bytes.extend_from_slice(format!("\0TOOLGATE-EFFECTS-STUB:{name}\n").as_bytes());
    let p = dir.join(name);
    std::fs::write(&p, bytes)?;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    Ok(p)
}

/// Where the harness runs itself inside a case's container.
const INNER: &str = "/harness/xtask";

/// The container's arguments (before `--`): the host's directories read-only, the case's world
/// from `root`, stand-ins over denied programs.
fn container_args(
    root: &Path,
    stubs: &[(PathBuf, PathBuf, String)],
    hosts_file: &Path,
    me: &Path,
) -> anyhow::Result<Vec<std::ffi::OsString>> {
    let mut a: Vec<std::ffi::OsString> = Vec::new();
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        for i in items {
            a.push(i.as_ref().to_owned());
        }
    };
    push(&[
        &"--unshare-user",
        &"--uid",
        &"0",
        &"--gid",
        &"0",
        &"--unshare-pid",
        &"--unshare-net",
        &"--unshare-ipc",
        &"--die-with-parent",
        &"--new-session",
        &"--tmpfs",
        &"/",
    ]);
    for e in std::fs::read_dir("/")?.flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if matches!(
            n.as_ref(),
            "proc" | "dev" | "sys" | "tmp" | "home" | "w" | "run" | "harness"
        ) {
            continue;
        }
        let p = Path::new("/").join(&name);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            let t = std::fs::read_link(&p)?;
            push(&[&"--symlink", &t, &p]);
        } else {
            push(&[&"--ro-bind", &p, &p]);
        }
    }
    push(&[
        &"--dev",
        &"/dev",
        &"--proc",
        &"/proc",
        &"--ro-bind",
        &"/sys",
        &"/sys",
        &"--tmpfs",
        &"/run",
        &"--bind",
        &root.join("w"),
        &"/w",
        &"--bind",
        &root.join("home"),
        &"/home",
        &"--bind",
        &root.join("tmp"),
        &"/tmp",
        &"--ro-bind",
        &hosts_file,
        &"/etc/hosts",
        // This harness itself, wherever it was built (under /tmp or /home, which the
        // container replaces, in a clone made there).
        &"--ro-bind",
        &me,
        &INNER,
    ]);
    for (real, stub, name) in stubs {
        push(&[
            &"--ro-bind",
            real,
            &Path::new("/harness/real").join(name),
            &"--ro-bind",
            stub,
            real,
        ]);
    }
    push(&[&"--chdir", &"/"]);
    Ok(a)
}

/// Run one case for real; what it did.
fn run_case(case: &Value, opts: Options, stub_bin: &Path, me: &Path) -> anyhow::Result<Effects> {
    let assume_allow = opts.assume_allow;
    if case["tool"].as_str() != Some("Bash") {
        return Ok(Effects::Skipped("not a Bash case".into()));
    }
    let policy_v = &case["policy"];
    let setup = policy_v["setup"].as_str().unwrap_or_default();
    let mut input = case["input"].clone();
    if input.get("hook").is_some() && !assume_allow {
        return Ok(Effects::Skipped(
            "its hooks decide it (run with --assume-allow to run it regardless)".into(),
        ));
    }
    if let Value::Object(o) = &mut input {
        o.remove("hook");
        o.remove("context");
    }
    let Some(command) = input["command"].as_str().map(str::to_owned) else {
        return Ok(Effects::Skipped("no command".into()));
    };
    let cwd = policy_v["cwd"].as_str().unwrap_or("/w/p");
    if !cwd.starts_with("/w/") && cwd != "/w" {
        return Ok(Effects::Skipped(format!(
            "its working directory {cwd} is outside the staged world (/w)"
        )));
    }
    let stage = match crate::security::stage_for_effects(setup, &input, cwd) {
        Ok(s) => s,
        Err(why) => return Ok(Effects::Skipped(why)),
    };
    let root = stage.root_path().to_path_buf();
    let project_root = stage
        .project_root
        .clone()
        .unwrap_or_else(|| stage.cwd.clone());
    let mode: tool_core::PermissionMode = policy_v["mode"]
        .as_str()
        .unwrap_or("default")
        .parse()
        .map_err(|e| anyhow::anyhow!("mode: {e}"))?;
    let policy = match case_policy(case, stage.trusted) {
        Ok(p) => p,
        Err(why) => return Ok(Effects::Skipped(why)),
    };
    let ctx = case_ctx(&project_root, &stage.cwd, mode);
    std::fs::create_dir_all(root.join("tmp/harness"))?;
    let secrets = stage_world(&root, case, &policy, &ctx);
    // Stand-ins for denied programs.
    let stub_dir = root.join("tmp/harness/stubs");
    std::fs::create_dir_all(&stub_dir)?;
    let mut stubs = Vec::new();
    for (name, real) in denied_programs(case) {
        let stub = make_stub(stub_bin, &name, &stub_dir)?;
        stubs.push((real, stub, name));
    }
    // Host names of the command on loopback addresses, one each.
    let (_, hosts) = mentioned(&command);
    let mut hosts_text = String::from("127.0.0.1 localhost\n::1 localhost\n");
    let mut by_ip = BTreeMap::new();
    for (i, h) in hosts.iter().enumerate() {
        let ip = format!("127.1.{}.{}", (i + 1) / 250, (i + 1) % 250 + 1);
        hosts_text.push_str(&format!("{ip} {h}\n"));
        by_ip.insert(ip, h.clone());
    }
    let hosts_file = root.join("tmp/harness/hosts");
    std::fs::write(&hosts_file, hosts_text)?;
    let before = snapshot(&root);
    let spec = json!({
        "case": case,
        "input": input,
        "cwd": stage.cwd,
        "project_root": project_root,
        "trusted": stage.trusted,
        "assume_allow": assume_allow,
        "unconfined": opts.unconfined,
        "hosts": by_ip,
    });
    std::fs::write(root.join("tmp/harness/spec.json"), spec.to_string())?;
    let bwrap = tool_sandbox::Sandbox::detect()?.bwrap().to_path_buf();
    let args = container_args(&root, &stubs, &hosts_file, me)?;
    let out = std::process::Command::new(&bwrap)
        .args(&args)
        .arg("--")
        .arg(INNER)
        .args(["security", "--effects-inner", "/tmp/harness/spec.json"])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("HOME", "/home/u")
        .env("LANG", "C.UTF-8")
        .output()
        .context("running the case's container")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(result) = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    else {
        // The harness failed, not the case: never counted as a case that could not be staged.
        anyhow::bail!(
            "the case's container gave no result ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    };
    if let Some(out) = result["output"].as_str()
        && out.contains("Sandbox is required but failed to initialize")
    {
        anyhow::bail!("the sandbox cannot start inside the effects run's container: {out}");
    }
    let after = snapshot(&root);
    Ok(judge(
        case, &policy, &ctx, &result, &secrets, &before, &after, &root,
    ))
}

/// The harmful and prompt-only effects of a case that ran.
#[allow(clippy::too_many_arguments)]
fn judge(
    case: &Value,
    policy: &tool_permissions::Policy,
    ctx: &ToolContext,
    result: &Value,
    secrets: &BTreeMap<PathBuf, String>,
    before: &Snapshot,
    after: &Snapshot,
    root: &Path,
) -> Effects {
    use tool_core::PathPolicy as _;
    let mut harmful = Vec::new();
    let mut prompt_only = Vec::new();
    let output = result["output"].as_str().unwrap_or_default();
    // A denied file's content in the output.
    for (p, marker) in secrets {
        if output.contains(marker.as_str()) {
            harmful.push(format!("read the denied file {}", p.display()));
        }
    }
    // A denied program that ran (its stand-in noted it).
    let ran =
        std::fs::read_to_string(root.join("w/p/.toolgate-effects/ran.jsonl")).unwrap_or_default();
    let noted_in_output = output
        .lines()
        .filter_map(|l| l.strip_prefix("TOOLGATE-EFFECTS-RAN "))
        .map(str::to_owned)
        .collect::<Vec<_>>();
    let registry = builtin_tools::registry().ok();
    for line in ran.lines().map(str::to_owned).chain(noted_in_output) {
        let Ok(argv) = serde_json::from_str::<Vec<String>>(&line) else {
            continue;
        };
        let command = tool_core::sandbox::shell_line(&argv);
        let Some(registry) = &registry else { continue };
        let d = tool_permissions::decide(
            policy,
            registry,
            "Bash",
            &json!({ "command": command }),
            ctx,
        );
        if let Ok(d) = d
            && d.verdict == Verdict::Deny
            && matches!(
                d.reason,
                tool_core::DecisionReason::Rule {
                    list: RuleList::Deny,
                    ..
                }
            )
        {
            harmful.push(format!("the denied program ran: {command}"));
        }
    }
    // Files changed.
    let changed: BTreeSet<&PathBuf> = before
        .iter()
        .filter(|(p, v)| after.get(*p) != Some(v))
        .map(|(p, _)| p)
        .chain(after.keys().filter(|p| !before.contains_key(*p)))
        .collect();
    // The harness's own files, the session's temporary directory (writable by design) and
    // the sandbox's runtime directory (placeholders' locks).
    let in_harness = |p: &Path| {
        p.starts_with("/tmp/harness")
            || p.starts_with("/tmp/toolgate-0")
            || p.starts_with("/tmp/toolgate-sandbox-0")
            || p.starts_with("/w/p/.toolgate-effects")
    };
    let mut mode_ctx = ctx.clone();
    mode_ctx.cwd = ctx.project_root.clone();
    let expected_allow = case["expected"].as_str() == Some("allow");
    for p in changed {
        if in_harness(p) {
            continue;
        }
        let what = if before.contains_key(p) && after.contains_key(p) {
            "changed"
        } else if after.contains_key(p) {
            "created"
        } else {
            "removed"
        };
        let denied = policy.edit_denied(p, ctx) || policy.read_denied(p, ctx);
        let protected = protected_change(p, what, before, after, root, ctx);
        if protected.is_some() || denied {
            harmful.push(format!(
                "{} {what} ({})",
                p.display(),
                protected.as_deref().unwrap_or("a denied path")
            ));
            continue;
        }
        // Where the policy lets a write go without asking, nothing to report.
        let d = policy.decide(&tool_core::PermissionRequest {
            tool_name: "Write",
            input: &json!({"file_path": p, "content": ""}),
            subject: &tool_core::PermissionSubject::WritePaths(vec![p.clone()]),
            read_only: false,
            requires_user_interaction: false,
            ctx: &mode_ctx,
        });
        if d.verdict == Verdict::Allow && expected_allow {
            continue;
        }
        if ctx.is_in_working_dirs(p) {
            prompt_only.push(format!("{} {what}", p.display()));
        } else {
            harmful.push(format!(
                "{} {what} (outside the working directories)",
                p.display()
            ));
        }
    }
    // Connections that got through.
    for c in result["connections"].as_array().into_iter().flatten() {
        let host = c["host"].as_str().unwrap_or("?");
        let port = c["port"].as_u64().unwrap_or(0);
        let d = policy.decide(&tool_core::PermissionRequest {
            tool_name: "WebFetch",
            input: &json!({"url": format!("https://{host}/")}),
            subject: &tool_core::PermissionSubject::Url(format!("https://{host}/")),
            read_only: false,
            requires_user_interaction: false,
            ctx,
        });
        if d.verdict != Verdict::Allow {
            harmful.push(format!("a connection reached {host}:{port}"));
        }
    }
    Effects::Ran {
        harmful,
        prompt_only,
    }
}

/// Names that make a directory a git repository (whose `config` may run programs).
const REPOSITORY_NAMES: &[&str] = &["HEAD", "objects", "refs"];

/// Settings of a git `config` that run a program (git's documentation, read independently of
/// the sandbox's own list of what a new repository may keep): `section.key` or
/// `section.*.key`, lower case.
const RUNS_PROGRAMS: &[&str] = &[
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "uploadpack.packobjectshook",
    "web.browser",
    "browser.*.cmd",
    "difftool.*.cmd",
    "mergetool.*.cmd",
    "sendemail.sendmailcmd",
    "ssh.variant",
];

/// The settings of a git `config` text that run programs (aliases that start a shell command,
/// pagers, includes, the keys above).
fn program_settings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let (mut section, mut sub) = (String::new(), None::<String>);
    for line in text.lines().map(str::trim) {
        let mut rest = line;
        if let Some(h) = line.strip_prefix('[') {
            let end = h.find(']').unwrap_or(h.len());
            let header = &h[..end];
            let mut parts = header.splitn(2, [' ', '.']);
            section = parts.next().unwrap_or_default().to_ascii_lowercase();
            sub = parts.next().map(|s| s.trim().trim_matches('"').to_owned());
            rest = h.get(end + 1..).unwrap_or_default().trim();
            if section.starts_with("include") {
                found.push(format!("[{header}]"));
            }
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let key = rest
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let value = rest.split_once('=').map_or("", |(_, v)| v.trim());
        let name = match &sub {
            Some(_) => format!("{section}.*.{key}"),
            None => format!("{section}.{key}"),
        };
        let runs = RUNS_PROGRAMS.contains(&name.as_str())
            || section == "pager"
            || (section == "alias" && value.trim_start_matches('"').starts_with('!'))
            || (section == "submodule"
                && key == "update"
                && value.trim_start_matches('"').starts_with('!'));
        if runs {
            found.push(name);
        }
    }
    found
}

/// Is `dir` (a path of the case's world) a git directory after the run: `HEAD` beside
/// `objects` and `refs`?
fn git_dir_after(after: &Snapshot, dir: &Path) -> bool {
    after.get(&dir.join("HEAD")).is_some_and(|v| v != "dir")
        && after.get(&dir.join("objects")).is_some_and(|v| v == "dir")
        && after.get(&dir.join("refs")).is_some_and(|v| v == "dir")
}

/// Why a change to `p` breaks a protected path, if it does: a path the sandbox keeps as it is
/// (hooks, git's and the agent's configuration, start-up files), or a name that makes a
/// working directory a repository. A repository the command created itself may hold what
/// `git init` puts there (its sample hooks, a plain `config`).
fn protected_change(
    p: &Path,
    what: &str,
    before: &Snapshot,
    after: &Snapshot,
    root: &Path,
    ctx: &ToolContext,
) -> Option<String> {
    let why = tool_permissions::kept_read_only(p);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let text_of = |p: &Path| {
        staged(root, p)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default()
    };
    // A repository's settings (in a `.git` or a bare repository) that run programs.
    let in_git_dir = p
        .parent()
        .is_some_and(|d| d.file_name().is_some_and(|n| n == ".git") || git_dir_after(after, d));
    if matches!(name, "config" | "config.worktree") && in_git_dir && what != "removed" {
        let found = program_settings(&text_of(p));
        if !found.is_empty() {
            return Some(format!(
                "a repository's settings that run programs: {}",
                found.join(", ")
            ));
        }
    }
    // The git directory this path is in (a `.git`, a submodule's or a worktree's inside
    // one), when the command created it.
    let new_git = p
        .ancestors()
        .skip(1)
        .find(|a| {
            a.file_name().is_some_and(|n| n == ".git")
                || git_dir_after(after, a)
                || a.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == "worktrees")
        })
        .filter(|g| !before.contains_key(*g));
    if let (Some(_), Some(git)) = (why, new_git) {
        let rel = p.strip_prefix(git).unwrap_or(p);
        let hook_sample =
            rel.starts_with("hooks") && (rel == Path::new("hooks") || name.ends_with(".sample"));
        // A worktree's own git directory names its repository's.
        let own_common = name == "commondir"
            && git
                .parent()
                .is_some_and(|w| w.file_name().is_some_and(|n| n == "worktrees"))
            && git
                .parent()
                .and_then(Path::parent)
                .is_some_and(|owner| tool_core::normalize(&git.join(text_of(p).trim())) == owner);
        // Git's own samples, and a new config that runs nothing (checked above).
        if hook_sample || own_common || matches!(name, "config" | "config.worktree") {
            return None;
        }
    }
    if why.is_some() {
        return Some("a protected path".into());
    }
    // A new `.git` file pointing to a repository outside the working directories.
    if name == ".git" && what == "created" && after.get(p).is_some_and(|v| v != "dir") {
        let target = text_of(p)
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("gitdir:"))
            .map(|t| tool_core::normalize(&p.parent().unwrap_or(p).join(t.trim())));
        if target.is_none_or(|t| !ctx.is_in_working_dirs(&t)) {
            return Some("a .git file pointing outside the working directories".into());
        }
    }
    let at_top = p
        .parent()
        .is_some_and(|d| ctx.working_dirs.iter().any(|w| w == d));
    if what == "created" && at_top && REPOSITORY_NAMES.contains(&name) {
        return Some("a name that makes the directory a git repository".into());
    }
    None
}

/// The case's policy as the effects run uses it: with `assume_allow`, every call is allowed
/// (the analysis switched off) while the sandbox is planned (and paths judged) as the case's
/// policy plans it. The sandbox is required (a case never runs unconfined by accident), or
/// with `unconfined` switched off, to show what the commands do without it.
struct CasePolicy {
    policy: Arc<tool_permissions::Policy>,
    assume_allow: bool,
    unconfined: bool,
}

impl tool_core::PermissionPolicy for CasePolicy {
    fn decide(&self, r: &tool_core::PermissionRequest<'_>) -> tool_core::Decision {
        if self.assume_allow {
            return tool_core::Decision::allow(tool_core::DecisionReason::Check {
                name: "assumed allowed (--assume-allow)".into(),
            });
        }
        self.policy.decide(r)
    }
    fn removes_tool(&self, name: &str) -> bool {
        !self.assume_allow && self.policy.removes_tool(name)
    }
}

impl tool_core::PathPolicy for CasePolicy {
    fn read_denied(&self, p: &Path, ctx: &ToolContext) -> bool {
        !self.assume_allow && self.policy.read_denied(p, ctx)
    }
    fn edit_denied(&self, p: &Path, ctx: &ToolContext) -> bool {
        !self.assume_allow && self.policy.edit_denied(p, ctx)
    }
}

impl tool_core::sandbox::SandboxPolicy for CasePolicy {
    fn sandbox(
        self: Arc<Self>,
        command: &str,
        ctx: &ToolContext,
    ) -> tool_core::sandbox::SandboxSpec {
        let mut spec = self.policy.clone().sandbox(command, ctx);
        spec.mode = if self.unconfined {
            tool_core::sandbox::SandboxMode::Off
        } else {
            tool_core::sandbox::SandboxMode::Required
        };
        spec
    }
}

/// Inside the container: run the case through the pipeline and print what came out, with the
/// connections that got through.
pub(crate) async fn inner(spec_file: &Path) -> anyhow::Result<()> {
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(spec_file)?)?;
    let case = &spec["case"];
    let policy = Arc::new(
        case_policy(case, spec["trusted"].as_bool().unwrap_or(true))
            .map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    let mode: tool_core::PermissionMode = case["policy"]["mode"]
        .as_str()
        .unwrap_or("default")
        .parse()
        .map_err(|e| anyhow::anyhow!("mode: {e}"))?;
    let mut ctx = case_ctx(
        spec["project_root"].as_str().unwrap_or("/w/p"),
        spec["cwd"].as_str().unwrap_or("/w/p"),
        mode,
    );
    ctx.env = Arc::new(
        [
            ("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"),
            ("HOME", "/home/u"),
            ("LANG", "C.UTF-8"),
            ("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    );
    ctx.task_output_dir = PathBuf::from("/tmp/harness/tasks");
    // The listener that notes every connection the sandbox lets out.
    let hosts: BTreeMap<String, String> = spec["hosts"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    // One thread takes every connection as it comes (a client waiting for an answer gets a
    // closed connection at once); when the command is over, it empties every queue once more
    // before it stops, so a connection made but not yet taken is still counted.
    let listeners: Vec<(u16, std::net::TcpListener)> = PORTS
        .iter()
        .filter_map(|&port| {
            let l = std::net::TcpListener::bind(("0.0.0.0", port)).ok()?;
            l.set_nonblocking(true).ok()?;
            Some((port, l))
        })
        .collect();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let accepter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut seen: Vec<(String, u16)> = Vec::new();
            loop {
                // Read before the pass: a pass that starts after the stop empties every queue.
                let last = stop.load(std::sync::atomic::Ordering::SeqCst);
                for (port, listener) in &listeners {
                    while let Ok((conn, _)) = listener.accept() {
                        let ip = conn
                            .local_addr()
                            .map(|a| a.ip().to_string())
                            .unwrap_or_default();
                        let host = hosts.get(&ip).cloned().unwrap_or(ip);
                        seen.push((host, *port));
                    }
                }
                if last {
                    return seen;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    let registry = builtin_tools::registry()?;
    let mut session = tool_orchestrator::Session::builder(registry, ctx)
        .policy(Arc::new(CasePolicy {
            policy,
            assume_allow: spec["assume_allow"].as_bool() == Some(true),
            unconfined: spec["unconfined"].as_bool() == Some(true),
        }))
        .build();
    let mut input = spec["input"].clone();
    input["timeout"] = json!(COMMAND_TIMEOUT_MS);
    let turn = session
        .run_turn(&[tool_core::ToolUse::new("toolu_effects", "Bash", input)])
        .await;
    let o = &turn.outcomes[0];
    // A host that ends stops its background commands and puts right what they left.
    tool_sandbox::stop_background(std::time::Duration::from_secs(10));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let connections: Vec<Value> = accepter
        .join()
        .map_err(|_| anyhow::anyhow!("the listener thread panicked"))?
        .iter()
        .map(|(h, p)| json!({"host": h, "port": p}))
        .collect();
    println!(
        "{}",
        json!({
            "output": o.content.to_text(),
            "is_error": o.is_error,
            "stage": format!("{:?}", o.stage),
            "connections": connections,
        })
    );
    Ok(())
}

/// How many cases run at once: `TOOLGATE_EFFECTS_JOBS`, or one per CPU.
fn jobs() -> usize {
    std::env::var("TOOLGATE_EFFECTS_JOBS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
}

/// Run every Bash case of `files` for real; print one line per case and the summary. Returns
/// whether no effect was harmful.
pub(crate) fn run(files: &[PathBuf], opts: Options) -> anyhow::Result<bool> {
    tool_sandbox::Sandbox::detect().context("the effects run needs the sandbox")?;
    let me = std::env::current_exe()?;
    let stub_bin = me.with_file_name("effects-stub");
    // The stand-in is a binary of this package, built beside this one when it is missing or
    // older than this one.
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&stub_bin) < modified(&me) {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args([
                "build",
                "--quiet",
                "--package",
                "xtask",
                "--bin",
                "effects-stub",
            ])
            .current_dir(crate::workspace_root());
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        if !build.status().is_ok_and(|s| s.success()) {
            eprintln!("could not build effects-stub; using the one there is, if any");
        }
    }
    anyhow::ensure!(
        stub_bin.is_file(),
        "no {} (build it: cargo build -p xtask --bin effects-stub)",
        stub_bin.display()
    );
    let cases = crate::security::case_lines(files)
        .map(|item| item.map(|(_, case)| case))
        .collect::<anyhow::Result<Vec<Value>>>()?;
    let progress = crate::progress::Progress::new("effects", cases.len());
    let (mut ran, mut harmful_total) = (0usize, 0usize);
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut prompts: Vec<(String, String)> = Vec::new();
    // Each case is a world and a container of its own, so cases run side by side; the lines
    // come out in the cases' order all the same.
    let workers = jobs().min(cases.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, anyhow::Result<Effects>)>();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (cases, next, failed, stub_bin, me) = (&cases, &next, &failed, &stub_bin, &me);
            scope.spawn(move || {
                use std::sync::atomic::Ordering;
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let id = case["id"].as_str().unwrap_or("?");
                    let result =
                        run_case(case, opts, stub_bin, me).with_context(|| format!("case {id}"));
                    if result.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    if tx.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, anyhow::Result<Effects>> = BTreeMap::new();
        let mut shown = 0;
        for (i, result) in rx {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&shown) {
                let case = &cases[shown];
                shown += 1;
                let id = case["id"].as_str().unwrap_or("?").to_owned();
                match result? {
                    Effects::Skipped(why) => {
                        if case["tool"].as_str() == Some("Bash") {
                            skipped.push((id.clone(), why.clone()));
                        }
                        progress.step(&format!("{id} SKIP: {why}"), false, false);
                    }
                    Effects::Ran {
                        harmful,
                        prompt_only,
                    } => {
                        ran += 1;
                        for p in &prompt_only {
                            prompts.push((id.clone(), p.clone()));
                        }
                        if harmful.is_empty() {
                            progress.step(&format!("{id} ok"), false, false);
                        } else {
                            harmful_total += harmful.len();
                            progress.step(
                                &format!("{id} HARMFUL: {}", harmful.join("; ")),
                                true,
                                true,
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    progress.finish();
    if !prompts.is_empty() {
        println!("effects that only needed a prompt ({}):", prompts.len());
        for (id, p) in &prompts {
            println!("  {id}: {p}");
        }
    }
    if !skipped.is_empty() {
        println!("Bash cases not staged ({}):", skipped.len());
        for (id, why) in &skipped {
            println!("  {id}: {why}");
        }
    }
    println!("{ran} cases run, {harmful_total} harmful effects");
    anyhow::ensure!(ran > 0, "no case ran: nothing was checked");
    Ok(harmful_total == 0)
}
