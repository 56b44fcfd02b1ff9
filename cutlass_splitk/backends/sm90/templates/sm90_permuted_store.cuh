// cutlass-splitk sm90 backend: the permuted store (head_split, qkv_split) of the in-kernel modes'
// TMA epilogue, as the root node of its visitor tree. The collective then has no D of its own
// (ElementD void), though it keeps its D buffers: this node stages each epilogue subtile (128 or 64
// rows by 32 columns) in the collective's current D buffer (handed to every node's reduce) and
// stores it from there to the permuted output:
//
//   * boxed: where S is a multiple of the subtile's rows and Dh of its 32 columns, every subtile is
//     one box of the output seen as a 4-D (Dh, S, H, B) or 5-D (Dh, S, H, B, 3) tensor, and one
//     thread stores it with one TMA store (the collective commits and waits for it with its own);
//   * otherwise every epilogue thread stores 16-byte vectors of the staged subtile to
//     FusedEpilogue::offset_d, as the other backends and modes do.
//
// Which one is chosen per call, on the host (fill): the same kernel serves any B, S and H.
//
// Swapped operands (Cfg::kSwapAB): the kernel's tile is the op's N rows by M columns, so a subtile is
// 128 (or 64) of the op's columns by 16 or 32 of its rows, staged column-major to the kernel (the
// op's rows contiguous: CUTLASS's MN-major swizzle and transposed stmatrix, what a column-major D
// takes); it is always stored a vector (8 of the op's columns) at a time.
#pragma once

#include <cuda.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"

#include "cks_epilogue.cuh"

namespace cks {
namespace sm90 {

// The op's row-major C, D and E as an epilogue's collective sees them: row-major, or column-major to a
// swapped kernel (kSwap: it computes D^T).
template <bool kSwap>
using GmemStrideOf = typename cutlass::platform::conditional<kSwap, cute::Stride<cute::_1, int64_t, int64_t>,
                                                             cute::Stride<int64_t, cute::_1, int64_t>>::type;

// The host side of a visitor node whose parameters are its arguments and which needs no workspace.
template <class Arguments>
struct PlainNodeHost {
  template <class ProblemShape>
  static constexpr Arguments to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
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
};

template <class Cfg>
struct PermutedStoreArguments {
  cute::TmaDescriptor box;                   // the permuted output (boxed only)
  typename FusedEpilogue<Cfg>::Params epi;  // D, M, N and the permute's divisors
  bool boxed = false;
};

template <class Cfg, class EpilogueTile>
struct PermutedStore : PlainNodeHost<PermutedStoreArguments<Cfg>> {
  using Element = typename Cfg::Element;
  using ElementAux = Element;  // the collective's D buffers hold it
  static constexpr int kRows = cute::size<0>(EpilogueTile{});
  static constexpr int kCols = cute::size<1>(EpilogueTile{});
  static constexpr int kThreads = Cfg::kCooperative ? 256 : 128;  // the threads that run the epilogue
  static constexpr int kRowBytes = kCols * int(sizeof(Element));
  static constexpr bool kSwap = Cfg::kSwapAB;
  using GmemStride = GmemStrideOf<kSwap>;  // D as the collective sees it
  // The collective's D buffer, one subtile, built as CollectiveEpilogue builds its SmemLayoutD (the builder's
  // swizzle atom for D's stride, tiled M-major where D is): unswapped, rows of 64 bytes, 16-byte chunks swizzled
  // as the TMA's 64-byte swizzle expects (read with swizzled() below); swapped, CUTLASS's MN-major 128-byte
  // swizzle, read through the layout itself.
  using SmemLayoutAtom = decltype(cutlass::epilogue::collective::detail::sm90_get_epilogue_smem_swizzle_layout_atom<
                                  GmemStride, Element, EpilogueTile>());
  using SmemLayout = decltype(cute::tile_to_shape(
      SmemLayoutAtom{}, cute::make_shape(cute::Int<kRows>{}, cute::Int<kCols>{}),
      cute::conditional_t<kSwap, cute::Step<cute::_2, cute::_1>, cute::Step<cute::_1, cute::_2>>{}));
  static_assert(kSwap || cute::is_same_v<SmemLayoutAtom, cute::GMMA::Layout_K_SW64_Atom<Element>>,
                "an unswapped subtile row is one 64-byte swizzle row (32 16-bit columns)");
  static_assert(kSwap || kRowBytes == 64, "an unswapped subtile row is one 64-byte swizzle row (32 16-bit columns)");
  static_assert(!kSwap || kRows % 8 == 0, "a swapped subtile's columns of the op: whole 16-byte vectors");
  using CopyOpR2S = decltype(cutlass::epilogue::collective::detail::sm90_get_smem_store_op_for_accumulator<
                             GmemStride, Element, EpilogueTile>());

  struct SharedStorage {};
  using Arguments = PermutedStoreArguments<Cfg>;
  using Params = Arguments;

  // The byte offset of (row, 16-byte chunk) in a staged subtile: the 64-byte swizzle XORs the
  // chunk with bits 7-8 of the row's address (buffers are aligned to the swizzle's 512 bytes).
  CUTLASS_HOST_DEVICE static int swizzled(int row, int chunk) {
    int const bytes = row * kRowBytes + chunk * 16;
    return bytes ^ (((bytes >> 7) & 3) << 4);
  }

  // Host: the box descriptor, where every subtile is one box of the permuted output. False where the
  // view does not allow it (the subtiles are then stored a vector at a time).
  static bool encode(Arguments& args, CksArgs const& a) {
    typename FusedEpilogue<Cfg>::Params const& p = args.epi;
    if (kSwap || p.perm_s % kRows || p.perm_dh % kCols) return false;
    constexpr bool kQkv = Cfg::kPermute == Permute::k20314;
    cuuint64_t const e = sizeof(Element);
    cuuint64_t const dims[5] = {cuuint64_t(p.perm_dh), cuuint64_t(p.perm_s), cuuint64_t(p.perm_h),
                                cuuint64_t(p.perm_b), 3};
    cuuint64_t strides[4];
    strides[0] = dims[0] * e;
    for (int i = 1; i < 4; ++i) strides[i] = strides[i - 1] * dims[i];
    cuuint32_t const box[5] = {kCols, kRows, 1, 1, 1};
    cuuint32_t const unit[5] = {1, 1, 1, 1, 1};
    CUresult const r = cuTensorMapEncodeTiled(
        &args.box, cute::TMA::to_CUtensorMapDataType<Element>(), kQkv ? 5 : 4, a.d, dims, strides, box, unit,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS;
  }

  CUTLASS_HOST_DEVICE PermutedStore() {}
  CUTLASS_HOST_DEVICE PermutedStore(Params const& params, SharedStorage const&) : params_(&params) {}

  CUTLASS_DEVICE bool is_producer_load_needed() const { return false; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return false; }

  template <class... Args>
  CUTLASS_DEVICE auto get_producer_load_callbacks(cutlass::epilogue::fusion::detail::ProducerLoadArgs<Args...> const&) {
    return cutlass::epilogue::fusion::detail::EmptyProducerLoadCallbacks{};
  }

  template <class TiledR2S>
  struct Callbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE Callbacks(TiledR2S r2s, Params const* params, int row0, int col0, int thread)
        : r2s(r2s), params(params), row0(row0), col0(col0), thread(thread) {}

    TiledR2S r2s;
    Params const* params;
    int row0, col0;  // the tile's first row and column of the kernel's output (swapped: the op's column and row)
    int thread;
    Element* staged = nullptr;  // the D buffer of the subtile reduce staged last

    // The tree's output, already in the element type: the collective's D registers take it as is.
    template <class ElementAccumulator, class ElementInput, int kFragment>
    CUTLASS_DEVICE auto visit(cutlass::Array<ElementAccumulator, kFragment> const&, int, int, int,
                              cutlass::Array<ElementInput, kFragment> const& input) {
      return input;
    }

    // The subtile's values into the collective's current D buffer (it stores nothing itself).
    template <class STensor, class SyncFn, class VTensor>
    CUTLASS_DEVICE void reduce(STensor&& buffer, SyncFn const&, int, int, bool, VTensor visit_results) {
      using namespace cute;
      auto copier = r2s.get_slice(thread);
      Tensor values = make_tensor(recast<Element>(visit_results).data(),  // (R2S, R2S_M, R2S_N), as the collective's
                                  make_layout(take<0, 3>(shape(copier.partition_S(buffer)))));
      copy(r2s, values, copier.partition_D(buffer));
      staged = cute::raw_pointer_cast(buffer.data());
    }

    // After the collective's barrier: the subtile is in shared memory, visible to every thread and the TMA.
    CUTLASS_DEVICE void tma_store(int epi_m, int epi_n, int, bool issue_tma_store) {
      typename FusedEpilogue<Cfg>::Params const& p = params->epi;
      int const row = row0 + epi_m * kRows, col = col0 + epi_n * kCols;
      if constexpr (kSwap) {  // row: the op's column; col: the op's row
        if (col >= p.m || row >= p.n) return;
        auto const subtile = cute::make_tensor(cute::make_smem_ptr(staged), SmemLayout{});
        constexpr int kChunks = kRows / 8;  // 16-byte vectors along the op's row (the kernel's column)
        CUTLASS_PRAGMA_UNROLL
        for (int v = thread; v < kCols * kChunks; v += kThreads) {
          int const c = v / kChunks, r = v % kChunks * 8;
          int const out_row = col + c, out_col = row + r;
          if (out_row < p.m && out_col < p.n) {  // N is a multiple of 8: a vector is in or out
            uint4 const word = *reinterpret_cast<uint4 const*>(&subtile(r, c));
            *reinterpret_cast<uint4*>(p.d + FusedEpilogue<Cfg>::offset_d(p, out_row, out_col)) = word;
          }
        }
        return;
      }
      if (row >= p.m || col >= p.n) return;
      if (params->boxed) {
        if (issue_tma_store && thread == 0) {
          auto const c = FusedEpilogue<Cfg>::permuted_coord(p, Cfg::kPermute, row, col);
          if constexpr (Cfg::kPermute == Permute::k20314) {
            cute::SM90_TMA_STORE_5D::copy(&params->box, staged, c.dd, c.s, c.h, c.b, c.t);
          } else {
            cute::SM90_TMA_STORE_4D::copy(&params->box, staged, c.dd, c.s, c.h, c.b);
          }
        }
        return;
      }
      char const* bytes = reinterpret_cast<char const*>(staged);
      constexpr int kChunks = kRowBytes / 16;
      CUTLASS_PRAGMA_UNROLL
      for (int v = thread; v < kRows * kChunks; v += kThreads) {
        int const r = v / kChunks, c = v % kChunks;
        int const out_row = row + r, out_col = col + c * 8;
        if (out_row < p.m && out_col < p.n) {  // N is a multiple of 8: a vector is in or out
          uint4 const word = *reinterpret_cast<uint4 const*>(bytes + swizzled(r, c));
          *reinterpret_cast<uint4*>(p.d + FusedEpilogue<Cfg>::offset_d(p, out_row, out_col)) = word;
        }
      }
    }
  };

  template <bool kReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    using namespace cute;
    static_assert(kReferenceSrc, "the collective's registers reference its R2S copy's source layout");
    auto [m, n, k, l] = args.tile_coord_mnkl;
    auto r2s = make_tiled_copy_S(Copy_Atom<CopyOpR2S, Element>{}, args.tiled_copy);
    int const row0 = int(m) * int(size<0>(args.tile_shape_mnk));
    int const col0 = int(n) * int(size<1>(args.tile_shape_mnk));
    return Callbacks<decltype(r2s)>(r2s, params_, row0, col0, args.thread_idx);
  }

 private:
  Params const* params_ = nullptr;
};

}  // namespace sm90
}  // namespace cks
