// File: daemon_rpc_fuzz.cc
// Layer: test (daemon). libFuzzer-style entry point for the `kairos daemon` RPC handler: any
// bytes a TCP peer sends as one request go through HandleRpcRequest against a registry with
// two registered processes (so trigger requests match and queue configs). Built into the
// corpus replay test (no libFuzzer needed) and, with clang, into fuzz_daemon_rpc. Invariants
// (violations abort): a reply is valid strict JSON; a request that does not parse as strict
// JSON gets no reply (dyno closes such connections); the registry stays within its bound.
// Threading: single-threaded.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon_registry.h"
#include "daemon_rpc.h"

extern "C" int KairosFuzzDaemonRpc(const uint8_t* data, size_t size) {
  using namespace kairos::tools;
  const std::string_view request(reinterpret_cast<const char*>(data), size);
  DaemonRegistry registry(60000, [](int32_t) { return true; }, "fuzzhost");
  (void)registry.OnPoll(7, {1234, 1}, 1, 1000);
  (void)registry.OnPoll(0, {4321, 1}, 1, 1000);
  std::string log;
  const std::optional<std::string> reply =
      HandleRpcRequest(request, registry, 2000, 1700000000, &log, 1700000000000);
  if (reply.has_value() && !ParseRpcJson(*reply).ok()) abort();
  if (!ParseRpcJson(request).ok() && reply.has_value()) abort();
  // The same request again, as a peer retrying: still no crash, still valid.
  const std::optional<std::string> again =
      HandleRpcRequest(request, registry, 3000, 1700000001, &log, 1700000001000);
  if (again.has_value() && !ParseRpcJson(*again).ok()) abort();
  return 0;
}
