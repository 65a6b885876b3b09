//! `--generate`: the man page and the shell completions, made from the one
//! definition of the command line ([`super::args::command`]), as ripgrep's
//! `--generate` does.

use clap_complete::Shell;

use super::args::GenerateKind;
use super::{Fatal, exit, stdout};

/// Prints what `kind` asks for on standard output.
pub fn run(kind: GenerateKind) -> Result<i32, Fatal> {
    stdout::write(&render(kind)).map_err(|e| Fatal::write(&e, exit::OK))?;
    Ok(exit::OK)
}

/// The man page or completion script, in memory: the generators panic on a
/// failed write, so they write here and [`stdout::write`] checks the real one.
pub fn render(kind: GenerateKind) -> Vec<u8> {
    let mut command = super::args::command();
    let mut text = Vec::new();
    let shell = match kind {
        GenerateKind::Man
        | GenerateKind::ManBench
        | GenerateKind::ManPart
        | GenerateKind::ManJoin => {
            // Every page names the same source: the tool and its version.
            let source = format!("treehash {}", env!("CARGO_PKG_VERSION"));
            let subcommand = match kind {
                GenerateKind::ManBench => Some("bench"),
                GenerateKind::ManPart => Some("part"),
                GenerateKind::ManJoin => Some("join"),
                _ => None,
            };
            let page = match subcommand {
                None => command,
                Some(name) => {
                    // Built first, so that the subcommand's title is `treehash-NAME`,
                    // the name the main page's SUBCOMMANDS section refers to.
                    command.build();
                    command
                        .find_subcommand(name)
                        .expect("the subcommand is defined")
                        .clone()
                }
            };
            clap_mangen::Man::new(page)
                .source(source)
                .render(&mut text)
                .expect("writing to memory cannot fail");
            return text;
        }
        GenerateKind::CompleteBash => Shell::Bash,
        GenerateKind::CompleteZsh => Shell::Zsh,
        GenerateKind::CompleteFish => Shell::Fish,
        GenerateKind::CompletePowershell => Shell::PowerShell,
    };
    let name = command.get_name().to_string();
    command.build();
    // The copy borrows the names; the process prints and exits.
    let command: &'static clap::Command = Box::leak(Box::new(command));
    let mut shown = without_hidden(command);
    clap_complete::generate(shell, &mut shown, name, &mut text);
    text
}

/// A copy of `command` (built) for the completions: its options and their
/// values, help and subcommands, without the hidden ones (`--piece-bytes`,
/// bench's `-H`), which the completion generators would offer. clap cannot
/// remove an argument, so the copy is made of the rest; its help and
/// version options are the built command's own.
fn without_hidden(command: &'static clap::Command) -> clap::Command {
    let mut copy = clap::Command::new(command.get_name())
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .args(
            command
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .cloned(),
        );
    if let Some(about) = command.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        copy = copy.version(version);
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        copy = copy.subcommand(without_hidden(sub));
    }
    copy
}
