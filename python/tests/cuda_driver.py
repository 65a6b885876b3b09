"""Device memory made through the CUDA driver with ctypes (libcuda.so:
cuInit, cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemAlloc, cuMemcpyHtoD,
cuMemFree …), so that the GPU tests need neither CuPy nor PyTorch. A
buffer is exposed through ``__cuda_array_interface__`` (version 3) or
DLPack (``__dlpack__``, ``__dlpack_device__``), as those libraries expose
theirs."""

import ctypes

CUdeviceptr = ctypes.c_uint64
KDL_CUDA = 2


class CudaUnavailable(Exception):
    pass


class Driver:
    """The CUDA driver, device 0's primary context current on the thread
    that made it (the one CuPy and PyTorch use)."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaUnavailable(f"no CUDA driver (libcuda.so.1: {e})") from e
        lib = self.lib
        for name, args in {
            "cuInit": [ctypes.c_uint],
            "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
            "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int],
            "cuCtxSetCurrent": [ctypes.c_void_p],
            "cuMemAlloc_v2": [ctypes.POINTER(CUdeviceptr), ctypes.c_size_t],
            "cuMemFree_v2": [CUdeviceptr],
            "cuMemcpyHtoD_v2": [CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t],
            "cuMemcpyHtoDAsync_v2": [CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p],
            "cuMemsetD8Async": [CUdeviceptr, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p],
            "cuStreamCreate": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint],
            "cuStreamSynchronize": [ctypes.c_void_p],
            "cuStreamDestroy_v2": [ctypes.c_void_p],
        }.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ctypes.c_int
        self.check(lib.cuInit(0), "cuInit")
        count = ctypes.c_int()
        self.check(lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value < 1:
            raise CudaUnavailable("no CUDA device")
        device = ctypes.c_int()
        self.check(lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(
            lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), device),
            "cuDevicePrimaryCtxRetain",
        )
        self.bind()

    @staticmethod
    def check(result, what):
        if result != 0:
            raise CudaUnavailable(f"{what} failed with CUDA error {result}")

    def bind(self):
        """Makes the primary context current on the calling thread."""
        self.check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def alloc(self, size):
        ptr = CUdeviceptr()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), max(size, 1)), "cuMemAlloc")
        return ptr.value

    def free(self, ptr):
        self.check(self.lib.cuMemFree_v2(ptr), "cuMemFree")

    def upload(self, ptr, data):
        if data:
            self.check(self.lib.cuMemcpyHtoD_v2(ptr, data, len(data)), "cuMemcpyHtoD")

    def new_stream(self):
        stream = ctypes.c_void_p()
        self.check(self.lib.cuStreamCreate(ctypes.byref(stream), 0), "cuStreamCreate")
        return stream.value


def open_driver():
    """The driver, or why there is none."""
    try:
        return Driver(), None
    except CudaUnavailable as e:
        return None, str(e)


class DeviceBuffer:
    """``data`` in device memory, ``offset`` bytes into an allocation,
    described by ``__cuda_array_interface__`` (version 3) with the shape,
    item type, strides and stream given."""

    def __init__(self, driver, data, offset=0, shape=None, typestr="|u1", strides=None,
                 stream=None, ptr=None):
        self.driver = driver
        self.base = driver.alloc(offset + len(data)) if ptr is None else None
        self.ptr = ptr if ptr is not None else self.base + offset
        if ptr is None:
            driver.upload(self.ptr, data)
        itemsize = int(typestr[2:])
        self.shape = shape if shape is not None else (len(data) // itemsize,)
        self.typestr, self.strides, self.stream = typestr, strides, stream

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self.typestr,
            "data": (self.ptr, False),
            "strides": self.strides,
            "version": 3,
            "stream": self.stream,
        }

    def __del__(self):
        if self.base is not None:
            self.driver.free(self.base)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", LEGACY_DELETER),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", VERSIONED_DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {False: b"dltensor", True: b"dltensor_versioned"}


class DLPackBuffer:
    """Memory at ``ptr`` described through DLPack: ``__dlpack_device__``
    says ``device``; ``__dlpack__`` returns a capsule (versioned when the
    caller asks for version 1) and notes the CUDA stream the caller passed;
    the deleter notes that it was called."""

    def __init__(self, ptr, shape, bits=8, strides=None, byte_offset=0, device=(KDL_CUDA, 0),
                 versioned=True):
        self.ptr, self.shape, self.bits = ptr, shape, bits
        self.strides, self.byte_offset, self.device = strides, byte_offset, device
        self.versioned = versioned
        self.streams, self.deleted = [], 0
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        self.streams.append(stream)
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * ndim)(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * ndim)(*self.strides)
        tensor = DLTensor(
            data=self.ptr,
            device=DLDevice(*self.device),
            ndim=ndim,
            dtype=DLDataType(code=1, bits=self.bits, lanes=1),
            shape=shape,
            strides=ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides else None,
            byte_offset=self.byte_offset,
        )
        versioned = self.versioned and max_version is not None and tuple(max_version) >= (1, 0)

        def deleted(_):
            self.deleted += 1

        if versioned:
            deleter = VERSIONED_DELETER(deleted)
            managed = DLManagedTensorVersioned(
                version=DLPackVersion(1, 0), deleter=deleter, flags=0, dl_tensor=tensor
            )
        else:
            deleter = LEGACY_DELETER(deleted)
            managed = DLManagedTensor(dl_tensor=tensor, deleter=deleter)
        self._keep.append((shape, strides, deleter, managed))
        return _capsule_new(ctypes.addressof(managed), _NAMES[versioned], None)
