"""CPython's Lib/test/test_hashlib.py (3.13), the checks that apply to a
hash that is not OpenSSL's, run against treehash's objects.

Each test is named as the CPython test it ports and does what it does,
with treehash's constructors in place of hashlib's: for each of hashlib's
six SHA-3 names, the module's constructor (``treehash.sha3_256``),
``treehash.new(name)``, and treehash's own name at H = 0
(``treehash.new("sha3-256", height=0)``); where a check is about the
interface rather than FIPS 202's values, the LI trees and the standard
functions too. Expected digests are CPython's vectors, or hashlib's own
digest of the same bytes: never treehash's.

Left out, as not applying to treehash (the count is in python/README.md):
``test_get_builtin_constructor`` (hashlib's private constructor cache),
``test_sha256_update_over_4gb``, ``test_no_unicode``,
``test_no_unicode_blake2``, ``test_blocksize_and_name``,
``test_blocksize_name_blake2``, ``test_case_md5_*``, ``test_case_sha1_*``,
``test_case_sha224_*`` … ``test_case_sha512_*``, ``test_blake2*`` and
``test_case_blake2*`` (MD5, SHA-1, SHA-2 and BLAKE2, which treehash does
not compute); ``test_case_sha3_*_vector`` and ``test_case_shake*_vector``
(files fetched from pythontest.net, which CPython skips offline as CI is;
test_hashlib.py compares with hashlib over lengths 0 to 1 MiB instead);
``test_get_fips_mode`` and ``test_hash_disallow_instantiation`` (OpenSSL's
``_hashlib``); ``test_disallow_instantiation`` (CPython exempts its SHA-3
types); the KDF tests (PBKDF2 and scrypt over hashlib's hashes);
``test_normalized_name`` (that OpenSSL's spelling ``sha3-512`` stays out of
hashlib's names: in treehash it is the name of its own function, the LI
tree).
"""

import array
import hashlib
import io
import itertools
import os
import sys
import tempfile
import threading

import pytest

import treehash

#: hashlib's names and treehash's names of the same functions.
FIPS = {
    "sha3_224": "sha3-224",
    "sha3_256": "sha3-256",
    "sha3_384": "sha3-384",
    "sha3_512": "sha3-512",
    "shake_128": "shake128",
    "shake_256": "shake256",
}
SHAKES = {"shake_128", "shake_256"}


def hexstr(s):
    assert isinstance(s, bytes), repr(s)
    return "".join("0123456789abcdef"[b >> 4] + "0123456789abcdef"[b & 0xF] for b in s)


def constructors_of(name):
    """The ways to make hashlib's ``name`` in treehash: the module's
    constructor, new() given hashlib's name, new() given treehash's name
    at H = 0."""

    def via_new(data=None, _name=name, **kwargs):
        if data is None:
            return treehash.new(_name, **kwargs)
        return treehash.new(_name, data, **kwargs)

    def via_own_name(data=None, _name=FIPS[name], **kwargs):
        return treehash.new(_name, data, height=0, **kwargs)

    return [getattr(treehash, name), via_new, via_own_name]


CONSTRUCTORS = {name: constructors_of(name) for name in FIPS}


def other_function(algorithm, **params):
    def construct(data=None, **kwargs):
        return treehash.new(algorithm, data, **params, **kwargs)

    return construct


#: Functions beyond hashlib's, for the checks of the interface.
OTHERS = [
    other_function("sha3-256"),
    other_function("sha3-512", height=2, degree=3, block_size=64),
    other_function("shake128", height=3, length=40),
    other_function("shake256", height=1, prefix=b"key"),
    other_function("kt128"),
    other_function("kt256", customization=b"app"),
    other_function("turboshake128", domain=0x06),
    other_function("turboshake256"),
    other_function("parallelhash128", block_size=64),
    other_function("parallelhash256", customization="S", length=16),
]


def hash_constructors():
    return itertools.chain(itertools.chain.from_iterable(CONSTRUCTORS.values()), OTHERS)


def takes_length(h):
    """Whether ``h.digest(16)`` is a digest of its function, as for
    hashlib's SHAKE: its output length is free and a shorter digest is the
    start of a longer one (not ParallelHash, whose length is hashed)."""
    return h.name in SHAKES or h.name.startswith(("SHAKE", "KT", "TurboSHAKE"))


def test_hash_array():
    a = array.array("b", range(10))
    for cons in hash_constructors():
        c = cons(a, usedforsecurity=False)
        if takes_length(c):
            c.hexdigest(16)
        else:
            c.hexdigest()
    # And the digests are hashlib's.
    for name, constructors in CONSTRUCTORS.items():
        want = getattr(hashlib, name)(a)
        for cons in constructors:
            got = cons(a)
            if name in SHAKES:
                assert got.hexdigest(16) == want.hexdigest(16)
            else:
                assert got.hexdigest() == want.hexdigest()


def test_algorithms_guaranteed():
    supported = set(treehash.algorithms) | set(FIPS)
    assert treehash.algorithms_guaranteed == {a for a in supported if a.islower()}


def test_algorithms_available():
    assert set(treehash.algorithms_guaranteed).issubset(treehash.algorithms_available)
    # all available algorithms must be loadable, bpo-47101
    assert "undefined" not in treehash.algorithms_available
    for name in treehash.algorithms_available:
        treehash.new(name, usedforsecurity=False)


@pytest.mark.parametrize("usedforsecurity", [True, False])
def test_usedforsecurity(usedforsecurity):
    """test_usedforsecurity_true and test_usedforsecurity_false."""
    treehash.new("sha3_256", usedforsecurity=usedforsecurity)
    for cons in hash_constructors():
        cons(usedforsecurity=usedforsecurity)
        cons(b"", usedforsecurity=usedforsecurity)


def test_unknown_hash():
    with pytest.raises(ValueError):
        treehash.new("spam spam spam spam spam")
    with pytest.raises(TypeError):
        treehash.new(1)


def test_new_upper_to_lower():
    assert treehash.new("SHA3_256").name == "sha3_256"


def test_hexdigest():
    for cons in hash_constructors():
        h = cons(usedforsecurity=False)
        if takes_length(h):
            assert isinstance(h.digest(16), bytes)
            assert hexstr(h.digest(16)) == h.hexdigest(16)
        else:
            assert isinstance(h.digest(), bytes)
            assert hexstr(h.digest()) == h.hexdigest()


def test_digest_length_overflow():
    # See issue #34922
    large_sizes = (2**29, 2**32 - 10, 2**32 + 10, 2**61, 2**64 - 10, 2**64 + 10)
    for cons in hash_constructors():
        h = cons(usedforsecurity=False)
        if not takes_length(h):
            continue
        for digest in h.digest, h.hexdigest:
            with pytest.raises(ValueError):
                digest(-10)
            for length in large_sizes:
                with pytest.raises((ValueError, OverflowError)):
                    digest(length)


def test_name_attribute():
    supported = treehash.algorithms_guaranteed
    for cons in hash_constructors():
        h = cons(usedforsecurity=False)
        assert isinstance(h.name, str)
        if h.name in supported:
            assert h.name in supported
        else:
            assert h.name not in supported
        # A keyed object's name asks for its key, which no name holds.
        keyed = {"prefix": b"key"} if h.name.endswith(",P)") else {}
        assert h.name == treehash.new(h.name, usedforsecurity=False, **keyed).name


def test_large_update():
    aas = b"a" * 128
    bees = b"b" * 127
    cees = b"c" * 126
    dees = b"d" * 2048  # HASHLIB_GIL_MINSIZE

    for cons in hash_constructors():
        m1 = cons(usedforsecurity=False)
        m1.update(aas)
        m1.update(bees)
        m1.update(cees)
        m1.update(dees)
        args = (16,) if takes_length(m1) else ()

        m2 = cons(usedforsecurity=False)
        m2.update(aas + bees + cees + dees)
        assert m1.digest(*args) == m2.digest(*args)

        m3 = cons(aas + bees + cees + dees, usedforsecurity=False)
        assert m1.digest(*args) == m3.digest(*args)

        # verify copy() doesn't touch original
        m4 = cons(aas + bees + cees, usedforsecurity=False)
        m4_digest = m4.digest(*args)
        m4_copy = m4.copy()
        m4_copy.update(dees)
        assert m1.digest(*args) == m4_copy.digest(*args)
        assert m4.digest(*args) == m4_digest


def test_sha3_256_update_over_4gb():
    zero_1mb = b"\0" * 1024 * 1024
    h = treehash.sha3_256()
    for _ in range(0, 4096):
        h.update(zero_1mb)
    h.update(b"hello world")
    assert h.hexdigest() == "e2d4535e3b613135c14f2fe4e026d7ad8d569db44901740beffa30d430acb038"


def check(name, data, hexdigest, shake=False, **kwargs):
    length = len(hexdigest) // 2
    hexdigest = hexdigest.lower()
    constructors = CONSTRUCTORS[name]
    assert len(constructors) >= 2
    for hash_object_constructor in constructors:
        m = hash_object_constructor(data, **kwargs)
        computed = m.hexdigest() if not shake else m.hexdigest(length)
        assert computed == hexdigest, (name, hash_object_constructor, len(data))
        computed = m.digest() if not shake else m.digest(length)
        digest = bytes.fromhex(hexdigest)
        assert computed == digest
        if not shake:
            assert len(digest) == m.digest_size

    if not shake and kwargs.get("key") is None:
        check_file_digest(name, data, hexdigest)


def check_file_digest(name, data, hexdigest):
    """treehash.file_digest given the name, and hashlib.file_digest given
    each constructor, of a BytesIO and of a file open for reading."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        buf = io.BytesIO(data)
        buf.seek(0)
        assert treehash.file_digest(buf, name).hexdigest() == hexdigest
        with open(path, "rb") as f:
            assert treehash.file_digest(f, name).hexdigest() == hexdigest
        if sys.version_info < (3, 11):  # hashlib.file_digest is new in 3.11
            return
        for digest in CONSTRUCTORS[name]:
            buf = io.BytesIO(data)
            assert hashlib.file_digest(buf, digest).hexdigest() == hexdigest
            with open(path, "rb") as f:
                assert hashlib.file_digest(f, digest).hexdigest() == hexdigest
    finally:
        os.unlink(path)


def check_no_unicode(algorithm_name):
    # Unicode objects are not allowed as input.
    for hash_object_constructor in CONSTRUCTORS[algorithm_name]:
        with pytest.raises(TypeError):
            hash_object_constructor("spam")


def test_no_unicode_sha3():
    for name in FIPS:
        check_no_unicode(name)


def check_blocksize_name(name, block_size=0, digest_size=0, digest_length=None):
    for hash_object_constructor in CONSTRUCTORS[name]:
        m = hash_object_constructor(usedforsecurity=False)
        assert m.block_size == block_size
        assert m.digest_size == digest_size
        if digest_length:
            assert len(m.digest(digest_length)) == digest_length
            assert len(m.hexdigest(digest_length)) == 2 * digest_length
        else:
            assert len(m.digest()) == digest_size
            assert len(m.hexdigest()) == 2 * digest_size
        assert m.name == name
        # split for sha3_512 / _sha3.sha3 object
        assert name.split("_")[0] in repr(m).lower()


def test_blocksize_name_sha3():
    check_blocksize_name("sha3_224", 144, 28)
    check_blocksize_name("sha3_256", 136, 32)
    check_blocksize_name("sha3_384", 104, 48)
    check_blocksize_name("sha3_512", 72, 64)
    check_blocksize_name("shake_128", 168, 0, 32)
    check_blocksize_name("shake_256", 136, 0, 64)


def check_sha3(name, capacity, rate, suffix):
    for hash_object_constructor in CONSTRUCTORS[name]:
        m = hash_object_constructor()
        assert capacity + rate == 1600
        assert m._capacity_bits == capacity
        assert m._rate_bits == rate
        assert m._suffix == suffix


def test_extra_sha3():
    check_sha3("sha3_224", 448, 1152, b"\x06")
    check_sha3("sha3_256", 512, 1088, b"\x06")
    check_sha3("sha3_384", 768, 832, b"\x06")
    check_sha3("sha3_512", 1024, 576, b"\x06")
    check_sha3("shake_128", 256, 1344, b"\x1f")
    check_sha3("shake_256", 512, 1088, b"\x1f")


def test_case_sha3_224_0():
    check("sha3_224", b"", "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7")


def test_case_sha3_256_0():
    check("sha3_256", b"", "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a")


def test_case_sha3_384_0():
    check(
        "sha3_384",
        b"",
        "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2a"
        + "c3713831264adb47fb6bd1e058d5f004",
    )


def test_case_sha3_512_0():
    check(
        "sha3_512",
        b"",
        "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6"
        + "15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26",
    )


def test_case_shake_128_0():
    check(
        "shake_128",
        b"",
        "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26",
        True,
    )
    check("shake_128", b"", "7f9c", True)


def test_case_shake_256_0():
    check(
        "shake_256",
        b"",
        "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f",
        True,
    )
    check("shake_256", b"", "46b9", True)


def test_gil():
    # Check things work fine with an input larger than the size required
    # for multithreaded operation (which is hardwired to 2048).
    gil_minsize = 2048

    for cons in hash_constructors():
        m = cons(usedforsecurity=False)
        m.update(b"1")
        m.update(b"#" * gil_minsize)
        m.update(b"1")

        m = cons(b"x" * gil_minsize, usedforsecurity=False)
        m.update(b"1")

    # CPython checks SHA-256 against a known value; SHA3-256 against hashlib's.
    want = hashlib.sha3_256(b"1" + b"#" * gil_minsize + b"1").hexdigest()
    m = treehash.sha3_256()
    m.update(b"1")
    m.update(b"#" * gil_minsize)
    m.update(b"1")
    assert m.hexdigest() == want

    m = treehash.sha3_256(b"1" + b"#" * gil_minsize + b"1")
    assert m.hexdigest() == want


@pytest.mark.parametrize("make", [treehash.sha3_256, lambda: treehash.new("kt128")], ids=["sha3_256", "kt128"])
def test_threaded_hashing(make):
    # Updating the same hash object from several threads at once
    # using data chunk sizes containing the same byte sequences.
    #
    # If the internal locks are working to prevent multiple
    # updates on the same object from running at once, the resulting
    # hash will be the same as doing it single threaded upfront.
    hasher = make()
    num_threads = 5
    smallest_data = b"swineflu"
    data = smallest_data * 200000
    if hasher.name == "sha3_256":
        expected_hash = hashlib.sha3_256(data * num_threads).hexdigest()
    else:  # No hashlib for KT128: the same object fed in one update.
        expected_hash = make()
        expected_hash.update(data * num_threads)
        expected_hash = expected_hash.hexdigest()

    def hash_in_chunks(chunk_size):
        index = 0
        while index < len(data):
            hasher.update(data[index : index + chunk_size])
            index += chunk_size

    threads = []
    for threadnum in range(num_threads):
        chunk_size = len(data) // (10**threadnum)
        assert chunk_size > 0
        assert chunk_size % len(smallest_data) == 0
        thread = threading.Thread(target=hash_in_chunks, args=(chunk_size,))
        threads.append(thread)

    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert expected_hash == hasher.hexdigest()


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 10),
    reason="immutable types (Py_TPFLAGS_IMMUTABLETYPE) are CPython's from 3.10; "
    "CPython 3.9's test_hashlib has no such check",
)
def test_readonly_types():
    """The module makes its classes immutable at import (PyType_Freeze on
    3.14 on, the type's flag on 3.10 to 3.13), and they still work after."""
    for constructors in CONSTRUCTORS.values():
        for constructor in constructors:
            hash_type = type(constructor())
            try:
                hash_type.value = False
            except TypeError as e:
                assert "immutable type" in str(e)
            else:
                del hash_type.value
                raise AssertionError(f"{hash_type} is a mutable type")
    # Beyond CPython's check: every class the module exposes, its existing
    # attributes too, and deleting one.
    for cls in (treehash.Hash, treehash.Digest):
        for attribute in ("value", "copy", "__repr__"):
            with pytest.raises(TypeError, match="immutable type"):
                setattr(cls, attribute, None)
        with pytest.raises(TypeError, match="immutable type"):
            delattr(cls, "__repr__")
    # Still hash objects: made, fed, copied, finished.
    h = treehash.sha3_256(b"abc")
    c = h.copy()
    h.update(b"def")
    assert h.hexdigest() == hashlib.sha3_256(b"abcdef").hexdigest()
    assert c.digest() == hashlib.sha3_256(b"abc").digest()
    assert type(c) is treehash.Hash
    # And digests, compared and hashed by name and bytes.
    d1 = treehash.file_digest(io.BytesIO(b"abc"), "sha3_256")
    d2 = treehash.file_digest(io.BytesIO(b"abc"), "sha3_256")
    d3 = treehash.file_digest(io.BytesIO(b"abd"), "sha3_256")
    assert isinstance(d1, treehash.Digest)
    assert d1 == d2 and hash(d1) == hash(d2)
    assert d1 != d3
    assert d1.digest() == c.digest()


def test_file_digest(tmp_path):
    """KDFTests.test_file_digest, with treehash.file_digest given the name:
    it returns a treehash.Digest (a finished digest, with ``backend`` and
    ``nbytes``), not the hash object hashlib.file_digest returns, so
    ``type(d1) is type(d2)`` becomes an isinstance check."""
    data = b"a" * 65536
    d1 = treehash.sha3_256()
    path = tmp_path / "data"
    with open(path, "wb") as f:
        for _ in range(10):
            d1.update(data)
            f.write(data)

    with open(path, "rb") as f:
        d2 = treehash.file_digest(f, "sha3_256")

    assert d1.hexdigest() == d2.hexdigest()
    assert d1.name == d2.name
    assert isinstance(d2, treehash.Digest)
    assert d2.hexdigest() == hashlib.sha3_256(data * 10).hexdigest()

    with pytest.raises(ValueError):
        treehash.file_digest(None, "sha3_256")

    with pytest.raises(ValueError):
        with open(path, "r") as f:
            treehash.file_digest(f, "sha3_256")

    with pytest.raises(ValueError):
        with open(path, "wb") as f:
            treehash.file_digest(f, "sha3_256")
