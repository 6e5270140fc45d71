//! What both browser tests need: the trainlab binary, Debian's Chromium started headless, and
//! a value read out of the page.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The trainlab binary: TRAINLAB_BIN, else the root package's debug build.
pub fn trainlab() -> PathBuf {
    let p = std::env::var_os("TRAINLAB_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/debug/trainlab")
        });
    assert!(
        p.exists(),
        "{} not found: run `cargo build` at the repository root first, or set TRAINLAB_BIN",
        p.display()
    );
    p
}

pub fn chromium() -> PathBuf {
    let p = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(CHROMIUM));
    assert!(
        p.exists(),
        "{} not found: install Debian's Chromium (`apt-get install -y chromium`, as .ci/run does) or set CHROMIUM",
        p.display()
    );
    p
}

/// A browser whose window is `width` × `height` pixels.
pub fn browser_sized(profile: &Path, width: u32, height: u32) -> Browser {
    let opts = LaunchOptions::default_builder()
        .path(Some(chromium()))
        .headless(true)
        .sandbox(false)
        .user_data_dir(Some(profile.to_path_buf()))
        .window_size(Some((width, height)))
        .idle_browser_timeout(Duration::from_secs(120))
        .args(vec![
            OsStr::new("--headless"),
            OsStr::new("--no-sandbox"),
            OsStr::new("--disable-gpu"),
            OsStr::new("--disable-background-networking"),
        ])
        .build()
        .expect("launch options");
    Browser::new(opts).expect("start headless Chromium")
}

/// Evaluates `expr` (which must produce a JSON string) in the page.
pub fn eval(tab: &Tab, expr: &str) -> Value {
    let r = tab
        .evaluate(&format!("JSON.stringify({expr})"), false)
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    let text = r.value.and_then(|v| v.as_str().map(str::to_string));
    serde_json::from_str(&text.unwrap_or_else(|| panic!("{expr} gave no value")))
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}
