// File: trace_hosts.h
// Layer: tools (`kairos trace --hosts / --hostfile`). Job-wide trace collection across hosts:
// the host list (flag or file) and one RPC per host's daemon, all in parallel, with one
// deadline for the whole set: a host that does not answer in time (down, firewalled, a name
// that does not resolve) is reported as unreachable and the others' results stand.
// Threading: CallHosts starts up to kMaxWorkers detached threads that take hosts one by one;
// each writes only its host's slot of a shared, reference-counted result table (under its
// mutex), so a thread stuck past the deadline (a slow DNS lookup cannot be interrupted) writes
// into memory the caller no longer reads, and the CLI exits without waiting for it.
#ifndef KAIROS_TOOLS_TRACE_HOSTS_H_
#define KAIROS_TOOLS_TRACE_HOSTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos::tools {

inline constexpr size_t kMaxHosts = 4096;
inline constexpr size_t kMaxWorkers = 256;  // hosts asked at the same time

struct HostPort {
  std::string host;
  int port = 0;
  std::string Label() const;  // "host:port" ("[v6]:port" for IPv6 literals)
};

// Hosts separated by commas, blanks or newlines; '#' starts a comment to the end of the line
// (host files). Each is HOST, HOST:PORT, [V6] or [V6]:PORT; without a port, `default_port`.
// Duplicates are kept once. Errors name the bad entry; more than kMaxHosts is an error.
absl::StatusOr<std::vector<HostPort>> ParseHostList(std::string_view text, int default_port);

struct HostReply {
  HostPort target;
  bool done = false;          // answered (ok or error) before the deadline
  absl::Status status;        // !ok: unreachable, refused, bad reply
  std::string reply;          // the daemon's JSON reply when ok
};

// Sends `request` to every host's daemon RPC at once (kMaxWorkers at a time); returns when all
// have answered or `timeout_ms` (+ 250 ms) has passed (then the rest are !done, with why).
// Results in the order of `hosts`.
std::vector<HostReply> CallHosts(const std::vector<HostPort>& hosts, const std::string& request,
                                 int timeout_ms);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_TRACE_HOSTS_H_
