// cutlass-splitk sm90 backend: the fused epilogue of the in-kernel modes (serial split-K,
// stream-K) for ops with E or a permuted store (the others take CUTLASS's TMA epilogue,
// sm90_tma_epilogue.cuh), as a CUTLASS 3.x collective epilogue (wrapped by CUTLASS's adapter for
// the warp-specialized kernels). It applies the shared FusedEpilogue, so it computes exactly what
// the sm80 backend and the parallel reduction compute.
#pragma once

#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/detail.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/epilogue/thread/linear_combination.h"

#include "cks_epilogue.cuh"

namespace cks {
namespace sm90 {

// Starts bringing `bytes` (a multiple of 16) from a 16-byte aligned global address into L2;
// nothing waits for it.
CUTLASS_DEVICE void prefetch_l2(void const* ptr, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(ptr), "r"(bytes) : "memory");
#endif
}

// ---------------------------------------------------------------------------------------
// The whole fused epilogue, from the accumulators, through a small per-warp shared-memory
// transpose: a wgmma accumulator fragment holds pairs of adjacent columns, so each warp
// stages a 16-row x kCols block of its fragment, then every lane reads back whole 8-column
// vectors and applies FusedEpilogue with 16-byte loads and stores at the final (possibly
// permuted) address. No barrier beyond __syncwarp: the warps are independent. Runs once per
// output tile, on the finished f32 sum (the stream-K scheduler's fix-up has added the other
// K partitions).
// ---------------------------------------------------------------------------------------
template <class Cfg>
class FusedWarpEpilogue {
 public:
  using Epi = FusedEpilogue<Cfg>;
  static constexpr int kV = Cfg::kAlignment;  // 8
  static constexpr int kTileN = Cfg::kTileCols;
  // Accumulator values per thread (both consumer warpgroups share the tile in the cooperative
  // kernel; a ping-pong warpgroup holds a whole tile).
  static constexpr int kValues = Cfg::kTileRows * kTileN / (Cfg::kCooperative ? 256 : 128);
  // Columns staged at a time: fewer where the accumulators already fill the registers.
  static constexpr int kCols = (kTileN % 64 == 0 && kValues < 128) ? 64 : 32;
  static constexpr int kRows = 16;                          // a warp's rows in one wgmma atom
  static constexpr int kStride = kCols + 4;                 // floats; 16-byte rows, few conflicts
  static constexpr int kConsumerWarps = 8;                  // two consumer warpgroups
  static constexpr int kVectorsPerLane = kRows * kCols / kV / 32;
  // Whether a warp requests all its source rows (E, beta * C) into L2 when the epilogue starts,
  // so that its chunks wait on L2 instead of one DRAM round trip each. Measured on the H100
  // (benchmarks/explore_sm90_r8.yaml): 4-12 % faster on cooperative tiles with 256-byte rows
  // where the epilogue weighs (K <= 2048, large M*N), neutral on long K; slower with 64- and
  // 128-byte rows (many small bulk prefetches beside the TMA loads). Ping-pong tiles, whose
  // epilogue overlaps the other warpgroup's main loop, are left out (only a 64-byte-row one
  // was measured, and it was slower).
  static constexpr bool kPrefetchSources =
      Cfg::kCooperative && kTileN * int(sizeof(typename Cfg::Element)) >= 256;
  static_assert(kTileN % kCols == 0, "tile N must be a multiple of 32");

  using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
  using DispatchPolicy = EpilogueSchedule;
  using ElementOutput = typename Cfg::Element;
  using ElementAccumulator = float;
  using ElementCompute = float;
  using ElementScalar = float;
  using ElementC = typename Cfg::Element;
  using ElementD = typename Cfg::Element;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;
  using StrideD = StrideC;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  // Only named by GemmUniversalAdapter (EpilogueOutputOp); the epilogue is FusedEpilogue.
  using ThreadEpilogueOp = cutlass::epilogue::thread::LinearCombination<ElementD, kV, float, float>;

  struct SharedStorage {
    alignas(16) float stage[kConsumerWarps][kRows * kStride];
  };
  using TensorStorage = SharedStorage;
  struct Arguments {
    typename Epi::Params epi;
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
  }

  CUTLASS_HOST_DEVICE
  FusedWarpEpilogue(Params const& params, SharedStorage const& = SharedStorage()) : params_(params) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine,
            class FrgLayout, class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_MNK,
                                 BlockCoordMNKL blk_coord_mnkl,
                                 cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char* smem) {
    using namespace cute;
    int const M = int(get<0>(problem_shape_mnkl));
    int const N = int(get<1>(problem_shape_mnkl));
    int const tile_row = int(get<0>(blk_coord_mnkl)) * int(size<0>(blk_shape_MNK));
    int const tile_col = int(get<1>(blk_coord_mnkl)) * int(size<1>(blk_shape_MNK));

    // Tile-relative coordinates of this thread's values: a thread-dependent base plus
    // compile-time offsets (the identity tensor has a static shape).
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor coords = thr_mma.partition_C(make_identity_tensor(take<0, 2>(blk_shape_MNK)));
    int const row0 = get<0>(coords(0));
    int const col0 = get<1>(coords(0));
    int const lane = int(threadIdx.x % 32);
    int const slot = (cutlass::canonical_warp_idx_sync() - 4) % kConsumerWarps;  // warps 4..11 consume
    float* stage = reinterpret_cast<SharedStorage*>(smem)->stage[slot];

    static_assert(decltype(size(accumulators))::value == kValues, "accumulators per thread");
    constexpr int kBlocksM = decltype(size<0>(blk_shape_MNK))::value;  // upper bound on row blocks
    // Whether this warp holds values of (row block, column chunk), and staging them (both fold to
    // compile-time code once the loops unroll: dr, dc are constants).
    auto holds = [&](int block, int chunk) {
      bool any = false;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kValues; i += 2) {
        int const dr = get<0>(coords(i)) - row0, dc = get<1>(coords(i)) - col0;
        any |= (dr & ~(kRows - 1)) == block && (dc & ~(kCols - 1)) == chunk;
      }
      return any;
    };
    auto stage_values = [&](int block, int chunk) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kValues; i += 2) {
        int const dr = get<0>(coords(i)) - row0;
        int const dc = get<1>(coords(i)) - col0;
        if ((dr & ~(kRows - 1)) == block && (dc & ~(kCols - 1)) == chunk) {
          int const r = (row0 & (kRows - 1)) + (dr & (kRows - 1));
          int const c = (col0 & 7) + (dc & (kCols - 1));
          *reinterpret_cast<float2*>(stage + r * kStride + c) = make_float2(accumulators(i), accumulators(i + 1));
        }
      }
    };
    // The staged chunk: read back as whole vectors, the sources loaded, the epilogue applied.
    auto finish = [&](int row_base, int col_base) {
      __syncwarp();
      typename Epi::Sources sources[kVectorsPerLane];
      typename Epi::Vec values[kVectorsPerLane];
      int rows[kVectorsPerLane], cols[kVectorsPerLane];
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kVectorsPerLane; ++h) {
        int const v = lane + 32 * h;
        int const r = v / (kCols / kV);
        int const c = (v % (kCols / kV)) * kV;
        float4 const* src = reinterpret_cast<float4 const*>(stage + r * kStride + c);
        CUTLASS_PRAGMA_UNROLL
        for (int q = 0; q < kV / 4; ++q) {
          float4 x = src[q];
          values[h][4 * q] = x.x;
          values[h][4 * q + 1] = x.y;
          values[h][4 * q + 2] = x.z;
          values[h][4 * q + 3] = x.w;
        }
        rows[h] = row_base + r;
        cols[h] = col_base + c;
        if (rows[h] < M && cols[h] < N) Epi::load_sources(params_.epi, rows[h], cols[h], sources[h]);
      }
      __syncwarp();  // the stage is rewritten by the next chunk
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kVectorsPerLane; ++h) {
        if (rows[h] < M && cols[h] < N)  // N is a multiple of 8: a vector is in or out
          Epi::apply_and_store(params_.epi, rows[h], cols[h], sources[h], values[h]);
      }
    };
    int const warp_row = tile_row + (row0 & ~(kRows - 1));
    if constexpr (kPrefetchSources) {  // a warp holds every column chunk of its row blocks
      CUTLASS_PRAGMA_UNROLL
      for (int block = 0; block < kBlocksM; block += kRows) {
        if (holds(block, 0) && lane < kRows) prefetch_row(warp_row + block + lane, tile_col, M, N);
      }
    }
    // One copy of the epilogue's code, run once per (block, chunk) pair this warp holds; only the
    // staging of each pair (compile-time register indices) is unrolled. Fully unrolled, the
    // epilogue's code was long enough to stall the warps on instruction fetch; looped, it is 2-5 %
    // faster where the epilogue weighs (H100, benchmarks/explore_sm90_r8.yaml, round 11).
    int pairs = 0;
    CUTLASS_PRAGMA_UNROLL
    for (int block = 0; block < kBlocksM; block += kRows) {
      CUTLASS_PRAGMA_UNROLL
      for (int chunk = 0; chunk < kTileN; chunk += kCols) pairs += holds(block, chunk);
    }
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < pairs; ++t) {
      int row_base = 0, col_base = 0, pair = 0;
      CUTLASS_PRAGMA_UNROLL
      for (int block = 0; block < kBlocksM; block += kRows) {
        CUTLASS_PRAGMA_UNROLL
        for (int chunk = 0; chunk < kTileN; chunk += kCols) {
          if (!holds(block, chunk)) continue;
          if (pair == t) {
            stage_values(block, chunk);
            row_base = warp_row + block;
            col_base = tile_col + (col0 & ~7) + chunk;
          }
          ++pair;
        }
      }
      finish(row_base, col_base);
    }
  }

 private:
  // One row of E and C (if read) across the tile's width, into L2: clipped to M and N (C and E rows
  // are 16-byte aligned and N is a multiple of 8, so a segment is a multiple of 16 bytes).
  CUTLASS_DEVICE void prefetch_row(int row, int tile_col, int M, int N) const {
    typename Epi::Params const& p = params_.epi;
    int const bytes = min(kTileN, N - tile_col) * int(sizeof(typename Cfg::Element));
    if (row >= M || bytes <= 0) return;
    if (p.beta != 0.f) prefetch_l2(p.c + int64_t(row) * p.ldc + tile_col, bytes);
    if constexpr (Cfg::kEOp != EOp::kNone) {
      if (p.e) prefetch_l2(p.e + int64_t(row) * p.lde + tile_col, bytes);
    }
  }

  Params params_;
};

template <class Cfg>
using DirectEpilogue =
    cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<FusedWarpEpilogue<Cfg>>;

}  // namespace sm90
}  // namespace cks
