// File: perfetto_detail_args.h
// Layer: kairos_output. Formats the args an event takes from its side-table row (kernel
// launch configuration, memcpy/memset/sync details, NVTX args) as one compact JSON object
// text with the Kineto arg keys (trace-format-kineto-json.md §4). The Perfetto writer interns
// this text once per sequence and row, so a kernel carries all its args in ~4 bytes.
// Threading: pure functions, thread-safe.
#ifndef KAIROS_SRC_OUTPUT_PERFETTO_DETAIL_ARGS_H_
#define KAIROS_SRC_OUTPUT_PERFETTO_DETAIL_ARGS_H_

#include <string>
#include <string_view>

#include "trace_data.h"

namespace kairos::internal {

// Appends `{"key":value,...}` for `event`'s side-table row to `out`. Returns false (and
// appends nothing) when the event has no detail row or the row index is out of range.
bool AppendDetailArgsJson(const TraceData& data, const Event& event, std::string* out);

// The event name the JSON writer shows: memcpy, memset and sync names derive from the detail
// row ("Memcpy HtoD (Pageable -> Device)"), a kernel named "kernel" shows as "Kernel".
// `scratch` backs the returned view when the name is derived.
std::string_view DisplayName(const TraceData& data, const Event& e, std::string* scratch);
// A key equal for two events exactly when their DisplayName is equal (given one TraceData):
// the StringId for plain names, a value >= 2^32 for derived ones. Keys name interning.
uint64_t DisplayNameKey(const TraceData& data, const Event& e);

// Which side table `kind` indexes (0 = none); keys the per-sequence interning of detail text.
uint32_t DetailTableOf(EventKind kind);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_OUTPUT_PERFETTO_DETAIL_ARGS_H_
