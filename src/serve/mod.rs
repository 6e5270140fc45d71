//! `grade --serve`: the room's scoreboard served over HTTP to a browser (a projector in a
//! workshop), following the cluster as grading does: the page is the `--html` page, and the
//! rows that change are pushed to it as Server-Sent Events, so it updates without reloading.
//!
//! - [`board`]: the listener of the room run that keeps the latest board and says what changed;
//! - [`http`]: the routes (`/`, `/events`, `/room.json`, `/learner/NAME`), read-only;
//! - [`access`]: who may ask: a token on a non-loopback address, the Host header on loopback.
//!
//! The server never talks to a cluster: it only shows what the run graded.

pub mod access;
pub mod board;
mod http;

use std::net::SocketAddr;

use tokio::sync::watch;

pub use access::{parse_addr, Access};
pub use board::LiveBoard;

use crate::text::Lang;
use crate::Error;

/// A running server: where it listens, and the handle that stops it.
pub struct Serving {
    pub addr: SocketAddr,
    /// The URL to open (with the token's query when there is one).
    pub url: String,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

/// Binds `addr` and serves the board `live` keeps. The address is bound before any grading,
/// so a port in use is said at once.
pub async fn start(
    addr: SocketAddr,
    token: Option<String>,
    live: &LiveBoard,
) -> Result<Serving, Error> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            (
                format!("別のポートを指定してください（--serve {}:{}、または空いているポートなら --serve {}:0）", addr.ip(), addr.port().wrapping_add(1), addr.ip()),
                format!("give another port (--serve {}:{}, or --serve {}:0 for any free one)", addr.ip(), addr.port().wrapping_add(1), addr.ip()),
            )
        } else {
            (
                "このマシンのアドレスを指定してください（--serve 127.0.0.1:8080）".to_string(),
                "give an address of this machine (--serve 127.0.0.1:8080)".to_string(),
            )
        };
        Error::usage(
            format!("--serve {addr}: 待ち受けできません: {e}。{}", hint.0),
            format!("--serve {addr}: cannot listen there: {e}; {}", hint.1),
        )
    })?;
    let addr = listener.local_addr().map_err(|e| {
        Error::environment(
            format!("--serve: 待ち受けアドレスを取得できません: {e}"),
            format!("--serve: cannot read the address listened on: {e}"),
        )
    })?;
    let access = Access::new(addr, token)?;
    let url = access.url();
    let (stop, stopped) = watch::channel(false);
    let app = http::router(live.shared(), access, stopped.clone());
    let mut until = stopped;
    let task = tokio::spawn(async move {
        let shutdown = async move {
            let _ = until.wait_for(|s| *s).await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!("--serve: the server stopped: {e}");
        }
    });
    Ok(Serving {
        addr,
        url,
        stop,
        task,
    })
}

impl Serving {
    /// Ends every open page's event stream (their pages say trainlab stopped) and the server.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        // Open streams end at once; a browser still sending a request gets a moment.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.task).await;
    }
}

/// What `grade --serve` says on stderr once it listens.
pub fn listening(url: &str, lang: Lang) -> String {
    crate::text::say(
        lang,
        format!("trainlab: スコアボードを配信しています: {url}（Ctrl-C で終了）\n"),
        format!("trainlab: serving the scoreboard at {url} (Ctrl-C to stop)\n"),
    )
}
