// cutlass-splitk sm80 backend, host side: the checks and K partitioning both strategies
// share (Common), and the two strategies behind the generated entry points:
//   * SerialGemm: SerialSplitKKernel (sm80_serial.cuh), one launch;
//   * ParallelGemm: CUTLASS's GemmUniversal in kGemmSplitKParallel mode writes float32
//     partials, then the shared reduction (cks_reduction.cuh) applies the epilogue.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/epilogue/threadblock/epilogue_with_visitor.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/gemm/kernel/default_gemm_universal.h"
#include "cutlass/gemm/kernel/gemm_universal.h"

#include "cks_epilogue.cuh"
#include "cks_host.cuh"
#include "cks_reduction.cuh"
#include "sm80_config.cuh"
#include "sm80_serial.cuh"

namespace cks {

// CUTLASS's cutlass::Kernel2 plus the optional early PDL trigger.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreadCount)
    partial_gemm_kernel(typename Kernel::Params params, bool trigger_early) {
  if (trigger_early) pdl_launch_dependents();
  extern __shared__ int smem[];
  Kernel::invoke(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
}

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
  static std::string check(CksArgs const& a) { return check_problem<Cfg>(a); }

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

  // The float32 partials both strategies keep in the workspace: rows of N rounded up to
  // kPartialAlign floats, so that every 16-byte vector of a row is aligned.
  static int const kPartialAlign = 4;
  static int64_t partial_ld(CksArgs const& a) {
    return (int64_t(a.n) + kPartialAlign - 1) / kPartialAlign * kPartialAlign;
  }

  // can_implement + the K partitioning, shared by both strategies' query(); fills epi, the
  // epilogue's parameters for a (the reduction launches with them).
  static int query(CksArgs const& a, CksQuery& q, typename FusedEpilogue<Cfg>::Params& epi) {
    if (int status = check_abi(a)) return status;
    std::string why = check(a);
    if (why.empty()) why = FusedEpilogue<Cfg>::init_host(epi, a);
    if (!why.empty()) return fail(CKS_ERROR_INVALID_PROBLEM, why);
    auto p = plan(a);
    q.k_partitions = p.grid_tiled_shape.k();
    q.tiles_m = p.grid_tiled_shape.m();
    q.tiles_n = p.grid_tiled_shape.n();
    q.semaphore_bytes = 0;
    q.partial_bytes = 0;
    return CKS_OK;
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

  static int query(CksArgs const& a, CksQuery& q, typename FusedEpilogue<Cfg>::Params& epi) {
    if (int status = C::query(a, q, epi)) return status;
    bool const split = q.k_partitions > 1;
    q.semaphore_bytes = split ? int64_t(sizeof(int)) * q.tiles_m * q.tiles_n : 0;
    q.partial_bytes = split ? int64_t(sizeof(float)) * a.m * C::partial_ld(a) : 0;  // the running partial
    return CKS_OK;
  }
  static int query(CksArgs const& a, CksQuery& q) {
    typename FusedEpilogue<Cfg>::Params epi;
    return query(a, q, epi);
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    CksQuery q{};
    typename Kernel::Params params;
    int status = query(a, q, params.visitor.epi);
    if (status != CKS_OK) return status;
    status = select_device(a);
    if (status != CKS_OK) return status;
    if (q.semaphore_bytes > a.semaphore_bytes || (q.semaphore_bytes && !a.semaphores))
      return fail(CKS_ERROR_WORKSPACE, "serial split-K needs " +
                                           std::to_string(q.semaphore_bytes) +
                                           " bytes of zeroed semaphores");
    if (q.partial_bytes && (q.partial_bytes > a.partial_bytes || !a.partials || !aligned(a.partials, 16)))
      return fail(CKS_ERROR_WORKSPACE, "serial split-K needs " + std::to_string(q.partial_bytes) +
                                           " bytes of 16-byte aligned float32 partials");
    auto plan = C::plan(a);
    params.problem_size = plan.problem_size;
    params.grid_tiled_shape = plan.grid_tiled_shape;
    params.swizzle_log_tile = plan.swizzle_log_tile;
    params.gemm_k_size = plan.gemm_k_size;
    params.params_A = typename Kernel::Mma::IteratorA::Params(typename Cfg::LayoutA(a.lda));
    params.params_B = typename Kernel::Mma::IteratorB::Params(typename Cfg::LayoutB(a.ldb));
    params.ptr_A = a.a;
    params.ptr_B = a.b;
    params.semaphore = static_cast<int*>(a.semaphores);
    params.visitor.partials = static_cast<float*>(a.partials);
    params.visitor.partial_ld = C::partial_ld(a);
    params.visitor.iterator = typename Visitor::OutputTileIterator::Params(
        cutlass::layout::RowMajor(Cfg::kPermute == Permute::kNone ? a.ldd : a.n));

    int smem = int(sizeof(typename Kernel::SharedStorage));
    status = configure<Cfg>(cutlass::Kernel2<Kernel>, smem, a.device);
    if (status != CKS_OK) return status;
    dim3 grid = Cfg::Swizzle::get_grid_shape(plan.grid_tiled_shape);
    cutlass::Kernel2<Kernel><<<grid, Kernel::kThreadCount, smem, stream>>>(params);
    return launched("serial split-K GEMM launch");
  }
};

template <class Cfg>
struct ParallelGemm {
  using C = Common<Cfg>;
  using Element = typename Cfg::Element;
  // float partials, 16-byte stores (C::partial_ld pads the workspace's rows to match)
  using Kernel = typename C::template UniversalKernel<float, C::kPartialAlign>;

  static int query(CksArgs const& a, CksQuery& q, typename FusedEpilogue<Cfg>::Params& epi) {
    if (int status = C::query(a, q, epi)) return status;
    q.partial_bytes = int64_t(sizeof(float)) * q.k_partitions * a.m * C::partial_ld(a);
    return CKS_OK;
  }
  static int query(CksArgs const& a, CksQuery& q) {
    typename FusedEpilogue<Cfg>::Params epi;
    return query(a, q, epi);
  }

  static int run(CksArgs const& a, cudaStream_t stream) {
    CksQuery q{};
    typename FusedEpilogue<Cfg>::Params epi;
    int status = query(a, q, epi);
    if (status != CKS_OK) return status;
    status = select_device(a);
    if (status != CKS_OK) return status;
    if (q.partial_bytes > a.partial_bytes || !a.partials || !aligned(a.partials, 16))
      return fail(CKS_ERROR_WORKSPACE, "parallel split-K needs " +
                                           std::to_string(q.partial_bytes) +
                                           " bytes of 16-byte aligned float32 partials");
    int64_t const ld = C::partial_ld(a);
    int64_t const slice_stride = int64_t(a.m) * ld;
    typename Kernel::Arguments args(
        cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel, {a.m, a.n, a.k}, a.split_k,
        {1.f, 0.f}, a.a, a.b, nullptr, a.partials, 0, 0, 0, slice_stride, a.lda, a.ldb, ld, ld);
    typename Kernel::Params params(args, 0, 0);
    if (params.grid_tiled_shape.k() != q.k_partitions)
      return fail(CKS_ERROR_INTERNAL, "partition count mismatch");

    Pdl const pdl = pdl_mode(a.device);
    int smem = int(sizeof(typename Kernel::SharedStorage));
    status = configure<Cfg>(partial_gemm_kernel<Kernel>, smem, a.device);
    if (status != CKS_OK) return status;
    dim3 grid = Cfg::Swizzle::get_grid_shape(params.grid_tiled_shape);
    partial_gemm_kernel<Kernel><<<grid, Kernel::kThreadCount, smem, stream>>>(
        params, pdl == Pdl::kEarly);
    status = launched("parallel split-K partial GEMM launch");
    if (status != CKS_OK) return status;

    return launch_reduction<Cfg>(epi, a, static_cast<float const*>(a.partials), ld, slice_stride,
                                 int(q.k_partitions), stream, pdl);
  }
};

}  // namespace cks
