// cutlass-splitk: the fused epilogue every backend and split-K strategy shares,
//   F = permute( E_op( act( alpha * acc + beta * C + bias ), E ) ),
// applied to kAlignment-element vectors of accumulators (FusedEpilogue), with the vector
// loads/stores it uses.
//
// FusedEpilogue<Cfg> needs only these members of Cfg: Element (the output type), kAlignment
// (elements per access), kAct, kEOp, kBias and kPermute. RuntimeKind<Element> is the one Cfg whose
// kind (activation, E op, bias, permute) is read from the parameters instead, which init_host of
// the op's own Cfg fills: the code an op-agnostic kernel runs for any op (sm90's partial GEMM with
// the reduction inside). For every other Cfg the kind folds to constants.
#pragma once

#include <cstdint>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"
#include "cutlass/fast_math.h"
#include "cutlass/numeric_conversion.h"
#include "cutlass/numeric_types.h"

#include "cks_activation.cuh"
#include "cks_error.cuh"

namespace cks {

enum class EOp { kNone, kAdd, kMul };
enum class Bias { kNone, kPerCol, kPerRow };
enum class Permute { kNone, k0213, k20314 };

// ---------------------------------------------------------------------------------------
// Vector memory access
// ---------------------------------------------------------------------------------------

template <int kBytes> struct VecWord;
template <> struct VecWord<16> { using type = uint4; };
template <> struct VecWord<8> { using type = uint2; };
template <> struct VecWord<4> { using type = uint32_t; };
template <> struct VecWord<2> { using type = uint16_t; };

// Loads kN elements of T at p (aligned to the whole vector) and converts them to float.
// kStream uses ld.global.cg: data written by another CTA (serial partials) or read once
// (parallel partials) bypasses L1.
template <class T, int kN, bool kStream = false>
CUTLASS_DEVICE cutlass::Array<float, kN> load_vec(T const* p) {
  using Word = typename VecWord<int(sizeof(T)) * kN>::type;
  cutlass::Array<T, kN> raw;
  Word const* src = reinterpret_cast<Word const*>(p);
  if constexpr (kStream) {
    *reinterpret_cast<Word*>(&raw) = __ldcg(src);
  } else {
    *reinterpret_cast<Word*>(&raw) = *src;
  }
  cutlass::NumericArrayConverter<float, T, kN> convert;
  return convert(raw);
}

// Stores kN floats at p (aligned to the whole vector) converted to T, as one access. The 8- and
// 16-byte words go through __stwb (st.global.wb.v2/v4): written as a plain assignment from the
// converted array, NVVM split the 16-byte store of the permuted epilogue into four 4-byte ones
// (ncu: 4x the sectors of every D store; session 7).
template <class T, int kN>
CUTLASS_DEVICE void store_vec(T* p, cutlass::Array<float, kN> const& v) {
  using Word = typename VecWord<int(sizeof(T)) * kN>::type;
  cutlass::NumericArrayConverter<T, float, kN, cutlass::FloatRoundStyle::round_to_nearest>
      convert;
  cutlass::Array<T, kN> raw = convert(v);
  Word word;
  static_assert(sizeof(word) == sizeof(raw), "one word per vector");
  memcpy(&word, &raw, sizeof(Word));
  if constexpr (sizeof(Word) >= 8) {
    __stwb(reinterpret_cast<Word*>(p), word);
  } else {
    *reinterpret_cast<Word*>(p) = word;
  }
}

// ---------------------------------------------------------------------------------------
// The fused epilogue, shared by both split-K strategies
// ---------------------------------------------------------------------------------------

// What the epilogue does: the op's compile-time kind, kept in its parameters too (see RuntimeKind).
struct EpilogueKind {
  Act act = Act::kIdentity;
  EOp eop = EOp::kNone;
  Bias bias = Bias::kNone;
  Permute permute = Permute::kNone;
};

template <class Element>
struct EpilogueParams {
  EpilogueKind kind;
  float alpha = 1.f, beta = 0.f, act_arg = 0.f;
  Element const* c = nullptr;
  int64_t ldc = 0;
  Element const* bias = nullptr;
  Element const* e = nullptr;
  int64_t lde = 0;
  Element* d = nullptr;
  int64_t ldd = 0;
  int m = 0, n = 0;
  // Permuted output: rows m = b * S + s; columns n = (t * H + h) * Dh + dd.
  cutlass::FastDivmod div_s;    // S
  cutlass::FastDivmod div_dh;   // Dh
  cutlass::FastDivmod div_hdh;  // H * Dh
  int perm_b = 1, perm_s = 1, perm_h = 1, perm_dh = 1;
};

// The Cfg of an epilogue whose kind is the parameters' (16-byte vectors).
template <class Element_>
struct RuntimeKind {
  using Element = Element_;
  static constexpr int kAlignment = 16 / int(sizeof(Element_));
  static constexpr bool kRuntimeKind = true;
};

template <class Cfg, class = void>
struct HasRuntimeKind {
  static constexpr bool value = false;
};
template <class Cfg>
struct HasRuntimeKind<Cfg, decltype(void(Cfg::kRuntimeKind))> {
  static constexpr bool value = Cfg::kRuntimeKind;
};

// Only what FusedEpilogue reads of a Cfg (see above), so that code which depends on nothing else
// (the parallel reduction kernel) is instantiated once per epilogue, not once per GEMM config.
template <class Element_, int kAlignment_, Act kAct_, EOp kEOp_, Bias kBias_, Permute kPermute_>
struct EpilogueOnly {
  using Element = Element_;
  static constexpr int kAlignment = kAlignment_;
  static constexpr Act kAct = kAct_;
  static constexpr EOp kEOp = kEOp_;
  static constexpr Bias kBias = kBias_;
  static constexpr Permute kPermute = kPermute_;
};
template <class Cfg, bool = HasRuntimeKind<Cfg>::value>
struct EpilogueKeyOf {
  using type = EpilogueOnly<typename Cfg::Element, int(Cfg::kAlignment), Cfg::kAct, Cfg::kEOp, Cfg::kBias,
                            Cfg::kPermute>;
};
template <class Cfg>
struct EpilogueKeyOf<Cfg, true> {
  using type = Cfg;
};
template <class Cfg>
using EpilogueKey = typename EpilogueKeyOf<Cfg>::type;

template <class Cfg>
struct FusedEpilogue {
  using Element = typename Cfg::Element;
  using Params = EpilogueParams<Element>;
  static int const kV = Cfg::kAlignment;
  using Vec = cutlass::Array<float, kV>;
  static constexpr bool kRuntime = HasRuntimeKind<Cfg>::value;

  // The kind: the Cfg's constants, or the parameters' for RuntimeKind.
  CUTLASS_HOST_DEVICE static EpilogueKind kind(Params const& p) {
    if constexpr (kRuntime) {
      return p.kind;
    } else {
      return EpilogueKind{Cfg::kAct, Cfg::kEOp, Cfg::kBias, Cfg::kPermute};
    }
  }

  // Where output element (row, col) goes under a permute: row = b * S + s, col = (t * H + h) * Dh + dd
  // (t: which of q, k, v under the qkv split; 0 under the head split).
  struct PermutedCoord {
    int b, s, t, h, dd;
  };
  CUTLASS_DEVICE static PermutedCoord permuted_coord(Params const& p, Permute permute, int row, int col) {
    PermutedCoord c;
    p.div_s.fast_divmod(c.b, c.s, row);
    if (permute == Permute::k0213) {
      c.t = 0;
      p.div_dh.fast_divmod(c.h, c.dd, col);
    } else {
      int rem;
      p.div_hdh.fast_divmod(c.t, rem, col);
      p.div_dh.fast_divmod(c.h, c.dd, rem);
    }
    return c;
  }

  // Offset of output element (row, col) in D, permuted or not.
  CUTLASS_DEVICE static int64_t offset_d(Params const& p, int row, int col) {
    Permute const permute = kind(p).permute;
    if (permute == Permute::kNone) {
      return int64_t(row) * p.ldd + col;
    }
    PermutedCoord const c = permuted_coord(p, permute, row, col);
    if (permute == Permute::k0213) {
      // (B, S, H, Dh) -> (B, H, S, Dh)
      return ((int64_t(c.b) * p.perm_h + c.h) * p.perm_s + c.s) * p.perm_dh + c.dd;
    }
    // (B, S, 3, H, Dh) -> (3, B, H, S, Dh)
    return (((int64_t(c.t) * p.perm_b + c.b) * p.perm_h + c.h) * p.perm_s + c.s) * p.perm_dh + c.dd;
  }

  // What the epilogue reads besides the accumulators, for one vector. Loading it apart from
  // using it lets a caller issue the loads of several vectors before the first store (a store
  // to D may alias nothing the compiler can prove, so it would otherwise serialise them).
  // Kept in the element type until used: a few registers per vector.
  using Raw = cutlass::Array<Element, kV>;
  struct Sources {
    Raw c, bias, e;
    float row_bias;
  };

  CUTLASS_DEVICE static Raw load_raw(Element const* p) {
    using Word = typename VecWord<int(sizeof(Element)) * kV>::type;
    Raw raw;
    *reinterpret_cast<Word*>(&raw) = *reinterpret_cast<Word const*>(p);
    return raw;
  }

  CUTLASS_DEVICE static Vec to_float(Raw const& raw) {
    cutlass::NumericArrayConverter<float, Element, kV> convert;
    return convert(raw);
  }

  // beta * C and the bias: the linear part's inputs (first partition).
  CUTLASS_DEVICE static void load_linear(Params const& p, int row, int col, Sources& s) {
    if (p.beta != 0.f) s.c = load_raw(p.c + int64_t(row) * p.ldc + col);
    Bias const bias = kind(p).bias;
    if (bias == Bias::kPerCol) {
      if (p.bias) s.bias = load_raw(p.bias + col);  // the bias is optional at call time
    } else if (bias == Bias::kPerRow) {
      if (p.bias) s.row_bias = float(p.bias[row]);
    }
  }

  // E: the non-linear part's input (last partition).
  CUTLASS_DEVICE static void load_e(Params const& p, int row, int col, Sources& s) {
    if (kind(p).eop != EOp::kNone) s.e = load_raw(p.e + int64_t(row) * p.lde + col);
  }

  CUTLASS_DEVICE static void load_sources(Params const& p, int row, int col, Sources& s) {
    load_linear(p, row, col, s);
    load_e(p, row, col, s);
  }

  // alpha * v + beta * C + bias: the linear part, applied once (first partition), with alpha
  // folded into the last add: one FFMA per value where the op has a bias. The same zero signs as
  // (alpha * v + beta * C) + bias: the addend is beta * C + bias, or beta * C alone. (sm80's serial
  // kernel scales its partials itself and passes alpha = 1.)
  CUTLASS_DEVICE static void add_linear(Params const& p, Sources const& s, Vec& v, float alpha = 1.f) {
    Bias const kind_bias = kind(p).bias;
    bool const bias = kind_bias != Bias::kNone && p.bias != nullptr;
    if (!bias && p.beta == 0.f) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] *= alpha;
      return;
    }
    Vec addend;
    if (kind_bias == Bias::kPerCol) {
      if (bias) addend = to_float(s.bias);
    } else if (kind_bias == Bias::kPerRow) {
      if (bias) addend.fill(s.row_bias);
    }
    if (p.beta != 0.f) {
      Vec c = to_float(s.c);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) addend[i] = bias ? fmaf(p.beta, c[i], addend[i]) : p.beta * c[i];
    }
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kV; ++i) v[i] = fmaf(v[i], alpha, addend[i]);
  }

  // act, then E_op: the non-linear part, applied once (last partition).
  CUTLASS_DEVICE static void finish_with(Params const& p, Sources const& s, Vec& v) {
    if constexpr (kRuntime) {
      activate_all(p.kind.act, v, p.act_arg);
    } else {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] = activate<Cfg::kAct>(v[i], p.act_arg);
    }
    EOp const eop = kind(p).eop;
    if (eop != EOp::kNone) {
      Vec e = to_float(s.e);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kV; ++i) v[i] = (eop == EOp::kAdd) ? v[i] + e[i] : v[i] * e[i];
    }
  }

  CUTLASS_DEVICE static void add_source(Params const& p, int row, int col, Vec& v) {
    Sources s;
    load_linear(p, row, col, s);
    add_linear(p, s, v);
  }

  CUTLASS_DEVICE static void finish(Params const& p, int row, int col, Vec& v) {
    Sources s;
    load_e(p, row, col, s);
    finish_with(p, s, v);
  }

  // The whole epilogue for one vector whose sources are loaded, stored at D.
  CUTLASS_DEVICE static void apply_and_store(Params const& p, int row, int col, Sources const& s, Vec v) {
    add_linear(p, s, v, p.alpha);
    finish_with(p, s, v);
    store_vec<Element, kV>(p.d + offset_d(p, row, col), v);
  }

  // The whole epilogue for one vector of kV accumulator values (unsplit or reduced).
  CUTLASS_DEVICE static void apply_and_store(Params const& p, int row, int col, Vec v) {
    Sources s;
    load_sources(p, row, col, s);
    apply_and_store(p, row, col, s, v);
  }

  // Host side: fills the permute divisors and validates the view. Returns an empty string
  // when the problem is representable.
  static std::string init_host(Params& p, CksArgs const& a) {
    static_assert(!kRuntime, "an op's own Cfg fills the parameters");
    p.kind = kind(p);
    p.alpha = a.alpha;
    p.beta = a.beta;
    p.act_arg = a.act_arg;
    p.c = static_cast<Element const*>(a.c);
    p.ldc = a.ldc;
    p.bias = static_cast<Element const*>(a.bias);
    p.e = static_cast<Element const*>(a.e);
    p.lde = a.lde;
    p.d = static_cast<Element*>(a.d);
    p.ldd = a.ldd;
    p.m = a.m;
    p.n = a.n;
    int const bytes = kV * int(sizeof(Element));
    auto misaligned = [&](char const* what) {
      return std::string(what) + " must be aligned to " + std::to_string(bytes) +
             " bytes (" + std::to_string(kV) + " elements) for this variant";
    };
    if (a.n % kV) return "N = " + std::to_string(a.n) + " must be a multiple of " + std::to_string(kV);
    if (p.beta != 0.f) {
      if (!p.c) return "beta != 0 needs C";
      if (!aligned(p.c, bytes) || p.ldc % kV) return misaligned("C (pointer and ldc)");
    }
    if (Cfg::kBias == Bias::kNone && p.bias) return "this variant has no bias";
    if (Cfg::kBias == Bias::kPerCol && p.bias && !aligned(p.bias, bytes)) return misaligned("bias");
    if (Cfg::kEOp != EOp::kNone) {
      if (!p.e) return "this variant needs E";
      if (!aligned(p.e, bytes) || p.lde % kV) return misaligned("E (pointer and lde)");
    }
    if (!p.d) return "D is null";
    if (!aligned(p.d, bytes)) return misaligned("D");
    if (Cfg::kPermute == Permute::kNone) {
      if (p.ldd % kV || p.ldd < p.n) return misaligned("D's ldd");
    } else {
      int const groups = (Cfg::kPermute == Permute::k20314) ? 3 : 1;
      if (a.permute_s <= 0 || a.m % a.permute_s)
        return "permute: M = " + std::to_string(a.m) + " is not a multiple of S = " +
               std::to_string(a.permute_s);
      if (a.permute_h <= 0 || a.n % (groups * a.permute_h))
        return "permute: N = " + std::to_string(a.n) + " is not a multiple of " +
               std::to_string(groups) + " * H = " + std::to_string(groups * a.permute_h);
      int dh = a.n / (groups * a.permute_h);
      if (dh % kV)
        return "permute: head size " + std::to_string(dh) + " must be a multiple of " +
               std::to_string(kV);
      p.perm_s = a.permute_s;
      p.perm_b = a.m / a.permute_s;
      p.perm_h = a.permute_h;
      p.perm_dh = dh;
      p.div_s = cutlass::FastDivmod(a.permute_s);
      p.div_dh = cutlass::FastDivmod(dh);
      p.div_hdh = cutlass::FastDivmod(a.permute_h * dh);
    }
    return std::string();
  }
};

}  // namespace cks
