"""Helpers shared by the tests: the spec's test input, the shared vectors,
seeded random bytes."""

import json
import os
import pathlib
import random

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors" / "li-v1.json"


def spec_input(length):
    """The spec's test input: byte k is k mod 251."""
    pattern = bytes(range(251))
    return (pattern * (length // 251 + 1))[:length]


def vectors():
    """Every case of tests/vectors/li-v1.json."""
    cases = json.loads(VECTORS.read_text())["cases"]
    assert len(cases) >= 50, "the vector file lost cases"
    return cases


def vector_params(case):
    """The keyword arguments of treehash's functions for one vector."""
    params = {
        "algorithm": case["algo"],
        "height": case["height"],
        "degree": case["degree"],
        "block_size": case["block_size"],
    }
    if case["prefix_hex"]:
        params["prefix"] = bytes.fromhex(case["prefix_hex"])
    if case.get("length") is not None:
        params["length"] = case["length"]
    return params


def random_bytes(rng, length):
    return rng.getrandbits(8 * length).to_bytes(length, "little") if length else b""


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name, so that a failure replays."""
    return random.Random(request.node.name)


@pytest.fixture
def cli():
    """The command-line tool, where TREEHASH_CLI names it (CI sets it);
    the test is skipped, with the reason, where it does not."""
    path = os.environ.get("TREEHASH_CLI")
    if not path:
        pytest.skip("TREEHASH_CLI is not set (the path of a built treehash binary)")
    assert os.access(path, os.X_OK), f"TREEHASH_CLI={path} is not an executable"
    return path
