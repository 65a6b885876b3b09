"""Bad parameters raise ValueError with the command line's words; the
wrong kind of argument TypeError."""

import pytest

import treehash


@pytest.mark.parametrize(
    "params, message",
    [
        ({"algorithm": "md5"}, "unknown algorithm 'md5' (expected sha3-224, sha3-256"),
        ({"degree": 1}, "degree 1 is out of range (2 to 2^24)"),
        ({"degree": -3}, "degree -3 is negative"),
        ({"height": -1}, "height -1 is negative"),
        ({"height": 13}, "degree 4 and height 13 give more than 2^24 leaves"),
        ({"block_size": 100}, "block size 100 is out of range (a multiple of 8 from 8 to 2^24)"),
        ({"block_size": 0}, "block size 0 is out of range"),
        ({"length": 20}, "output length 20 is out of range for sha3-256 (always 32 bytes)"),
        (
            {"algorithm": "shake128", "length": 0},
            "output length 0 is out of range for shake128 (1 to 65536 bytes)",
        ),
        ({"prefix": b""}, "the prefix is empty; a key or salt needs at least one byte"),
        ({"prefix": bytes(256)}, "prefix of 256 bytes is too long (at most 255)"),
        ({"customization": b"app"}, "customization is for the standard functions (kt128,"),
        ({"algorithm": "shake256", "customization": b""}, "standard functions (kt128, kt256, "),
        ({"domain": 0x1F}, "domain is for the standard functions"),
        ({"backend": "tpu"}, "unknown backend 'tpu' (expected auto, cpu or gpu)"),
        ({"threads": 0}, "threads 0 is out of range (1 to 1024)"),
        ({"threads": 1025}, "threads 1025 is out of range (1 to 1024)"),
        ({"threads": -4}, "threads -4 is out of range (1 to 1024)"),
    ],
)
def test_bad_parameters_are_value_errors(tmp_path, params, message):
    path = tmp_path / "x"
    path.write_bytes(b"x")
    for call in (
        lambda: treehash.new(**params),
        lambda: treehash.file_digest(path, **params),
        lambda: treehash.device_digest(object(), **params),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert message in str(caught.value)


def test_threads_are_bounded_as_on_the_command_line_everywhere(tmp_path):
    path = tmp_path / "x"
    path.write_bytes(b"x")
    for threads in (0, 1025, 1 << 40):
        for call in (
            lambda: treehash.new(threads=threads),
            lambda: treehash.file_digest(path, threads=threads),
            lambda: treehash.device_digest(object(), threads=threads),
            lambda: treehash.hash_part(path, 0, 1, threads=threads),
            lambda: treehash._treehash._check_split(1, threads=threads),
        ):
            with pytest.raises(ValueError, match=f"threads {threads} is out of range \\(1 to 1024\\)"):
                call()
    for threads in (1, 1024):
        assert treehash.file_digest(path, threads=threads).digest() == treehash.new(data=b"x").digest()


def test_names_are_the_command_lines_in_any_case():
    assert treehash.new("SHA3-512").name == treehash.new("sha3-512").name


def test_new_refuses_the_gpu_and_device_digest_the_cpu():
    with pytest.raises(ValueError, match="new\\(\\) hashes on the CPU"):
        treehash.new(backend="gpu")
    with pytest.raises(ValueError, match="hashes on the GPU"):
        treehash.device_digest(object(), backend="cpu")


def test_the_wrong_kinds_are_type_errors():
    with pytest.raises(TypeError):
        treehash.new(height="8")
    with pytest.raises(TypeError):
        treehash.new(prefix="text")
    with pytest.raises(TypeError):
        treehash.new("turboshake128", domain="1f")
    with pytest.raises(TypeError):
        treehash.new("sha3-256", None, 8)  # the parameters are keywords
