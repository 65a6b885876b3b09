//! `treehash`: parse the command line, run the mode it asks for, exit with
//! the documented code.

mod cli;

use clap::Parser;

fn main() {
    cli::signals::install();
    let args = cli::args::Cli::parse();
    let outcome = match &args.command {
        Some(cli::args::Command::Bench(bench)) => cli::bench_cmd::run(bench),
        None if args.check.check => cli::check_cmd::run(&args),
        None => cli::hash_cmd::run(&args),
    };
    let code = outcome.unwrap_or_else(|fatal| {
        cli::report(&fatal.message);
        fatal.code
    });
    std::process::exit(code);
}
