// File: cmd_merge.cc
// Layer: tools. `kairos merge INPUTS... -o OUT`: the traces of a job's ranks as one
// timeline, each rank its own process group, clocks aligned (src/output/merge.h).
// Threading: single-threaded CLI.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "output/merge.h"
#include "output/proto/perfetto_reader.h"
#include "subcommand.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos merge INPUT... -o OUT\n"
    "\n"
    "Merges the traces of a multi-rank job (one per rank) into one timeline: every rank is\n"
    "its own process group (\"rank R: ...\", pids remapped), and clocks are aligned: ranks\n"
    "on one host share a clock; other hosts are shifted so the same collectives end at the\n"
    "same time (median over all of them). Details: docs/MERGE.md.\n"
    "\n"
    "  INPUT  .json, .json.gz, .json.zst (Kineto JSON) or .pftrace, .pftrace.zst\n"
    "  OUT    .json, .json.gz, .json.zst (JSON inputs; every event and arg kept) or\n"
    "         .pftrace, .pftrace.zst\n";

int MergeMain(int argc, char** argv) {
  std::vector<std::string> inputs;
  MergeOptions options;
  for (int i = 1; i < argc; ++i) {
    if ((std::strcmp(argv[i], "-o") == 0 || std::strcmp(argv[i], "--out") == 0) && i + 1 < argc) {
      options.out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "kairos merge: unexpected argument '%s'\n%s", argv[i], kUsage);
      return 2;
    } else {
      inputs.push_back(argv[i]);
    }
  }
  if (inputs.empty() || options.out_path.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  options.read_perfetto = [](const std::string& path) { return ReadPerfettoTrace(path); };
  absl::StatusOr<MergeResult> r = MergeTraces(inputs, options);
  if (!r.ok()) {
    std::fprintf(stderr, "kairos merge: %s\n", std::string(r.status().message()).c_str());
    return 1;
  }
  for (const std::string& w : r->warnings) std::fprintf(stderr, "kairos merge: warning: %s\n", w.c_str());
  std::fprintf(stderr, "kairos merge: %zu ranks, %llu events -> %s\n", r->ranks.size(),
               static_cast<unsigned long long>(r->events), options.out_path.c_str());
  for (const MergeRankInfo& k : r->ranks) {
    std::fprintf(stderr, "  rank %lld  host %s  clock shift %lld ns (from %llu collectives)  %s\n",
                 static_cast<long long>(k.rank), k.host.empty() ? "?" : k.host.c_str(),
                 static_cast<long long>(k.shift_ns), static_cast<unsigned long long>(k.aligned_on),
                 k.path.c_str());
  }
  return 0;
}

const Subcommand kMerge("merge", "merge the traces of a job's ranks into one aligned timeline", MergeMain);

}  // namespace
}  // namespace kairos::tools
