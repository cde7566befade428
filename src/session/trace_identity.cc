// File: trace_identity.cc — see trace_identity.h.
// Layer: kairos_session. Threading: see header.
#include "session/trace_identity.h"

#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>

#include "util/clock.h"
#include "activity/nccl_collectives.h"
#include "config/env.h"
#include "session/root.h"

namespace kairos {

int64_t FloorBaseTime(int64_t unix_ns) {
  if (unix_ns <= 0) return 0;
  return unix_ns - unix_ns % kBaseTimePeriodNs;
}

int64_t TraceBaseTimeNs(int64_t process_base_ns, int64_t earliest_event_ns) {
  if (earliest_event_ns > 0 && earliest_event_ns < process_base_ns) return earliest_event_ns;
  return process_base_ns;
}

int64_t EarliestTimestampNs(const TraceData& data) {
  int64_t earliest = 0;
  auto take = [&](int64_t ts) {
    if (ts > 0 && (earliest == 0 || ts < earliest)) earliest = ts;
  };
  for (const auto& v : data.events_by_track)
    if (!v.empty()) take(v.front().start_ns);  // each track is sorted by start
  for (const auto& s : data.counter_samples) take(s.ts_ns);
  return earliest;
}

std::string ReadProcessName() {
  const int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string();
  char buf[64];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return std::string();
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

std::string ReadHostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return std::string();
  return std::string(buf);
}

std::string BackendFromLoadedObjects(const std::vector<std::string>& names) {
  for (const std::string& path : names) {
    const size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.rfind("libnccl.so", 0) == 0 || base.rfind("librccl.so", 0) == 0) return "nccl";
  }
  return std::string();
}

namespace {
std::vector<std::string> LoadedObjectNames() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}
}  // namespace

DistributedInfo ResolveDistributed(int64_t env_rank, int64_t env_world_size, int64_t env_local_rank,
                                   int32_t comm_rank, int32_t comm_size, std::string backend) {
  DistributedInfo d;
  const bool comm = comm_size > 0 && comm_rank >= 0 && comm_rank < comm_size;
  d.backend = comm ? "nccl" : std::move(backend);
  d.rank = env_rank >= 0 ? env_rank : comm ? comm_rank : 0;
  d.world_size = env_world_size > 0 ? env_world_size : comm ? comm_size : 1;
  d.local_rank = env_local_rank >= 0 ? env_local_rank : 0;
  return d;
}

DistributedInfo DistributedFromEnv(const internal::NcclTallies* nccl) {
  const EnvSettings& env = ProcessEnv();
  int32_t comm_rank = -1, comm_size = 0;
  if (nccl != nullptr) internal::NcclLargestComm(*nccl, &comm_rank, &comm_size);
  return ResolveDistributed(env.rank, env.world_size, env.local_rank, comm_rank, comm_size,
                            BackendFromLoadedObjects(LoadedObjectNames()));
}

}  // namespace kairos
