//! `profile --listen ADDR:PORT`: the live profile's cumulative histograms served to
//! Prometheus at `/metrics` (docs/PROFILE.md). `MetricsSink` adds each finished interval to
//! the totals; a thread answers scrapes one connection at a time (a request is read for at
//! most 2 s and 8 KiB, so a peer costs bounded time and memory), in the format the scraper's
//! `Accept` header asks for (`ra_profile::metrics`). Only loopback addresses are accepted: the
//! endpoint has no authentication, so it is not offered to other hosts.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use ra_profile::metrics::{self, Format};
use ra_profile::{Hist, Interval, Key, Meta, ProfileSink};

#[derive(Default)]
struct Totals {
    meta: Meta,
    hists: BTreeMap<Key, Hist>,
    counters: BTreeMap<String, u64>,
    last_end_ns: Option<u64>,
}

pub struct MetricsSink {
    totals: Arc<Mutex<Totals>>,
}

impl MetricsSink {
    /// Bind `addr` (a loopback address and port) and start answering scrapes.
    pub fn listen(addr: &str) -> Result<MetricsSink> {
        let sa: SocketAddr = addr
            .parse()
            .map_err(|_| anyhow::anyhow!("--listen {addr}: give ADDR:PORT, e.g. 127.0.0.1:9464"))?;
        if !sa.ip().is_loopback() {
            bail!(
                "--listen {addr}: only loopback addresses (127.0.0.1, ::1): the endpoint has no \
                 authentication (scrape it from this host, or through an authenticating proxy)"
            );
        }
        let l = TcpListener::bind(sa).with_context(|| format!("--listen {addr}: cannot bind"))?;
        let totals = Arc::new(Mutex::new(Totals::default()));
        let t = totals.clone();
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                for conn in l.incoming() {
                    let Ok(c) = conn else { continue };
                    // A failed answer is the scraper's problem: it retries next interval.
                    let _ = serve(c, &t);
                }
            })
            .context("cannot start the metrics thread")?;
        Ok(MetricsSink { totals })
    }
}

fn serve(mut c: TcpStream, totals: &Mutex<Totals>) -> io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        if req.len() > 8192 {
            return respond(&mut c, "431 Request Header Fields Too Large", "text/plain", b"");
        }
        let n = c.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        req.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&req);
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" {
        return respond(&mut c, "405 Method Not Allowed", "text/plain", b"GET /metrics\n");
    }
    if path != "/metrics" && !path.starts_with("/metrics?") {
        return respond(&mut c, "404 Not Found", "text/plain", b"see /metrics\n");
    }
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map_or(String::new(), |(_, v)| v.trim().to_string());
    let format = Format::negotiate(&accept);
    let body = {
        let t = totals.lock().unwrap_or_else(|e| e.into_inner());
        match format {
            Format::Protobuf => metrics::protobuf(&t.meta, &t.hists, &t.counters, t.last_end_ns),
            Format::OpenMetrics => {
                metrics::text(&t.meta, &t.hists, &t.counters, t.last_end_ns, true).into_bytes()
            }
            Format::Text => {
                metrics::text(&t.meta, &t.hists, &t.counters, t.last_end_ns, false).into_bytes()
            }
        }
    };
    respond(&mut c, "200 OK", format.content_type(), &body)
}

fn respond(c: &mut TcpStream, status: &str, ctype: &str, body: &[u8]) -> io::Result<()> {
    write!(
        c,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    c.write_all(body)?;
    c.flush()
}

impl ProfileSink for MetricsSink {
    fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).meta = meta.clone();
        Ok(())
    }

    fn interval(&mut self, iv: &Interval) -> io::Result<()> {
        let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        for (k, h) in &iv.hists {
            t.hists.entry(k.clone()).or_default().merge(h);
        }
        for (k, v) in &iv.counters {
            *t.counters.entry(k.clone()).or_default() += v;
        }
        t.last_end_ns = Some(t.last_end_ns.unwrap_or(0).max(iv.end_ns));
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
