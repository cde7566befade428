// File: output_format_test.cc
// Layer: tests (output). Extension-based format selection.
// Threading: single-threaded.
#include "output/output_format.h"

#include <catch2/catch.hpp>

namespace kairos {
namespace {

TEST_CASE("Formats from file names") {
  bool known = false;
  CHECK(FormatFromPath("/tmp/a.json", &known) == OutputFormat::kJson);
  CHECK(known);
  CHECK(FormatFromPath("a.pt.trace.json.gz", &known) == OutputFormat::kJsonGzip);
  CHECK(FormatFromPath("a.gz", &known) == OutputFormat::kJsonGzip);
  CHECK(FormatFromPath("a.json.zst", &known) == OutputFormat::kJsonZstd);
  CHECK(FormatFromPath("a.pftrace", &known) == OutputFormat::kPerfetto);
  CHECK(FormatFromPath("a.perfetto-trace", &known) == OutputFormat::kPerfetto);
  CHECK(FormatFromPath("a.pftrace.zst", &known) == OutputFormat::kPerfettoZstd);
  CHECK(FormatFromPath("a.perfetto-trace.zst", &known) == OutputFormat::kPerfettoZstd);
  CHECK(known);
  CHECK(FormatFromPath("a.trace", &known) == OutputFormat::kJson);
  CHECK_FALSE(known);
  CHECK(FormatFromPath("a.zst", &known) == OutputFormat::kJson);
  CHECK_FALSE(known);
  CHECK(FormatFromPath("", nullptr) == OutputFormat::kJson);
}

TEST_CASE("An explicit format wins over the extension") {
  CHECK(ResolveOutputFormat(OutputFormat::kJsonZstd, "a.json") == OutputFormat::kJsonZstd);
  CHECK(ResolveOutputFormat(OutputFormat::kAuto, "a.json.gz") == OutputFormat::kJsonGzip);
  CHECK(ResolveOutputFormat(OutputFormat::kAuto, "a.weird") == OutputFormat::kJson);
  CHECK(std::string(OutputFormatName(OutputFormat::kJsonZstd)) == "json.zst");
  CHECK(std::string(OutputFormatName(OutputFormat::kPerfettoZstd)) == "perfetto.zst");
}

}  // namespace
}  // namespace kairos
