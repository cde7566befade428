// File: json_decimal.h
// Layer: kairos_json. THE decimal integer writer: every integer kairos writes as JSON text
// (trace events through output/json_out.h, summaries and RPC replies through JsonBuffer)
// goes through PutUint / PutInt here, so there is one spelling and one place to make it fast.
// The text is std::to_chars' (json_test compares both functions with it; the output layer's
// json_writer_test compares the trace's ts/dur text with printf).
// Threading: none (pure functions over read-only tables).
#ifndef KAIROS_SRC_JSON_JSON_DECIMAL_H_
#define KAIROS_SRC_JSON_JSON_DECIMAL_H_

#include <cstdint>
#include <cstring>

namespace kairos {

// "00" .. "99": decimal digits are written two per division, from the right.
inline constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Decimal digits of v (1 for 0): log10 from the bit width, corrected by one comparison.
inline unsigned DecimalDigits(uint64_t v) {
  static constexpr uint64_t kPow10[20] = {1ull,
                                          10ull,
                                          100ull,
                                          1000ull,
                                          10000ull,
                                          100000ull,
                                          1000000ull,
                                          10000000ull,
                                          100000000ull,
                                          1000000000ull,
                                          10000000000ull,
                                          100000000000ull,
                                          1000000000000ull,
                                          10000000000000ull,
                                          100000000000000ull,
                                          1000000000000000ull,
                                          10000000000000000ull,
                                          100000000000000000ull,
                                          1000000000000000000ull,
                                          10000000000000000000ull};
  v |= 1;
  const unsigned t = static_cast<unsigned>((64 - __builtin_clzll(v)) * 1233) >> 12;
  return t - (v < kPow10[t] ? 1 : 0) + 1;
}

// `v` in decimal at p (room for 20 bytes); returns the end. The length first
// (DecimalDigits), then two digits per division from the right, instead of to_chars' own
// length loop (ids, timestamps and sizes are most of a trace's numbers).
inline char* PutDecimal(uint64_t v, char* p) {
  char* const end = p + DecimalDigits(v);
  char* q = end;
  while (v >= 100) {
    const auto r = static_cast<unsigned>(v % 100);
    v /= 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * r, 2);
  }
  if (v >= 10) {
    std::memcpy(q - 2, kDigitPairs + 2 * v, 2);
  } else {
    q[-1] = static_cast<char>('0' + v);
  }
  return end;
}

// PutDecimal with the one- and two-digit values (most small args: device, stream, block
// dims) written without the length computation.
inline char* PutUint(uint64_t v, char* p) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
    return p + 2;
  }
  return PutDecimal(v, p);
}

// Signed: a '-' and the magnitude (INT64_MIN's included: its magnitude fits in uint64_t).
// Room for 20 bytes.
inline char* PutInt(int64_t v, char* p) {
  if (v >= 0) return PutUint(static_cast<uint64_t>(v), p);
  *p = '-';
  return PutUint(0 - static_cast<uint64_t>(v), p + 1);
}

}  // namespace kairos

#endif  // KAIROS_SRC_JSON_JSON_DECIMAL_H_
