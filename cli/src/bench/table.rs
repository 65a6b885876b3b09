//! A bench's report as a markdown table with its header lines. Columns that
//! only some benches have appear only there: the function (more than one
//! measured), files/s (a list) and the GPU's copy and kernel times (a row
//! ran on a GPU).

use super::{FunctionInfo, Report, Spread, Verification};

/// The report as a markdown table with its header lines.
pub fn to_markdown(r: &Report) -> String {
    let several = r.functions.len() > 1;
    let what = match &r.file {
        Some(file) => format!("{file} ({} bytes)", r.bytes),
        None => format!(
            "a list of {} files ({} bytes in all, hashed side by side as `treehash FILE...` \
             hashes them)",
            r.files, r.bytes
        ),
    };
    let functions: Vec<String> = r.functions.iter().map(|f| describe(f, several)).collect();
    let standard_base = if r.functions.iter().all(FunctionInfo::is_tree) {
        String::new()
    } else {
        match r.first_tree() {
            Some(tree) => format!(" (a standard function's: {}'s)", tree.name),
            None => " (none without an LI function)".to_string(),
        }
    };
    let mut s = format!(
        "treehash bench: {what}, {}, median (and min–max) of {} run(s) after a warm-up; × H=0 \
         is the speed-up over the same backend's H = 0 row{standard_base}\n",
        functions.join(", "),
        r.repeat
    );
    for st in &r.startup {
        if let (Some(device), Some(init), Some(compile)) =
            (&st.device, st.gpu_init_ms, st.compile_ms)
        {
            s += &format!(
                "{}: {device}: GPU init {init:.0} ms, kernel compile/load {compile:.0} ms (once, not in the rows)\n",
                st.backend
            );
        }
    }
    for v in &r.verification {
        s += &verification_line(v, several, r.is_list());
    }
    let gpu = r
        .rows
        .iter()
        .filter_map(|row| row.measured.as_ref()?.phases)
        .any(|p| p.copies_busy_ms.is_some());
    let mut header = vec!["backend"];
    if several {
        header.push("function");
    }
    header.extend(["H", "leaves", "ms median", "ms min–max", "GB/s"]);
    if r.is_list() {
        header.push("files/s");
    }
    header.extend(["× H=0", "leaf phase ms"]);
    if gpu {
        header.extend(["copies busy ms", "kernels busy ms"]);
    }
    header.extend(["reduce ms", "digest"]);
    let columns = header.len();
    s += "\n";
    s += &table_line(header.iter().map(|h| h.to_string()));
    s += &table_line((0..columns).map(|i| match i {
        0 => "---".to_string(),
        _ if i == columns - 1 => "---".to_string(),
        _ if several && i == 1 => "---".to_string(),
        _ => "---:".to_string(),
    }));
    let none = || "–".to_string();
    let optional =
        |x: Option<f64>, decimals: usize| x.map_or_else(none, |x| format!("{x:.decimals$}"));
    let timing = |t: &Spread| {
        [
            format!("{:.1}", t.median * 1e3),
            format!("{:.1}–{:.1}", t.min * 1e3, t.max * 1e3),
        ]
    };
    if let Some(p) = &r.sha3_crate {
        let mut cells = vec![format!(
            "reference: plain {} by the sha3 crate, 1 thread",
            p.label
        )];
        if several {
            cells.push(none());
        }
        cells.extend([none(), none()]);
        cells.extend(timing(&p.seconds));
        cells.push(format!("{:.3}", p.gb_per_s));
        if r.is_list() {
            cells.push(format!("{:.0}", p.files_per_s));
        }
        cells.push(none());
        cells.resize(columns - 1, String::new());
        cells.push(
            p.digest
                .as_deref()
                .map_or_else(none, |d| short(d).to_string()),
        );
        s += &table_line(cells);
    }
    for row in &r.rows {
        let backend = match &row.measured {
            Some(m) if m.ran_on != row.backend => format!("{} ({})", row.backend, m.ran_on),
            _ => row.backend.clone(),
        };
        let mut cells = vec![backend];
        if several {
            cells.push(row.function.clone());
        }
        cells.extend([
            row.height.map_or_else(none, |h| h.to_string()),
            row.leaves.map_or_else(none, |l| l.to_string()),
        ]);
        let Some(m) = &row.measured else {
            let why = row.skipped.as_deref().unwrap_or("not measured");
            cells.push(format!("skipped: {why}"));
            cells.resize(columns, String::new());
            s += &table_line(cells);
            continue;
        };
        cells.extend(timing(&m.seconds));
        cells.push(format!("{:.3}", m.gb_per_s));
        if r.is_list() {
            cells.push(format!("{:.0}", m.files_per_s));
        }
        cells.extend([
            optional(m.speedup_vs_h0, 2),
            optional(m.phases.map(|p| p.leaves_ms), 1),
        ]);
        if gpu {
            cells.extend([
                optional(m.phases.and_then(|p| p.copies_busy_ms), 1),
                optional(m.phases.and_then(|p| p.kernels_busy_ms), 1),
            ]);
        }
        cells.extend([
            optional(m.phases.map(|p| p.reduce_ms), 2),
            m.digest
                .as_deref()
                .map_or_else(none, |d| short(d).to_string()),
        ]);
        s += &table_line(cells);
    }
    s
}

/// A function as the header line names it: an LI tree's name and shape,
/// `sha3-256, D=4, B=136` (`sha3-256 (D=4, B=136)` among `several`), or a
/// standard function's label, `ParallelHash256(B=8192)`.
fn describe(f: &FunctionInfo, several: bool) -> String {
    match (&f.label, f.degree, f.block_size) {
        (Some(label), _, _) => label.clone(),
        (None, Some(d), Some(b)) if several => format!("{} (D={d}, B={b})", f.name),
        (None, Some(d), Some(b)) => format!("{}, D={d}, B={b}", f.name),
        _ => f.name.clone(),
    }
}

/// One verification's line: `H=0 on cpu: PASS (plain SHA3-256 by the sha3
/// crate: …)`, with the function's name first when `several` were measured.
fn verification_line(v: &Verification, several: bool, list: bool) -> String {
    let subject = match (v.height, several) {
        (Some(h), false) => format!("H={h}"),
        (Some(h), true) => format!("{} H={h}", v.function),
        (None, _) => v.function.clone(),
    };
    let detail = match (list, v.verdict.as_str()) {
        (false, _) => v
            .expected
            .as_ref()
            .map(|e| format!(" ({}: {e})", v.against))
            .unwrap_or_default(),
        (true, "PASS") => format!(" ({} files, each equal to {})", v.files_checked, v.against),
        (true, "FAIL") => format!(
            " ({} of {} files differ from {}; the first, {}: {}, expected {})",
            v.files_failed,
            v.files_checked,
            v.against,
            v.failed_file.as_deref().unwrap_or("?"),
            v.digest.as_deref().unwrap_or("?"),
            v.expected.as_deref().unwrap_or("?"),
        ),
        (true, _) => String::new(),
    };
    let note = v
        .note
        .as_ref()
        .map(|n| format!(" — {n}"))
        .unwrap_or_default();
    format!("{subject} on {}: {}{detail}{note}\n", v.backend, v.verdict)
}

/// One line of a markdown table.
fn table_line(cells: impl IntoIterator<Item = String>) -> String {
    let mut line = String::from("|");
    for cell in cells {
        line.push(' ');
        line.push_str(&cell);
        line.push_str(" |");
    }
    line.push('\n');
    line
}

/// The first 16 hex digits, enough to compare digests across rows.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(16)]
}
