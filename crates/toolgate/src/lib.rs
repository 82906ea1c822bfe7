//! The `toolgate` program's library: running transcripts and oracle scenarios against a
//! workspace (shared with `cargo xtask conformance`), and the built-in demo.

pub mod check;
pub mod demo;
pub mod prompt;
pub mod scenario;
pub mod transcript;
