//! What the command line says of itself: `--generate` (the man pages of
//! the tool and of each subcommand, and the shell completions) and the
//! options `--help` lists, every one of which a man page and the
//! completions must show. If you add a test of the man pages, the
//! completions or `--help`, it goes here (how `--help` fails to write is
//! in cli_io.rs, with the other write errors).

mod common;

use common::cli::{binary, fixture, stdout_of, treehash};
use predicates::prelude::*;

/// The long options of the top-level command, which its man page and the
/// completions must show.
fn long_options() -> Vec<String> {
    let options = long_options_of(&[]);
    assert!(options.len() > 20, "{options:?}");
    options
}

/// The long options that `treehash ARGS --help` lists: those that the man
/// page of ARGS must show (hidden ones are not listed). They are read from
/// the binary's own help, so that no file of src/ is compiled into the
/// test. An option's line starts with its names after two spaces
/// (`  -a, --algorithm <ALGORITHM>`) or six (`      --json`); descriptions
/// are indented further.
fn long_options_of(args: &[&str]) -> Vec<String> {
    let help = stdout_of(binary().args(args).arg("--help"));
    let options: Vec<String> = help
        .lines()
        .filter(|line| line.starts_with("  -") || line.starts_with("      --"))
        .filter_map(|line| {
            let long = line.split_whitespace().find_map(|w| w.strip_prefix("--"))?;
            let end = long
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(long.len());
            Some(long[..end].to_string())
        })
        .collect();
    assert!(options.iter().any(|o| o == "help"), "{args:?}: {help}");
    options
}

fn generated(kind: &str) -> String {
    let out = binary().args(["--generate", kind]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A man page with title `title`, the usual sections and every option.
fn assert_man_page(man: &str, title: &str, options: &[String]) {
    // clap_mangen defines the Aq string first; the title comes before any section.
    let title_line = man
        .lines()
        .position(|l| l.starts_with(&format!(".TH {title} 1 ")));
    let first_section = man.lines().position(|l| l.starts_with(".SH "));
    assert!(title_line.is_some() && title_line < first_section, "{man}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"] {
        assert!(man.lines().any(|l| l == section), "{title}: {section}");
    }
    for option in options {
        // roff writes each '-' as '\-'.
        let roff = format!("--{option}").replace('-', "\\-");
        assert!(man.contains(&roff), "{title}'s man page lacks {roff}");
    }
}

#[test]
fn generate_man_writes_a_man_page_with_every_option() {
    let man = generated("man");
    assert_man_page(&man, "treehash", &long_options());
    // The main page refers to the bench page, which man-bench makes.
    assert!(man.contains("treehash\\-bench(1)"), "{man}");
    let bench_options = long_options_of(&["bench"]);
    assert!(
        bench_options.contains(&"plot".to_string()),
        "{bench_options:?}"
    );
    assert_man_page(&generated("man-bench"), "treehash-bench", &bench_options);
}

#[test]
fn generate_writes_completions_for_every_shell_with_every_option() {
    // Each shell's marker of a well-formed script, and how it writes an option.
    type Spellings = fn(&str) -> Vec<String>;
    let shells: [(&str, &str, Spellings); 4] = [
        ("complete-bash", "_treehash() {", |o| {
            vec![format!("--{o} ")]
        }),
        ("complete-zsh", "#compdef treehash", |o| {
            vec![format!("--{o}["), format!("--{o}=[")]
        }),
        ("complete-fish", "complete -c treehash", |o| {
            vec![format!(" -l {o} ")]
        }),
        (
            "complete-powershell",
            "Register-ArgumentCompleter -Native -CommandName 'treehash'",
            |o| vec![format!("'--{o}'")],
        ),
    ];
    let options = long_options();
    for (kind, marker, spellings) in shells {
        let script = generated(kind);
        assert!(script.contains(marker), "{kind}: no {marker}");
        for option in &options {
            let written = spellings(option);
            assert!(
                written.iter().any(|w| script.contains(w)),
                "{kind} lacks {written:?}"
            );
        }
    }
    let bash = generated("complete-bash");
    assert!(bash.contains("complete -F _treehash"), "{bash}");
}

/// Completions offer an option's values from its definition (fish: `-f`,
/// no file names, then the values), and no hidden option: `--piece-bytes`
/// (tuning and tests; `--chunk-bytes`, its old name) and bench's `-H`
/// (answered with a hint to use --heights) are in no script.
#[test]
fn completions_offer_option_values_and_no_hidden_option() {
    let fish = generated("complete-fish");
    let functions = [
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "shake128",
        "shake256",
        "kt128",
        "kt256",
        "parallelhash128",
        "parallelhash256",
        "turboshake128",
        "turboshake256",
    ];
    for (context, option) in [
        ("needs_command", "-s a -l algorithm"),
        ("using_subcommand bench", "-s a -l algorithm"),
        ("using_subcommand bench", "-l also"),
        ("using_subcommand part", "-s a -l algorithm"),
    ] {
        let start = fish
            .find(&format!("__fish_treehash_{context}\" {option} "))
            .unwrap_or_else(|| panic!("fish: no {context} {option}"));
        // `-r -f -a "VALUE\t'HELP'` and one value a line up to `"`: values,
        // not file names.
        let marker = " -r -f -a \"";
        let open = fish[start..].find(marker).unwrap() + start + marker.len();
        assert!(!fish[start..open].contains('\n'), "{context} {option}");
        let close = fish[open..].find("\"\n").unwrap() + open;
        let all: Vec<&str> = fish[open..close]
            .lines()
            .map(|value| value.split("\\t").next().unwrap())
            .collect();
        assert_eq!(all, functions, "{context} {option}");
    }
    for kind in [
        "complete-bash",
        "complete-zsh",
        "complete-fish",
        "complete-powershell",
    ] {
        let script = generated(kind);
        assert!(!script.contains("piece-bytes"), "{kind}");
        assert!(!script.contains("chunk-bytes"), "{kind}");
        // bench's section: its options, and how the shell writes -H.
        let (start, end, spellings): (&str, &str, &[&str]) = match kind {
            "complete-bash" => ("treehash__subcmd__bench)", ";;", &[" -H ", "--height "]),
            "complete-zsh" => ("(bench)", ";;", &["'-H+", "--height="]),
            "complete-fish" => (
                "using_subcommand bench",
                "using_subcommand part",
                &["-s H "],
            ),
            _ => ("'treehash;bench'", "break", &["'-H'", "'--height'"]),
        };
        let from = script
            .find(start)
            .unwrap_or_else(|| panic!("{kind}: no {start}"));
        let section = &script[from..from + script[from..].find(end).unwrap()];
        assert!(section.contains("heights"), "{kind}: {section}");
        for spelling in spellings {
            assert!(!section.contains(spelling), "{kind}: {spelling}");
        }
    }
}

#[test]
fn generate_takes_no_file_and_nothing_else() {
    let (_dir, a, _) = fixture();
    treehash()
        .args(["--generate", "man"])
        .arg(&a)
        .assert()
        .code(2)
        .stdout("");
    binary()
        .args(["--generate", "nroff"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'nroff'"));
}

/// The pages of `part` and `join`: titled, with the usual sections, and
/// every option their `--help` lists.
#[test]
fn man_pages_of_part_and_join_list_every_option() {
    for (name, one_of_its_own) in [("part", "parts"), ("join", "check")] {
        let options = long_options_of(&[name]);
        assert!(
            options.iter().any(|o| o == one_of_its_own),
            "{name}: {options:?}"
        );
        let page = generated(&format!("man-{name}"));
        assert_man_page(&page, &format!("treehash-{name}"), &options);
    }
}
