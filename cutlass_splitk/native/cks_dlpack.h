/* The parts of DLPack (https://github.com/dmlc/dlpack, v1.3 ABI) that cks_pycall.c reads: the
 * tensor description and the C exchange table a framework publishes as
 * `type(tensor).__dlpack_c_exchange_api__` (a PyCapsule named "dlpack_exchange_api"; torch >=
 * 2.10). Declared here from the published ABI so that the build needs no framework headers. */
#ifndef CKS_DLPACK_H_
#define CKS_DLPACK_H_

#include <stdint.h>

enum { CKS_DL_CPU = 1, CKS_DL_CUDA = 2 };

typedef struct { int32_t device_type; int32_t device_id; } CksDLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } CksDLDataType;

typedef struct {
  void* data;
  CksDLDevice device;
  int32_t ndim;
  CksDLDataType dtype;
  int64_t* shape;
  int64_t* strides;  /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} CksDLTensor;

typedef struct { uint32_t major; uint32_t minor; } CksDLPackVersion;

typedef struct CksDLPackExchangeAPIHeader {
  CksDLPackVersion version;
  struct CksDLPackExchangeAPIHeader* prev_api;
} CksDLPackExchangeAPIHeader;

/* Only the two entries read here are typed; the others keep their slots. */
typedef struct {
  CksDLPackExchangeAPIHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  /* a non-owning view of the object's tensor, valid until control returns; 0 or -1 (Python error set) */
  int (*dltensor_from_py_object_no_sync)(void* py_object, CksDLTensor* out);
  /* the framework's current stream of a device (torch.cuda.current_stream); 0 or -1 */
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
} CksDLPackExchangeAPI;

#define CKS_DLPACK_EXCHANGE_CAPSULE "dlpack_exchange_api"
#define CKS_DLPACK_MAJOR 1

#endif
