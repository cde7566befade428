// File: json_reader.cc
// Layer: kairos_output. See json_reader.h. Three parts: byte sources (plain, gzip, zstd),
// a pull parser over 64 KiB chunks producing one JsonValue per trace event, and the mapping
// of Kineto events back to a TraceData. One file because the mapping is the reader's only
// client of the parser internals; ~600 lines.
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

// ---- Kineto JSON -> TraceData ----

bool internal::KindFromCategory(std::string_view cat, EventKind* kind) {
  for (size_t i = 0; i < kEventKindCount; ++i) {
    if (cat == kEventCategory[i]) {
      *kind = static_cast<EventKind>(i);
      return true;
    }
  }
  // Legacy (2021 TensorBoard-plugin) vocabulary and PyTorch-only categories.
  static constexpr std::pair<const char*, EventKind> kLegacy[] = {
      {"Operator", EventKind::kCpuOp},       {"python_function", EventKind::kCpuOp},
      {"Runtime", EventKind::kRuntime},      {"Kernel", EventKind::kKernel},
      {"Memcpy", EventKind::kMemcpy},        {"Memset", EventKind::kMemset},
      {"cpu_instant_event", EventKind::kInstant}};
  for (const auto& [name, k] : kLegacy) {
    if (cat == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

namespace {

uint8_t IndexOfName(std::string_view name, const char* (*namer)(uint8_t), uint8_t count) {
  for (uint8_t i = 0; i < count; ++i)
    if (name == namer(i)) return i;
  return 0;
}

uint32_t StreamArg(const JsonValue* v) {
  if (!v) return 0;
  int64_t s = v->AsInt();
  return s < 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(s);
}

uint32_t U32(const JsonValue& args, const char* key) {
  const JsonValue* v = args.Find(key);
  return v ? static_cast<uint32_t>(v->AsUint()) : 0;
}

}  // namespace

void internal::ApplyKinetoArgs(const JsonValue& args, std::string_view name, TraceData& data,
                               Event& e) {
  if (args.type != JsonValue::Type::kObject) return;
  const JsonValue* v;
  if ((v = args.Find("External id")) || (v = args.Find("external id")))
    e.external_id = static_cast<uint32_t>(v->AsUint());
  if ((v = args.Find("correlation"))) e.correlation = static_cast<uint32_t>(v->AsUint());
  if ((v = args.Find("cbid"))) e.aux = static_cast<uint16_t>(v->AsUint());
  if ((v = args.Find("finished")) && v->type == JsonValue::Type::kBool && !v->boolean)
    e.flags |= kFlagUnfinished;
  switch (e.kind) {
    case EventKind::kKernel: {
      if (!args.Find("grid") && !args.Find("device")) return;
      KernelDetail k;
      memset(&k, 0, sizeof(k));
      const JsonValue* grid = args.Find("grid");
      const JsonValue* block = args.Find("block");
      for (int i = 0; i < 3; ++i) {
        k.grid[i] = grid && i < int(grid->items.size()) ? uint32_t(grid->items[i].AsUint()) : 1;
        k.block[i] = block && i < int(block->items.size()) ? uint32_t(block->items[i].AsUint()) : 1;
      }
      k.device = U32(args, "device");
      k.context = U32(args, "context");
      k.stream = StreamArg(args.Find("stream"));
      k.registers_per_thread = U32(args, "registers per thread");
      k.static_shared_memory = U32(args, "shared memory");  // JSON has only the sum
      if ((v = args.Find("queued"))) k.queued = v->AsUint();
      k.graph_id = U32(args, "graph id");
      if ((v = args.Find("graph node id"))) k.graph_node_id = v->AsUint();
      k.channel_id = U32(args, "channel");
      k.channel_type = static_cast<uint8_t>(U32(args, "channel_type"));
      e.detail = static_cast<uint32_t>(data.kernels.size());
      data.kernels.push_back(k);
      return;
    }
    case EventKind::kMemcpy: {
      MemcpyDetail m;
      memset(&m, 0, sizeof(m));
      // "Memcpy <kind> (<src> -> <dst>)"
      size_t open = name.find(" ("), arrow = name.find(" -> "), close = name.rfind(')');
      if (name.substr(0, 7) == "Memcpy " && open != std::string_view::npos &&
          arrow != std::string_view::npos && close != std::string_view::npos && arrow > open) {
        m.copy_kind = IndexOfName(name.substr(7, open - 7), MemcpyKindName, 11);
        m.src_kind = IndexOfName(name.substr(open + 2, arrow - open - 2), MemoryKindName, 8);
        m.dst_kind = IndexOfName(name.substr(arrow + 4, close - arrow - 4), MemoryKindName, 8);
      }
      if (args.Find("fromDevice")) {
        m.copy_kind = kMemcpyKindPtoP;
        m.src_device = U32(args, "fromDevice");
        m.device = U32(args, "inDevice");
        m.dst_device = U32(args, "toDevice");
        m.src_context = U32(args, "fromContext");
        m.context = U32(args, "inContext");
        m.dst_context = U32(args, "toContext");
      } else {
        m.device = U32(args, "device");
        m.context = U32(args, "context");
      }
      m.stream = StreamArg(args.Find("stream"));
      if ((v = args.Find("bytes"))) m.bytes = v->AsUint();
      m.graph_id = U32(args, "graph id");
      if ((v = args.Find("graph node id"))) m.graph_node_id = v->AsUint();
      m.channel_id = U32(args, "channel");
      m.channel_type = static_cast<uint8_t>(U32(args, "channel_type"));
      e.detail = static_cast<uint32_t>(data.memcpys.size());
      data.memcpys.push_back(m);
      return;
    }
    case EventKind::kMemset: {
      MemsetDetail m;
      memset(&m, 0, sizeof(m));
      size_t open = name.find('('), close = name.rfind(')');
      if (open != std::string_view::npos && close != std::string_view::npos && close > open)
        m.memory_kind = IndexOfName(name.substr(open + 1, close - open - 1), MemoryKindName, 8);
      m.device = U32(args, "device");
      m.context = U32(args, "context");
      m.stream = StreamArg(args.Find("stream"));
      if ((v = args.Find("bytes"))) m.bytes = v->AsUint();
      m.graph_id = U32(args, "graph id");
      if ((v = args.Find("graph node id"))) m.graph_node_id = v->AsUint();
      m.channel_id = U32(args, "channel");
      m.channel_type = static_cast<uint8_t>(U32(args, "channel_type"));
      e.detail = static_cast<uint32_t>(data.memsets.size());
      data.memsets.push_back(m);
      return;
    }
    case EventKind::kSync:
    case EventKind::kCudaEvent: {
      if (!args.Find("device") && !args.Find("stream")) return;
      SyncDetail sd;
      memset(&sd, 0, sizeof(sd));
      sd.wait_on_stream = -1;
      if (e.kind == EventKind::kSync) {
        const JsonValue* kind_arg = args.Find("cuda_sync_kind");
        std::string_view kind_name = kind_arg ? std::string_view(kind_arg->text) : name;
        for (uint8_t t = 1; t <= 4; ++t)
          if (kind_name == SyncKindName(t)) sd.sync_type = t;
        if ((v = args.Find("wait_on_stream"))) sd.wait_on_stream = v->AsInt(-1);
        sd.wait_on_event_record_correlation = U32(args, "wait_on_cuda_event_record_corr_id");
        sd.cuda_event_id = U32(args, "wait_on_cuda_event_id");
      } else {
        sd.cuda_event_id = U32(args, "event_id");
      }
      sd.device = U32(args, "device");
      sd.context = U32(args, "context");
      sd.stream = StreamArg(args.Find("stream"));
      e.detail = static_cast<uint32_t>(data.syncs.size());
      data.syncs.push_back(sd);
      return;
    }
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant: {
      const JsonValue* dom = args.Find("domain");
      const JsonValue* cat = args.Find("category");
      const JsonValue* color = args.Find("color");
      const JsonValue* payload = args.Find("payload");
      if (!dom && !cat && !color && !payload) return;
      CpuArgs a;
      memset(&a, 0, sizeof(a));
      if (dom) a.domain = data.strings.Intern(dom->text);
      if (cat && cat->is_string()) a.category = data.strings.Intern(cat->text);
      if (cat && cat->is_number()) a.category_id = static_cast<uint32_t>(cat->AsUint());
      if (color && color->text.size() == 7 && color->text[0] == '#') {
        a.has_color = 1;
        a.color_argb = 0xFF000000u | static_cast<uint32_t>(strtoul(color->text.c_str() + 1, nullptr, 16));
      }
      if (payload && payload->is_number()) {
        const std::string& t = payload->text;
        if (t.find_first_of(".eE") != std::string::npos) {
          double d = payload->AsDouble();
          a.payload_type = 3;
          memcpy(&a.payload_bits, &d, 8);
        } else if (!t.empty() && t[0] == '-') {
          a.payload_type = 2;
          a.payload_bits = static_cast<uint64_t>(payload->AsInt());
        } else {
          a.payload_type = 1;
          a.payload_bits = payload->AsUint();
        }
      }
      e.detail = static_cast<uint32_t>(data.cpu_args.size());
      data.cpu_args.push_back(a);
      return;
    }
    default: return;
  }
}

namespace {

bool IsCpuKind(EventKind k) {
  return k == EventKind::kCpuOp || k == EventKind::kUserAnnotation || k == EventKind::kRuntime ||
         k == EventKind::kDriver || k == EventKind::kInstant;
}

// Builds a TraceData from the callback stream; the per-track vectors are sorted at the end.
class TraceBuilder {
 public:
  KinetoJsonCallbacks Callbacks() {
    KinetoJsonCallbacks cb;
    cb.on_metadata = [this](std::string_view k, const JsonValue& v) { OnMetadata(k, v); };
    cb.on_event = [this](const KinetoEvent& ev) { OnEvent(ev); };
    return cb;
  }
  TraceData Finish();

 private:
  void OnMetadata(std::string_view key, const JsonValue& v);
  void OnEvent(const KinetoEvent& ev);
  uint32_t TrackFor(TrackType type, int64_t pid, int64_t tid, uint32_t device, uint32_t stream) {
    auto key = std::make_tuple(static_cast<int>(type), pid, tid);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    Track t;
    t.type = type;
    t.pid = pid;
    t.tid = tid;
    t.device = device;
    t.stream = stream;
    uint32_t idx = data_.AddTrack(std::move(t));
    tracks_.emplace(key, idx);
    return idx;
  }
  void Unmapped() { data_.AddStat("json_reader.unmapped", 1); }

  TraceData data_;
  bool have_pid_ = false;
  bool have_window_start_ = false;
  std::map<std::tuple<int, int64_t, int64_t>, uint32_t> tracks_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<std::string, uint32_t> counter_tracks_;
  absl::flat_hash_set<uint64_t> flow_out_, flow_in_;
};

void TraceBuilder::OnMetadata(std::string_view key, const JsonValue& v) {
  if (key == "schemaVersion" || key == "displayTimeUnit") return;
  if (key == "baseTimeNanoseconds") { data_.base_time_ns = v.AsInt(); return; }
  if (key == "traceName") { data_.trace_name = v.text; return; }
  if (key == "trace_id") { data_.trace_id = v.text; return; }
  if (key == "host_name") { data_.host_name = v.text; return; }
  if (key == "kairos_config") { data_.config_text = v.text; return; }
  if (key == "kairos_stats") {
    for (const auto& [k, s] : v.members) data_.stats[k] = s.AsUint();
    return;
  }
  if (key == "kairos_warnings") {
    for (const JsonValue& w : v.items) data_.warnings.push_back(w.text);
    return;
  }
  if (key == "distributedInfo") {
    if (const JsonValue* r = v.Find("rank")) data_.distributed.rank = r->AsInt();
    if (const JsonValue* w = v.Find("world_size")) data_.distributed.world_size = w->AsInt(1);
    if (const JsonValue* l = v.Find("local_rank")) data_.distributed.local_rank = l->AsInt();
    if (const JsonValue* b = v.Find("backend")) data_.distributed.backend = b->text;
    return;
  }
  if (key == "deviceProperties") {
    for (const JsonValue& o : v.items) {
      DeviceInfo d;
      auto get = [&](const char* k) { const JsonValue* x = o.Find(k); return x ? x->AsInt() : 0; };
      d.id = static_cast<uint32_t>(get("id"));
      if (const JsonValue* n = o.Find("name")) d.name = n->text;
      d.total_global_mem = static_cast<uint64_t>(get("totalGlobalMem"));
      d.compute_major = int32_t(get("computeMajor"));
      d.compute_minor = int32_t(get("computeMinor"));
      d.max_threads_per_block = int32_t(get("maxThreadsPerBlock"));
      d.max_threads_per_multiprocessor = int32_t(get("maxThreadsPerMultiprocessor"));
      d.regs_per_block = int32_t(get("regsPerBlock"));
      d.warp_size = int32_t(get("warpSize"));
      d.shared_mem_per_block = static_cast<uint64_t>(get("sharedMemPerBlock"));
      d.num_sms = int32_t(get("numSms"));
      d.regs_per_multiprocessor = int32_t(get("regsPerMultiprocessor"));
      d.shared_mem_per_block_optin = static_cast<uint64_t>(get("sharedMemPerBlockOptin"));
      d.shared_mem_per_multiprocessor = static_cast<uint64_t>(get("sharedMemPerMultiprocessor"));
      d.max_blocks_per_multiprocessor = int32_t(get("maxBlocksPerMultiprocessor"));
      data_.devices.push_back(std::move(d));
    }
    return;
  }
  if (v.is_string()) {
    data_.metadata.emplace_back(std::string(key), v.text);
  } else {
    data_.metadata_json.emplace_back(std::string(key), v.ToJson());
  }
}

void TraceBuilder::OnEvent(const KinetoEvent& ev) {
  const bool numeric_pid = ev.pid.is_number();
  const int64_t pid = ev.pid.AsInt();
  const int64_t tid = ev.tid.AsInt();
  if (ev.ph == "M") {
    if (!have_window_start_ && ev.has_ts) {
      data_.window_start_ns = ev.ts_ns;
      have_window_start_ = true;
    }
    const JsonValue* a = ev.args.Find("name");
    const JsonValue* labels = ev.args.Find("labels");
    if (ev.name == "process_labels" && labels && labels->text == "CPU" && !have_pid_) {
      data_.pid = pid;
      have_pid_ = true;
    } else if (ev.name == "process_name" && a && (!have_pid_ || pid == data_.pid) &&
               data_.process_name.empty()) {
      data_.process_name = a->text;
    } else if (ev.name == "thread_name" && a) {
      thread_names_[{pid, tid}] = a->text;
    }
    return;
  }
  if (ev.ph == "s" || ev.ph == "f") {
    if (ev.cat == "ac2g" || ev.cat == "async") (ev.ph == "s" ? flow_out_ : flow_in_).insert(ev.id.AsUint());
    return;
  }
  if (ev.ph == "C") {
    auto [it, inserted] = counter_tracks_.try_emplace(ev.name, uint32_t(data_.counter_tracks.size()));
    const auto& members = ev.args.members;
    if (inserted) {
      CounterTrack c;
      c.name = ev.name;
      if (!members.empty() && members[0].first != "value") c.unit = members[0].first;
      if (ev.pid.is_string()) c.group = ev.pid.text;
      data_.counter_tracks.push_back(std::move(c));
    }
    if (!members.empty()) data_.counter_samples.push_back({ev.ts_ns, members[0].second.AsDouble(), it->second});
    return;
  }
  if (ev.ph == "i" && ev.name == "Record Window End") {
    data_.window_end_ns = ev.ts_ns;
    return;
  }
  EventKind kind;
  if ((ev.ph != "X" && ev.ph != "i") || !numeric_pid || !internal::KindFromCategory(ev.cat, &kind)) {
    Unmapped();  // spans ("Trace"), iteration markers, unknown phases and categories
    return;
  }
  if (ev.ph == "i") kind = EventKind::kInstant;
  if (!have_pid_ && IsCpuKind(kind)) {
    data_.pid = pid;
    have_pid_ = true;
  }
  uint32_t track;
  if (IsCpuKind(kind)) {
    track = TrackFor(TrackType::kThread, pid, tid, 0, 0);
  } else if (kind == EventKind::kOverhead) {
    track = TrackFor(TrackType::kOverhead, pid, tid, 0, 0);
  } else if (tid == kDeviceRowTid) {
    track = TrackFor(TrackType::kGpuDevice, pid, tid, uint32_t(pid), 0);
  } else if (tid >= kStreamSyncTidOffset && (kind == EventKind::kSync || kind == EventKind::kCudaEvent)) {
    track = TrackFor(TrackType::kGpuStreamSync, pid, tid, uint32_t(pid), uint32_t(tid - kStreamSyncTidOffset));
  } else {
    track = TrackFor(TrackType::kGpuStream, pid, tid, uint32_t(pid), uint32_t(tid));
  }
  Event e;
  memset(&e, 0, sizeof(e));
  e.kind = kind;
  e.track = track;
  e.detail = kNoDetail;
  e.start_ns = ev.ts_ns;
  e.end_ns = ev.ph == "X" ? ev.ts_ns + std::max<int64_t>(ev.dur_ns, 0) : ev.ts_ns;
  e.name = data_.strings.Intern(ev.name);
  internal::ApplyKinetoArgs(ev.args, ev.name, data_, e);
  data_.events_by_track[track].push_back(e);
}

TraceData TraceBuilder::Finish() {
  for (size_t i = 0; i < data_.tracks.size(); ++i) {
    Track& t = data_.tracks[i];
    if (t.type == TrackType::kThread) {
      auto it = thread_names_.find({t.pid, t.tid});
      if (it != thread_names_.end()) {
        // "thread <tid> (<name>)" -> "<name>"
        const std::string& n = it->second;
        size_t open = n.find(" (");
        if (n.rfind("thread ", 0) == 0 && open != std::string::npos && n.back() == ')')
          t.name = n.substr(open + 2, n.size() - open - 3);
        else if (n.rfind("thread ", 0) != 0)
          t.name = n;
      }
    }
    for (Event& e : data_.events_by_track[i]) {
      if (!e.correlation) continue;
      if ((e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) && flow_out_.count(e.correlation))
        e.flags |= kFlagFlowOut;
      else if (!IsCpuKind(e.kind) && flow_in_.count(e.correlation))
        e.flags |= kFlagFlowIn;
    }
  }
  std::stable_sort(data_.counter_samples.begin(), data_.counter_samples.end(),
                   [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  data_.SortTracks();
  return std::move(data_);
}

}  // namespace

absl::StatusOr<TraceData> ReadKinetoJsonTrace(const std::string& path) {
  TraceBuilder b;
  absl::Status st = ReadKinetoJsonFile(path, b.Callbacks());
  if (!st.ok()) return st;
  return b.Finish();
}

absl::StatusOr<TraceData> ReadKinetoJsonTraceText(std::string_view text) {
  TraceBuilder b;
  absl::Status st = ReadKinetoJsonText(text, b.Callbacks());
  if (!st.ok()) return st;
  return b.Finish();
}

}  // namespace kairos
