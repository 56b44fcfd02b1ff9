// cutlass-splitk sm90 backend: CUTLASS's TMA + wgmma main loop with an L2 eviction policy on the
// weight's loads. CUTLASS's collective issues every TMA load with EVICT_NORMAL. StreamingMainloop is
// that collective (everything inherited: consumers, pipeline, descriptors) with its parameters
// carrying one L2 policy per operand and its producer's load() passing them to the TMA copies. The
// policies stay EVICT_NORMAL unless the launch code sets them for the problem (set_l2_policy):
//
// the op's B, a weight, is streamed with EVICT_FIRST when each of its bytes is read by one TMA load
// of the launch (the tiles along the op's M fit in one cluster, which multicasts them: the decode
// and projection shapes) and it is at least the L2's size (no later call could find it in L2
// anyway). Dead once loaded, its lines then leave L2 before what is still read or was just written
// (the op's A, the partials, the outputs). Where several clusters read a weight tile, EVICT_FIRST
// loses that reuse (up to 30 % slower); a weight that fits in L2 stays there between calls
// (1 x 4096 x 4096 as graph replays: 11.3 us with EVICT_NORMAL, 15.4 with EVICT_FIRST).
//
// Measured on the H100 (BENCHMARKS.md, session 18): the same bits; the kernel alone unchanged (ncu,
// L2 invalidated); with L2 holding data (graph replays, a bench loop) the decode and projection picks
// 2-12 % faster, from a cold and clean L2 the same to 1-4 % slower. EVICT_LAST on the activations
// looked 2-4 % faster in flushed timings but not in ncu nor in isolation: its lines outlive the
// benchmark's flush, a measurement artefact; not used.
#pragma once

#include <cstdint>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace cks {
namespace sm90 {

// Base: cutlass::gemm::collective::CollectiveMma<MainloopSm90TmaGmmaWarpSpecialized<...>, ...>
// (what the collective builder gives f16 / bf16 with TMA, cooperative or ping-pong). kSwapAB: the
// kernel's A is the op's B (GemmConfig::kSwapAB), so the weight is A and its readers run along N.
//
// kSliced (parallel split-K's partial GEMM): the kernel's problem is (M, N, slice, slices), batch l
// the K columns [l * slice, (l + 1) * slice) of one A and one B of `k_total` columns (Arguments), the
// slice a whole number of k-tiles. The TMA descriptors span the whole K and the producer's tensors
// view it as (slice, slices), so the last slice, shorter where the slices overrun K, reads zeros past
// K (TMA's out-of-bounds fill): any split is one launch.
template <class Base, bool kSwapAB, bool kSliced = false>
struct StreamingMainloop : Base {
  struct SlicedArguments : Base::Arguments {
    int k_total = 0;  // the columns of A (rows of B) that the slices cover
  };
  using Arguments = typename cutlass::platform::conditional<kSliced, SlicedArguments, typename Base::Arguments>::type;
  using typename Base::DispatchPolicy;
  using typename Base::GmemTiledCopyA;
  using typename Base::GmemTiledCopyB;
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  using typename Base::TileShape;
  using ClusterShape = typename DispatchPolicy::ClusterShape;
  using Hint = cute::TMA::CacheHintSm90;
  // One wgmma across the tile N (sm90_wide_mma.cuh replaces the builder's narrower instruction
  // for widths outside CUTLASS's standard set; 50-100x slower without, BENCHMARKS.md session 36).
  static_assert(cute::size<1>(typename Base::TiledMma::AtomShape_MNK{}) == cute::size<1>(TileShape{}),
                "the wgmma instruction does not span the tile N: take the main loop from cks::sm90::Mainloop "
                "(sm90_config.cuh), which widens it");

  struct Params : Base::Params {
    Hint hint_a = Hint::EVICT_NORMAL;
    Hint hint_b = Hint::EVICT_NORMAL;
    int k_total = 0;  // kSliced: the descriptors' K
  };

  // CUTLASS's parameters, with CUTLASS's policy until the launch code sets the problem's; kSliced:
  // the descriptors over (M, k_total, 1) and (N, k_total, 1).
  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& problem_shape, Arguments const& args, void* workspace) {
    Params params;
    if constexpr (kSliced) {  // (M, N, slice, slices) -> the descriptors' (M, N, k_total, 1)
      auto const whole = cute::make_shape(cute::get<0>(problem_shape), cute::get<1>(problem_shape), args.k_total, 1);
      static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(whole, args, workspace);
      params.k_total = args.k_total;
    } else {
      static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(problem_shape, args, workspace);
    }
    return params;
  }

  // A TMA coordinate tensor over (rows, k_total, 1) as (rows, slice, slices).
  template <class Full>
  CUTLASS_DEVICE static auto as_slices(Full const& full, int rows, int slice, int slices) {
    using namespace cute;
    auto const d = full.layout().stride();
    return make_tensor(full.data(), make_layout(make_shape(rows, slice, slices),
                                                make_stride(get<0>(d), get<1>(d), get<1>(d) * slice)));
  }

  // The producer's global tensors, (BLK,BLK_K,tiles,k,l) for A and B; kSliced: each descriptor's
  // (rows, k_total, 1) coordinates viewed as (rows, slice, slices), K's stride repeated slice-fold for
  // l, so that batch l starts at column l * slice (CUTLASS's kernels take the k-tile count from here).
  template <class ProblemShape_MNKL>
  CUTLASS_DEVICE auto load_init(ProblemShape_MNKL const& problem_shape_MNKL, Params const& params) const {
    if constexpr (kSliced) {
      using namespace cute;
      using X = Underscore;
      int const m = get<0>(problem_shape_MNKL), n = get<1>(problem_shape_MNKL);
      int const slice = get<2>(problem_shape_MNKL), slices = get<3>(problem_shape_MNKL);
      Tensor mA_mkl = as_slices(params.tma_load_a.get_tma_tensor(make_shape(m, params.k_total, 1)), m, slice, slices);
      Tensor mB_nkl = as_slices(params.tma_load_b.get_tma_tensor(make_shape(n, params.k_total, 1)), n, slice, slices);
      Tensor gA_mkl = local_tile(mA_mkl, TileShape{}, make_coord(_, _, _), Step<_1, X, _1>{});  // (BLK_M,BLK_K,m,k,l)
      Tensor gB_nkl = local_tile(mB_nkl, TileShape{}, make_coord(_, _, _), Step<X, _1, _1>{});  // (BLK_N,BLK_K,n,k,l)
      return make_tuple(gA_mkl, gB_nkl);
    } else {
      return Base::load_init(problem_shape_MNKL, params);
    }
  }

  // Clusters of tiles along the kernel's dimension `dim` (0: M, 1: N) over `extent`.
  template <int dim>
  static int clusters(int extent) {
    int const tile = cute::size<dim>(TileShape{}), cluster = cute::size<dim>(ClusterShape{});
    return ((extent + tile - 1) / tile + cluster - 1) / cluster;
  }

  // The policies for a problem of the kernel's shape (m, n) whose weight (the op's B: the kernel's B,
  // or its A when swapped) has `weight_bytes`, on a GPU with `l2_bytes` of L2 (0: unknown, CUTLASS's
  // policy kept).
  static void set_l2_policy(Params& params, int m, int n, int64_t weight_bytes, int64_t l2_bytes) {
    // The weight's tiles are re-read along the kernel's M (swapped: N).
    int const readers = kSwapAB ? clusters<1>(n) : clusters<0>(m);
    Hint const weight = l2_bytes > 0 && readers == 1 && weight_bytes >= l2_bytes ? Hint::EVICT_FIRST : Hint::EVICT_NORMAL;
    (kSwapAB ? params.hint_a : params.hint_b) = weight;
  }

  // The producer's loop: CUTLASS's load() (sm90_mma_tma_gmma_ss_warpspecialized.hpp), the same
  // partitioning, multicast masks and pipeline protocol, with the policies on the two copies.
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB> const& load_inputs, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int /*thread_idx*/,
                           uint32_t block_rank_in_cluster, TensorStorage& shared_tensors) {
    using namespace cute;
    if (!elect_one_sync()) return;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    constexpr uint32_t cluster_x = size<0>(ClusterShape{});
    uint32_t const block_x = block_rank_in_cluster % cluster_x;
    uint32_t const block_y = block_rank_in_cluster / cluster_x;
    auto block_tma_a = params.tma_load_a.get_slice(block_y);
    auto block_tma_b = params.tma_load_b.get_slice(block_x);
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    Tensor tAgA = block_tma_a.partition_S(get<0>(load_inputs)(_, _, m_coord, _, l_coord));  // (TMA,TMA_M,TMA_K,k)
    Tensor tAsA = block_tma_a.partition_D(sA);                                                // (TMA,TMA_M,TMA_K,PIPE)
    Tensor tBgB = block_tma_b.partition_S(get<1>(load_inputs)(_, _, n_coord, _, l_coord));  // (TMA,TMA_N,TMA_K,k)
    Tensor tBsB = block_tma_b.partition_D(sB);                                                // (TMA,TMA_N,TMA_K,PIPE)

    // A's tile goes to the cluster's blocks of the same row, B's to those of the same column.
    auto block_layout = Layout<ClusterShape>{};  // (m,n) -> block id
    uint16_t mcast_mask_a = 0, mcast_mask_b = 0;
    if constexpr (is_same_v<GmemTiledCopyA, SM90_TMA_LOAD_MULTICAST>) {
      for (int n = 0; n < size<1>(block_layout); ++n) mcast_mask_a |= uint16_t(1) << block_layout(block_x, n, Int<0>{});
    }
    if constexpr (is_same_v<GmemTiledCopyB, SM90_TMA_LOAD_MULTICAST>) {
      for (int m = 0; m < size<0>(block_layout); ++m) mcast_mask_b |= uint16_t(1) << block_layout(m, block_y, Int<0>{});
    }

    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.producer_acquire(smem_pipe_write);
      auto* tma_barrier = pipeline.producer_get_barrier(smem_pipe_write);
      int const stage = smem_pipe_write.index();
      copy(params.tma_load_a.with(*tma_barrier, mcast_mask_a, params.hint_a), tAgA(_, _, _, *k_tile_iter),
           tAsA(_, _, _, stage));
      copy(params.tma_load_b.with(*tma_barrier, mcast_mask_b, params.hint_b), tBgB(_, _, _, *k_tile_iter),
           tBsB(_, _, _, stage));
      ++k_tile_iter;
      ++smem_pipe_write;
    }
  }
};

}  // namespace sm90
}  // namespace cks
