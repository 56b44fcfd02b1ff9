// cutlass-splitk sm80 backend, serial split-K (GemmSplitKSerial semantics): an epilogue
// visitor that applies the shared FusedEpilogue partition by partition, and the kernel that
// runs CUTLASS's multistage main loop and chains the partitions through a per-tile semaphore.
//
// The running partial between partitions is float32, in the workspace's partials (M rows of
// partial_ld floats, unpermuted); only the last partition writes D. (It used to live in D, in
// the output type, as CUTLASS's GemmSplitKSerial keeps it: one bf16 rounding per partition,
// which the config fuzzer caught at split 32 with a sigmoid, element errors up to 0.44 of the
// output's scale.)
#pragma once

#include <cstdint>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"
#include "cutlass/matrix_coord.h"
#include "cutlass/semaphore.h"
#include "cutlass/gemm/gemm.h"

#include "cks_epilogue.cuh"

namespace cks {

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
    float* partials = nullptr;  // the running partial (when the K extent is split)
    int64_t partial_ld = 0;
  };

  // The running partial is accessed 4 floats (16 bytes) at a time, or the whole vector when
  // it is shorter: partial_ld is a multiple of 4 and columns are multiples of the vector.
  static int const kChunk = kElementsPerAccess < 4 ? kElementsPerAccess : 4;
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
    int64_t const at = int64_t(row) * params_.partial_ld + col;  // in the partials (split K only)
    if (first_) {
      Epi::add_source(p, row, col, v);
    } else {
      // Running partial written by the previous partition (another CTA): bypass L1.
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < kElementsPerAccess; c += kChunk) {
        cutlass::Array<float, kChunk> part = load_vec<float, kChunk, true>(params_.partials + at + c);
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kChunk; ++i) v[c + i] += part[i];
      }
    }
    if (last_) {
      Epi::finish(p, row, col, v);
      store_vec<ElementOutput, kElementsPerAccess>(p.d + Epi::offset_d(p, row, col), v);
    } else {
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < kElementsPerAccess; c += kChunk) {
        cutlass::Array<float, kChunk> part;
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kChunk; ++i) part[i] = v[c + i];
        store_vec<float, kChunk>(params_.partials + at + c, part);
      }
    }
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

}  // namespace cks
