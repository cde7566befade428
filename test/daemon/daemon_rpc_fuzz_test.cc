// File: daemon_rpc_fuzz_test.cc
// Layer: test (daemon). Replays test/daemon/rpc_corpus through the daemon RPC fuzz entry
// point, and test/daemon/metrics_corpus through the metrics agent's, in every build (the sanitizer builds check it too), plus edge inputs; tools/fuzz.sh
// runs the same entry under libFuzzer.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <string>

#include "fuzz/corpus_replay.h"

extern "C" int KairosFuzzDaemonRpc(const uint8_t* data, size_t size);
extern "C" int KairosFuzzMetricsAgent(const uint8_t* data, size_t size);

namespace {

int Run(const std::string& s) { return kairos::testing::RunFuzzEntry(KairosFuzzDaemonRpc, s); }

TEST_CASE("daemon RPC corpus replays through the fuzz entry point", "[fuzz]") {
  CHECK(kairos::testing::ReplayCorpus(KairosFuzzDaemonRpc, KAIROS_DAEMON_RPC_CORPUS_DIR) >= 6);
}

TEST_CASE("daemon RPC edge inputs", "[fuzz]") {
  CHECK(Run("") == 0);
  CHECK(Run(std::string(1, '\0')) == 0);
  CHECK(Run("{\"fn\":\"\\u001b[31mgetStatus\"}") == 0);            // escape in a name
  CHECK(Run(std::string(40, '[') + std::string(40, ']')) == 0);   // deeper than allowed
  CHECK(Run("{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"" + std::string(200000, 'a') +
            "\",\"pids\":[0]}") == 0);                            // a 200 KB config
  CHECK(Run("{\"fn\":\"setKinetOnDemandRequest\",\"config\":\"x\",\"pids\":[" +
            std::string(100000, '1') + "]}") == 0);               // a huge pid number
  CHECK(Run("{\"fn\":\"getStatus\",\"fn\":\"getVersion\"}") == 0); // repeated key
}

}  // namespace

namespace {

int Agent(const std::string& s) { return kairos::testing::RunFuzzEntry(KairosFuzzMetricsAgent, s); }

TEST_CASE("metrics agent corpus replays through the fuzz entry point", "[fuzz]") {
  CHECK(kairos::testing::ReplayCorpus(KairosFuzzMetricsAgent, KAIROS_METRICS_CORPUS_DIR) >= 8);
}

TEST_CASE("metrics agent edge inputs", "[fuzz]") {
  CHECK(Agent("") == 0);
  CHECK(Agent(std::string(1, '\0')) == 0);
  CHECK(Agent(std::string(70, '\n')) == 0);
  CHECK(Agent(std::string(9000, 'G')) == 0);                       // past the head limit
  CHECK(Agent("{\"pid\":1,\"device\":0,\"ts_ns\":-9223372036854775808,\"interval_ns\":1}") == 0);
  CHECK(Agent("\xff\xfe{\"pid\":7,\"device\":4095,\"ts_ns\":1,\"interval_ns\":1,"
              "\"gpu_uuid\":\"\\u0000\\\"\\n\"}") == 0);          // hostile host and uuid
}

}  // namespace
