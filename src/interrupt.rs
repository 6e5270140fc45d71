//! Ctrl-C (SIGINT) and SIGTERM, heard the same way by every wait: the rounds of `check --wait`
//! and `--watch` (which end with their last round) and the commands that change a cluster
//! (`setup`, `start`, `solve`, `reset`, which end at once, exit 130, saying what to run next).

/// Completes on Ctrl-C (SIGINT) or SIGTERM. A handler that cannot be installed is as if the
/// signal never came (the default disposition then ends the process as usual).
pub async fn signal() {
    let term = async {
        #[cfg(unix)]
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
            return;
        }
        std::future::pending::<()>().await
    };
    tokio::select! {
        r = tokio::signal::ctrl_c() => {
            if r.is_err() {
                std::future::pending::<()>().await
            }
        }
        _ = term => {}
    }
}
