//! The audit trail: what the pipeline tells `tracing` about each call, and a
//! `tracing-subscriber` layer that writes it as JSON lines.
//!
//! The pipeline always emits (whatever subscriber the host installs sees them, an
//! OpenTelemetry one included):
//! - a `turn` span per turn (`session`, `calls`), a `tool_call` span per call (`session`,
//!   `tool_use_id`, `tool`) and a `stage` span per pipeline stage (`stage`);
//! - on the target [`AUDIT_TARGET`], per call: a `decision` event when a permission decision
//!   was made, `hook` events from tool-hooks for each hook that ran, and a `call` event when
//!   the call ends.
//!
//! [`AuditLayer`] (feature `audit`) writes each event of that target as one JSON object per
//! line, with the fields of the spans around it (the session, the tool_use id) and the time.
//! The fields are listed in the README.

use sha2::Digest as _;
use tool_core::{DecisionReason, ToolOutcome, ToolUse};

/// The `tracing` target of audit events.
pub const AUDIT_TARGET: &str = "toolgate::audit";

/// A digest of a call's input: `sha256:` and the first 16 hex digits of the SHA-256 of its
/// JSON text. Enough to match a line to a transcript without copying secrets into the log.
pub fn input_digest(input: &serde_json::Value) -> String {
    let hash = sha2::Sha256::digest(input.to_string().as_bytes());
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Emit the `decision` and `call` events of one finished call.
pub(crate) fn emit_call(tool_use: &ToolUse, outcome: &ToolOutcome, duration: std::time::Duration) {
    if !tracing::enabled!(target: AUDIT_TARGET, tracing::Level::INFO) {
        return;
    }
    let digest = input_digest(&tool_use.input);
    if let Some(d) = &outcome.decision {
        let (rule, list, source, check, hook) = match &d.reason {
            DecisionReason::Rule { rule, list, source } => (
                Some(rule.as_str()),
                Some(list.to_string()),
                Some(source.as_str()),
                None,
                None,
            ),
            DecisionReason::Check { name } => (None, None, None, Some(name.as_str()), None),
            DecisionReason::Hook { hook, .. } => (None, None, None, None, Some(hook.as_str())),
            _ => (None, None, None, None, None),
        };
        tracing::info!(
            target: AUDIT_TARGET,
            kind = "decision",
            tool_use_id = %tool_use.id,
            tool = %tool_use.name,
            input_digest = %digest,
            verdict = %d.verdict,
            reason = %d.reason,
            rule,
            list,
            source,
            check,
            hook,
        );
    }
    let outcome_text = match (outcome.stage, outcome.is_error) {
        (tool_core::Stage::Ran, false) => "ok",
        (tool_core::Stage::Ran, true) => "error",
        _ => "refused",
    };
    tracing::info!(
        target: AUDIT_TARGET,
        kind = "call",
        tool_use_id = %tool_use.id,
        tool = %tool_use.name,
        input_digest = %digest,
        verdict = outcome.decision.as_ref().map(|d| d.verdict.to_string()),
        stage = ?outcome.stage,
        outcome = outcome_text,
        duration_ms = (duration.as_secs_f64() * 1e6).round() / 1e3,
    );
}

#[cfg(feature = "audit")]
pub use layer::AuditLayer;

#[cfg(feature = "audit")]
mod layer {
    use std::io::Write;
    use std::sync::Mutex;

    use serde_json::{Map, Value};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Subscriber};
    use tracing_subscriber::layer::Context;
    use tracing_subscriber::registry::LookupSpan;

    use super::AUDIT_TARGET;

    /// Writes every audit event as one JSON line: the event's fields, the fields of the
    /// spans around it that it does not have itself (`session`, ...), `time` (RFC 3339, UTC)
    /// and `time_ms` (milliseconds since the epoch).
    pub struct AuditLayer {
        out: Mutex<Box<dyn Write + Send>>,
    }

    impl std::fmt::Debug for AuditLayer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("AuditLayer").finish_non_exhaustive()
        }
    }

    impl AuditLayer {
        /// A layer writing to `out` (a file, a pipe, a buffer).
        pub fn new(out: impl Write + Send + 'static) -> Self {
            Self {
                out: Mutex::new(Box::new(out)),
            }
        }
    }

    /// The fields of a span, kept in its extensions.
    struct SpanFields(Map<String, Value>);

    struct Collect<'a>(&'a mut Map<String, Value>);

    impl Visit for Collect<'_> {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_owned(), Value::from(value));
        }
        fn record_bool(&mut self, field: &Field, value: bool) {
            self.0.insert(field.name().to_owned(), Value::from(value));
        }
        fn record_i64(&mut self, field: &Field, value: i64) {
            self.0.insert(field.name().to_owned(), Value::from(value));
        }
        fn record_u64(&mut self, field: &Field, value: u64) {
            self.0.insert(field.name().to_owned(), Value::from(value));
        }
        fn record_f64(&mut self, field: &Field, value: f64) {
            self.0.insert(field.name().to_owned(), Value::from(value));
        }
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0
                .insert(field.name().to_owned(), Value::from(format!("{value:?}")));
        }
    }

    impl<S> tracing_subscriber::Layer<S> for AuditLayer
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
            metadata.is_span() || metadata.target() == AUDIT_TARGET
        }

        fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
            let mut fields = Map::new();
            attrs.record(&mut Collect(&mut fields));
            if let Some(span) = ctx.span(id) {
                span.extensions_mut().insert(SpanFields(fields));
            }
        }

        fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
            if let Some(span) = ctx.span(id)
                && let Some(fields) = span.extensions_mut().get_mut::<SpanFields>()
            {
                values.record(&mut Collect(&mut fields.0));
            }
        }

        fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
            if event.metadata().target() != AUDIT_TARGET {
                return;
            }
            let mut line = Map::new();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            line.insert("time".into(), Value::from(rfc3339(now)));
            line.insert("time_ms".into(), Value::from(now.as_millis() as u64));
            event.record(&mut Collect(&mut line));
            if let Some(scope) = ctx.event_scope(event) {
                for span in scope {
                    if let Some(fields) = span.extensions().get::<SpanFields>() {
                        for (k, v) in &fields.0 {
                            line.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
            }
            let text = Value::Object(line).to_string();
            if let Ok(mut out) = self.out.lock() {
                // An audit line that cannot be written is reported once per line on stderr;
                // the call itself goes on.
                if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
                    eprintln!("toolgate: cannot write the audit log: {e}");
                }
            }
        }
    }

    /// `since` (from the epoch) as `YYYY-MM-DDThh:mm:ss.mmmZ`.
    pub(super) fn rfc3339(since: std::time::Duration) -> String {
        let secs = since.as_secs();
        let (days, rest) = (secs / 86_400, secs % 86_400);
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60,
            since.subsec_millis()
        )
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn times_are_rfc3339() {
            use std::time::Duration;
            assert_eq!(rfc3339(Duration::ZERO), "1970-01-01T00:00:00.000Z");
            assert_eq!(
                rfc3339(Duration::from_millis(951_782_400_123)),
                "2000-02-29T00:00:00.123Z"
            );
            assert_eq!(
                rfc3339(Duration::from_secs(1_796_083_199)),
                "2026-11-30T23:59:59.000Z"
            );
        }
    }
}
