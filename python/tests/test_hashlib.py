"""treehash.new against hashlib: plain SHA-3 at H = 0, any split of the
input, copies, threads, every kind of buffer."""

import array
import hashlib
import io
import pickle
import sys
import threading
import time

import pytest

import treehash
from conftest import random_bytes

PLAIN = {
    "sha3-224": hashlib.sha3_224,
    "sha3-256": hashlib.sha3_256,
    "sha3-384": hashlib.sha3_384,
    "sha3-512": hashlib.sha3_512,
}
XOF = {"shake128": hashlib.shake_128, "shake256": hashlib.shake_256}


@pytest.mark.parametrize("length", [0, 1, 71, 72, 73, 135, 136, 137, 168, 5000, 1 << 20])
def test_height_zero_is_plain_sha3(rng, length):
    data = random_bytes(rng, length)
    for name, plain in PLAIN.items():
        h = treehash.new(name, data, height=0)
        assert h.digest() == plain(data).digest(), name
        assert h.hexdigest() == plain(data).hexdigest(), name
        assert h.digest_size == plain().digest_size
        assert h.block_size == plain().block_size
    for name, plain in XOF.items():
        for n in [1, 32, 64, 100, 1000]:
            h = treehash.new(name, data, height=0, length=n)
            assert h.digest() == plain(data).digest(n), (name, n)
            # hashlib's SHAKE: no digest size, the length is digest()'s.
            assert h.digest_size == plain().digest_size == 0
            assert h.digest(n) == plain(data).digest(n), (name, n)


def test_defaults_are_the_command_lines():
    h = treehash.new()
    assert h.name == "SHA3-256-LI(H=8,D=4,B=136)"
    assert (h.digest_size, h.block_size) == (32, 136)
    assert treehash.new("shake256").digest_size == 64
    assert treehash.new("shake128").digest_size == 32
    assert treehash.new(prefix=b"k").name == "SHA3-256-LI(H=8,D=4,B=136,P)"
    assert treehash.algorithms[:6] == (
        "sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256"
    )


def split_points(rng, length):
    """Random cut points: many short parts, some empty, some of megabytes."""
    points, at = [], 0
    while at < length:
        most = rng.choice([0, 100, 10_000, 3 << 20])
        at = min(length, at + rng.randint(0, most))
        points.append(at)
    return points


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"height": 0},
        {"height": 2, "degree": 4, "block_size": 64},
        {"algorithm": "shake128", "height": 3, "degree": 2, "length": 77, "prefix": b"salt"},
        {"algorithm": "sha3-512", "height": 5, "prefix": bytes(range(200))},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items() if k != "prefix") or "defaults",
)
def test_any_split_gives_the_same_digest(rng, params):
    data = random_bytes(rng, 9 << 20)
    whole = treehash.new(data=data, **params).digest()
    for _ in range(4):
        h = treehash.new(**params)
        start = 0
        for end in split_points(rng, len(data)):
            h.update(data[start:end])
            start = end
        assert h.digest() == whole
        assert h.digest() == whole  # again: digest() does not end the object


def test_digest_midway_then_more(rng):
    data = random_bytes(rng, 3 << 20)
    h = treehash.new(height=4)
    h.update(data[:1000])
    assert h.digest() == treehash.new(data=data[:1000], height=4).digest()
    h.update(data[1000:])
    assert h.digest() == treehash.new(data=data, height=4).digest()


def test_copies_go_on_apart(rng):
    a_data, b_data, c_data = (random_bytes(rng, n) for n in (2 << 20, 5000, 3 << 20))
    h = treehash.new(height=3)
    h.update(a_data)
    c = h.copy()
    h.update(b_data)
    c.update(c_data)
    d = c.copy()
    assert h.digest() == treehash.new(data=a_data + b_data, height=3).digest()
    assert c.digest() == treehash.new(data=a_data + c_data, height=3).digest()
    assert d.digest() == c.digest()
    assert h.name == c.name


def test_every_kind_of_buffer(rng):
    data = random_bytes(rng, 40_000)
    want = treehash.new(data=data).digest()
    floats = array.array("d", data[: len(data) // 8 * 8])
    kinds = [bytearray(data), memoryview(data), memoryview(bytearray(data))]
    for kind in kinds:
        assert treehash.new(data=kind).digest() == want
    assert treehash.new(data=floats).digest() == treehash.new(data=floats.tobytes()).digest()
    strided = memoryview(data)[::2]
    with pytest.raises(BufferError):
        treehash.new().update(strided)
    with pytest.raises(TypeError, match="encoded"):
        treehash.new().update("text")
    with pytest.raises(TypeError):
        treehash.new().update(12)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="hashlib.file_digest is new in 3.11")
def test_hashlib_file_digest_takes_a_treehash_object(rng, tmp_path):
    data = random_bytes(rng, (3 << 20) + 17)
    path = tmp_path / "data"
    path.write_bytes(data)
    want = treehash.new(data=data, height=5).hexdigest()
    with open(path, "rb") as f:
        got = hashlib.file_digest(f, lambda: treehash.new(height=5))
    assert got.hexdigest() == want
    assert hashlib.file_digest(io.BytesIO(data), lambda: treehash.new(height=5)).hexdigest() == want


def test_threads_hash_at_once(rng):
    """Eight threads, each with its own object and one shared, updating
    with the GIL released: every digest right."""
    inputs = [random_bytes(rng, (1 << 20) + 4096 * k) for k in range(8)]
    wants = [treehash.new(data=d, height=6).digest() for d in inputs]
    shared = treehash.new(height=6)
    got = [None] * len(inputs)
    barrier = threading.Barrier(len(inputs))

    def work(k):
        barrier.wait()
        h = treehash.new(height=6)
        for i in range(0, len(inputs[k]), 100_000):
            h.update(inputs[k][i : i + 100_000])
            shared.update(b"x" * 3000)
        got[k] = h.digest()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == wants
    total = sum(len(range(0, len(d), 100_000)) for d in inputs)
    assert shared.digest() == treehash.new(data=b"x" * 3000 * total, height=6).digest()


def test_the_gil_is_released_while_large_updates_run(rng):
    """Another Python thread keeps running while one thread hashes: had the
    update held the GIL, the other could not have counted meanwhile."""
    data = random_bytes(rng, 128 << 20)
    h = treehash.new(threads=1)
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        start, before = time.perf_counter(), ticks[0]
        time.sleep(0.2)
        alone = (ticks[0] - before) / (time.perf_counter() - start)
        start, before = time.perf_counter(), ticks[0]
        h.update(data)
        elapsed, during = time.perf_counter() - start, ticks[0] - before
    finally:
        stop.set()
        counter.join()
    assert elapsed > 0.02, f"the update took only {elapsed:.3f} s: too short to tell"
    # Held, the GIL would let the other thread count nothing meanwhile;
    # released, it counts at its own rate, whatever share of a core a busy
    # machine leaves it.
    assert during > 0.02 * alone * elapsed, (during, alone, elapsed)


def test_parts_longer_than_a_piece_are_absorbed_where_they_lie(rng):
    """With four threads a piece at H = 8 is four stripes (35.6 MB): parts
    of 40 MiB are absorbed in place, the bytes of their last unfinished
    block kept, and the digest is the same as in one part or from a file."""
    data = random_bytes(rng, (120 << 20) + 12345)
    want = treehash.new(data=data).digest()
    h = treehash.new(threads=4)
    for start, end in [(0, 1000), (1000, 1000 + (40 << 20)), (1000 + (40 << 20), len(data))]:
        h.update(data[start:end])
    assert h.digest() == want
    mid = h.copy()
    mid.update(b"tail")
    assert mid.digest() == treehash.new(data=data + b"tail").digest()


def test_the_objects_behave_as_before_their_types_were_made_immutable(tmp_path):
    """Hash and Digest objects on every Python (their types are immutable
    on CPython 3.10 on, test_cpython_hashlib's test_readonly_types): no
    ``__dict__``, no new attributes, read-only properties, no subclasses,
    no direct construction; a digest pickles and compares as it did."""
    path = tmp_path / "data"
    path.write_bytes(b"abc")
    h = treehash.new("sha3-256", b"abc", height=0)
    d = treehash.file_digest(path, "sha3-256", height=0)
    for obj in (h, d):
        cls = type(obj)
        assert not hasattr(obj, "__dict__")
        with pytest.raises(AttributeError):
            obj.value = 1
        with pytest.raises(AttributeError):
            obj.name = "sha3_512"
        with pytest.raises(AttributeError):
            del obj.name
        with pytest.raises(TypeError, match="not an acceptable base type"):
            type("Sub", (cls,), {})
        with pytest.raises(TypeError):
            cls()
        assert obj.name == "sha3_256"
        assert obj.digest() == hashlib.sha3_256(b"abc").digest()
    back = pickle.loads(pickle.dumps(d))
    assert back == d and hash(back) == hash(d) and type(back) is treehash.Digest
    assert back.backend == d.backend and back.nbytes == d.nbytes == 3
    # The module's other names are as they were: the exception stays a
    # class that can be subclassed; the names and the version are there.
    assert issubclass(type("MyGpuError", (treehash.GpuError,), {}), RuntimeError)
    assert "sha3-256" in treehash.algorithms
    assert isinstance(treehash.__version__, str)
