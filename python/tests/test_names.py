"""What hashlib users count on beyond CPython's own tests: ``new(h.name)``
rebuilds every function, ``digest(length)`` of any length for every
function whose output length is free, file objects, digests compared by value. Expected
values are hashlib's and the standards' vectors (conftest)."""

import hashlib
import inspect
import io
import pickle
import re
import subprocess

import pytest

import treehash
from conftest import random_bytes, standard_vectors

#: Every function with parameters other than its defaults, and the name
#: its objects answer to.
NAMED = [
    ({"algorithm": "sha3-256"}, "SHA3-256-LI(H=8,D=4,B=136)"),
    ({"algorithm": "sha3_384"}, "sha3_384"),
    ({"algorithm": "sha3-512", "height": 0}, "sha3_512"),
    ({"algorithm": "shake128", "height": 0, "length": 100}, "shake_128"),
    ({"algorithm": "shake256", "height": 2, "degree": 3, "block_size": 64}, "SHAKE256-LI(H=2,D=3,B=64)"),
    ({"algorithm": "sha3-224", "height": 0, "prefix": b"k"}, "SHA3-224-LI(H=0,P)"),
    ({"algorithm": "sha3-256", "height": 3, "prefix": b"key"}, "SHA3-256-LI(H=3,D=4,B=136,P)"),
    ({"algorithm": "kt128"}, "KT128"),
    ({"algorithm": "kt256", "customization": "app"}, "KT256(C=617070)"),
    ({"algorithm": "parallelhash128", "block_size": 64, "customization": b"S"}, "ParallelHash128(B=64,S=53)"),
    ({"algorithm": "parallelhash256"}, "ParallelHash256(B=8192)"),
    ({"algorithm": "turboshake128", "domain": 0x06}, "TurboSHAKE128(D=06)"),
    ({"algorithm": "turboshake256"}, "TurboSHAKE256(D=1F)"),
]


@pytest.mark.parametrize("params,name", NAMED, ids=[name for _, name in NAMED])
def test_new_of_the_name_rebuilds_the_function(rng, params, name):
    data = random_bytes(rng, 50_000)
    h = treehash.new(data=data, **params)
    assert h.name == name
    keyed = {"prefix": params["prefix"]} if "prefix" in params else {}
    again = treehash.new(h.name, data, **keyed)
    assert again.name == h.name
    assert (again.digest_size, again.block_size) == (
        treehash.new(h.name, **keyed).digest_size,
        h.block_size,
    )
    n = params.get("length")
    args = (n,) if n else ()
    assert again.digest(*args) == h.digest(*args)
    # The keywords the name records may be given again when they agree.
    agreeing = {k: v for k, v in params.items() if k not in ("algorithm", "length")}
    assert treehash.new(h.name, data, **agreeing).digest(*args) == h.digest(*args)


@pytest.mark.parametrize("params,name", NAMED, ids=[name for _, name in NAMED])
def test_a_digest_is_named_as_its_hash_object_and_so_when_unpickled(params, name):
    d = treehash.file_digest(io.BytesIO(b"abc"), **params)
    back = pickle.loads(pickle.dumps(d))
    assert d.name == back.name == name
    assert back == d
    algorithm = params["algorithm"]
    for digest in (d, back):
        if algorithm.startswith(("sha3", "SHA3")):
            with pytest.raises(TypeError):
                digest.digest(1)
        elif algorithm.startswith("parallelhash"):
            with pytest.raises(ValueError):
                digest.digest(1)
        else:
            assert digest.digest(1) == d.digest()[:1]


@pytest.mark.parametrize("params,name", NAMED, ids=[name for _, name in NAMED])
def test_the_label_is_the_command_lines(cli, tmp_path, params, name):
    path = tmp_path / "input"
    path.write_bytes(b"abc")
    # hashlib's name is the tool's function at H = 0.
    hashlib_names = {"sha3_384": ["-a", "sha3-384", "-H", "0"]}
    args = hashlib_names.get(params["algorithm"], ["-a", params["algorithm"]])
    flags = {"height": "-H", "degree": "-D", "block_size": "-B", "length": "-l"}
    args += [a for k, v in params.items() if k in flags for a in (flags[k], str(v))]
    if "prefix" in params:
        args += ["--prefix-hex", params["prefix"].hex()]
    if "customization" in params:
        c = params["customization"]
        args += ["--customization-hex", (c.encode() if isinstance(c, str) else c).hex()]
    if "domain" in params:
        args += ["--domain", f"{params['domain']:02x}"]
    line = subprocess.run([cli, *args, "--tag", str(path)], check=True, capture_output=True, text=True).stdout
    label, digest = re.fullmatch(r"(\S+) \(.*\) = ([0-9a-f]+)\n", line).groups()
    for got in (treehash.new(data=b"abc", **params), treehash.file_digest(path, **params)):
        assert (got.label, got.name, got.hexdigest()) == (label, name, digest)


def test_hashlib_names_are_plain_fips_202(rng):
    data = random_bytes(rng, 10_000)
    for name in ("sha3_224", "sha3_256", "sha3_384", "sha3_512"):
        want = hashlib.new(name, data)
        for h in (treehash.new(name, data), getattr(treehash, name)(data), treehash.new(name.upper(), data)):
            assert (h.name, h.digest_size, h.block_size) == (want.name, want.digest_size, want.block_size)
            assert h.hexdigest() == want.hexdigest()
            assert hashlib.new(h.name, data).digest() == h.digest()
    for name in ("shake_128", "shake_256"):
        want = hashlib.new(name, data)
        h = getattr(treehash, name)(data)
        assert (h.name, h.digest_size, h.block_size) == (want.name, want.digest_size, want.block_size)
        for n in (0, 1, 16, 32, 64, 136):
            assert h.digest(n) == want.digest(n)
            assert h.hexdigest(length=n) == want.hexdigest(n)
        # With no length: the configured one (the command line's default).
        assert h.digest() == want.digest(32 if name == "shake_128" else 64)
        assert treehash.new(name, data, length=1000).digest(1000) == want.digest(1000)
        for n in (137, 169, 1000, 65536):  # beyond the rate: digests of their own
            assert h.digest(n) == want.digest(n)
        assert h.digest(20) == want.digest(20)  # and the stream goes on


def test_the_function_names_keep_their_defaults():
    """A bare FIPS name is the function, as on the command line: the tree
    at H = 8, whatever the case; only hashlib's names are H = 0."""
    for name in ("sha3-256", "SHA3-256", "Sha3-256"):
        assert treehash.new(name).name == "SHA3-256-LI(H=8,D=4,B=136)"
    assert treehash.new("sha3_256").name == "sha3_256"


@pytest.mark.parametrize(
    "algorithm,keywords,message",
    [
        ("sha3_256", {"height": 8}, "height=8 does not agree with the name 'sha3_256', which records height 0"),
        ("sha3_256", {"prefix": b"k"}, "prefix does not agree with the name 'sha3_256'"),
        ("SHA3-256-LI(H=8,D=4,B=136)", {"degree": 2}, "degree=2 does not agree"),
        ("SHA3-256-LI(H=8,D=4,B=136,P)", {}, "is the name of a keyed digest (,P): give its prefix="),
        ("KT128(C=6162)", {"customization": "x"}, "customization does not agree"),
        ("ParallelHash256(B=8192)", {"customization": "x"}, "customization does not agree"),
        ("TurboSHAKE128(D=06)", {"domain": 7}, "domain=0x07 does not agree with the name 'TurboSHAKE128(D=06)', which records domain 0x06"),
        ("KT128(C=6162)", {"height": 2}, "height does not apply to kt128"),
        ("SHA3-256-LI(H=30,D=4,B=136)", {}, "give more than 2^24 leaves"),
        ("SHA3-256-LI(H=8)", {}, "unknown algorithm 'SHA3-256-LI(H=8)'"),
    ],
)
def test_names_and_keywords_that_disagree_are_refused(algorithm, keywords, message):
    with pytest.raises(ValueError) as caught:
        treehash.new(algorithm, **keywords)
    assert message in str(caught.value)


def prefix_vectors():
    """RFC 9861's known answers of KT and TurboSHAKE whose output starts at
    byte 0: a shorter digest is their start."""
    return [v for v in standard_vectors() if not v[0].startswith("parallelhash") and v[3] == 0]


@pytest.mark.parametrize("case", prefix_vectors(), ids=lambda c: c[0])
def test_digest_of_a_length_is_the_start_of_the_standards_output(case):
    name, message, params, _, output = case
    params = {k: v for k, v in params.items() if k != "length"}
    h = treehash.new(name, message, **params)
    rate = h.block_size
    lengths = {0, 1, 16, len(output) // 2, min(len(output), rate), len(output)}
    for n in sorted(n for n in lengths if n <= len(output)):
        assert h.digest(n) == output[:n]
        assert h.hexdigest(n) == output[:n].hex()
    whole = treehash.new(name, message, length=len(output), **params)
    assert whole.digest() == output
    assert whole.digest(len(output)) == output
    with pytest.raises(ValueError, match="out of range"):
        h.digest(65537)


def test_parallelhash_has_one_length_per_object():
    for name, message, params, skip, output in standard_vectors():
        if not name.startswith("parallelhash") or skip:
            continue
        h = treehash.new(name, message, **params)
        assert h.digest(len(output)) == h.digest() == output
        assert h.digest(0) == b""
        # Another length is a digest of its own, not a start of this one.
        other = {k: v for k, v in params.items() if k != "length"}
        for n in (1, len(output) + 1, 300):
            want = treehash.new(name, message, length=n, **other).digest()
            assert h.digest(n) == want
            if n > len(output):
                assert want[: len(output)] != output
        assert h.digest() == output


def test_shake_trees_give_the_start_of_a_longer_digest(rng):
    data = random_bytes(rng, 100_000)
    longer = treehash.new("shake128", data, height=2, length=1000).digest()
    h = treehash.new("shake128", data, height=2)
    assert h.digest() == longer[:32]
    assert h.digest(168) == longer[:168]
    assert treehash.new("shake128", data, height=2, length=1000).digest(500) == longer[:500]
    assert h.digest(1000) == longer


def test_usedforsecurity_is_taken_as_hashlib_takes_it():
    for flag in (True, False, 0, 1, None):
        assert treehash.sha3_256(b"a", usedforsecurity=flag).digest() == hashlib.sha3_256(b"a").digest()
        treehash.new("kt128", usedforsecurity=flag)
    assert "usedforsecurity=True" in str(inspect.signature(treehash.new))


def test_a_fixed_length_takes_no_length():
    for h in (treehash.sha3_256(), treehash.new("sha3-512", height=2)):
        with pytest.raises(TypeError, match="take no length"):
            h.digest(16)


def test_digests_compare_by_value(tmp_path):
    data = b"x" * 100_000
    path = tmp_path / "f"
    path.write_bytes(data)
    by_path = treehash.file_digest(path, "sha3_256")
    by_object = treehash.file_digest(io.BytesIO(data), "sha3_256")
    assert by_path == by_object and not by_path != by_object
    assert by_path.hexdigest() == hashlib.sha3_256(data).hexdigest()
    assert len({by_path, by_object, pickle.loads(pickle.dumps(by_path))}) == 1
    assert by_path != treehash.file_digest(io.BytesIO(data + b"y"), "sha3_256")
    assert by_path != treehash.file_digest(path, "sha3-256")  # the tree: another function
    assert by_path != by_path.digest() and by_path != by_path.hexdigest()
    assert treehash.file_digest(path, prefix=b"a") != treehash.file_digest(path, prefix=b"b")


def test_a_finished_digest_gives_its_start():
    d = treehash.file_digest(io.BytesIO(b"abc"), "shake_256", length=100)
    want = hashlib.shake_256(b"abc")
    assert (d.name, d.digest_size) == ("shake_256", 100)
    assert d.digest() == want.digest(100)
    assert d.digest(10) == want.digest(10)
    assert d.hexdigest(length=99) == want.hexdigest(99)
    with pytest.raises(ValueError, match="give length=101 to the function that computes it"):
        d.digest(101)


def test_file_objects_are_read_as_hashlib_reads_them(rng, tmp_path):
    data = random_bytes(rng, (9 << 20) + 12345)
    path = tmp_path / "f"
    path.write_bytes(data)
    with open(path, "rb") as f:
        f.seek(1000)  # from where it stands
        got = treehash.file_digest(f, "shake_128", length=64)
        assert got.nbytes == len(data) - 1000
        assert got.digest() == hashlib.shake_128(data[1000:]).digest(64)
    with open(path, "rb", buffering=0) as f:  # raw, unbuffered
        assert treehash.file_digest(f, height=3) == treehash.file_digest(path, height=3)
    buf = io.BytesIO(data)
    buf.seek(5)  # a BytesIO is hashed whole, as hashlib hashes it
    assert treehash.file_digest(buf, "sha3_224").digest() == hashlib.sha3_224(data).digest()
    buf.write(b"grows")  # and may change again afterwards
    with pytest.raises(ValueError, match="by its path"):
        treehash.file_digest(io.BytesIO(data), backend="gpu")


def test_join_parts_says_parts_are_bytes():
    with pytest.raises(TypeError, match=r"parts\[0\] is str: a part is bytes"):
        treehash.join_parts(["abc"])
    with pytest.raises(TypeError, match=r"parts\[1\] is int: a part is bytes"):
        treehash.join_parts([b"", 3])
