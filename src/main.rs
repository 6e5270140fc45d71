use clap::Parser;

fn main() {
    let cli = trainlab::cli::Cli::parse();
    std::process::exit(trainlab::cli::dispatch(cli));
}
