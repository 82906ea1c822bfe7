//! `cargo xtask security`: decision cases (`../shared/security/cases-public.jsonl` format, one
//! file or every `*.jsonl` of a folder) run against the policy engine. Each case: rules (with
//! optional layer tags), a mode, a virtual cwd and home (`/home/u`), a tool and an input; the
//! engine's verdict is compared with the expected one. A case that expects deny or ask and
//! comes out allow is marked UNSAFE.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;
use tool_core::{Lookup, PermissionMode, RuleList, ToolContext, Verdict};
use tool_hooks::CommandSpec;
use tool_permissions::{Layer, PolicyBuilder};

/// What the runner made of a case: the engine's verdict, or why it was not run.
pub(crate) enum Outcome {
    Got(Verdict),
    Skip(String),
}

/// Fixtures a variant of a case needs beyond the case's own setup, in virtual paths (under
/// `/w/` or `/home/u`): directories to create and symlinks `(link, target, target is a dir)`.
/// Any of them makes the runner stage a temporary root even for a case without setup.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Extra {
    pub dirs: Vec<String>,
    /// Files to create (with their directories) when missing.
    pub files: Vec<String>,
    pub links: Vec<(String, String, bool)>,
    pub force_root: bool,
    /// Symlinks point to the case's own paths (`/w/p/x`), not to their place under the
    /// temporary root: for a world mounted at `/` (the effects run).
    pub world_links: bool,
    /// The session's working directory after earlier `cd`s (the project root stays the case's
    /// own directory).
    pub session_cwd: Option<String>,
}

impl Extra {
    fn needs_root(&self) -> bool {
        self.force_root || self.has_fixtures() || self.session_cwd.is_some()
    }

    /// Whether it puts anything in the world (directories, files, links).
    pub(crate) fn has_fixtures(&self) -> bool {
        !self.dirs.is_empty() || !self.files.is_empty() || !self.links.is_empty()
    }

    /// The fixtures as text, for a report line.
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .links
            .iter()
            .map(|(l, t, _)| format!("{l} -> {t}"))
            .collect();
        parts.extend(self.dirs.iter().map(|d| format!("dir {d}")));
        parts.extend(self.files.iter().map(|f| format!("file {f}")));
        parts.extend(self.session_cwd.iter().map(|c| format!("session cwd {c}")));
        parts.join(", ")
    }
}

/// A rule's text and layer. Untagged rules are project rules; a tag that names no layer (such
/// as `[saved by prior approval]`) marks a rule saved in the session, read as a project rule.
pub(crate) fn layer_of(rule: &str) -> (&str, Layer) {
    for (tag, layer) in [
        (" [managed]", Layer::Managed),
        (" [user]", Layer::User),
        (" [project]", Layer::Project),
        (" [local]", Layer::Local),
        (" [cli]", Layer::CommandLine),
    ] {
        if let Some(r) = rule.strip_suffix(tag) {
            return (r, layer);
        }
    }
    match rule.rfind(" [") {
        Some(i) if rule.ends_with(']') => (&rule[..i], Layer::Project),
        _ => (rule, Layer::Project),
    }
}

/// The world a case runs in, staged under a temporary root that stands for `/`.
pub(crate) struct Stage {
    root: Option<tempfile::TempDir>,
    pub(crate) cwd: String,
    pub(crate) project_root: Option<String>,
    pub(crate) trusted: bool,
    fail_closed: bool,
}

impl Stage {
    /// The temporary root that stands for `/` (always there for a stage made by
    /// [`stage_for_effects`]).
    pub(crate) fn root_path(&self) -> &Path {
        self.root.as_ref().map_or(Path::new("/"), |r| r.path())
    }

    fn map(&self, s: &str) -> String {
        match &self.root {
            None => s.to_owned(),
            Some(r) => {
                let r = r.path().display().to_string();
                s.replace("/w/", &format!("{r}/w/"))
                    .replace("/home/", &format!("{r}/home/"))
            }
        }
    }

    fn map_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.map(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.map_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.map_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Stage the setup forms CONTRACT.md lists, and `PATH is a directory` and `PATH is a file` for
/// this project's own cases; `Err` names a form this runner does not stage (those the contract lets a runner
/// skip: other file systems, sandboxes, MCP catalogues, races).
fn stage(setup: &str, input: &Value, cwd: &str, extra: &Extra) -> Result<Stage, String> {
    let mut st = Stage {
        root: None,
        cwd: cwd.to_owned(),
        project_root: None,
        trusted: true,
        fail_closed: false,
    };
    if setup.trim().is_empty() && !extra.needs_root() {
        return Ok(st);
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let r = dir.path().to_path_buf();
    st.root = Some(dir);
    let at = |p: &str| r.join(p.trim_start_matches('/'));
    let io = |e: std::io::Error| e.to_string();
    let link = regex::Regex::new(r"^(\S+) -> (\S+)$").map_err(|e| e.to_string())?;
    let hard = regex::Regex::new(r"^(\S+) is a hard link \(nlink=2\) to (\S+)$")
        .map_err(|e| e.to_string())?;
    let exe = regex::Regex::new(r"^(\S+) is an executable file written by the agent$")
        .map_err(|e| e.to_string())?;
    let scripts =
        regex::Regex::new(r#"^(\S+) scripts\.(\w+) = "(.*)"$"#).map_err(|e| e.to_string())?;
    let directory = regex::Regex::new(r"^(\S+) is a directory$").map_err(|e| e.to_string())?;
    let file = regex::Regex::new(r"^(\S+) is a file$").map_err(|e| e.to_string())?;
    let input_text = input.to_string();
    std::fs::create_dir_all(at("/w/p")).map_err(io)?;
    std::fs::create_dir_all(at("/home/u")).map_err(io)?;
    for item in setup.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        if let Some(c) = link.captures(item) {
            let (from, to) = (&c[1], &c[2]);
            let target = at(to);
            if !target.exists() {
                // The link is a directory when the input reaches through it.
                let as_dir = input_text.contains(&format!("{from}/"));
                staged_target(&target, as_dir).map_err(io)?;
            }
            let points_to = if extra.world_links {
                PathBuf::from(to)
            } else {
                target
            };
            symlink_in(&points_to, &at(from)).map_err(io)?;
        } else if let Some(c) = hard.captures(item) {
            let target = at(&c[2]);
            if !target.exists() {
                staged_target(&target, false).map_err(io)?;
            }
            let l = at(&c[1]);
            create_parent(&l).map_err(io)?;
            std::fs::hard_link(&target, &l).map_err(io)?;
        } else if let Some(c) = exe.captures(item) {
            use std::os::unix::fs::PermissionsExt;
            let f = at(&c[1]);
            create_parent(&f).map_err(io)?;
            std::fs::write(&f, "#!/bin/sh\necho staged\n").map_err(io)?;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
        } else if let Some(c) = scripts.captures(item) {
            let f = at(&format!("{}/{}", cwd, &c[1]));
            let json = serde_json::json!({"scripts": {c[2].to_owned(): c[3].to_owned()}});
            std::fs::write(&f, json.to_string()).map_err(io)?;
        } else if let Some(c) = directory.captures(item) {
            std::fs::create_dir_all(at(&c[1])).map_err(io)?;
        } else if let Some(c) = file.captures(item) {
            let f = at(&c[1]);
            create_parent(&f).map_err(io)?;
            std::fs::write(&f, "staged\n").map_err(io)?;
        } else if let Some(p) = item.strip_prefix("project root ") {
            std::fs::create_dir_all(at(p)).map_err(io)?;
            st.project_root = Some(p.to_owned());
        } else if let Some(p) = item.strip_prefix("session cwd ") {
            std::fs::create_dir_all(at(p)).map_err(io)?;
            st.cwd = p.to_owned();
        } else if item == "workspace not yet trusted" {
            st.trusted = false;
        } else if item == "hook failClosed=true" {
            st.fail_closed = true;
        } else {
            return Err(format!(
                "setup not staged (outside this project's scope): {item}"
            ));
        }
    }
    for (from, to, dir) in &extra.links {
        let target = at(to);
        if std::fs::symlink_metadata(&target).is_err() {
            staged_target(&target, *dir).map_err(io)?;
        }
        let points_to = if extra.world_links {
            PathBuf::from(to)
        } else {
            target
        };
        symlink_in(&points_to, &at(from)).map_err(io)?;
    }
    for d in &extra.dirs {
        std::fs::create_dir_all(at(d)).map_err(io)?;
    }
    for f in &extra.files {
        let f = at(f);
        if std::fs::symlink_metadata(&f).is_err() {
            staged_target(&f, false).map_err(io)?;
        }
    }
    if let Some(c) = &extra.session_cwd {
        std::fs::create_dir_all(at(c)).map_err(io)?;
        if st.project_root.is_none() {
            st.project_root = Some(st.cwd.clone());
        }
        st.cwd = c.clone();
    }
    Ok(st)
}

/// Stage a case's world under a temporary root, always (the effects run lays more files out in
/// it and mounts it at `/` of a container).
pub(crate) fn stage_for_effects(setup: &str, input: &Value, cwd: &str) -> Result<Stage, String> {
    let extra = Extra {
        force_root: true,
        world_links: true,
        ..Extra::default()
    };
    stage(setup, input, cwd, &extra)
}

/// Create the directories `path` sits in.
fn create_parent(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir),
        None => Ok(()),
    }
}

/// Create what a staged link points to: a directory, or a file (with its directories).
fn staged_target(target: &Path, as_dir: bool) -> std::io::Result<()> {
    if as_dir {
        std::fs::create_dir_all(target)
    } else {
        create_parent(target)?;
        std::fs::write(target, "staged\n")
    }
}

/// Create the symlink `link` (with its directories) pointing to `target`.
fn symlink_in(target: &Path, link: &Path) -> std::io::Result<()> {
    create_parent(link)?;
    std::os::unix::fs::symlink(target, link)
}

/// Run one case as written.
pub(crate) fn run_case(case: &Value) -> Outcome {
    decide_case(case, &case["input"], &Extra::default())
}

/// Run a case with `input` in place of its own input (a variant: same tool, policy, mode, cwd
/// and setup, plus the `extra` fixtures), through the same staging and decision path.
pub(crate) fn decide_case(case: &Value, input: &Value, extra: &Extra) -> Outcome {
    match decide_full(case, input, extra) {
        Ok(Decided::Hooked(v)) => Outcome::Got(v),
        Ok(Decided::Plain(d)) => Outcome::Got(d.verdict),
        Err(why) => Outcome::Skip(why),
    }
}

/// What the engine decided: through the pipeline with the case's hooks (the verdict), or
/// without hooks (the whole decision, with its reason).
pub(crate) enum Decided {
    Hooked(Verdict),
    Plain(tool_core::Decision),
}

/// [`decide_case`], keeping the decision's reason when no hook took part; `Err` when the case
/// cannot be staged.
pub(crate) fn decide_full(case: &Value, input: &Value, extra: &Extra) -> Result<Decided, String> {
    let tool = case["tool"].as_str().unwrap_or_default();
    let mut input = input.clone();
    let hook = input.get("hook").cloned();
    if let Value::Object(o) = &mut input {
        o.remove("hook");
    }
    if hook
        .as_ref()
        .is_some_and(|h| h.get("PermissionRequest").is_some())
    {
        return Err(
            "PermissionRequest hooks (a permission-dialog protocol outside this project's scope)"
                .into(),
        );
    }
    // `context` says where the call comes from (a subagent, say); it is not tool input.
    if let Value::Object(o) = &mut input {
        o.remove("context");
    }
    let policy = &case["policy"];
    let setup = policy["setup"].as_str().unwrap_or_default();
    // The case's own input decides how its setup is staged (whether a link is a directory),
    // so a variant is decided in the same world as the case.
    let mut own = case["input"].clone();
    if let Value::Object(o) = &mut own {
        o.remove("hook");
        o.remove("context");
    }
    let stage = stage(setup, &own, policy["cwd"].as_str().unwrap_or("/w/p"), extra)?;
    let input = stage.map_value(&input);
    let registry = match builtin_tools::registry() {
        Ok(r) => r,
        Err(e) => return Err(format!("registry: {e}")),
    };
    // A tool the project does not have is still decided by the engine when its permission
    // subject is plain: WebFetch's URL (domain rules), an MCP tool's name (whole-tool rules).
    let known = matches!(registry.lookup(tool, &|_| true), Lookup::Found(_));
    let mut b = PolicyBuilder::new();
    b.trust_project(stage.trusted);
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
            let (text, layer) = layer_of(r);
            let text = stage.map(text);
            if let Err(e) = b.rule(list, &text, layer, None) {
                return Err(format!("rule not loadable: {e}"));
            }
        }
    }
    let built = b.build();
    let root = stage
        .project_root
        .clone()
        .unwrap_or_else(|| stage.cwd.clone());
    let mut ctx = ToolContext::new(
        PathBuf::from(stage.map(&root)),
        PathBuf::from(stage.map("/home/u")),
        "/nonexistent/toolgate-security/tool-results",
    );
    ctx.cwd = tool_core::normalize(&PathBuf::from(stage.map(&stage.cwd)));
    if let Some(m) = policy["mode"].as_str() {
        match m.parse::<PermissionMode>() {
            Ok(mode) => ctx = ctx.with_permission_mode(mode),
            Err(e) => return Err(format!("mode: {e}")),
        }
    }
    let engine_only = if known {
        None
    } else {
        // An MCP server takes relative paths from where it runs, the project, not the
        // session's working directory.
        Some(engine_subject(tool, &input, &ctx.project_root, &ctx.home)?)
    };
    if let Some(hook) = hook {
        return match run_with_hooks(&hook, &stage, built, tool, &input, ctx) {
            Ok(v) => Ok(Decided::Hooked(v)),
            Err(why) => Err(why),
        };
    }
    if let Some((name, subject)) = engine_only {
        use tool_core::PermissionPolicy as _;
        let d = built.decide(&tool_core::PermissionRequest {
            tool_name: &name,
            input: &input,
            subject: &subject,
            read_only: false,
            requires_user_interaction: false,
            ctx: &ctx,
        });
        return Ok(Decided::Plain(d));
    }
    match tool_permissions::decide(&built, &registry, tool, &input, &ctx) {
        Ok(d) => Ok(Decided::Plain(d)),
        Err(e) => Err(format!("input does not pass the schema: {e}")),
    }
}

/// Stage the hook a case describes as a script (its decision as JSON output, its raw exit code
/// and output, a sleep past its timeout, or a missing or non-executable command).
fn stage_hook(spec: &Value, dir: &Path, fail_closed: bool) -> Result<CommandSpec, String> {
    use std::os::unix::fs::PermissionsExt;
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(dir).map_err(io)?;
    let path = dir.join("hook.sh");
    let write = |body: &str, mode: u32| -> Result<(), String> {
        std::fs::write(&path, format!("#!/bin/sh\ncat > /dev/null\n{body}")).map_err(io)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(io)
    };
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut timeout = None;
    if spec.get("permissionDecision").is_some() {
        let mut h = serde_json::Map::new();
        h.insert("hookEventName".into(), "PreToolUse".into());
        for k in [
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
        ] {
            if let Some(v) = spec.get(k) {
                h.insert(k.into(), v.clone());
            }
        }
        let out = serde_json::json!({ "hookSpecificOutput": h }).to_string();
        write(&format!("printf '%s\\n' {}\n", quote(&out)), 0o755)?;
    } else if let Some(h) = spec.get("hookSpecificOutput") {
        let out = serde_json::json!({ "hookSpecificOutput": h }).to_string();
        write(&format!("printf '%s\\n' {}\n", quote(&out)), 0o755)?;
    } else if let Some(code) = spec.get("exit_code").and_then(Value::as_i64) {
        let out = spec.get("stdout").and_then(Value::as_str).unwrap_or("");
        let err = spec.get("stderr").and_then(Value::as_str).unwrap_or("");
        write(
            &format!(
                "printf '%s' {}\nprintf '%s' {} >&2\nexit {code}\n",
                quote(out),
                quote(err)
            ),
            0o755,
        )?;
    } else if let Some(t) = spec.get("timeout_s").and_then(Value::as_u64) {
        let secs = spec
            .get("behaviour")
            .and_then(Value::as_str)
            .and_then(|b| b.strip_prefix("sleeps "))
            .and_then(|b| b.strip_suffix('s'))
            .ok_or("a slow hook needs `behaviour: \"sleeps Ns\"`")?;
        write(&format!("sleep {secs}\n"), 0o755)?;
        timeout = Some(std::time::Duration::from_secs(t));
    } else if let Some(state) = spec.get("state").and_then(Value::as_str) {
        match state {
            "missing" => {}
            "not executable" => write("exit 0\n", 0o644)?,
            other => return Err(format!("hook state `{other}` not staged")),
        }
    } else {
        return Err(format!("hook form not staged: {spec}"));
    }
    Ok(CommandSpec {
        timeout,
        fail_closed,
        ..CommandSpec::new(path.display().to_string())
    })
}

/// Run a case with hooks through the pipeline up to the permission decision: a call that
/// would run is an allow, one refused at the permission step has that step's verdict, any
/// other refusal (an invalid rewrite, say) is a deny.
fn run_with_hooks(
    hook: &Value,
    stage: &Stage,
    policy: tool_permissions::Policy,
    tool: &str,
    input: &Value,
    ctx: ToolContext,
) -> Result<Verdict, String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut hooks = tool_hooks::Hooks::new();
    for (event, spec) in hook.as_object().into_iter().flatten() {
        let event = tool_hooks::HookEvent::parse(event)
            .ok_or_else(|| format!("hook event {event} not staged"))?;
        // The paths a hook's answer names (a rewritten input's) are staged as the case's are.
        let spec = stage.map_value(spec);
        let staged = stage_hook(
            &spec,
            &scratch.path().join(event.as_str()),
            stage.fail_closed,
        )?;
        hooks
            .command_group(event, "*", false, vec![staged])
            .map_err(|e| e.to_string())?;
    }
    let registry = builtin_tools::registry().map_err(|e| e.to_string())?;
    let pipeline = tool_orchestrator::Pipeline::new(
        std::sync::Arc::new(registry),
        tool_orchestrator::decision_stack(std::sync::Arc::new(hooks), std::sync::Arc::new(policy)),
    );
    let call = tool_core::ToolUse::new("toolu_case", tool, input.clone());
    // Cases are decided one by one from synchronous code inside xtask's runtime.
    let outcome = tokio::task::block_in_place(|| {
        tokio::runtime::Handle::current().block_on(pipeline.run(&call, ctx, &|_| true))
    });
    Ok(match outcome.stage {
        tool_core::Stage::Ran => Verdict::Allow,
        tool_core::Stage::Permission | tool_core::Stage::PreToolUse => {
            outcome.decision.map_or(Verdict::Deny, |d| d.verdict)
        }
        _ => Verdict::Deny,
    })
}

/// The tool name and permission subject of a call to a tool this project does not have, when
/// the engine can decide it alone; otherwise why the case is skipped.
fn engine_subject(
    tool: &str,
    input: &Value,
    project: &Path,
    home: &Path,
) -> Result<(String, tool_core::PermissionSubject), String> {
    use tool_core::PermissionSubject;
    let missing = || format!("tool {tool} does not exist in the project");
    match tool {
        "WebFetch" => match input["url"].as_str() {
            Some(url) => Ok((tool.to_owned(), PermissionSubject::Url(url.to_owned()))),
            None => Err(missing()),
        },
        // As toolgate's MCP client and the guard decide a tool no policy declares the path
        // arguments of: those whose key says they are paths, read and written.
        "MCP" => {
            let name = input["tool_name"].as_str().ok_or_else(missing)?;
            let (read, write) = tool_permissions::tool_path_arguments(
                &input["arguments"],
                None,
                false,
                project,
                home,
            );
            Ok((name.to_owned(), PermissionSubject::tool_paths(read, write)))
        }
        t if t.starts_with("mcp__") => Ok((t.to_owned(), PermissionSubject::Nothing)),
        _ => Err(missing()),
    }
}

pub(crate) fn parse_verdict(s: &str) -> Option<Verdict> {
    match s {
        "allow" => Some(Verdict::Allow),
        "ask" => Some(Verdict::Ask),
        "deny" => Some(Verdict::Deny),
        _ => None,
    }
}

/// The case files `source` names: the file itself, or every `*.jsonl` directly inside the
/// folder, sorted by name (sub-folders such as `pending/` are not read).
pub(crate) fn case_files(source: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !source.is_dir() {
        return Ok(vec![source.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in
        std::fs::read_dir(source).with_context(|| format!("reading {}", source.display()))?
    {
        let path = entry
            .with_context(|| format!("reading {}", source.display()))?
            .path();
        if path.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        anyhow::bail!("no *.jsonl case file in {}", source.display());
    }
    Ok(files)
}

/// The cases of `files` in order, each with where it stands (`file:line`); blank lines are
/// passed over. A file is read when the iteration reaches it, and an unreadable file or a line
/// that is not JSON is an error in its place.
pub(crate) fn case_lines(
    files: &[PathBuf],
) -> impl Iterator<Item = anyhow::Result<(String, Value)>> + '_ {
    files.iter().flat_map(|file| {
        let text = match std::fs::read_to_string(file)
            .with_context(|| format!("reading {}", file.display()))
        {
            Ok(text) => text,
            Err(e) => return vec![Err(e)],
        };
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(n, line)| {
                let here = format!("{}:{}", file.display(), n + 1);
                let case = serde_json::from_str(line).with_context(|| here.clone())?;
                Ok((here, case))
            })
            .collect()
    })
}

/// Run every case of `files`, in order; print one line each. A case id must be unique across
/// the files. Returns (passed, failed, skipped, unsafe).
pub(crate) fn run(files: &[PathBuf]) -> anyhow::Result<(usize, usize, usize, usize)> {
    let (mut pass, mut fail, mut skip, mut unsafe_) = (0, 0, 0, 0);
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let items: Vec<_> = case_lines(files).collect();
    let progress = crate::progress::Progress::new("security", items.len());
    for item in items {
        let (here, case) = item?;
        let id = case["id"].as_str().unwrap_or("?");
        if let Some(first) = seen.insert(id.to_owned(), here.clone()) {
            anyhow::bail!("{here}: case id {id} already used at {first}");
        }
        let expected = case["expected"].as_str().unwrap_or("?");
        match run_case(&case) {
            Outcome::Skip(why) => {
                skip += 1;
                progress.step(
                    &format!("{id} expected={expected} SKIP: {why}"),
                    true,
                    false,
                );
            }
            Outcome::Got(got) => {
                let ok = parse_verdict(expected) == Some(got);
                let dangerous = got == Verdict::Allow && matches!(expected, "deny" | "ask");
                if ok {
                    pass += 1;
                } else {
                    fail += 1;
                }
                if dangerous {
                    unsafe_ += 1;
                }
                let line = format!(
                    "{id} expected={expected} got={got} {}{}",
                    if ok { "PASS" } else { "FAIL" },
                    if dangerous { " UNSAFE" } else { "" }
                );
                progress.step(&line, !ok, !ok);
            }
        }
    }
    progress.finish();
    Ok((pass, fail, skip, unsafe_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str) -> String {
        serde_json::json!({
            "id": id, "cls": "benign", "tool": "Bash", "input": {"command": "pwd"},
            "policy": {"allow": [], "ask": [], "deny": [], "mode": "default", "cwd": "/w/p", "setup": ""},
            "expected": "allow", "why": "", "source": ""
        })
        .to_string()
    }

    #[test]
    fn a_folder_gives_its_jsonl_files_sorted_without_sub_folders() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.jsonl"), case("B1")).unwrap();
        std::fs::write(dir.path().join("a.jsonl"), case("A1")).unwrap();
        std::fs::write(dir.path().join("notes.md"), "x").unwrap();
        std::fs::create_dir(dir.path().join("pending")).unwrap();
        std::fs::write(dir.path().join("pending/c.jsonl"), case("C1")).unwrap();
        let files = case_files(dir.path()).unwrap();
        let names: Vec<_> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.jsonl", "b.jsonl"]);
        let one = dir.path().join("pending/c.jsonl");
        assert_eq!(case_files(&one).unwrap(), std::slice::from_ref(&one));
        let empty = tempfile::tempdir().unwrap();
        assert!(case_files(empty.path()).is_err());
    }

    #[test]
    fn cases_of_every_file_run_and_a_repeated_id_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        std::fs::write(&a, case("A1")).unwrap();
        std::fs::write(&b, format!("{}\n\n{}\n", case("B1"), case("B2"))).unwrap();
        let (pass, fail, skip, _) = run(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(pass + fail + skip, 3);
        std::fs::write(&b, case("A1")).unwrap();
        let err = run(&[a, b]).unwrap_err().to_string();
        assert!(err.contains("A1") && err.contains("a.jsonl:1"), "{err}");
    }
}
