// File: daemon_client_test.cc
// Layer: test (daemon). The in-process Dynolog client against a fake daemon socket: exact
// request bytes, trailing-NUL binding, absent daemon, late replies, every kind of bad
// datagram, busy and rejected configs, the poller thread, filesystem mode and fork.
// Threading: the poller-thread cases synchronize on a condition variable, never on sleeps.
#include "config/daemon_client.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <thread>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <regex>

#include "daemon_test_util.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using internal::DecodeDaemonDatagram;
using internal::DecodeDaemonRequest;
using internal::EncodeDaemonConfigReply;
using testing::FakeEndpoint;
using testing::TempDir;
using testing::UniqueEndpoint;

class RecordingHandler : public TraceRequestHandler {
 public:
  bool Busy() const override { return busy; }
  absl::Status OnTraceRequest(const Config& config, uint64_t, std::string* message) override {
    std::lock_guard<std::mutex> lock(mu);
    configs.push_back(config);
    cv.notify_all();
    if (refuse) return absl::FailedPreconditionError("profiler busy");
    *message = "trace goes to " + config.log_file;
    return absl::OkStatus();
  }
  bool WaitForConfigs(size_t n, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                       [&] { return configs.size() >= n; });
  }
  std::atomic<bool> busy{false};
  bool refuse = false;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Config> configs;
};

// Test preparer: takes the log file from the first "ACTIVITIES_LOG_FILE=" line; "garbage"
// is rejected. The real parser is exercised by daemon_config_test.
absl::StatusOr<Config> FakePrepare(std::string_view text, std::string* note) {
  if (text.find("garbage") != std::string_view::npos) {
    return absl::InvalidArgumentError("config line 1: garbage");
  }
  Config c;
  const size_t at = text.find("ACTIVITIES_LOG_FILE=");
  if (at != std::string_view::npos) {
    const size_t start = at + strlen("ACTIVITIES_LOG_FILE=");
    c.log_file = std::string(text.substr(start, text.find('\n', start) - start));
  }
  *note = "";
  return c;
}

std::unique_ptr<DaemonClient> MakeClient(const std::string& endpoint, TraceRequestHandler* h,
                                         int64_t job_id = 0, const std::string& dir = "") {
  DaemonClientOptions o;
  o.endpoint = endpoint;
  o.job_id = job_id;
  o.socket_dir = dir;
  auto client = DaemonClient::Create(o, h, FakePrepare);
  REQUIRE(client.ok());
  return std::move(*client);
}

TEST_CASE("client binds '\\0' + dynoconfigclient<uuid4> + '\\0'") {
  RecordingHandler h;
  auto client = MakeClient(UniqueEndpoint("bind"), &h);
  const auto& self = client->bound_address();
  REQUIRE(std::regex_match(client->client_name(),
                           std::regex("dynoconfigclient[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                      "[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  CHECK(self.length == 2 + 52 + 2);
  CHECK(self.addr.sun_path[0] == '\0');
  CHECK(self.addr.sun_path[53] == '\0');
  CHECK(std::string(self.addr.sun_path + 1, 52) == client->client_name());
}

TEST_CASE("no daemon: one refused non-blocking send per poll, nothing else") {
  RecordingHandler h;
  auto client = MakeClient(UniqueEndpoint("absent"), &h);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(client->PollOnce(100));
  const DaemonClientStats s = client->stats();
  CHECK(s.polls == 0);
  CHECK(s.send_failures == 3);
  CHECK(s.last_send_errno == ECONNREFUSED);
  CHECK(s.replies == 0);
}

TEST_CASE("poll sends type 2, the 64-bit job id and the pid ancestry; config reaches the handler") {
  const std::string name = UniqueEndpoint("poll");
  FakeEndpoint daemon(name);
  REQUIRE(daemon.bound());
  RecordingHandler h;
  auto client = MakeClient(name, &h, 5000000000LL);
  REQUIRE(client->PollOnce(0));
  const std::string bytes = daemon.Receive(2000);
  auto datagram = DecodeDaemonDatagram(bytes);
  REQUIRE(datagram.ok());
  auto request = DecodeDaemonRequest(datagram->payload);
  REQUIRE(request.ok());
  CHECK(request->type == 2);
  CHECK(request->job_id == 5000000000LL);
  CHECK(request->pids == DaemonClient::PidAncestry(getpid()));
  CHECK(request->pids[0] == getpid());
  // The reply goes to the exact address the client sent from, trailing NUL included.
  CHECK(daemon.last_sender_length() == client->bound_address().length);

  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("\n    ACTIVITIES_LOG_FILE=/tmp/x.json\n")));
  REQUIRE(client->PollOnce(0));  // drains the queued reply before sending
  REQUIRE(h.configs.size() == 1);
  CHECK(h.configs[0].log_file == "/tmp/x.json");
  const DaemonClientStats s = client->stats();
  CHECK(s.polls == 2);
  CHECK(s.configs_received == 1);
  CHECK(s.configs_accepted == 1);
  CHECK(s.configs_rejected == 0);
}

TEST_CASE("busy profiler polls with type 0") {
  const std::string name = UniqueEndpoint("busy");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  h.busy = true;
  auto client = MakeClient(name, &h);
  REQUIRE(client->PollOnce(0));
  auto request = DecodeDaemonRequest(DecodeDaemonDatagram(daemon.Receive(2000))->payload);
  REQUIRE(request.ok());
  CHECK(request->type == 0);
}

TEST_CASE("a late reply is taken by the next poll, not lost and not one poll behind") {
  const std::string name = UniqueEndpoint("late");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  auto client = MakeClient(name, &h);
  REQUIRE(client->PollOnce(20));  // the daemon does not answer within 20 ms
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  CHECK(client->stats().replies == 0);
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/late.json")));
  REQUIRE(client->PollOnce(0));
  REQUIRE(h.configs.size() == 1);
  CHECK(h.configs[0].log_file == "/tmp/late.json");
  // The answer to the second poll is an empty reply: consumed, no second config.
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("")));
  REQUIRE(client->PollOnce(0));
  CHECK(h.configs.size() == 1);
  CHECK(client->stats().replies == 2);
}

TEST_CASE("invalid datagrams are counted and dropped; a valid config still works after them") {
  const std::string name = UniqueEndpoint("invalid");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  auto client = MakeClient(name, &h);
  REQUIRE(client->PollOnce(0));
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  std::string lying = EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/a.json");
  lying[0] = 2;  // size field says 2, payload is longer
  std::string unknown = EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/b.json");
  memcpy(&unknown[8], "reqx", 4);
  const std::string oversized = EncodeDaemonConfigReply(std::string(70000, 'x'));
  REQUIRE(daemon.Reply(std::string(39, '\0')));  // truncated header
  REQUIRE(daemon.Reply(lying));
  REQUIRE(daemon.Reply(unknown));
  REQUIRE(daemon.Reply(oversized));
  REQUIRE(daemon.Reply(internal::EncodeDaemonContextReply(1)));
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/ok.json")));
  REQUIRE(client->PollOnce(0));
  const DaemonClientStats s = client->stats();
  CHECK(s.invalid_datagrams == 5);
  CHECK(s.replies == 1);
  REQUIRE(h.configs.size() == 1);
  CHECK(h.configs[0].log_file == "/tmp/ok.json");
}

TEST_CASE("datagrams from anyone but the daemon are ignored") {
  const std::string name = UniqueEndpoint("stranger");
  FakeEndpoint daemon(name);
  FakeEndpoint stranger(UniqueEndpoint("stranger-peer"));
  RecordingHandler h;
  auto client = MakeClient(name, &h);
  const auto& self = client->bound_address();
  REQUIRE(stranger.SendTo(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/evil.json"),
                          self.addr, self.length));
  REQUIRE(client->PollOnce(0));
  CHECK(h.configs.empty());
  CHECK(client->stats().invalid_datagrams == 1);
}

TEST_CASE("garbage config and a refusing handler are rejected with a count, not queued") {
  const std::string name = UniqueEndpoint("reject");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  auto client = MakeClient(name, &h);
  REQUIRE(client->PollOnce(0));
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("garbage = = =")));
  REQUIRE(client->PollOnce(0));
  CHECK(h.configs.empty());
  CHECK(client->stats().configs_rejected == 1);
  h.refuse = true;
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/r.json")));
  REQUIRE(client->PollOnce(0));
  CHECK(h.configs.size() == 1);
  CHECK(client->stats().configs_rejected == 2);
  CHECK(client->stats().configs_accepted == 0);
}

TEST_CASE("daemon that dies mid-request: the next poll is refused, nothing hangs") {
  const std::string name = UniqueEndpoint("dies");
  RecordingHandler h;
  auto daemon = std::make_unique<FakeEndpoint>(name);
  auto client = MakeClient(name, &h);
  REQUIRE(client->PollOnce(10));
  REQUIRE_FALSE(daemon->Receive(2000).empty());
  daemon.reset();  // dies without replying
  CHECK_FALSE(client->PollOnce(10));
  CHECK(client->stats().last_send_errno == ECONNREFUSED);
  CHECK(h.configs.empty());
}

TEST_CASE("poller thread: first poll at once, config handled on arrival, Stop joins") {
  const std::string name = UniqueEndpoint("thread");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  DaemonClientOptions o;
  o.endpoint = name;
  o.poll_ms = 20;
  auto client = DaemonClient::Create(o, &h, FakePrepare);
  REQUIRE(client.ok());
  REQUIRE((*client)->Start().ok());
  CHECK_FALSE((*client)->Start().ok());
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  REQUIRE_FALSE(daemon.Receive(2000).empty());  // second poll ~20 ms later
  REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/t.json")));
  REQUIRE(h.WaitForConfigs(1, 5000));
  (*client)->Stop();
  const auto polls = (*client)->stats().polls;
  CHECK(polls >= 2);
  CHECK((*client)->stats().configs_accepted == 1);
}

TEST_CASE("filesystem mode: sockets under KINETO_IPC_SOCKET_DIR, removed at exit") {
  // Room in sun_path (107 bytes) for "/" + the anchor's client name (52 bytes).
  const TempDir temp("kairos-ipc-", 54);
  const std::string& dir = temp.path();
  std::string client_path;
  {
    FakeEndpoint daemon("dynolog", dir);
    REQUIRE(daemon.bound());
    RecordingHandler h;
    auto client = MakeClient("dynolog", &h, 0, dir);
    client_path = client->bound_address().addr.sun_path;
    CHECK(client_path == dir + "/" + client->client_name());
    CHECK(access(client_path.c_str(), F_OK) == 0);
    REQUIRE(client->PollOnce(0));
    REQUIRE_FALSE(daemon.Receive(2000).empty());
    CHECK(std::string(daemon.last_sender().sun_path) == client_path);
    REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/fs.json")));
    REQUIRE(client->PollOnce(0));
    CHECK(h.configs.size() == 1);
  }
  CHECK(access(client_path.c_str(), F_OK) != 0);
  CHECK(rmdir(dir.c_str()) == 0);
}

TEST_CASE("filesystem mode: a socket dir too deep for the anchor's client name still works") {
  // 70 bytes of directory leave 37 for the name: too few for "dynoconfigclient" + a UUID (52),
  // enough for the daemon's "dynolog". CI's checkout path made exactly this difference.
  const TempDir temp("kairos-ipc-", 68);  // "<top>/" and a subdirectory in the 70 bytes below
  const std::string& top = temp.path();
  std::string dir = top + "/";
  dir.append(70 - dir.size(), 'd');
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  {
    FakeEndpoint daemon("dynolog", dir);
    REQUIRE(daemon.bound());
    RecordingHandler h;
    auto client = MakeClient("dynolog", &h, 0, dir);
    const std::string path = client->bound_address().addr.sun_path;
    CHECK(path == dir + "/" + client->client_name());
    CHECK(client->client_name().size() == 20);
    CHECK(client->client_name().rfind("dyno", 0) == 0);
    REQUIRE(client->PollOnce(0));
    REQUIRE_FALSE(daemon.Receive(2000).empty());
    CHECK(std::string(daemon.last_sender().sun_path) == path);
    REQUIRE(daemon.Reply(EncodeDaemonConfigReply("ACTIVITIES_LOG_FILE=/tmp/deep.json")));
    REQUIRE(client->PollOnce(0));
    CHECK(h.configs.size() == 1);
  }
  CHECK(rmdir(dir.c_str()) == 0);
  CHECK(rmdir(top.c_str()) == 0);
}

TEST_CASE("filesystem mode: a socket dir too deep for any name fails with the path") {
  DaemonClientOptions o;
  o.endpoint = "dynolog";
  o.socket_dir = "/" + std::string(100, 'x');
  RecordingHandler h;
  auto client = DaemonClient::Create(o, &h, FakePrepare);
  REQUIRE_FALSE(client.ok());
  CHECK(client.status().message().find("longer than 107 bytes") != std::string::npos);
}

TEST_CASE("nothing is sent until the readiness check says yes once; then every tick polls") {
  const std::string name = UniqueEndpoint("ready");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  std::atomic<int> asked{0};
  std::atomic<bool> ready{false};
  DaemonClientOptions o;
  o.endpoint = name;
  o.poll_ms = 10;
  o.ready = [&] {
    asked.fetch_add(1);
    return ready.load();
  };
  auto client = DaemonClient::Create(o, &h, FakePrepare);
  REQUIRE(client.ok());
  REQUIRE((*client)->Start().ok());
  while (asked.load() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(daemon.Receive(50).empty());  // five ticks asked, nothing sent
  CHECK((*client)->stats().polls == 0);
  ready.store(true);
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  const int asked_when_ready = asked.load();
  ready.store(false);  // asked no more: registration is not withdrawn
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  CHECK(asked.load() == asked_when_ready);
  (*client)->Stop();
}

TEST_CASE("forked child: the poller is not running there and Stop does not hang or abort") {
  const std::string name = UniqueEndpoint("fork");
  FakeEndpoint daemon(name);
  RecordingHandler h;
  DaemonClientOptions o;
  o.endpoint = name;
  o.poll_ms = 10;
  auto client = DaemonClient::Create(o, &h, FakePrepare);
  REQUIRE(client.ok());
  REQUIRE((*client)->Start().ok());
  const pid_t child = fork();
  if (child == 0) {
    (*client)->Stop();
    client->reset();  // destructor in the child: must not join or unlink anything
    _exit(0);
  }
  REQUIRE(child > 0);
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE_FALSE(daemon.Receive(2000).empty());  // the parent keeps polling
  (*client)->Stop();
}

TEST_CASE("pid ancestry: self first, then parents, never pid 1, at most 11") {
  const std::vector<int32_t> pids = DaemonClient::PidAncestry(getpid());
  REQUIRE(!pids.empty());
  CHECK(pids[0] == getpid());
  if (getppid() > 1) {
    REQUIRE(pids.size() >= 2);
    CHECK(pids[1] == getppid());
  }
  CHECK(pids.size() <= 11);
  for (size_t i = 1; i < pids.size(); ++i) CHECK(pids[i] > 1);
  CHECK(DaemonClient::PidAncestry(1) == std::vector<int32_t>{1});
}

}  // namespace
}  // namespace kairos

namespace kairos {
namespace {

TEST_CASE("telemetry offer: the first valid one is taken once; lines go back as one tlm datagram") {
  const std::string name = UniqueEndpoint("tlm");
  FakeEndpoint daemon(name);
  REQUIRE(daemon.bound());
  RecordingHandler h;
  DaemonClientOptions o;
  o.endpoint = name;
  std::vector<int64_t> offers;
  o.on_telemetry_offer = [&offers](int64_t secs) { offers.push_back(secs); };
  auto created = DaemonClient::Create(o, &h, FakePrepare);
  REQUIRE(created.ok());
  std::unique_ptr<DaemonClient> client = std::move(*created);
  REQUIRE(client->PollOnce(0));
  REQUIRE_FALSE(daemon.Receive(2000).empty());
  // A malformed offer, then two valid ones: only the first valid one reaches the callback.
  REQUIRE(daemon.Reply(internal::EncodeDaemonTelemetry("interval_secs=0")));
  REQUIRE(daemon.Reply(internal::EncodeDaemonTelemetry("interval_secs=10")));
  REQUIRE(daemon.Reply(internal::EncodeDaemonTelemetry("interval_secs=3")));
  REQUIRE(client->PollOnce(0));  // drains the three
  CHECK(offers == std::vector<int64_t>{10});
  DaemonClientStats s = client->stats();
  CHECK(s.telemetry_offers == 2);
  CHECK(s.invalid_datagrams == 1);
  REQUIRE_FALSE(daemon.Receive(2000).empty());  // the second poll
  const std::string lines = "{\"pid\":1}\n{\"pid\":1}\n";
  REQUIRE(client->SendTelemetry(lines));
  CHECK(daemon.Receive(2000) == internal::EncodeDaemonTelemetry(lines));
  // Over the payload limit: refused whole, counted.
  CHECK_FALSE(client->SendTelemetry(std::string(internal::kDaemonMaxPayload + 1, 'x')));
  s = client->stats();
  CHECK(s.telemetry_sent == 1);
  CHECK(s.telemetry_send_failures == 1);
}

TEST_CASE("telemetry offer parse: exactly interval_secs=N with N in [1, 86400]") {
  CHECK(*internal::ParseDaemonTelemetryOffer("interval_secs=1") == 1);
  CHECK(*internal::ParseDaemonTelemetryOffer("interval_secs=86400") == 86400);
  for (const char* bad : {"", "interval_secs=", "interval_secs=0", "interval_secs=86401",
                          "interval_secs=1x", "interval_secs=-1", "interval=10",
                          "interval_secs=999999"})
    CHECK_FALSE(internal::ParseDaemonTelemetryOffer(bad).ok());
  const std::string datagram = internal::EncodeDaemonTelemetry("abc");  // d's views point into it
  auto d = internal::DecodeDaemonDatagram(datagram);
  REQUIRE(d.ok());
  CHECK(d->kind == internal::DaemonMessageKind::kTelemetry);
  CHECK(d->payload == "abc");
}

}  // namespace
}  // namespace kairos
