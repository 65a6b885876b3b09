"""SHA-3 tree-mode (LI) digests with hashlib's interface.

The input is cut into blocks dealt round-robin onto the leaves of a tree of
height H and degree D; every leaf is hashed, then the parent levels up to
the root (docs/SPEC.md in treehash's source). At H = 0 the digest is plain
SHA3-256, SHA3-512, SHAKE128 ... of the input.

- :func:`new` makes a hashlib-style object (``update``, ``digest``,
  ``hexdigest``, ``copy``) that hashes on every CPU core.
- :func:`file_digest` hashes a file by the command line's fast path (the
  GPUs joining under ``backend="auto"`` when the file repays them).
- :func:`device_digest` hashes an object already in GPU memory (CuPy,
  PyTorch, Numba: DLPack or ``__cuda_array_interface__``) where it lies.

Every function takes the command line's parameters, with its defaults:
``algorithm`` (one of :data:`algorithms`), ``height`` (8), ``degree`` (4),
``block_size``, ``length`` (SHAKE), ``prefix`` (a key or salt),
``backend`` (``"auto"``, ``"cpu"`` or ``"gpu"``) and ``threads``.

>>> import treehash
>>> treehash.new("sha3-256", b"abc", height=0).hexdigest()[:16]
'3a985da74fe225b2'
"""

from ._treehash import (
    Digest,
    GpuError,
    Hash,
    __version__,
    algorithms,
    device_digest,
    file_digest,
    new,
)

__all__ = [
    "Digest",
    "GpuError",
    "Hash",
    "__version__",
    "algorithms",
    "device_digest",
    "file_digest",
    "new",
]
