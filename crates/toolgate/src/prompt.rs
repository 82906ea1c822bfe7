//! The CLI's approver: an ask becomes a question on the terminal, answered once, for this
//! session, or always. Run without a terminal, `toolgate run` has no approver and asks are
//! refused with Claude Code's headless text.
//!
//! "For this session" remembers the narrowest rule that allows the call (see
//! [`tool_permissions::narrowest_rule`]); "always" also saves it to the project's
//! `.toolgate/policy.local.toml`. A remembered rule answers later asks of the same kind without
//! a question, but only asks that nothing but the missing grant caused: an ask rule, a hook's
//! ask or a built-in check still asks, and denies never reach the approver at all.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tool_core::{
    Approval, ApprovalRequest, Approver, DecisionReason, RuleList, ToolContext, ToolRegistry,
    Verdict,
};
use tool_permissions::{Layer, PolicyBuilder};

/// Where answers come from and where questions go.
type Terminal = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// How long an approval lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This call only.
    Once,
    /// Calls of the same kind for the rest of the session.
    Session,
    /// Saved to the policy file: from now on.
    Always,
}

/// Where "always" approvals are saved, and what to do after each save.
pub struct SaveTo {
    /// The TOML policy file (`.toolgate/policy.local.toml`).
    pub file: PathBuf,
    /// Called after a rule is saved (the CLI renews the project's trust record when the
    /// project was trusted before, so the user's own approval does not untrust it).
    pub after_save: Box<dyn Fn() -> Result<(), String> + Send + Sync>,
}

impl std::fmt::Debug for SaveTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaveTo")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// The tools and context the approver decides remembered rules with.
struct Remembering {
    registry: Arc<ToolRegistry>,
    ctx: ToolContext,
    rules: Mutex<Vec<String>>,
    save_to: Option<SaveTo>,
}

/// Asks the user on a terminal (or any line reader and writer) whether to run a call.
pub struct TerminalApprover {
    io: Arc<Mutex<Terminal>>,
    memory: Option<Arc<Remembering>>,
}

impl std::fmt::Debug for TerminalApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalApprover").finish_non_exhaustive()
    }
}

impl TerminalApprover {
    /// Ask on standard input, show the question on standard error.
    pub fn stdio() -> Self {
        Self::new(std::io::BufReader::new(std::io::stdin()), std::io::stderr())
    }

    /// Ask with `input` answers, show the question on `output`.
    pub fn new(input: impl BufRead + Send + 'static, output: impl Write + Send + 'static) -> Self {
        Self {
            io: Arc::new(Mutex::new((Box::new(input), Box::new(output)))),
            memory: None,
        }
    }

    /// Offer "for this session" and "always": remember approved calls as rules, decided with
    /// `registry` in `ctx`, starting with `rules` (a kept session's approvals); save "always"
    /// ones to `save_to` when given.
    pub fn remembering(
        mut self,
        registry: Arc<ToolRegistry>,
        ctx: ToolContext,
        rules: Vec<String>,
        save_to: Option<SaveTo>,
    ) -> Self {
        self.memory = Some(Arc::new(Remembering {
            registry,
            ctx,
            rules: Mutex::new(rules),
            save_to,
        }));
        self
    }

    /// The rules approved for this session so far.
    pub fn session_rules(&self) -> Vec<String> {
        self.memory
            .as_ref()
            .map(|m| m.rules.lock().map(|r| r.clone()).unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Remembering {
    /// The remembered rule that allows this call, if any.
    fn allows(&self, request: &ApprovalRequest) -> Option<String> {
        let rules = self.rules.lock().ok()?.clone();
        rules
            .into_iter()
            .find(|rule| self.rule_allows(rule, request))
    }

    /// Does `rule`, alone, allow the call (by matching it, not by a mode or a read inside the
    /// project)?
    fn rule_allows(&self, rule: &str, request: &ApprovalRequest) -> bool {
        let mut b = PolicyBuilder::new();
        b.home(&self.ctx.home);
        if b.rule(RuleList::Allow, rule, Layer::CommandLine, None)
            .is_err()
        {
            return false;
        }
        let policy = b.build();
        let mut ctx = self.ctx.clone();
        ctx = ctx.with_permission_mode(tool_core::PermissionMode::Default);
        tool_permissions::decide(
            &policy,
            &self.registry,
            &request.tool_name,
            &request.input,
            &ctx,
        )
        .is_ok_and(|d| {
            d.verdict == Verdict::Allow
                && matches!(
                    d.reason,
                    DecisionReason::Rule {
                        list: RuleList::Allow,
                        ..
                    }
                )
        })
    }

    /// Remember the call for `scope`; what to tell the user.
    fn remember(&self, request: &ApprovalRequest, scope: Scope) -> String {
        let rule = self
            .registry
            .get(&request.tool_name)
            .ok_or_else(|| format!("{} is not a tool toolgate knows", request.tool_name))
            .and_then(|t| {
                let input = t.tool.normalize_input(request.input.clone());
                let subject = t.tool.permission_subject(&input, &self.ctx);
                tool_permissions::narrowest_rule(&request.tool_name, &subject)
            })
            .and_then(|rule| {
                if self.rule_allows(&rule, request) {
                    Ok(rule)
                } else {
                    Err(format!("`{rule}` would not match this call"))
                }
            });
        let rule = match rule {
            Ok(r) => r,
            Err(why) => return format!("approved once: no rule fits this call ({why})"),
        };
        if let Ok(mut rules) = self.rules.lock()
            && !rules.contains(&rule)
        {
            rules.push(rule.clone());
        }
        match (scope, &self.save_to) {
            (Scope::Always, Some(to)) => match tool_permissions::save_approval(&to.file, &rule) {
                Ok(line) => match (to.after_save)() {
                    Ok(()) => format!("saved `{rule}` to {}:{line}", to.file.display()),
                    Err(e) => format!("saved `{rule}` to {}:{line}, but {e}", to.file.display()),
                },
                Err(e) => format!("approved for this session as `{rule}`; not saved: {e}"),
            },
            _ => format!("approved for this session as `{rule}`"),
        }
    }
}

/// Characters that change what a reviewer sees without being visible themselves: controls,
/// bidirectional overrides and isolates, zero-width characters. Shown as `\u{..}`.
fn reveal(text: &str) -> String {
    text.chars()
        .map(|c| {
            let hidden = (c.is_control() && c != '\n')
                || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}');
            if hidden {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The question for one ask: the tool, what it would do, and why it needs approval.
pub fn question(request: &ApprovalRequest) -> String {
    question_with(request, false)
}

fn question_with(request: &ApprovalRequest, scopes: bool) -> String {
    let what = match request.input.as_object() {
        Some(o) if o.contains_key("command") => {
            o["command"].as_str().unwrap_or_default().to_owned()
        }
        Some(o) if o.contains_key("file_path") => {
            o["file_path"].as_str().unwrap_or_default().to_owned()
        }
        _ => serde_json::to_string(&request.input).unwrap_or_default(),
    };
    let choices = if scopes {
        "[y]es once / [s]ession / [a]lways / [N]o"
    } else {
        "[y/N]"
    };
    format!(
        "{} wants to run:\n  {}\n{}\n(because: {})\nAllow this call? {choices} ",
        request.tool_name,
        reveal(&what).replace('\n', "\n  "),
        reveal(&request.decision.message),
        request.decision.reason
    )
}

/// What an answer means: `None` is a refusal.
fn scope_of(answer: &str, scopes: bool) -> Option<Scope> {
    let a = answer.trim().to_ascii_lowercase();
    match a.as_str() {
        "y" | "yes" => Some(Scope::Once),
        "s" | "session" if scopes => Some(Scope::Session),
        "a" | "always" if scopes => Some(Scope::Always),
        _ => None,
    }
}

impl TerminalApprover {
    fn say(&self, text: String) {
        let io = Arc::clone(&self.io);
        if let Ok(mut guard) = io.lock() {
            let _ = writeln!(guard.1, "{text}");
            let _ = guard.1.flush();
        }
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        // Only an ask that nothing but the missing grant caused may be answered by a rule
        // remembered earlier.
        if let Some(memory) = &self.memory
            && request.decision.reason == DecisionReason::NotGranted
            && let Some(rule) = memory.allows(&request)
        {
            self.say(format!(
                "{} allowed by `{rule}`, approved earlier in this session",
                request.tool_name
            ));
            return Approval::Approve {
                updated_input: None,
            };
        }
        let scopes = self.memory.is_some();
        let io = Arc::clone(&self.io);
        let text = question_with(&request, scopes);
        let answer = tokio::task::spawn_blocking(move || {
            let mut guard = io.lock().ok()?;
            let (input, output) = &mut *guard;
            output.write_all(text.as_bytes()).ok()?;
            output.flush().ok()?;
            let mut line = String::new();
            input.read_line(&mut line).ok()?;
            Some(line)
        })
        .await
        .ok()
        .flatten();
        match answer.as_deref().and_then(|a| scope_of(a, scopes)) {
            Some(scope) => {
                if let (Some(memory), Scope::Session | Scope::Always) = (&self.memory, scope) {
                    let note = {
                        let memory = Arc::clone(memory);
                        let request = request.clone();
                        tokio::task::spawn_blocking(move || memory.remember(&request, scope))
                            .await
                            .unwrap_or_else(|e| format!("approved once: {e}"))
                    };
                    self.say(note);
                }
                Approval::Approve {
                    updated_input: None,
                }
            }
            None => Approval::Reject { feedback: None },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::{Decision, DecisionReason};

    fn request(command: &str) -> ApprovalRequest {
        ApprovalRequest {
            tool_name: "Bash".into(),
            tool_use_id: "t1".into(),
            input: serde_json::json!({"command": command}),
            decision: Decision::ask("This command requires approval", DecisionReason::NotGranted),
        }
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn only_yes_approves() {
        for (answer, approved) in [
            ("y\n", true),
            ("YES\n", true),
            ("n\n", false),
            ("", false),
            ("yy\n", false),
        ] {
            let a = TerminalApprover::new(
                std::io::Cursor::new(answer.as_bytes().to_vec()),
                Shared::default(),
            );
            let got = a.approve(request("make")).await;
            assert_eq!(
                matches!(got, Approval::Approve { .. }),
                approved,
                "{answer:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_question_shows_hidden_characters() {
        let out = Shared::default();
        let a = TerminalApprover::new(std::io::Cursor::new(b"n\n".to_vec()), out.clone());
        a.approve(request("echo safe\u{202E}fr- mr\u{200B}")).await;
        let shown = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(
            shown.contains("echo safe\\u{202e}fr- mr\\u{200b}"),
            "{shown}"
        );
        assert!(shown.contains("This command requires approval"), "{shown}");
        assert!(shown.ends_with("Allow this call? [y/N] "), "{shown}");
    }
}
