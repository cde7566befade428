// File: reference_trace.h
// Layer: test (output_perfetto). A hand-built TraceData that exercises every event kind,
// track type, flow, side table, counter and metadata oddity the writers must carry.
// Threading: n/a.
#ifndef KAIROS_TEST_OUTPUT_PERFETTO_REFERENCE_TRACE_H_
#define KAIROS_TEST_OUTPUT_PERFETTO_REFERENCE_TRACE_H_

#include <cstdint>

#include "model/trace_data.h"

namespace kairos::testing {

inline constexpr int64_t kRefBase = 1790857026000000000LL;
inline constexpr int64_t kRefT0 = kRefBase + 1000000;  // window start

// `bulk_ranges` extra ranges on the second thread (cycling through 5 names) make the
// output cross several writer chunks.
TraceData BuildReferenceTrace(int bulk_ranges = 300);

}  // namespace kairos::testing

#endif  // KAIROS_TEST_OUTPUT_PERFETTO_REFERENCE_TRACE_H_
