// File: json_span.cc
// Layer: kairos_json. See json_span.h: the in-memory fast path. Every rule here mirrors one
// in json_reader.cc (JsonStreamParser); test/json/json_span_test.cc compares the two on the
// same texts.
// Threading: no shared state.
#include "json/json_span.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kairos {
namespace {

// 16 bytes per step: names in traces are long and plain (a C++ kernel name is ~60-200
// bytes), and this loop is where the reader spends its string time. Inlined into the span
// reader's string paths (a call per string cost 3% of a trace read).
inline __attribute__((always_inline)) const char* PlainEnd(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i ctl_max = _mm_set1_epi8(0x1F);
  for (; p < end; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // x <= 0x1F unsigned exactly when min(x, 0x1F) == x.
    const __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                     _mm_cmpeq_epi8(_mm_min_epu8(x, ctl_max), x));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) {
      p += __builtin_ctz(static_cast<unsigned>(mask));
      return p < end ? p : end;
    }
  }
  return end;
#else
  // Eight bytes per step (SWAR); has_zero marks the lowest matching byte exactly.
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  for (; p < end; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
    const uint64_t hit =
        (((q - kOnes) & ~q) | ((b - kOnes) & ~b) | ((w - kOnes * 0x20) & ~w)) & kHigh;
    if (hit != 0) {
      // Little-endian byte order assumed by ctz; big-endian targets take the byte loop.
      if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
        p += __builtin_ctzll(hit) >> 3;
        return p < end ? p : end;
      }
      break;
    }
  }
  while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
  return p < end ? p : end;
#endif
}

}  // namespace

namespace internal {

bool IsJsonNumber(std::string_view t) {
  size_t i = 0;
  const size_t n = t.size();
  auto digits = [&] {
    const size_t start = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    return i > start;
  };
  if (i < n && t[i] == '-') ++i;
  if (i < n && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < n && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

uint32_t CombineSurrogates(uint32_t hi, uint32_t lo, std::string* out) {
  if (IsLowSurrogate(lo)) return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
  AppendUtf8(kUnicodeReplacement, out);
  return IsHighSurrogate(lo) || IsLowSurrogate(lo) ? kUnicodeReplacement : lo;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

const char* PlainStringEnd(const char* p, const char* end) { return PlainEnd(p, end); }

}  // namespace internal

namespace {

// Sets *out to the n bytes at p. Same length (a reused slot: number widths and names repeat
// from event to event) is one copy into the existing bytes, without the general assign path.
// Short texts (keys, numbers, categories) are copied with two fixed-size overlapping moves
// instead of a memcpy call (the call was 4% of a trace read).
inline void SetText(std::string* out, const char* p, size_t n) {
  if (out->size() == n) {
    char* d = &(*out)[0];
    if (n >= 8 && n <= 16) {
      std::memcpy(d, p, 8);
      std::memcpy(d + n - 8, p + n - 8, 8);
    } else if (n >= 4 && n < 8) {
      std::memcpy(d, p, 4);
      std::memcpy(d + n - 4, p + n - 4, 4);
    } else if (n > 0 && n < 4) {
      d[0] = p[0];
      d[n / 2] = p[n / 2];
      d[n - 1] = p[n - 1];
    } else if (n > 16) {
      std::memcpy(d, p, n);
    }
  } else {
    out->assign(p, n);
  }
}

}  // namespace

using internal::AppendUtf8;
using internal::CombineSurrogates;
using internal::IsHighSurrogate;
using internal::IsLowSurrogate;
using internal::kUnicodeReplacement;

namespace {
constexpr JsonSpanStatus kOk = JsonSpanStatus::kOk;
constexpr JsonSpanStatus kNeedMore = JsonSpanStatus::kNeedMore;
constexpr JsonSpanStatus kInvalid = JsonSpanStatus::kInvalid;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

JsonSpanStatus JsonSpanReader::Hex4(uint32_t* out) {
  if (end_ - p_ < 4) return kNeedMore;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexDigit(p_[i]);
    if (d < 0) return kInvalid;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  p_ += 4;
  *out = v;
  return kOk;
}

JsonSpanStatus JsonSpanReader::Escape(std::string* out) {
  if (p_ >= end_) return kNeedMore;
  switch (*p_++) {
    case '"':
      out->push_back('"');
      return kOk;
    case '\\':
      out->push_back('\\');
      return kOk;
    case '/':
      out->push_back('/');
      return kOk;
    case 'b':
      out->push_back('\b');
      return kOk;
    case 'f':
      out->push_back('\f');
      return kOk;
    case 'n':
      out->push_back('\n');
      return kOk;
    case 'r':
      out->push_back('\r');
      return kOk;
    case 't':
      out->push_back('\t');
      return kOk;
    case 'u':
      return UnicodeEscape(out);
    default:
      return kInvalid;
  }
}

// The surrogate rules of CombineSurrogates (json_span.h).
JsonSpanStatus JsonSpanReader::UnicodeEscape(std::string* out) {
  constexpr uint32_t kReplacement = kUnicodeReplacement;
  uint32_t cp = 0;
  if (JsonSpanStatus s = Hex4(&cp); s != kOk) return s;
  if (IsLowSurrogate(cp)) cp = kReplacement;
  if (IsHighSurrogate(cp)) {
    if (p_ >= end_) return kNeedMore;
    if (*p_ != '\\') {
      AppendUtf8(kReplacement, out);
      return kOk;
    }
    ++p_;
    if (p_ >= end_) return kNeedMore;
    if (*p_ != 'u') {
      AppendUtf8(kReplacement, out);
      return Escape(out);
    }
    ++p_;
    uint32_t lo = 0;
    if (JsonSpanStatus s = Hex4(&lo); s != kOk) return s;
    cp = CombineSurrogates(cp, lo, out);
  }
  AppendUtf8(cp, out);
  return kOk;
}

JsonSpanStatus JsonSpanReader::String(std::string* out) {
  const char* start = p_ + 1;
  const char* run = PlainEnd(start, end_);
  if (run < end_ && *run == '"') {  // no escape: the common case
    SetText(out, start, static_cast<size_t>(run - start));
    p_ = run + 1;
    return kOk;
  }
  out->clear();
  ++p_;  // the opening quote
  for (;;) {
    const char* run = PlainEnd(p_, end_);
    out->append(p_, static_cast<size_t>(run - p_));
    p_ = run;
    if (p_ >= end_) return kNeedMore;
    const char c = *p_++;
    if (c == '"') return kOk;
    if (c != '\\') return kInvalid;  // a control byte
    if (JsonSpanStatus s = Escape(out); s != kOk) return s;
  }
}

JsonSpanStatus JsonSpanReader::Key(std::string* out) {
  // A reused slot usually holds this very key already (the previous event of the same
  // shape): compare instead of copying.
  const char* start = p_ + 1;
  const char* run = PlainEnd(start, end_);
  if (run < end_ && *run == '"') {
    const size_t n = static_cast<size_t>(run - start);
    SetText(out, start, n);
    p_ = run + 1;
    return kOk;
  }
  return String(out);
}

JsonSpanStatus JsonSpanReader::StringView(std::string_view* view, std::string* scratch) {
  const char* start = p_ + 1;
  const char* run = PlainEnd(start, end_);
  if (run < end_ && *run == '"') {
    *view = std::string_view(start, static_cast<size_t>(run - start));
    p_ = run + 1;
    return kOk;
  }
  if (JsonSpanStatus s = String(scratch); s != kOk) return s;
  *view = *scratch;
  return kOk;
}

JsonSpanStatus JsonSpanReader::SkipString() {
  ++p_;
  for (;;) {
    p_ = PlainEnd(p_, end_);
    if (p_ >= end_) return kNeedMore;
    const char c = *p_++;
    if (c == '"') return kOk;
    if (c != '\\') return kInvalid;
    // Each escape checked on its own is what decoding checks: a surrogate half's partner is
    // just the next escape.
    if (p_ >= end_) return kNeedMore;
    switch (*p_++) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        break;
      case 'u': {
        uint32_t unused;
        if (JsonSpanStatus s = Hex4(&unused); s != kOk) return s;
        break;
      }
      default:
        return kInvalid;
    }
  }
}

JsonSpanStatus JsonSpanReader::Number(std::string_view* text) {
  // One pass that checks the grammar as it goes. The stream parser takes the whole run of
  // number bytes ([0-9+-.eE]) and then checks it; the greedy grammar below stops inside that
  // run exactly when the run is not a number, so the two accept the same texts.
  const char* start = p_;
  const char* q = p_;
  auto digit = [&] { return q < end_ && *q >= '0' && *q <= '9'; };
  auto digits = [&] {
    const char* d = q;
    while (digit()) ++q;
    return q > d;
  };
  if (q < end_ && *q == '-') ++q;
  if (q < end_ && *q == '0') {
    ++q;
  } else if (!digits()) {
    return q >= end_ ? kNeedMore : kInvalid;
  }
  if (q < end_ && *q == '.') {
    ++q;
    if (!digits()) return q >= end_ ? kNeedMore : kInvalid;
  }
  if (q < end_ && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end_ && (*q == '+' || *q == '-')) ++q;
    if (!digits()) return q >= end_ ? kNeedMore : kInvalid;
  }
  if (q >= end_) return kNeedMore;  // the number may go on in bytes not read yet
  if (internal::IsNumberByte(*q)) return kInvalid;
  p_ = q;
  *text = std::string_view(start, static_cast<size_t>(q - start));
  return kOk;
}

JsonSpanStatus JsonSpanReader::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size()) return kNeedMore;
  if (std::memcmp(p_, word.data(), word.size()) != 0) return kInvalid;
  p_ += word.size();
  return kOk;
}

// A member or item: numbers and strings (nearly all of a trace's args) are read here, in
// the container's loop; the rest goes through Value. Saves a call and Value's setup per
// member (measured: 2% fewer instructions reading a trace).
inline JsonSpanStatus JsonSpanReader::Element(JsonValue* v, int depth) {
  if (!SkipSpace()) return kNeedMore;
  const char c = *p_;
  if (c == '"' || c == '-' || (c >= '0' && c <= '9')) {
    v->boolean = false;
    if (!v->members.empty()) v->members.clear();
    if (!v->items.empty()) v->items.clear();
    if (c == '"') {
      v->type = JsonValue::Type::kString;
      return String(&v->text);
    }
    v->type = JsonValue::Type::kNumber;
    std::string_view text;
    if (JsonSpanStatus s = Number(&text); s != kOk) return s;
    SetText(&v->text, text.data(), text.size());
    return kOk;
  }
  return Value(v, depth);
}

// An object's members after its '{', reusing v's member slots.
inline JsonSpanStatus JsonSpanReader::Object(JsonValue* v, int depth) {
  v->type = JsonValue::Type::kObject;
  if (!SkipSpace()) return kNeedMore;
  if (*p_ == '}') {
    ++p_;
    v->members.clear();
    return kOk;
  }
  size_t n = 0;
  for (;;) {
    if (n == v->members.size()) v->members.emplace_back();
    auto& member = v->members[n++];
    if (!SkipSpace()) return kNeedMore;
    if (*p_ != '"') return kInvalid;
    if (JsonSpanStatus s = Key(&member.first); s != kOk) return s;
    if (!SkipSpace()) return kNeedMore;
    if (*p_++ != ':') return kInvalid;
    if (JsonSpanStatus s = Element(&member.second, depth + 1); s != kOk) return s;
    if (!SkipSpace()) return kNeedMore;
    const char sep = *p_++;
    if (sep == '}') break;
    if (sep != ',') return kInvalid;
  }
  v->members.resize(n);
  return kOk;
}

// An array's items after its '[', reusing v's item slots.
inline JsonSpanStatus JsonSpanReader::Array(JsonValue* v, int depth) {
  v->type = JsonValue::Type::kArray;
  if (!SkipSpace()) return kNeedMore;
  if (*p_ == ']') {
    ++p_;
    v->items.clear();
    return kOk;
  }
  size_t n = 0;
  for (;;) {
    if (n == v->items.size()) v->items.emplace_back();
    if (JsonSpanStatus s = Element(&v->items[n++], depth + 1); s != kOk) return s;
    if (!SkipSpace()) return kNeedMore;
    const char sep = *p_++;
    if (sep == ']') break;
    if (sep != ',') return kInvalid;
  }
  v->items.resize(n);
  return kOk;
}

JsonSpanStatus JsonSpanReader::Value(JsonValue* v, int depth) {
  if (!SkipSpace()) return kNeedMore;
  const char c = *p_;
  // Slot reuse as in JsonStreamParser::ParseValueAt: a container keeps its element slots
  // (and their string capacity) for the next value of the same shape.
  // A string or number overwrites text in place (SetText); everything else has none.
  if (c != '"' && c != '-' && (c < '0' || c > '9')) v->text.clear();
  v->boolean = false;
  if (c != '{') v->members.clear();
  if (c != '[') v->items.clear();
  switch (c) {
    case '{':
    case '[':
      if (depth >= max_depth_) return kInvalid;
      ++p_;
      return c == '{' ? Object(v, depth) : Array(v, depth);
    case '"':
      v->type = JsonValue::Type::kString;
      return String(&v->text);
    case 't':
      v->type = JsonValue::Type::kBool;
      v->boolean = true;
      return Literal("true");
    case 'f':
      v->type = JsonValue::Type::kBool;
      return Literal("false");
    case 'n':
      v->type = JsonValue::Type::kNull;
      return Literal("null");
    default: {
      if (c != '-' && (c < '0' || c > '9')) return kInvalid;
      v->type = JsonValue::Type::kNumber;
      std::string_view text;
      if (JsonSpanStatus s = Number(&text); s != kOk) return s;
      SetText(&v->text, text.data(), text.size());
      return kOk;
    }
  }
}

JsonSpanStatus JsonSpanReader::Skip(int depth) {
  if (!SkipSpace()) return kNeedMore;
  const char c = *p_;
  switch (c) {
    case '{':
    case '[': {
      if (depth >= max_depth_) return kInvalid;
      const char close = c == '{' ? '}' : ']';
      ++p_;
      if (!SkipSpace()) return kNeedMore;
      if (*p_ == close) {
        ++p_;
        return kOk;
      }
      for (;;) {
        if (c == '{') {
          if (!SkipSpace()) return kNeedMore;
          if (*p_ != '"') return kInvalid;
          if (JsonSpanStatus s = SkipString(); s != kOk) return s;
          if (!SkipSpace()) return kNeedMore;
          if (*p_++ != ':') return kInvalid;
        }
        if (JsonSpanStatus s = Skip(depth + 1); s != kOk) return s;
        if (!SkipSpace()) return kNeedMore;
        const char sep = *p_++;
        if (sep == close) return kOk;
        if (sep != ',') return kInvalid;
      }
    }
    case '"':
      return SkipString();
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default: {
      if (c != '-' && (c < '0' || c > '9')) return kInvalid;
      std::string_view text;
      return Number(&text);
    }
  }
}

}  // namespace kairos
