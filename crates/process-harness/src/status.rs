//! What `/proc` says about a process: its memory, and which processes run.

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`, `RssAnon`, ...), or `None` where
/// the process or the field is gone.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| {
        l.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resident memory (VmRSS) in MiB.
pub fn rss_mib(pid: u32) -> Option<f64> {
    status_kib(pid, "VmRSS").map(|kib| kib as f64 / 1024.0)
}

/// Proportional set size in MiB (`/proc/<pid>/smaps_rollup`): resident memory with each
/// shared page counted once, however many mappings show it. VmRSS counts a page once per
/// mapping, so a snapshot's copy-on-write image mapped by several instances counts several
/// times there.
pub fn pss_mib(pid: u32) -> Option<f64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|l| l.starts_with("Pss:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The command lines (arguments joined by spaces) of this machine's processes that contain
/// every one of `needles`: what a test checks is no longer running.
pub fn processes_with(needles: &[&str]) -> Vec<String> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .filter(|c| needles.iter().all(|n| c.contains(n)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_this_process_memory_and_finds_it_by_its_command_line() {
        let me = std::process::id();
        let rss = super::status_kib(me, "VmRSS").expect("this process has a VmRSS");
        assert!(rss > 100, "{rss} kB");
        // `VmRSS` must not match a longer field name that starts with it.
        assert_eq!(super::status_kib(me, "VmRS"), None);
        assert!(super::pss_mib(me).is_some_and(|p| p > 0.0));
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_str().unwrap();
        assert!(!super::processes_with(&[name]).is_empty());
        assert!(super::processes_with(&[name, "no such argument \u{1}"]).is_empty());
    }
}
