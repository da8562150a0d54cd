//! `reanimator profile` without a trace: the live profiler (eBPF, root). The kernel side and
//! its reader are `ra_capture::ebpf::profile`; this module turns the command line into its
//! options, adds the `class` layer (system calls summed by I/O class, from the registry's one
//! mapping) and streams every interval into the outputs as it ends.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use ra_capture::ebpf::profile::{self as live, LiveEvent, LiveOptions, LiveTarget, LAYERS};
use ra_profile::{Hist, Interval, Key, ProfileSink};

use crate::profile::{By, ProfileArgs};

/// Layers `--layers` takes: the kernel's, plus `class` (derived from `syscall`) and `all`.
fn parse_layers(given: &[String]) -> Result<(Vec<String>, bool)> {
    if given.is_empty() {
        return Ok((vec!["syscall".into()], false));
    }
    let mut kernel = Vec::new();
    let mut class = false;
    for l in given {
        match l.as_str() {
            "all" => {
                kernel = LAYERS.iter().map(|s| s.to_string()).collect();
                class = true;
            }
            "class" => class = true,
            l if LAYERS.contains(&l) => kernel.push(l.to_string()),
            other => bail!(
                "--layers: unknown layer `{other}` (known: {}, class, all)",
                LAYERS.join(", ")
            ),
        }
    }
    if class && !kernel.iter().any(|l| l == "syscall") {
        kernel.push("syscall".into());
    }
    kernel.sort();
    kernel.dedup();
    Ok((kernel, class))
}

fn target(a: &ProfileArgs) -> Result<LiveTarget> {
    let n = usize::from(a.pid.is_some())
        + usize::from(a.cgroup.is_some())
        + usize::from(a.all)
        + usize::from(!a.cmd.is_empty());
    if n != 1 {
        bail!(
            "say what to profile: a TRACE, or one of -p PID, --cgroup PATH, --all or -- CMD \
             (see reanimator profile --help)"
        );
    }
    Ok(if let Some(p) = a.pid {
        if p <= 0 {
            bail!("-p {p}: not a process id");
        }
        LiveTarget::Pid(p)
    } else if let Some(c) = &a.cgroup {
        LiveTarget::Cgroup(c.clone())
    } else if a.all {
        LiveTarget::All
    } else {
        LiveTarget::Command(a.cmd.iter().map(OsString::from).collect())
    })
}

/// Add the `class` layer: each system call's histogram summed into its I/O class's.
fn add_classes(iv: &mut Interval) {
    let mut classes: BTreeMap<Key, Hist> = BTreeMap::new();
    for (k, h) in &iv.hists {
        if k.layer == "syscall" {
            let class = ra_syscalls::io_class(&k.op).name();
            let key = Key { layer: "class".into(), op: class.into(), group: k.group.clone() };
            classes.entry(key).or_default().merge(h);
        }
    }
    iv.hists.extend(classes);
}

pub fn run(a: &ProfileArgs, sink: &mut dyn ProfileSink) -> Result<ExitCode> {
    let target = target(a)?;
    let (layers, class) = parse_layers(&a.layers)?;
    let by = match a.by {
        By::Call => live::By::Call,
        By::Fs => live::By::Fs,
        By::Pid => live::By::Pid,
        By::Comm => live::By::Comm,
        By::Path => live::By::Path(a.depth.clamp(1, 32) as u32),
    };
    let interval = Duration::from_nanos(a.interval_ns()?.unwrap_or(1_000_000_000));
    if interval < Duration::from_millis(50) {
        bail!("--interval: live intervals are at least 0.05 s");
    }
    let duration = match a.duration {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--duration {s}: give a positive number of seconds"),
    };
    let map_bytes = match &a.map_size {
        Some(s) => crate::record::parse_size(s).map_err(|e| anyhow::anyhow!("--map-size: {e}"))?,
        None => 16 << 20,
    };
    if a.scale()? != ra_profile::Scale::Log2 {
        bail!("--buckets: the live profiler's histograms are log2 (the kernel bins them); other buckets apply to traces");
    }
    let opts = LiveOptions {
        target,
        by,
        layers,
        interval,
        duration,
        calibrate: a.calibrate,
        map_bytes,
        sample: a.sample()?,
        value: a.value()?.map(str::to_string),
    };
    crate::record::install_stop_handlers();
    let mut write_err = None;
    let outcome = live::run(&opts, |e| {
        let r = match e {
            LiveEvent::Meta(m) => sink.meta(m),
            LiveEvent::Interval(iv) if class => {
                let mut iv = iv.clone();
                add_classes(&mut iv);
                sink.interval(&iv)
            }
            LiveEvent::Interval(iv) => sink.interval(iv),
        };
        if let Err(e) = &r {
            write_err = Some(e.to_string());
        }
        r
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            if let Some(w) = write_err {
                bail!("cannot write the profile: {w}");
            }
            return Err(e.into());
        }
    };
    sink.finish()?;
    eprintln!("reanimator profile: ended: {}", outcome.reason);
    if outcome.map_full > 0 {
        eprintln!(
            "reanimator profile: {} calls were not counted: the kernel's histogram map was full \
             (raise --map-size)",
            outcome.map_full
        );
    }
    Ok(match outcome.exit_code {
        Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
        None if outcome.map_full > 0 => ExitCode::from(1),
        None => ExitCode::SUCCESS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_parse() {
        assert_eq!(parse_layers(&[]).unwrap(), (vec!["syscall".to_string()], false));
        let (k, c) = parse_layers(&["class".into(), "block".into()]).unwrap();
        assert_eq!((k, c), (vec!["block".to_string(), "syscall".to_string()], true));
        assert_eq!(parse_layers(&["all".into()]).unwrap().0.len(), LAYERS.len());
        assert!(parse_layers(&["vfs".into()]).unwrap_err().to_string().contains("unknown layer"));
    }
}
