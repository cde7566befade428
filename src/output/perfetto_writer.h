// File: perfetto_writer.h
// Layer: kairos_output. Writes a TraceData as a Perfetto protobuf trace (a stream of
// Trace.packet records; docs/PERFETTO.md) with a hand-written encoder, in time order, in
// bounded memory (one ~256 KiB chunk plus per-track interning state).
// Threading: Write() runs on the session thread (kairos-session) or in the CLI; a writer
// object is not shared.
//
// Layout (all field numbers are Perfetto's, see src/output/proto/perfetto_trace.proto):
//   sequence 1: clock snapshot (REALTIME as the trace clock), track descriptors for the
//               process, threads, GPUs, streams, counters, and one "kairos metadata"
//               instant carrying the trace-level metadata as debug annotations.
//   sequence 2: counter samples (delta-encoded timestamps).
//   sequence 3+i: the events of TraceData::tracks[i]. Each such sequence opens with a
//               packet that clears incremental state, installs a delta-encoded clock
//               (id 64) and sets the track as the default track, so an event packet
//               carries only a timestamp delta, the type and an interned name.
#ifndef KAIROS_SRC_OUTPUT_PERFETTO_WRITER_H_
#define KAIROS_SRC_OUTPUT_PERFETTO_WRITER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "sink.h"
#include "model/trace_data.h"
#include "writer.h"

namespace kairos {

// Track uuids and sequence ids the writer assigns; the reader (perfetto_reader.h) maps them
// back. Exposed for tests.
inline constexpr uint64_t kPerfettoProcessUuid = 1;
inline constexpr uint64_t kPerfettoMetadataUuid = 2;
inline constexpr uint64_t kPerfettoOverheadGroupUuid = 3;
inline constexpr uint64_t kPerfettoDeviceUuidBase = 0x100000;
inline constexpr uint64_t kPerfettoTrackUuidBase = 0x200000;
// Counter uuids are small so that a sample's track_uuid takes one varint byte (first 112
// counter tracks); they stay below the device and track bases.
inline constexpr uint64_t kPerfettoCounterUuidBase = 16;
inline constexpr uint64_t kPerfettoCounterGroupUuidBase = 0x600000;
inline constexpr uint32_t kPerfettoMetadataSequence = 1;
inline constexpr uint32_t kPerfettoCounterSequence = 2;
inline constexpr uint32_t kPerfettoFirstTrackSequence = 3;
inline constexpr uint32_t kPerfettoIncrementalClockId = 64;
// Debug annotation that holds an event's side-table args (kernel launch configuration,
// memcpy details, ...) as one interned JSON object text; see docs/PERFETTO.md.
inline constexpr const char* kPerfettoDetailArg = "detail";
// Debug annotation that holds an NCCL kernel's operation args ("Collective name", ...) the
// same way, interned once per distinct text (a training loop repeats a few).
inline constexpr const char* kPerfettoCollectiveArg = "collective";
// And a kernel's measured PM-sampling means ("SM active %", ...), when sampled.
inline constexpr const char* kPerfettoMeasuredArg = "measured";

struct PerfettoWriterOptions {
  size_t chunk_bytes = 256 * 1024;  // bytes buffered before each ByteSink::Write
};

struct PerfettoWriteStats {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t clamped_overlaps = 0;  // events that partially overlapped an enclosing one
};

class PerfettoTraceWriter : public TraceWriter {
 public:
  explicit PerfettoTraceWriter(PerfettoWriterOptions options = {}) : options_(options) {}
  // Streams `data` into `sink` (does not call sink.Finish()). Returns the sink's first error.
  absl::Status Write(const TraceData& data, ByteSink& sink) override;
  // Counters of the last Write().
  const PerfettoWriteStats& stats() const { return stats_; }

 private:
  PerfettoWriterOptions options_;
  PerfettoWriteStats stats_;
};

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_PERFETTO_WRITER_H_
