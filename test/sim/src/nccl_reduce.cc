// File: test/sim/src/nccl_reduce.cc
// Layer: CUDA/CUPTI simulator, substitute libnccl.so.2: element-wise reductions on host memory
//        (the simulator's device memory is host memory), so programs can check their results.
// Threading: pure functions.
#include <cmath>
#include <cstring>

#include "nccl_comm.h"

namespace kairos::sim::nccl {
namespace {

// IEEE half <-> float (round to nearest even on the way back), and bfloat16 (upper half of a float).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN stays NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

template <typename T>
T Combine(T a, T b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return static_cast<T>(a * b);
    case ncclMax: return a > b ? a : b;
    case ncclMin: return a < b ? a : b;
    default: return static_cast<T>(a + b);  // ncclSum, ncclAvg
  }
}

template <typename T>
void Reduce(void* out, const char* const* in, int n, size_t count, ncclRedOp_t op) {
  T* o = static_cast<T*>(out);
  for (size_t i = 0; i < count; ++i) {
    T acc;
    std::memcpy(&acc, in[0] + i * sizeof(T), sizeof(T));
    for (int r = 1; r < n; ++r) {
      T v;
      std::memcpy(&v, in[r] + i * sizeof(T), sizeof(T));
      acc = Combine(acc, v, op);
    }
    if (op == ncclAvg) acc = static_cast<T>(acc / static_cast<T>(n));
    o[i] = acc;
  }
}

// 16-bit floats reduce in float (as NCCL's kernels accumulate) and round once.
template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void Reduce16(void* out, const char* const* in, int n, size_t count, ncclRedOp_t op) {
  uint16_t* o = static_cast<uint16_t*>(out);
  for (size_t i = 0; i < count; ++i) {
    uint16_t raw;
    std::memcpy(&raw, in[0] + i * 2, 2);
    float acc = ToF(raw);
    for (int r = 1; r < n; ++r) {
      std::memcpy(&raw, in[r] + i * 2, 2);
      acc = Combine(acc, ToF(raw), op);
    }
    if (op == ncclAvg) acc /= static_cast<float>(n);
    o[i] = FromF(acc);
  }
}

}  // namespace

void ReduceInto(void* out, const char* const* in, int n, size_t count, ncclDataType_t t, ncclRedOp_t op) {
  switch (t) {
    case ncclInt8: Reduce<int8_t>(out, in, n, count, op); break;
    case ncclUint8: Reduce<uint8_t>(out, in, n, count, op); break;
    case ncclInt32: Reduce<int32_t>(out, in, n, count, op); break;
    case ncclUint32: Reduce<uint32_t>(out, in, n, count, op); break;
    case ncclInt64: Reduce<int64_t>(out, in, n, count, op); break;
    case ncclUint64: Reduce<uint64_t>(out, in, n, count, op); break;
    case ncclFloat16: Reduce16<HalfToFloat, FloatToHalf>(out, in, n, count, op); break;
    case ncclFloat32: Reduce<float>(out, in, n, count, op); break;
    case ncclFloat64: Reduce<double>(out, in, n, count, op); break;
    case ncclBfloat16: Reduce16<Bf16ToFloat, FloatToBf16>(out, in, n, count, op); break;
    default: break;
  }
}

}  // namespace kairos::sim::nccl
