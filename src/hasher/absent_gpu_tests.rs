//! A hasher built without the GPU backend (no `gpu` feature, or not
//! Linux): asking for a GPU says why there is none, and `Auto` hashes on
//! the CPU.

use crate::{Algorithm, BackendChoice, BackendUsed, HashError, Hasher, HasherOptions, TreeParams};

/// A GPU asked for is an error that names the missing feature, as the
/// hasher's description of it and on every input; `Auto` hashes on
/// the CPU and says why no GPU took part.
#[test]
fn asking_for_a_gpu_says_that_none_is_built_in() {
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    let gpu = Hasher::new(HasherOptions::default().with_backend(BackendChoice::Gpu)).unwrap();
    let on_device = crate::gpu::DeviceBytes {
        ptr: 0x1000,
        len: 3,
        stream: None,
    };
    // SAFETY: without the GPU backend `hash_device` reads nothing, so any
    // `DeviceBytes` is sound (its `# Safety`).
    let from_device = unsafe { gpu.hash_device(&params, on_device) };
    for err in [
        gpu.gpu().err().expect("no GPU"),
        gpu.hash_bytes(&params, b"abc").expect_err("no GPU"),
        from_device.expect_err("no GPU"),
        gpu.device_stream(0).expect_err("no GPU"),
    ] {
        assert!(
            matches!(&err, HashError::Gpu(why) if why.contains(crate::gpu::NO_DRIVER)),
            "{err}"
        );
    }
    #[cfg(target_os = "linux")]
    assert!(crate::gpu::NO_DRIVER.contains("`gpu` feature"));
    let auto = Hasher::new(HasherOptions::default()).unwrap();
    let out = auto.hash_bytes(&params, &[7u8; 100_000]).unwrap();
    assert_eq!(out.backend, BackendUsed::Cpu);
    assert_eq!(
        out.digest,
        treehash_reference::tree_hash(&crate::test_reference::tree(&params), &[7u8; 100_000])
    );
    assert!(
        auto.why_no_gpu()
            .is_some_and(|why| why.contains(crate::gpu::NO_DRIVER))
    );
}
