use super::*;
use treehash::{Algorithm, Standard};

/// Three files of 1, 2 and `longest` bytes (sparse: nothing is written).
fn inputs(dir: &std::path::Path, longest: u64) -> Inputs {
    let paths: Vec<PathBuf> = [1, 2, longest]
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let path = dir.join(format!("f{i}"));
            std::fs::File::create(&path).unwrap().set_len(len).unwrap();
            path
        })
        .collect();
    Inputs::look_up(&paths).unwrap()
}

fn tree(height: u32) -> Params {
    Params::Tree(TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap())
}

fn standard(s: Standard) -> Params {
    Params::Standard(StandardParams::new(s))
}

#[test]
fn a_row_is_measured_only_where_its_backend_says() {
    use BackendUsed::{Cpu, CpuGpu, Gpu};
    for used in [Cpu, Gpu, CpuGpu] {
        assert!(ran_as_asked(BackendChoice::Auto, used));
        assert_eq!(ran_as_asked(BackendChoice::Cpu, used), used == Cpu);
        assert_eq!(ran_as_asked(BackendChoice::Gpu, used), used == Gpu);
    }
}

#[test]
fn the_gpu_skips_sponges_over_its_limit_in_the_longest_file() {
    let dir = tempfile::tempdir().unwrap();
    let list = inputs(dir.path(), 4 * GPU_MAX_BYTES_PER_LEAF);
    let gpu = BackendChoice::Gpu;
    // 4 × the limit: H = 0 and H = 1 (4 leaves of exactly the limit) …
    assert_eq!(
        gpu_skip(gpu, &tree(0), &list).unwrap(),
        "the longest file: 256 MiB per leaf: one sponge per leaf on the GPU would take too long"
    );
    assert!(gpu_skip(gpu, &tree(1), &list).is_none());
    // … TurboSHAKE's one sponge, but not KT's or ParallelHash's chunks.
    let turbo = gpu_skip(gpu, &standard(Standard::TurboShake128), &list).unwrap();
    assert!(turbo.contains("256 MiB in its one sponge"), "{turbo}");
    for s in [Standard::Kt128, Standard::ParallelHash256] {
        assert!(gpu_skip(gpu, &standard(s), &list).is_none());
    }
    // The CPU skips nothing.
    for backend in [BackendChoice::Cpu, BackendChoice::Auto] {
        assert!(gpu_skip(backend, &tree(0), &list).is_none());
    }
}

fn measured_row(function: &str, height: Option<u32>, median: f64) -> Row {
    Row {
        backend: "cpu".into(),
        function: function.into(),
        label: String::new(),
        height,
        leaves: height.map(|_| 1),
        skipped: None,
        measured: Some(Measurement {
            ran_on: "cpu".into(),
            digest: None,
            seconds: Spread {
                median,
                min: median,
                max: median,
            },
            gb_per_s: 1.0,
            files_per_s: 1.0,
            speedup_vs_h0: None,
            phases: None,
        }),
    }
}

#[test]
fn speedups_are_over_the_own_or_the_first_tree_s_height_zero() {
    let mut rows = vec![
        measured_row("sha3-256", Some(0), 8.0),
        measured_row("sha3-256", Some(4), 2.0),
        measured_row("kt128", None, 4.0),
        measured_row("shake128", Some(0), 6.0),
        measured_row("shake128", Some(4), 3.0),
        // Without H = 0: no speed-up.
        measured_row("sha3-512", Some(4), 3.0),
    ];
    set_speedups(&mut rows, Some("sha3-256"));
    let speedups: Vec<Option<f64>> = rows
        .iter()
        .map(|r| r.measured.as_ref().unwrap().speedup_vs_h0)
        .collect();
    let want = [Some(1.0), Some(4.0), Some(2.0), Some(1.0), Some(2.0), None];
    assert_eq!(speedups, want);
    // No LI function: a standard function's row has none.
    let mut rows = vec![measured_row("kt128", None, 4.0)];
    set_speedups(&mut rows, None);
    assert_eq!(rows[0].measured.as_ref().unwrap().speedup_vs_h0, None);
}

#[test]
fn a_list_passes_only_if_every_file_checked_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let list = inputs(dir.path(), 3);
    let expected = |digests: Vec<Option<Vec<u8>>>| Expected {
        against: "the reference".into(),
        digests,
        note: None,
    };
    let kt = standard(Standard::Kt128);
    let all = expected(vec![Some(vec![1]), Some(vec![2]), Some(vec![3])]);
    let pass = verify("cpu", &kt, &all, &list, Ok(vec![vec![1], vec![2], vec![3]]));
    assert_eq!(
        (pass.verdict.as_str(), pass.files_checked, pass.files_failed),
        ("PASS", 3, 0)
    );
    assert!(pass.digest.is_none() && pass.failed_file.is_none());
    // The second and third differ: the first of them is named.
    let fail = verify("cpu", &kt, &all, &list, Ok(vec![vec![1], vec![9], vec![8]]));
    assert_eq!(
        (fail.verdict.as_str(), fail.files_checked, fail.files_failed),
        ("FAIL", 3, 2)
    );
    let second = list.paths()[1].display().to_string();
    assert_eq!(fail.failed_file.as_deref(), Some(second.as_str()));
    assert_eq!(fail.digest.as_deref(), Some("09"));
    assert_eq!(fail.expected.as_deref(), Some("02"));
    // A file with no independent digest is not checked; with none at
    // all, nothing is.
    let some = expected(vec![Some(vec![1]), None, Some(vec![3])]);
    let partial = verify(
        "cpu",
        &kt,
        &some,
        &list,
        Ok(vec![vec![1], vec![7], vec![3]]),
    );
    assert_eq!(
        (partial.verdict.as_str(), partial.files_checked),
        ("PASS", 2)
    );
    let none = expected(vec![None, None, None]);
    let skipped = verify(
        "cpu",
        &kt,
        &none,
        &list,
        Ok(vec![vec![1], vec![2], vec![3]]),
    );
    assert_eq!(
        (skipped.verdict.as_str(), skipped.files_checked),
        ("SKIPPED", 0)
    );
    // A backend that did not measure the function says why.
    let why = verify("gpu", &tree(0), &all, &list, Err("unavailable".into()));
    assert_eq!(why.verdict, "SKIPPED");
    assert_eq!(why.height, Some(0));
    assert_eq!(why.note.as_deref(), Some("unavailable"));
}

#[test]
fn one_file_s_digests_are_shown_whatever_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one");
    std::fs::write(&path, b"x").unwrap();
    let one = Inputs::look_up(&[path]).unwrap();
    let expected = Expected {
        against: "plain".into(),
        digests: vec![Some(vec![0xab])],
        note: None,
    };
    let pass = verify("cpu", &tree(0), &expected, &one, Ok(vec![vec![0xab]]));
    assert_eq!(pass.verdict, "PASS");
    assert_eq!(
        (pass.digest.as_deref(), pass.expected.as_deref()),
        (Some("ab"), Some("ab"))
    );
}
