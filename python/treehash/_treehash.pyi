"""Type stubs of the extension module (re-exported by ``treehash``)."""

import os
from typing import Any, Literal, Optional, Tuple, Union

from typing_extensions import Buffer

__version__: str
#: The functions' names: ``new``'s and the others' ``algorithm``.
algorithms: Tuple[str, ...]

_Backend = Literal["auto", "cpu", "gpu"]
_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

class GpuError(RuntimeError):
    """A GPU was needed and could not be used: no CUDA driver or device, a
    start that failed, or a failure while hashing."""

class Hash:
    """A tree hash being computed, with hashlib's interface (made by
    :func:`new`). Safe to share between threads."""

    @property
    def name(self) -> str:
        """The tree's label, as ``treehash --tag`` writes it:
        ``SHA3-256-LI(H=8,D=4,B=136)``."""
    @property
    def digest_size(self) -> int:
        """The digest's length in bytes."""
    @property
    def block_size(self) -> int:
        """The leaf block size B in bytes (the rate by default)."""
    def update(self, data: Buffer, /) -> None:
        """Appends the bytes of ``data`` (any contiguous buffer), read
        without a copy; the GIL is released while a large update runs."""
    def digest(self) -> bytes:
        """The digest of the bytes given so far; more updates may follow."""
    def hexdigest(self) -> str:
        """:meth:`digest` as lower-case hexadecimal."""
    def copy(self) -> "Hash":
        """A copy of this object, which goes on apart from it."""

class Digest:
    """A finished digest (made by :func:`file_digest` and
    :func:`device_digest`)."""

    @property
    def name(self) -> str:
        """The tree's label, as ``treehash --tag`` writes it."""
    @property
    def digest_size(self) -> int:
        """The digest's length in bytes."""
    @property
    def block_size(self) -> int:
        """The leaf block size B in bytes."""
    @property
    def backend(self) -> Literal["cpu", "gpu", "cpu+gpu"]:
        """Where it was computed."""
    @property
    def nbytes(self) -> int:
        """Bytes of input hashed (the prefix not counted)."""
    def digest(self) -> bytes:
        """The digest."""
    def hexdigest(self) -> str:
        """:meth:`digest` as lower-case hexadecimal."""
    def copy(self) -> "Digest":
        """The same digest."""

def new(
    algorithm: str = "sha3-256",
    data: Optional[Buffer] = None,
    *,
    height: int = 8,
    degree: int = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[Any] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
) -> Hash:
    """A new hash object on the CPU's cores, fed ``data`` if given.
    ``backend="gpu"`` is refused (``ValueError``): use :func:`file_digest`
    or :func:`device_digest` for a GPU."""

def file_digest(
    path: _Path,
    *,
    algorithm: str = "sha3-256",
    height: int = 8,
    degree: int = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[Any] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
) -> Digest:
    """The digest of the file at ``path`` by the command line's fast path.
    Raises ``OSError`` (with ``errno`` and ``filename``) when it cannot be
    read, ``RuntimeError`` when it changes while hashed, ``GpuError`` when
    ``backend="gpu"`` and no GPU works. ``"-"`` is the file named ``-``."""

def device_digest(
    obj: Any,
    *,
    algorithm: str = "sha3-256",
    height: int = 8,
    degree: int = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[Any] = None,
    backend: Literal["auto", "gpu"] = "auto",
    threads: Optional[int] = None,
) -> Digest:
    """The digest of an object in GPU memory (``__dlpack__`` on a CUDA
    device, or ``__cuda_array_interface__``), computed on that GPU with no
    copy to the host; its bytes must be contiguous. Equal to the digest of
    the same bytes hashed from the host."""
