// File: json_escape.cc
// Layer: kairos_output. RFC 8259 string encoding and raw-JSON validation.
// Threading: pure functions, thread-safe.
#include "output/json_escape.h"

#include <cstring>
#include <unordered_set>
#include <vector>

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

size_t EscapeJsonString(std::string_view s, char* out) {
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

void AppendJsonString(std::string_view s, std::string* out) {
  const size_t old = out->size();
  out->resize(old + MaxEscapedSize(s.size()));
  out->resize(old + EscapeJsonString(s, out->data() + old));
}

namespace {

// Recursive-descent validator. Depth is bounded, so recursion is bounded too.
class JsonValidator {
 public:
  explicit JsonValidator(std::string_view t)
      : p_(reinterpret_cast<const unsigned char*>(t.data())), n_(t.size()) {}

  bool Run() {
    SkipWs();
    if (!Value(0)) return false;
    SkipWs();
    return i_ == n_;
  }

 private:
  void SkipWs() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  bool Literal(const char* lit) {
    const size_t len = std::strlen(lit);
    if (n_ - i_ < len || std::memcmp(p_ + i_, lit, len) != 0) return false;
    i_ += len;
    return true;
  }
  bool Digits() {
    const size_t start = i_;
    while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool Number() {
    if (i_ < n_ && p_[i_] == '-') ++i_;
    if (i_ >= n_) return false;
    if (p_[i_] == '0') {
      ++i_;
    } else if (!Digits()) {
      return false;
    }
    if (i_ < n_ && p_[i_] == '.') {
      ++i_;
      if (!Digits()) return false;
    }
    if (i_ < n_ && (p_[i_] == 'e' || p_[i_] == 'E')) {
      ++i_;
      if (i_ < n_ && (p_[i_] == '+' || p_[i_] == '-')) ++i_;
      if (!Digits()) return false;
    }
    return true;
  }
  static bool IsHex(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  // Parses a string; when `raw` is non-null, stores its raw (undecoded) body for
  // duplicate-key detection. Two spellings of one key (`a` vs `\u0061`) are not unified;
  // that only matters for adversarial input, which is still valid JSON either way.
  bool String(std::string_view* raw) {
    if (i_ >= n_ || p_[i_] != '"') return false;
    const size_t start = ++i_;
    while (i_ < n_) {
      const unsigned char c = p_[i_];
      if (c == '"') {
        if (raw) *raw = std::string_view(reinterpret_cast<const char*>(p_ + start), i_ - start);
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= n_) return false;
        const unsigned char e = p_[i_];
        if (e == 'u') {
          if (n_ - i_ < 5) return false;
          for (int k = 1; k <= 4; ++k) {
            if (!IsHex(p_[i_ + k])) return false;
          }
          i_ += 5;
          continue;
        }
        if (!std::strchr("\"\\/bfnrt", e) || e == 0) return false;
        ++i_;
        continue;
      }
      if (c >= 0x80) {
        size_t bad = 0;
        const size_t len = Utf8SequenceLength(p_ + i_, n_ - i_, &bad);
        if (len == 0) return false;
        i_ += len;
        continue;
      }
      ++i_;
    }
    return false;
  }
  bool Value(int depth) {
    if (i_ >= n_) return false;
    switch (p_[i_]) {
      case '{': return Object(depth + 1);
      case '[': return Array(depth + 1);
      case '"': return String(nullptr);
      case 't': return Literal("true");
      case 'f': return Literal("false");
      case 'n': return Literal("null");
      default: return Number();
    }
  }
  bool Array(int depth) {
    if (depth > kMaxJsonDepth) return false;
    ++i_;
    SkipWs();
    if (i_ < n_ && p_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      SkipWs();
      if (!Value(depth)) return false;
      SkipWs();
      if (i_ >= n_) return false;
      if (p_[i_] == ']') {
        ++i_;
        return true;
      }
      if (p_[i_] != ',') return false;
      ++i_;
    }
  }
  bool Object(int depth) {
    if (depth > kMaxJsonDepth) return false;
    ++i_;
    SkipWs();
    if (i_ < n_ && p_[i_] == '}') {
      ++i_;
      return true;
    }
    // Linear scan for the usual handful of keys; a set once an object grows large, so hostile
    // input cannot make validation quadratic.
    std::vector<std::string_view> keys;
    std::unordered_set<std::string_view> key_set;
    while (true) {
      SkipWs();
      std::string_view key;
      if (!String(&key)) return false;
      if (key_set.empty()) {
        for (std::string_view k : keys) {
          if (k == key) return false;
        }
        keys.push_back(key);
        if (keys.size() > 16) key_set.insert(keys.begin(), keys.end());
      } else if (!key_set.insert(key).second) {
        return false;
      }
      SkipWs();
      if (i_ >= n_ || p_[i_] != ':') return false;
      ++i_;
      SkipWs();
      if (!Value(depth)) return false;
      SkipWs();
      if (i_ >= n_) return false;
      if (p_[i_] == '}') {
        ++i_;
        return true;
      }
      if (p_[i_] != ',') return false;
      ++i_;
    }
  }

  const unsigned char* p_;
  size_t n_;
  size_t i_ = 0;
};

}  // namespace

bool IsValidJson(std::string_view text) { return JsonValidator(text).Run(); }

}  // namespace kairos
