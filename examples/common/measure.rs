//! What the examples measure a process by: its CPU time and its memory as the
//! kernel reports them. Included by path (`#[path = "common/measure.rs"] mod
//! measure;`): an example is a crate of its own, and each uses what it needs.
#![allow(dead_code)]

use std::time::Duration;

/// CPU time (user + system) of this process so far, all threads.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let of = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    of(usage.ru_utime) + of(usage.ru_stime)
}

/// A size field of /proc/self/status (`"VmRSS:"`, `"VmHWM:"`) in MB; 0 if absent.
pub fn status_mb(field: &str) -> f64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
