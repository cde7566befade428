// File: daemon_rpc.h
// Layer: tools (`kairos daemon`, `kairos trace`). The Dynolog TCP JSON RPC
// (dynolog-wire-protocol.md §6): the request text `dyno gputrace` sends, the replies the
// daemon gives (JSON read and written with kairos_json), and a blocking-with-deadline client
// for one request.
// Threading: stateless functions, any thread.
#ifndef KAIROS_TOOLS_DAEMON_RPC_H_
#define KAIROS_TOOLS_DAEMON_RPC_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "json/json_escape.h"
#include "json/json_reader.h"
#include "json/json_writer.h"
#include "daemon_registry.h"

namespace kairos::tools {

inline constexpr int kDefaultRpcPort = 1778;
// Most JSON containers one RPC message may nest (hostile input cannot recurse deeply).
inline constexpr int kMaxRpcJsonDepth = 32;
// Our cap on one RPC message; a dyno request is well under 2 KiB.
inline constexpr int32_t kMaxRpcMessage = 1 << 20;

// The `dyno gputrace` options (§6.5) and the config text it builds (§6.4, no trailing newline).
struct GputraceOptions {
  std::string log_file;
  uint64_t duration_ms = 500;
  int64_t iterations = -1;
  uint64_t profile_start_time = 0;
  uint64_t start_iteration_roundup = 1;
  uint32_t process_limit = 3;
  int64_t job_id = 0;
  std::string pids = "0";  // pasted into the JSON brackets as given
  bool record_shapes = false, profile_memory = false, with_stacks = false, with_flops = false,
       with_modules = false;
};
std::string BuildGputraceConfig(const GputraceOptions& options);
// An RPC message: THE JSON reader in strict mode (valid UTF-8, no repeated keys, at most
// kMaxRpcJsonDepth nested containers). Errors name the byte offset.
absl::StatusOr<JsonValue> ParseRpcJson(std::string_view text);

// §6.3 request text. Identical to dyno's for ordinary paths; unlike dyno, `"` and `\` in the
// config are escaped so the JSON stays valid.
std::string BuildGputraceRequest(const GputraceOptions& options, const std::string& config);

// {"activityProfilersBusy":N,"activityProfilersTriggered":[..],"eventProfilersBusy":0,
//  "eventProfilersTriggered":[],"processesMatched":[..]} (compact, keys sorted).
std::string EncodeOnDemandReply(const OnDemandResult& result);

// Serves one RPC request text against `registry`. nullopt = close with no reply (Dynolog's
// behaviour for unparsable JSON, a non-object, a missing or unknown "fn").
// `now_unix_ms` (> 0) stamps iteration requests for their processes (DaemonRegistry::PendingText).
std::optional<std::string> HandleRpcRequest(std::string_view request, DaemonRegistry& registry,
                                            int64_t now_ms, int64_t now_unix_s,
                                            std::string* log_line, int64_t now_unix_ms = 0);

// Connects to host:port, sends one framed request (native int32 length + text) and reads the
// framed reply, all within `timeout_ms`. Errors are one-line messages.
absl::StatusOr<std::string> CallRpc(const std::string& host, int port, std::string_view request,
                                    int timeout_ms);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_RPC_H_
