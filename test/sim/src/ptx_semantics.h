// File: test/sim/src/ptx_semantics.h
// Layer: CUDA/CUPTI simulator, kernel execution: what each PTX operation computes on one
//        lane's values, shared by the reference interpreter (ptx_exec.cc) and the decoded fast
//        path (ptx_fast.cc) so the two can differ only in how they walk lanes, never in results.
// Threading: pure functions.
//
// Registers are 64-bit slots; a result is written zero-extended to its type's width (Mask).
#ifndef KAIROS_TEST_SIM_SRC_PTX_SEMANTICS_H_
#define KAIROS_TEST_SIM_SRC_PTX_SEMANTICS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ptx_program.h"

namespace kairos::sim::ptx {

inline uint64_t Mask(uint64_t v, int bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }
inline int64_t SExt(uint64_t v, int bits) {
  return bits >= 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}
inline float F32(uint64_t v) {
  float f;
  uint32_t u = static_cast<uint32_t>(v);
  std::memcpy(&f, &u, 4);
  return f;
}
inline double F64(uint64_t v) {
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}
inline uint64_t Bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline uint64_t Bits64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// A float-typed value as double (f32 widened exactly).
inline double FVal(uint64_t v, Ty t) { return t == Ty::kF32 ? static_cast<double>(F32(v)) : F64(v); }
inline uint64_t FBits(double d, Ty t) { return t == Ty::kF32 ? Bits32(static_cast<float>(d)) : Bits64(d); }

inline double RoundInt(double x, uint8_t mode) {
  switch (mode) {
    case kRni: return std::nearbyint(x);
    case kRmi: return std::floor(x);
    case kRpi: return std::ceil(x);
    default: return std::trunc(x);
  }
}

// float -> integer as PTX does: round, saturate to the destination range, NaN -> 0.
inline uint64_t FloatToInt(double x, Ty dst, uint8_t mode) {
  if (std::isnan(x)) return 0;
  x = RoundInt(x, mode);
  const int bits = Bits(dst);
  if (IsSigned(dst)) {
    const double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
    if (x <= lo) return Mask(static_cast<uint64_t>(std::numeric_limits<int64_t>::min() >> (64 - bits)), bits);
    if (x >= hi) return Mask((1ull << (bits - 1)) - 1, bits);
    return Mask(static_cast<uint64_t>(static_cast<int64_t>(x)), bits);
  }
  if (x <= 0) return 0;
  const double hi = std::ldexp(1.0, bits);
  if (x >= hi) return Mask(~0ull, bits);
  return static_cast<uint64_t>(x);
}

inline uint64_t LoadElem(const uint8_t* p, Ty t) {
  switch (Bits(t)) {
    case 8: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      return IsSigned(t) ? static_cast<uint64_t>(SExt(v, 8)) : v;
    }
    case 16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return IsSigned(t) ? static_cast<uint64_t>(SExt(v, 16)) : v;
    }
    case 32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return IsSigned(t) ? static_cast<uint64_t>(SExt(v, 32)) : v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

inline uint32_t ElemBytes(Ty t) { return t == Ty::kPred ? 1 : static_cast<uint32_t>(Bits(t) / 8); }

inline uint64_t IntBinary(const Inst& in, uint64_t x, uint64_t y) {
  const int bits = Bits(in.ty);
  const bool sg = IsSigned(in.ty);
  const int64_t a = SExt(x, bits), b = SExt(y, bits);
  const uint64_t ua = Mask(x, bits), ub = Mask(y, bits);
  switch (in.op) {
    case Op::kAdd: {
      if (in.sat && sg) {  // add.sat.s32 clamps
        int64_t r = a + b;
        r = std::max<int64_t>(std::min<int64_t>(r, INT32_MAX), INT32_MIN);
        return static_cast<uint64_t>(r);
      }
      return ua + ub;
    }
    case Op::kSub: {
      if (in.sat && sg) {
        int64_t r = a - b;
        r = std::max<int64_t>(std::min<int64_t>(r, INT32_MAX), INT32_MIN);
        return static_cast<uint64_t>(r);
      }
      return ua - ub;
    }
    case Op::kDiv:
      if (sg) {
        if (b == 0) return ~0ull;
        if (b == -1) return static_cast<uint64_t>(-static_cast<uint64_t>(a));
        return static_cast<uint64_t>(a / b);
      }
      return ub == 0 ? ~0ull : ua / ub;
    case Op::kRem:
      if (sg) {
        if (b == 0 || b == -1) return b == 0 ? static_cast<uint64_t>(a) : 0;
        return static_cast<uint64_t>(a % b);
      }
      return ub == 0 ? ua : ua % ub;
    case Op::kMin: return sg ? static_cast<uint64_t>(std::min(a, b)) : std::min(ua, ub);
    case Op::kMax: return sg ? static_cast<uint64_t>(std::max(a, b)) : std::max(ua, ub);
    case Op::kAnd: return ua & ub;
    case Op::kOr: return ua | ub;
    case Op::kXor: return ua ^ ub;
    case Op::kShl: {
      uint64_t s = Mask(y, 32);
      return s >= static_cast<uint64_t>(bits) ? 0 : ua << s;
    }
    case Op::kShr: {
      uint64_t s = Mask(y, 32);
      if (sg) return static_cast<uint64_t>(a >> std::min<uint64_t>(s, 63));
      return s >= static_cast<uint64_t>(bits) ? 0 : ua >> s;
    }
    default: return 0;
  }
}

inline double FloatBinary(const Inst& in, double a, double b) {
  double r = 0;
  const bool f32 = in.ty == Ty::kF32;
  switch (in.op) {
    case Op::kAdd: r = f32 ? static_cast<double>(static_cast<float>(a) + static_cast<float>(b)) : a + b; break;
    case Op::kSub: r = f32 ? static_cast<double>(static_cast<float>(a) - static_cast<float>(b)) : a - b; break;
    case Op::kMul: r = f32 ? static_cast<double>(static_cast<float>(a) * static_cast<float>(b)) : a * b; break;
    case Op::kDiv: r = f32 ? static_cast<double>(static_cast<float>(a) / static_cast<float>(b)) : a / b; break;
    case Op::kMin: r = std::fmin(a, b); break;
    case Op::kMax: r = std::fmax(a, b); break;
    default: break;
  }
  if (in.sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
  return r;
}

// mul/mad on integers: lo, hi and wide forms.
inline uint64_t IntMul(const Inst& in, uint64_t x, uint64_t y) {
  const int bits = Bits(in.ty);
  const bool sg = IsSigned(in.ty);
  if (in.mode == kWide) {
    if (sg) return static_cast<uint64_t>(SExt(x, bits) * SExt(y, bits));
    return Mask(x, bits) * Mask(y, bits);
  }
  if (in.mode == kHi) {
    if (bits == 64) {
      if (sg) {
        __int128 p = static_cast<__int128>(static_cast<int64_t>(x)) * static_cast<int64_t>(y);
        return static_cast<uint64_t>(p >> 64);
      }
      unsigned __int128 p = static_cast<unsigned __int128>(x) * y;
      return static_cast<uint64_t>(p >> 64);
    }
    if (sg) return static_cast<uint64_t>((SExt(x, bits) * SExt(y, bits)) >> bits);
    return (Mask(x, bits) * Mask(y, bits)) >> bits;
  }
  return Mask(x, bits) * Mask(y, bits);
}

inline bool Compare(const Inst& in, uint64_t x, uint64_t y) {
  if (IsFloat(in.ty)) {
    const double a = FVal(x, in.ty), b = FVal(y, in.ty);
    const bool un = std::isnan(a) || std::isnan(b);
    switch (in.mode) {
      case kEq: return !un && a == b;
      case kNe: return !un && a != b;
      case kLt: return !un && a < b;
      case kLe: return !un && a <= b;
      case kGt: return !un && a > b;
      case kGe: return !un && a >= b;
      case kEqu: return un || a == b;
      case kNeu: return un || a != b;
      case kLtu: return un || a < b;
      case kLeu: return un || a <= b;
      case kGtu: return un || a > b;
      case kGeu: return un || a >= b;
      case kNum: return !un;
      case kNan: return un;
      default: return false;
    }
  }
  const int bits = Bits(in.ty);
  const bool sg = IsSigned(in.ty);
  const int64_t a = SExt(x, bits), b = SExt(y, bits);
  const uint64_t ua = Mask(x, bits), ub = Mask(y, bits);
  switch (in.mode) {
    case kEq: return ua == ub;
    case kNe: return ua != ub;
    case kLt: return sg ? a < b : ua < ub;
    case kLe: return sg ? a <= b : ua <= ub;
    case kGt: return sg ? a > b : ua > ub;
    case kGe: return sg ? a >= b : ua >= ub;
    case kLo_: return ua < ub;
    case kLs: return ua <= ub;
    case kHi_: return ua > ub;
    case kHs: return ua >= ub;
    default: return false;
  }
}

inline uint64_t Convert(const Inst& in, uint64_t v) {
  const Ty dst = in.ty, src = in.ty2;
  if (IsFloat(src)) {
    const double x = FVal(v, src);
    if (IsFloat(dst)) {
      double r = x;
      if (in.mode >= kRni) r = RoundInt(x, in.mode);
      if (in.sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
      return FBits(r, dst);
    }
    return FloatToInt(x, dst, in.mode == kRDefault ? static_cast<uint8_t>(kRzi) : in.mode);
  }
  const int sbits = Bits(src);
  if (IsFloat(dst)) {
    // One rounding, straight from the integer (int -> double -> float could round twice).
    if (IsSigned(src)) {
      return dst == Ty::kF32 ? Bits32(static_cast<float>(SExt(v, sbits))) : Bits64(static_cast<double>(SExt(v, sbits)));
    }
    return dst == Ty::kF32 ? Bits32(static_cast<float>(Mask(v, sbits))) : Bits64(static_cast<double>(Mask(v, sbits)));
  }
  const uint64_t val = IsSigned(src) ? static_cast<uint64_t>(SExt(v, sbits)) : Mask(v, sbits);
  return Mask(val, Bits(dst));
}

inline uint64_t Unary(const Inst& in, uint64_t x) {
  const int bits = Bits(in.ty);
  switch (in.op) {
    case Op::kNot: return Mask(~x, bits);
    case Op::kCnot: return Mask(x, bits) == 0 ? 1 : 0;
    case Op::kNeg:
    case Op::kAbs: {
      if (IsFloat(in.ty)) {
        const double v = FVal(x, in.ty);
        return FBits(in.op == Op::kNeg ? -v : std::fabs(v), in.ty);
      }
      const uint64_t v = static_cast<uint64_t>(SExt(x, bits));
      const bool negate = in.op == Op::kNeg || SExt(x, bits) < 0;
      return Mask(negate ? (~v + 1) : v, bits);
    }
    default: {  // sqrt, rcp
      const double v = FVal(x, in.ty);
      double r;
      if (in.ty == Ty::kF32) {
        const float f = static_cast<float>(v);
        r = in.op == Op::kSqrt ? std::sqrt(f) : 1.0f / f;
      } else {
        r = in.op == Op::kSqrt ? std::sqrt(v) : 1.0 / v;
      }
      return FBits(r, in.ty);
    }
  }
}


// The value atom/red `in` writes over `old`, with operand b (and c, cas's new value).
inline uint64_t AtomicResult(const Inst& in, uint64_t old, uint64_t b, uint64_t c) {
  const int bits = Bits(in.ty);
  switch (in.mode) {
    case kAtomAdd: return IsFloat(in.ty) ? FBits(FVal(old, in.ty) + FVal(b, in.ty), in.ty) : old + b;
    case kAtomMin:
    case kAtomMax: {
      bool take_b;
      if (IsFloat(in.ty)) {
        take_b = in.mode == kAtomMin ? FVal(b, in.ty) < FVal(old, in.ty) : FVal(b, in.ty) > FVal(old, in.ty);
      } else if (IsSigned(in.ty)) {
        take_b = in.mode == kAtomMin ? SExt(b, bits) < SExt(old, bits) : SExt(b, bits) > SExt(old, bits);
      } else {
        take_b = in.mode == kAtomMin ? Mask(b, bits) < Mask(old, bits) : Mask(b, bits) > Mask(old, bits);
      }
      return take_b ? b : old;
    }
    case kAtomExch: return b;
    case kAtomCas: return Mask(old, bits) == Mask(b, bits) ? c : old;
    case kAtomAnd: return old & b;
    case kAtomOr: return old | b;
    case kAtomXor: return old ^ b;
    case kAtomInc: return Mask(old, bits) >= Mask(b, bits) ? 0 : old + 1;
    case kAtomDec: return (Mask(old, bits) == 0 || Mask(old, bits) > Mask(b, bits)) ? b : old - 1;
    default: return old;
  }
}

}  // namespace kairos::sim::ptx

#endif  // KAIROS_TEST_SIM_SRC_PTX_SEMANTICS_H_
