// File: report_fixture.cc
// Layer: tests for kairos_report. Writes the synthetic two-rank training run
// (sample_trace.h) as Kineto JSON traces DIR/rank0.json and DIR/rank1.json, so the browser
// test can run the real `kairos report` CLI on real trace files.
// Threading: single-threaded.
#include <cstdio>
#include <string>

#include "output/writer.h"
#include "report/sample_trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: report_fixture DIR\n");
    return 2;
  }
  for (int rank = 0; rank < 2; ++rank) {
    const kairos::TraceData data = kairos::testing::SampleTrainingTrace(rank);
    kairos::OutputOptions request;
    request.path = std::string(argv[1]) + "/rank" + std::to_string(rank) + ".json";
    const absl::Status st = kairos::WriteTraceFile(data, request);
    if (!st.ok()) {
      std::fprintf(stderr, "report_fixture: %s\n", std::string(st.message()).c_str());
      return 1;
    }
  }
  return 0;
}
