fn main() {
    let t = std::time::Instant::now();
    let ptx = treehash::gpu::kernels::compile(
        "sm_90",
        treehash::gpu::kernels::Selection::One(treehash::Algorithm::Sha3_256),
    )
    .unwrap();
    println!("compile {:?} {} bytes", t.elapsed(), ptx.to_src().len());
}
