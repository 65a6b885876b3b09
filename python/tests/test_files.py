"""file_digest: the same digest as new() of the file's bytes, every path
type, the I/O errors as OSError with errno and file name."""

import errno
import os
import pathlib
import threading

import pytest

import treehash
from conftest import random_bytes


def test_file_digest_equals_new_of_its_bytes(rng, tmp_path):
    for length in [0, 1, 4095, 70_000, (9 << 20) + 1]:
        data = random_bytes(rng, length)
        path = tmp_path / f"f{length}"
        path.write_bytes(data)
        for params in [{}, {"height": 0}, {"height": 3, "prefix": b"\x01" * 40}]:
            want = treehash.new(data=data, **params)
            got = treehash.file_digest(path, **params)
            assert got.digest() == want.digest(), (length, params)
            assert got.hexdigest() == want.hexdigest()
            assert (got.name, got.digest_size, got.block_size) == (
                want.name,
                want.digest_size,
                want.block_size,
            )
            assert got.backend in ("cpu", "gpu", "cpu+gpu")
            assert got.copy().digest() == got.digest()


def test_every_kind_of_path(rng, tmp_path):
    data = random_bytes(rng, 1000)
    path = tmp_path / "named"
    path.write_bytes(data)
    want = treehash.new(data=data).hexdigest()
    for name in [path, str(path), os.fsencode(path)]:
        assert treehash.file_digest(name).hexdigest() == want


def test_dash_is_a_file_named_dash(rng, tmp_path, monkeypatch):
    data = random_bytes(rng, 500)
    (tmp_path / "-").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert treehash.file_digest("-").hexdigest() == treehash.new(data=data).hexdigest()


def test_a_missing_file_is_oserror_enoent(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(OSError) as caught:
        treehash.file_digest(missing)
    assert caught.value.errno == errno.ENOENT
    assert isinstance(caught.value, FileNotFoundError)
    assert caught.value.filename == missing
    assert caught.value.strerror == "No such file or directory"
    with pytest.raises(FileNotFoundError):
        treehash.file_digest(str(missing))


def test_a_directory_is_oserror(tmp_path):
    with pytest.raises(OSError) as caught:
        treehash.file_digest(tmp_path)
    assert caught.value.errno == errno.EISDIR
    assert caught.value.filename == tmp_path


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_permission_error(tmp_path):
    path = tmp_path / "locked"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(PermissionError):
        treehash.file_digest(path)


def test_a_pipe_is_hashed_as_a_sequential_input(rng):
    data = random_bytes(rng, 300_000)
    read, write = os.pipe()

    def feed():
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        got = treehash.file_digest(pathlib.Path(f"/dev/fd/{read}"))
    finally:
        writer.join()
        os.close(read)
    assert got.hexdigest() == treehash.new(data=data).hexdigest()
