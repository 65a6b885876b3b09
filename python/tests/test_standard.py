"""The standard functions (KT128, KT256, ParallelHash128/256,
TurboSHAKE128/256): the known answers of RFC 9861 and NIST SP 800-185, the
command line's digests, any split of the input, copies, threads, and the
options each takes or refuses, with the command line's words."""

import collections
import hashlib
import inspect
import io
import re
import subprocess
import sys
import threading

import pytest

import treehash
from conftest import random_bytes, standard_vectors

STANDARD = (
    "kt128",
    "kt256",
    "parallelhash128",
    "parallelhash256",
    "turboshake128",
    "turboshake256",
)
TREES = ("sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256")

#: Parameter sets that reach each function's options: customization strings
#: as text and as bytes (one longer than a chunk), ParallelHash's blocks of
#: 1 byte and of an odd length, domain bytes, long and short outputs.
PARAMS = [
    ("kt128", {}),
    ("kt128", {"customization": "treehash ✓", "length": 100}),
    ("kt256", {"customization": bytes(range(256)) * 40}),
    ("parallelhash128", {}),
    ("parallelhash128", {"block_size": 1, "customization": b"S"}),
    ("parallelhash256", {"block_size": 1013, "customization": "Parallel Data", "length": 7}),
    ("turboshake128", {}),
    ("turboshake128", {"domain": 0x06, "length": 300}),
    ("turboshake256", {"domain": 0x01}),
]


def case_id(case):
    name, params = case
    shown = ",".join(f"{k}={v if k != 'customization' else len(v)}" for k, v in params.items())
    return f"{name}({shown})"


def chunk_of(name, params):
    """The blocks the message is cut into: KT's chunks, ParallelHash's B,
    TurboSHAKE's rate."""
    if name.startswith("kt"):
        return 8192
    if name.startswith("parallelhash"):
        return params.get("block_size", 8192)
    return 168 if name.endswith("128") else 136


def test_the_twelve_names_of_the_command_line():
    assert treehash.algorithms == TREES + STANDARD
    # new() also takes hashlib's names of the FIPS 202 functions (H = 0).
    hashlib_names = ("sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256")
    assert treehash.algorithms_guaranteed == frozenset(TREES + STANDARD + hashlib_names)
    assert treehash.algorithms_available == treehash.algorithms_guaranteed
    for written in ["KT128", "Kt256", "ParallelHash128", "TurboSHAKE256", "PARALLELHASH256"]:
        assert treehash.new(written).name == treehash.new(written.lower()).name


def test_every_known_answer_by_new_and_by_file(tmp_path):
    """Every RFC 9861 case (TurboSHAKE, KT128, KT256: the RFC's own and
    pycryptodome's) and NIST's ParallelHash samples; none is skipped (the
    longest customization string, 68,921 bytes, is within the library's
    256 KiB)."""
    cases = standard_vectors()
    counts = collections.Counter(name for name, *_ in cases)
    assert all(counts[name] >= 3 for name in STANDARD), counts
    assert len(cases) >= 230, "the vector files lost cases"
    path = tmp_path / "message"
    for name, message, params, skip, output in cases:
        what = (name, len(message), {k: v for k, v in params.items() if k != "customization"})
        assert treehash.new(name, message, **params).digest()[skip:] == output, what
        path.write_bytes(message)
        got = treehash.file_digest(path, algorithm=name, backend="cpu", **params)
        assert got.digest()[skip:] == output, what
        assert got.nbytes == len(message)


def cli_args(name, params):
    args = ["-a", name]
    if "block_size" in params:
        args += ["-B", str(params["block_size"])]
    if "length" in params:
        args += ["-l", str(params["length"])]
    if "customization" in params:
        c = params["customization"]
        args += ["--customization-hex", (c.encode() if isinstance(c, str) else c).hex()]
    if "domain" in params:
        args += ["--domain", f"{params['domain']:02x}"]
    return args


@pytest.mark.parametrize("case", PARAMS, ids=case_id)
def test_digests_equal_the_command_lines(cli, rng, tmp_path, case):
    name, params = case
    chunk = chunk_of(name, params)
    path = tmp_path / "input"
    for length in [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, 100_003, (5 << 20) + 3]:
        data = random_bytes(rng, length)
        path.write_bytes(data)
        line = subprocess.run(
            [cli, *cli_args(name, params), "--backend", "cpu", "--tag", str(path)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        label, digest = re.fullmatch(r"(\S+) \(.*\) = ([0-9a-f]+)", line).groups()
        by_file = treehash.file_digest(path, algorithm=name, **params)
        by_new = treehash.new(name, data, **params)
        assert by_file.hexdigest() == digest, length
        assert by_new.hexdigest() == digest, length
        assert by_file.label == by_new.label == by_file.name == by_new.name == label
        assert by_file.digest_size == by_new.digest_size == len(digest) // 2


def split_points(rng, length):
    """Random cut points: many short parts, some empty, some of megabytes."""
    points, at = [], 0
    while at < length:
        most = rng.choice([0, 100, 10_000, 3 << 20])
        at = min(length, at + rng.randint(0, most))
        points.append(at)
    return points


@pytest.mark.parametrize("case", PARAMS, ids=case_id)
def test_any_split_gives_the_file_digest(rng, tmp_path, case):
    name, params = case
    # Blocks of a byte are as many chunks as bytes: a shorter input.
    data = random_bytes(rng, (1 << 20) + 77 if chunk_of(name, params) < 64 else 9 << 20)
    path = tmp_path / "input"
    path.write_bytes(data)
    whole = treehash.file_digest(path, algorithm=name, backend="cpu", **params).digest()
    assert treehash.new(name, data, **params).digest() == whole
    for _ in range(3):
        h = treehash.new(name, **params)
        start = 0
        for end in split_points(rng, len(data)):
            h.update(data[start:end])
            start = end
        assert h.digest() == whole
        assert h.digest() == whole  # again: digest() does not end the object


@pytest.mark.parametrize("case", PARAMS, ids=case_id)
def test_copies_and_digests_midway_go_on_apart(rng, case):
    name, params = case
    a, b, c = (random_bytes(rng, n) for n in (100_000 + 3, 5000, (2 << 20) + 1))
    h = treehash.new(name, **params)
    h.update(a)
    assert h.digest() == treehash.new(name, a, **params).digest()
    copy = h.copy()
    h.update(b)
    copy.update(c)
    again = copy.copy()
    assert h.digest() == treehash.new(name, a + b, **params).digest()
    assert copy.digest() == treehash.new(name, a + c, **params).digest()
    assert again.digest() == copy.digest()
    again.update(b"more")
    assert again.digest() == treehash.new(name, a + c + b"more", **params).digest()
    assert copy.digest() == treehash.new(name, a + c, **params).digest()
    assert h.name == copy.name


def test_threads_hash_at_once(rng):
    """Eight threads, each with objects of every standard function and one
    shared object, updating with the GIL released: every digest right."""
    inputs = [random_bytes(rng, (1 << 20) + 4096 * k) for k in range(8)]
    wants = [[treehash.new(name, d).digest() for name in STANDARD] for d in inputs]
    shared = treehash.new("kt256")
    got = [None] * len(inputs)
    barrier = threading.Barrier(len(inputs))

    def work(k):
        barrier.wait()
        objects = [treehash.new(name) for name in STANDARD]
        for i in range(0, len(inputs[k]), 100_000):
            for h in objects:
                h.update(inputs[k][i : i + 100_000])
            shared.update(b"x" * 3000)
        got[k] = [h.digest() for h in objects]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == wants
    total = sum(len(range(0, len(d), 100_000)) for d in inputs)
    assert shared.digest() == treehash.new("kt256", b"x" * 3000 * total).digest()


def test_names_sizes_and_block_sizes():
    facts = {
        "kt128": ("KT128", 32, 168),
        "kt256": ("KT256", 64, 136),
        "parallelhash128": ("ParallelHash128(B=8192)", 32, 8192),
        "parallelhash256": ("ParallelHash256(B=8192)", 64, 8192),
        "turboshake128": ("TurboSHAKE128(D=1F)", 32, 168),
        "turboshake256": ("TurboSHAKE256(D=1F)", 64, 136),
    }
    for name, fact in facts.items():
        h = treehash.new(name)
        assert (h.name, h.digest_size, h.block_size) == fact, name
    # hashlib's block size for SHAKE is the rate, as TurboSHAKE's here.
    assert treehash.new("turboshake128").block_size == hashlib.shake_128().block_size
    assert treehash.new("turboshake256").block_size == hashlib.shake_256().block_size
    ph = treehash.new("parallelhash128", block_size=64, customization="ab", length=20)
    assert (ph.name, ph.digest_size, ph.block_size) == ("ParallelHash128(B=64,S=6162)", 20, 64)
    assert treehash.new("kt128", customization=b"ab").name == "KT128(C=6162)"
    assert treehash.new("turboshake128", domain=6).name == "TurboSHAKE128(D=06)"


def test_customization_is_text_as_utf8_or_bytes(rng):
    data = random_bytes(rng, 20_000)
    text = "Grüße, ✓"
    for name in ["kt128", "parallelhash256"]:
        want = treehash.new(name, data, customization=text.encode()).digest()
        assert treehash.new(name, data, customization=text).digest() == want
        assert treehash.new(name, data, customization=bytearray(text.encode())).digest() == want
        assert treehash.new(name, data, customization=memoryview(text.encode())).digest() == want
        # An empty customization string is none.
        assert treehash.new(name, data, customization="").digest() == treehash.new(name, data).digest()
    with pytest.raises(TypeError, match="customization must be str or a bytes-like object, not int"):
        treehash.new("kt128", customization=12)


def test_defaults_given_are_the_defaults():
    for name in ["kt256", "parallelhash128", "turboshake256"]:
        assert treehash.new(name, b"abc", length=None).digest() == treehash.new(name, b"abc").digest()
    assert (
        treehash.new("parallelhash128", b"abc", block_size=8192).digest()
        == treehash.new("parallelhash128", b"abc").digest()
    )
    assert (
        treehash.new("turboshake128", b"abc", domain=0x1F).digest()
        == treehash.new("turboshake128", b"abc").digest()
    )


def test_signatures_show_the_command_lines_defaults():
    for function in [treehash.new, treehash.file_digest, treehash.device_digest]:
        parameters = inspect.signature(function).parameters
        assert parameters["height"].default == 8
        assert parameters["degree"].default == 4
        assert parameters["domain"].default is None
        assert parameters["algorithm"].default == "sha3-256"
    # None is "not given": an LI tree at the default height.
    assert treehash.new(height=None, degree=None).name == "SHA3-256-LI(H=8,D=4,B=136)"


STANDARD_LIST = "kt128, kt256, parallelhash128, parallelhash256, turboshake128, turboshake256"

#: Refusals: the keywords, the message, and the command line's flags for the
#: same options (None where the command line cannot say it).
REFUSALS = [
    (
        {"algorithm": "kt128", "height": 8},
        "height does not apply to kt128: its tree is fixed by RFC 9861",
        ["-a", "kt128", "-H", "8"],
    ),
    (
        {"algorithm": "parallelhash256", "degree": 4},
        "degree does not apply to parallelhash256: its tree is fixed by NIST SP 800-185",
        ["-a", "parallelhash256", "-D", "4"],
    ),
    (
        {"algorithm": "kt256", "prefix": b"key"},
        "prefix does not apply to kt256: RFC 9861 fixes its input; use customization for a "
        "customization string",
        ["-a", "kt256", "--prefix-hex", "6b6579"],
    ),
    (
        {"algorithm": "kt128", "block_size": 4096},
        "block_size (its chunks are 8192 bytes) does not apply to kt128: its tree is fixed by "
        "RFC 9861",
        ["-a", "kt128", "-B", "4096"],
    ),
    (
        {"algorithm": "turboshake128", "block_size": 8},
        "block_size does not apply to turboshake128: it is one sponge",
        ["-a", "turboshake128", "-B", "8"],
    ),
    (
        {"algorithm": "kt128", "domain": 0x1F},
        "kt128 takes no domain byte",
        ["-a", "kt128", "--domain", "1f"],
    ),
    (
        {"algorithm": "turboshake128", "customization": "x"},
        "turboshake128 takes no customization string",
        ["-a", "turboshake128", "--customization", "x"],
    ),
    (
        {"algorithm": "sha3-256", "customization": b"x"},
        f"customization is for the standard functions ({STANDARD_LIST}), not sha3-256",
        ["-a", "sha3-256", "--customization", "x"],
    ),
    (
        {"algorithm": "shake128", "domain": 0x1F},
        f"domain is for the standard functions ({STANDARD_LIST}), not shake128",
        ["-a", "shake128", "--domain", "1f"],
    ),
    (
        {"algorithm": "turboshake256", "domain": 0x80},
        "domain byte 0x80 is out of range for TurboSHAKE (0x01 to 0x7f)",
        ["-a", "turboshake256", "--domain", "80"],
    ),
    (
        {"algorithm": "turboshake256", "domain": 0},
        "domain byte 0x00 is out of range for TurboSHAKE (0x01 to 0x7f)",
        ["-a", "turboshake256", "--domain", "00"],
    ),
    (
        {"algorithm": "turboshake256", "domain": 0x100},
        "domain byte 0x100 is out of range for TurboSHAKE (0x01 to 0x7f)",
        None,
    ),
    ({"algorithm": "turboshake256", "domain": -1}, "domain -1 is negative", None),
    (
        {"algorithm": "parallelhash128", "block_size": 0},
        "block size 0 is out of range for ParallelHash (1 to 2^24 bytes)",
        ["-a", "parallelhash128", "-B", "0"],
    ),
    (
        {"algorithm": "parallelhash128", "block_size": (1 << 24) + 1},
        "block size 16777217 is out of range for ParallelHash (1 to 2^24 bytes)",
        ["-a", "parallelhash128", "-B", str((1 << 24) + 1)],
    ),
    (
        {"algorithm": "kt256", "length": 0},
        "output length 0 is out of range for kt256 (1 to 65536 bytes)",
        ["-a", "kt256", "-l", "0"],
    ),
    (
        {"algorithm": "turboshake128", "length": 65537},
        "output length 65537 is out of range for turboshake128 (1 to 65536 bytes)",
        ["-a", "turboshake128", "-l", "65537"],
    ),
    (
        {"algorithm": "kt128", "customization": bytes((256 << 10) + 1)},
        "customization string of 262145 bytes is too long (at most 262144)",
        None,
    ),
]

#: The command line's flags as the keywords spell them.
FLAGS_AS_KEYWORDS = [
    ("a prefix (--prefix-hex, --prefix-file)", "prefix"),
    ("-H/--height", "height"),
    ("-D/--degree", "degree"),
    ("-B/--block-size", "block_size"),
    ("--customization", "customization"),
    ("--domain", "domain"),
]


@pytest.mark.parametrize("params, message, flags", REFUSALS, ids=lambda x: None)
def test_refusals_are_value_errors(tmp_path, params, message, flags):
    path = tmp_path / "x"
    path.write_bytes(b"x")
    for call in (
        lambda: treehash.new(**params),
        lambda: treehash.file_digest(path, **params),
        lambda: treehash.device_digest(object(), **params),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message


@pytest.mark.parametrize(
    "params, message, flags", [r for r in REFUSALS if r[2]], ids=lambda x: None
)
def test_refusals_say_what_the_command_line_says(cli, tmp_path, params, message, flags):
    path = tmp_path / "x"
    path.write_bytes(b"x")
    run = subprocess.run([cli, *flags, str(path)], capture_output=True, text=True)
    assert run.returncode == 2, run
    said = run.stderr.strip().removeprefix("treehash: ")
    for flag, keyword in FLAGS_AS_KEYWORDS:
        said = said.replace(flag, keyword)
    assert said == message


@pytest.mark.skipif(sys.version_info < (3, 11), reason="hashlib.file_digest is new in 3.11")
def test_hashlib_file_digest_takes_a_standard_function(rng):
    data = random_bytes(rng, (3 << 20) + 17)
    for name in STANDARD:
        want = treehash.new(name, data).hexdigest()
        got = hashlib.file_digest(io.BytesIO(data), lambda: treehash.new(name))
        assert got.hexdigest() == want


def test_every_known_answer_in_random_parts(rng):
    for name, message, params, skip, output in standard_vectors():
        h = treehash.new(name, **params)
        start = 0
        for end in split_points(rng, len(message)):
            h.update(message[start:end])
            start = end
        assert h.digest()[skip:] == output, (name, len(message))
