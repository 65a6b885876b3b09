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
  ``hexdigest``, ``copy``) that hashes on every CPU core.
- :func:`file_digest` hashes a file by the command line's fast path (the
  GPUs joining under ``backend="auto"`` when the file repays them).
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

>>> import treehash
>>> treehash.new("sha3-256", b"abc", height=0).hexdigest()[:16]
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

#: The names :func:`new` takes, as hashlib's sets of the same names: every
#: function is built in, so the two are the same.
algorithms_guaranteed = frozenset(algorithms)
algorithms_available = algorithms_guaranteed

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
]
