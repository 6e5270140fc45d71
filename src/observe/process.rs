//! What this process holds, for `-v`: where a big room's memory goes is said beside each phase
//! (Linux's `/proc/self/status`; elsewhere nothing is said).

/// ` (resident 123.4 MB, peak 150.2 MB)`, or nothing where it cannot be read.
pub fn memory() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return String::new();
    };
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024.0 / 1e6)
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(now), Some(peak)) => format!(" (resident {now:.1} MB, peak {peak:.1} MB)"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_is_said_in_megabytes_on_linux() {
        let said = super::memory();
        if cfg!(target_os = "linux") {
            assert!(
                said.starts_with(" (resident ") && said.ends_with(" MB)"),
                "{said}"
            );
        }
    }
}
