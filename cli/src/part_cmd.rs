//! `treehash part`: hash one part of a file and write it, or print the plan
//! of a split (docs/SPEC.md, "Parts and joins").

use std::io::IsTerminal;
use std::path::Path;

use treehash::input::is_stdin_name;
use treehash::label::StandardLabel;
use treehash::output_file::{self, Access};
use treehash::parts::{self, MIN_RUN_BYTES, PartOutput, plan, standard_plan};
use treehash::{Params, StandardParams, TreeParams};

use super::args::PartArgs;
use super::progress_bar::InputProgress;
use super::{Fatal, exit, failure_code, hasher, params, report, stdout};

pub fn run(args: &PartArgs) -> Result<i32, Fatal> {
    let files: Vec<_> = args.file.iter().cloned().collect();
    let params = params(&args.tree, args.height, &files)?;
    if let Some(why) = params.unsplittable() {
        return Err(Fatal::usage(why));
    }
    if args.plan {
        return match &params {
            Params::Standard(params) => print_standard_plan(args, params),
            Params::Tree(params) => print_plan(args, params),
        };
    }
    let (Some(file), Some(index), Some(output)) = (&args.file, args.index, &args.output) else {
        return Err(Fatal::usage("a part needs FILE, --index and -o"));
    };
    if index >= args.parts {
        return Err(Fatal::usage(format!(
            "--index {index} is not a part of --parts {}: parts are numbered 0 to {}",
            args.parts,
            args.parts - 1
        )));
    }
    let to_stdout = is_stdin_name(output);
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(Fatal::usage(
            "-o -: standard output is a terminal, and a part is binary; redirect it or give a file",
        ));
    }
    // Once per split (part 0), where short runs are slow.
    if let Params::Tree(tree) = &params
        && index == 0
        && on_shared_file_system(file)
        && let Some(warning) = short_runs(tree, args.parts)
    {
        report(format!("warning: {warning}"));
    }
    let hasher = hasher(&args.run, args.backend)?;
    let progress = InputProgress::new(&file.display().to_string(), !args.no_progress);
    let result = hasher.hash_part(&params, file, index, args.parts, &progress);
    progress.finish();
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            report(format!("{}: {e}", file.display()));
            return Ok(failure_code(&e));
        }
    };
    notes(args, file, &out);
    let bytes = out.part.to_bytes();
    if to_stdout {
        stdout::write(&bytes).map_err(|e| Fatal::write(&e, exit::OK))?;
    } else if let Err(e) = output_file::write(output, &bytes, access(&out)) {
        report(format!(
            "{}: {}",
            output.display(),
            treehash::error::io_reason(&e)
        ));
        return Ok(exit::FAILED);
    }
    Ok(exit::OK)
}

/// A keyed part is as sensitive as its key: only its owner may read it.
fn access(out: &PartOutput) -> Access {
    if out.part.keyed() {
        Access::Owner
    } else {
        Access::Shared
    }
}

/// What `-v` and `--timings` ask to hear.
fn notes(args: &PartArgs, file: &Path, out: &PartOutput) {
    if let Some(note) = &out.fallback_note
        && (args.verbose || args.timings)
    {
        report(note);
    }
    if args.verbose {
        let leaves = out.part.leaves();
        let unit = match out.part.params() {
            Params::Tree(_) => "leaves",
            _ => "chunks",
        };
        report(format!(
            "{}: part {} of {}: {unit} {}..{}, {} bytes read on the {}",
            file.display(),
            out.part.index(),
            out.part.count(),
            leaves.start,
            leaves.end,
            out.bytes_read,
            out.backend
        ));
    }
    if args.timings {
        report(format!("timings for {}:\n{}", file.display(), out.timings));
    }
}

/// The warning for a split whose parts read runs shorter than
/// [`MIN_RUN_BYTES`], with the parameters or part counts that avoid it.
fn short_runs(params: &TreeParams, count: u64) -> Option<String> {
    let short = parts::short_runs(params, count)?;
    let ways = short.ways(
        |most| format!("at most {most} parts"),
        |h| format!("-H {h}"),
        |b| format!("-B {b}"),
    );
    Some(format!(
        "{count} parts read runs of {} bytes per stripe (under {} MiB), which a parallel \
         file system serves slowly; runs reach 1 MiB with {ways} (another -H or -B changes the \
         digest; --plan shows a split)",
        short.run,
        MIN_RUN_BYTES >> 20,
    ))
}

/// Whether `file` lies on a network or parallel file system, which serves
/// short runs slowly (a local disk serves them well): by the magic number
/// `statfs` gives (linux/magic.h and the file systems' own sources).
fn on_shared_file_system(file: &Path) -> bool {
    const SHARED: [u64; 17] = [
        0x6969,      // NFS
        0x517b,      // SMB
        0xff53_4d42, // CIFS
        0xfe53_4d42, // SMB2
        0x0bd0_0bd0, // Lustre
        0x4750_4653, // GPFS
        0x1983_0326, // BeeGFS
        0x00c3_6400, // CephFS
        0xaad7_aaea, // PanFS
        0x2003_0528, // OrangeFS (PVFS2)
        0x5346_414f, // AFS
        0x6b41_4653, // kAFS
        0x0116_1970, // GFS2
        0x7461_636f, // OCFS2
        0x0102_1997, // 9P
        0x6573_5546, // FUSE (sshfs, s3fs, gcsfuse, …)
        0x0000_564c, // NCP
    ];
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(file.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a NUL-ended string and `stat` a buffer statfs fills.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; statfs writes only into `stat`.
    if unsafe { libc::statfs(path.as_ptr(), &mut stat) } != 0 {
        return false;
    }
    SHARED.contains(&((stat.f_type as u64) & 0xffff_ffff))
}

/// The bytes the parts read, as the plan's first line says them: `each
/// reading N bytes`, or `each reading N to M bytes`.
fn part_sizes(sizes: impl Iterator<Item = u64>) -> String {
    let (least, most) = sizes.fold((u64::MAX, 0), |(l, m), n| (l.min(n), m.max(n)));
    match (least, most) {
        (u64::MAX, _) => String::new(),
        (l, m) if l == m => format!(", each reading {l} bytes"),
        (l, m) => format!(", each reading {l} to {m} bytes"),
    }
}

/// The size of the file `--plan` is given, if any; `Err` with the exit
/// code where it is no regular file or cannot be read (reported).
fn plan_file_len(args: &PartArgs) -> Result<Option<u64>, i32> {
    let Some(file) = &args.file else {
        return Ok(None);
    };
    match std::fs::metadata(file) {
        Ok(meta) if meta.is_file() => Ok(Some(meta.len())),
        Ok(_) => {
            report(format!("{}: not a regular file", file.display()));
            Err(exit::FAILED)
        }
        Err(e) => {
            report(format!(
                "{}: {}",
                file.display(),
                treehash::error::io_reason(&e)
            ));
            Err(exit::FAILED)
        }
    }
}

/// Writes `text` to standard output.
fn write(text: &str) -> Result<(), Fatal> {
    stdout::write(text.as_bytes()).map_err(|e| Fatal::write(&e, exit::OK))
}

/// `--plan` of a standard function: its chunks, counted from the file's
/// size, and each part's chunks, bytes to read and chaining values.
fn print_standard_plan(args: &PartArgs, params: &StandardParams) -> Result<i32, Fatal> {
    let file_len = match plan_file_len(args) {
        Ok(Some(len)) => len,
        Ok(None) => {
            return Err(Fatal::usage(format!(
                "--plan of {} needs FILE: its chunks are counted from the file's size",
                params.standard()
            )));
        }
        Err(code) => return Ok(code),
    };
    // The customization string, which may be long, is left out.
    let label = StandardLabel {
        customization: Vec::new(),
        ..StandardLabel::of(params)
    };
    let customized = match params.customization().len() {
        0 => String::new(),
        len => format!(", a customization string of {len} bytes"),
    };
    // Two passes, the plan unstored: --parts may be large.
    let plans = || standard_plan(params, args.parts, file_len);
    let chunks = plans().last().map_or(0, |p| p.chunks.end);
    let mut text = format!(
        "{label}{customized}: {chunks} chunks of {} bytes; {} parts of a file of {file_len} \
         bytes{}\n",
        params.block_size(),
        args.parts,
        part_sizes(plans().map(|p| p.read_len)),
    );
    text.push_str("part\tchunks\tread bytes\tvalues\n");
    write(&text)?;
    for part in plans() {
        write(&format!(
            "{}\t{}..{}\t{}\t{}\n",
            part.index, part.chunks.start, part.chunks.end, part.read_len, part.values
        ))?;
    }
    Ok(exit::OK)
}

/// `--plan`: one line per part, on standard output; the warning of short
/// runs on standard error.
fn print_plan(args: &PartArgs, params: &TreeParams) -> Result<i32, Fatal> {
    let file_len = match plan_file_len(args) {
        Ok(len) => len,
        Err(code) => return Ok(code),
    };
    let label = params.label();
    // Two passes, the plan unstored: --parts may be large.
    let plans = || plan(params, args.parts, file_len);
    let mut text = format!(
        "{label}: {} leaves, stripes of {} bytes; {} parts{}{}\n",
        params.leaf_count(),
        params.stripe_len(),
        args.parts,
        file_len.map_or(String::new(), |len| format!(" of a file of {len} bytes")),
        part_sizes(plans().filter_map(|p| p.read_len)),
    );
    text.push_str("part\tleaves\trun bytes\tread bytes\tvalues\n");
    write(&text)?;
    for part in plans() {
        let read = part.read_len.map_or("-".to_string(), |n| n.to_string());
        write(&format!(
            "{}\t{}..{}\t{}\t{read}\t{}\n",
            part.index, part.leaves.start, part.leaves.end, part.run_len, part.values
        ))?;
    }
    if let Some(warning) = short_runs(params, args.parts) {
        report(format!("warning: {warning}"));
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_file_system_is_not_shared() {
        let dir = std::env::temp_dir();
        // A tmpfs or a local disk; /proc is neither network nor parallel.
        assert!(!on_shared_file_system(&dir));
        assert!(!on_shared_file_system(Path::new("/proc/self")));
        assert!(!on_shared_file_system(Path::new("/no/such/file")));
    }

    #[test]
    fn part_sizes_are_a_size_or_a_range() {
        assert_eq!(part_sizes([5, 5].into_iter()), ", each reading 5 bytes");
        assert_eq!(
            part_sizes([7, 0, 5].into_iter()),
            ", each reading 0 to 7 bytes"
        );
        assert_eq!(part_sizes(std::iter::empty()), "");
    }
}
