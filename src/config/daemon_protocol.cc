// File: daemon_protocol.cc
// Layer: kairos_config. Byte layouts of dynolog-wire-protocol.md §2-§3 (native LP64
// little-endian; we write/read fields with memcpy so alignment of the caller's buffer never
// matters).
// Threading: stateless.
#include "config/daemon_protocol.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kairos::internal {
namespace {

static_assert(sizeof(size_t) == 8, "the Dynolog header carries a native 64-bit size_t");
static_assert(sizeof(sockaddr_un::sun_path) == 108, "unexpected sockaddr_un layout");

template <typename T>
void Put(std::string& out, size_t offset, T value) {
  memcpy(out.data() + offset, &value, sizeof(T));
}
template <typename T>
T Get(std::string_view in, size_t offset) {
  T value;
  memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

std::string Header(uint64_t size, std::string_view type) {
  std::string out(kDaemonHeaderSize, '\0');
  Put<uint64_t>(out, 0, size);
  memcpy(out.data() + 8, type.data(), type.size());
  return out;
}

}  // namespace

std::string EncodeDaemonRequest(const DaemonRequest& request) {
  const size_t n = request.pids.size();
  std::string out = Header(kDaemonRequestFixedSize + 4 * n, "req");
  out.resize(kDaemonHeaderSize + kDaemonRequestFixedSize + 4 * n, '\0');
  Put<int32_t>(out, 40, request.type);
  Put<int32_t>(out, 44, static_cast<int32_t>(n));
  Put<int64_t>(out, 48, request.job_id);
  for (size_t i = 0; i < n; ++i) Put<int32_t>(out, 56 + 4 * i, request.pids[i]);
  return out;
}

std::string EncodeDaemonContext(const DaemonContext& context) {
  std::string out = Header(kDaemonContextSize, "ctxt");
  out.resize(kDaemonHeaderSize + kDaemonContextSize, '\0');
  Put<int32_t>(out, 40, context.gpu);
  Put<int32_t>(out, 44, context.pid);
  Put<int64_t>(out, 48, context.job_id);
  return out;
}

std::string EncodeDaemonConfigReply(std::string_view text) {
  std::string out = Header(text.size(), "req");
  out.append(text.data(), text.size());
  return out;
}

std::string EncodeDaemonContextReply(int32_t count) {
  std::string out = Header(4, "ctxt");
  out.resize(kDaemonHeaderSize + 4, '\0');
  Put<int32_t>(out, 40, count);
  return out;
}

std::string EncodeDaemonTelemetry(std::string_view text) {
  std::string out = Header(text.size(), "tlm");
  out.append(text.data(), text.size());
  return out;
}

std::string DaemonTelemetryOffer(int64_t interval_secs) {
  return absl::StrCat("interval_secs=", interval_secs);
}

absl::StatusOr<int64_t> ParseDaemonTelemetryOffer(std::string_view text) {
  constexpr std::string_view kKey = "interval_secs=";
  if (text.substr(0, kKey.size()) != kKey || text.size() == kKey.size() ||
      text.size() > kKey.size() + 5) {
    return absl::InvalidArgumentError("telemetry offer is not \"interval_secs=N\"");
  }
  int64_t n = 0;
  for (char c : text.substr(kKey.size())) {
    if (c < '0' || c > '9') return absl::InvalidArgumentError("telemetry offer interval is not a number");
    n = n * 10 + (c - '0');
  }
  if (n < 1 || n > 86400) return absl::InvalidArgumentError("telemetry offer interval out of [1, 86400]");
  return n;
}

absl::StatusOr<DaemonDatagram> DecodeDaemonDatagram(std::string_view bytes) {
  if (bytes.size() < kDaemonHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat("daemon datagram of ", bytes.size(),
                                                   " bytes is shorter than the 40-byte header"));
  }
  const uint64_t size = Get<uint64_t>(bytes, 0);
  const size_t actual = bytes.size() - kDaemonHeaderSize;
  if (size != actual) {
    return absl::InvalidArgumentError(absl::StrCat("daemon datagram size field says ", size,
                                                   " payload bytes but ", actual, " arrived"));
  }
  if (actual > kDaemonMaxPayload) {
    return absl::InvalidArgumentError(absl::StrCat("daemon datagram payload of ", actual,
                                                   " bytes exceeds the ", kDaemonMaxPayload,
                                                   "-byte limit"));
  }
  const std::string_view type_field = bytes.substr(8, kDaemonTypeSize);
  const size_t nul = type_field.find('\0');
  if (nul == std::string_view::npos) {
    return absl::InvalidArgumentError("daemon datagram type is not NUL-terminated");
  }
  const std::string_view type = type_field.substr(0, nul);
  DaemonDatagram datagram;
  if (type == "req") {
    datagram.kind = DaemonMessageKind::kRequest;
  } else if (type == "ctxt") {
    datagram.kind = DaemonMessageKind::kContext;
  } else if (type == "tlm") {
    datagram.kind = DaemonMessageKind::kTelemetry;
  } else {
    std::string printable;
    for (char c : type.substr(0, 16)) printable += (c >= 0x20 && c < 0x7f) ? c : '?';
    return absl::InvalidArgumentError(
        absl::StrCat("daemon datagram has unknown type \"", printable, "\""));
  }
  datagram.payload = bytes.substr(kDaemonHeaderSize);
  return datagram;
}

absl::StatusOr<DaemonRequest> DecodeDaemonRequest(std::string_view payload) {
  if (payload.size() < kDaemonRequestFixedSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"req\" payload of ", payload.size(), " bytes is shorter than 16"));
  }
  const int32_t n = Get<int32_t>(payload, 4);
  if (n < 1 || n > kDaemonMaxPids) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"req\" pid count ", n, " is outside [1, ", kDaemonMaxPids, "]"));
  }
  const size_t expected = kDaemonRequestFixedSize + 4 * static_cast<size_t>(n);
  if (payload.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("\"req\" payload of ", payload.size(),
                                                   " bytes does not match ", n, " pids (",
                                                   expected, " bytes)"));
  }
  DaemonRequest request;
  request.type = Get<int32_t>(payload, 0);
  request.job_id = Get<int64_t>(payload, 8);
  request.pids.resize(n);
  for (int32_t i = 0; i < n; ++i) request.pids[i] = Get<int32_t>(payload, 16 + 4 * i);
  return request;
}

absl::StatusOr<DaemonContext> DecodeDaemonContext(std::string_view payload) {
  if (payload.size() != kDaemonContextSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"ctxt\" payload of ", payload.size(), " bytes; expected 16"));
  }
  DaemonContext context;
  context.gpu = Get<int32_t>(payload, 0);
  context.pid = Get<int32_t>(payload, 4);
  context.job_id = Get<int64_t>(payload, 8);
  return context;
}

absl::StatusOr<int32_t> DecodeDaemonContextReply(std::string_view payload) {
  if (payload.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"ctxt\" reply payload of ", payload.size(), " bytes; expected 4"));
  }
  return Get<int32_t>(payload, 0);
}

absl::StatusOr<std::string> DecodeDaemonConfigReply(std::string_view bytes) {
  absl::StatusOr<DaemonDatagram> datagram = DecodeDaemonDatagram(bytes);
  if (!datagram.ok()) return datagram.status();
  if (datagram->kind != DaemonMessageKind::kRequest) {
    return absl::InvalidArgumentError("expected a \"req\" reply, got \"ctxt\"");
  }
  return std::string(datagram->payload);
}

bool ShareBoundSocketFile(const sockaddr_un& addr) {
  if (addr.sun_path[0] == '\0') return true;  // abstract: no file
  // O_PATH|O_NOFOLLOW opens the entry itself (a symlink is not followed); the checks and the
  // chmod then apply to that inode, whatever the name points to by then.
  const int fd = open(addr.sun_path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid();
  if (ok) {
    char proc[64];
    std::snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    ok = chmod(proc, 0666) == 0;
  }
  close(fd);
  return ok;
}

absl::StatusOr<DaemonAddress> MakeDaemonAddress(std::string_view name,
                                                std::string_view socket_dir) {
  if (name.empty() || name.size() > kDaemonMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("daemon endpoint name of ", name.size(),
                                                   " bytes; expected 1..106"));
  }
  if (name.find('\0') != std::string_view::npos || name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError("daemon endpoint name contains NUL or '/'");
  }
  DaemonAddress address;
  address.addr.sun_family = AF_UNIX;
  char* path = address.addr.sun_path;
  if (socket_dir.empty()) {
    path[0] = '\0';
    memcpy(path + 1, name.data(), name.size());
    path[1 + name.size()] = '\0';
    address.length = static_cast<socklen_t>(sizeof(sa_family_t) + name.size() + 2);
    return address;
  }
  std::string full(socket_dir);
  if (full.back() != '/') full += '/';
  full.append(name.data(), name.size());
  if (full.size() + 1 > sizeof(address.addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path \"", full, "\" is longer than 107 bytes"));
  }
  memcpy(path, full.data(), full.size());
  path[full.size()] = '\0';
  address.length = static_cast<socklen_t>(sizeof(sa_family_t) + full.size() + 1);
  return address;
}

std::string DescribeDaemonAddress(const sockaddr_un& addr, socklen_t length) {
  if (length <= static_cast<socklen_t>(sizeof(sa_family_t))) return "(unbound)";
  const size_t n = std::min<size_t>(length - sizeof(sa_family_t), sizeof(addr.sun_path));
  if (addr.sun_path[0] != '\0') return std::string(addr.sun_path, strnlen(addr.sun_path, n));
  std::string out = "@";
  for (size_t i = 1; i < n; ++i) {
    const char c = addr.sun_path[i];
    out += (c == '\0') ? '@' : ((c >= 0x20 && c < 0x7f) ? c : '?');
  }
  return out;
}

}  // namespace kairos::internal
