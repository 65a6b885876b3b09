"""Helpers shared by the tests: the spec's test input, the shared vectors
(LI's, RFC 9861's and NIST SP 800-185's), seeded random bytes."""

import json
import os
import pathlib
import random

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors" / "li-v1.json"
STANDARD_VECTORS = [REPO / "tests" / "vectors" / f for f in ("rfc9861.json", "sp800-185.json")]
#: The standard functions by the names their documents give them (the vector
#: files' "function"), and by treehash's.
STANDARD_NAMES = {
    "KT128": "kt128",
    "KT256": "kt256",
    "ParallelHash128": "parallelhash128",
    "ParallelHash256": "parallelhash256",
    "TurboSHAKE128": "turboshake128",
    "TurboSHAKE256": "turboshake256",
}


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


def vector_bytes(value):
    """A byte string as the standard vector files write it: hex, ASCII, or
    RFC 9861's ptn(n) (byte k is k mod 251, the spec's test input)."""
    (kind, text), = value.items()
    if kind == "hex":
        return bytes.fromhex(text)
    if kind == "ascii":
        return text.encode()
    assert kind == "ptn", kind
    return spec_input(text)


def standard_vectors():
    """Every known answer of the vector files for a function treehash
    computes (not cSHAKE, not ParallelHashXOF), as (name, message, keyword
    arguments, skip, output): the digest's bytes from ``skip`` on are
    ``output``."""
    cases = []
    for path in STANDARD_VECTORS:
        for group in json.loads(path.read_text())["groups"]:
            name = STANDARD_NAMES.get(group["function"])
            if name is None:
                continue
            for case in group["cases"]:
                params = {"length": case["output_len"]}
                if "customization" in case:
                    params["customization"] = vector_bytes(case["customization"])
                if "domain" in case:
                    params["domain"] = int(case["domain"], 16)
                if "block_size" in case:
                    params["block_size"] = case["block_size"]
                output = bytes.fromhex(case["output"])
                cases.append((name, vector_bytes(case["message"]), params, case.get("skip", 0), output))
    return cases


def random_bytes(rng, length):
    # randbytes, not getrandbits: a C int counts the bits of getrandbits,
    # which 256 MiB overflows.
    return rng.randbytes(length)


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
