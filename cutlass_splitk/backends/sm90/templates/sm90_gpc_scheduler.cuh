// cutlass-splitk sm90 backend: the partial GEMM's tile scheduler, CUTLASS's persistent one with
// the work order of sm90_gpc_order.h, and the device's placement that the order is made from
// (set by the runtime through cks_sm90_set_placement).
//
// The scheduler is selected through CUTLASS's TileSchedulerSelector with a tag of ours
// (GpcOrderTag). It keeps CUTLASS's order (its own get_current_work_for_linear_idx) unless the
// parameters carry a table: then launch slot s (the cluster's index in the grid) runs units
// order[s], order[clusters + s], ..., and every warp of the CTA (producer, consumers,
// epilogue) sees the same unit, so the partial lands where CUTLASS's order would store it.
//
// It also runs the tail (sm90_tail.cuh) where the parameters ask for it: the consumer warps call
// the scheduler after each unit's epilogue, which is where the tail goes. The cooperative kernel's
// consumers call fetch_next_work(work, pipeline, state) (its producer warps too: they take no
// part), the ping-pong kernel's consumers advance_to_next_work(2) (its second consumer's first
// call, before any unit, and its producer's, advance by one).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "cute/tensor.hpp"
#include "cutlass/gemm/kernel/sm90_tile_scheduler.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

#include "cks_abi.h"
#include "sm90_gpc_order.h"
#include "sm90_tail.cuh"

namespace cks {
namespace sm90 {

// The placements measured per device for clusters of one and two CTAs; `epoch` counts the
// changes (a partial GEMM's plan is made for one epoch).
struct Placements {
  static constexpr int kDevices = 64;
  std::mutex lock;
  SlotGroups groups[kDevices][2];
  std::atomic<uint32_t> epoch[kDevices] = {};
};

// One per library: every unit's inline function shares it, and -fvisibility=hidden keeps it from
// other libraries.
inline Placements& placements() {
  static Placements p;
  return p;
}

inline uint32_t placement_epoch(int device) {
  return device >= 0 && device < Placements::kDevices ? placements().epoch[device].load(std::memory_order_acquire) : 0;
}

// The placement of clusters of `cluster` CTAs on `device` (slots == 0: none known).
inline SlotGroups placement(int device, int cluster) {
  SlotGroups where;
  if (device < 0 || device >= Placements::kDevices || cluster < 1 || cluster > 2) return where;
  Placements& p = placements();
  std::lock_guard<std::mutex> hold(p.lock);
  return p.groups[device][cluster - 1];
}

// The partial GEMM's scheduler tag: its output element (the tail's epilogue stores it) and
// whether the kernel's operands are swapped (its tile (m, n) is the op's (n, m)).
template <class Element, bool kSwapAB>
struct GpcOrderTag {};

template <class Element>
struct GpcOrderParams : cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params {
  int32_t order_units = 0;  // 0: CUTLASS's order
  uint16_t order[kMaxOrderedUnits] = {};
  TailParams<Element> tail;  // tail.slices == 0: none
};

template <class Element, bool kSwapAB, class TileShape>
class GpcOrderScheduler : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;
  static constexpr int kTileM = int(cute::size<0>(TileShape{}));
  static constexpr int kTileN = int(cute::size<1>(TileShape{}));

 public:
  using Params = GpcOrderParams<Element>;
  using WorkTileInfo = Base::WorkTileInfo;

  template <class... Args>
  static Params to_underlying_arguments(Args&&... args) {
    Params params;
    static_cast<typename Base::Params&>(params) = Base::to_underlying_arguments(static_cast<Args&&>(args)...);
    return params;
  }

  // The launch's units over all its rounds (in clusters, like the grid's slots).
  static int64_t units(Params const& params) {
    return int64_t(params.problem_tiles_m_) * params.problem_tiles_n_ * params.problem_tiles_l_;
  }

  // The table for `where`, for a launch of `clusters` clusters.
  static void set_order(Params& params, int clusters, SlotGroups const& where) {
    params.order_units = 0;
    if (params.log_swizzle_size_ != 0) return;
    if (gpc_order(int(params.problem_tiles_m_), int(params.problem_tiles_n_), int(params.problem_tiles_l_),
                  int(params.cluster_shape_m_), int(params.cluster_shape_n_), clusters, where, params.order))
      params.order_units = int(params.problem_tiles_m_ * params.problem_tiles_n_ * params.problem_tiles_l_);
  }

  CUTLASS_HOST_DEVICE GpcOrderScheduler() {}

  CUTLASS_DEVICE explicit GpcOrderScheduler(Params const& params) : Base(params), params_(&params) {
#if defined(__CUDA_ARCH__)
    linear_ = params.raster_order_ == RasterOrder::AlongN
                  ? uint64_t(blockIdx.x) + uint64_t(blockIdx.y) * uint64_t(gridDim.x)
                  : uint64_t(blockIdx.x) * uint64_t(gridDim.y) + uint64_t(blockIdx.y);
    grid_ = uint64_t(gridDim.x) * uint64_t(gridDim.y) * uint64_t(gridDim.z);
#endif
  }

  CUTLASS_DEVICE WorkTileInfo work_for(uint64_t linear) const {
    Params const& p = *params_;
    if (p.order_units == 0) return get_current_work_for_linear_idx(linear);
    uint64_t const index = linear / (p.cluster_shape_m_ * p.cluster_shape_n_);  // round * clusters + slot
    if (index >= uint64_t(p.order_units)) return WorkTileInfo::invalid_work_tile();
    uint32_t const unit = p.order[index];
    uint32_t const m = unit % p.problem_tiles_m_, rest = unit / p.problem_tiles_m_;
    uint32_t const n = rest % p.problem_tiles_n_, l = rest / p.problem_tiles_n_;
    auto [m_in_cluster, n_in_cluster, unused] = cute::block_id_in_cluster();
    return {int32_t(m * p.cluster_shape_m_ + m_in_cluster), int32_t(n * p.cluster_shape_n_ + n_in_cluster),
            int32_t(l), true};
  }

  // Every entry point that reads the position in CUTLASS's scheduler, shadowed to read ours.
  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) {
    return get_current_work();
  }
  CUTLASS_DEVICE WorkTileInfo get_current_work() const { return work_for(linear_); }
  CUTLASS_DEVICE void advance_to_next_work(uint32_t count = 1) {
    if (count == 2) tail<128>(get_current_work(), int(threadIdx.x % 128), kTailBarrier + int(threadIdx.x / 128) - 1);
    linear_ += grid_ * uint64_t(count);
  }
  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t count = 1) const {
    return !work_for(linear_ + grid_ * uint64_t(count)).is_valid();
  }
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    advance_to_next_work();
    return cute::make_tuple(get_current_work(), true);
  }
  template <class Pipeline, class PipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo work, Pipeline&, PipelineState) {
    tail<256>(work, int(threadIdx.x) - 128, kTailBarrier);
    return fetch_next_work(work);
  }

  // The tail of `work`, in the consumer warps (threadIdx.x >= 128) only, where the launch asks.
  template <int kThreads>
  CUTLASS_DEVICE void tail(WorkTileInfo const& work, int thread, int barrier) const {
    TailParams<Element> const& t = params_->tail;
    if (t.slices == 0 || threadIdx.x < 128 || !work.is_valid()) return;
    constexpr int kRows = kSwapAB ? kTileN : kTileM, kCols = kSwapAB ? kTileM : kTileN;
    int const tile_r = kSwapAB ? work.N_idx : work.M_idx, tile_c = kSwapAB ? work.M_idx : work.N_idx;
    reduce_tile<Element, kRows, kCols, kThreads>(t, tile_r, tile_c, work.L_idx, thread, barrier);
  }

 private:
  Params const* params_ = nullptr;  // the kernel's (grid-constant) parameters
  uint64_t linear_ = 0;
  uint64_t grid_ = 0;
};

}  // namespace sm90
}  // namespace cks

namespace cutlass::gemm::kernel::detail {
template <class Element, bool kSwapAB, class ArchTag, class TileShape, class ClusterShape, uint32_t kStages>
struct TileSchedulerSelector<cks::sm90::GpcOrderTag<Element, kSwapAB>, ArchTag, TileShape, ClusterShape, kStages> {
  using Scheduler = cks::sm90::GpcOrderScheduler<Element, kSwapAB, TileShape>;
};
}  // namespace cutlass::gemm::kernel::detail

// Sets the placement of clusters of `cluster` (1 or 2) CTAs on `device`: group[s] is the GPC
// label of launch slot s, for s < slots (slots == 0: forget it, CUTLASS's order from then on).
// Partial GEMM plans made afterwards use it. Defined in every partial unit (weak: one per library).
extern "C" CKS_EXPORT __attribute__((weak)) int cks_sm90_set_placement(int device, int cluster, int slots,
                                                                       uint8_t const* group) {
  using cks::sm90::Placements;
  using cks::sm90::SlotGroups;
  if (device < 0 || device >= Placements::kDevices || cluster < 1 || cluster > 2 || slots < 0 ||
      slots > SlotGroups::kMaxSlots || (slots > 0 && group == nullptr))
    return CKS_ERROR_INVALID_PROBLEM;
  Placements& p = cks::sm90::placements();
  {
    std::lock_guard<std::mutex> hold(p.lock);
    SlotGroups& where = p.groups[device][cluster - 1];
    where = SlotGroups();
    where.slots = slots;
    if (slots > 0) std::memcpy(where.group, group, size_t(slots));
  }
  p.epoch[device].fetch_add(1, std::memory_order_acq_rel);
  return CKS_OK;
}
