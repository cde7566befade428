// File: json_reader.h
// Layer: kairos_output. A streaming reader for Kineto-format Chrome-trace JSON (ours and
// PyTorch's: fractional-µs `ts` relative to baseTimeNanoseconds, older absolute integer µs,
// string pids "Spans"/"Traces", legacy categories), plain or gzip- or zstd-compressed
// (detected from the magic bytes, not the file name). It reads in 64 KiB chunks and holds
// one trace event at a time, so memory is bounded by the largest single event, whatever
// the file size. Hand-written; no JSON library.
// Threading: a reader call runs on the calling thread; callbacks run on that thread.
//
// Example (offline analysis in bounded memory):
//   KinetoJsonCallbacks cb;
//   cb.on_event = [&](const KinetoEvent& ev) { if (ev.cat == "kernel") total += ev.dur_ns; };
//   absl::Status st = ReadKinetoJsonFile("trace.json.zst", cb);
#ifndef KAIROS_SRC_OUTPUT_JSON_READER_H_
#define KAIROS_SRC_OUTPUT_JSON_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trace_data.h"

namespace kairos {

// A parsed JSON value. Numbers keep their source text so 64-bit integers and the
// 3-digit-ns `ts` fractions survive exactly.
struct JsonValue {
  enum class Type : uint8_t { kNull = 0, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: the number as written
  std::vector<JsonValue> items;                              // kArray
  std::vector<std::pair<std::string, JsonValue>> members;    // kObject, in file order

  bool is_number() const { return type == Type::kNumber; }
  bool is_string() const { return type == Type::kString; }
  // First member named `key`, or null. Objects only.
  const JsonValue* Find(std::string_view key) const;
  // Numeric value (numbers, and strings holding a number); `fallback` otherwise.
  int64_t AsInt(int64_t fallback = 0) const;
  uint64_t AsUint(uint64_t fallback = 0) const;
  double AsDouble(double fallback = 0) const;
  // Compact JSON text of this value (keys and strings re-escaped).
  std::string ToJson() const;
};

// Parses one complete JSON text (e.g. a metadata value or the Perfetto writer's detail
// text). Errors name the byte offset.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

// One trace event, with the time fields already converted to Unix ns.
struct KinetoEvent {
  std::string ph;
  std::string cat;
  std::string name;
  JsonValue pid;        // number or string ("Spans", "Traces", "")
  JsonValue tid;
  bool has_ts = false;
  int64_t ts_ns = 0;    // Unix ns: baseTimeNanoseconds + ts, or ts*1000 for absolute µs
  bool has_dur = false;
  int64_t dur_ns = 0;
  JsonValue id;         // flow events
  JsonValue args;       // object, or null when absent
  const JsonValue* raw = nullptr;  // the whole event object (valid during the callback)
};

struct KinetoJsonCallbacks {
  // Every top-level key except "traceEvents", in file order. baseTimeNanoseconds is also
  // reported here. Keys after traceEvents (Kineto's late distributedInfo, traceName) arrive
  // after the events.
  std::function<void(std::string_view key, const JsonValue& value)> on_metadata;
  // Every element of traceEvents, in file order. A non-object element is skipped and
  // counted in the returned stats.
  std::function<void(const KinetoEvent& event)> on_event;
};

struct KinetoJsonStats {
  uint64_t events = 0;
  uint64_t skipped = 0;  // elements of traceEvents that are not objects
  uint64_t bytes = 0;    // uncompressed bytes parsed
};

// Streams `path` (plain, gzip or zstd). Returns an error naming the path and byte offset on
// malformed input or I/O failure; callbacks already made stay made.
absl::Status ReadKinetoJsonFile(const std::string& path, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats = nullptr);
// The same over an in-memory (uncompressed) text.
absl::Status ReadKinetoJsonText(std::string_view text, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats = nullptr);

// Builds a whole TraceData from a Kineto JSON trace: events mapped back to kinds, tracks,
// side-table rows and flow flags (an ac2g "s"/"f" pair sets kFlagFlowOut/kFlagFlowIn on the
// runtime and GPU events with that correlation). Span/marker events ("Trace" category,
// "Iteration Start", "Record Window End") are not events and are dropped; counts of anything
// not mapped go to stats["json_reader.unmapped"]. Memory is that of the TraceData.
absl::StatusOr<TraceData> ReadKinetoJsonTrace(const std::string& path);
absl::StatusOr<TraceData> ReadKinetoJsonTraceText(std::string_view text);

namespace internal {
// Shared with the Perfetto reader: fills `e` (correlation, external id, cbid, flags) and the
// side-table row of `kind` from Kineto `args`. `name` is the shown name (memcpy/memset/sync
// kinds are parsed back from it).
void ApplyKinetoArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e);
// "kernel" -> kKernel, ... including legacy categories; false when unknown.
bool KindFromCategory(std::string_view cat, EventKind* kind);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_READER_H_
