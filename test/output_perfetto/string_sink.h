// File: string_sink.h
// Layer: test (output). A ByteSink that keeps everything written to it in memory, for tests
// that compare or decode a writer's bytes; `writes` counts the Write calls (chunking tests).
#ifndef KAIROS_TEST_OUTPUT_PERFETTO_STRING_SINK_H_
#define KAIROS_TEST_OUTPUT_PERFETTO_STRING_SINK_H_

#include <string>

#include "output/sink.h"

namespace kairos::testing {

class StringSink : public ByteSink {
 public:
  absl::Status Write(const void* data, size_t size) override {
    ++writes;
    out.append(static_cast<const char*>(data), size);
    return absl::OkStatus();
  }
  absl::Status Finish() override { return absl::OkStatus(); }
  std::string out;
  int writes = 0;
};

}  // namespace kairos::testing

#endif  // KAIROS_TEST_OUTPUT_PERFETTO_STRING_SINK_H_
