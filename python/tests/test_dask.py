"""treehash.dask.file_digest on a LocalCluster of three worker processes on
the loopback interface: the digest of treehash.file_digest for every
parameter set and part count; the same when a worker is killed while it
holds a part; a file that differs between workers refused, naming the
part; clear errors without a client and for bad parameters."""

import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

import treehash
from conftest import random_bytes

distributed = pytest.importorskip(
    "distributed", reason="dask[distributed] is not installed (CI installs it)"
)
import cloudpickle  # noqa: E402  (distributed's dependency)

import treehash.dask  # noqa: E402
from treehash.dask import ShortRunsWarning  # noqa: E402

WORKERS = 3

pytestmark = [
    # Small trees split three ways read short runs: expected here, and
    # test_short_runs_warn checks the warning.
    pytest.mark.filterwarnings("ignore::treehash.dask.ShortRunsWarning"),
    # A second cluster's scheduler serves its HTTP endpoints on another port.
    pytest.mark.filterwarnings("ignore:Port 8787 is already in use"),
]

# The worker plugins below travel to the workers by value: the workers need
# not import this module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as client:
        client.wait_for_workers(WORKERS, timeout=60)
        yield client


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    """Three stripes of the default tree and a bit (26.7 MB)."""
    import random

    path = tmp_path_factory.mktemp("dask") / "data"
    path.write_bytes(random_bytes(random.Random("dask"), 3 * 8_912_896 + 1001))
    return path


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"height": 0},
        {"height": 3, "degree": 2, "prefix": b"\x05" * 40},
        {"algorithm": "shake128", "height": 5, "length": 77, "block_size": 1024},
        {"algorithm": "kt128", "customization": "C"},
    ],
)
def test_the_same_digest_as_one_process(client, data_file, params):
    want = treehash.file_digest(data_file, **params)
    # One per worker (the default), fewer, more, and more than the 8 leaves
    # of H = 3, D = 2 or the one of H = 0.
    for parts in [None, 1, 2, 11]:
        got = treehash.dask.file_digest(data_file, client=client, parts=parts, **params)
        assert type(got) is treehash.Digest
        assert got.hexdigest() == want.hexdigest(), (parts, params)
        assert (got.name, got.digest_size, got.block_size, got.nbytes) == (
            want.name,
            want.digest_size,
            want.block_size,
            want.nbytes,
        )


def test_the_default_client_and_an_empty_file(client, tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    got = treehash.dask.file_digest(empty, height=2)
    assert got.hexdigest() == treehash.file_digest(empty, height=2).hexdigest()


def test_a_relative_path_is_the_clients(client, data_file, monkeypatch):
    monkeypatch.chdir(data_file.parent)
    got = treehash.dask.file_digest("data", client=client, threads=2)
    assert got.hexdigest() == treehash.file_digest(data_file).hexdigest()


def test_short_runs_warn(client, data_file):
    # 16 parts of the default tree's 65,536 leaves: runs of 4,096 × 136 bytes.
    with pytest.warns(ShortRunsWarning, match="16 parts read runs of 557056 bytes per stripe"):
        got = treehash.dask.file_digest(data_file, client=client, parts=16)
    assert got.hexdigest() == treehash.file_digest(data_file).hexdigest()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        treehash.dask.file_digest(data_file, client=client, parts=8)


class KillOnFirstTry(distributed.WorkerPlugin):
    """Ends the worker process that starts part `index` of a split, the
    first time any worker does (the marker file tells), as a crash would:
    the part is lost with the worker, and the scheduler runs it again."""

    def __init__(self, marker, index):
        self.marker = marker
        self.index = index

    def transition(self, key, start, finish, **kwargs):
        is_part = isinstance(key, tuple) and str(key[0]).startswith("treehash-part-")
        if not (finish == "executing" and is_part and key[1] == self.index):
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return  # the part's second try
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(1)


def test_a_worker_killed_while_it_holds_a_part(client, data_file, tmp_path):
    marker = tmp_path / "killed"
    client.register_plugin(KillOnFirstTry(str(marker), index=1), name="kill-on-first-try")
    try:
        got = treehash.dask.file_digest(data_file, client=client, height=4)
    finally:
        client.unregister_worker_plugin("kill-on-first-try")
    assert got.hexdigest() == treehash.file_digest(data_file, height=4).hexdigest()
    # A worker did die while it held part 1: its process is gone.
    pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


class OwnCopy(distributed.WorkerPlugin):
    """Gives each worker its own copy of a file, at /proc/self/cwd/data:
    the same bytes with another modification time, or more bytes."""

    def __init__(self, directory, data, differ):
        self.directory = directory
        self.data = data
        self.differ = differ

    def setup(self, worker):
        number = int(worker.name)  # a LocalCluster's workers are named 0, 1, 2
        own = os.path.join(self.directory, str(number))
        os.makedirs(own)
        path = os.path.join(own, "data")
        with open(path, "wb") as f:
            f.write(self.data + bytes(number if self.differ == "size" else 0))
        mtime_s = 1_700_000_000 + (number if self.differ == "mtime" else 0)
        os.utime(path, ns=(0, mtime_s * 1_000_000_000))
        self.cwd = os.getcwd()
        os.chdir(own)

    def teardown(self, worker):
        os.chdir(self.cwd)


@pytest.mark.parametrize(
    "differ, field", [("mtime", "its modification time"), ("size", "its file size")]
)
def test_a_file_that_differs_between_workers_is_refused(client, tmp_path, differ, field):
    client.register_plugin(OwnCopy(str(tmp_path), b"same" * 1000, differ), name="own-copy")
    try:
        # One part per worker: each reads its own copy.
        with pytest.raises(ValueError) as caught:
            treehash.dask.file_digest("/proc/self/cwd/data", client=client, height=2)
    finally:
        client.unregister_worker_plugin("own-copy")
    message = str(caught.value)
    assert message.startswith("/proc/self/cwd/data: the workers' parts do not join")
    assert f"(part 1 of {WORKERS}): {field} (" in message or f"(part 2 of {WORKERS}): {field} (" in message
    assert "differs from parts[0]'s" in message


def test_a_missing_file_is_the_workers_oserror(client, tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as caught:
        treehash.dask.file_digest(missing, client=client)
    assert caught.value.filename == str(missing)
    assert caught.value.strerror.startswith("No such file or directory (on worker tcp://127.0.0.1:")


def test_bad_arguments_are_refused_before_any_task(client, data_file):
    for params, error, message in [
        ({"algorithm": "turboshake256"}, ValueError, "turboshake256 is one sponge"),
        ({"height": -1}, ValueError, "height -1 is negative"),
        ({"parts": 0}, ValueError, "parts 0 is out of range"),
        ({"parts": 2.0}, TypeError, "parts must be an int, not float"),
        ({"colour": "red"}, TypeError, "colour"),
    ]:
        with pytest.raises(error, match=message):
            treehash.dask.file_digest(data_file, client=client, **params)


def test_no_client_is_a_clear_error(cluster, data_file):
    # The module's cluster, but no client.
    with pytest.raises(ValueError, match="needs a Dask client: start one"):
        treehash.dask.file_digest(data_file)


def test_a_cluster_without_workers_yet(data_file):
    with distributed.LocalCluster(
        n_workers=0, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as empty, distributed.Client(empty) as client:
        with pytest.raises(ValueError, match="the Dask cluster has no workers yet"):
            treehash.dask.file_digest(data_file, client=client)
        # With parts given, they wait for a worker.
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(treehash.dask.file_digest, data_file, client=client, parts=2)
            empty.scale(1)
            got = pending.result(timeout=60)
    assert got.hexdigest() == treehash.file_digest(data_file).hexdigest()
