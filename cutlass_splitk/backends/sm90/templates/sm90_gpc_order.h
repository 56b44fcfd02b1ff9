// cutlass-splitk sm90 backend: the partial GEMM's work order by GPC (plain C++, no CUDA: the CPU
// tests compile it alone).
//
// An H100's L2 request coalescer merges the TMA loads of SMs in one GPC that ask for the same
// sectors (BENCHMARKS.md, sessions 28-29). In a cluster of two, each CTA loads one operand's tile
// for itself (the other is multicast), and the CTAs that need the same such tile are the other
// clusters along one dimension: in launch order they sit one or more clusters apart, and the
// hardware deals consecutive clusters to different GPCs, so nothing of theirs is merged. The
// scheduler (sm90_gpc_scheduler.cuh) runs in launch slot s, round r, the unit order[r * clusters
// + s] chosen here: the sharers of a tile in the slots of one GPC, in the same round. Each unit
// still computes what it computed before, so the partials are the same bits.
#pragma once

#include <cstdint>

namespace cks {
namespace sm90 {

// Where the clusters of a launch land on one device: group[s] is the GPC (a label) of the
// cluster in launch slot s, for s < slots, at one CTA per SM (runtime/placement.py measures
// it). slots == 0: not known.
struct SlotGroups {
  static constexpr int kMaxSlots = 255;
  int slots = 0;
  uint8_t group[kMaxSlots] = {};
};

// The units a table can order (two bytes each in the kernel's parameters).
constexpr int kMaxOrderedUnits = 1024;

// Puts `count` units of `listed` into slots [0, count) (order[s]): each GPC takes as many whole
// groups of `sharers` consecutive units as fit its slots, then the units left fill the slots
// left, GPC by GPC.
inline void order_round(uint16_t const* listed, int count, int sharers, uint8_t const* group, uint16_t* order) {
  int labels[SlotGroups::kMaxSlots], nlabels = 0;
  for (int s = 0; s < count; ++s) {
    int i = 0;
    while (i < nlabels && labels[i] != group[s]) ++i;
    if (i == nlabels) labels[nlabels++] = group[s];
  }
  bool taken[SlotGroups::kMaxSlots] = {};
  int next = 0;
  auto fill = [&](int label, int n) {  // the next n units into label's free slots, in slot order
    for (int s = 0; s < count && n > 0; ++s)
      if (!taken[s] && group[s] == label) {
        order[s] = listed[next++];
        taken[s] = true;
        --n;
      }
  };
  for (int i = 0; i < nlabels; ++i) {
    int capacity = 0;
    for (int s = 0; s < count; ++s) capacity += group[s] == labels[i];
    fill(labels[i], capacity / sharers * sharers);
  }
  for (int i = 0; i < nlabels; ++i) fill(labels[i], count - next);
}

// Fills order[0, units) (units = tiles_m * tiles_n * batches; tiles counted in clusters of
// cluster_m x cluster_n CTAs; unit u = (l * tiles_n + n) * tiles_m + m) for a persistent launch
// of `clusters` clusters, whose slot s runs order[s], order[clusters + s], ... in turn (a CTA
// stays on its SM: every round of slot s runs in its GPC), and returns true; or returns false
// where the order would change nothing or cannot apply: clusters of four (both operands
// multicast), fewer than two sharers per tile, more slots than measured, too many units.
//
// The sharers of a tile: with clusters along N (1x2) each CTA loads its own B tile (n, l),
// which the units along M share; along M (2x1), its A tile, shared along N; without a cluster,
// both, and the units along the longer dimension share the other operand's tile. The units are
// listed sharers first (tile by tile, slice by slice, as CUTLASS's order runs the slices), and
// each round takes the next `clusters` of them (order_round).
inline bool gpc_order(int tiles_m, int tiles_n, int batches, int cluster_m, int cluster_n, int clusters,
                      SlotGroups const& where, uint16_t* order) {
  if (tiles_m <= 0 || tiles_n <= 0 || batches <= 0 || clusters <= 0) return false;
  int const units = tiles_m * tiles_n * batches;
  if (units > kMaxOrderedUnits || clusters > where.slots || cluster_m * cluster_n > 2) return false;
  bool const along_m = cluster_m == 1 && (cluster_n == 2 || tiles_m >= tiles_n);  // the sharers vary in m
  int const sharers = along_m ? tiles_m : tiles_n;
  if (sharers < 2) return false;
  int const others = along_m ? tiles_n : tiles_m;
  uint16_t listed[kMaxOrderedUnits];
  int count = 0;
  for (int l = 0; l < batches; ++l)
    for (int o = 0; o < others; ++o)
      for (int s = 0; s < sharers; ++s) {
        int const m = along_m ? s : o, n = along_m ? o : s;
        listed[count++] = uint16_t((l * tiles_n + n) * tiles_m + m);
      }
  for (int first = 0; first < units; first += clusters)
    order_round(listed + first, units - first < clusters ? units - first : clusters, sharers, where.group,
                order + first);
  return true;
}

}  // namespace sm90
}  // namespace cks
