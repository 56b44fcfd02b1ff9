import numpy as np, torch, cupy
from cuda.bindings import driver as d
from numba import cuda
import cutlass_splitk
lib = cutlass_splitk.load("build/default")
dev = lib.platform.devices
A = d.CUpointer_attribute
def attrs(ptr):
    out = {}
    for name in ("CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", "CU_POINTER_ATTRIBUTE_MEMORY_TYPE", "CU_POINTER_ATTRIBUTE_CONTEXT"):
        r = d.cuPointerGetAttribute(getattr(A, name), d.CUdeviceptr(ptr))
        out[name[22:]] = (r[0].name if hasattr(r[0], "name") else r[0], r[1])
    return out
t = torch.ones(4, device="cuda:1")
with cupy.cuda.Device(1):
    c = cupy.ones(4)
with cuda.gpus[1]:
    print("numba ctx device", d.cuCtxGetDevice())
    x = cuda.to_device(np.ones(4, np.float16))
for name, ptr in (("torch", t.data_ptr()), ("cupy", c.data.ptr), ("numba", x.__cuda_array_interface__["data"][0])):
    print(name, hex(ptr), attrs(ptr), "pointer_device:", dev.pointer_device(ptr))
# alternatives to the singular DEVICE_ORDINAL query
import ctypes
for name, ptr in (("torch", t.data_ptr()), ("numba", x.__cuda_array_interface__["data"][0])):
    r = d.cuPointerGetAttributes(2, [A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, A.CU_POINTER_ATTRIBUTE_CONTEXT],
                                 d.CUdeviceptr(ptr))
    ctx = d.cuPointerGetAttribute(A.CU_POINTER_ATTRIBUTE_CONTEXT, d.CUdeviceptr(ptr))[1]
    d.cuCtxPushCurrent(ctx)
    via_ctx = d.cuCtxGetDevice()
    d.cuCtxPopCurrent()
    libcuda = ctypes.CDLL("libcuda.so.1")
    val = ctypes.c_int(-1)
    rc = libcuda.cuPointerGetAttribute(ctypes.byref(val), ctypes.c_int(9), ctypes.c_uint64(ptr))  # 9: DEVICE_ORDINAL
    from cuda.core.utils import StridedMemoryView
    smv = StridedMemoryView.from_any_interface(t if name == "torch" else x, stream_ptr=-1)
    print(name, "plural:", r, "context's device:", via_ctx, "libcuda direct:", rc, val.value, "smv device_id", smv.device_id)
import cuda.bindings
print("cuda.bindings", cuda.bindings.__version__, "driver", d.cuDriverGetVersion())
