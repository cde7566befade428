// File: proc_parse.cc — see proc_parse.h.
#include "counters/proc_parse.h"
#include "util/trim.h"

#include <charconv>
#include <string>

namespace kairos::internal {
namespace {

// std-only helpers: this abseil build uses its own string_view, which std::string_view
// does not convert to.
std::vector<std::string_view> SplitSkipEmpty(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find(sep, i);
    if (j == std::string_view::npos) j = text.size();
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::string_view f : SplitSkipEmpty(line, ' ')) {
    // Tabs and stray whitespace never appear inside /proc numbers; trim them.
    while (!f.empty() && (f.front() == '\t' || f.front() == '\r')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == '\t' || f.back() == '\r')) f.remove_suffix(1);
    if (!f.empty()) out.push_back(f);
  }
  return out;
}

bool ParseU64(std::string_view s, uint64_t* v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

uint64_t U64(std::string_view s) {
  uint64_t v = 0;
  return ParseU64(s, &v) ? v : 0;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }


bool ParseCpuLine(const std::vector<std::string_view>& f, CpuTicks* t) {
  if (f.size() < 5) return false;
  uint64_t* slots[] = {&t->user, &t->nice,    &t->system, &t->idle,
                       &t->iowait, &t->irq, &t->softirq, &t->steal};
  for (size_t i = 0; i < 8 && i + 1 < f.size(); ++i) {
    if (!ParseU64(f[i + 1], slots[i])) return false;
  }
  return true;
}

bool IsVirtualDisk(std::string_view name) {
  for (std::string_view p : {"loop", "ram", "zram", "dm-", "md", "sr"}) {
    if (StartsWith(name, p)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat out;
  bool saw_all = false;
  for (std::string_view line : SplitSkipEmpty(text, '\n')) {
    auto f = Fields(line);
    if (f.empty()) continue;
    if (f[0] == "cpu") {
      if (!ParseCpuLine(f, &out.all)) return absl::InvalidArgumentError("/proc/stat: bad cpu line");
      saw_all = true;
    } else if (StartsWith(f[0], "cpu")) {
      CpuTicks t;
      if (!ParseCpuLine(f, &t)) {
        return absl::InvalidArgumentError("/proc/stat: bad " + std::string(f[0]) + " line");
      }
      out.cores.push_back(t);
    } else if (f[0] == "ctxt" && f.size() >= 2) {
      out.context_switches = U64(f[1]);
    }
  }
  if (!saw_all) return absl::InvalidArgumentError("/proc/stat: no aggregate cpu line");
  return out;
}

absl::StatusOr<MemInfo> ParseMemInfo(std::string_view text) {
  MemInfo out;
  bool total = false, avail = false;
  for (std::string_view line : SplitSkipEmpty(text, '\n')) {
    auto f = Fields(line);
    if (f.size() < 2) continue;
    // Values are in kB (KiB) whatever the unit column says.
    if (f[0] == "MemTotal:") total = ParseU64(f[1], &out.total_bytes);
    if (f[0] == "MemAvailable:") avail = ParseU64(f[1], &out.available_bytes);
  }
  if (!total || !avail) return absl::InvalidArgumentError("/proc/meminfo: MemTotal or MemAvailable missing");
  out.total_bytes *= 1024;
  out.available_bytes *= 1024;
  return out;
}

absl::StatusOr<ProcessStat> ParseProcessStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return absl::InvalidArgumentError("/proc/self/stat: no ')'");
  // After ')' the fields are numbered from 3 (state); utime is field 14.
  auto f = Fields(text.substr(close + 1));
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kThreads = 20 - 3, kRss = 24 - 3;
  if (f.size() <= kRss) return absl::InvalidArgumentError("/proc/self/stat: too few fields");
  ProcessStat out;
  if (!ParseU64(f[kUtime], &out.utime_ticks) ||
      !ParseU64(f[kStime], &out.stime_ticks) ||
      !ParseU64(f[kThreads], &out.num_threads) ||
      !ParseU64(f[kRss], &out.rss_pages)) {
    return absl::InvalidArgumentError("/proc/self/stat: non-numeric field");
  }
  return out;
}

absl::StatusOr<IoTotals> ParseDiskStats(std::string_view text) {
  IoTotals out;
  std::vector<std::string> disks;
  for (std::string_view line : SplitSkipEmpty(text, '\n')) {
    auto f = Fields(line);
    if (f.size() < 10) continue;
    std::string_view name = f[2];
    if (IsVirtualDisk(name)) continue;
    bool partition = false;
    for (const auto& d : disks) partition |= StartsWith(name, d);
    if (partition) continue;
    disks.emplace_back(name);
    // Fields 3 and 7 (0-based 5 and 9) are sectors read/written; a sector is 512 bytes here
    // regardless of the device's physical sector size.
    out.read_bytes += U64(f[5]) * 512;
    out.write_bytes += U64(f[9]) * 512;
  }
  return out;
}

absl::StatusOr<IoTotals> ParseNetDev(std::string_view text) {
  IoTotals out;
  for (std::string_view line : SplitSkipEmpty(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the two header lines
    std::string_view name = TrimBlanks(line.substr(0, colon));
    if (name == "lo") continue;
    auto f = Fields(line.substr(colon + 1));
    if (f.size() < 9) return absl::InvalidArgumentError("/proc/net/dev: short line for " + std::string(name));
    out.read_bytes += U64(f[0]);
    out.write_bytes += U64(f[8]);
  }
  return out;
}

double BusyPercent(const CpuTicks& a, const CpuTicks& b) {
  const uint64_t total = b.Total() - a.Total();
  if (b.Total() <= a.Total() || b.Busy() < a.Busy()) return 0.0;
  return 100.0 * static_cast<double>(b.Busy() - a.Busy()) / static_cast<double>(total);
}

double IowaitPercent(const CpuTicks& a, const CpuTicks& b) {
  const uint64_t total = b.Total() - a.Total();
  if (b.Total() <= a.Total() || b.iowait < a.iowait) return 0.0;
  return 100.0 * static_cast<double>(b.iowait - a.iowait) / static_cast<double>(total);
}

double RatePerSecond(uint64_t a, uint64_t b, int64_t elapsed_ns) {
  if (b < a || elapsed_ns <= 0) return 0.0;
  return static_cast<double>(b - a) * 1e9 / static_cast<double>(elapsed_ns);
}

}  // namespace kairos::internal
