// File: perfetto_reader_fuzz.cc
// Layer: fuzz entry point for the Perfetto trace reader (libFuzzer signature). Any input
// must read or be rejected with a status: never crash, hang, leak, read out of bounds or
// overflow; and the result must not depend on where the input's chunks end (the file reader
// feeds the packet splitter one read or decompressed chunk at a time).
// Threading: single-threaded per call.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "output/json_writer.h"
#include "output/proto/perfetto_reader.h"
#include "output_perfetto/string_sink.h"

namespace {

// Two reads compared by the JSON trace they write.
std::string JsonOf(const kairos::TraceData& d) {
  kairos::testing::StringSink s;
  kairos::JsonTraceWriter w;
  if (!w.Write(d, s).ok()) __builtin_trap();  // the writer takes any TraceData a reader builds
  return s.out;
}

}  // namespace

extern "C" int KairosFuzzPerfettoReader(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<kairos::TraceData> whole = kairos::ReadPerfettoTraceBytes(bytes);
  // Chunk size from the first byte, so the fuzzer explores the split points too.
  const size_t chunk = size == 0 ? 1 : 1 + data[0] % 61;
  const absl::StatusOr<kairos::TraceData> split = kairos::internal::ReadPerfettoTraceChunked(bytes, chunk);
  if (whole.ok() != split.ok()) __builtin_trap();
  if (!whole.ok()) {
    if (whole.status() != split.status()) __builtin_trap();
    return 0;
  }
  if (JsonOf(*whole) != JsonOf(*split)) __builtin_trap();
  // A tight packet cap must be a clean refusal too.
  kairos::TraceReadOptions tight;
  tight.perfetto_max_packet_bytes = 32;
  (void)kairos::ReadPerfettoTraceBytes(bytes, tight);
  return 0;
}
