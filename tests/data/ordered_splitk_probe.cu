// Host-only probe of serial split-K's ordered reduction (sm90_ordered_splitk.cuh): for each case,
// "name S units workspace counters partitions", the split count the scheduler's parameters really
// use, the output tiles, the workspace the kernel asks for, the bytes of zeroed counters (the
// caller's semaphores; 0: CUTLASS's turnstile, in the workspace), and "ok" if
// partition() maps the first K tile of every split the scheduler hands out (split s starts at
// per * s + min(s, big), per = K tiles / S, big = K tiles % S) back to s. tests/test_sm90.py compiles
// and runs it; no GPU and no driver call is involved (132 SMs given).
#include <cstdint>
#include <cstdio>

#include "cute/tensor.hpp"
#include "sm90_ordered_splitk.cuh"

namespace {

template <int kClusterM, int kClusterN>
void probe(char const* name, int m, int n, int k, int splits, bool stream_k = false) {
  using Scheduler = cks::sm90::OrderedSplitKTileScheduler<cute::Shape<cute::_128, cute::_128, cute::_64>,
                                                          cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>>;
  typename Scheduler::Arguments args;
  args.splits = splits;
  args.reduction_mode = Scheduler::ReductionMode::Deterministic;
  args.decomposition_mode = stream_k ? Scheduler::DecompositionMode::StreamK
                                     : (splits > 1 ? Scheduler::DecompositionMode::SplitK
                                                   : Scheduler::DecompositionMode::DataParallel);
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = 132;
  auto const shape = cute::make_shape(m, n, k, 1);
  auto const params = Scheduler::host_params(args, shape, hw, nullptr);
  size_t const workspace = Scheduler::template get_workspace_size<decltype(shape), float>(args, shape, hw, 2);
  size_t const counters = Scheduler::counter_bytes(args, shape, hw, 2);
  uint32_t const s_used = params.divmod_splits_.divisor;
  char const* partitions = "ok";
  if (Scheduler::ordered(params)) {
    uint32_t const per = params.divmod_k_tiles_per_sk_unit_.divisor, big = params.big_units_;
    for (uint32_t s = 0; s < s_used; ++s) {
      typename Scheduler::WorkTileInfo work;
      work.K_idx = int32_t(per * s + (s < big ? s : big));
      if (Scheduler::partition(params, work) != s) partitions = "bad";
    }
  }
  std::printf("%s %u %llu %zu %zu %s\n", name, s_used, (unsigned long long)params.units_per_problem_, workspace,
              counters, partitions);
}

}  // namespace

int main() {
  probe<2, 1>("m1024_split2", 1024, 1024, 16384, 2);
  probe<2, 1>("m1024_split3", 1024, 1024, 16384, 3);
  probe<2, 1>("m96_c2x1_split4", 96, 3072, 16384, 4);
  probe<1, 2>("m512_k1000_split7", 512, 512, 1000, 7);
  probe<1, 1>("m256_k1024_split64", 256, 256, 1024, 64);
  probe<1, 1>("m1024_split16", 1024, 1024, 16384, 16);
  probe<1, 1>("m1024_split17", 1024, 1024, 16384, 17);
  probe<1, 1>("m1024_split200", 1024, 1024, 16384, 200);
  probe<2, 1>("m1024_split1", 1024, 1024, 16384, 1);
  return 0;
}
