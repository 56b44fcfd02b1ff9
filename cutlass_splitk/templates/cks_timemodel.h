// cutlass-splitk: the dispatcher's time model (runtime/timemodel.py) evaluated in C, for the
// first call of a new problem (issue 15: ranking every (variant, split) of an op in CPython
// costs ~1.5 us per candidate, most of a first call's host time).
//
// timemodel.py stays the definition: its constants arrive in CksModel (filled from the Python
// module at load time), its per-variant figures that are not arithmetic on the problem
// (occupancy, tile efficiency) arrive precomputed, and the arithmetic below repeats the Python
// expressions in the same order, so that the doubles come out bit for bit the same
// (tests/test_timemodel_c.py compares both on every shipped variant and thousands of problems).
// A change to the Python model must be made here too; that test fails until it is.
//
// Host C++ only (no CUDA): the tests compile it with the host compiler.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
#include <algorithm>
#include <cmath>
#endif

#ifdef __cplusplus
extern "C" {
#endif

// The constants of timemodel.py (same names, lower case) and the device's figures.
typedef struct CksModel {
  double launch_us, reduce_launch_us, fixup_latency_us, fixup_us_per_element, l2_factor, wave_overhead_us,
      reduce_bw_fraction;
  double sm90_flops_per_sm, sm90_eff_exponent, sm90_bw_fraction, sm90_sm_bytes_per_s, sm90_k_depth_exponent,
      sm90_l2_factor, sm90_wave_overhead_us, sm90_fixup_latency_us, sm90_fixup_us_per_element, sm90_memset_us,
      sm90_epilogue_us_per_element, sm90_streamk_us, sm90_streamk_fraction, sm90_box_bytes_per_s,
      sm90_oob_bytes_per_s, sm90_l2_bytes, sm90_weight_reread, sm90_tma_epilogue_us_per_element,
      sm90_pp_activation_us_per_element, sm90_underfill_exponent, sm90_underfill_max, sm90_gpc_box_gain,
      sm90_fixup_wave, sm90_reduce_launch_us;
  double bandwidth, mma_flops_per_sm;
  int64_t sm_count;
  int64_t cluster4_ctas;  // CTAs resident at once in clusters of four (runtime/clusters.py); 0: unknown
  int64_t gpc_order;      // nonzero: the sm90 partial GEMMs run in the GPC order here (DeviceInfo.gpc_order)
} CksModel;

enum { CKS_MODEL_SERIAL = 0, CKS_MODEL_PARALLEL = 1, CKS_MODEL_STREAM_K = 2 };
// CksModelVariant.flags: the sm90 kernel computes the transposed product (tm, tn, cm, cn are then
// given over the op's output); its in-kernel modes take CUTLASS's TMA epilogue (every op since session 43;
// without the flag: the earlier in-kernel epilogue's cost);
// its schedule is ping-pong; the op's epilogue evaluates a transcendental activation.
enum { CKS_MODEL_SWAP_AB = 1, CKS_MODEL_TMA_EPILOGUE = 2, CKS_MODEL_PINGPONG = 4, CKS_MODEL_ACTIVATION = 8 };

// One variant: backend 80 or 90, split mode, tile, cluster (sm90), occupancy and tile
// efficiency (sm80, from timemodel.occupancy / tile_efficiency), the position of its name in
// name order (ties are broken by name, then split, as dispatch.rank does), its split factors
// (splits[first .. first + count) of the array passed beside it), and CKS_MODEL_* flags.
typedef struct CksModelVariant {
  int32_t backend, mode, tm, tn, tk, cm, cn, occupancy;
  double tile_efficiency;
  int32_t name_order, first_split, split_count, flags;
} CksModelVariant;

typedef struct CksRanked {
  int32_t variant;  // index into the variants passed
  int32_t split;
  int32_t parts;
  int32_t reserved;
  double predicted_us;
} CksRanked;

#ifdef __cplusplus
}

// The Python model rounds after every operation; so must this (no fused multiply-adds, which
// aarch64 compilers emit by default).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace cks {
namespace model {

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t cluster_slots(CksModel const& c, int64_t cluster) {  // timemodel.cluster_slots
  int64_t const known = cluster == 4 ? c.cluster4_ctas : 0;
  return cluster <= 2 ? c.sm_count : known > 0 ? known : c.sm_count * 10 / 11 / cluster * cluster;
}

// The candidates of one variant at each of its splits (or only at `only_split` when > 0),
// appended at out[count...]; returns the new count. Mirrors timemodel._predict_sm90.
inline int predict_sm90(CksModel const& c, CksModelVariant const& v, int32_t const* splits, int index, int64_t m,
                        int64_t n, int64_t k, int32_t only_split, CksRanked* out, int count) {
  int64_t const tm = v.tm, tn = v.tn, tk = v.tk, cm = v.cm, cn = v.cn;
  int64_t const sms = cluster_slots(c, cm * cn);  // the persistent grid (timemodel.cluster_slots)
  double const bw = c.bandwidth;
  int64_t const tiles_m = cdiv(m, tm), tiles_n = cdiv(n, tn);
  int64_t const tiles = tiles_m * tiles_n;
  int64_t const cmt = cdiv(tiles_m, cm), cnt = cdiv(tiles_n, cn);  // clusters along M, N
  int64_t const padded_tiles = cmt * cm * (cnt * cn);                // whole clusters (timemodel.py)
  // rows past the edge, per tile on average along each dimension
  double const oob_rows = double(tiles_m * tm - m) / double(tiles_m) + double(tiles_n * tn - n) / double(tiles_n);
  double const box_s_per_k =
      ((double(tm + tn) - oob_rows) / c.sm90_box_bytes_per_s + oob_rows / c.sm90_oob_bytes_per_s) * 2.0;
  int64_t const mma_area = tm * tn * ((v.flags & CKS_MODEL_PINGPONG) ? 2 : 1);  // ping-pong: two tiles in flight
  double const rate =
      c.sm90_flops_per_sm * std::min(1.0, std::pow(double(mma_area) / (128.0 * 128.0), c.sm90_eff_exponent));
  bool const parallel = v.mode == CKS_MODEL_PARALLEL, stream_k = v.mode == CKS_MODEL_STREAM_K;
  // the GPC order (sm90_gpc_order.h, over the op's output): the sharers of the tile a CTA loads for itself, along M
  // (the B tile) or along N (the A tile); a launch of at most 1024 cluster units
  bool const along_m = cm == 1 && (cn == 2 || ((v.flags & CKS_MODEL_SWAP_AB) ? cnt < cmt : cmt >= cnt));
  bool const ordered = c.gpc_order && parallel && cm * cn <= 2 && (along_m ? cmt : cnt) >= 2;
  // an unswapped weight past L2 partly re-read per further cluster row; a swapped one once per cluster row
  // (multicast), except where the GPC order runs its sharers along M in one GPC: as an unswapped one
  bool const weight_past_l2 = 2.0 * double(k) * double(n) > c.sm90_l2_bytes;
  double const unswapped_bytes =
      2.0 * double(m * k + k * n) +
      (weight_past_l2 ? 2.0 * double(k) * double(n) * double(cmt - 1) * c.sm90_weight_reread : 0.0);
  double const unique_bytes = (v.flags & CKS_MODEL_SWAP_AB) && weight_past_l2 ? 2.0 * double(m * k + k * n * cmt)
                                                                                : unswapped_bytes;
  double const ordered_bytes = ordered && along_m ? unswapped_bytes : unique_bytes;
  double const cta_bytes_per_k = (double(tm) / double(cn) + double(tn) / double(cm)) * 2.0;
  // promoted 64-deep tiles stream as 128-deep ones (timemodel.py; sm90_tma_promotion.cuh)
  int64_t const depth = (tk == 64 && k % 128 == 0) ? 128 : tk;
  double const cta_stream = c.sm90_sm_bytes_per_s * std::pow(double(depth) / 64.0, c.sm90_k_depth_exponent);
  double const l2_bw = c.sm90_l2_factor * bw;
  double const flops_per_k = 2.0 * double(tm) * double(tn);
  double const epilogue = double(cdiv(tiles, sms) * tm * tn) * c.sm90_epilogue_us_per_element;
  double const tma_epilogue = double(cdiv(tiles, sms) * tm * tn) * c.sm90_tma_epilogue_us_per_element;
  double const fixup = c.sm90_fixup_latency_us + double(tm * tn) * c.sm90_fixup_us_per_element;
  double const box_gpc = box_s_per_k - double(along_m ? tn : tm) * 2.0 / c.sm90_box_bytes_per_s *
                                           (1.0 - 1.0 / c.sm90_gpc_box_gain);
  // ping-pong + TMA epilogue, one partition: two tiles per SM in flight, the epilogue under the other's MMAs
  bool const pair = (v.flags & CKS_MODEL_TMA_EPILOGUE) && (v.flags & CKS_MODEL_PINGPONG) && !parallel && !stream_k;
  // one warpgroup's epilogue per tile (a transcendental activation's), hidden only under as long MMAs
  double const pp_epilogue =
      (v.flags & CKS_MODEL_ACTIVATION) ? double(tm * tn) * c.sm90_pp_activation_us_per_element : 0.0;
  int64_t const k_tiles = std::max<int64_t>(1, cdiv(k, tk));
  double const reduce_fixed = c.sm90_reduce_launch_us + double(m * n) * 2.0 / (c.reduce_bw_fraction * bw) * 1e6;
  double const reduce_per_part = double(m * n) * 8.0 / (c.reduce_bw_fraction * bw) * 1e6;
  double const in_kernel = (stream_k ? c.sm90_streamk_us : 0.0) + epilogue;
  // CUTLASS's TMA epilogue where no fix-up precedes it (split 1, stream-K)
  double const in_kernel_one =
      (v.flags & CKS_MODEL_TMA_EPILOGUE) ? (stream_k ? c.sm90_streamk_us : 0.0) + tma_epilogue : in_kernel;
  struct Main {
    double t_main;
    int64_t waves;
  };
  // One launch: `work` tiles x partitions (`units` CTA slots with the clusters' padding) over
  // k_len of K (timemodel._predict_sm90's main_loop): its time and its waves of work units.
  auto main_loop = [&](int64_t work, int64_t units, int64_t k_len) {
    bool const in_order = ordered && units <= 1024 * cm * cn;  // the GPC order applies (kMaxOrderedUnits)
    double const dram_bytes = in_order ? ordered_bytes : unique_bytes;
    double const streamed = double(work < sms ? work : sms) * cta_stream / bw;
    // DRAM time when the CTAs' streams fill it, else theirs
    double t_mem = streamed >= c.sm90_bw_fraction ? dram_bytes / (c.sm90_bw_fraction * bw) * 1e6
                                                  : dram_bytes / (streamed * bw) * 1e6;
    double const t_l2 = double(work) * cta_bytes_per_k * double(k_len) / l2_bw * 1e6;
    if (t_l2 > t_mem) t_mem = t_l2;
    double t_compute, t_box;
    int64_t waves = 1;
    if (stream_k) {
      // every SM pays the pipeline fill once per tile it takes (at least once)
      double const sk_units = padded_tiles > sms ? double(padded_tiles) / double(sms) : 1.0;
      t_compute = flops_per_k * double(padded_tiles) * double(k) / (double(sms) * rate) * 1e6 +
                  c.sm90_wave_overhead_us * sk_units;
      t_box = box_s_per_k * (double(padded_tiles * k) / double(sms)) * 1e6;
    } else {
      waves = cdiv(units, sms);
      // one wave of fewer CTAs than SMs: each computes and streams its TMA boxes faster (timemodel.SM90_UNDERFILL_*)
      double const fast = units >= sms ? 1.0
                                       : std::min(c.sm90_underfill_max,
                                                  std::pow(double(sms) / double(units), c.sm90_underfill_exponent));
      if (pair && k_len == k) {  // a pipeline fill per pair of tiles; an epilogue longer than a tile's MMAs shows
        double t_tile = flops_per_k * double(k_len) / (rate * fast) * 1e6;
        t_tile = t_tile >= pp_epilogue ? t_tile : (t_tile + pp_epilogue) * 0.5;
        t_compute = double(waves) * t_tile + double(cdiv(units, 2 * sms)) * c.sm90_wave_overhead_us;
      } else {
        t_compute = double(waves) * (flops_per_k * double(k_len) / (rate * fast) * 1e6 + c.sm90_wave_overhead_us);
      }
      double const box = in_order ? box_gpc : box_s_per_k;
      t_box = double(waves) * box * double(k_len) * 1e6 / fast;
    }
    if (t_box > t_mem) t_mem = t_box;
    return Main{t_mem > t_compute ? t_mem : t_compute, waves};
  };
  for (int s = 0; s < v.split_count; ++s) {
    int64_t const split = splits[v.first_split + s];
    if (only_split > 0 && split != only_split) continue;
    int64_t parts, k_len;
    if (parallel) {  // timemodel.sm90_slices
      k_len = cdiv(cdiv(k, split), tk) * tk;
      parts = cdiv(k, k_len);
    } else if (stream_k) {
      parts = 1;
      k_len = k;
    } else {
      parts = split < k_tiles ? split : k_tiles;
      k_len = cdiv(k, parts);
    }
    Main const main = main_loop(tiles * parts, padded_tiles * parts, k_len);
    double const t_main = main.t_main;
    double extra;
    if (parallel) {
      extra = reduce_fixed + double(parts) * reduce_per_part;
    } else {
      // serial: the fix-up chain, and a share of a fix-up again per further wave of work units
      int64_t const steps = parts - 1;
      extra = steps ? ((double(steps) + double(main.waves - 1) * c.sm90_fixup_wave) * fixup + c.sm90_memset_us) +
                          in_kernel
                    : (pair ? 0.0 : in_kernel_one);
      if (stream_k) extra += c.sm90_streamk_fraction * t_main;
    }
    out[count++] = CksRanked{index, int32_t(split), int32_t(parts), 0,
                             c.launch_us + t_main + extra};
  }
  return count;
}

// Mirrors timemodel._predict_sm80.
inline int predict_sm80(CksModel const& c, CksModelVariant const& v, int32_t const* splits, int index, int64_t m,
                        int64_t n, int64_t k, int32_t only_split, CksRanked* out, int count) {
  int64_t const tm = v.tm, tn = v.tn;
  double const bw = c.bandwidth;
  int64_t const tiles = cdiv(m, tm) * cdiv(n, tn);
  int64_t const occ = v.occupancy;
  int64_t const slots = c.sm_count * occ;
  int64_t const align_k = k % 64 == 0 ? 64 : 8;
  double const unique_us = 2.0 * double(m * k + k * n) / bw * 1e6;
  double const l2_bw = c.l2_factor * bw;
  double const per_cta_rate = c.mma_flops_per_sm * v.tile_efficiency / double(occ);
  bool const serial = v.mode == CKS_MODEL_SERIAL;
  double const fixup = c.fixup_latency_us + double(tm * tn) * c.fixup_us_per_element;
  double const flops_per_k = 2.0 * double(tm) * double(tn) / per_cta_rate * 1e6;
  double const bytes_per_k = double(tm + tn) * 2.0 / l2_bw * 1e6;
  double const reduce_fixed = c.reduce_launch_us + double(m * n) * 2.0 / (c.reduce_bw_fraction * bw) * 1e6;
  double const reduce_per_part = double(m * n) * 8.0 / (c.reduce_bw_fraction * bw) * 1e6;
  for (int s = 0; s < v.split_count; ++s) {
    int64_t const split = splits[v.first_split + s];
    if (only_split > 0 && split != only_split) continue;
    int64_t gemm_k = 0, parts = 1;  // timemodel.k_partitions
    if (k > 0) {
      gemm_k = cdiv(cdiv(k, split), align_k) * align_k;
      parts = cdiv(k, gemm_k);
    }
    int64_t const ctas = tiles * parts;
    int64_t const waves = cdiv(ctas, slots);
    double const loads = double(ctas * gemm_k) * bytes_per_k;
    double const t_mem = unique_us >= loads ? unique_us : loads;  // max(): the first of equals
    double const t_compute = double(waves) * (double(gemm_k) * flops_per_k + c.wave_overhead_us);
    double const t_main = t_mem > t_compute ? t_mem : t_compute;
    double const extra = serial ? double(parts - 1) * fixup : reduce_fixed + double(parts) * reduce_per_part;
    out[count++] = CksRanked{index, int32_t(split), int32_t(parts), 0, c.launch_us + t_main + extra};
  }
  return count;
}

// Every candidate of `variants`, best first (predicted time, then name, then split); the
// number written, or -1 if `capacity` is too small.
inline int rank(CksModel const& c, CksModelVariant const* variants, int variant_count, int32_t const* splits,
                int64_t m, int64_t n, int64_t k, int32_t only_split, CksRanked* out, int capacity) {
  int total = 0;
  for (int i = 0; i < variant_count; ++i) total += variants[i].split_count;
  if (total > capacity) return -1;
  int count = 0;
  for (int i = 0; i < variant_count; ++i) {
    CksModelVariant const& v = variants[i];
    count = v.backend == 90 ? predict_sm90(c, v, splits, i, m, n, k, only_split, out, count)
                            : predict_sm80(c, v, splits, i, m, n, k, only_split, out, count);
  }
  std::sort(out, out + count, [variants](CksRanked const& x, CksRanked const& y) {
    if (x.predicted_us != y.predicted_us) return x.predicted_us < y.predicted_us;
    // name_order: the variants ranked by dispatch._tie (operand rows read from L2 per k, then the name)
    int const nx = variants[x.variant].name_order, ny = variants[y.variant].name_order;
    if (nx != ny) return nx < ny;
    return x.split < y.split;
  });
  return count;
}

}  // namespace model
}  // namespace cks

// The exported entry point (v12: CksModel gained the GPC order; a library exporting only an
// older cks_rank is ranked in Python), defined where CKS_TIMEMODEL_EXPORT is (to the export attribute, or
// empty) before this header is included: each library (library.cu.in), the CPU tests' harness
// and the fake library of benchmarks/fakelib.py.
#ifdef CKS_TIMEMODEL_EXPORT
extern "C" CKS_TIMEMODEL_EXPORT int cks_rank_v16(CksModel const* model, CksModelVariant const* variants,
                                             int variant_count, int32_t const* splits, int64_t m, int64_t n,
                                             int64_t k, int32_t only_split, CksRanked* out, int capacity) {
  return cks::model::rank(*model, variants, variant_count, splits, m, n, k, only_split, out, capacity);
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif
