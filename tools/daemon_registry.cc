// File: daemon_registry.cc
// Layer: tools (`kairos daemon`). Matching rules of dynolog-wire-protocol.md §5.
// Threading: relay event-loop thread only.
#include "daemon_registry.h"

#include <functional>
#include <utility>

namespace kairos::tools {

DaemonRegistry::DaemonRegistry(int64_t stale_ms, PidAlive pid_alive, std::string hostname,
                               size_t max_entries, int64_t max_age_ms)
    : stale_ms_(stale_ms),
      pid_alive_(std::move(pid_alive)),
      hostname_(std::move(hostname)),
      max_entries_(max_entries),
      max_age_ms_(max_age_ms) {}

DaemonRegistry::Entry* DaemonRegistry::Find(int64_t job_id, const std::vector<int32_t>& pids) {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return nullptr;
  auto entry = job->second.find(PidSet(pids.begin(), pids.end()));
  return entry == job->second.end() ? nullptr : &entry->second;
}

std::optional<std::string> DaemonRegistry::OnPoll(int64_t job_id,
                                                  const std::vector<int32_t>& pids,
                                                  int32_t type, int64_t now_ms) {
  if (pids.empty()) return std::nullopt;
  Entry* found = Find(job_id, pids);
  if (found == nullptr) {
    if (entries_ >= max_entries_) Sweep(now_ms);
    if (entries_ >= max_entries_) {
      ++refused_;
      return std::nullopt;
    }
    found = &jobs_[job_id][PidSet(pids.begin(), pids.end())];
    found->leaf_pid = pids[0];
    found->registered_ms = now_ms;
    ++entries_;
  }
  Entry& entry = *found;
  entry.last_poll_ms = now_ms;
  if ((type & 2) == 0 || !entry.pending.has_value()) return std::nullopt;
  return *entry.pending + "\n";
}

bool DaemonRegistry::Knows(int64_t job_id, int32_t leaf_pid) const {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return false;
  for (const auto& [pid_set, entry] : job->second)
    if (entry.leaf_pid == leaf_pid) return true;
  return false;
}

void DaemonRegistry::ConfigDelivered(int64_t job_id, const std::vector<int32_t>& pids) {
  if (Entry* entry = Find(job_id, pids)) entry->pending.reset();
}

std::string DaemonRegistry::PendingText(const std::string& config, const std::string& trace_id,
                                        int64_t now_unix_ms) {
  std::string text = "\n    " + config + "\n    REQUEST_TRACE_ID=" + trace_id;
  if (now_unix_ms > 0 && config.find("PROFILE_START_ITERATION") != std::string::npos)
    text += "\n    KAIROS_REQUEST_TIME_MS=" + std::to_string(now_unix_ms);
  return text;
}

std::string DaemonRegistry::TraceId(int32_t leaf_pid, int64_t now_unix_s) const {
  const std::string seed =
      hostname_ + ":" + std::to_string(leaf_pid) + ":" + std::to_string(now_unix_s);
  return std::to_string(std::hash<std::string>{}(seed));
}

OnDemandResult DaemonRegistry::Request(int64_t job_id, const std::vector<int32_t>& pids,
                                       const std::string& config, int64_t process_limit,
                                       int64_t now_ms, int64_t now_unix_s, int64_t now_unix_ms) {
  // Forget the dead first, so a finished rank never takes a trigger slot (anchor defect #3).
  Sweep(now_ms);
  OnDemandResult result;
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return result;
  const bool all = pids.empty() || (pids.size() == 1 && pids[0] == 0);
  const std::set<int32_t> wanted(pids.begin(), pids.end());
  for (auto& [pid_set, entry] : job->second) {
    bool match = all;
    for (auto it = pid_set.begin(); !match && it != pid_set.end(); ++it) {
      match = wanted.count(*it) != 0;
    }
    if (!match) continue;
    result.processes_matched.push_back(entry.leaf_pid);
    if (static_cast<int64_t>(result.profilers_triggered.size()) >= process_limit) continue;
    if (entry.pending.has_value()) {
      ++result.profilers_busy;
      continue;
    }
    entry.pending = PendingText(config, TraceId(entry.leaf_pid, now_unix_s), now_unix_ms);
    result.profilers_triggered.push_back(entry.leaf_pid);
  }
  return result;
}

size_t DaemonRegistry::Sweep(int64_t now_ms) {
  size_t removed = 0;
  for (auto job = jobs_.begin(); job != jobs_.end();) {
    for (auto it = job->second.begin(); it != job->second.end();) {
      const bool stale = now_ms - it->second.last_poll_ms > stale_ms_;
      const bool dead = pid_alive_ && !pid_alive_(it->second.leaf_pid);
      const bool old = now_ms - it->second.registered_ms > max_age_ms_ && !it->second.pending.has_value();
      if (stale || dead || old) {
        it = job->second.erase(it);
        ++removed;
        --entries_;
      } else {
        ++it;
      }
    }
    job = job->second.empty() ? jobs_.erase(job) : std::next(job);
  }
  return removed;
}

}  // namespace kairos::tools
