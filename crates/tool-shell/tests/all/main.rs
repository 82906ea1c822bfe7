//! Integration tests of tool-shell, one binary.
#![allow(clippy::expect_used)] // helpers outside #[test] functions fail the test the same way

mod lang_awk;
mod lang_sed;
