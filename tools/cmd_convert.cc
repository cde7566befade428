// File: cmd_convert.cc
// Layer: tools. `kairos convert IN OUT`: converts a trace between Kineto JSON (plain, gzip,
// zstd) and Perfetto protobuf (plain, zstd), e.g. to turn a PyTorch/Kineto JSON trace into
// a compact .pftrace.zst. The input format is detected from its content (and name for
// zstd-compressed input); the output format from --format or OUT's extension.
// Threading: single-threaded CLI.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "util/input_file.h"
#include "output/json_reader.h"
#include "output/output_format.h"
#include "output/proto/perfetto_reader.h"
#include "output/writer.h"
#include "subcommand.h"

namespace kairos::tools {
namespace {

constexpr const char kUsage[] =
    "usage: kairos convert IN OUT [--format F] [--zstd-level N]\n"
    "\n"
    "Converts a trace between Kineto JSON and Perfetto protobuf.\n"
    "  IN   .json, .json.gz, .json.zst (Kineto/PyTorch JSON) or .pftrace, .perfetto-trace,\n"
    "       .pftrace.zst (Perfetto, as kairos writes it); detected from the content\n"
    "  OUT  format from the extension: .json, .json.gz, .json.zst, .pftrace,\n"
    "       .perfetto-trace, .pftrace.zst, .perfetto-trace.zst\n"
    "options:\n"
    "  --format F       json | json.gz | json.zst | perfetto | perfetto.zst (overrides OUT's name)\n"
    "  --zstd-level N   zstd level 1..19 for .zst outputs (default 1)\n"
    "exit status: 0 converted, 1 read or write failed, 2 bad usage\n";

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Perfetto if the content is a protobuf Trace (first byte 0x0A) or, for zstd input, if the
// name says so; JSON otherwise.
bool LooksLikePerfetto(const std::string& path) {
  // The reader's own open (input_file.h): a FIFO named as input must not block here either.
  absl::StatusOr<int> fd = OpenInputFile(path);
  if (!fd.ok()) return false;  // the reader reports the open error
  unsigned char head[4] = {0, 0, 0, 0};
  ssize_t n = read(*fd, head, sizeof(head));
  close(*fd);
  if (n >= 1 && head[0] == 0x0A) return true;
  if (n == 4 && !memcmp(head, "\x28\xb5\x2f\xfd", 4))
    return EndsWith(path, ".pftrace.zst") || EndsWith(path, ".perfetto-trace.zst");
  return false;
}

int ConvertMain(int argc, char** argv) {
  std::string in, out;
  TraceFormat format = TraceFormat::kAuto;
  int level = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(kUsage, stdout);
      return 0;
    }
    if (!strcmp(a, "--format") || !strcmp(a, "--zstd-level")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "kairos convert: %s needs a value\n", a);
        return 2;
      }
      const char* v = argv[++i];
      if (!strcmp(a, "--format")) {
        if (!ParseOutputFormatName(v, &format)) {
          fprintf(stderr, "kairos convert: unknown format '%s' (json, json.gz, json.zst, perfetto, perfetto.zst)\n", v);
          return 2;
        }
      } else {
        char* end = nullptr;
        long l = strtol(v, &end, 10);
        if (!*v || *end || l < 1 || l > 19) {
          fprintf(stderr, "kairos convert: --zstd-level must be 1..19, got '%s'\n", v);
          return 2;
        }
        level = static_cast<int>(l);
      }
      continue;
    }
    if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "kairos convert: unknown option '%s'\n", a);
      return 2;
    }
    if (in.empty()) in = a;
    else if (out.empty()) out = a;
    else {
      fprintf(stderr, "kairos convert: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (in.empty() || out.empty()) {
    fputs(kUsage, stderr);
    return 2;
  }
  if (in == out) {
    fprintf(stderr, "kairos convert: IN and OUT are the same file\n");
    return 2;
  }
  const bool from_perfetto = LooksLikePerfetto(in);
  absl::StatusOr<TraceData> data = from_perfetto ? ReadPerfettoTrace(in) : ReadKinetoJsonTrace(in);
  if (!data.ok()) {
    fprintf(stderr, "kairos convert: cannot read %s: %s\n", in.c_str(),
            std::string(data.status().message()).c_str());
    return 1;
  }
  OutputOptions req;
  req.path = out;
  req.format = format;
  req.zstd_level = level;
  req.write_thread = true;  // the user waits: write(2) and compression on a second core
  absl::Status st = WriteTraceFile(*data, req);
  if (!st.ok()) {
    fprintf(stderr, "kairos convert: cannot write %s: %s\n", out.c_str(), std::string(st.message()).c_str());
    return 1;
  }
  auto it = data->stats.find(from_perfetto ? "perfetto_reader.unmapped" : "json_reader.unmapped");
  uint64_t unmapped = it == data->stats.end() ? 0 : it->second;
  fprintf(stderr, "kairos convert: %zu events from %s (%s) -> %s (%s)%s\n", data->EventCount(),
          in.c_str(), from_perfetto ? "perfetto" : "json", out.c_str(),
          OutputFormatName(ResolveOutputFormat(format, out)),
          unmapped ? (", " + std::to_string(unmapped) + " records not mapped (spans, markers)").c_str() : "");
  return 0;
}

const Subcommand kConvert("convert", "convert a trace between Kineto JSON and Perfetto protobuf",
                          ConvertMain);

}  // namespace
}  // namespace kairos::tools
