// cutlass-splitk sm90 backend: one wgmma across the whole tile N for widths outside CUTLASS's
// standard set (8, 16, 32, 64, 96, 128, 192, 256).
//
// CUTLASS's collective builder takes the widest standard wgmma that divides the tile N
// (cute::GMMA::ss_op_selector), so a 112-wide tile ran seven m64n16k16 per k-step, 50-100x slower
// (BENCHMARKS.md, session 36). CUTLASS has the other widths behind
// CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, but that define parses 76k more header lines in every unit
// (+37 s of nvcc on the 2-core machine, session 37). Here the builder's collective keeps everything
// it chose (stages, shared-memory layouts, TMA copies) and only its TiledMma changes: the same atom
// layout over WideWgmmaSS, an m64nNk16 SS instruction with f32 accumulators. Its fma (N / 2
// accumulator registers, spelt out) is generated per dtype and width into the units that need it
// (templates/wide_wgmma.cuh.in, backends/sm90/codegen.py), after their includes.
#pragma once

#include <cstdint>

#include "cute/atom/mma_atom.hpp"
#include "cute/atom/mma_traits_sm90_gmma.hpp"
#include "cutlass/gemm/collective/collective_mma_decl.hpp"

namespace cks {
namespace sm90 {

// wgmma.mma_async m64n<kN>k16, f32 += Element * Element, both operands in shared memory. Each
// (dtype, width) specialisation is generated into the unit that instantiates it.
template <class Element, int kN, cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>
struct WideWgmmaSS {
  static_assert(kN < 0, "no m64nNk16 wgmma was generated for this tile N in this unit: cutlass-splitk's "
                        "generator writes one per tile width outside 8/16/32/64/96/128/192/256 (regenerate "
                        "the unit with `cutlass-splitk generate`)");
};

template <class Desc>
struct DescriptorMajor;
template <cute::GMMA::Major kMajor>
struct DescriptorMajor<cute::GMMA::smem_desc<kMajor>> {
  static constexpr cute::GMMA::Major value = kMajor;
};

// Collective: what CUTLASS's builder gave (sm90_gmma_builder.inl); type: the same collective with
// one wgmma across the tile N where the builder's does not span it.
template <class Collective>
struct FullWidthMma {
  using type = Collective;
};

template <class Policy, class TileShape, class ElementA, class StrideA, class ElementB, class StrideB, class Atom,
          class AtomLayout, class Permutation, class CopyA, class SmemA, class SmemCopyA, class TransformA,
          class CopyB, class SmemB, class SmemCopyB, class TransformB>
struct FullWidthMma<cutlass::gemm::collective::CollectiveMma<
    Policy, TileShape, ElementA, StrideA, ElementB, StrideB, cute::TiledMMA<Atom, AtomLayout, Permutation>, CopyA,
    SmemA, SmemCopyA, TransformA, CopyB, SmemB, SmemCopyB, TransformB>> {
  static constexpr int kTileN = cute::size<1>(TileShape{});
  static constexpr bool kSpans = cute::size<1>(typename Atom::Shape_MNK{}) == kTileN;
  using Wide = WideWgmmaSS<typename Atom::ValTypeA, kTileN, DescriptorMajor<typename Atom::FrgTypeA>::value,
                           DescriptorMajor<typename Atom::FrgTypeB>::value>;
  using TiledMma = typename cutlass::platform::conditional<
      kSpans, cute::TiledMMA<Atom, AtomLayout, Permutation>,
      cute::TiledMMA<cute::MMA_Atom<Wide>, AtomLayout, Permutation>>::type;
  using type = cutlass::gemm::collective::CollectiveMma<Policy, TileShape, ElementA, StrideA, ElementB, StrideB,
                                                        TiledMma, CopyA, SmemA, SmemCopyA, TransformA, CopyB, SmemB,
                                                        SmemCopyB, TransformB>;
};

}  // namespace sm90
}  // namespace cks

namespace cute {
// What CuTe needs to know of the instruction (as for CUTLASS's own m64nNk16 SS atoms): 128 threads,
// A 64 x 16 and B N x 16 through shared-memory descriptors, the f32 accumulators in wgmma's layout.
template <class Element, int kN, GMMA::Major kMajorA, GMMA::Major kMajorB>
struct MMA_Traits<cks::sm90::WideWgmmaSS<Element, kN, kMajorA, kMajorB>> {
  using ValTypeD = float;
  using ValTypeA = Element;
  using ValTypeB = Element;
  using ValTypeC = float;
  using FrgTypeA = GMMA::smem_desc<kMajorA>;
  using FrgTypeB = GMMA::smem_desc<kMajorB>;
  using Shape_MNK = Shape<_64, Int<kN>, _16>;
  using ThrID = Layout<_128>;
  using ALayout = GMMA::ABLayout<64, 16>;
  using BLayout = GMMA::ABLayout<kN, 16>;
  using CLayout = GMMA::CLayout_64xN<kN>;
  GMMA::ScaleOut accumulate_ = GMMA::ScaleOut::One;
};
}  // namespace cute
