"""handle_truncation(): a file cut short while file_digest hashes it raises
RuntimeError, never a digest of other bytes, and the process lives; any
other SIGBUS goes where it went before. Each test runs in a fresh
interpreter, whose signal handlers it may change (and which may die)."""

import hashlib
import random
import signal
import subprocess
import sys

import pytest

import treehash
from conftest import random_bytes

#: Large enough that hashing it takes a good part of a second here, in
#: windows the library maps and reads in ahead of the hashing.
FILE_BYTES = 256 << 20
TRIES = 10

#: argv: the file, a pristine copy of it, the whole file's digests at
#: height 0 and 8 (hex), and whether to install the handler. Each try puts
#: the file back, starts hashing it, and cuts it to nothing from another
#: thread at a random time while the hashing runs (the time an untouched
#: hash takes, measured first); it prints one line per try: the digest, or
#: the exception's type and message.
CUT_WHILE_HASHING = r"""
import os, random, shutil, sys, threading, time
import treehash

path, pristine, want0, want8, handle = sys.argv[1:6]
if handle == "1":
    treehash.handle_truncation()
    treehash.handle_truncation()  # a second call does nothing
rng = random.Random(7)
for attempt in range(int(sys.argv[6])):
    height = 0 if attempt % 2 == 0 else 8
    shutil.copyfile(pristine, path)
    began = time.monotonic()
    treehash.file_digest(path, height=height)
    took = time.monotonic() - began
    shutil.copyfile(pristine, path)
    started = threading.Event()
    # After the file is opened (within a millisecond of the call), before
    # the hashing ends.
    delay = took * rng.uniform(0.2, 0.8)

    def cut():
        started.wait()
        time.sleep(delay)
        os.truncate(path, 0)

    cutter = threading.Thread(target=cut)
    cutter.start()
    started.set()
    try:
        got = treehash.file_digest(path, height=height).hexdigest()
        print(height, "digest", got == (want0 if height == 0 else want8), flush=True)
    except Exception as e:
        print(height, type(e).__name__, e, flush=True)
    cutter.join()
print("alive", flush=True)
"""


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """A file of FILE_BYTES random bytes, a pristine copy, and its digests
    at height 0 (hashlib's SHA3-256) and 8 (treehash's, of the bytes)."""
    data = random_bytes(random.Random("truncation"), FILE_BYTES)
    folder = tmp_path_factory.mktemp("truncation")
    pristine = folder / "pristine"
    pristine.write_bytes(data)
    want0 = hashlib.sha3_256(data).hexdigest()
    want8 = treehash.new(data=data, height=8).hexdigest()
    return folder / "hashed", pristine, want0, want8


def cut_while_hashing(big_file, handle):
    path, pristine, want0, want8 = big_file
    argv = [str(path), str(pristine), want0, want8, "1" if handle else "0", str(TRIES)]
    return subprocess.run(
        [sys.executable, "-c", CUT_WHILE_HASHING, *argv],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_file_cut_short_while_hashed_raises_and_the_process_lives(big_file):
    run = cut_while_hashing(big_file, handle=True)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr)
    lines = run.stdout.splitlines()
    assert lines[-1] == "alive"
    outcomes = lines[:-1]
    assert len(outcomes) == TRIES
    raised = 0
    for line in outcomes:
        height, kind, rest = line.split(" ", 2)
        if kind == "digest":
            # The cut came after the last byte was read: the whole file's.
            assert rest == "True", line
            continue
        assert kind == "RuntimeError", line
        assert "the file changed while it was being hashed" in rest, line
        assert str(big_file[0]) in rest, line
        raised += 1
    assert raised >= 1, outcomes


def test_without_the_handler_a_cut_ends_the_process_with_sigbus(big_file):
    # The documented default, and the proof that the test above cuts files
    # while a window is being hashed.
    run = cut_while_hashing(big_file, handle=False)
    assert run.returncode == -signal.SIGBUS, (run.returncode, run.stdout, run.stderr)


#: argv: what to install before handle_truncation() ("default", "ignore",
#: or "python": a Python handler, which CPython's C handler runs for);
#: then sends the process SIGBUS and prints what followed.
SEND_SIGBUS = r"""
import os, signal, sys
import treehash

before = sys.argv[1]
if before == "ignore":
    signal.signal(signal.SIGBUS, signal.SIG_IGN)
elif before == "python":
    signal.signal(signal.SIGBUS, lambda signum, frame: print("python handler", signum, flush=True))
treehash.handle_truncation()
os.kill(os.getpid(), signal.SIGBUS)
print("alive", flush=True)
"""


@pytest.mark.parametrize(
    "before, returncode, output",
    [
        # The default action: the process ends of SIGBUS.
        ("default", -signal.SIGBUS, ""),
        # A signal sent, not a fault: ignored, as before.
        ("ignore", 0, "alive\n"),
        # A handler: called (Python's runs its function at the next bytecode).
        ("python", 0, f"python handler {int(signal.SIGBUS)}\nalive\n"),
    ],
)
def test_a_sigbus_not_from_a_window_goes_to_the_previous_action(before, returncode, output):
    run = subprocess.run(
        [sys.executable, "-c", SEND_SIGBUS, before], capture_output=True, text=True, timeout=60
    )
    assert (run.returncode, run.stdout) == (returncode, output), run.stderr
