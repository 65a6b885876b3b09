//! `treehash`: parse the command line, run the mode it asks for, exit with
//! the documented code.

mod cli;

use std::io::IsTerminal;

use clap::error::ErrorKind;

fn main() {
    cli::signals::install();
    let args = match cli::args::parse() {
        Ok(args) => args,
        Err(e) => std::process::exit(help_or_usage_error(&e)),
    };
    let outcome = match &args.command {
        Some(cli::args::Command::Bench(bench)) => cli::bench_cmd::run(bench),
        Some(cli::args::Command::Part(part)) => cli::part_cmd::run(part),
        Some(cli::args::Command::Join(join)) => cli::join_cmd::run(join),
        None => match args.generate {
            Some(kind) => cli::generate::run(kind),
            None if args.check.check => cli::check_cmd::run(&args),
            None => cli::hash_cmd::run(&args),
        },
    };
    let code = outcome.unwrap_or_else(|fatal| {
        cli::report(&fatal.message);
        fatal.code
    });
    exit_now(code);
}

/// Ends the process with `code` at once. Everything written to standard
/// output was flushed at its write; skipping the C library's exit handlers
/// means that the process never waits for the CUDA driver's own teardown,
/// nor for a GPU still starting in the background that no input needed
/// (the kernel releases both).
fn exit_now(code: i32) -> ! {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: _exit only ends the process; nothing of ours is left unwritten.
    unsafe { libc::_exit(code) }
}

/// Prints what clap had to say and returns the exit code: `--help` and
/// `--version` go to standard output, every write checked (clap's own
/// printing ignores write errors); usage errors go to standard error with
/// exit code 2.
fn help_or_usage_error(e: &clap::Error) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = e.render();
            let text = if std::io::stdout().is_terminal() {
                text.ansi().to_string()
            } else {
                text.to_string()
            };
            match cli::stdout::write(text.as_bytes()) {
                Ok(()) => cli::exit::OK,
                Err(write_error) => {
                    let fatal = cli::Fatal::write(&write_error, cli::exit::OK);
                    cli::report(&fatal.message);
                    fatal.code
                }
            }
        }
        _ => {
            // Standard error: nothing useful can be done if writing it fails.
            let _ = e.print();
            e.exit_code()
        }
    }
}
