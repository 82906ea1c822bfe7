//! The CLI's approver: an ask becomes a question on the terminal. Run without a terminal,
//! `toolgate run` has no approver and asks are refused with Claude Code's headless text.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tool_core::{Approval, ApprovalRequest, Approver};

/// Where answers come from and where questions go.
type Terminal = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// Asks the user on a terminal (or any line reader and writer) whether to run a call.
pub struct TerminalApprover {
    io: Arc<Mutex<Terminal>>,
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
    let what = match request.input.as_object() {
        Some(o) if o.contains_key("command") => {
            o["command"].as_str().unwrap_or_default().to_owned()
        }
        Some(o) if o.contains_key("file_path") => {
            o["file_path"].as_str().unwrap_or_default().to_owned()
        }
        _ => serde_json::to_string(&request.input).unwrap_or_default(),
    };
    format!(
        "{} wants to run:\n  {}\n{}\n(because: {})\nAllow this call? [y/N] ",
        request.tool_name,
        reveal(&what).replace('\n', "\n  "),
        reveal(&request.decision.message),
        request.decision.reason
    )
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let io = Arc::clone(&self.io);
        let text = question(&request);
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
        match answer.as_deref().map(str::trim) {
            Some(a) if a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes") => {
                Approval::Approve {
                    updated_input: None,
                }
            }
            _ => Approval::Reject { feedback: None },
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
