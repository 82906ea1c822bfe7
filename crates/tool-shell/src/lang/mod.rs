//! Mini-languages with their own file and process access: `sed` scripts and `awk` programs,
//! parsed far enough to say what they read, write and execute.

pub mod awk;
pub mod sed;

/// What a script reads, writes and runs. A script that cannot be understood (it does not
/// parse, or names a file or a command only at run time) says so in `unknown`, which makes the
/// command not read-only and floors an allow at ask.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptEffects {
    /// Files the script reads (sed `r`/`R`, awk `getline < FILE`).
    pub reads: Vec<String>,
    /// Files the script writes (sed `w`/`W`, `s///w`; awk `print > FILE`, `>>`).
    pub writes: Vec<String>,
    /// Shell code the script runs (sed `e CMD`; awk `system("CMD")`, `print | "CMD"`,
    /// `"CMD" | getline`).
    pub exec_strings: Vec<String>,
    /// Why some effect cannot be known statically (empty when everything is known).
    pub unknown: Vec<String>,
}

impl ScriptEffects {
    /// A script nothing can be known about.
    pub fn unknown(why: impl Into<String>) -> Self {
        Self {
            unknown: vec![why.into()],
            ..Self::default()
        }
    }

    /// Does the script only read?
    pub fn is_read_only(&self) -> bool {
        self.writes.is_empty() && self.exec_strings.is_empty() && self.unknown.is_empty()
    }
}
