// No unsafe code here either (lib.rs forbids it in the library).
#![forbid(unsafe_code)]

use clap::Parser;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

fn main() {
    let cli = trainlab::cli::Cli::parse();
    init_logging(cli.global.verbose);
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
