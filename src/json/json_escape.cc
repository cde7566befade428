// File: json_escape.cc
// Layer: kairos_json. RFC 8259 string encoding (the one escaper) and UTF-8 validation.
// Threading: pure functions, thread-safe.
#include "json/json_escape.h"

#include <cstring>

namespace kairos {
namespace {

// Byte classes for the encoder: 0 = copy as is, 1 = needs an escape, 2 = start of (or inside)
// a multi-byte UTF-8 sequence that must be validated.
enum : uint8_t { kSafe = 0, kEscape = 1, kUtf8 = 2 };

struct ByteClassTable {
  uint8_t cls[256];
  constexpr ByteClassTable() : cls() {
    for (int i = 0; i < 256; ++i) {
      cls[i] = i < 0x20 || i == '"' || i == '\\' ? kEscape : (i >= 0x80 ? kUtf8 : kSafe);
    }
  }
};
constexpr ByteClassTable kByteClass;

constexpr char kHex[] = "0123456789abcdef";
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at p[0] (>= 0x80), or 0 when it is invalid;
// on 0, *bad_len is the length of the maximal invalid subpart (Unicode 3.9, Table 3-7),
// which becomes one U+FFFD.
size_t Utf8SequenceLength(const unsigned char* p, size_t avail, size_t* bad_len) {
  const unsigned char b0 = p[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    *bad_len = 1;
    return 0;
  }
  size_t i = 1;
  for (; i < need; ++i) {
    if (i >= avail) break;
    const unsigned char b = p[i];
    const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) break;
  }
  if (i == need) return need;
  *bad_len = i;
  return 0;
}

// True when any of the 8 bytes of `w` is < 0x20, '"', '\\' or >= 0x80 (SWAR: the classic
// "has byte less than n" and "has zero byte" bit tricks). Lets plain ASCII go 8 bytes a step.
inline bool WordNeedsAttention(uint64_t w) {
  constexpr uint64_t k01 = 0x0101010101010101ULL, k80 = 0x8080808080808080ULL;
  const uint64_t quote = w ^ (k01 * '"');
  const uint64_t backslash = w ^ (k01 * '\\');
  const uint64_t attention = ((w - k01 * 0x20) & ~w) | ((quote - k01) & ~quote) |
                             ((backslash - k01) & ~backslash) | w;
  return (attention & k80) != 0;
}

}  // namespace

size_t EscapeJsonString(std::string_view s, char* out, uint64_t* replaced) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  char* o = out;
  *o++ = '"';
  size_t run_start = 0;
  size_t i = 0;
  auto flush_run = [&](size_t end) {
    std::memcpy(o, s.data() + run_start, end - run_start);
    o += end - run_start;
  };
  while (i < n) {
    if (n - i >= 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (!WordNeedsAttention(w)) {
        i += 8;
        continue;
      }
    }
    const uint8_t c = kByteClass.cls[p[i]];
    if (c == kSafe) {
      ++i;
      continue;
    }
    if (c == kUtf8) {
      size_t bad_len = 0;
      const size_t len = Utf8SequenceLength(p + i, n - i, &bad_len);
      if (len != 0) {
        i += len;  // valid: stays part of the bulk-copied run
        continue;
      }
      flush_run(i);
      if (replaced != nullptr) ++*replaced;
      std::memcpy(o, kReplacement, 3);
      o += 3;
      i += bad_len;
      run_start = i;
      continue;
    }
    flush_run(i);
    const unsigned char b = p[i];
    *o++ = '\\';
    switch (b) {
      case '"': *o++ = '"'; break;
      case '\\': *o++ = '\\'; break;
      case '\n': *o++ = 'n'; break;
      case '\t': *o++ = 't'; break;
      case '\r': *o++ = 'r'; break;
      case '\b': *o++ = 'b'; break;
      case '\f': *o++ = 'f'; break;
      default:
        o[0] = 'u';
        o[1] = '0';
        o[2] = '0';
        o[3] = kHex[b >> 4];
        o[4] = kHex[b & 0xF];
        o += 5;
    }
    ++i;
    run_start = i;
  }
  flush_run(n);
  *o++ = '"';
  return static_cast<size_t>(o - out);
}

void AppendJsonString(std::string_view s, std::string* out, uint64_t* replaced) {
  const size_t old = out->size();
  out->resize(old + MaxEscapedSize(s.size()));
  out->resize(old + EscapeJsonString(s, out->data() + old, replaced));
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t len = Utf8SequenceLength(p + i, n - i, &bad);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace kairos
