"""SHA-3 tree-mode (LI) digests, KangarooTwelve, ParallelHash and
TurboSHAKE, with hashlib's interface.

The LI trees (``sha3-224`` ... ``shake256``): the input is cut into blocks
dealt round-robin onto the leaves of a tree of height H and degree D; every
leaf is hashed, then the parent levels up to the root (docs/SPEC.md in
treehash's source). At H = 0 the digest is plain SHA3-256, SHA3-512,
SHAKE128 ... of the input. The standard functions, whose trees their
documents fix: ``kt128`` and ``kt256`` (KangarooTwelve, RFC 9861),
``parallelhash128`` and ``parallelhash256`` (NIST SP 800-185),
``turboshake128`` and ``turboshake256`` (RFC 9861).

- :func:`new` makes a hashlib-style object (``update``, ``digest``,
  ``hexdigest``, ``copy``) that hashes on every CPU core. It takes
  hashlib's names too (``new("sha3_256")``, ``new("shake_128")``: plain
  FIPS 202, H = 0), as do :func:`sha3_224` ... :func:`shake_256`, named as
  hashlib's constructors; and a hash object's ``name``, which rebuilds its
  function and parameters.
- :func:`file_digest` hashes a file by the command line's fast path (the
  GPUs joining under ``backend="auto"`` when the file repays them), or a
  binary file object as ``hashlib.file_digest`` reads it.
- :func:`device_digest` hashes an object already in GPU memory (CuPy,
  PyTorch, Numba: DLPack or ``__cuda_array_interface__``) where it lies.
- :func:`hash_part` hashes part I of N of a file (the bytes of
  ``treehash part``), anywhere the file can be read; :func:`join_parts`
  makes the file's digest from a whole set. ``treehash.dask`` (with
  ``dask[distributed]`` installed) spreads the parts over a Dask cluster.
- :func:`handle_truncation` installs a SIGBUS handler (opt-in), so that a
  file cut short while :func:`file_digest` hashes it raises
  ``RuntimeError`` instead of ending the process, as a mapped file
  otherwise does.

Every function takes the command line's parameters, with its names and
defaults: ``algorithm`` (one of :data:`algorithms`), ``height`` (8) and
``degree`` (4) of an LI tree, ``block_size`` (LI's B, the rate by default;
ParallelHash's B, 8192 by default), ``length`` (the output length of SHAKE
and the standard functions), ``prefix`` (an LI tree's key or salt),
``customization`` (KT's C or ParallelHash's S: str, as UTF-8, or bytes),
``domain`` (TurboSHAKE's D, 0x01 to 0x7F, 0x1F by default), ``backend``
(``"auto"``, ``"cpu"`` or ``"gpu"``) and ``threads`` (1 to 1024, one per
core by default). An option the function does not take raises
``ValueError`` with the command line's words.

A hash object's ``name`` is hashlib's name at H = 0 without a prefix
(``sha3_256``, ``shake_128``), else the label ``treehash --tag`` writes
(``SHA3-256-LI(H=8,D=4,B=136)``, ``KT128(C=6162)``); ``new(h.name)``
rebuilds ``h``'s function and parameters (a keyed name, ``...,P)``, asks for
its ``prefix=``). ``digest(length)`` and ``hexdigest(length)`` take a
length where the output length is free, as hashlib's SHAKE does.

>>> import treehash
>>> treehash.new("sha3-256", b"abc", height=0).hexdigest()[:16]
'3a985da74fe225b2'
>>> treehash.sha3_256(b"abc").hexdigest()[:16]
'3a985da74fe225b2'
>>> treehash.new("kt128").hexdigest()[:16]
'1ac2d450fc3b4205'
"""

from ._treehash import (
    Digest,
    GpuError,
    Hash,
    __version__,
    algorithms,
    device_digest,
    file_digest,
    handle_truncation,
    hash_part,
    join_parts,
    new,
)

#: hashlib's names of the six FIPS 202 functions, which :func:`new` takes
#: for plain SHA-3 and SHAKE (H = 0).
_HASHLIB_NAMES = ("sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256")

#: The names :func:`new` takes, as hashlib's sets of the same names:
#: :data:`algorithms` and hashlib's names of the FIPS 202 functions. Every
#: function is built in, so the two are the same.
algorithms_guaranteed = frozenset(algorithms + _HASHLIB_NAMES)
algorithms_available = algorithms_guaranteed


def _constructor(name, fips):
    def construct(data=b"", *, usedforsecurity=True, **options):
        return new(name, data, usedforsecurity=usedforsecurity, **options)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (
        f"A hash object of plain {fips} (H = 0), as ``hashlib.{name}`` makes one, fed "
        f"``data``; ``new({name!r}, data, ...)``, whose keywords it takes."
    )
    return construct


sha3_224 = _constructor("sha3_224", "SHA3-224")
sha3_256 = _constructor("sha3_256", "SHA3-256")
sha3_384 = _constructor("sha3_384", "SHA3-384")
sha3_512 = _constructor("sha3_512", "SHA3-512")
shake_128 = _constructor("shake_128", "SHAKE128")
shake_256 = _constructor("shake_256", "SHAKE256")
del _constructor

__all__ = [
    "Digest",
    "GpuError",
    "Hash",
    "__version__",
    "algorithms",
    "algorithms_available",
    "algorithms_guaranteed",
    "device_digest",
    "file_digest",
    "handle_truncation",
    "hash_part",
    "join_parts",
    "new",
    "sha3_224",
    "sha3_256",
    "sha3_384",
    "sha3_512",
    "shake_128",
    "shake_256",
]
