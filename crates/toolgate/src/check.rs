//! Where `toolgate check` and `toolgate policy test` read a workspace's policy. The decisions
//! themselves are the library's: [`tool_permissions::decide`] and
//! [`tool_permissions::run_tests`].

use std::path::{Path, PathBuf};

use tool_permissions::{PolicySources, Trust};

/// Where the CLI reads a workspace's policy: the standard layers for `ws` (managed, user
/// in `$XDG_CONFIG_HOME/toolgate`, the project's `.toolgate/` and `.claude/` files), plus the
/// command-line files. `trusted` forces trust on; otherwise the user's trust store decides.
pub fn sources(ws: &Path, home: &Path, command_line: &[PathBuf], trusted: bool) -> PolicySources {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let trust = if trusted {
        Trust::Trusted
    } else {
        Trust::Store
    };
    let mut s = PolicySources::standard(ws, home, xdg.as_deref(), trust);
    s.command_line = command_line.to_vec();
    s
}
