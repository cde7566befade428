// File: json_reader.cc
// Layer: kairos_output. See json_reader.h. Byte sources (plain, gzip, zstd) and a pull
// parser over 64 KiB chunks producing one JsonValue per trace event. The mapping of events
// back to a TraceData is json_reader_trace.cc.
// Threading: no shared state.
#include "output/json_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "output/json_escape.h"
#include "output/json_event_args.h"

namespace kairos {
namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr int kMaxDepth = 128;

// ---- Byte sources ----

class Source {
 public:
  virtual ~Source() = default;
  // Returns bytes read (0 = end of input) or an error.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t cap) = 0;
};

class MemorySource : public Source {
 public:
  explicit MemorySource(std::string_view text) : text_(text) {}
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    size_t n = std::min(cap, text_.size() - pos_);
    memcpy(buf, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

class FdSource : public Source {
 public:
  FdSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FdSource() override { close(fd_); }
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    if (!pending_.empty()) {  // the magic-byte probe
      size_t n = std::min(cap, pending_.size());
      memcpy(buf, pending_.data(), n);
      pending_.erase(0, n);
      return n;
    }
    for (;;) {
      ssize_t n = read(fd_, buf, cap);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return absl::InternalError(absl::StrCat(path_, ": read: ", strerror(errno)));
    }
  }
  std::string pending_;

 private:
  int fd_;
  std::string path_;
};

class GzipSource : public Source {
 public:
  explicit GzipSource(std::unique_ptr<Source> in) : in_(std::move(in)), buf_(new char[kChunk]) {
    memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;  // 16: gzip header
  }
  ~GzipSource() override { inflateEnd(&z_); }
  absl::StatusOr<size_t> Read(char* out, size_t cap) override {
    if (!ok_) return absl::InternalError("gzip: inflateInit2 failed");
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(cap);
    while (z_.avail_out == cap && !done_) {
      if (z_.avail_in == 0) {
        auto n = in_->Read(buf_.get(), kChunk);
        if (!n.ok()) return n.status();
        if (*n == 0) return absl::DataLossError("gzip: truncated stream");
        z_.next_in = reinterpret_cast<Bytef*>(buf_.get());
        z_.avail_in = static_cast<uInt>(*n);
      }
      int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        done_ = true;
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat("gzip: ", z_.msg ? z_.msg : "corrupt data"));
      }
    }
    return cap - z_.avail_out;
  }

 private:
  std::unique_ptr<Source> in_;
  std::unique_ptr<char[]> buf_;
  z_stream z_;
  bool ok_ = false;
  bool done_ = false;
};

class ZstdSource : public Source {
 public:
  explicit ZstdSource(std::unique_ptr<Source> in)
      : in_(std::move(in)), buf_(new char[kChunk]), dctx_(ZSTD_createDCtx()) {}
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  absl::StatusOr<size_t> Read(char* out, size_t cap) override {
    if (!dctx_) return absl::ResourceExhaustedError("zstd: cannot create context");
    ZSTD_outBuffer o{out, cap, 0};
    while (o.pos == 0) {
      if (in_pos_ == in_len_) {
        auto n = in_->Read(buf_.get(), kChunk);
        if (!n.ok()) return n.status();
        if (*n == 0) {
          if (last_ret_ != 0) return absl::DataLossError("zstd: truncated stream");
          return size_t{0};
        }
        in_len_ = *n;
        in_pos_ = 0;
      }
      ZSTD_inBuffer i{buf_.get(), in_len_, in_pos_};
      last_ret_ = ZSTD_decompressStream(dctx_, &o, &i);
      in_pos_ = i.pos;
      if (ZSTD_isError(last_ret_)) return absl::DataLossError(absl::StrCat("zstd: ", ZSTD_getErrorName(last_ret_)));
    }
    return o.pos;
  }

 private:
  std::unique_ptr<Source> in_;
  std::unique_ptr<char[]> buf_;
  ZSTD_DCtx* dctx_;
  size_t in_len_ = 0, in_pos_ = 0, last_ret_ = 0;
};

}  // namespace

namespace internal {
// Opens `path` and picks the decompressor from its first bytes (gzip 1f 8b, zstd 28 b5 2f fd).
absl::StatusOr<std::unique_ptr<Source>> OpenTraceSource(const std::string& path);
}  // namespace internal

absl::StatusOr<std::unique_ptr<Source>> internal::OpenTraceSource(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", strerror(errno)));
  auto raw = std::make_unique<FdSource>(fd, path);
  char magic[4];
  size_t have = 0;
  while (have < 4) {
    auto n = raw->Read(magic + have, 4 - have);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    have += *n;
  }
  raw->pending_.assign(magic, have);
  if (have >= 2 && uint8_t(magic[0]) == 0x1f && uint8_t(magic[1]) == 0x8b)
    return std::unique_ptr<Source>(new GzipSource(std::move(raw)));
  if (have == 4 && !memcmp(magic, "\x28\xb5\x2f\xfd", 4))
    return std::unique_ptr<Source>(new ZstdSource(std::move(raw)));
  return std::unique_ptr<Source>(std::move(raw));
}

namespace {

// ---- Parser ----

class Parser {
 public:
  explicit Parser(Source& src) : src_(src), buf_(new char[kChunk]) {}

  absl::Status error() const { return error_; }
  uint64_t offset() const { return consumed_ + pos_; }

  // Next non-whitespace byte without consuming it; -1 at end or on error.
  int Peek() {
    for (;;) {
      if (pos_ == len_ && !Fill()) return -1;
      char c = buf_[pos_];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++pos_;
        continue;
      }
      return static_cast<unsigned char>(c);
    }
  }
  bool Expect(char c) {
    if (Peek() != static_cast<unsigned char>(c)) return Fail(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
    return true;
  }
  bool Consume(char c) {
    if (Peek() != static_cast<unsigned char>(c)) return false;
    ++pos_;
    return true;
  }
  bool ParseValue(JsonValue* v, int depth = 0);
  bool ParseString(std::string* out);
  bool Fail(std::string_view what) {
    if (error_.ok())
      error_ = absl::InvalidArgumentError(absl::StrCat("JSON: ", std::string(what), " at byte ", offset()));
    return false;
  }

 private:
  bool Fill() {
    if (!error_.ok()) return false;
    consumed_ += len_;
    pos_ = len_ = 0;
    auto n = src_.Read(buf_.get(), kChunk);
    if (!n.ok()) {
      error_ = n.status();
      return false;
    }
    len_ = *n;
    return len_ > 0;
  }
  int Raw() {  // next byte, whitespace included
    if (pos_ == len_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  bool Literal(const char* word) {
    for (const char* p = word; *p; ++p)
      if (Raw() != static_cast<unsigned char>(*p)) return Fail("bad literal");
    return true;
  }
  bool Hex4(uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      int c = Raw();
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else return Fail("bad \\u escape");
    }
    *out = v;
    return true;
  }

  Source& src_;
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t consumed_ = 0;
  absl::Status error_;
};

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

bool Parser::ParseString(std::string* out) {
  if (!Expect('"')) return false;
  out->clear();
  for (;;) {
    // Bulk-copy the run of plain bytes in the current chunk.
    size_t start = pos_;
    while (pos_ < len_ && buf_[pos_] != '"' && buf_[pos_] != '\\' &&
           static_cast<unsigned char>(buf_[pos_]) >= 0x20)
      ++pos_;
    out->append(buf_.get() + start, pos_ - start);
    int c = Raw();
    if (c < 0) return Fail("unterminated string");
    if (c == '"') return true;
    if (c < 0x20) return Fail("control character in string");
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      continue;
    }
    c = Raw();
    switch (c) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        if (!Hex4(&cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00) {  // high surrogate: expect the low half
          uint32_t lo = 0;
          if (Raw() != '\\' || Raw() != 'u' || !Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) {
            cp = 0xFFFD;
          } else {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          cp = 0xFFFD;
        }
        AppendUtf8(cp, out);
        break;
      }
      default: return Fail("bad escape");
    }
  }
}

bool Parser::ParseValue(JsonValue* v, int depth) {
  if (depth > kMaxDepth) return Fail("nesting too deep");
  int c = Peek();
  v->items.clear();
  v->members.clear();
  v->text.clear();
  switch (c) {
    case '{': {
      ++pos_;
      v->type = JsonValue::Type::kObject;
      if (Consume('}')) return true;
      do {
        v->members.emplace_back();
        if (!ParseString(&v->members.back().first) || !Expect(':') ||
            !ParseValue(&v->members.back().second, depth + 1))
          return false;
      } while (Consume(','));
      return Expect('}');
    }
    case '[': {
      ++pos_;
      v->type = JsonValue::Type::kArray;
      if (Consume(']')) return true;
      do {
        v->items.emplace_back();
        if (!ParseValue(&v->items.back(), depth + 1)) return false;
      } while (Consume(','));
      return Expect(']');
    }
    case '"':
      v->type = JsonValue::Type::kString;
      return ParseString(&v->text);
    case 't': v->type = JsonValue::Type::kBool; v->boolean = true; return Literal("true");
    case 'f': v->type = JsonValue::Type::kBool; v->boolean = false; return Literal("false");
    case 'n': v->type = JsonValue::Type::kNull; return Literal("null");
    case -1: return Fail("unexpected end of input");
    default: {
      if (c != '-' && (c < '0' || c > '9')) return Fail("unexpected character");
      v->type = JsonValue::Type::kNumber;
      for (;;) {
        if (pos_ == len_ && !Fill()) break;
        char d = buf_[pos_];
        if ((d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E') {
          v->text.push_back(d);
          ++pos_;
        } else {
          break;
        }
      }
      return error_.ok();
    }
  }
}

// Kineto time text (µs, up to 3 fraction digits = ns) to ns, exactly.
int64_t MicrosTextToNs(const JsonValue& v) {
  const std::string& t = v.text;
  if (v.type != JsonValue::Type::kNumber && v.type != JsonValue::Type::kString) return 0;
  if (t.find_first_of("eE") != std::string::npos) return static_cast<int64_t>(strtod(t.c_str(), nullptr) * 1000.0);
  bool neg = !t.empty() && t[0] == '-';
  size_t i = neg ? 1 : 0;
  int64_t whole = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) whole = whole * 10 + (t[i] - '0');
  int64_t frac = 0;
  int digits = 0;
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (digits < 3) frac = frac * 10 + (t[i] - '0');
      ++digits;
    }
  }
  for (; digits < 3; ++digits) frac *= 10;
  int64_t ns = whole * 1000 + frac;
  return neg ? -ns : ns;
}

absl::Status Drive(Source& src, const KinetoJsonCallbacks& cb, KinetoJsonStats* stats) {
  Parser p(src);
  KinetoJsonStats local;
  KinetoJsonStats& st = stats ? *stats : local;
  st = KinetoJsonStats{};
  int64_t base_ns = 0;
  if (!p.Expect('{')) return p.error();
  if (!p.Consume('}')) {
    std::string key;
    JsonValue value;
    do {
      if (!p.ParseString(&key) || !p.Expect(':')) return p.error();
      if (key != "traceEvents") {
        if (!p.ParseValue(&value)) return p.error();
        if (key == "baseTimeNanoseconds") base_ns = value.AsInt();
        if (cb.on_metadata) cb.on_metadata(key, value);
        continue;
      }
      if (!p.Expect('[')) return p.error();
      if (p.Consume(']')) continue;
      KinetoEvent ev;
      do {
        if (!p.ParseValue(&value)) return p.error();
        if (value.type != JsonValue::Type::kObject) {
          ++st.skipped;
          continue;
        }
        ++st.events;
        ev = KinetoEvent{};
        for (auto& [k, v] : value.members) {
          if (k == "ph") ev.ph = v.text;
          else if (k == "cat") ev.cat = v.text;
          else if (k == "name") ev.name = v.text;
          else if (k == "pid") ev.pid = v;
          else if (k == "tid") ev.tid = v;
          else if (k == "ts") { ev.has_ts = true; ev.ts_ns = base_ns + MicrosTextToNs(v); }
          else if (k == "dur") { ev.has_dur = true; ev.dur_ns = MicrosTextToNs(v); }
          else if (k == "id") ev.id = v;
          else if (k == "args") ev.args = v;
        }
        ev.raw = &value;
        if (cb.on_event) cb.on_event(ev);
      } while (p.Consume(','));
      if (!p.Expect(']')) return p.error();
    } while (p.Consume(','));
    if (!p.Expect('}')) return p.error();
  }
  if (p.Peek() != -1) return p.error().ok() ? absl::InvalidArgumentError(absl::StrCat("JSON: trailing data at byte ", p.offset())) : p.error();
  st.bytes = p.offset();
  return p.error();
}

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

int64_t JsonValue::AsInt(int64_t fallback) const {
  if (type != Type::kNumber && type != Type::kString) return type == Type::kBool ? boolean : fallback;
  int64_t v;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  char* end = nullptr;
  double d = strtod(text.c_str(), &end);
  return end != text.c_str() ? static_cast<int64_t>(d) : fallback;
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
  double d = strtod(text.c_str(), &end);
  return end != text.c_str() ? d : fallback;
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

absl::StatusOr<JsonValue> ParseJson(std::string_view text) {
  MemorySource src(text);
  Parser p(src);
  JsonValue v;
  if (!p.ParseValue(&v)) return p.error();
  if (p.Peek() != -1) return absl::InvalidArgumentError(absl::StrCat("JSON: trailing data at byte ", p.offset()));
  return v;
}

absl::Status ReadKinetoJsonText(std::string_view text, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats) {
  MemorySource src(text);
  return Drive(src, callbacks, stats);
}

absl::Status ReadKinetoJsonFile(const std::string& path, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats) {
  auto src = internal::OpenTraceSource(path);
  if (!src.ok()) return src.status();
  absl::Status st = Drive(**src, callbacks, stats);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  return st;
}

}  // namespace kairos
