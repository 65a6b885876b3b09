"""One file hashed by a Dask cluster: part I of N on a worker each, joined
into the digest that :func:`treehash.file_digest` gives (docs/DASK.md).

>>> from distributed import Client                     # doctest: +SKIP
>>> import treehash.dask
>>> client = Client("tcp://scheduler:8786")            # doctest: +SKIP
>>> treehash.dask.file_digest("/shared/big.img", height=10).hexdigest()  # doctest: +SKIP

Every worker needs treehash and ``dask[distributed]``, and the file at the
same path (a shared or parallel file system). Each part is a task that runs
:func:`treehash.hash_part` on the worker it is given to, reading only that
part's bytes of the file; the join is a task that depends on every part,
so it runs on a worker, where the parts (a few hundred bytes each for an LI
tree; 1/256 of the file for KT128) are sent, and only the digest comes back.
A worker lost while it holds a part is replaced by the scheduler, which runs the part again elsewhere (up to
``distributed.scheduler.allowed-failures`` times, 3 by default); the digest
does not change. A part that raises (a file that cannot be read, or that
changes while it is read) is not retried: its exception reaches the caller.
"""

import os
import uuid
import warnings
from typing import Any, Optional, Union

try:
    import distributed
except ImportError as error:  # the package itself does not need Dask
    raise ImportError(
        "treehash.dask needs Dask's distributed scheduler: pip install 'dask[distributed]'"
    ) from error

import treehash
from treehash._treehash import _check_split

__all__ = ["ShortRunsWarning", "file_digest"]


class ShortRunsWarning(UserWarning):
    """The parts of a split read runs shorter than 1 MiB of each stripe,
    which a parallel file system serves slowly (docs/SPEC.md, "The split")."""


def file_digest(
    path: Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"],
    client: Optional["distributed.Client"] = None,
    parts: Optional[int] = None,
    **params: Any,
) -> treehash.Digest:
    """The digest of the file at ``path``, hashed by the workers of a Dask
    cluster: the same :class:`treehash.Digest` as
    :func:`treehash.file_digest` with the same ``params`` (its keywords:
    ``algorithm``, ``height``, ``degree``, ``block_size``, ``length``,
    ``prefix``, ``customization``, ``backend``, ``threads``), for every
    function with a tree: the LI trees, KT128, KT256, ParallelHash128 and
    ParallelHash256 (TurboSHAKE, one sponge, raises ``ValueError``).
    ``backend`` of the result is ``"cpu"``, where the join ran; ``nbytes``
    the file's size.

    ``client``: a ``distributed.Client``; by default the current one
    (``distributed.get_client()``). ``parts``: how many parts the file is
    split into; by default one per worker, and part I goes to worker
    I mod W (in the order of their addresses), falling back to any worker
    if that one is gone. Each part hashes with ``threads`` threads, by
    default as many as the worker that runs it has (its ``nthreads``).

    ``path`` must name the same file on every worker; a relative path is
    made absolute here, on the client. Parts record the file's size and
    modification time, and a file that differs between workers raises
    ``ValueError`` naming the part; a file that cannot be read raises the
    worker's ``OSError``, one that changes while read ``RuntimeError``
    (their messages name the worker).
    Bad parameters raise ``ValueError`` here, before any task is sent. A
    split whose runs per stripe are shorter than 1 MiB warns
    (:class:`ShortRunsWarning`), naming a part count, height or block size
    that avoids it.
    """
    client = _default_client(client)
    path = os.path.abspath(os.fspath(path))
    addresses = sorted(client.nthreads())
    count = _part_count(parts, addresses)
    warning = _check_split(count, **params)
    if warning is not None:
        warnings.warn(f"{os.fsdecode(path)}: {warning}", ShortRunsWarning, stacklevel=2)
    token = uuid.uuid4().hex

    def placed(index):
        # Where there are no workers yet, the parts wait for the first.
        if not addresses:
            return {}
        return {"workers": [addresses[index % len(addresses)]], "allow_other_workers": True}

    futures = [
        client.submit(
            _hash_part,
            path,
            index,
            count,
            params,
            key=(f"treehash-part-{token}", index),
            **placed(index),
        )
        for index in range(count)
    ]
    joined = client.submit(_join_parts, path, futures, key=f"treehash-join-{token}")
    try:
        return joined.result()
    except BaseException:
        # Parts still queued or running are of no use now.
        client.cancel(futures)
        raise


def _default_client(client):
    """``client``, or the current default client."""
    if client is not None:
        return client
    try:
        return distributed.get_client()
    except ValueError:
        raise ValueError(
            "treehash.dask.file_digest needs a Dask client: start one "
            "(distributed.Client(...) or a LocalCluster) or pass client="
        ) from None


def _part_count(parts, addresses):
    """``parts``, checked, or one part per worker."""
    if parts is None:
        if not addresses:
            raise ValueError(
                "the Dask cluster has no workers yet: wait for them "
                "(client.wait_for_workers(n)) or give parts="
            )
        return len(addresses)
    if isinstance(parts, bool) or not isinstance(parts, int):
        raise TypeError(f"parts must be an int, not {type(parts).__name__}")
    if parts < 1:
        raise ValueError(f"parts {parts} is out of range (1 or more)")
    return parts


def _hash_part(path, index, count, params):
    """A part's task: on a worker, with its threads unless told. An error
    names the worker (the host that lacks the file, or whose GPU failed),
    keeping its type, errno and file name."""
    worker = distributed.get_worker()
    if params.get("threads") is None:
        params = {**params, "threads": worker.state.nthreads}
    try:
        return treehash.hash_part(path, index, count, **params)
    except OSError as error:
        where = f"{error.strerror} (on worker {worker.address})"
        raise type(error)(error.errno, where, error.filename) from None
    except RuntimeError as error:
        raise type(error)(f"{error} (on worker {worker.address})") from None


def _join_parts(path, parts):
    """The join's task: on a worker, where the parts are sent."""
    try:
        return treehash.join_parts(parts)
    except ValueError as error:
        raise ValueError(
            f"{os.fsdecode(path)}: the workers' parts do not join (the file differs between "
            f"workers, or changed between parts): {error}"
        ) from None
