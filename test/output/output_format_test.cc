// File: output_format_test.cc
// Layer: tests (output). Extension-based format selection.
// Threading: single-threaded.
#include "output/output_format.h"

#include <catch2/catch.hpp>

namespace kairos {
namespace {

TEST_CASE("Formats from file names") {
  bool known = false;
  CHECK(FormatFromPath("/tmp/a.json", &known) == TraceFormat::kJson);
  CHECK(known);
  CHECK(FormatFromPath("a.pt.trace.json.gz", &known) == TraceFormat::kJsonGzip);
  CHECK(FormatFromPath("a.gz", &known) == TraceFormat::kJsonGzip);
  CHECK(FormatFromPath("a.json.zst", &known) == TraceFormat::kJsonZstd);
  CHECK(FormatFromPath("a.pftrace", &known) == TraceFormat::kPerfetto);
  CHECK(FormatFromPath("a.perfetto-trace", &known) == TraceFormat::kPerfetto);
  CHECK(FormatFromPath("a.pftrace.zst", &known) == TraceFormat::kPerfettoZstd);
  CHECK(FormatFromPath("a.perfetto-trace.zst", &known) == TraceFormat::kPerfettoZstd);
  CHECK(known);
  CHECK(FormatFromPath("a.trace", &known) == TraceFormat::kJson);
  CHECK_FALSE(known);
  CHECK(FormatFromPath("a.zst", &known) == TraceFormat::kJson);
  CHECK_FALSE(known);
  CHECK(FormatFromPath("", nullptr) == TraceFormat::kJson);
}

TEST_CASE("An explicit format wins over the extension") {
  CHECK(ResolveOutputFormat(TraceFormat::kJsonZstd, "a.json") == TraceFormat::kJsonZstd);
  CHECK(ResolveOutputFormat(TraceFormat::kAuto, "a.json.gz") == TraceFormat::kJsonGzip);
  CHECK(ResolveOutputFormat(TraceFormat::kAuto, "a.weird") == TraceFormat::kJson);
  CHECK(std::string(OutputFormatName(TraceFormat::kJsonZstd)) == "json.zst");
  CHECK(std::string(OutputFormatName(TraceFormat::kPerfettoZstd)) == "perfetto.zst");
}

}  // namespace
}  // namespace kairos
