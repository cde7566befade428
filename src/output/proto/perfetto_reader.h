// File: perfetto_reader.h
// Layer: kairos_perfetto_proto (decoder side; not linked into libkairos). Reads a Perfetto
// TrackEvent trace written by PerfettoTraceWriter (plain or zstd-compressed) back into a
// TraceData, for `kairos convert` and round-trip tests. Foreign TrackEvent traces are read
// best-effort: slices on any track become events; what cannot be mapped is counted in
// stats["perfetto_reader.unmapped"].
// Threading: a call runs on the calling thread; no shared state.
// Memory: the TraceData it builds plus one input chunk and one packet: the file is read and
// decompressed as a stream, never held whole (a small zstd bomb once expanded to gigabytes
// in memory), and one packet is capped (TraceReadOptions::perfetto_max_packet_bytes, 64 MiB).
#ifndef KAIROS_SRC_OUTPUT_PROTO_PERFETTO_READER_H_
#define KAIROS_SRC_OUTPUT_PROTO_PERFETTO_READER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "model/trace_data.h"

namespace kairos {

// `options` (trace_data.h) may keep only what the analysis reads.
absl::StatusOr<TraceData> ReadPerfettoTrace(const std::string& path, const TraceReadOptions& options = {});
// `bytes` is an uncompressed trace (concatenated Trace.packet records).
absl::StatusOr<TraceData> ReadPerfettoTraceBytes(std::string_view bytes, const TraceReadOptions& options = {});

namespace internal {
// The same, handed to the packet splitter `chunk` bytes at a time, as a file is read: the
// fuzzer checks that where the chunks end never changes the result.
absl::StatusOr<TraceData> ReadPerfettoTraceChunked(std::string_view bytes, size_t chunk,
                                                   const TraceReadOptions& options = {});
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_PROTO_PERFETTO_READER_H_
