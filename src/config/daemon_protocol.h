// File: daemon_protocol.h
// Layer: kairos_config. Pure encode/decode of the Dynolog IPC fabric messages ("req",
// "ctxt") and of Unix-socket endpoint addresses, byte-exact to dynolog-wire-protocol.md
// §1-§3. Decoders validate everything (datagram length, size field, type, pid count) and
// never trust a size field; they do no I/O.
// Threading: stateless functions, safe from any thread.
#ifndef KAIROS_SRC_CONFIG_DAEMON_PROTOCOL_H_
#define KAIROS_SRC_CONFIG_DAEMON_PROTOCOL_H_

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos::internal {

// struct Metadata of the anchor: u64 payload size + char[32] zero-padded type.
inline constexpr size_t kDaemonHeaderSize = 40;
inline constexpr size_t kDaemonTypeSize = 32;
// "req" payload: int32 type, int32 n, int64 jobid, int32 pids[n].
inline constexpr size_t kDaemonRequestFixedSize = 16;
inline constexpr int kDaemonMaxPids = 11;  // own pid + at most 10 ancestors
// "ctxt" payload: int32 gpu, int32 pid, int64 jobid.
inline constexpr size_t kDaemonContextSize = 16;
// Our cap on any payload (a dyno config is ~250-400 bytes). Anything larger is rejected
// whole rather than truncated, so a peer cannot make us allocate on its say-so.
inline constexpr size_t kDaemonMaxPayload = 64 * 1024;
// Longest endpoint name: sun_path (108) minus the leading and trailing NUL.
inline constexpr size_t kDaemonMaxNameLength = 106;
inline constexpr char kDaemonDefaultEndpoint[] = "dynolog";
inline constexpr char kDaemonClientNamePrefix[] = "dynoconfigclient";

// "req" type bits (LibkinetoRequest::type).
inline constexpr int32_t kDaemonRequestActivities = 2;  // idle: a config can be accepted now
inline constexpr int32_t kDaemonRequestBusy = 0;        // tracing: keep configs pending

// kTelemetry ("tlm") is a kairos extension (docs/FLEET.md): daemon -> client it offers
// metrics collection ("interval_secs=N"); client -> daemon it carries one interval's telemetry
// lines (JSONL, docs/TELEMETRY.md). A client sends "tlm" only after a kairos daemon offered
// it, so a real Dynolog never receives one.
enum class DaemonMessageKind : uint8_t { kRequest = 0, kContext = 1, kTelemetry = 2 };

struct DaemonRequest {
  int32_t type = kDaemonRequestActivities;
  int64_t job_id = 0;
  std::vector<int32_t> pids;  // leaf first, then ancestors
};

struct DaemonContext {
  int32_t gpu = 0;
  int32_t pid = 0;
  int64_t job_id = 0;
};

// One validated datagram: its kind and a view of its payload (into the caller's bytes).
struct DaemonDatagram {
  DaemonMessageKind kind = DaemonMessageKind::kRequest;
  std::string_view payload;
};

// Whole datagrams (header + payload), ready for one send.
std::string EncodeDaemonRequest(const DaemonRequest& request);
std::string EncodeDaemonContext(const DaemonContext& context);
// Daemon -> client "req" reply: header {len(text), "req"} + text, no terminating NUL.
std::string EncodeDaemonConfigReply(std::string_view text);
// Daemon -> client "ctxt" reply: header {4, "ctxt"} + int32 count.
std::string EncodeDaemonContextReply(int32_t count);
// "tlm" in either direction: header {len(text), "tlm"} + text.
std::string EncodeDaemonTelemetry(std::string_view text);
// The daemon's offer text and its parse: "interval_secs=N", N in [1, 86400]; else an error.
std::string DaemonTelemetryOffer(int64_t interval_secs);
absl::StatusOr<int64_t> ParseDaemonTelemetryOffer(std::string_view text);

// Validates the header: length >= 40, size field == length - 40, size <= kDaemonMaxPayload,
// type exactly "req", "ctxt" or "tlm" (NUL-terminated inside the 32 bytes; bytes after the NUL are
// ignored as the anchor ignores them). Errors are InvalidArgument with a one-line reason.
absl::StatusOr<DaemonDatagram> DecodeDaemonDatagram(std::string_view bytes);
// Payload decoders (input = DaemonDatagram::payload). A request needs 1..11 pids and a
// payload of exactly 16 + 4n bytes.
absl::StatusOr<DaemonRequest> DecodeDaemonRequest(std::string_view payload);
absl::StatusOr<DaemonContext> DecodeDaemonContext(std::string_view payload);
absl::StatusOr<int32_t> DecodeDaemonContextReply(std::string_view payload);
// A whole "req" reply datagram -> config text ("" = nothing pending).
absl::StatusOr<std::string> DecodeDaemonConfigReply(std::string_view bytes);

// A Unix socket address and its exact length for bind/sendto.
struct DaemonAddress {
  sockaddr_un addr{};
  socklen_t length = 0;
};

// Abstract mode: sun_path = '\0' + name + '\0', length = 2 + len(name) + 2 (the trailing NUL
// is part of the name). Filesystem mode (socket_dir non-empty): sun_path = "<dir>/<name>"
// NUL-terminated, length = 2 + strlen + 1. Names must be 1..106 bytes without NUL or '/'.
absl::StatusOr<DaemonAddress> MakeDaemonAddress(std::string_view name,
                                                std::string_view socket_dir);
// Human-readable form: "@name@" for abstract names with the trailing NUL, "@name" without,
// the path in filesystem mode, "(unbound)" for an empty address.
std::string DescribeDaemonAddress(const sockaddr_un& addr, socklen_t length);

// Filesystem mode: makes the socket file just bound at `addr` writable by every user (the
// daemon may run as another user and must be able to reply), acting on the file only if it
// is still a socket of this user: what a path-based chmod after bind did not check, so in a
// shared directory another user could swap in a symlink and have kairos chmod its target.
// Returns false (nothing changed) otherwise; a no-op true for abstract addresses.
bool ShareBoundSocketFile(const sockaddr_un& addr);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_CONFIG_DAEMON_PROTOCOL_H_
