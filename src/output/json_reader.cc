// File: json_reader.cc
// Layer: kairos_output. See json_reader.h. Byte sources (plain, gzip, zstd) feeding
// kairos_json's pull parser, which yields one JsonValue per trace event. The mapping of
// events back to a TraceData is json_reader_trace.cc.
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

namespace kairos {
namespace {

constexpr size_t kChunk = JsonStreamParser::kChunk;

// ---- Byte sources ----

using Source = JsonByteSource;

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

// ---- Driver: walks the top-level object, one traceEvents element at a time ----

// Kineto time text (µs, up to 3 fraction digits = ns) to ns, exactly.
// Kineto time text (µs, up to 3 fraction digits = ns) to ns, exactly. False when the value
// does not fit int64 ns (about ±292 years): such a trace is rejected, never wrapped.
bool MicrosTextToNs(const JsonValue& v, int64_t* ns_out) {
  const std::string& t = v.text;
  if (v.type != JsonValue::Type::kNumber && v.type != JsonValue::Type::kString) {
    *ns_out = 0;
    return true;
  }
  if (t.find_first_of("eE") != std::string::npos) {
    const double ns = strtod(t.c_str(), nullptr) * 1000.0;
    // 2^63 is exact as a double; anything at or past it (or NaN) does not fit.
    if (!(ns > -9223372036854775808.0 && ns < 9223372036854775808.0)) return false;
    *ns_out = static_cast<int64_t>(ns);
    return true;
  }
  const bool neg = !t.empty() && t[0] == '-';
  size_t i = neg ? 1 : 0;
  int64_t ns = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    if (__builtin_mul_overflow(ns, 10, &ns) || __builtin_add_overflow(ns, t[i] - '0', &ns))
      return false;
  }
  int64_t frac = 0;
  int digits = 0;
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (digits < 3) frac = frac * 10 + (t[i] - '0');
      ++digits;
    }
  }
  for (; digits < 3; ++digits) frac *= 10;
  if (__builtin_mul_overflow(ns, 1000, &ns) || __builtin_add_overflow(ns, frac, &ns)) return false;
  *ns_out = neg ? -ns : ns;
  return true;
}

absl::Status TimeOutOfRange(const char* key, const JsonValue& v, const JsonStreamParser& p) {
  return absl::OutOfRangeError(absl::StrCat("JSON: \"", key, "\": ", v.text,
                                            " does not fit a 64-bit ns time (event ending at byte ",
                                            p.offset(), ")"));
}

absl::Status Drive(Source& src, const KinetoJsonCallbacks& cb, KinetoJsonStats* stats) {
  JsonStreamParser p(src);
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
          else if (k == "ts") {
            int64_t rel = 0;
            if (!MicrosTextToNs(v, &rel) || __builtin_add_overflow(base_ns, rel, &ev.ts_ns))
              return TimeOutOfRange("ts", v, p);
            ev.has_ts = true;
          } else if (k == "dur") {
            if (!MicrosTextToNs(v, &ev.dur_ns)) return TimeOutOfRange("dur", v, p);
            ev.has_dur = true;
          }
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
  if (!p.ExpectEnd()) return p.error();
  st.bytes = p.offset();
  return p.error();
}

}  // namespace

absl::Status ReadKinetoJsonText(std::string_view text, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats) {
  JsonTextSource src(text);
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
