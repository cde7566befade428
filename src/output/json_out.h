// File: json_out.h
// Layer: kairos_output (internal to the JSON writer). A chunked output buffer: text
// accumulates in kairos_json's JsonBuffer and goes to the ByteSink whenever it passes
// JsonTraceWriter::kChunkBytes, so memory stays bounded for any trace size. Into a
// PipelinedSink it goes a hand-off (256 KiB) at a time, by exchanging buffers, not copying.
// Threading: one thread.
#ifndef KAIROS_SRC_OUTPUT_JSON_OUT_H_
#define KAIROS_SRC_OUTPUT_JSON_OUT_H_

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/json_writer.h"
#include "output/json_writer.h"
#include "output/pipelined_sink.h"
#include "output/sink.h"

namespace kairos {
namespace internal {

// The trace writer's buffer: THE JSON writer's JsonBuffer, handed to the ByteSink in chunks.
class JsonOut : public JsonBuffer {
 public:
  // A PipelinedSink takes the formatted bytes by buffer exchange, a hand-off at a time;
  // any other sink gets them copied, a chunk at a time.
  explicit JsonOut(ByteSink& sink)
      : JsonOut(sink, dynamic_cast<PipelinedSink*>(&sink)) {}

  void Micros(int64_t ns) { Advance(FormatMicros(ns, Reserve(32))); }

  // Number writers for a cursor with room (at least 24 bytes; 32 for PutDouble): the same
  // text as JsonBuffer's Uint/Int/Double. The integers are json_decimal.h's.
  static char* PutUint(uint64_t v, char* p) { return kairos::PutUint(v, p); }
  static char* PutInt(int64_t v, char* p) { return kairos::PutInt(v, p); }
  // Doubles of a trace repeat (a kernel's blocks and warps per SM are functions of its
  // launch configuration), and the shortest round-trip formatting is the costliest number
  // to print, so the text of recent values is kept in a small direct-mapped cache keyed by
  // the exact bits: the same bits always print the same text. Non-finite values have no
  // JSON spelling and become null, as in JsonBuffer::Double.
  char* PutDouble(double v, char* p) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    DoubleSlot& slot = doubles_[(bits * 0x9E3779B97F4A7C15ull) >> 58];
    if (slot.len != 0 && slot.bits == bits) {
      std::memcpy(p, slot.text, sizeof(slot.text));
      return p + slot.len;
    }
    char* end;
    if (!std::isfinite(v)) {
      std::memcpy(p, "null", 4);
      end = p + 4;
    } else {
      end = std::to_chars(p, p + 32, v).ptr;
    }
    const size_t n = static_cast<size_t>(end - p);
    if (n <= sizeof(slot.text)) {
      slot.bits = bits;
      slot.len = static_cast<uint8_t>(n);
      std::memcpy(slot.text, p, n);
    }
    return end;
  }

  void Double(double v) {
    char* p = Reserve(32);
    Advance(static_cast<size_t>(PutDouble(v, p) - p));
  }

  // Hands the buffer to the sink once it holds a chunk's worth.
  absl::Status MaybeFlush() { return size() >= flush_at_ ? Flush() : absl::OkStatus(); }
  absl::Status Flush() {
    if (size() == 0) return absl::OkStatus();
    if (pipe_ != nullptr) {
      const size_t n = size();
      std::unique_ptr<char[]> buf;  // never used empty: Exchange always gives a buffer back
      size_t cap = 0;
      SwapStorage(&buf, &cap);  // take the formatted bytes out...
      absl::Status s = pipe_->Exchange(&buf, &cap, n);
      SwapStorage(&buf, &cap);  // ...and format on into the buffer handed back
      return s;
    }
    absl::Status s = sink_.Write(data(), size());
    Clear();
    return s;
  }

 private:
  // A chunk (or hand-off) plus room for the event that crosses its end.
  static constexpr size_t kInitialCapacity = JsonTraceWriter::kChunkBytes + 16 * 1024;
  static constexpr size_t kPipedCapacity = PipelinedSink::kHandOffBytes + 16 * 1024;

  JsonOut(ByteSink& sink, PipelinedSink* pipe)
      : JsonBuffer(pipe != nullptr ? kPipedCapacity : kInitialCapacity),
        sink_(sink),
        pipe_(pipe),
        flush_at_(pipe != nullptr ? PipelinedSink::kHandOffBytes : JsonTraceWriter::kChunkBytes) {}

  struct DoubleSlot {
    uint64_t bits = 0;
    uint8_t len = 0;  // 0 = empty
    char text[31];
  };

  ByteSink& sink_;
  PipelinedSink* pipe_;  // &sink_ when it is one, else null
  size_t flush_at_;
  DoubleSlot doubles_[64];
};

// The JSON writer's sink for EventArgs::Visit (event_args.h): writes `,"args":{` before the
// first key and `}` on Close(). Keys are arg_keys literals, so they need no escaping.
// The numeric args (all of a kernel's, ~15 per event) are written through a local cursor
// into room reserved once per several args, instead of three bounds-checked appends per
// arg, and the methods are forced inline into EventArgs' visit, so keys are compile-time
// literals copied with constant-size moves (a profile of the flush put 5% of its time in
// an out-of-line call with strlen + memcpy per arg, and most of the rest of the args in
// per-append bounds checks and length updates). Strings and long literals (client text,
// unbounded) take JsonOut's checked path.
#define KAIROS_JSON_SINK_INLINE inline __attribute__((always_inline))
class RowTextCache;

class JsonArgsSink {
 public:
  // `rows`: where row-constant args (RowArgs) are kept as text; null formats them every time.
  explicit JsonArgsSink(JsonOut& out, RowTextCache* rows = nullptr) : out_(out), rows_(rows) {
    Refill();
  }
  JsonArgsSink(const JsonArgsSink&) = delete;
  JsonArgsSink& operator=(const JsonArgsSink&) = delete;

  // Row-constant args (EventArgs::Kernel's runs, part 0 or 1 of detail row `row`): `fn(sink)`
  // writes them; with a cache, once per row and part, and their text is copied after that.
  template <typename Fn> void RowArgs(uint32_t row, int part, Fn&& fn);

  KAIROS_JSON_SINK_INLINE void Uint(const char* key, uint64_t v) {
    if (!FastKey(key)) return SlowKey(key).Uint(v);
    p_ = JsonOut::PutUint(v, p_);
  }
  KAIROS_JSON_SINK_INLINE void Int(const char* key, int64_t v) {
    if (!FastKey(key)) return SlowKey(key).Int(v);
    p_ = JsonOut::PutInt(v, p_);
  }
  KAIROS_JSON_SINK_INLINE void Double(const char* key, double v) {
    if (!FastKey(key)) return SlowKey(key).Double(v);
    p_ = out_.PutDouble(v, p_);
  }
  void Str(const char* key, std::string_view v) { SlowKey(key).Str(v); }
  KAIROS_JSON_SINK_INLINE void Literal(const char* key, std::string_view json) {
    if (json.size() > kMaxValue || !FastKey(key)) return SlowKey(key).Raw(json);
    std::memcpy(p_, json.data(), json.size());
    p_ += json.size();
  }
  KAIROS_JSON_SINK_INLINE void Dim3(const char* key, const uint32_t v[3]) {
    if (!FastKey(key)) {
      JsonOut& o = SlowKey(key);
      o.Char('[');
      o.Uint(v[0]);
      o.Char(',');
      o.Uint(v[1]);
      o.Char(',');
      o.Uint(v[2]);
      o.Char(']');
      return;
    }
    *p_++ = '[';
    p_ = JsonOut::PutUint(v[0], p_);
    *p_++ = ',';
    p_ = JsonOut::PutUint(v[1], p_);
    *p_++ = ',';
    p_ = JsonOut::PutUint(v[2], p_);
    *p_++ = ']';
  }
  // Ends the args object (if any arg was written) and hands the cursor back to JsonOut.
  void Close() {
    Sync();
    if (open_) out_.Char('}');
    open_ = false;
  }

 private:
  friend class RowTextCache;
  // A sink that writes args as a fragment of an object already open (`,"key":value` each, no
  // `,"args":{` and no `}`): the text RowTextCache keeps. End with Release().
  struct Fragment {};
  JsonArgsSink(JsonOut& out, Fragment) : out_(out), rows_(nullptr), open_(true) { Refill(); }
  void Release() { Sync(); }
  // Appends kept args text (a fragment: each arg with its leading comma).
  void PutFragment(std::string_view text) {
    if (text.empty()) return;
    Sync();
    if (open_) {
      out_.Raw(text);
    } else {
      out_.Raw(",\"args\":{");
      out_.Raw(text.substr(1));
      open_ = true;
    }
  }

  // Room for one arg on the fast path: `,"args":{"` + key + `":` + a value of at most
  // kMaxValue bytes (a Dim3 of three 10-digit values is 34, a double 24, an int 20).
  static constexpr size_t kMaxKey = 64;
  static constexpr size_t kMaxValue = 40;
  static constexpr size_t kMaxArg = 12 + kMaxKey + kMaxValue;
  static constexpr size_t kRoom = 16 * kMaxArg;

  // Writes the key at the cursor when it fits the fast path (always, for arg_keys);
  // returns false, having written nothing, otherwise.
  KAIROS_JSON_SINK_INLINE bool FastKey(const char* key) {
    const size_t n = std::strlen(key);  // a constant for the arg_keys literals once inlined
    if (n > kMaxKey) return false;
    if (static_cast<size_t>(end_ - p_) < kMaxArg) {
      Sync();
      Refill();
    }
    if (open_) {
      std::memcpy(p_, ",\"", 2);
      p_ += 2;
    } else {
      std::memcpy(p_, ",\"args\":{\"", 10);
      p_ += 10;
      open_ = true;
    }
    std::memcpy(p_, key, n);
    p_ += n;
    std::memcpy(p_, "\":", 2);
    p_ += 2;
    return true;
  }
  // The checked path: syncs the cursor, writes the key through JsonOut and reserves again
  // after the caller's value (at the next arg or Close).
  JsonOut& SlowKey(const char* key) {
    Sync();
    out_.Raw(open_ ? std::string_view(",\"") : std::string_view(",\"args\":{\""));
    open_ = true;
    out_.Raw(key);
    out_.Raw("\":");
    stale_ = true;
    return out_;
  }
  void Refill() {
    base_ = p_ = out_.Reserve(kRoom);
    end_ = base_ + kRoom;
    stale_ = false;
  }
  void Sync() {
    if (!stale_) out_.Advance(static_cast<size_t>(p_ - base_));
    // After a slow-path value the reserved room is gone; force a refill before the next
    // fast write and make the next Sync a no-op.
    base_ = p_ = end_ = nullptr;
    stale_ = true;
  }

  JsonOut& out_;
  RowTextCache* rows_;
  char* base_ = nullptr;  // where the reserved room began (JsonOut's end at Refill)
  char* p_ = nullptr;     // the cursor
  char* end_ = nullptr;
  bool stale_ = true;  // the cursor holds nothing to hand back
  bool open_ = false;
};

// The text of detail rows' constant args as JsonArgsSink writes them, formatted once per row
// and part and copied for the row's next events. A kernel's detail row is shared by every
// launch of the same kernel with the same configuration (thousands per window in a training
// loop), and its 13-15 row-constant args were most of a kernel event's formatting time.
// Bounded: once kMaxBytes of text is kept, new rows are formatted every time.
class RowTextCache {
 public:
  static constexpr int kParts = 2;
  static constexpr size_t kMaxBytes = size_t{4} << 20;
  static constexpr size_t kMaxText = 4096;  // longer text is formatted every time
  // Rows past this are formatted every time: the index (8 bytes per row) stays under 8 MiB
  // for a trace of any size; the text kept never holds more rows than this anyway.
  static constexpr size_t kMaxRows = size_t{1} << 20;

  // Rows 0 .. min(rows, kMaxRows)-1 can be kept (the trace's kernel rows).
  explicit RowTextCache(size_t rows)
      : start_(std::min(rows, kMaxRows) * kParts, kNone), scratch_(null_sink_) {}

  // The kept text of (row, part), formatting it with `fn` first when new; a view with null
  // data when it cannot be kept (row out of range, cache full, text too long).
  template <typename Fn> std::string_view Get(uint32_t row, int part, Fn&& fn) {
    if (part < 0 || part >= kParts) return {};
    const size_t slot = size_t{row} * kParts + static_cast<size_t>(part);
    if (slot >= start_.size()) return {};
    if (start_[slot] != kNone) return Text(start_[slot]);
    if (text_.size() >= kMaxBytes) return {};
    scratch_.Clear();
    JsonArgsSink frag(scratch_, JsonArgsSink::Fragment{});
    fn(frag);
    frag.Release();
    const std::string_view t = scratch_.view();
    if (t.size() > kMaxText) return {};
    const auto at = static_cast<uint32_t>(text_.size());
    const auto n = static_cast<uint16_t>(t.size());
    text_.append(reinterpret_cast<const char*>(&n), sizeof(n));
    text_.append(t);
    start_[slot] = at;
    if (part == 0) ++kept_rows_;
    return Text(at);
  }
  size_t kept_bytes() const { return text_.size(); }
  size_t kept_rows() const { return kept_rows_; }  // rows whose part 0 is kept

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // Formats into scratch_, never written anywhere: scratch_ is cleared before each use.
  struct NullSink : ByteSink {
    absl::Status Write(const void*, size_t) override { return absl::OkStatus(); }
    absl::Status Finish() override { return absl::OkStatus(); }
  };
  std::string_view Text(uint32_t at) const {
    uint16_t n;
    std::memcpy(&n, text_.data() + at, sizeof(n));
    return std::string_view(text_.data() + at + sizeof(n), n);
  }

  std::vector<uint32_t> start_;  // per (row, part): offset of its length in text_, or kNone
  std::string text_;             // per kept text: its length (2 bytes), then the text
  size_t kept_rows_ = 0;
  NullSink null_sink_;
  JsonOut scratch_;
};

template <typename Fn>
void JsonArgsSink::RowArgs(uint32_t row, int part, Fn&& fn) {
  const std::string_view kept = rows_ != nullptr ? rows_->Get(row, part, fn) : std::string_view();
  if (kept.data() == nullptr) {
    fn(*this);
  } else {
    PutFragment(kept);
  }
}

#undef KAIROS_JSON_SINK_INLINE

}  // namespace internal
}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_OUT_H_
