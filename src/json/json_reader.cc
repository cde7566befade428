// File: json_reader.cc
// Layer: kairos_json. See json_reader.h: the chunked pull parser and the JsonValue helpers.
// Threading: no shared state.
#include "json/json_reader.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "json/json_escape.h"
#include "json/json_span.h"

namespace kairos {
namespace {

using internal::AppendUtf8;
using internal::CombineSurrogates;
using internal::IsHighSurrogate;
using internal::IsLowSurrogate;
using internal::kUnicodeReplacement;
using internal::IsJsonNumber;
using internal::IsNumberByte;

// A failed container parse leaves exactly the slots it reached (so no stale members from an
// earlier value survive under an error), and reports the failure.
template <typename Vec>
bool TrimOnError(Vec* v, size_t n) {
  v->resize(n);
  return false;
}

}  // namespace

absl::StatusOr<size_t> JsonTextSource::Read(char* buf, size_t cap) {
  const size_t n = std::min(cap, text_.size() - pos_);
  std::memcpy(buf, text_.data() + pos_, n);
  pos_ += n;
  return n;
}

JsonStreamParser::JsonStreamParser(JsonByteSource& src, JsonParseOptions options)
    // Value-initialised so the padding past the bytes read is never indeterminate.
    : src_(src), options_(options), buf_(new char[kChunk + kJsonSpanPadding]()), cap_(kChunk) {}

int JsonStreamParser::Peek() {
  for (;;) {
    if (pos_ == len_ && !Fill()) return -1;
    const char c = buf_[pos_];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      ++pos_;
      continue;
    }
    return static_cast<unsigned char>(c);
  }
}

bool JsonStreamParser::Expect(char c) {
  if (Peek() != static_cast<unsigned char>(c))
    return Fail(absl::StrCat("expected '", std::string(1, c), "'"));
  ++pos_;
  return true;
}

bool JsonStreamParser::Consume(char c) {
  if (Peek() != static_cast<unsigned char>(c)) return false;
  ++pos_;
  return true;
}

bool JsonStreamParser::ExpectEnd() {
  if (Peek() == -1) return error_.ok();
  return Fail("trailing data");
}

bool JsonStreamParser::Fail(std::string_view what) {
  if (error_.ok())
    error_ = absl::InvalidArgumentError(absl::StrCat("JSON: ", std::string(what), " at byte ", offset()));
  return false;
}

bool JsonStreamParser::Fill() {
  if (!error_.ok()) return false;
  consumed_ += len_;
  pos_ = len_ = 0;
  absl::StatusOr<size_t> n = src_.Read(buf_.get(), cap_);
  if (!n.ok()) {
    error_ = n.status();
    return false;
  }
  len_ = *n;
  return len_ > 0;
}

bool JsonStreamParser::ReadMore() {
  if (!error_.ok()) return false;
  const size_t keep = len_ - pos_;
  if (pos_ > 0) {  // the unread tail moves to the front: at most one element, once per fill
    std::memmove(buf_.get(), buf_.get() + pos_, keep);
    consumed_ += pos_;
    pos_ = 0;
    len_ = keep;
  }
  if (len_ == cap_) {
    // One element fills the whole window: double it. The window stays at the size of the
    // largest element read so far (the reader's memory bound).
    std::unique_ptr<char[]> bigger(new char[2 * cap_ + kJsonSpanPadding]());
    std::memcpy(bigger.get(), buf_.get(), len_);
    buf_ = std::move(bigger);
    cap_ *= 2;
  }
  // Fill the window (a source may hand out less than asked, e.g. zstd at the end of an
  // input chunk): the caller starts its element again after each call, so few large calls.
  const size_t before = len_;
  while (len_ < cap_) {
    absl::StatusOr<size_t> n = src_.Read(buf_.get() + len_, cap_ - len_);
    if (!n.ok()) {
      error_ = n.status();
      return false;
    }
    if (*n == 0) break;
    len_ += *n;
  }
  return len_ > before;
}

int JsonStreamParser::Raw() {  // next byte, whitespace included
  if (pos_ == len_ && !Fill()) return -1;
  return static_cast<unsigned char>(buf_[pos_++]);
}

bool JsonStreamParser::Literal(const char* word) {
  for (const char* p = word; *p; ++p)
    if (Raw() != static_cast<unsigned char>(*p)) return Fail("bad literal");
  return true;
}

bool JsonStreamParser::Hex4(uint32_t* out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int c = Raw();
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return Fail("bad \\u escape");
  }
  *out = v;
  return true;
}

bool JsonStreamParser::ParseString(std::string* out) {
  if (!Expect('"')) return false;
  out->clear();
  for (;;) {
    // Bulk-copy the run of plain bytes in the current chunk.
    const size_t start = pos_;
    pos_ = static_cast<size_t>(internal::PlainStringEnd(buf_.get() + pos_, buf_.get() + len_) -
                               buf_.get());
    out->append(buf_.get() + start, pos_ - start);
    int c = Raw();
    if (c < 0) return Fail("unterminated string");
    if (c == '"') {
      // \u escapes below always produce valid UTF-8, so only raw bytes can be invalid.
      if (options_.strict && !IsValidUtf8(*out)) return Fail("invalid UTF-8 in string");
      return true;
    }
    if (c < 0x20) return Fail("control character in string");
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      continue;
    }
    if (!Escape(out)) return false;
  }
}

bool JsonStreamParser::Escape(std::string* out) {
  switch (Raw()) {
    case '"': out->push_back('"'); return true;
    case '\\': out->push_back('\\'); return true;
    case '/': out->push_back('/'); return true;
    case 'b': out->push_back('\b'); return true;
    case 'f': out->push_back('\f'); return true;
    case 'n': out->push_back('\n'); return true;
    case 'r': out->push_back('\r'); return true;
    case 't': out->push_back('\t'); return true;
    case 'u': return UnicodeEscape(out);
    default: return Fail("bad escape");
  }
}

int JsonStreamParser::PeekRaw() {
  if (pos_ == len_ && !Fill()) return -1;
  return static_cast<unsigned char>(buf_[pos_]);
}

bool JsonStreamParser::UnicodeEscape(std::string* out) {
  constexpr uint32_t kReplacement = kUnicodeReplacement;
  uint32_t cp = 0;
  if (!Hex4(&cp)) return false;
  if (IsLowSurrogate(cp)) cp = kReplacement;  // a low half alone
  if (IsHighSurrogate(cp)) {
    // A high half needs a \u low half right after it; without one it becomes U+FFFD and
    // what follows is read on its own (nothing after it is swallowed).
    if (PeekRaw() != '\\') {
      AppendUtf8(kReplacement, out);
      return error_.ok();
    }
    ++pos_;
    if (PeekRaw() != 'u') {
      AppendUtf8(kReplacement, out);
      return error_.ok() && Escape(out);
    }
    ++pos_;
    uint32_t lo = 0;
    if (!Hex4(&lo)) return false;
    cp = CombineSurrogates(cp, lo, out);
  }
  AppendUtf8(cp, out);
  return true;
}

bool JsonStreamParser::ParseNumber(std::string* out) {
  for (;;) {
    if (pos_ == len_ && !Fill()) break;
    // Append the run of number bytes in this chunk at once; a number split across chunks
    // continues in the next round.
    const size_t start = pos_;
    while (pos_ < len_ && IsNumberByte(buf_[pos_])) ++pos_;
    out->append(buf_.get() + start, pos_ - start);
    if (pos_ < len_) break;
  }
  if (!error_.ok()) return false;
  return IsJsonNumber(*out) || Fail("bad number");
}

bool JsonStreamParser::ParseValueAt(JsonValue* v, int depth) {
  const int c = Peek();
  // A value parsed into the same JsonValue again (one trace event after another) reuses the
  // previous value's slots and string capacity: events of the same shape then parse without
  // a heap allocation. Containers are trimmed to what this value holds before returning.
  v->text.clear();
  if (c != '{') v->members.clear();
  if (c != '[') v->items.clear();
  if ((c == '{' || c == '[') && depth >= options_.max_depth) return Fail("nesting too deep");
  switch (c) {
    case '{': {
      ++pos_;
      v->type = JsonValue::Type::kObject;
      if (Consume('}')) {
        v->members.clear();
        return true;
      }
      // Strict mode: duplicate keys by a linear scan for the usual handful of keys, by a set
      // once an object grows large, so hostile input cannot make parsing quadratic.
      std::unordered_set<std::string> keys;
      size_t n = 0;
      do {
        if (n == v->members.size()) v->members.emplace_back();
        auto& member = v->members[n++];
        const std::string& key = member.first;
        if (!ParseString(&member.first)) return TrimOnError(&v->members, n);
        if (options_.strict) {
          if (n <= 16) {
            for (size_t i = 0; i + 1 < n; ++i)
              if (v->members[i].first == key) {
                v->members.resize(n);
                return Fail("duplicate key");
              }
            if (n == 16)
              for (size_t i = 0; i < n; ++i) keys.insert(v->members[i].first);
          } else if (!keys.insert(key).second) {
            {
                v->members.resize(n);
                return Fail("duplicate key");
              }
          }
        }
        if (!Expect(':') || !ParseValueAt(&member.second, depth + 1))
          return TrimOnError(&v->members, n);
      } while (Consume(','));
      v->members.resize(n);
      return Expect('}');
    }
    case '[': {
      ++pos_;
      v->type = JsonValue::Type::kArray;
      if (Consume(']')) {
        v->items.clear();
        return true;
      }
      size_t n = 0;
      do {
        if (n == v->items.size()) v->items.emplace_back();
        if (!ParseValueAt(&v->items[n++], depth + 1)) return TrimOnError(&v->items, n);
      } while (Consume(','));
      v->items.resize(n);
      return Expect(']');
    }
    case '"':
      v->type = JsonValue::Type::kString;
      return ParseString(&v->text);
    case 't': v->type = JsonValue::Type::kBool; v->boolean = true; return Literal("true");
    case 'f': v->type = JsonValue::Type::kBool; v->boolean = false; return Literal("false");
    case 'n': v->type = JsonValue::Type::kNull; return Literal("null");
    case -1: return error_.ok() ? Fail("unexpected end of input") : false;
    default:
      if (c != '-' && (c < '0' || c > '9')) return Fail("unexpected character");
      v->type = JsonValue::Type::kNumber;
      return ParseNumber(&v->text);
  }
}

absl::StatusOr<JsonValue> ParseJson(std::string_view text, const JsonParseOptions& options) {
  JsonTextSource src(text);
  JsonStreamParser p(src, options);
  JsonValue v;
  if (!p.ParseValue(&v) || !p.ExpectEnd()) return p.error();
  return v;
}

bool IsValidJson(std::string_view text) {
  JsonParseOptions options;
  options.max_depth = kMaxJsonDepth;
  options.strict = true;
  return ParseJson(text, options).ok();
}

// ---- JsonValue ----

int64_t JsonValue::AsInt(int64_t fallback) const {
  if (type != Type::kNumber && type != Type::kString) return type == Type::kBool ? boolean : fallback;
  int64_t v;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  char* end = nullptr;
  const double d = strtod(text.c_str(), &end);
  // Only values that fit convert (1e308 or NaN would be undefined behaviour): else fallback.
  if (end == text.c_str() || !(d >= -9.2e18 && d <= 9.2e18)) return fallback;
  return static_cast<int64_t>(d);
}

uint64_t JsonValue::AsUint(uint64_t fallback) const {
  if (type != Type::kNumber && type != Type::kString) return type == Type::kBool ? boolean : fallback;
  uint64_t v;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  return static_cast<uint64_t>(AsInt(static_cast<int64_t>(fallback)));
}

double JsonValue::AsDouble(double fallback) const {
  if (type != Type::kNumber && type != Type::kString) return fallback;
  char* end = nullptr;
  const double d = strtod(text.c_str(), &end);
  return end != text.c_str() ? d : fallback;
}

bool JsonValue::AsExactInt(int64_t* out) const {
  if (type != Type::kNumber) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

std::string JsonValue::ToJson() const {
  std::string out;
  switch (type) {
    case Type::kNull: return "null";
    case Type::kBool: return boolean ? "true" : "false";
    case Type::kNumber: return text;
    case Type::kString: AppendJsonString(text, &out); return out;
    case Type::kArray:
      out.push_back('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out.push_back(',');
        out += items[i].ToJson();
      }
      out.push_back(']');
      return out;
    case Type::kObject:
      out.push_back('{');
      for (size_t i = 0; i < members.size(); ++i) {
        if (i) out.push_back(',');
        AppendJsonString(members[i].first, &out);
        out.push_back(':');
        out += members[i].second.ToJson();
      }
      out.push_back('}');
      return out;
  }
  return out;
}

}  // namespace kairos
