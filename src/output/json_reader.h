// File: json_reader.h
// Layer: kairos_output. A streaming reader for Kineto-format Chrome-trace JSON (ours and
// PyTorch's: fractional-µs `ts` relative to baseTimeNanoseconds, older absolute integer µs,
// string pids "Spans"/"Traces", legacy categories), plain or gzip- or zstd-compressed
// (detected from the magic bytes, not the file name; a UTF-8 byte order mark before the
// text is skipped). It reads in 64 KiB chunks and holds one trace event at a time, so memory
// is bounded by the largest single event, whatever the file size. The parser is kairos_json's:
// each traceEvents element is read straight from the parser's window (json/json_span.h),
// the known Kineto keys into KinetoEvent without building the event's JSON tree; an element
// that is malformed is re-read by the stream parser (json/json_reader.h), which names the
// error and its offset.
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

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/json_reader.h"
#include "json/json_value.h"
#include "model/trace_data.h"

namespace kairos {

namespace internal {
class LazyEventObject;
}  // namespace internal

// The whole event object as read, for consumers that need every key (`kairos merge`). It is
// parsed from the event's bytes on first use, so readers that look only at the fields below
// never build it. Valid during the callback, like the event.
class KinetoRawEvent {
 public:
  const JsonValue& operator*() const;
  const JsonValue* operator->() const { return &**this; }

 private:
  friend class internal::LazyEventObject;
  internal::LazyEventObject* lazy_ = nullptr;  // null: an empty event (JSON null)
};

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
  int64_t dur_ns = 0;   // with has_ts, ts_ns + dur_ns fits int64: the reader refuses the event otherwise
  JsonValue id;         // flow events
  JsonValue args;       // object, or null when absent
  KinetoRawEvent raw;   // the whole event object (valid during the callback)
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
// `options` (trace_data.h) may keep only what the analysis reads.
absl::StatusOr<TraceData> ReadKinetoJsonTrace(const std::string& path, const TraceReadOptions& options = {});
absl::StatusOr<TraceData> ReadKinetoJsonTraceText(std::string_view text, const TraceReadOptions& options = {});

namespace internal {
// How a reader stores side-table rows: each row as read, or (TraceReadOptions::for_analysis)
// only the fields the analysis reads, each distinct row once. One per reader, for one
// TraceData.
class DetailRows {
 public:
  explicit DetailRows(const TraceReadOptions& options) : for_analysis_(options.for_analysis) {}
  bool for_analysis() const { return for_analysis_; }
  // Each appends `row` to its table (or finds the identical row kept before) and returns its
  // index. Rows must have been zero-filled (memset) before their fields were set: distinct
  // rows are told apart by their bytes, padding included.
  uint32_t Add(const KernelDetail& row, std::vector<KernelDetail>& table);
  uint32_t Add(const MemcpyDetail& row, std::vector<MemcpyDetail>& table);
  uint32_t Add(const MemsetDetail& row, std::vector<MemsetDetail>& table);
  uint32_t Add(const SyncDetail& row, std::vector<SyncDetail>& table);

 private:
  template <typename Row>
  uint32_t Intern(const Row& row, std::vector<Row>& table, absl::flat_hash_map<std::string, uint32_t>& index);

  bool for_analysis_;
  absl::flat_hash_map<std::string, uint32_t> kernels_, memcpys_, memsets_, syncs_;  // row bytes -> index
};

// Shared with the Perfetto reader: fills `e` (correlation, external id, cbid, flags) and the
// side-table row of `kind` from Kineto `args`, stored through `rows`. `name` is the shown
// name (memcpy/memset/sync kinds are parsed back from it).
void ApplyKinetoArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                     DetailRows& rows);
// "kernel" -> kKernel, ... including legacy categories; false when unknown.
bool KindFromCategory(std::string_view cat, EventKind* kind);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_READER_H_
