"""hash_part and join_parts: every split of an LI tree or of a standard
function with a tree (KT, ParallelHash) joins to file_digest's digest; the
parts are the command line's bytes; a set that is not whole is refused,
naming the part; a finished digest pickles; treehash.dask is optional."""

import os
import pickle
import subprocess
import sys

import pytest

import treehash
from conftest import random_bytes, spec_input

#: Parameter sets, from one leaf (H = 0) to 4096 (H = 6), with a prefix and
#: an extendable output.
PARAMS = [
    {},
    {"height": 0},
    {"height": 2, "degree": 3},
    {"height": 6, "degree": 4, "block_size": 64},
    {"height": 3, "prefix": b"\x07" * 200},
    {"algorithm": "shake256", "height": 4, "degree": 2, "length": 100},
    {"algorithm": "sha3-512", "height": 1, "degree": 5},
]


#: The standard functions with a tree, with the keywords they take: KT's C
#: (one that spills into a chunk of its own too), ParallelHash's B and S.
STANDARD_PARAMS = [
    {"algorithm": "kt128"},
    {"algorithm": "kt256", "customization": b"\x01" * 9000, "length": 20},
    {"algorithm": "parallelhash128", "block_size": 7, "customization": "S"},
    {"algorithm": "parallelhash256", "length": 100},
]


def parts_of(path, count, **params):
    return [treehash.hash_part(path, index, count, **params) for index in range(count)]


@pytest.mark.parametrize("params", PARAMS)
def test_every_split_joins_to_the_files_digest(rng, tmp_path, params):
    # Sizes: empty, one byte, a stripe of H = 2 (9 leaves × 136) ± 1, and
    # several stripes of the default tree.
    for length in [0, 1, 1223, 1224, 1225, 3 * 8_912_896 + 77]:
        path = tmp_path / f"f{length}"
        path.write_bytes(random_bytes(rng, length))
        want = treehash.file_digest(path, **params)
        # More parts than leaves too (some own none).
        for count in [1, 2, 3, 7, 10]:
            got = treehash.join_parts(parts_of(path, count, **params))
            assert got.hexdigest() == want.hexdigest(), (length, count, params)
            assert (got.name, got.digest_size, got.block_size, got.nbytes) == (
                want.name,
                want.digest_size,
                want.block_size,
                length,
            )
            assert got.backend == "cpu"


@pytest.mark.parametrize("params", STANDARD_PARAMS)
def test_every_split_of_a_standard_function_joins_to_the_files_digest(rng, tmp_path, params):
    # Sizes around KT's chunk (8191 bytes and C = "" is |S| = 8192, one
    # node), ParallelHash's B, and several chunks.
    for length in [0, 1, 8191, 8192, 8193, 100_003]:
        path = tmp_path / f"f{length}"
        path.write_bytes(random_bytes(rng, length))
        want = treehash.file_digest(path, **params)
        # More parts than chunks too (some own none).
        for count in [1, 2, 3, 7, 20]:
            parts = parts_of(path, count, **params)
            rng.shuffle(parts)
            got = treehash.join_parts(parts)
            assert got.hexdigest() == want.hexdigest(), (length, count, params)
            assert (got.name, got.digest_size, got.block_size, got.nbytes) == (
                want.name,
                want.digest_size,
                want.block_size,
                length,
            )


def test_standard_parts_are_the_command_lines(cli, rng, tmp_path):
    path = tmp_path / "f"
    path.write_bytes(random_bytes(rng, 300_000))
    for flags, params in [
        (["-a", "kt128", "--customization", "C"], {"algorithm": "kt128", "customization": "C"}),
        (["-a", "parallelhash256", "-B", "1000"], {"algorithm": "parallelhash256", "block_size": 1000}),
    ]:
        for index in range(3):
            out = tmp_path / f"part{index}"
            split = ["--parts", "3", "--index", str(index)]
            subprocess.run([cli, "part", *flags, *split, str(path), "-o", str(out)], check=True)
            assert out.read_bytes() == treehash.hash_part(str(path), index, 3, **params)


def test_mixed_standard_sets_are_refused(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(spec_input(50_000))
    a, _, c = parts_of(path, 3, algorithm="kt128")

    def with_part_1(**params):
        return [a, treehash.hash_part(path, 1, 3, **params), c]

    cases = [
        (
            with_part_1(),
            "parts[1] (part 1 of 3): its function (sha3-256) differs from parts[0]'s (kt128)",
        ),
        (with_part_1(algorithm="kt256"), "its function (kt256)"),
        (
            with_part_1(algorithm="kt128", customization="C"),
            "its customization string (43) differs from parts[0]'s (none)",
        ),
        (with_part_1(algorithm="kt128", length=33), "its parameters (KT128, 33-byte digest)"),
        ([a, c], "part 1 of 3 is missing"),
    ]
    for parts, message in cases:
        with pytest.raises(ValueError) as caught:
            treehash.join_parts(parts)
        assert message in str(caught.value)


def test_parts_join_in_any_order_from_any_buffer(rng, tmp_path):
    path = tmp_path / "f"
    path.write_bytes(random_bytes(rng, 100_000))
    parts = parts_of(path, 5, height=3)
    want = treehash.file_digest(path, height=3).digest()
    shuffled = parts[:]
    rng.shuffle(shuffled)
    assert treehash.join_parts(shuffled).digest() == want
    assert treehash.join_parts(iter([bytearray(p) for p in parts])).digest() == want
    assert treehash.join_parts(tuple(memoryview(p) for p in parts)).digest() == want


def test_paths_of_every_kind_and_threads(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(spec_input(50_000))
    want = treehash.hash_part(path, 1, 3, height=2)
    # The part records the name as given: the same name, the same bytes.
    assert treehash.hash_part(str(path), 1, 3, height=2) == want
    assert treehash.hash_part(os.fsencode(path), 1, 3, height=2, threads=1) == want
    assert treehash.hash_part(path, 1, 3, height=2, backend="cpu", threads=3) == want


def test_the_parts_are_the_command_lines(cli, rng, tmp_path):
    path = tmp_path / "f"
    path.write_bytes(random_bytes(rng, 1_000_000))
    flags = ["-H", "4", "--prefix-hex", "0102030405"]
    params = {"height": 4, "prefix": bytes.fromhex("0102030405")}
    for index in range(3):
        out = tmp_path / f"part{index}"
        subprocess.run(
            [cli, "part", *flags, "--parts", "3", "--index", str(index), str(path), "-o", str(out)],
            check=True,
        )
        assert out.read_bytes() == treehash.hash_part(str(path), index, 3, **params)
    line = subprocess.run(
        [cli, "join", "--tag", *(str(tmp_path / f"part{i}") for i in range(3))],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    joined = treehash.join_parts(parts_of(str(path), 3, **params))
    assert line == f"{joined.label} ({path}) = {joined.hexdigest()}\n"


def test_a_file_changed_between_parts_is_refused_naming_the_part(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(spec_input(10_000))
    first = treehash.hash_part(path, 0, 2, height=2)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = treehash.hash_part(path, 1, 2, height=2)
    with pytest.raises(ValueError) as caught:
        treehash.join_parts([first, second])
    message = str(caught.value)
    assert message.startswith("parts[1] (part 1 of 2): its modification time (")
    assert "differs from parts[0]'s" in message
    # And a size that changed.
    with open(path, "ab") as f:
        f.write(b"more")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ValueError, match=r"parts\[1\] \(part 1 of 2\): its file size \(10004 bytes\)"):
        treehash.join_parts([first, treehash.hash_part(path, 1, 2, height=2)])


def test_parts_of_other_names_join_by_base_name_or_with_any_name(tmp_path):
    """Parts made with other spellings of one path join; parts made from
    another name of the file (a hard link: the same inode and times) are
    refused unless any_name=True, and then join to the file's digest."""
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "big.img"
    path.write_bytes(spec_input(20_000))
    want = treehash.file_digest(path, height=2).digest()
    spellings = [treehash.hash_part(p, i, 2, height=2) for i, p in enumerate([path, tmp_path / "d" / "." / "big.img"])]
    assert treehash.join_parts(spellings).digest() == want
    other = tmp_path / "other.img"
    os.link(path, other)
    mixed = [treehash.hash_part(path, 0, 2, height=2), treehash.hash_part(other, 1, 2, height=2)]
    with pytest.raises(ValueError, match=r"parts\[1\]"):
        treehash.join_parts(mixed)
    assert treehash.join_parts(mixed, any_name=True).digest() == want


def test_sets_that_are_not_whole_are_refused(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(spec_input(10_000))
    a, b, c = parts_of(path, 3, height=2)
    other = treehash.hash_part(path, 1, 3, height=3)
    corrupt = bytearray(b)
    corrupt[-20] ^= 1
    cases = [
        ([a, c], "part 1 of 3 is missing"),
        ([a, b, c, b], "parts[3] (part 1 of 3): part 1 of 3 is given twice (also as parts[1])"),
        ([a, other, c], "parts[1] (part 1 of 3): its parameters (SHA3-256-LI(H=3"),
        ([a, bytes(corrupt), c], "parts[1]: corrupt or truncated part"),
        ([a, b"not a part", c], "parts[1]: not a treehash part"),
        ([], "no parts to join"),
    ]
    for parts, message in cases:
        with pytest.raises(ValueError) as caught:
            treehash.join_parts(parts)
        assert message in str(caught.value)
    with pytest.raises(TypeError):
        treehash.join_parts([a, "text", c])


def test_bad_arguments_are_refused_with_the_command_lines_words(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x")
    for args, message in [
        ((path, 3, 3), "index 3 is not a part of count 3: parts are numbered 0 to 2"),
        ((path, -1, 3), "index -1 is not a part of count 3"),
        ((path, 0, 0), "count 0 is out of range (1 or more)"),
    ]:
        with pytest.raises(ValueError) as caught:
            treehash.hash_part(*args)
        assert message in str(caught.value)
    for name in ["turboshake128", "turboshake256"]:
        with pytest.raises(ValueError, match=f"{name} is one sponge, with no tree to split into parts"):
            treehash.hash_part(path, 0, 1, algorithm=name)
    with pytest.raises(ValueError, match="height does not apply to kt128"):
        treehash.hash_part(path, 0, 1, algorithm="kt128", height=8)
    with pytest.raises(ValueError, match="degree 1 is out of range"):
        treehash.hash_part(path, 0, 1, degree=1)
    with pytest.raises(FileNotFoundError) as caught:
        treehash.hash_part(tmp_path / "missing", 0, 1)
    assert caught.value.filename == tmp_path / "missing"


def test_a_digest_pickles(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(spec_input(5000))
    for digest in [
        treehash.file_digest(path, height=3, prefix=b"key"),
        treehash.join_parts(parts_of(path, 2, height=3, prefix=b"key")),
    ]:
        back = pickle.loads(pickle.dumps(digest))
        assert type(back) is treehash.Digest
        assert (back.digest(), back.name, back.digest_size, back.block_size) == (
            digest.digest(),
            digest.name,
            digest.digest_size,
            digest.block_size,
        )
        assert (back.backend, back.nbytes) == (digest.backend, digest.nbytes)
        assert back.name.endswith(",P)")


def test_the_short_runs_warning_names_what_avoids_it():
    from treehash._treehash import _check_split

    assert _check_split(8) is None
    assert _check_split(16) == (
        "16 parts read runs of 557056 bytes per stripe (under 1 MiB), which a parallel file "
        "system serves slowly; runs reach 1 MiB with parts=8 or fewer, height=9 or "
        "block_size=272 (another height or block_size changes the digest; "
        "`treehash part --plan` shows a split)"
    )
    # A standard function's parts read one range each: no warning.
    assert _check_split(1000, algorithm="kt128") is None
    with pytest.raises(ValueError, match="turboshake128 is one sponge"):
        _check_split(2, algorithm="turboshake128")


def test_dask_is_optional():
    # With distributed unimportable: treehash imports, treehash.dask says
    # what to install.
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "import treehash\n"
        "assert 'treehash.dask' not in sys.modules\n"
        "try:\n"
        "    import treehash.dask\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout == (
        "treehash.dask needs Dask's distributed scheduler: pip install 'dask[distributed]'\n"
    )
