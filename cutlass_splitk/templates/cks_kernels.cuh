// cutlass-splitk: the hand-written logic behind every generated variant.
//
// A generated .cu only names a VariantConfig and exports SerialGemm<Config> or
// ParallelGemm<Config> through the C ABI in cks_abi.h; everything that computes lives here.
//
// Both split-K strategies compute the same function,
//   F = permute( E_op( act( alpha * (A x B) + beta * C + bias ), E ) ),
// through the same FusedEpilogue helpers:
//   * serial: GemmSplitKSerial semantics. Partition k waits on a per-tile semaphore, adds
//     alpha * acc_k to the running partial (stored in D, in the output element type, at the
//     final - possibly permuted - address), and releases k + 1. Partition 0 adds beta * C and
//     the bias; only the last partition applies the activation and E_op and releases 0, so
//     the semaphores are zero again for the next launch.
//   * parallel: a CUTLASS GemmUniversal in kGemmSplitKParallel mode writes float32 partials,
//     then reduce_epilogue_kernel sums them and applies the whole epilogue in one pass.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"
#include "cutlass/device_kernel.h"
#include "cutlass/fast_math.h"
#include "cutlass/numeric_conversion.h"
#include "cutlass/numeric_types.h"
#include "cutlass/semaphore.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/epilogue/threadblock/epilogue_with_visitor.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/kernel/default_gemm_universal.h"
#include "cutlass/gemm/kernel/gemm_universal.h"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"

#include "cks_abi.h"

namespace cks {

enum class Act { kIdentity, kRelu, kGelu, kGeluTanh, kSilu, kSigmoid, kLeakyRelu };
enum class EOp { kNone, kAdd, kMul };
enum class Bias { kNone, kPerCol, kPerRow };
enum class Permute { kNone, k0213, k20314 };

// ---------------------------------------------------------------------------------------
// Error reporting across the C boundary
// ---------------------------------------------------------------------------------------

inline std::string& last_error() {
  static thread_local std::string message;
  return message;
}

inline int fail(int status, std::string message) {
  last_error() = std::move(message);
  return status;
}

template <class F>
int guarded(F&& f) noexcept {
  try {
    last_error().clear();
    return f();
  } catch (std::exception const& e) {
    return fail(CKS_ERROR_INTERNAL, std::string("C++ exception: ") + e.what());
  } catch (...) {
    return fail(CKS_ERROR_INTERNAL, "unknown C++ exception");
  }
}

inline int cuda_fail(cudaError_t err, char const* what) {
  return fail(CKS_ERROR_CUDA, std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                                  cudaGetErrorString(err));
}

inline bool aligned(void const* p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) % uintptr_t(bytes)) == 0;
}

// ---------------------------------------------------------------------------------------
// Variant configuration (the only thing a generated file chooses)
// ---------------------------------------------------------------------------------------

template <class Element_, bool kBColumnMajor_, class ThreadblockShape_, class WarpShape_,
          class InstructionShape_, int kStages_, int kAlignment_, int kSwizzle_, Act kAct_,
          EOp kEOp_, Bias kBias_, Permute kPermute_>
struct VariantConfig {
  using Element = Element_;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = typename cutlass::platform::conditional<
      kBColumnMajor_, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>::type;
  using ThreadblockShape = ThreadblockShape_;
  using WarpShape = WarpShape_;
  using InstructionShape = InstructionShape_;
  using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<kSwizzle_>;
  static bool const kBColumnMajor = kBColumnMajor_;
  static int const kStages = kStages_;
  static int const kAlignment = kAlignment_;  // elements per access for A, B, C, D, E
  static Act const kAct = kAct_;
  static EOp const kEOp = kEOp_;
  static Bias const kBias = kBias_;
  static Permute const kPermute = kPermute_;
};

// ---------------------------------------------------------------------------------------
// Activation functions (float in, float out; NaN propagates as in torch.nn.functional)
// ---------------------------------------------------------------------------------------

template <Act A>
CUTLASS_DEVICE float activate(float x, float arg) {
  if constexpr (A == Act::kIdentity) {
    return x;
  } else if constexpr (A == Act::kRelu) {
    return x < 0.f ? 0.f : x;
  } else if constexpr (A == Act::kGelu) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752440f));
  } else if constexpr (A == Act::kGeluTanh) {
    float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.f + tanhf(inner));
  } else if constexpr (A == Act::kSilu) {
    return x / (1.f + expf(-x));
  } else if constexpr (A == Act::kSigmoid) {
    return 1.f / (1.f + expf(-x));
  } else {  // kLeakyRelu
    return x < 0.f ? x * arg : x;
  }
}

// ---------------------------------------------------------------------------------------
// Vector memory access
// ---------------------------------------------------------------------------------------

template <int kBytes> struct VecWord;
template <> struct VecWord<16> { using type = uint4; };
template <> struct VecWord<8> { using type = uint2; };
template <> struct VecWord<4> { using type = uint32_t; };
template <> struct VecWord<2> { using type = uint16_t; };

// Loads kN elements of T at p (aligned to the whole vector) and converts them to float.
// kStream uses ld.global.cg: data written by another CTA (serial partials) or read once
// (parallel partials) bypasses L1.
template <class T, int kN, bool kStream = false>
CUTLASS_DEVICE cutlass::Array<float, kN> load_vec(T const* p) {
  using Word = typename VecWord<int(sizeof(T)) * kN>::type;
  cutlass::Array<T, kN> raw;
  Word const* src = reinterpret_cast<Word const*>(p);
  if constexpr (kStream) {
    *reinterpret_cast<Word*>(&raw) = __ldcg(src);
  } else {
    *reinterpret_cast<Word*>(&raw) = *src;
  }
  cutlass::NumericArrayConverter<float, T, kN> convert;
  return convert(raw);
}

template <class T, int kN>
CUTLASS_DEVICE void store_vec(T* p, cutlass::Array<float, kN> const& v) {
  using Word = typename VecWord<int(sizeof(T)) * kN>::type;
  cutlass::NumericArrayConverter<T, float, kN, cutlass::FloatRoundStyle::round_to_nearest>
      convert;
  cutlass::Array<T, kN> raw = convert(v);
  *reinterpret_cast<Word*>(p) = *reinterpret_cast<Word const*>(&raw);
}

// ---------------------------------------------------------------------------------------
// The fused epilogue, shared by both split-K strategies
// ---------------------------------------------------------------------------------------

template <class Element>
struct EpilogueParams {
  float alpha = 1.f, beta = 0.f, act_arg = 0.f;
  Element const* c = nullptr;
  int64_t ldc = 0;
  Element const* bias = nullptr;
  Element const* e = nullptr;
  int64_t lde = 0;
  Element* d = nullptr;
  int64_t ldd = 0;
  int m = 0, n = 0;
  // Permuted output: rows m = b * S + s; columns n = (t * H + h) * Dh + dd.
  cutlass::FastDivmod div_s;    // S
  cutlass::FastDivmod div_dh;   // Dh
  cutlass::FastDivmod div_hdh;  // H * Dh
  int perm_b = 1, perm_s = 1, perm_h = 1, perm_dh = 1;
};

template <class Cfg>
struct FusedEpilogue {
  using Element = typename Cfg::Element;
  using Params = EpilogueParams<Element>;
  static int const kV = Cfg::kAlignment;
  using Vec = cutlass::Array<float, kV>;

  // Offset of output element (row, col) in D, permuted or not.
  CUTLASS_DEVICE static int64_t offset_d(Params const& p, int row, int col) {
    if constexpr (Cfg::kPermute == Permute::kNone) {
      return int64_t(row) * p.ldd + col;
    } else {
      int b, s, h, dd;
      p.div_s.fast_divmod(b, s, row);
      if constexpr (Cfg::kPermute == Permute::k0213) {
        // (B, S, H, Dh) -> (B, H, S, Dh)
        p.div_dh.fast_divmod(h, dd, col);
        return ((int64_t(b) * p.perm_h + h) * p.perm_s + s) * p.perm_dh + dd;
      } else {
        // (B, S, 3, H, Dh) -> (3, B, H, S, Dh)
        int t, rem;
        p.div_hdh.fast_divmod(t, rem, col);
        p.div_dh.fast_divmod(h, dd, rem);
        return (((int64_t(t) * p.perm_b + b) * p.perm_h + h) * p.perm_s + s) * p.perm_dh + dd;
      }
    }
  }

  // alpha * acc + beta * C + bias: the linear part, applied once (first partition).
  CUTLASS_DEVICE static void add_source(Params const& p, int row, int col, Vec& v) {
    if (p.beta != 0.f) {
      Vec c = load_vec<Element, kV>(p.c + int64_t(row) * p.ldc + col);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] += p.beta * c[i];
    }
    if constexpr (Cfg::kBias == Bias::kPerCol) {
      if (!p.bias) return;  // the bias is optional at call time
      Vec b = load_vec<Element, kV>(p.bias + col);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] += b[i];
    } else if constexpr (Cfg::kBias == Bias::kPerRow) {
      if (!p.bias) return;
      float b = float(p.bias[row]);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] += b;
    }
  }

  // act, then E_op: the non-linear part, applied once (last partition).
  CUTLASS_DEVICE static void finish(Params const& p, int row, int col, Vec& v) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kV; ++i) v[i] = activate<Cfg::kAct>(v[i], p.act_arg);
    if constexpr (Cfg::kEOp != EOp::kNone) {
      Vec e = load_vec<Element, kV>(p.e + int64_t(row) * p.lde + col);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] = (Cfg::kEOp == EOp::kAdd) ? v[i] + e[i] : v[i] * e[i];
    }
  }

  // The whole epilogue for one vector of kV accumulator values (unsplit or reduced).
  CUTLASS_DEVICE static void apply_and_store(Params const& p, int row, int col, Vec v) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kV; ++i) v[i] *= p.alpha;
    add_source(p, row, col, v);
    finish(p, row, col, v);
    store_vec<Element, kV>(p.d + offset_d(p, row, col), v);
  }

  // Host side: fills the permute divisors and validates the view. Returns an empty string
  // when the problem is representable.
  static std::string init_host(Params& p, CksArgs const& a) {
    p.alpha = a.alpha;
    p.beta = a.beta;
    p.act_arg = a.act_arg;
    p.c = static_cast<Element const*>(a.c);
    p.ldc = a.ldc;
    p.bias = static_cast<Element const*>(a.bias);
    p.e = static_cast<Element const*>(a.e);
    p.lde = a.lde;
    p.d = static_cast<Element*>(a.d);
    p.ldd = a.ldd;
    p.m = a.m;
    p.n = a.n;
    int const bytes = kV * int(sizeof(Element));
    auto misaligned = [&](char const* what) {
      return std::string(what) + " must be aligned to " + std::to_string(bytes) +
             " bytes (" + std::to_string(kV) + " elements) for this variant";
    };
    if (a.n % kV) return "N = " + std::to_string(a.n) + " must be a multiple of " + std::to_string(kV);
    if (p.beta != 0.f) {
      if (!p.c) return "beta != 0 needs C";
      if (!aligned(p.c, bytes) || p.ldc % kV) return misaligned("C (pointer and ldc)");
    }
    if (Cfg::kBias == Bias::kNone && p.bias) return "this variant has no bias";
    if (Cfg::kBias == Bias::kPerCol && p.bias && !aligned(p.bias, bytes)) return misaligned("bias");
    if (Cfg::kEOp != EOp::kNone) {
      if (!p.e) return "this variant needs E";
      if (!aligned(p.e, bytes) || p.lde % kV) return misaligned("E (pointer and lde)");
    }
    if (!p.d) return "D is null";
    if (!aligned(p.d, bytes)) return misaligned("D");
    if (Cfg::kPermute == Permute::kNone) {
      if (p.ldd % kV || p.ldd < p.n) return misaligned("D's ldd");
    } else {
      int const groups = (Cfg::kPermute == Permute::k20314) ? 3 : 1;
      if (a.permute_s <= 0 || a.m % a.permute_s)
        return "permute: M = " + std::to_string(a.m) + " is not a multiple of S = " +
               std::to_string(a.permute_s);
      if (a.permute_h <= 0 || a.n % (groups * a.permute_h))
        return "permute: N = " + std::to_string(a.n) + " is not a multiple of " +
               std::to_string(groups) + " * H = " + std::to_string(groups * a.permute_h);
      int dh = a.n / (groups * a.permute_h);
      if (dh % kV)
        return "permute: head size " + std::to_string(dh) + " must be a multiple of " +
               std::to_string(kV);
      p.perm_s = a.permute_s;
      p.perm_b = a.m / a.permute_s;
      p.perm_h = a.permute_h;
      p.perm_dh = dh;
      p.div_s = cutlass::FastDivmod(a.permute_s);
      p.div_dh = cutlass::FastDivmod(dh);
      p.div_hdh = cutlass::FastDivmod(a.permute_h * dh);
    }
    return std::string();
  }
};

// ---------------------------------------------------------------------------------------
// Serial split-K: epilogue visitor + kernel
// ---------------------------------------------------------------------------------------

template <class Cfg, class OutputTileIterator_>
class SerialVisitor {
 public:
  using OutputTileIterator = OutputTileIterator_;
  using Epi = FusedEpilogue<Cfg>;
  using ElementOutput = typename Cfg::Element;
  using ElementAccumulator = float;
  static int const kIterations = OutputTileIterator::kIterations;
  static int const kElementsPerAccess = OutputTileIterator::kElementsPerAccess;
  static_assert(kElementsPerAccess == Cfg::kAlignment, "epilogue vector width mismatch");
  using AccumulatorFragment = cutlass::Array<float, kElementsPerAccess>;

  struct Params {
    typename Epi::Params epi;
    typename OutputTileIterator::Params iterator;
  };
  struct SharedStorage {};

 private:
  Params const& params_;
  OutputTileIterator iterator_;  // used only to track this thread's coordinates
  bool first_ = true;
  bool last_ = true;

 public:
  CUTLASS_DEVICE
  SerialVisitor(Params const& params, SharedStorage&, cutlass::MatrixCoord const& extent,
                int thread_idx, int, int, cutlass::MatrixCoord const& threadblock_offset)
      : params_(params),
        iterator_(params.iterator, params.epi.d, extent, thread_idx, threadblock_offset) {}

  CUTLASS_DEVICE void set_k_partition(int k, int k_count) {
    first_ = (k == 0);
    last_ = (k + 1 == k_count);
  }
  CUTLASS_DEVICE void set_batch_index(int) {}
  CUTLASS_DEVICE void begin_epilogue() {}
  CUTLASS_DEVICE void begin_step(int) {}
  CUTLASS_DEVICE void begin_row(int) {}

  CUTLASS_DEVICE void visit(int, int, int, int frag_idx, AccumulatorFragment const& accum) {
    typename Epi::Params const& p = params_.epi;
    cutlass::MatrixCoord coord =
        iterator_.thread_start() + OutputTileIterator::ThreadMap::iteration_offset(frag_idx);
    int row = coord.row(), col = coord.column();
    if (row >= p.m || col >= p.n) return;
    AccumulatorFragment v;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kElementsPerAccess; ++i) v[i] = p.alpha * accum[i];
    int64_t const offset = Epi::offset_d(p, row, col);
    if (first_) {
      Epi::add_source(p, row, col, v);
    } else {
      // Running partial written by the previous partition (another CTA): bypass L1.
      AccumulatorFragment partial = load_vec<ElementOutput, kElementsPerAccess, true>(p.d + offset);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kElementsPerAccess; ++i) v[i] += partial[i];
    }
    if (last_) Epi::finish(p, row, col, v);
    store_vec<ElementOutput, kElementsPerAccess>(p.d + offset, v);
  }

  CUTLASS_DEVICE void end_row(int) {}
  CUTLASS_DEVICE void end_step(int) { ++iterator_; }
  CUTLASS_DEVICE void end_epilogue() {}
};

template <class Mma_, class Epilogue_, class Swizzle_>
struct SerialSplitKKernel {
  using Mma = Mma_;
  using Epilogue = Epilogue_;
  using Visitor = typename Epilogue::Visitor;
  using Swizzle = Swizzle_;
  using WarpCount = typename Mma::WarpCount;
  static int const kThreadCount = 32 * WarpCount::kCount;

  struct Params {
    cutlass::gemm::GemmCoord problem_size;
    cutlass::gemm::GemmCoord grid_tiled_shape;
    int swizzle_log_tile = 0;
    int gemm_k_size = 0;
    typename Mma::IteratorA::Params params_A;
    typename Mma::IteratorB::Params params_B;
    void const* ptr_A = nullptr;
    void const* ptr_B = nullptr;
    int* semaphore = nullptr;
    typename Visitor::Params visitor;
  };

  union SharedStorage {
    typename Mma::SharedStorage main_loop;
    typename Epilogue::SharedStorage epilogue;
  };

  CUTLASS_DEVICE
  static void invoke(Params const& params, SharedStorage& shared_storage) {
    SerialSplitKKernel op;
    op(params, shared_storage);
  }

  CUTLASS_DEVICE
  void operator()(Params const& params, SharedStorage& shared_storage) {
    Swizzle swizzle;
    cutlass::gemm::GemmCoord tile = swizzle.get_tile_offset(params.swizzle_log_tile);
    if (params.grid_tiled_shape.m() <= tile.m() || params.grid_tiled_shape.n() <= tile.n()) {
      return;
    }
    int const k_count = params.grid_tiled_shape.k();
    int const offset_k = tile.k() * params.gemm_k_size;
    int const k_end = (tile.k() + 1 < k_count) ? (tile.k() + 1) * params.gemm_k_size
                                               : params.problem_size.k();

    using ElementA = typename Mma::IteratorA::Element;
    using ElementB = typename Mma::IteratorB::Element;
    int const thread_idx = threadIdx.x;
    int const warp_idx = cutlass::canonical_warp_idx_sync();
    int const lane_idx = threadIdx.x % 32;

    typename Mma::IteratorA iterator_A(
        params.params_A, const_cast<ElementA*>(static_cast<ElementA const*>(params.ptr_A)),
        {params.problem_size.m(), k_end}, thread_idx,
        cutlass::MatrixCoord{tile.m() * Mma::Shape::kM, offset_k});
    typename Mma::IteratorB iterator_B(
        params.params_B, const_cast<ElementB*>(static_cast<ElementB const*>(params.ptr_B)),
        {k_end, params.problem_size.n()}, thread_idx,
        cutlass::MatrixCoord{offset_k, tile.n() * Mma::Shape::kN});

    Mma mma(shared_storage.main_loop, thread_idx, warp_idx, lane_idx);
    typename Mma::FragmentC accumulators;
    accumulators.clear();
    int const gemm_k_iterations = (k_end - offset_k + Mma::Shape::kK - 1) / Mma::Shape::kK;
    mma(gemm_k_iterations, accumulators, iterator_A, iterator_B, accumulators);

    cutlass::MatrixCoord threadblock_offset(tile.m() * Mma::Shape::kM,
                                            tile.n() * Mma::Shape::kN);
    typename Visitor::SharedStorage visitor_storage;
    Visitor visitor(params.visitor, visitor_storage, params.problem_size.mn(), thread_idx,
                    warp_idx, lane_idx, threadblock_offset);

    int const block_idx = tile.m() + tile.n() * params.grid_tiled_shape.m();
    cutlass::Semaphore semaphore(params.semaphore + block_idx, thread_idx);
    if (k_count > 1) {
      semaphore.fetch();
      visitor.set_k_partition(tile.k(), k_count);
      semaphore.wait(tile.k());
    }

    Epilogue epilogue(shared_storage.epilogue, thread_idx, warp_idx, lane_idx);
    epilogue(visitor, accumulators);

    if (k_count > 1) {
      // The last partition resets the semaphore so the buffer stays zero between launches.
      semaphore.release(tile.k() + 1 == k_count ? 0 : tile.k() + 1);
    }
  }
};

// ---------------------------------------------------------------------------------------
// Parallel split-K: f32 partials, then a memory-bound reduction that owns the epilogue
// ---------------------------------------------------------------------------------------

// Programmatic dependent launch (sm_90+): the reduction is launched with
// programmaticStreamSerializationAllowed and waits for the GEMM's memory before reading
// partials, so its launch overlaps the GEMM's tail. By default the GEMM triggers it
// implicitly (as its CTAs exit); with CUTLASS_SPLITK_PDL=early every GEMM CTA triggers at
// its start, so the reduction's CTAs become resident while the last wave runs. Both
// instructions are no-ops where the launch did not ask for PDL.
CUTLASS_DEVICE void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
CUTLASS_DEVICE void pdl_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// CUTLASS's cutlass::Kernel2 plus the optional early PDL trigger.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreadCount)
    partial_gemm_kernel(typename Kernel::Params params, bool trigger_early) {
  if (trigger_early) pdl_launch_dependents();
  extern __shared__ int smem[];
  Kernel::invoke(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
}

// Threads along x own one kV-vector of output each and sum its partitions with 16-byte,
// streamed (evict-first) loads, several partitions in flight. Only where there are too few
// vectors to fill the GPU do blockDim.y > 1 threads split the partitions between them and
// meet in shared memory (reduce_threads_y).
static int const kReduceThreadsX = 64;
static int const kReduceThreadsYMax = 4;
static int64_t const kReduceTargetThreads = 65536;

inline int reduce_threads_y(int64_t vectors, int partitions) {
  int y = 1;
  while (y < kReduceThreadsYMax && y < partitions && vectors * y < kReduceTargetThreads) y *= 2;
  return y;
}

template <class Cfg>
__global__ void __launch_bounds__(kReduceThreadsX* kReduceThreadsYMax)
    reduce_epilogue_kernel(typename FusedEpilogue<Cfg>::Params p, float const* partials,
                           int64_t ld, int64_t slice_stride, int slices) {
  using Epi = FusedEpilogue<Cfg>;
  static int const kV = Epi::kV;
  static int const kChunk = kV < 4 ? kV : 4;  // 16-byte loads where the vector allows
  using Vec = typename Epi::Vec;
  __shared__ Vec partial_sums[kReduceThreadsYMax - 1][kReduceThreadsX];

  int const vecs_per_row = p.n / kV;
  int const vec = blockIdx.x * kReduceThreadsX + threadIdx.x;
  bool const active = vec < p.m * vecs_per_row;
  int const row = active ? vec / vecs_per_row : 0;
  int const col = active ? (vec - row * vecs_per_row) * kV : 0;
  int const ys = blockDim.y;

  pdl_wait_primary();
  Vec acc;
  acc.clear();
  if (active) {
    float const* src = partials + int64_t(row) * ld + col;
#pragma unroll 4
    for (int s = threadIdx.y; s < slices; s += ys) {
      float const* q = src + s * slice_stride;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; i += kChunk) {
        cutlass::Array<float, kChunk> x = load_vec<float, kChunk, true>(q + i);
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < kChunk; ++j) acc[i + j] += x[j];
      }
    }
  }
  if (threadIdx.y > 0) partial_sums[threadIdx.y - 1][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y > 0 || !active) return;
  for (int y = 0; y < ys - 1; ++y) {
    Vec const& other = partial_sums[y][threadIdx.x];
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kV; ++i) acc[i] += other[i];
  }
  Epi::apply_and_store(p, row, col, acc);
}

// ---------------------------------------------------------------------------------------
// Host side: shared checks, then the two strategies
// ---------------------------------------------------------------------------------------

template <class Cfg>
struct Common {
  using Element = typename Cfg::Element;
  static int const kAlign = Cfg::kAlignment;
  using ParamsBase = cutlass::gemm::kernel::UniversalParamsBase<
      typename Cfg::Swizzle, typename Cfg::ThreadblockShape, Element, Element, Element,
      typename Cfg::LayoutA, typename Cfg::LayoutB>;

  // CUTLASS's own K partitioning (gemm_k_size rounded to the access / cache-line size), so
  // both strategies agree with GemmUniversal on how many partitions really run.
  static ParamsBase plan(CksArgs const& a) {
    cutlass::gemm::kernel::UniversalArgumentsBase args(
        cutlass::gemm::GemmUniversalMode::kGemm, {a.m, a.n, a.k}, a.split_k, 0);
    return ParamsBase(args, 0, 0);
  }

  // Checks shared by both strategies; returns an empty string when the problem can run.
  static std::string check(CksArgs const& a) {
    if (a.m <= 0 || a.n <= 0 || a.k <= 0)
      return "M, N, K must be positive (empty problems are handled by the caller)";
    if (a.split_k < 1) return "split_k must be >= 1";
    if (int64_t(a.m) * a.n >= (int64_t(1) << 31))
      return "M * N must be below 2^31";
    int const bytes = kAlign * int(sizeof(Element));
    if (!a.a || !aligned(a.a, bytes) || a.lda % kAlign || a.lda < a.k)
      return "A must be " + std::to_string(bytes) + "-byte aligned with lda a multiple of " +
             std::to_string(kAlign) + " and >= K";
    int64_t const b_contig = Cfg::kBColumnMajor ? a.k : a.n;
    if (!a.b || !aligned(a.b, bytes) || a.ldb % kAlign || a.ldb < b_contig)
      return "B must be " + std::to_string(bytes) + "-byte aligned with ldb a multiple of " +
             std::to_string(kAlign) + " and >= " + std::to_string(b_contig);
    if (a.k % kAlign)
      return "K = " + std::to_string(a.k) + " must be a multiple of " + std::to_string(kAlign);
    return std::string();
  }

  // Raises the kernel's dynamic shared memory limit once per device.
  template <class KernelFn>
  static int configure(KernelFn kernel, int smem_bytes) {
    static std::atomic<uint64_t> configured{0};
    if (smem_bytes < (48 << 10)) return CKS_OK;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return cuda_fail(err, "cudaGetDevice");
    uint64_t bit = uint64_t(1) << (device & 63);
    if (configured.load() & bit) return CKS_OK;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (err != cudaSuccess)
      return cuda_fail(err, ("cudaFuncSetAttribute(" + std::to_string(smem_bytes) +
                             " bytes of shared memory)").c_str());
    configured.fetch_or(bit);
    return CKS_OK;
  }

  // The library links its own (static) CUDA runtime, whose current device is separate from
  // the caller's: select the caller's device before touching the kernel or the stream.
  static int select_device(CksArgs const& a) {
    int current = -1;
    cudaError_t err = cudaGetDevice(&current);
    if (err == cudaSuccess && current != a.device) err = cudaSetDevice(a.device);
    return err == cudaSuccess ? CKS_OK : cuda_fail(err, "cudaSetDevice");
  }

  // Programmatic dependent launch between the partial GEMM and the reduction: on sm_90+
  // devices unless CUTLASS_SPLITK_PDL=0; CUTLASS_SPLITK_PDL=early also triggers it at the
  // start of every GEMM CTA (read at every launch, for A/B timing and debugging).
  enum class Pdl { kOff, kOn, kEarly };
  static Pdl pdl_mode(int device) {
    char const* env = std::getenv("CUTLASS_SPLITK_PDL");
    std::string const value = env ? env : "";
    if (value == "0") return Pdl::kOff;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();  // not sticky; do not let the launch check report it
      return Pdl::kOff;
    }
    if (major < 9) return Pdl::kOff;
    return value == "early" ? Pdl::kEarly : Pdl::kOn;
  }

  // CUTLASS's GemmUniversal kernel for this config with output element ElementC stored
  // kCountC at a time (the output type for serial, float partials for parallel; serial only
  // borrows its Mma and epilogue building blocks).
  template <class ElementC, int kCountC>
  using UniversalKernel = typename cutlass::gemm::kernel::DefaultGemmUniversal<
      Element, typename Cfg::LayoutA, cutlass::ComplexTransform::kNone, Cfg::kAlignment,
      Element, typename Cfg::LayoutB, cutlass::ComplexTransform::kNone, Cfg::kAlignment,
      ElementC, cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp,
      cutlass::arch::Sm80, typename Cfg::ThreadblockShape, typename Cfg::WarpShape,
      typename Cfg::InstructionShape,
      cutlass::epilogue::thread::LinearCombination<ElementC, kCountC, float, float>,
      typename Cfg::Swizzle, Cfg::kStages, cutlass::arch::OpMultiplyAdd>::GemmKernel;

  // can_implement + the K partitioning, shared by both strategies' query().
  static int query(CksArgs const& a, CksQuery& q) {
    if (int status = check_abi(a)) return status;
    std::string why = check(a);
    if (why.empty()) {
      typename FusedEpilogue<Cfg>::Params epi;
      why = FusedEpilogue<Cfg>::init_host(epi, a);
    }
    if (!why.empty()) return fail(CKS_ERROR_INVALID_PROBLEM, why);
    auto p = plan(a);
    q.k_partitions = p.grid_tiled_shape.k();
    q.tiles_m = p.grid_tiled_shape.m();
    q.tiles_n = p.grid_tiled_shape.n();
    q.semaphore_bytes = 0;
    q.partial_bytes = 0;
    return CKS_OK;
  }

  // A caller speaking another ABI gets CKS_ERROR_ABI, never "this variant cannot run".
  static int check_abi(CksArgs const& a) {
    if (a.abi_version == CKS_ABI_VERSION) return CKS_OK;
    return fail(CKS_ERROR_ABI, "ABI version " + std::to_string(a.abi_version) + " != library's " +
                                   std::to_string(CKS_ABI_VERSION) + ": rebuild the library");
  }

  static int launched(char const* what) {
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? CKS_OK : cuda_fail(err, what);
  }
};

template <class Cfg>
struct SerialGemm {
  using C = Common<Cfg>;
  using Element = typename Cfg::Element;
  using Base = typename C::template UniversalKernel<Element, Cfg::kAlignment>;
  using Visitor = SerialVisitor<Cfg, typename Base::Epilogue::OutputTileIterator>;
  using Epilogue = typename cutlass::epilogue::threadblock::EpilogueWithVisitorFromExistingEpilogue<
      Visitor, typename Base::Epilogue>::Epilogue;
  using Kernel = SerialSplitKKernel<typename Base::Mma, Epilogue, typename Cfg::Swizzle>;

  static int query(CksArgs const& a, CksQuery& q) {
    if (int status = C::query(a, q)) return status;
    q.semaphore_bytes = q.k_partitions > 1 ? int64_t(sizeof(int)) * q.tiles_m * q.tiles_n : 0;
    return CKS_OK;
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    CksQuery q{};
    int status = query(a, q);
    if (status != CKS_OK) return status;
    status = C::select_device(a);
    if (status != CKS_OK) return status;
    if (q.semaphore_bytes > a.semaphore_bytes || (q.semaphore_bytes && !a.semaphores))
      return fail(CKS_ERROR_WORKSPACE, "serial split-K needs " +
                                           std::to_string(q.semaphore_bytes) +
                                           " bytes of zeroed semaphores");
    auto plan = C::plan(a);
    typename Kernel::Params params;
    params.problem_size = plan.problem_size;
    params.grid_tiled_shape = plan.grid_tiled_shape;
    params.swizzle_log_tile = plan.swizzle_log_tile;
    params.gemm_k_size = plan.gemm_k_size;
    params.params_A = typename Kernel::Mma::IteratorA::Params(typename Cfg::LayoutA(a.lda));
    params.params_B = typename Kernel::Mma::IteratorB::Params(typename Cfg::LayoutB(a.ldb));
    params.ptr_A = a.a;
    params.ptr_B = a.b;
    params.semaphore = static_cast<int*>(a.semaphores);
    FusedEpilogue<Cfg>::init_host(params.visitor.epi, a);
    params.visitor.iterator = typename Visitor::OutputTileIterator::Params(
        cutlass::layout::RowMajor(Cfg::kPermute == Permute::kNone ? a.ldd : a.n));

    int smem = int(sizeof(typename Kernel::SharedStorage));
    status = C::configure(cutlass::Kernel2<Kernel>, smem);
    if (status != CKS_OK) return status;
    dim3 grid = Cfg::Swizzle::get_grid_shape(plan.grid_tiled_shape);
    cutlass::Kernel2<Kernel><<<grid, Kernel::kThreadCount, smem, stream>>>(params);
    return C::launched("serial split-K GEMM launch");
  }
};

template <class Cfg>
struct ParallelGemm {
  using C = Common<Cfg>;
  using Element = typename Cfg::Element;
  // float partials, 16-byte stores; the workspace's leading dimension is padded to match.
  static int const kPartialAlign = 4;
  using Kernel = typename C::template UniversalKernel<float, kPartialAlign>;

  static int64_t partial_ld(CksArgs const& a) {
    return (int64_t(a.n) + kPartialAlign - 1) / kPartialAlign * kPartialAlign;
  }

  static int query(CksArgs const& a, CksQuery& q) {
    if (int status = C::query(a, q)) return status;
    q.partial_bytes = int64_t(sizeof(float)) * q.k_partitions * a.m * partial_ld(a);
    return CKS_OK;
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    CksQuery q{};
    int status = query(a, q);
    if (status != CKS_OK) return status;
    status = C::select_device(a);
    if (status != CKS_OK) return status;
    if (q.partial_bytes > a.partial_bytes || !a.partials || !aligned(a.partials, 16))
      return fail(CKS_ERROR_WORKSPACE, "parallel split-K needs " +
                                           std::to_string(q.partial_bytes) +
                                           " bytes of 16-byte aligned float32 partials");
    int64_t const ld = partial_ld(a);
    int64_t const slice_stride = int64_t(a.m) * ld;
    typename Kernel::Arguments args(
        cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel, {a.m, a.n, a.k}, a.split_k,
        {1.f, 0.f}, a.a, a.b, nullptr, a.partials, 0, 0, 0, slice_stride, a.lda, a.ldb, ld, ld);
    typename Kernel::Params params(args, 0, 0);
    if (params.grid_tiled_shape.k() != q.k_partitions)
      return fail(CKS_ERROR_INTERNAL, "partition count mismatch");

    typename C::Pdl const pdl = C::pdl_mode(a.device);
    int smem = int(sizeof(typename Kernel::SharedStorage));
    status = C::configure(partial_gemm_kernel<Kernel>, smem);
    if (status != CKS_OK) return status;
    dim3 grid = Cfg::Swizzle::get_grid_shape(params.grid_tiled_shape);
    partial_gemm_kernel<Kernel><<<grid, Kernel::kThreadCount, smem, stream>>>(
        params, pdl == C::Pdl::kEarly);
    status = C::launched("parallel split-K partial GEMM launch");
    if (status != CKS_OK) return status;

    typename FusedEpilogue<Cfg>::Params epi;
    FusedEpilogue<Cfg>::init_host(epi, a);
    int64_t const vectors = int64_t(a.m) * (a.n / Cfg::kAlignment);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(unsigned((vectors + kReduceThreadsX - 1) / kReduceThreadsX));
    config.blockDim = dim3(kReduceThreadsX, reduce_threads_y(vectors, q.k_partitions));
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = pdl == C::Pdl::kOff ? 0 : 1;
    // A failed launch is also recorded as CUDA's last error; launched() reads and clears it,
    // as for the other launches, so it cannot surface in a later call.
    cudaLaunchKernelEx(&config, reduce_epilogue_kernel<Cfg>, epi, static_cast<float const*>(a.partials), ld,
                       slice_stride, int(q.k_partitions));
    return C::launched("parallel split-K reduction launch");
  }
};

}  // namespace cks
