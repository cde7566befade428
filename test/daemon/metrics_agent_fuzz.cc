// File: metrics_agent_fuzz.cc
// Layer: test (daemon). libFuzzer-style entry point for the metrics agent's input side: any
// bytes as a "tlm" payload (newline-separated telemetry lines) go into a MetricsStore (small
// series cap, a probe that knows and keeps only some pids) three times across two seconds,
// then a sweep; the same bytes as the agent's host name, and as a /metrics request head.
// Built into the corpus replay test (no libFuzzer needed) and, with clang, into
// fuzz_metrics_agent. Invariants (violations abort): /metrics is always valid exposition
// text (test/daemon/exposition_check.h: one bad line makes Prometheus drop every series of
// the agent), the store stays within its cap, every line is either taken or counted, and a
// request head is answered with one of the documented statuses.
// Threading: single-threaded.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/exposition_check.h"
#include "metrics_http.h"
#include "metrics_store.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  fprintf(stderr, "metrics agent fuzz: %s %s\n", what, detail.c_str());
  abort();
}

}  // namespace

extern "C" int KairosFuzzMetricsAgent(const uint8_t* data, size_t size) {
  using namespace kairos::tools;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  MetricsStoreOptions o;
  o.host = std::string(bytes.substr(0, 256));  // a hostile host name must render too
  o.max_series = 8;
  MetricsStore store(o);
  auto known = [](int64_t job, int64_t pid) { return pid % 5 != 0 && job != 13; };
  for (int64_t now : {0, 500, 1500}) {
    const size_t taken = store.Ingest(bytes, now, known);
    Check(taken <= MetricsStore::kMaxLinesPerDatagram, "took more lines than a datagram holds");
    Check(store.series() <= o.max_series, "series cap exceeded");
  }
  store.Sweep(2000, [](int64_t pid) { return pid % 3 != 0; });
  Check(store.series() <= o.max_series, "series cap exceeded after the sweep");
  const std::string text = store.Render();
  const std::string problem = kairos::testing::ExpositionProblem(text);
  Check(problem.empty(), "invalid exposition text:", problem);
  const HttpRequestVerdict v = ParseHttpRequest(bytes);
  Check(v.kind != HttpRequestVerdict::kError || v.status == 400 || v.status == 404 ||
            v.status == 405 || v.status == 431,
        "undocumented status");
  Check(v.kind != HttpRequestVerdict::kIncomplete || size <= kMaxHttpHead, "unbounded head");
  return 0;
}
