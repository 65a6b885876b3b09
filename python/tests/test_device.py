"""device_digest: objects in GPU memory, hashed where they lie, against the
same bytes hashed from the host. The GPU tests make their buffers through
the CUDA driver (cuda_driver.py) and are skipped, with the reason, where
there is no driver or GPU; the refusals that need no GPU run everywhere."""

import ctypes

import pytest

import treehash
from conftest import random_bytes
from cuda_driver import DeviceBuffer, DLPackBuffer, open_driver

DRIVER, NO_GPU = open_driver()
needs_gpu = pytest.mark.skipif(DRIVER is None, reason=f"needs a CUDA GPU: {NO_GPU}")


class Interface:
    """An object that only describes memory (never read by these tests)."""

    def __init__(self, **interface):
        self.__cuda_array_interface__ = {"version": 3, "strides": None, **interface}


# Refusals before any GPU work: these run everywhere.


def test_an_object_in_no_gpu_memory_is_a_type_error():
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        treehash.device_digest(b"bytes on the host")


@pytest.mark.parametrize(
    "interface, message",
    [
        ({"shape": (4, 4), "typestr": "|u1", "data": (1 << 40, False), "strides": (8, 1)},
         "not contiguous"),
        ({"shape": (4, 4), "typestr": "<f4", "data": (1 << 40, False), "strides": (4, 16)},
         "not contiguous"),
        ({"shape": (8,), "typestr": "|u1", "data": (1 << 40, False), "mask": object()},
         "masked"),
        ({"shape": (8,), "typestr": "|u1", "data": (1 << 40, False), "stream": 0},
         "'stream' is 0"),
        ({"shape": (8,), "typestr": "|x", "data": (1 << 40, False)}, "names no item size"),
        ({"typestr": "|u1", "data": (1 << 40, False)}, "no 'shape'"),
    ],
)
def test_what_the_interface_cannot_describe_is_refused(interface, message):
    with pytest.raises(ValueError, match=message):
        treehash.device_digest(Interface(**interface))


def test_dlpack_on_the_cpu_is_refused():
    host = ctypes.create_string_buffer(64)
    cpu = DLPackBuffer(ctypes.addressof(host), (64,), device=(1, 0))
    with pytest.raises(ValueError, match="lives on the CPU"):
        treehash.device_digest(cpu)
    assert cpu.streams == [], "no capsule was asked for"


@pytest.mark.skipif(DRIVER is not None, reason="a CUDA GPU is present (see the GPU tests)")
def test_without_a_gpu_the_gpu_backend_is_a_gpu_error(tmp_path):
    path = tmp_path / "x"
    path.write_bytes(b"x" * 1000)
    with pytest.raises(treehash.GpuError, match="no CUDA driver found"):
        treehash.file_digest(path, backend="gpu")
    assert issubclass(treehash.GpuError, RuntimeError)
    aligned = {"shape": (8,), "typestr": "|u1", "data": (1 << 40, False)}
    with pytest.raises(treehash.GpuError):
        treehash.device_digest(Interface(**aligned))


# On a GPU.

FUNCTIONS = ["sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256"]


def random_params(rng, function, height):
    params = {"algorithm": function, "height": height, "degree": rng.choice([2, 4])}
    if rng.random() < 0.4:
        params["prefix"] = random_bytes(rng, rng.choice([1, 7, 135, 255]))
    if rng.random() < 0.3:
        params["block_size"] = rng.choice([8, 200, 2 * 168])
    if function.startswith("shake"):
        params["length"] = rng.choice([1, 32, 99])
    return params


@needs_gpu
def test_device_digests_equal_the_host_digests(rng):
    for round in range(48):
        function = FUNCTIONS[round % len(FUNCTIONS)]
        height = rng.choice([0, 1, 3, 5, 8])
        params = random_params(rng, function, height)
        most = 1 << 16 if height == 0 else 4 << 20
        length = rng.choice([0, 1, 135, 137, rng.randint(0, most)])
        data = random_bytes(rng, length)
        offset = rng.randint(0, 7)
        buffer = DeviceBuffer(DRIVER, data, offset=offset)
        got = treehash.device_digest(buffer, **params)
        want = treehash.new(data=data, **params)
        case = (params, length, offset)
        assert got.hexdigest() == want.hexdigest(), case
        assert (got.name, got.digest_size, got.nbytes) == (want.name, want.digest_size, length)
        assert got.backend == "gpu"


@needs_gpu
def test_every_item_type_and_shape_is_its_raw_bytes(rng):
    data = random_bytes(rng, 3 * 4096)
    want = treehash.new(data=data, height=4).hexdigest()
    for typestr, shape, strides in [
        ("<f4", (3 * 1024,), None),
        ("<f8", (3, 512), None),
        ("<f8", (3, 512), (4096, 8)),
        ("<c16", (768,), None),
        ("|b1", (3, 64, 64), (4096, 64, 1)),
        ("<i2", (1, 6144), (99, 2)),  # a dimension of one item: any stride
    ]:
        buffer = DeviceBuffer(DRIVER, data, typestr=typestr, shape=shape, strides=strides)
        assert treehash.device_digest(buffer, height=4).hexdigest() == want, typestr


@needs_gpu
def test_dlpack_objects_are_hashed_and_given_back(rng):
    data = random_bytes(rng, 1 << 20)
    ptr = DRIVER.alloc(len(data) + 16)
    try:
        DRIVER.upload(ptr + 16, data)
        want = treehash.new(data=data, height=6).hexdigest()
        for versioned in (True, False):
            tensor = DLPackBuffer(ptr, (len(data),), byte_offset=16, versioned=versioned)
            assert treehash.device_digest(tensor, height=6).hexdigest() == want
            assert tensor.deleted == 1, "the deleter was called once"
            assert len(tensor.streams) == 1 and isinstance(tensor.streams[0], int)
            assert tensor.streams[0] not in (0, None), "the hashing's CUDA stream was passed"
        wide = DLPackBuffer(ptr + 16, (len(data) // 4,), bits=32)
        assert treehash.device_digest(wide, height=6).hexdigest() == want

        class Old(DLPackBuffer):
            """A producer from before DLPack 1: no max_version."""

            def __dlpack__(self, stream=None):
                return super().__dlpack__(stream=stream)

        assert treehash.device_digest(Old(ptr + 16, (len(data),)), height=6).hexdigest() == want
        strided = DLPackBuffer(ptr, (1024, 512), strides=(1024, 1))
        with pytest.raises(ValueError, match="not contiguous"):
            treehash.device_digest(strided)
        assert strided.deleted == 1, "given back after the refusal too"
    finally:
        DRIVER.free(ptr)


@needs_gpu
def test_the_producers_stream_is_waited_for(rng):
    """A copy still queued on the producer's CUDA stream when device_digest is
    called is hashed as it will be, not as the memory was."""
    length = 256 << 20
    data = random_bytes(rng, length)
    want = treehash.new(data=data).hexdigest()
    stream = DRIVER.new_stream()
    for _ in range(3):
        ptr = DRIVER.alloc(length)
        try:
            DRIVER.check(DRIVER.lib.cuMemsetD8Async(ptr, 0, length, stream), "cuMemsetD8Async")
            DRIVER.check(
                DRIVER.lib.cuMemcpyHtoDAsync_v2(ptr, data, length, stream), "cuMemcpyHtoDAsync"
            )
            buffer = DeviceBuffer(DRIVER, b"", ptr=ptr, shape=(length,), stream=stream)
            assert treehash.device_digest(buffer).hexdigest() == want
        finally:
            DRIVER.check(DRIVER.lib.cuStreamSynchronize(stream), "cuStreamSynchronize")
            DRIVER.free(ptr)


@needs_gpu
def test_an_empty_array_and_its_null_pointer(rng):
    empty = DeviceBuffer(DRIVER, b"", ptr=0, shape=(0,))
    for params in [{}, {"height": 0}, {"prefix": b"key", "algorithm": "shake256"}]:
        want = treehash.new(**params).hexdigest()
        assert treehash.device_digest(empty, **params).hexdigest() == want


@needs_gpu
def test_host_memory_is_refused():
    host = ctypes.create_string_buffer(4096)
    buffer = DeviceBuffer(DRIVER, b"", ptr=ctypes.addressof(host), shape=(4096,))
    # Unknown to the driver, or host memory where it manages that too (HMM).
    with pytest.raises(treehash.GpuError, match="not memory the CUDA driver knows|host memory"):
        treehash.device_digest(buffer)


@needs_gpu
def test_file_digest_on_the_gpu(rng, tmp_path):
    data = random_bytes(rng, 5 << 20)
    path = tmp_path / "x"
    path.write_bytes(data)
    for params in [{}, {"height": 4, "prefix": b"p" * 30}, {"height": 0}]:
        got = treehash.file_digest(path, backend="gpu", **params)
        assert got.hexdigest() == treehash.new(data=data, **params).hexdigest(), params
        assert got.backend == "gpu"
