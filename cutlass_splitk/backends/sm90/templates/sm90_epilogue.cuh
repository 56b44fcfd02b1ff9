// cutlass-splitk sm90 backend: the fused epilogue of the in-kernel modes (serial split-K,
// stream-K), as a CUTLASS 3.x collective epilogue (wrapped by CUTLASS's adapter for the
// warp-specialized kernels). It applies the shared FusedEpilogue, so it computes exactly what
// the sm80 backend and the parallel reduction compute.
#pragma once

#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/detail.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/pipeline/sm90_pipeline.hpp"

#include "cks_epilogue.cuh"

namespace cks {
namespace sm90 {

// Which L2 prefetches of the epilogue's sources (E, beta * C) run, a bit each:
//   1: each consumer warp prefetches its rows of the tile when its epilogue starts;
//   2: the epilogue-load warp prefetches the next tile's rows when the consumers start its
//      main loop (paced by a one-stage pipeline: the tile before must be finished).
#ifndef CKS_SM90_EPI_PREFETCH
#define CKS_SM90_EPI_PREFETCH 0
#endif

// Starts bringing `bytes` (a multiple of 16) from a 16-byte aligned global address into L2;
// nothing waits for it.
CUTLASS_DEVICE void prefetch_l2(void const* ptr, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(ptr), "r"(bytes) : "memory");
#endif
}

// The epilogue's per-element sources of a tile (beta * C and E; the bias is a row of the tile
// width, re-read by every tile, so it stays in L2 anyway).
template <class Cfg>
struct SourcePrefetch {
  using Params = typename FusedEpilogue<Cfg>::Params;

  CUTLASS_DEVICE static bool needed(Params const& p) {
    return p.beta != 0.f || (Cfg::kEOp != EOp::kNone && p.e != nullptr);
  }

  // Rows [row, row + rows) of the tile whose first column is col, split over `lanes` threads:
  // whole row segments, clipped to M and N (C and E rows are 16-byte aligned and N is a
  // multiple of 8, so every segment is a multiple of 16 bytes).
  CUTLASS_DEVICE static void rows(Params const& p, int row, int rows, int col, int lane, int lanes) {
    int const cols = min(Cfg::kTileCols, p.n - col);
    if (cols <= 0) return;
    int const bytes = cols * int(sizeof(typename Cfg::Element));
    int const end = min(row + rows, p.m);
    for (int r = row + lane; r < end; r += lanes) {
      if (p.beta != 0.f) prefetch_l2(p.c + int64_t(r) * p.ldc + col, bytes);
      if constexpr (Cfg::kEOp != EOp::kNone) {
        if (p.e) prefetch_l2(p.e + int64_t(r) * p.lde + col, bytes);
      }
    }
  }
};

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
    // Whether this warp holds values of a row block (folds to a constant once the loops unroll).
    auto holds = [&](int block) {
      bool mine = false;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kValues; i += 2) mine |= ((get<0>(coords(i)) - row0) & ~(kRows - 1)) == block;
      return mine;
    };
#if CKS_SM90_EPI_PREFETCH & 1
    // Every source row this warp reads, requested at once: the chunks below then wait on L2,
    // not on one DRAM round trip each.
    if (SourcePrefetch<Cfg>::needed(params_.epi)) {
      CUTLASS_PRAGMA_UNROLL
      for (int block = 0; block < kBlocksM; block += kRows) {
        if (holds(block))
          SourcePrefetch<Cfg>::rows(params_.epi, tile_row + (row0 & ~(kRows - 1)) + block, kRows, tile_col, lane, 32);
      }
    }
#endif
#if CKS_SM90_EPI_PREFETCH & 4
    // The sources of the next chunk this warp holds, loaded before this chunk is applied.
    typename Epi::Sources ahead[kVectorsPerLane];
    bool primed = false;
    auto fetch = [&](int block, int chunk, typename Epi::Sources(&into)[kVectorsPerLane]) {
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kVectorsPerLane; ++h) {
        int const v = lane + 32 * h;
        int const row = tile_row + (row0 & ~(kRows - 1)) + block + v / (kCols / kV);
        int const col = tile_col + (col0 & ~7) + chunk + (v % (kCols / kV)) * kV;
        if (row < M && col < N) Epi::load_sources(params_.epi, row, col, into[h]);
      }
    };
#endif
    CUTLASS_PRAGMA_UNROLL
    for (int block = 0; block < kBlocksM; block += kRows) {
      CUTLASS_PRAGMA_UNROLL
      for (int chunk = 0; chunk < kTileN; chunk += kCols) {
        // Stage this thread's values of (row block, column chunk). Which values those are is
        // known at compile time once the loops unroll: dr, dc fold to constants.
        bool any = false;
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kValues; i += 2) {
          int const dr = get<0>(coords(i)) - row0;
          int const dc = get<1>(coords(i)) - col0;
          if ((dr & ~(kRows - 1)) == block && (dc & ~(kCols - 1)) == chunk) {
            any = true;
            int const r = (row0 & (kRows - 1)) + (dr & (kRows - 1));
            int const c = (col0 & 7) + (dc & (kCols - 1));
            *reinterpret_cast<float2*>(stage + r * kStride + c) =
                make_float2(accumulators(i), accumulators(i + 1));
          }
        }
        if (!any) continue;  // uniform: the same for every lane of the warp
        __syncwarp();
        int const row_base = tile_row + (row0 & ~(kRows - 1)) + block;
        int const col_base = tile_col + (col0 & ~7) + chunk;
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
#if !(CKS_SM90_EPI_PREFETCH & 4)
          if (rows[h] < M && cols[h] < N) Epi::load_sources(params_.epi, rows[h], cols[h], sources[h]);
#endif
        }
        __syncwarp();  // the stage is rewritten by the next chunk
#if CKS_SM90_EPI_PREFETCH & 4
        if (!primed) fetch(block, chunk, ahead);
        primed = true;
        CUTLASS_PRAGMA_UNROLL
        for (int h = 0; h < kVectorsPerLane; ++h) sources[h] = ahead[h];
        {
          int next_block = block, next_chunk = chunk + kCols;
          if (next_chunk == kTileN) {
            next_chunk = 0;
            next_block = kBlocksM;
            CUTLASS_PRAGMA_UNROLL
            for (int b = kBlocksM - kRows; b > block; b -= kRows)
              if (holds(b)) next_block = b;
          }
          if (next_block < kBlocksM) fetch(next_block, next_chunk, ahead);
        }
#endif
        CUTLASS_PRAGMA_UNROLL
        for (int h = 0; h < kVectorsPerLane; ++h) {
          if (rows[h] < M && cols[h] < N)  // N is a multiple of 8: a vector is in or out
            Epi::apply_and_store(params_.epi, rows[h], cols[h], sources[h], values[h]);
        }
      }
    }
  }

 protected:
  Params params_;
};

// FusedWarpEpilogue in CUTLASS's warp-specialized kernels: CUTLASS's adapter for operator-style
// epilogues, plus an epilogue-load warp that prefetches each tile's sources into L2 while the
// consumers run the tile's main loop. A one-stage pipeline paces it: the prefetch of tile j
// waits until the consumers released tile j - 1 (two stages for ping-pong, whose two consumer
// warpgroups take alternate tiles), so the rows arrive one main loop ahead, not the whole
// CTA's tiles at once. Consumers wait on it only when there is something to prefetch (the
// kernel runs the load warp only then).
template <class Cfg>
class DirectEpilogue
    : public cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<FusedWarpEpilogue<Cfg>> {
  using Base = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<FusedWarpEpilogue<Cfg>>;

 public:
  static constexpr int kLoadStages = Cfg::kCooperative ? 1 : 2;
  using LoadPipeline = cutlass::PipelineAsync<kLoadStages>;
  using LoadPipelineState = cutlass::PipelineState<kLoadStages>;
  using PipelineStorage = typename LoadPipeline::SharedStorage;
  using TensorStorage = typename Base::TensorStorage;
  using StorePipeline = typename Base::StorePipeline;
  using StorePipelineState = typename Base::StorePipelineState;
  // Shared memory the main loop's stage count must leave free.
  static constexpr int kCarveoutBytes = int(sizeof(TensorStorage) + sizeof(PipelineStorage));

  using Base::Base;

  CUTLASS_DEVICE bool is_producer_load_needed() const {
    return (CKS_SM90_EPI_PREFETCH & 2) && SourcePrefetch<Cfg>::needed(this->params_.epi);
  }

  template <class ProblemShapeMNKL, class TileShapeMNK, class TileCoordMNKL, class TiledMma>
  CUTLASS_DEVICE LoadPipelineState load(LoadPipeline pipeline, LoadPipelineState state, ProblemShapeMNKL,
                                        TileShapeMNK tile_shape, TileCoordMNKL tile_coord, TiledMma, int thread_idx,
                                        TensorStorage&, int = -1) {
    using namespace cute;
    pipeline.producer_acquire(state);
    int const row = int(get<0>(tile_coord)) * int(size<0>(tile_shape));
    int const col = int(get<1>(tile_coord)) * int(size<1>(tile_shape));
    SourcePrefetch<Cfg>::rows(this->params_.epi, row, Cfg::kTileRows, col, thread_idx % 32, 32);
    pipeline.producer_commit(state);
    ++state;
    return state;
  }

  CUTLASS_DEVICE LoadPipelineState load_tail(LoadPipeline pipeline, LoadPipelineState state) {
    pipeline.producer_tail(state);  // every stage released: no arrival outlives this warp's turn
    return state;
  }

  template <class ProblemShapeMNKL, class TileShapeMNK, class TileCoordMNKL, class AccEngine, class AccLayout,
            class TiledMma>
  CUTLASS_DEVICE auto store(LoadPipeline pipeline, LoadPipelineState load_state, StorePipeline,
                            StorePipelineState store_state, ProblemShapeMNKL problem_shape, TileShapeMNK tile_shape,
                            TileCoordMNKL tile_coord, cute::Tensor<AccEngine, AccLayout> accumulators,
                            TiledMma tiled_mma, int thread_idx, TensorStorage& shared, int = -1) {
    bool const paced = is_producer_load_needed();
    if (paced) pipeline.consumer_wait(load_state);
    (*this)(problem_shape, tile_shape, tile_coord, accumulators, tiled_mma, cute::make_tuple(0, 0, 0), thread_idx,
            reinterpret_cast<char*>(&shared));
    if (paced) pipeline.consumer_release(load_state);
    ++load_state;
    return cute::make_tuple(load_state, store_state);
  }

  CUTLASS_DEVICE auto store_tail(LoadPipeline, LoadPipelineState load_state, StorePipeline,
                                 StorePipelineState store_state) {
    return cute::make_tuple(load_state, store_state);
  }
};

}  // namespace sm90
}  // namespace cks
