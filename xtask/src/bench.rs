//! Benchmarks, each measured side by side with a reference tool in one run.

use std::path::Path;

pub async fn read(_size_mib: u64) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}

pub async fn read_window(_file: &Path, _offset: i64, _limit: i64) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
