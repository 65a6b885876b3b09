#!/usr/bin/env python3
"""Adds vectors computed by pycryptodome to tests/vectors/rfc9861.json and
tests/vectors/sp800-185.json.

The standards' own vectors are few and miss most boundaries: a message whose
domain byte falls on the last byte of a block, outputs of exactly one rate,
|S| = n * 8192 +- 1 with a customization string, a cSHAKE prefix
bytepad(encode_string(N) || encode_string(S)) that fills whole blocks. These
come from an implementation independent of this project and of RustCrypto:
pycryptodome's TurboSHAKE128/256, KangarooTwelve (its KT128; pycryptodome has
no KT256, which the RFC vectors and RustCrypto's k12 check instead) and
cSHAKE128/256 (through its module-private _new, which takes the function name
N, as its KMAC and TupleHash do). pycryptodome has no ParallelHash.

    python3 -m venv /tmp/pyc && /tmp/pyc/bin/pip install pycryptodome
    /tmp/pyc/bin/python scripts/extra-vectors.py

Re-running replaces the generated groups (those with "generated_by") and keeps
the standards'. The lengths are fixed boundary cases plus seeded random ones,
so a re-run with the same pycryptodome writes the same files.
"""

import json
import random
from pathlib import Path

import Crypto
from Crypto.Hash import KangarooTwelve, TurboSHAKE128, TurboSHAKE256, cSHAKE128, cSHAKE256

VECTORS = Path(__file__).resolve().parent.parent / "tests" / "vectors"
SCRIPT = "scripts/extra-vectors.py"
CHUNK = 8192


def ptn(n):
    """RFC 9861 Section 5: 00 01 .. FA repeated, truncated to n bytes."""
    return bytes(k % 251 for k in range(n))


def length_encode(x):
    """RFC 9861 Section 3.3, only to aim |S| at the chunk boundaries."""
    s = b""
    while x > 0:
        s = bytes([x % 256]) + s
        x //= 256
    return s + bytes([len(s)])


def turboshake_cases(new, rate, rng):
    domains = [0x01, 0x02, 0x06, 0x07, 0x0B, 0x1F, 0x30, 0x40, 0x7E, 0x7F]
    out_lens = [1, 31, 32, 64, rate - 1, rate, rate + 1, 2 * rate + 5]
    lens = [0, 1, rate - 2, rate - 1, rate, rate + 1, 2 * rate - 1, 2 * rate, 2 * rate + 1]
    lens += [10 * rate + 3, CHUNK - 1, CHUNK, CHUNK + 1]
    lens += sorted(rng.randrange(0, 20000) for _ in range(6))
    cases = []
    for i, n in enumerate(lens):
        domain = domains[i % len(domains)]
        out_len = out_lens[i % len(out_lens)]
        output = new(domain=domain, data=ptn(n)).read(out_len)
        cases.append(
            {
                "message": {"ptn": n},
                "domain": f"{domain:02x}",
                "output_len": out_len,
                "output": output.hex(),
            }
        )
    # The domain byte on the last byte of a block, for every domain above.
    for domain in domains:
        output = new(domain=domain, data=ptn(rate - 1)).read(32)
        cases.append(
            {
                "message": {"ptn": rate - 1},
                "domain": f"{domain:02x}",
                "output_len": 32,
                "output": output.hex(),
            }
        )
    return cases


def kt128_cases(rng):
    """(|M|, |C|) pairs putting |S| = |M| + |C| + |length_encode(|C|)| on
    either side of 1, 2, 3, 4, 8 and 9 chunks, then random ones."""
    pairs = []
    for c_len in [0, 1, 5, 41, 300]:
        overhead = c_len + len(length_encode(c_len))
        for chunks in [1, 2, 3, 4, 8, 9]:
            for delta in [-1, 0, 1]:
                s_len = chunks * CHUNK + delta
                if s_len - overhead >= 0:
                    pairs.append((s_len - overhead, c_len))
    pairs += [(0, 0), (1, 0), (167, 0), (168, 0), (0, CHUNK), (0, CHUNK + 300)]
    pairs += [(rng.randrange(0, 20 * CHUNK), rng.randrange(0, 400)) for _ in range(8)]
    out_lens = [32, 64, 1, 167, 168, 169, 500]
    cases = []
    for i, (m_len, c_len) in enumerate(pairs):
        out_len = out_lens[i % len(out_lens)]
        output = KangarooTwelve.new(data=ptn(m_len), custom=ptn(c_len)).read(out_len)
        cases.append(
            {
                "message": {"ptn": m_len},
                "customization": {"ptn": c_len},
                "output_len": out_len,
                "output": output.hex(),
            }
        )
    return cases


def left_encode_len(x):
    """len(left_encode(x)), SP 800-185 Section 2.3.1."""
    return 1 + max(1, (x.bit_length() + 7) // 8)


def encode_string_len(s_len):
    """len(encode_string(S)) for |S| = s_len bytes, SP 800-185 Section 2.3.2."""
    return left_encode_len(8 * s_len) + s_len


def cshake_cases(new, rate, rng):
    """S lengths putting bytepad's input (left_encode(rate) || encode_string(N)
    || encode_string(S)) at one and two blocks, +- 1, for N = "" and
    N = "ParallelHash"; then a few random S."""
    cases = []
    for name in [b"", b"ParallelHash"]:
        fixed = left_encode_len(rate) + encode_string_len(len(name))
        s_lens = [
            s_len
            for target in [rate - 1, rate, rate + 1, 2 * rate - 1, 2 * rate, 2 * rate + 1]
            for s_len in range(target + 1)
            if fixed + encode_string_len(s_len) == target
        ]
        s_lens += [rng.randrange(0, 600) for _ in range(3)]
        for i, s_len in enumerate(s_lens):
            x_len = [0, 1, rate - 1, rate, rate + 1, 1000][i % 6]
            out_len = [32, 64, rate, rate + 1][i % 4]
            output = new(ptn(x_len), ptn(s_len), name).read(out_len)
            cases.append(
                {
                    "message": {"ptn": x_len},
                    "output_len": out_len,
                    "function_name": {"ascii": name.decode()},
                    "customization": {"ptn": s_len},
                    "output": output.hex(),
                }
            )
    return cases


def dump(doc, path):
    """Top-level keys and groups indented, one case per line."""
    out = ["{"]
    for key in doc:
        if key != "groups":
            out.append(f" {json.dumps(key)}: {json.dumps(doc[key])},")
    out.append(' "groups": [')
    for gi, group in enumerate(doc["groups"]):
        out.append("  {")
        for key in group:
            if key != "cases":
                out.append(f"   {json.dumps(key)}: {json.dumps(group[key])},")
        out.append('   "cases": [')
        cases = group["cases"]
        for ci, case in enumerate(cases):
            out.append("    " + json.dumps(case) + ("," if ci + 1 < len(cases) else ""))
        out.append("   ]")
        out.append("  }" + ("," if gi + 1 < len(doc["groups"]) else ""))
    out.append(" ]")
    out.append("}")
    path.write_text("\n".join(out) + "\n")


def without_generated(path):
    doc = json.loads(path.read_text())
    doc["groups"] = [g for g in doc["groups"] if "generated_by" not in g]
    return doc


def main():
    version = f"pycryptodome {Crypto.__version__}"

    path = VECTORS / "rfc9861.json"
    doc = without_generated(path)
    rng = random.Random(9861)
    for function, module, new, rate in [
        ("TurboSHAKE128", "TurboSHAKE128", TurboSHAKE128.new, 168),
        ("TurboSHAKE256", "TurboSHAKE256", TurboSHAKE256.new, 136),
    ]:
        doc["groups"].append(
            {
                "function": function,
                "source": f"computed by {version} (Crypto.Hash.{module}), not from the RFC: "
                "messages around the rate and the chunk size, every kind of domain byte",
                "generated_by": SCRIPT,
                "cases": turboshake_cases(new, rate, rng),
            }
        )
    doc["groups"].append(
        {
            "function": "KT128",
            "source": f"computed by {version} (Crypto.Hash.KangarooTwelve, which is KT128), "
            "not from the RFC: |S| on either side of 1 to 9 chunks, with and without "
            "a customization string",
            "generated_by": SCRIPT,
            "cases": kt128_cases(rng),
        }
    )
    dump(doc, path)
    print(f"{path}: {sum(len(g['cases']) for g in doc['groups'])} cases")

    path = VECTORS / "sp800-185.json"
    doc = without_generated(path)
    rng = random.Random(800185)
    for function, module, rate in [
        ("cSHAKE128", cSHAKE128, 168),
        ("cSHAKE256", cSHAKE256, 136),
    ]:
        doc["groups"].append(
            {
                "function": function,
                "source": f"computed by {version} (Crypto.Hash.{function}._new), not from "
                "the standard: bytepad's input filling one or two blocks exactly, and "
                "one byte either side (debris/tiny-keccak issue 63 is this case)",
                "generated_by": SCRIPT,
                "cases": cshake_cases(module._new, rate, rng),
            }
        )
    dump(doc, path)
    print(f"{path}: {sum(len(g['cases']) for g in doc['groups'])} cases")


if __name__ == "__main__":
    main()
