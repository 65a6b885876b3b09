"""Digests equal the shared vectors (tests/vectors/li-v1.json) and the
command-line tool's."""

import subprocess

import pytest

import treehash
from conftest import random_bytes, spec_input, vector_params, vectors


def test_every_vector_by_new_and_by_file(tmp_path):
    for case in vectors():
        params = vector_params(case)
        data = spec_input(case["input_len"])
        assert treehash.new(data=data, **params).hexdigest() == case["digest"], case
        path = tmp_path / "input"
        path.write_bytes(data)
        out = treehash.file_digest(path, backend="cpu", **params)
        assert out.hexdigest() == case["digest"], case
        assert out.nbytes == len(data)


def cli_args(params):
    args = ["-a", params.get("algorithm", "sha3-256")]
    args += ["-H", str(params.get("height", 8)), "-D", str(params.get("degree", 4))]
    if "block_size" in params:
        args += ["-B", str(params["block_size"])]
    if "length" in params:
        args += ["-l", str(params["length"])]
    if "prefix" in params:
        args += ["--prefix-hex", params["prefix"].hex()]
    return args


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"height": 0},
        {"height": 3, "degree": 3, "block_size": 200},
        {"algorithm": "shake256", "height": 2, "length": 100, "prefix": b"key"},
        {"algorithm": "sha3-224", "height": 6, "degree": 2},
    ],
)
def test_digests_equal_the_command_lines(cli, rng, tmp_path, params):
    for length in [0, 1, 136, 100_003, (5 << 20) + 3]:
        data = random_bytes(rng, length)
        path = tmp_path / "input"
        path.write_bytes(data)
        line = subprocess.run(
            [cli, *cli_args(params), "--backend", "cpu", "--no-names", str(path)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert treehash.file_digest(path, **params).hexdigest() == line, length
        assert treehash.new(data=data, **params).hexdigest() == line, length
