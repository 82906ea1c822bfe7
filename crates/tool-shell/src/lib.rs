//! Bash command-line analysis for toolgate: the simple commands a command line runs (through
//! lists, pipelines, subshells, substitutions, heredocs and redirections), the wrappers around
//! them, and a read-only classification that fails closed.
//!
//! This crate is empty for now. Its job arrives with the Bash tool (which needs the read-only
//! classification to decide whether a call may run alongside others) and with the permission
//! engine (which checks every executed command against the rules). It will depend on nothing
//! else of toolgate's.
