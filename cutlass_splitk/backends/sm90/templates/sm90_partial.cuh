// cutlass-splitk sm90 backend: parallel split-K's partial GEMM. A batched CUTLASS 3.x GEMM
// over K slices (batch l reads A and B from column l * slice, zeros past K, and writes its f32
// partial slice at partials + l * M * ld) with a plain TMA store: nothing here depends on the op's
// epilogue, so one translation unit per (dtype, layout, tile, cluster, schedule, stages)
// serves every op (partial.cu.in instantiates it; the content-hashed object cache compiles
// it once). The op's entry points (sm90_gemm.cuh) only declare it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cks_abi.h"
#include "cks_epilogue.cuh"
#include "cks_host.cuh"

namespace cks {
namespace sm90 {

template <class Gemm>
struct PartialGemm {
  // f32 partials per row are padded to 4 floats: 16-byte TMA rows.
  static constexpr int kPartialAlign = 4;
  static int64_t partial_ld(int n) { return (int64_t(n) + kPartialAlign - 1) / kPartialAlign * kPartialAlign; }

  // The reduction inside the GEMM (sm90_tail.cuh) an op asks for: its mode (tail_mode(), read once
  // per call), its epilogue's parameters (filled by the op's FusedEpilogue::init_host) and one zeroed
  // int32 counter per output tile.
  struct Tail {
    TailMode mode = TailMode::kOff;
    EpilogueParams<typename Gemm::Element> epi;
    int* counters = nullptr;
  };

  // Queues `batches` K slices of `k` columns (a whole number of k-tiles) from column 0 of A (row 0
  // of B), the last one cut at a.k, writing partial slices from `partials` on. With `tail`, where
  // the launch runs in one round, the GEMM also reduces them and stores the op's output: `fused` says
  // whether it did (else the caller launches the reduction), `one_round_ctas` the launch's CTAs where every
  // work unit runs in the first round, else 0 (launch_reduction spreads its blocks by it). Defined in
  // sm90_partial_impl.cuh.
  static int launch(CksArgs const& a, int k, int batches, float* partials, Tail const* tail, bool& fused,
                    int& one_round_ctas, cudaStream_t stream);
};

}  // namespace sm90
}  // namespace cks
