// cutlass-splitk sm90 backend: the in-kernel modes' epilogue (serial split-K, stream-K), on CUTLASS's
// TMA warp-specialized collective epilogue. CUTLASS brings C (where beta != 0) and E into shared
// memory with TMA from the epilogue's load warp while the MMAs run, applies a visitor tree to the
// accumulator fragments in registers and writes D through shared memory with TMA stores that
// complete while the next tile's main loop runs; a permuted D is stored by the tree's root node
// (sm90_permuted_store.cuh). The tree's one compute node is FusedEpilogue's linear part,
// activation and E op, written out here per value with the same operations in the same order (the
// same bits as the parallel reduction's epilogue).
//
// Measured on the H100 against our earlier epilogue (a per-warp shared-memory transpose and 16-byte
// stores, FusedEpilogue per vector): for ops without E or permute (session 20, rounds 30-33) 4-37 %
// faster at split 1 where the epilogue weighs (short K, large M*N), level on long K; for the chain op
// (bias, GELU, * E, head split; session 43, round 68) up to 40 % faster, the same bits on every
// candidate (BENCHMARKS.md).
//
// The stage rule prices the main loop's stages with a budget for the epilogue (rules.py's
// epilogue_smem: kEpilogueSmem below), so the main loop keeps the stage count sm90's rules compute
// for every in-kernel variant; one buffer of each kind the epilogue stages (C, E, D) fits in it. The
// kernel gives the epilogue two of each wherever they fit beside those stages in sm_90's shared memory
// (sm90_gemm.cuh's InKernelEpilogue), which is more than the budget on some tiles.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"

#include "cks_activation.cuh"
#include "cks_epilogue.cuh"
#include "sm90_permuted_store.cuh"

namespace cks {
namespace sm90 {

namespace fusion = cutlass::epilogue::fusion;

// Whether the epilogue stages C, E and a permuted D in three buffers of 128-row subtiles (rules.py's
// three_staged_buffers): one of each (~25 KB) outgrows the 32-column budget below (18 KB).
template <class Cfg>
constexpr bool kThreeStagedBuffers =
    Cfg::kCooperative && Cfg::kBeta && Cfg::kEOp != EOp::kNone && Cfg::kPermute != Permute::kNone;

// The shared memory the stage rule leaves the in-kernel epilogue (rules.py's epilogue_smem): what the
// in-kernel epilogue before session 43 (eight warps staging 16 rows of 64 columns, or 32 where the
// tile's accumulators fill the registers) took, so that every stage count stayed as it was; 64
// columns' worth where three staged buffers need it (session 44: those kernels did not compile).
template <class Cfg>
constexpr int kEpilogueSmem =
    8 * 16 * (((Cfg::kTileCols % 64 == 0 && Cfg::kTileRows * Cfg::kTileCols / (Cfg::kCooperative ? 256 : 128) < 128) ||
               kThreeStagedBuffers<Cfg>
                   ? 64
                   : 32) +
              4) *
    4;

// The call's scalars (the compute node's arguments).
struct TmaScalars {
  float alpha = 1.f, beta = 0.f, act_arg = 0.f;
  bool bias = false;  // a bias was given at call time
};

// alpha * acc + beta * C + bias, then the activation, then E added or multiplied: FusedEpilogue's
// add_linear and finish_with, value by value, the call's case (bias given or not, beta zero or not)
// chosen once per fragment: tested value by value, the node ran 25 % slower on 8192 x 8192 x 512
// (round 33). `c` is only read where beta != 0 (C is only loaded then); kBeta: the op takes C at
// all. Ops with E have a fourth input.
template <Act kAct, bool kBeta, bool kBias, EOp kEOp>
struct TmaFused {
  template <class T>
  struct Fn {
    using Arguments = TmaScalars;
    template <int N>
    CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& acc,
                                                       cutlass::Array<float, N> const& c,
                                                       cutlass::Array<float, N> const& bias,
                                                       TmaScalars const& s) const {
      cutlass::Array<float, N> v;
      bool const with_c = kBeta && s.beta != 0.f;
      if (kBias && s.bias) {
        if (with_c) {
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, fmaf(s.beta, c[i], bias[i])), s.act_arg);
        } else {
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, bias[i]), s.act_arg);
        }
      } else if (with_c) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) v[i] = activate<kAct>(fmaf(acc[i], s.alpha, s.beta * c[i]), s.act_arg);
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) v[i] = activate<kAct>(acc[i] * s.alpha, s.act_arg);
      }
      return v;
    }
    template <int N>
    CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& acc,
                                                       cutlass::Array<float, N> const& c,
                                                       cutlass::Array<float, N> const& bias,
                                                       cutlass::Array<float, N> const& e,
                                                       TmaScalars const& s) const {
      cutlass::Array<float, N> v = (*this)(acc, c, bias, s);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < N; ++i) v[i] = kEOp == EOp::kAdd ? v[i] + e[i] : v[i] * e[i];
      return v;
    }
  };
};

// CUTLASS's source fetch, loaded only where the call's beta is non-zero (C may then be absent).
struct SourceNeeded {
  bool needed = false;
};
template <class Element>
struct SourceWhereNeeded : fusion::Sm90SrcFetch<Element>, PlainNodeHost<SourceNeeded> {
  struct SharedStorage {};
  using Arguments = SourceNeeded;
  using Params = Arguments;
  using Host = PlainNodeHost<SourceNeeded>;  // not the fetch's own (arguments of another type)
  using Host::can_implement;
  using Host::get_workspace_size;
  using Host::initialize_workspace;
  using Host::to_underlying_arguments;

  CUTLASS_HOST_DEVICE SourceWhereNeeded() {}
  CUTLASS_HOST_DEVICE SourceWhereNeeded(Params const& params, SharedStorage const&) : needed_(params.needed) {}

  CUTLASS_DEVICE bool is_producer_load_needed() const { return needed_; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return needed_; }
  CUTLASS_DEVICE bool is_zero() const { return !needed_; }

  bool needed_ = false;
};

template <class Cfg>
struct TmaEpilogueConfig {
  using Element = typename Cfg::Element;
  using TileShape = typename Cfg::TileShape;
  static constexpr bool kBeta = Cfg::kBeta;
  static constexpr bool kE = Cfg::kEOp != EOp::kNone;
  static constexpr bool kPermuted = Cfg::kPermute != Permute::kNone;
  // A swapped kernel (Cfg::kSwapAB) computes D^T: its tile is the op's N rows by M columns, C, D and E are
  // column-major to it (the op's row-major matrices), the op's per-column bias runs along the kernel's rows
  // (a column broadcast; a per-row one a row broadcast), and a tile N that is not a multiple of 32 (80, 112)
  // takes 16-column subtiles. A permuted D is stored from the subtiles it stages (sm90_permuted_store.cuh).
  static constexpr bool kSwap = Cfg::kSwapAB;
  static constexpr int kKernelRows = cute::size<0>(TileShape{});
  static constexpr int kKernelCols = cute::size<1>(TileShape{});
  static constexpr int kEpiCols = kKernelCols % 32 == 0 ? 32 : 16;
  // CUTLASS's automatic epilogue tile: 128 (cooperative) or 64 (ping-pong) rows by 32 columns (or 16, above).
  using EpilogueTile = cute::Shape<cute::Int<cute::min(Cfg::kCooperative ? 128 : 64, kKernelRows)>, cute::Int<kEpiCols>>;
  static constexpr int kEpiTiles = kKernelRows * kKernelCols / (cute::size<0>(EpilogueTile{}) * kEpiCols);
  static constexpr int kFragment = cute::size<0>(EpilogueTile{}) * kEpiCols / (Cfg::kCooperative ? 256 : 128);
  using GmemStride = GmemStrideOf<kSwap>;
  using GmemLayoutTag = typename cutlass::platform::conditional<kSwap, cutlass::layout::ColumnMajor,
                                                                cutlass::layout::RowMajor>::type;
  // The builder's buffers for C, D and E: the 64-byte swizzle (PermutedStore reads D's back with it).
  using SmemAtom = decltype(cutlass::epilogue::collective::detail::sm90_get_epilogue_smem_swizzle_layout_atom<
                            GmemStride, Element, EpilogueTile>());
  static_assert(kSwap || cute::is_same_v<SmemAtom, cute::GMMA::Layout_K_SW64_Atom<Element>>, "32 16-bit columns: SW64");
  static constexpr Bias kKernelBias = !kSwap ? Cfg::kBias
                                      : Cfg::kBias == Bias::kPerCol ? Bias::kPerRow
                                      : Cfg::kBias == Bias::kPerRow ? Bias::kPerCol
                                                                    : Bias::kNone;

  using Accumulator = fusion::Sm90AccFetch;
  using Zero = fusion::Sm90ScalarBroadcast<float>;
  using Source = typename cutlass::platform::conditional<kBeta, SourceWhereNeeded<Element>, Zero>::type;
  using BiasNode = typename cutlass::platform::conditional<
      kKernelBias == Bias::kPerCol,
      fusion::Sm90RowBroadcast<0, TileShape, Element, float, cute::Stride<cute::_0, cute::_1, int64_t>, 8>,
      typename cutlass::platform::conditional<
          kKernelBias == Bias::kPerRow,
          fusion::Sm90ColBroadcast<0, TileShape, Element, float, cute::Stride<cute::_1, cute::_0, int64_t>, 1>,
          Zero>::type>::type;
  using Compute = fusion::Sm90Compute<TmaFused<Cfg::kAct, kBeta, Cfg::kBias != Bias::kNone, Cfg::kEOp>::template Fn,
                                      Element, float, cutlass::FloatRoundStyle::round_to_nearest>;

  // The collective with kLoads buffers of each source it loads (C, E) and kStores of D.
  // Without C: CUTLASS's own stages (two D buffers, the store's wait delayed). With C (and D not
  // permuted): C's buffers hold D too; two of them (CUTLASS would take four).
  template <int kLoads, int kStores>
  struct Build {
    using Policy = typename cutlass::platform::conditional<
        kBeta && !kPermuted, cutlass::epilogue::Sm90TmaWarpSpecialized<kLoads, 1, kFragment, true, false>,
        cutlass::epilogue::Sm90TmaWarpSpecialized<kLoads, cute::min(kEpiTiles, kStores), kFragment, false,
                                                  true>>::type;
    using ELoad = fusion::Sm90AuxLoad<
        kLoads, EpilogueTile, Element, GmemStride, SmemAtom,
        decltype(cutlass::epilogue::collective::detail::sm90_get_smem_load_op_for_source<GmemStride, Element,
                                                                                           EpilogueTile>()),
        8, false>;
    using Tree = typename cutlass::platform::conditional<
        kE, fusion::Sm90EVT<Compute, Accumulator, Source, BiasNode, ELoad>,
        fusion::Sm90EVT<Compute, Accumulator, Source, BiasNode>>::type;
    using Fusion = typename cutlass::platform::conditional<
        kPermuted, fusion::Sm90EVT<PermutedStore<Cfg, EpilogueTile>, Tree>,
        Tree>::type;
    using ElementC = typename cutlass::platform::conditional<kBeta, Element, void>::type;
    using ElementD = typename cutlass::platform::conditional<kPermuted, void, Element>::type;
    using Collective = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
        TileShape, EpilogueTile, float, float, ElementC, GmemLayoutTag, 8, ElementD,
        GmemLayoutTag, 8, Fusion, Policy>::CollectiveOp;
    static constexpr bool kFits = sizeof(typename Collective::SharedStorage) <= size_t(kEpilogueSmem<Cfg>);
  };
  // One buffer of each always fits the budget the stage rule priced; the kernel takes two wherever its shared
  // memory holds them (sm90_gemm.cuh's InKernelEpilogue).
  static_assert(Build<1, 1>::kFits, "the TMA epilogue must fit the shared memory the stage rule leaves the epilogue");

  // The visitor tree's arguments below the permuted store, if any.
  template <class Thread>
  static auto& tree(Thread& t) {
    if constexpr (kPermuted) {
      return t.op_0;
    } else {
      return t;
    }
  }

  // The tree's node I (1 C, 2 the bias, 3 E or the compute node, 4 the compute node with E): a
  // visitor of five nodes keeps its arguments in a tuple, one of four in named members.
  template <int I, class T>
  static auto& node(T& t) {
    if constexpr (kE) {
      return cute::get<I>(t);
    } else if constexpr (I == 1) {
      return t.op_1;
    } else if constexpr (I == 2) {
      return t.op_2;
    } else {
      return t.op_3;
    }
  }

  // The collective's arguments for one call (checked by prepare: C, D, E and the bias aligned to
  // 16 bytes with strides of whole vectors; `epi` filled by it).
  template <class EpilogueArguments>
  static void fill(EpilogueArguments& e, CksArgs const& a, typename FusedEpilogue<Cfg>::Params const& epi) {
    Element* d = static_cast<Element*>(a.d);
    auto& t = tree(e.thread);
    if constexpr (kBeta) {
      bool const source = a.beta != 0.f;
      // Without C (beta = 0) the descriptor still needs a tensor: D's, never read (a permuted D is
      // dense, so its first M * N elements as an M x N matrix).
      e.ptr_C = source ? static_cast<Element const*>(a.c) : d;
      cute::get<kSwap ? 1 : 0>(e.dC) = source ? a.ldc : (kPermuted ? int64_t(a.n) : a.ldd);
      node<1>(t).needed = source;
    }
    if constexpr (kPermuted) {
      e.ptr_D = nullptr;
      e.thread.op_1.epi = epi;
      e.thread.op_1.boxed = PermutedStore<Cfg, EpilogueTile>::encode(e.thread.op_1, a);
    } else {
      e.ptr_D = d;
      cute::get<kSwap ? 1 : 0>(e.dD) = a.ldd;
    }
    Element const* bias = static_cast<Element const*>(a.bias);
    if constexpr (kKernelBias == Bias::kPerCol) {
      node<2>(t).ptr_row = bias;
    } else if constexpr (kKernelBias == Bias::kPerRow) {
      node<2>(t).ptr_col = bias;
    }
    if constexpr (kE) {
      node<3>(t).ptr_aux = static_cast<Element const*>(a.e);
      cute::get<kSwap ? 1 : 0>(node<3>(t).dAux) = a.lde;
    }
    TmaScalars& s = node<kE ? 4 : 3>(t);
    s.alpha = a.alpha;
    s.beta = kBeta ? a.beta : 0.f;
    s.act_arg = a.act_arg;
    s.bias = Cfg::kBias != Bias::kNone && bias != nullptr;
  }
};

}  // namespace sm90
}  // namespace cks
