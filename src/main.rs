// No unsafe code here either (lib.rs forbids it in the library).
#![forbid(unsafe_code)]

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

/// A room's judgement allocates and frees millions of small JSON values across threads; mimalloc
/// keeps them in per-thread pages where glibc's malloc consolidated and locked (benches/room.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = trainlab::cli::args::parse_or_exit();
    init_logging(cli.global.verbose);
    raise_open_file_limit();
    std::process::exit(trainlab::cli::dispatch(cli));
}

/// Logs to stderr (stdout stays the report): warnings only by default; `-v` one line per API
/// request (verb, path, status, milliseconds); `-vv` debug detail from trainlab and kube;
/// `-vvv` everything, dependencies included.
fn init_logging(verbose: u8) {
    let filter = match verbose {
        0 => Targets::new().with_target("trainlab", LevelFilter::WARN),
        1 => Targets::new().with_target("trainlab", LevelFilter::INFO),
        2 => Targets::new()
            .with_target("trainlab", LevelFilter::DEBUG)
            .with_target("kube", LevelFilter::DEBUG),
        _ => Targets::new().with_default(LevelFilter::TRACE),
    };
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .with_target(verbose >= 2);
    tracing_subscriber::registry()
        .with(lines.with_filter(filter))
        .init();
}

/// `grade --contexts` grades 32 clusters at once, each with its LISTs in flight over their own
/// sockets: about 700 open at most. The soft limit on open files is often lower (256 in macOS
/// shells, 1,024 on many Linux systems) while the hard limit allows more, so raise the soft one
/// as Go programs do at start. A failure only means fewer sockets: it is logged, not fatal.
fn raise_open_file_limit() {
    if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
        tracing::debug!("could not raise the open-file limit: {e}");
    }
}
