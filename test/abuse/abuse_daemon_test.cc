// File: abuse_daemon_test.cc
// Layer: test (abuse, ctest label "abuse"). Hostile on-demand requests delivered the way a
// daemon (or anyone able to reach the job's socket) delivers them: datagrams on the job's
// Unix socket, parsed by the real preparer. Every case asserts the exact rejection, that
// nothing reaches the profiler, and that floods cost a handful of log lines.
// Threading: single-threaded; the client is driven with PollOnce (no poller thread).
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "abuse/abuse_util.h"
#include "config/daemon_client.h"
#include "config/daemon_config.h"
#include "daemon/daemon_test_util.h"
#include "util/log.h"

namespace kairos {
namespace {

using internal::EncodeDaemonConfigReply;
using testing::FakeEndpoint;
using testing::StderrCapture;
using testing::UniqueEndpoint;

class CountingHandler : public TraceRequestHandler {
 public:
  bool Busy() const override { return false; }
  absl::Status OnTraceRequest(const Config& config, uint64_t, std::string*) override {
    accepted.push_back(config);
    return absl::OkStatus();
  }
  std::vector<Config> accepted;
};

std::unique_ptr<DaemonClient> RealClient(const std::string& endpoint, TraceRequestHandler* h) {
  DaemonClientOptions o;
  o.endpoint = endpoint;
  auto client = DaemonClient::Create(o, h, MakeDaemonConfigPreparer());
  REQUIRE(client.ok());
  return std::move(*client);
}

// Lets the client handle everything queued for it, then empties the fake daemon's queue of
// the "req" polls the client sent meanwhile (a full queue would refuse the next poll, which
// is not what these tests are about).
void Pump(DaemonClient& client, FakeEndpoint& daemon) {
  client.PollOnce(0);
  while (!daemon.Receive(0).empty()) {
  }
}

std::string Rejection(const std::string& text) {
  std::string note;
  absl::StatusOr<Config> c = MakeDaemonConfigPreparer()(text, &note);
  return c.ok() ? std::string("accepted") : std::string(c.status().message());
}

const std::string kBaseOnly =
    "\": not accepted in an on-demand (daemon) request (base config only, docs/CONFIG.md)";
const std::string kControl = " (NUL and control characters are never accepted)";

struct Hostile {
  std::string text;
  std::string rejection;
};

std::vector<Hostile> HostileRequests() {
  return {
      {std::string("ACTIVITIES_LOG_FILE=/tmp/a\0/../../etc/passwd", 44),
       "config line 1: ACTIVITIES_LOG_FILE: contains the control character \\x00" + kControl},
      {"REQUEST_TRACE_ID=x\x1b]0;pwned\x07", 
       "config line 1: REQUEST_TRACE_ID: contains the control character \\x1b" + kControl},
      {"ACTIVITIES_DURATION_MSECS=500\nEVIL_KEY=1",
       "config line 2: \"EVIL_KEY\": unknown key; not accepted in an on-demand (daemon) request"},
      {"ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB=2147483647",
       "config line 1: \"ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB" + kBaseOnly},
      {"KAIROS_EXIT_FLUSH_TIMEOUT_MS=600000",
       "config line 1: \"KAIROS_EXIT_FLUSH_TIMEOUT_MS" + kBaseOnly},
      {"KAIROS_EXTRA_OUTPUTS=/etc/cron.d/x.json", "config line 1: \"KAIROS_EXTRA_OUTPUTS" + kBaseOnly},
      {"KAIROS_CPU_BUFFER_KB_PER_THREAD=1048576",
       "config line 1: \"KAIROS_CPU_BUFFER_KB_PER_THREAD" + kBaseOnly},
      {"ENABLE_SIGUSR2=1", "config line 1: \"ENABLE_SIGUSR2" + kBaseOnly},
      {"KAIROS_ZSTD_LEVEL=19",
       "config line 1: KAIROS_ZSTD_LEVEL: \"19\" is out of range; expected an integer in [1, 3] "
       "(the on-demand limit)"},
      {"ACTIVITIES_DURATION_MSECS=86400000",
       "config line 1: ACTIVITIES_DURATION_MSECS: \"86400000\" is out of range; expected an "
       "integer in [0, 3600000] (the on-demand limit)"},
      {"ACTIVITIES_ITERATIONS=-3",
       "config line 1: ACTIVITIES_ITERATIONS: \"-3\" is negative; expected an integer in [0, "
       "100000] (the on-demand limit)"},
      {"ACTIVITIES_ITERATIONS=99999999999999999999999",
       "config line 1: ACTIVITIES_ITERATIONS: \"99999999999999999999999\" is out of range; "
       "expected an integer in [0, 100000] (the on-demand limit)"},
      {"CUSTOM_CONFIG=" + std::string(5000, 'A'),
       "config line 1: CUSTOM_CONFIG: value is 5000 bytes; the limit is 4096"},
      {"ACTIVITIES_LOG_FILE=/tmp/x.json=y",
       "config line 1: invalid config line \"ACTIVITIES_LOG_FILE=/tmp/x.json=y\"; expected "
       "KEY=VALUE with exactly one '='"},
  };
}

TEST_CASE("hostile requests are rejected whole, by name, and never reach the profiler",
          "[abuse]") {
  const std::vector<Hostile> cases = HostileRequests();
  for (const Hostile& c : cases) {
    INFO(c.text.substr(0, 80));
    CHECK(Rejection(c.text) == c.rejection);
  }
  // PROFILE_START_TIME near INT64_MAX: rejected, never converted to ns (no overflow).
  const std::string far = Rejection("PROFILE_START_TIME=9223372036854775807");
  CHECK(far.rfind("config line 1: PROFILE_START_TIME: \"9223372036854775807\" is more than 24 h "
                  "in the future (now is ",
                  0) == 0);

  // The same texts over the job's socket, as the daemon would send them.
  const std::string name = UniqueEndpoint("abuse");
  FakeEndpoint daemon(name);
  CountingHandler handler;
  auto client = RealClient(name, &handler);
  StderrCapture capture;
  REQUIRE(client->PollOnce(0));
  REQUIRE_FALSE(daemon.Receive(2000).empty());  // learn the client's address
  for (const Hostile& c : cases) {
    REQUIRE(daemon.Reply(EncodeDaemonConfigReply(c.text)));
    Pump(*client, daemon);
  }
  const std::vector<std::string> lines = capture.Stop();
  CHECK(handler.accepted.empty());
  const DaemonClientStats s = client->stats();
  CHECK(s.configs_received == cases.size());
  CHECK(s.configs_rejected == cases.size());
  CHECK(s.configs_accepted == 0);
  // The first rejections are logged verbatim; the rest of the burst is rate-limited.
  REQUIRE(lines.size() == static_cast<size_t>(LogRateLimiter::kDefaultBurst));
  CHECK(lines[0] == "kairos: warning: daemon client: rejected the on-demand config: " +
                        cases[0].rejection);
  CHECK(lines[2] == "kairos: warning: daemon client: rejected the on-demand config: " +
                        cases[2].rejection);

  // A good request still works afterwards.
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_DURATION_MSECS=100")));
  Pump(*client, daemon);
  REQUIRE(handler.accepted.size() == 1);
  CHECK(handler.accepted[0].duration_ms == 100);
}

TEST_CASE("oversized and forged datagrams are dropped and counted", "[abuse]") {
  const std::string name = UniqueEndpoint("abuse-big");
  FakeEndpoint daemon(name);
  CountingHandler handler;
  auto client = RealClient(name, &handler);
  REQUIRE(client->PollOnce(0));
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  StderrCapture capture;
  // 70 KiB: larger than any reply may be (40-byte header + 64 KiB).
  const std::string oversized = EncodeDaemonConfigReply(std::string(70 * 1024, 'x'));
  REQUIRE(daemon.Reply(oversized));
  // A header whose size field lies about the payload.
  std::string lying = EncodeDaemonConfigReply("ACTIVITIES_DURATION_MSECS=1");
  lying[0] = 100;
  REQUIRE(daemon.Reply(lying));
  Pump(*client, daemon);
  const std::vector<std::string> lines = capture.Stop();
  CHECK(handler.accepted.empty());
  CHECK(client->stats().invalid_datagrams == 2);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "kairos: warning: daemon client: dropped a " +
                        std::to_string(oversized.size()) + "-byte datagram (limit " +
                        std::to_string(internal::kDaemonHeaderSize + internal::kDaemonMaxPayload) +
                        ")");
  CHECK(lines[1].rfind("kairos: warning: daemon client: ignored an invalid datagram: ", 0) == 0);
}

TEST_CASE("100k unsolicited datagrams print a handful of lines, all counted", "[abuse]") {
  const std::string name = UniqueEndpoint("abuse-flood");
  FakeEndpoint daemon(name);
  FakeEndpoint stranger(UniqueEndpoint("abuse-stranger"));
  CountingHandler handler;
  auto client = RealClient(name, &handler);
  const auto& self = client->bound_address();
  const std::string datagram = EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/evil.json");
  constexpr int kDatagrams = 100000;
  StderrCapture capture;
  int sent = 0;
  while (sent < kDatagrams) {
    // Fill the socket queue (sends fail with EAGAIN when it is full), then let the client
    // drain it. No sleeps, no timing.
    int batch = 0;
    while (sent < kDatagrams && stranger.SendTo(datagram, self.addr, self.length)) {
      ++sent;
      ++batch;
    }
    REQUIRE(batch > 0);  // the client drained the queue last time round
    Pump(*client, daemon);
  }
  Pump(*client, daemon);
  const std::vector<std::string> lines = capture.Stop();
  CHECK(client->stats().invalid_datagrams == static_cast<uint64_t>(kDatagrams));
  CHECK(handler.accepted.empty());
  // A burst of lines per minute for this call site; the test takes well under two minutes.
  CHECK(lines.size() >= 1);
  CHECK(lines.size() <= 2 * static_cast<size_t>(LogRateLimiter::kDefaultBurst));
  for (const std::string& line : lines) {
    CHECK(line.rfind("kairos: warning: daemon client: ignored a datagram from ", 0) == 0);
  }
}

}  // namespace
}  // namespace kairos
