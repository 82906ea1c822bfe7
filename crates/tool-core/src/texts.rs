//! Model-visible texts that are part of the protocol (Claude Code's exact wording), shared by
//! the pipeline stages and the tools.

/// Sent for a call cancelled before it started.
pub const CANCEL_MESSAGE: &str = "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.";

/// Sent when the user rejects a call.
pub const REJECT_MESSAGE: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// Prefix of the rejection text when the user gave feedback.
pub const REJECT_WITH_FEEDBACK_PREFIX: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n";

/// The error of a call interrupted while it ran.
pub const INTERRUPTED_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// Appended to a denial the user did not make in person (don't-ask mode, no way to prompt).
pub const DENIAL_WORKAROUND_GUIDANCE: &str = "IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.";

/// Wrap a message in `<tool_use_error>` as Claude Code does for validation failures.
pub fn wrap_tool_use_error(message: &str) -> String {
    format!("<tool_use_error>{message}</tool_use_error>")
}

/// `Error: No such tool available: X`, wrapped.
pub fn no_such_tool(name: &str) -> String {
    wrap_tool_use_error(&format!("Error: No such tool available: {name}"))
}

/// The text for a known tool that is not offered in this session (not in the tool set, or
/// removed by a whole-tool deny).
pub fn tool_disabled(name: &str) -> String {
    wrap_tool_use_error(&format!(
        "Error: No such tool available: {name}. {name} is disabled for this session, in subagents as well as here."
    ))
}

/// The text for a name that matches an offered tool only when case is ignored.
pub fn tool_name_case(name: &str, actual: &str) -> String {
    wrap_tool_use_error(&format!(
        "Error: No such tool available: {name}. Tool names are case-sensitive: call {actual} instead."
    ))
}

/// An exception inside the pipeline (not the tool's own error).
pub fn error_calling_tool(tool: &str, message: &str) -> String {
    wrap_tool_use_error(&format!("Error calling tool ({tool}): {message}"))
}

/// The empty-result marker.
pub fn no_output(tool: &str) -> String {
    format!("({tool} completed with no output)")
}

/// `Claude requested permissions to use X, but you haven't granted it yet.`
pub fn permission_not_granted(agent: &str, tool: &str) -> String {
    format!("{agent} requested permissions to use {tool}, but you haven't granted it yet.")
}

/// `Permission to use X has been denied.`
pub fn permission_denied(tool: &str) -> String {
    format!("Permission to use {tool} has been denied.")
}

/// Cut a text longer than 10,000 characters in the middle, as Claude Code does for error
/// texts: the first 5,000 characters, a marker, the last 5,000.
pub fn truncate_middle(text: &str) -> String {
    const LIMIT: usize = 10_000;
    const HALF: usize = 5_000;
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.len() <= LIMIT {
        return text.to_owned();
    }
    let head = String::from_utf16_lossy(&units[..HALF]);
    let tail = String::from_utf16_lossy(&units[units.len() - HALF..]);
    format!(
        "{head}\n\n... [{} characters truncated] ...\n\n{tail}",
        units.len() - LIMIT
    )
}

/// Claude Code's `formatFileSize`: bytes below 1 KiB, else KB/MB/GB with one decimal and a
/// trailing `.0` dropped.
pub fn format_file_size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    let one = |v: f64| {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
    };
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < 1024.0 * 1024.0 {
        format!("{}KB", one(b / 1024.0))
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{}MB", one(b / 1024.0 / 1024.0))
    } else {
        format!("{}GB", one(b / 1024.0 / 1024.0 / 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_sizes() {
        assert_eq!(format_file_size(12), "12 bytes");
        assert_eq!(format_file_size(2048), "2KB");
        assert_eq!(format_file_size(320_000), "312.5KB");
        assert_eq!(format_file_size(5 * 1024 * 1024), "5MB");
        assert_eq!(format_file_size(3 * 1024 * 1024 * 1024 / 2), "1.5GB");
    }

    #[test]
    fn middle_truncation() {
        let short = "a".repeat(10_000);
        assert_eq!(truncate_middle(&short), short);
        let long = format!("{}{}", "a".repeat(6_000), "b".repeat(6_000));
        let t = truncate_middle(&long);
        assert!(t.starts_with(&"a".repeat(5_000)));
        assert!(t.ends_with(&"b".repeat(5_000)));
        assert!(t.contains("\n\n... [2000 characters truncated] ...\n\n"));
    }
}
