"""Type stubs of the extension module (re-exported by ``treehash``).

The defaults shown are the command line's. ``height``, ``degree``,
``block_size``, ``prefix``, ``customization`` and ``domain`` are each for
some functions only: given to another (even as its default value), one
raises ``ValueError`` with the command line's words; ``None`` is the same
as not giving it.
"""

import os
from typing import Any, BinaryIO, Iterable, Literal, Optional, Tuple, Union

from typing_extensions import Buffer

__version__: str
#: The functions' names, ``algorithm``'s values: the LI trees of
#: ``sha3-224``, ``sha3-256``, ``sha3-384``, ``sha3-512``, ``shake128``,
#: ``shake256``, then ``kt128``, ``kt256``, ``parallelhash128``,
#: ``parallelhash256``, ``turboshake128``, ``turboshake256``. Read in any
#: case (``"KT128"``, ``"ParallelHash256"``). ``algorithm`` also takes
#: hashlib's names of the FIPS 202 functions (``sha3_256``, ``shake_128``:
#: plain, H = 0) and a hash object's ``name``, whose parameters it
#: rebuilds (the keywords given must agree with them).
algorithms: Tuple[str, ...]

_Backend = Literal["auto", "cpu", "gpu"]
_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: KT's C or ParallelHash's S: a str (hashed as UTF-8) or bytes.
_Customization = Union[str, Buffer]

class GpuError(RuntimeError):
    """A GPU was needed and could not be used: no CUDA driver or device, a
    start that failed, or a failure while hashing."""

class Hash:
    """A digest being computed, with hashlib's interface (made by
    :func:`new`). Safe to share between threads."""

    @property
    def name(self) -> str:
        """The name :func:`new` rebuilds this function and its parameters
        from: hashlib's name at H = 0 without a prefix (``sha3_256``,
        ``shake_128``), else the label ``treehash --tag`` writes
        (``SHA3-256-LI(H=8,D=4,B=136)``, ``...,P)`` when keyed, which asks
        :func:`new` for its ``prefix``; ``KT128``, ``KT128(C=6162)``,
        ``ParallelHash256(B=8192)``, ``TurboSHAKE128(D=1F)``). Neither the
        prefix nor the output length is in a name."""
    @property
    def label(self) -> str:
        """The label ``treehash --tag`` writes, which check lines carry:
        ``SHA3-256`` at H = 0 (where :attr:`name` is hashlib's
        ``sha3_256``), else the same as :attr:`name`."""
    @property
    def digest_size(self) -> int:
        """The digest's length in bytes (what :meth:`digest` gives with no
        argument); 0 for hashlib's ``shake_128`` and ``shake_256`` (H = 0,
        no prefix), as hashlib has it."""
    @property
    def block_size(self) -> int:
        """The ``block_size`` parameter where the function takes one: an LI
        tree's leaf block size B (the rate by default, hashlib's
        ``block_size`` for SHA-3), ParallelHash's B. Else the sponge's rate:
        168 for KT128 and TurboSHAKE128, 136 for KT256 and TurboSHAKE256
        (hashlib's for SHAKE128 and SHAKE256)."""
    def update(self, data: Buffer, /) -> None:
        """Appends the bytes of ``data`` (any contiguous buffer), read
        without a copy; the GIL is released while a large update runs."""
    def digest(self, length: Optional[int] = None) -> bytes:
        """The digest of the bytes given so far; more updates may follow.
        ``length`` where the output length is free, as hashlib's SHAKE
        takes it (``TypeError`` for SHA3-224 ... SHA3-512 and their trees);
        with none, the ``length`` the object was made with. 0 to 65536
        bytes. For SHAKE (and its trees), KT and TurboSHAKE, a shorter
        digest is the start of a longer one, and any length up to the
        object's ``length`` or the sponge's rate (168 or 136), whichever is
        more, is read from the digest kept until the next update; a longer
        one, and ParallelHash's other lengths (it hashes its length with
        the input), cost a digest of their own."""
    def hexdigest(self, length: Optional[int] = None) -> str:
        """:meth:`digest` as lower-case hexadecimal."""
    def copy(self) -> "Hash":
        """A copy of this object, which goes on apart from it."""

class Digest:
    """A finished digest (made by :func:`file_digest`,
    :func:`device_digest` and :func:`join_parts`); it pickles, hashes, and
    compares equal to another of the same ``name`` and bytes (in constant
    time), wherever each was computed."""

    @property
    def name(self) -> str:
        """As :attr:`Hash.name`: hashlib's name at H = 0 without a prefix,
        else the label ``treehash --tag`` writes."""
    @property
    def label(self) -> str:
        """As :attr:`Hash.label`: the label ``treehash --tag`` writes."""
    @property
    def digest_size(self) -> int:
        """The digest's length in bytes (for SHAKE too: a finished digest
        has one length)."""
    @property
    def block_size(self) -> int:
        """As :attr:`Hash.block_size`: LI's or ParallelHash's B, else the
        sponge's rate."""
    @property
    def backend(self) -> Literal["cpu", "gpu", "cpu+gpu"]:
        """Where it was computed."""
    @property
    def nbytes(self) -> int:
        """Bytes of input hashed (the prefix not counted)."""
    def digest(self, length: Optional[int] = None) -> bytes:
        """The digest; ``length`` bytes of it where the output length is
        free: its start for SHAKE, KT and TurboSHAKE, the whole for
        ParallelHash."""
    def hexdigest(self, length: Optional[int] = None) -> str:
        """:meth:`digest` as lower-case hexadecimal."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def copy(self) -> "Digest":
        """The same digest."""

def new(
    algorithm: str = "sha3-256",
    data: Optional[Buffer] = None,
    *,
    height: Optional[int] = 8,
    degree: Optional[int] = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[_Customization] = None,
    domain: Optional[int] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
    usedforsecurity: bool = True,
) -> Hash:
    """A new hash object on the CPU's cores, fed ``data`` if given.
    ``algorithm``: a name of :data:`algorithms`, hashlib's name of a FIPS
    202 function (H = 0), or a hash object's ``name``. ``usedforsecurity``
    is taken as hashlib takes it and changes nothing.

    ``height`` (8) and ``degree`` (4): an LI tree's shape. ``block_size``:
    LI's B (a multiple of 8; the rate by default) or ParallelHash's B (1 to
    2^24; 8192). ``length``: the output length of SHAKE and the standard
    functions (1 to 65536; 32 for the 128-bit functions, 64 for the
    256-bit ones). ``prefix``: an LI tree's key or salt (1 to 255 bytes).
    ``customization``: KT's C or ParallelHash's S (at most 256 KiB).
    ``domain``: TurboSHAKE's D (0x01 to 0x7F; 0x1F). ``threads``: CPU
    worker threads (1 to 1024; one per CPU by default, and at most one per CPU
    is started). ``backend="gpu"`` is
    refused (``ValueError``): use :func:`file_digest` or
    :func:`device_digest` for a GPU."""

def file_digest(
    path: Union[_Path, BinaryIO],
    algorithm: str = "sha3-256",
    *,
    height: Optional[int] = 8,
    degree: Optional[int] = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[_Customization] = None,
    domain: Optional[int] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
) -> Digest:
    """The digest of the file at ``path`` by the command line's fast path,
    with :func:`new`'s parameters. Raises ``OSError`` (with ``errno`` and
    ``filename``) when it cannot be read, ``RuntimeError`` when it changes
    while hashed, ``GpuError`` when ``backend="gpu"`` and no GPU works.
    ``"-"`` is the file named ``-``. A file truncated while a mapped window
    of it is being hashed ends the process with SIGBUS unless
    :func:`handle_truncation` was called. ``path`` may also be a file
    object open for binary reading, read as ``hashlib.file_digest`` reads
    it (an ``io.BytesIO``'s whole buffer, else ``readinto`` from where it
    stands) and hashed on the CPU's cores; anything else raises
    ``ValueError``, as hashlib's does."""

def device_digest(
    obj: Any,
    *,
    algorithm: str = "sha3-256",
    height: Optional[int] = 8,
    degree: Optional[int] = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[_Customization] = None,
    domain: Optional[int] = None,
    backend: Literal["auto", "gpu"] = "auto",
    threads: Optional[int] = None,
) -> Digest:
    """The digest of an object in GPU memory (``__dlpack__`` on a CUDA
    device, or ``__cuda_array_interface__``), computed on that GPU with no
    copy to the host; its bytes must be contiguous. Equal to the digest of
    the same bytes hashed from the host. KT and ParallelHash hash their
    chunks on the GPU in place; TurboSHAKE, one sponge, is copied to the
    host in pieces and hashed there."""

def hash_part(
    path: _Path,
    index: int,
    count: int,
    *,
    algorithm: str = "sha3-256",
    height: Optional[int] = 8,
    degree: Optional[int] = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[_Customization] = None,
    domain: Optional[int] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
) -> bytes:
    """Part ``index`` of ``count`` (0 <= index < count) of the file at
    ``path``: the outputs of the leaves that part owns, read from its runs
    of the file alone (an LI tree: a few hundred bytes), or for KT128,
    KT256, ParallelHash128 and ParallelHash256 the chaining values of the
    chunks it owns, one range of the file; in the part format of
    docs/SPEC.md (the bytes ``treehash part`` writes). :func:`join_parts`
    of every index makes :func:`file_digest`'s digest. The parameters are
    :func:`file_digest`'s, for every function with a tree (TurboSHAKE, one
    sponge, raises ``ValueError``, as a bad ``index`` or ``count`` does); a
    standard function's part stays on the CPU under ``backend="auto"``.
    Raises ``OSError`` when the file cannot be read, ``RuntimeError`` when
    it changes while hashed. The GIL is released meanwhile."""

def join_parts(parts: Iterable[Buffer], /, *, any_name: bool = False) -> Digest:
    """The digest of the file whose parts are ``parts`` (in any order),
    equal to :func:`file_digest`'s with their parameters; ``name`` is their
    label (``,P`` when keyed), ``backend`` ``"cpu"`` (the join's),
    ``nbytes`` the file's size. A set that is not whole (a part missing or
    given twice, parts of another file, size or modification time, of
    another function, other parameters or another prefix, a corrupt part)
    raises ``ValueError`` naming the part (``parts[K] (part I of N)``) and
    the problem. The parts' file names must agree in their last component
    (``big.img``, ``/lustre/x/big.img``); ``any_name=True`` compares none,
    for parts made from copies under other names."""

def _check_split(
    count: int,
    *,
    algorithm: str = "sha3-256",
    height: Optional[int] = 8,
    degree: Optional[int] = 4,
    block_size: Optional[int] = None,
    length: Optional[int] = None,
    prefix: Optional[Buffer] = None,
    customization: Optional[_Customization] = None,
    domain: Optional[int] = None,
    backend: _Backend = "auto",
    threads: Optional[int] = None,
) -> Optional[str]:
    """Checks a split's parameters as :func:`hash_part` does; the warning
    for an LI tree's runs under 1 MiB per stripe, or ``None``."""

def handle_truncation() -> None:
    """Installs a SIGBUS handler (once; later calls do nothing) so that a
    file cut short while :func:`file_digest` hashes a mapped window of it
    raises ``RuntimeError`` ("the file changed while it was being hashed",
    naming the file; ``OSError`` with EIO where its storage failed and its
    size held), never a digest, instead of ending the process as a mapped
    file otherwise does. Any other SIGBUS goes to
    the handler in place when this was called: the default action ends the
    process; a function is called; "ignore" holds for a signal sent with
    kill, not for a fault. Only windows treehash maps are recovered, not a
    buffer given to :meth:`Hash.update`. Call it after
    ``faulthandler.enable()`` (pytest calls that), whose handler, set later,
    would replace this one. Raises ``OSError`` if sigaction(2) fails."""
