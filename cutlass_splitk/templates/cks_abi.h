// cutlass-splitk C ABI shared by every generated library and the Python runtime
// (cutlass_splitk/runtime/abi.py mirrors these structs with ctypes; bump CKS_ABI_VERSION
// whenever a field changes).
#pragma once
#include <stdint.h>

#define CKS_ABI_VERSION 1

// Generated libraries compile with -fvisibility=hidden; only the C entry points are exported.
#define CKS_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// Status codes returned by every entry point.
enum CksStatus {
  CKS_OK = 0,
  CKS_ERROR_INVALID_PROBLEM = 1,   // can_implement failed; cks_last_error() says why
  CKS_ERROR_WORKSPACE = 2,         // workspace missing or too small
  CKS_ERROR_ABI = 3,               // CksArgs.abi_version does not match the library
  CKS_ERROR_CUDA = 4,              // a CUDA call failed; cks_last_error() has the CUDA error string
  CKS_ERROR_INTERNAL = 5           // a C++ exception was caught at the boundary
};

// One GEMM + fused epilogue problem:
//   F = permute( E_op( act( alpha * (A x B) + beta * C + bias ), E ) )
// A is (m, k) row-major with leading dimension lda; B is (k, n), column-major (layout tn)
// or row-major (layout nn), leading dimension ldb. C, E are (m, n) row-major; D is (m, n)
// row-major with ldd, or the dense permuted tensor when the variant permutes its output.
typedef struct CksArgs {
  int32_t abi_version;
  int32_t m, n, k;
  int32_t split_k;          // requested K partitions (>= 1)
  int32_t permute_s;        // permuted output: M = B * S (rows grouped by S)
  int32_t permute_h;        // permuted output: heads H (N = H * Dh, or 3 * H * Dh for qkv)
  int32_t device;           // CUDA device index the pointers and the stream belong to
  const void* a; int64_t lda;
  const void* b; int64_t ldb;
  const void* c; int64_t ldc;   // may be null when beta == 0
  const void* bias;             // length n (per_col) or m (per_row)
  const void* e; int64_t lde;
  void* d; int64_t ldd;
  float alpha, beta;
  float act_arg;                // leaky_relu negative slope
  float reserved1;
  void* semaphores; int64_t semaphore_bytes;   // int32, zero-filled; left zero by a completed launch
  void* partials; int64_t partial_bytes;       // float32 partials (parallel split-K)
} CksArgs;

// What a problem needs from the caller before it can run.
typedef struct CksQuery {
  int32_t k_partitions;     // effective number of K partitions (<= split_k)
  int32_t tiles_m, tiles_n;
  int32_t reserved0;
  int64_t semaphore_bytes;
  int64_t partial_bytes;
} CksQuery;

#ifdef __cplusplus
}
#endif
