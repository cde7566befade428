// File: metrics_store_test.cc
// Layer: test (daemon). The agent's series table and its Prometheus text (tools/metrics_store.h)
// and the /metrics request parser (tools/metrics_http.h): exact exposition text, label
// escaping, null fields left out, counters summed over lines, strangers/garbage/floods refused
// and counted, the series cap, series of exited or silent processes dropped.
// Threading: single-threaded; the clock and the pid probes are plain values.
#include "metrics_store.h"

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "daemon/exposition_check.h"
#include "metrics_http.h"
#include "temp_dir.h"

namespace kairos::tools {
namespace {

std::string Line(int64_t pid, int device, const std::string& rest = "") {
  return "{\"ts_ns\":1790000010000000000,\"host\":\"ignored\",\"pid\":" + std::to_string(pid) +
         ",\"job_id\":991,\"rank\":3,\"device\":" + std::to_string(device) +
         ",\"interval_ns\":10000000000,\"gpu_busy_pct\":71.2,\"sm_active_pct\":58.4,"
         "\"achieved_occupancy_pct\":31.9,\"tensor_active_pct\":null,"
         "\"dram_throughput_pct\":40.1,\"kernels\":18231,\"memcpy_bytes\":5368709120,"
         "\"steps\":12,\"step_time_ms_p50\":812.4,\"process_cpu_pct\":150,"
         "\"process_rss_bytes\":2147483648,\"gpu_memory_used_bytes\":77309411328,"
         "\"gpu_memory_total_bytes\":85899345920" + rest + "}";
}

MetricsStore::Known KnowsAll() {
  return [](int64_t, int64_t) { return true; };
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> Grep(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
    at = nl + 1;
  }
  return out;
}

TEST_CASE("metrics store: exact exposition text of one series") {
  MetricsStoreOptions o;
  o.host = "node17";
  MetricsStore store(o);
  REQUIRE(store.Ingest(Line(4242, 0) + "\n", 1000, KnowsAll()) == 1);
  const std::string text = store.Render();
  const std::string labels =
      "{host=\"node17\",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"\",pid=\"4242\"}";
  CHECK(Grep(text, "kairos_gpu_busy_ratio") ==
        std::vector<std::string>{"kairos_gpu_busy_ratio" + labels + " 0.712"});
  CHECK(Grep(text, "kairos_gpu_sm_active_ratio") ==
        std::vector<std::string>{"kairos_gpu_sm_active_ratio" + labels + " 0.584"});
  CHECK(Grep(text, "kairos_gpu_achieved_occupancy_ratio") ==
        std::vector<std::string>{"kairos_gpu_achieved_occupancy_ratio" + labels + " 0.319"});
  // tensor_active_pct was null: a family with HELP/TYPE and no sample, never a 0.
  CHECK(Grep(text, "kairos_gpu_tensor_active_ratio").empty());
  CHECK(Grep(text, "# TYPE kairos_gpu_tensor_active_ratio") ==
        std::vector<std::string>{"# TYPE kairos_gpu_tensor_active_ratio gauge"});
  CHECK(Grep(text, "kairos_gpu_dram_throughput_ratio") ==
        std::vector<std::string>{"kairos_gpu_dram_throughput_ratio" + labels + " 0.401"});
  CHECK(Grep(text, "kairos_step_time_seconds") ==
        std::vector<std::string>{"kairos_step_time_seconds" + labels + " 0.8124"});
  CHECK(Grep(text, "kairos_gpu_kernels_total") ==
        std::vector<std::string>{"kairos_gpu_kernels_total" + labels + " 18231"});
  CHECK(Grep(text, "kairos_gpu_memcpy_bytes_total") ==
        std::vector<std::string>{"kairos_gpu_memcpy_bytes_total" + labels + " 5368709120"});
  CHECK(Grep(text, "kairos_steps_total") ==
        std::vector<std::string>{"kairos_steps_total" + labels + " 12"});
  CHECK(Grep(text, "kairos_telemetry_interval_seconds") ==
        std::vector<std::string>{"kairos_telemetry_interval_seconds" + labels + " 10"});
  CHECK(Grep(text, "kairos_telemetry_timestamp_seconds") ==
        std::vector<std::string>{"kairos_telemetry_timestamp_seconds" + labels + " 1790000010.000"});
  CHECK(Grep(text, "# TYPE kairos_gpu_kernels_total") ==
        std::vector<std::string>{"# TYPE kairos_gpu_kernels_total counter"});
  // Every family has exactly one HELP and one TYPE line, HELP first.
  CHECK(Grep(text, "kairos_process_cpu_cores") ==
        std::vector<std::string>{"kairos_process_cpu_cores" + labels + " 1.5"});
  CHECK(Grep(text, "kairos_process_resident_memory_bytes") ==
        std::vector<std::string>{"kairos_process_resident_memory_bytes" + labels + " 2147483648"});
  CHECK(Grep(text, "kairos_gpu_memory_used_bytes") ==
        std::vector<std::string>{"kairos_gpu_memory_used_bytes" + labels + " 77309411328"});
  CHECK(Grep(text, "kairos_gpu_memory_total_bytes") ==
        std::vector<std::string>{"kairos_gpu_memory_total_bytes" + labels + " 85899345920"});
  CHECK(Grep(text, "# TYPE kairos_gpu_memory_used_bytes") ==
        std::vector<std::string>{"# TYPE kairos_gpu_memory_used_bytes gauge"});
  CHECK(Grep(text, "# HELP ").size() == 15);
  CHECK(Grep(text, "# TYPE ").size() == 15);
  CHECK(text.find("# HELP kairos_gpu_busy_ratio ") == 0);
  CHECK(text.back() == '\n');
}

TEST_CASE("metrics store: device memory: null leaves no sample, negative is malformed, latest kept") {
  MetricsStore store({});
  // A schema-2 line (no memory fields) and a process without a context on the GPU (null).
  std::string old = Line(10, 0);
  old.erase(old.find(",\"gpu_memory_used_bytes\""), old.size() - 1 - old.find(",\"gpu_memory_used_bytes\""));
  REQUIRE(old.find("gpu_memory") == std::string::npos);
  REQUIRE(store.Ingest(old, 0, KnowsAll()) == 1);
  std::string null_line = Line(11, 0);
  null_line.replace(null_line.find("\"gpu_memory_used_bytes\":77309411328"), 35, "\"gpu_memory_used_bytes\":null");
  REQUIRE(store.Ingest(null_line, 0, KnowsAll()) == 1);
  std::string negative = Line(12, 0);
  negative.replace(negative.find("\"gpu_memory_used_bytes\":77309411328"), 35, "\"gpu_memory_used_bytes\":-1");
  CHECK(store.Ingest(negative, 0, KnowsAll()) == 0);
  CHECK(store.rejected(MetricsReject::kMalformed) == 1);
  std::string later = Line(11, 0);
  later.replace(later.find("77309411328"), 11, "1048576");
  REQUIRE(store.Ingest(later, 1000, KnowsAll()) == 1);
  const std::string text = store.Render();
  // pid 10 has no memory samples; pid 11 the latest line's; pid 12 none (refused).
  CHECK(Grep(text, "kairos_gpu_memory_used_bytes{") ==
        std::vector<std::string>{"kairos_gpu_memory_used_bytes{host=\"\",job_id=\"991\",rank=\"3\","
                                 "device=\"0\",gpu_uuid=\"\",pid=\"11\"} 1048576"});
  CHECK(Grep(text, "kairos_gpu_memory_total_bytes{").size() == 1);
}

TEST_CASE("metrics store: label values are escaped; null job id and rank are empty") {
  MetricsStoreOptions o;
  o.host = "we\"ird\\host\nname";
  MetricsStore store(o);
  std::string line = Line(7, 1, ",\"gpu_uuid\":\"GPU-\\\"x\\\"\"");
  line.replace(line.find("\"job_id\":991"), 12, "\"job_id\":null");
  line.replace(line.find("\"rank\":3"), 8, "\"rank\":null");
  REQUIRE(store.Ingest(line, 0, KnowsAll()) == 1);
  CHECK(Grep(store.Render(), "kairos_steps_total{") ==
        std::vector<std::string>{"kairos_steps_total{host=\"we\\\"ird\\\\host\\nname\",job_id=\"\","
                                 "rank=\"\",device=\"1\",gpu_uuid=\"GPU-\\\"x\\\"\",pid=\"7\"} 12"});
  CHECK(EscapeLabelValue("a\\b\"c\nd\te") == "a\\\\b\\\"c\\nd\te");
}

TEST_CASE("metrics store: counters sum the lines' deltas; gauges keep the latest") {
  MetricsStore store({});
  REQUIRE(store.Ingest(Line(10, 0), 0, KnowsAll()) == 1);
  std::string second = Line(10, 0);
  second.replace(second.find("\"kernels\":18231"), 15, "\"kernels\":69");
  second.replace(second.find("\"sm_active_pct\":58.4"), 20, "\"sm_active_pct\":12.5");
  second.replace(second.find("\"steps\":12"), 10, "\"steps\":null");
  REQUIRE(store.Ingest(second, 1000, KnowsAll()) == 1);
  const std::string text = store.Render();
  REQUIRE(Grep(text, "kairos_gpu_kernels_total{").size() == 1);
  CHECK(Grep(text, "kairos_gpu_kernels_total{")[0].substr(Grep(text, "kairos_gpu_kernels_total{")[0].rfind(' ') + 1) == "18300");
  CHECK(Grep(text, "kairos_steps_total{")[0].substr(Grep(text, "kairos_steps_total{")[0].rfind(' ') + 1) == "12");
  CHECK(Grep(text, "kairos_gpu_sm_active_ratio{")[0].substr(Grep(text, "kairos_gpu_sm_active_ratio{")[0].rfind(' ') + 1) == "0.125");
  CHECK(store.lines() == 2);
}

TEST_CASE("metrics store: strangers, garbage and floods are refused and counted") {
  MetricsStore store({});
  // Only processes the daemon knows, under the job id they poll with.
  auto known = [](int64_t job, int64_t pid) { return job == 991 && pid == 10; };
  CHECK(store.Ingest(Line(11, 0), 0, known) == 0);
  CHECK(store.rejected(MetricsReject::kUnknownProcess) == 1);
  // Garbage: not JSON, a wrong type, a missing field, negative counters, an empty payload.
  CHECK(store.Ingest("\x01\x02garbage", 0, known) == 0);
  std::string bad_type = Line(10, 0);
  bad_type.replace(bad_type.find("\"sm_active_pct\":58.4"), 20, "\"sm_active_pct\":\"58\"");
  CHECK(store.Ingest(bad_type, 0, known) == 0);
  CHECK(store.Ingest("{\"pid\":10,\"device\":0}", 0, known) == 0);
  std::string negative = Line(10, 0);
  negative.replace(negative.find("\"kernels\":18231"), 15, "\"kernels\":-5");
  CHECK(store.Ingest(negative, 0, known) == 0);
  CHECK(store.Ingest("\n\n", 0, known) == 0);
  CHECK(store.rejected(MetricsReject::kMalformed) == 5);
  // A datagram of 65 lines is refused whole.
  std::string many;
  for (int i = 0; i < 65; ++i) many += Line(10, i) + "\n";
  CHECK(store.Ingest(many, 0, known) == 0);
  CHECK(store.rejected(MetricsReject::kTooManyLines) == 1);
  CHECK(store.series() == 0);
  // A flood: 64 lines a second are taken, the rest counted; the next second is open again.
  size_t taken = 0;
  for (int i = 0; i < 100; ++i) taken += store.Ingest(Line(10, i % 8), 5000, known);
  CHECK(taken == 64);
  CHECK(store.rejected(MetricsReject::kRateLimited) == 36);
  CHECK(store.Ingest(Line(10, 0), 6000, known) == 1);
  CHECK(store.series() == 8);
}

TEST_CASE("metrics store: the series cap holds, the overflow is counted") {
  MetricsStoreOptions o;
  o.max_series = 3;
  MetricsStore store(o);
  for (int pid = 1; pid <= 5; ++pid) store.Ingest(Line(pid, 0), 0, KnowsAll());
  CHECK(store.series() == 3);
  CHECK(store.dropped_series() == 2);
  // Existing series still update at the cap.
  CHECK(store.Ingest(Line(2, 0), 100, KnowsAll()) == 1);
}

TEST_CASE("metrics store: one kernel-verified sender speaks for one pid", "[abuse]") {
  MetricsStoreOptions o;
  o.max_series = 8;
  MetricsStore store(o);
  // Sender 700 (its credentials) forges lines for 100 registered pids, 2 devices each: it
  // keeps its first pid's 2 series, the rest are refused by name, and the cap is not reached.
  size_t taken = 0;
  for (int pid = 1; pid <= 100; ++pid)
    taken += store.Ingest(Line(pid, 0) + "\n" + Line(pid, 1) + "\n", pid * 1000, KnowsAll(), 700);
  CHECK(taken == 2);
  CHECK(store.series() == 2);
  CHECK(store.rejected(MetricsReject::kPidMismatch) == 198);
  CHECK(store.dropped_series() == 0);
  // A real process still gets in, and nobody else may write pid 1's series.
  CHECK(store.Ingest(Line(42, 0), 200000, KnowsAll(), 42) == 1);
  CHECK(store.Ingest(Line(1, 0), 200000, KnowsAll(), 43) == 0);
  CHECK(store.rejected(MetricsReject::kPidMismatch) == 199);
  CHECK(store.series() == 3);
  CHECK(Grep(store.Render(), "kairos_gpu_busy_ratio{").size() == 3);
  // Once pid 1's series are gone, its sender is free to speak for another pid (pid reuse,
  // a different pid namespace after a restart).
  CHECK(store.Sweep(200000, [](int64_t pid) { return pid != 1; }) == 2);
  CHECK(store.Ingest(Line(2, 0), 201000, KnowsAll(), 700) == 1);
  CHECK(store.series() == 2);
  // Without credentials (nullopt) the line's pid is trusted, as before.
  CHECK(store.Ingest(Line(77, 0), 201000, KnowsAll()) == 1);
}

TEST_CASE("metrics store: a sender refused at the cap holds no claim") {
  MetricsStoreOptions o;
  o.max_series = 1;
  MetricsStore store(o);
  REQUIRE(store.Ingest(Line(1, 0), 0, KnowsAll(), 500) == 1);
  CHECK(store.Ingest(Line(2, 0), 0, KnowsAll(), 600) == 0);
  CHECK(store.dropped_series() == 1);
  // Sender 600 stored nothing, so it may speak for pid 3 once there is room.
  CHECK(store.Sweep(10, [](int64_t pid) { return pid != 1; }) == 1);
  CHECK(store.Ingest(Line(3, 0), 20, KnowsAll(), 600) == 1);
  CHECK(store.rejected(MetricsReject::kPidMismatch) == 0);
}

TEST_CASE("metrics store: series of exited or silent processes are dropped at the sweep") {
  MetricsStore store({});
  store.Ingest(Line(1, 0) + "\n" + Line(1, 1), 0, KnowsAll());
  store.Ingest(Line(2, 0), 0, KnowsAll());
  CHECK(store.series() == 3);
  CHECK(store.HasPid(1));
  // Process 1 exited: both its GPUs go at the next sweep.
  std::set<int64_t> alive{2};
  auto probe = [&alive](int64_t pid) { return alive.count(pid) != 0; };
  CHECK(store.Sweep(1000, probe) == 2);
  CHECK_FALSE(store.HasPid(1));
  CHECK(store.series() == 1);
  CHECK(store.Render().find("pid=\"1\"") == std::string::npos);
  // Process 2 stops sending (10 s interval): kept until 2 intervals + 2 s, then dropped.
  CHECK(store.Sweep(22000, probe) == 0);
  CHECK(store.Sweep(22001, probe) == 1);
  CHECK(store.series() == 0);
}

// What Prometheus' own parser says of `text` ("" = accepted; promtool prints the parse error
// otherwise); nullopt when promtool is not installed.
std::optional<std::string> PromtoolParseError(const std::string& text) {
  std::string path = testing::TempRoot() + "/kairos_expo_XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return std::nullopt;
  FILE* f = fdopen(fd, "w");
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
  const std::string cmd = std::string("command -v promtool >/dev/null 2>&1 || exit 77; promtool check metrics < ") +
                          path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  for (size_t n; p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = p != nullptr ? pclose(p) : -1;
  unlink(path.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) return std::nullopt;
  // promtool also lints names and help texts; only a parse error loses the scrape.
  const size_t at = out.find("parsing error");
  return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
}

// Issue 30: lines from a process the agent knows, with values no telemetry thread writes.
// Before the fix each of these produced text Prometheus refuses whole ("-1.-500", "inf", a
// label cut inside a UTF-8 character), a counter that wrapped to a small value, or let one pid
// take 100 of the series slots.
TEST_CASE("metrics store: hostile values never break the exposition text", "[abuse]") {
  MetricsStoreOptions o;
  o.host = "node\xff\xfe";  // a host name that is not UTF-8
  MetricsStore store(o);
  auto with = [](int64_t pid, const std::string& from, const std::string& to) {
    std::string l = Line(pid, 0);
    const size_t at = l.find(from);
    REQUIRE(at != std::string::npos);
    return l.replace(at, from.size(), to);
  };
  // A timestamp before 1970: one sign, not "-1.-500".
  CHECK(store.Ingest(with(1, "\"ts_ns\":1790000010000000000", "\"ts_ns\":-1500000000"), 0, KnowsAll()) == 1);
  // A gauge that parses as infinity, and an interval of 31 years: malformed.
  CHECK(store.Ingest(with(2, "\"gpu_busy_pct\":71.2", "\"gpu_busy_pct\":1e999"), 0, KnowsAll()) == 0);
  CHECK(store.Ingest(with(2, "\"interval_ns\":10000000000", "\"interval_ns\":1000000000000000000"), 0, KnowsAll()) == 0);
  CHECK(store.rejected(MetricsReject::kMalformed) == 2);
  // A uuid whose 64-byte cut falls inside a two-byte character: cut before it.
  CHECK(store.Ingest(Line(3, 0, ",\"gpu_uuid\":\"" + std::string(63, 'a') + "\xc3\xa9\""), 0, KnowsAll()) == 1);
  // Quotes, line feeds and backslashes in a label value: escaped.
  CHECK(store.Ingest(Line(4, 0, ",\"gpu_uuid\":\"G\\\"\\n\\\\\""), 0, KnowsAll()) == 1);
  // Counter deltas of INT64_MAX three times: the total saturates instead of wrapping.
  for (int64_t t : {0, 1000, 2000})
    CHECK(store.Ingest(with(5, "\"kernels\":18231", "\"kernels\":9223372036854775807"), t, KnowsAll()) == 1);
  // One pid naming 100 devices (over two seconds, under the rate limit): 64 series kept.
  const size_t per_pid = 64;  // MetricsStore::kMaxDevicesPerProcess
  size_t taken = 0;
  for (int dev = 0; dev < 100; ++dev) taken += store.Ingest(Line(6, dev), dev < 64 ? 0 : 1000, KnowsAll());
  CHECK(taken == per_pid);
  CHECK(store.dropped_series() == 100 - per_pid);
  CHECK(store.series() == 4 + per_pid);

  const std::string text = store.Render();
  INFO(text.substr(0, 4000));
  CHECK(testing::ExpositionProblem(text) == "");
  const std::string host = "host=\"node\xef\xbf\xbd\xef\xbf\xbd\"";
  CHECK(Grep(text, "kairos_telemetry_timestamp_seconds{" + host + ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"\",pid=\"1\"}") ==
        std::vector<std::string>{"kairos_telemetry_timestamp_seconds{" + host +
                                 ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"\",pid=\"1\"} -1.500"});
  CHECK(Grep(text, "kairos_steps_total{" + host + ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"" +
                       std::string(63, 'a') + "\",pid=\"3\"} 12").size() == 1);
  CHECK(Grep(text, "kairos_steps_total{" + host + ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"G\\\"\\n\\\\\",pid=\"4\"} 12").size() == 1);
  CHECK(Grep(text, "kairos_gpu_kernels_total{" + host + ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"\",pid=\"5\"}") ==
        std::vector<std::string>{"kairos_gpu_kernels_total{" + host +
                                 ",job_id=\"991\",rank=\"3\",device=\"0\",gpu_uuid=\"\",pid=\"5\"} 18446744073709551615"});
  CHECK(Grep(text, "kairos_gpu_busy_ratio{").size() == 4 + per_pid);
  // The independent reference: Prometheus' own parser takes the whole text.
  const std::optional<std::string> promtool = PromtoolParseError(text);
  if (promtool.has_value()) CHECK(*promtool == "");
  else WARN("promtool not installed: Prometheus' own parser not run");
}

// The checker itself catches what the fixes above prevent (so a pass means something).
TEST_CASE("exposition checker: refuses what Prometheus refuses") {
  const std::string head = "# HELP a_seconds x\n# TYPE a_seconds gauge\n";
  CHECK(testing::ExpositionProblem(head + "a_seconds{pid=\"1\"} 1.5\n") == "");
  CHECK(testing::ExpositionProblem(head + "a_seconds{pid=\"1\"} -1.-500\n") != "");
  CHECK(testing::ExpositionProblem(head + "a_seconds{pid=\"1\"} inf\n") != "");
  CHECK(testing::ExpositionProblem(head + "a_seconds{pid=\"\xe2\x82\"} 1\n") != "");
  CHECK(testing::ExpositionProblem(head + "a_seconds{pid=\"a\"b\"} 1\n") != "");
  CHECK(testing::ExpositionProblem("a_seconds 1\n") != "");  // no TYPE line
  const std::optional<std::string> promtool = PromtoolParseError(head + "a_seconds{pid=\"1\"} -1.-500\n");
  if (promtool.has_value()) CHECK(*promtool != "");
}

TEST_CASE("metrics http: request heads") {
  using V = HttpRequestVerdict;
  CHECK(ParseHttpRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n").kind == V::kIncomplete);
  V ok = ParseHttpRequest("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
  CHECK(ok.kind == V::kMetrics);
  CHECK_FALSE(ok.head_only);
  CHECK(ParseHttpRequest("GET /metrics?x=1 HTTP/1.0\n\n").kind == V::kMetrics);
  CHECK(ParseHttpRequest("HEAD /metrics HTTP/1.1\r\n\r\n").head_only);
  CHECK(ParseHttpRequest("GET / HTTP/1.1\r\n\r\n").status == 404);
  CHECK(ParseHttpRequest("POST /metrics HTTP/1.1\r\n\r\n").status == 405);
  CHECK(ParseHttpRequest("garbage\r\n\r\n").status == 400);
  CHECK(ParseHttpRequest("GET /metrics SPDY/3\r\n\r\n").status == 400);
  CHECK(ParseHttpRequest(std::string(kMaxHttpHead, 'a')).kind == V::kIncomplete);
  CHECK(ParseHttpRequest(std::string(kMaxHttpHead + 1, 'a')).status == 431);
  CHECK(ParseHttpRequest("GET /metrics HTTP/1.1\r\nX: " + std::string(kMaxHttpHead, 'a') +
                         "\r\n\r\n").status == 431);
  CHECK(HttpResponse(200, kMetricsContentType, "a 1\n", false) ==
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
        "Content-Length: 4\r\nConnection: close\r\n\r\na 1\n");
  CHECK(HttpResponse(404, "text/plain; charset=utf-8", "", true) ==
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 0\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace kairos::tools
