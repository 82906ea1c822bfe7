//! One-call decisions: the decision for a tool call given by name and JSON input, as the
//! engine would make it before running the call, and a policy file's `[[tests]]` run against
//! its policy.

use serde_json::Value;
use tool_core::{Decision, Lookup, PermissionPolicy, PermissionRequest, ToolContext, ToolRegistry};

use crate::Error;
use crate::policy::Policy;

/// The permission decision `policy` makes for a call of `tool` with `input` in `ctx`, without
/// running it.
///
/// Every registered tool counts as offered, so a whole-tool deny shows as the deny it is. The
/// input is checked against the tool's schema and normalized as the engine does before asking
/// for permission; the tool says what the call touches
/// ([`permission_subject`](tool_core::Tool::permission_subject)), and `policy` decides on the
/// resulting [`PermissionRequest`].
///
/// # Errors
///
/// [`Error::UnknownTool`] when `registry` has no tool of that name, [`Error::InvalidInput`]
/// when `input` does not pass the tool's schema; each carries the text the model would be
/// shown.
pub fn decide(
    policy: &dyn PermissionPolicy,
    registry: &ToolRegistry,
    tool: &str,
    input: &Value,
    ctx: &ToolContext,
) -> Result<Decision, Error> {
    let ctx = &*ctx.with_policy_defaults(policy);
    let found = match registry.lookup(tool, &|_| true) {
        Lookup::Found(t) => t,
        // WebFetch where the host runs none of its own: decided on its URL's domain.
        Lookup::NotFound(_) if tool == "WebFetch" => {
            return crate::decide_call(policy, tool, input, ctx);
        }
        Lookup::NotFound(text) => return Err(Error::UnknownTool(text)),
    };
    let input = found
        .schema
        .check(input)
        .map_err(|e| Error::InvalidInput(e.render(found.name())))?;
    let input = found.tool.normalize_input(input);
    let subject = found.tool.permission_subject(&input, ctx);
    let request = PermissionRequest::for_tool(found.tool.as_ref(), &input, &subject, ctx);
    Ok(policy.decide(&request))
}

/// What running a policy's `[[tests]]` found: one line per test, and the counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestReport {
    /// One line per test, in order: `PASS name: verdict (reason)`,
    /// `FAIL name: expected X, got Y (because reason)` or
    /// `FAIL name: the call cannot be decided: why`.
    pub lines: Vec<String>,
    /// Tests that gave the expected verdict.
    pub passed: usize,
    /// Tests that did not, or whose call could not be decided.
    pub failed: usize,
}

/// Run `policy`'s `[[tests]]` (from its policy files) against it with [`decide`], each in
/// `ctx` with the test's own permission mode if it names one.
pub fn run_tests(policy: &Policy, registry: &ToolRegistry, ctx: &ToolContext) -> TestReport {
    run_tests_with(policy, ctx, &|tool, input, ctx| {
        decide(policy, registry, tool, input, ctx)
    })
}

/// [`run_tests`] for a host without a tool registry: each test decided with
/// [`decide_call`](crate::decide_call).
pub fn run_call_tests(policy: &Policy, ctx: &ToolContext) -> TestReport {
    run_tests_with(policy, ctx, &|tool, input, ctx| {
        crate::decide_call(policy, tool, input, ctx)
    })
}

type Decider<'a> = dyn Fn(&str, &Value, &ToolContext) -> Result<Decision, Error> + 'a;

fn run_tests_with(policy: &Policy, ctx: &ToolContext, decide: &Decider<'_>) -> TestReport {
    let mut report = TestReport::default();
    for t in policy.tests() {
        let mut ctx = ctx.clone();
        if let Some(m) = t.mode {
            ctx = ctx.with_permission_mode(m);
        }
        let label = t.label();
        match decide(&t.tool, &t.input, &ctx) {
            Ok(d) if d.verdict == t.expect => {
                report.passed += 1;
                report
                    .lines
                    .push(format!("PASS {label}: {} ({})", d.verdict, d.reason));
            }
            Ok(d) => {
                report.failed += 1;
                report.lines.push(format!(
                    "FAIL {label}: expected {}, got {} (because {})",
                    t.expect, d.verdict, d.reason
                ));
            }
            Err(e) => {
                report.failed += 1;
                report
                    .lines
                    .push(format!("FAIL {label}: the call cannot be decided: {e}"));
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use serde_json::json;
    use tool_core::{
        PermissionSubject, RuleList, Tool, ToolCallError, ToolOutput, Verdict, async_trait,
    };

    use super::*;
    use crate::policy::{Layer, PolicyBuilder};

    /// Writes `text` to the file at `path`.
    struct Put;

    #[async_trait]
    impl Tool for Put {
        fn name(&self) -> &str {
            "Put"
        }
        fn description(&self) -> String {
            "Writes a file.".into()
        }
        fn input_schema(&self) -> Value {
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                "required": ["path", "text"],
                "additionalProperties": false
            })
        }
        fn permission_subject(&self, input: &Value, ctx: &ToolContext) -> PermissionSubject {
            let path = input["path"].as_str().unwrap_or_default();
            PermissionSubject::WritePaths(vec![ctx.resolve_path(path)])
        }
        async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolCallError> {
            Err(ToolCallError::new("not run in these tests"))
        }
    }

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Put))
            .unwrap_or_else(|e| panic!("register: {e}"));
        r
    }

    fn ctx() -> ToolContext {
        ToolContext::new("/w/p", "/home/u", "/tmp/results")
    }

    #[test]
    fn unknown_tool_is_an_error_with_the_model_text() {
        let err = decide(&Policy::empty(), &registry(), "Nope", &json!({}), &ctx())
            .expect_err("no such tool");
        assert!(matches!(err, Error::UnknownTool(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            tool_core::texts::no_such_tool("Nope"),
            "the text the model is shown"
        );
    }

    #[test]
    fn invalid_input_is_an_error_with_the_schema_text() {
        let err = decide(
            &Policy::empty(),
            &registry(),
            "Put",
            &json!({"path": "a.txt", "text": 5}),
            &ctx(),
        )
        .expect_err("bad input");
        assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "Put failed due to the following issue:\nThe parameter `text` type is expected as `string` but provided as `number`"
        );
    }

    #[test]
    fn decides_with_the_tools_own_subject() {
        let mut b = PolicyBuilder::new();
        b.rule(RuleList::Allow, "Edit(/out/**)", Layer::User, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let policy = b.build();
        let input = json!({"path": "out/a.txt", "text": "x"});
        let d =
            decide(&policy, &registry(), "Put", &input, &ctx()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.verdict, Verdict::Allow);
        assert_eq!(
            d.reason.to_string(),
            "allow rule `Edit(/out/**)` from user settings"
        );
        // A write the rule does not cover is not granted.
        let input = json!({"path": "src/a.txt", "text": "x"});
        let d =
            decide(&policy, &registry(), "Put", &input, &ctx()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.verdict, Verdict::Ask);
    }

    #[test]
    fn run_tests_reports_pass_fail_and_undecidable_lines() {
        let toml = r#"
[permissions]
deny = ["Edit(/secret/**)"]

[[tests]]
name = "secret is denied"
tool = "Put"
input = { path = "secret/k", text = "x" }
expect = "deny"

[[tests]]
name = "wrong expectation"
tool = "Put"
input = { path = "src/a.rs", text = "x" }
expect = "allow"

[[tests]]
tool = "Nope"
expect = "deny"
"#;
        let mut b = PolicyBuilder::new();
        b.trust_project(true);
        b.toml_str(toml, Layer::Project, Path::new("p.toml"), Path::new("/w/p"))
            .unwrap_or_else(|e| panic!("{e}"));
        let policy = b.build();
        let report = run_tests(&policy, &registry(), &ctx());
        assert_eq!(
            (report.passed, report.failed),
            (1, 2),
            "{:#?}",
            report.lines
        );
        assert_eq!(
            report.lines[0],
            "PASS secret is denied: deny (deny rule `Edit(/secret/**)` from project settings (p.toml:3))"
        );
        assert_eq!(
            report.lines[1],
            "FAIL wrong expectation: expected allow, got ask (because no rule or mode allows it)"
        );
        assert_eq!(
            report.lines[2],
            format!(
                "FAIL p.toml:17: the call cannot be decided: {}",
                tool_core::texts::no_such_tool("Nope")
            )
        );
    }
}
