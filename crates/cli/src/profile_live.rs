//! `reanimator profile` without a trace: the live eBPF profiler (being built separately; this
//! stub stands in until it lands).

use std::process::ExitCode;

use anyhow::{bail, Result};
use ra_profile::ProfileSink;

use crate::profile::ProfileArgs;

pub fn run(_args: &ProfileArgs, _sink: &mut dyn ProfileSink) -> Result<ExitCode> {
    bail!("live profiling: not built yet (give a trace: reanimator profile TRACE)")
}
