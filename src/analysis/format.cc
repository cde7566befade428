// File: format.cc — see format.h.
#include "analysis/format.h"

#include <cstdio>

namespace kairos {

std::string FormatDuration(int64_t ns) {
  char b[32];
  if (ns >= 1000000000) std::snprintf(b, sizeof b, "%.2f s", static_cast<double>(ns) / 1e9);
  else if (ns >= 1000000) std::snprintf(b, sizeof b, "%.2f ms", static_cast<double>(ns) / 1e6);
  else if (ns >= 1000) std::snprintf(b, sizeof b, "%.1f us", static_cast<double>(ns) / 1e3);
  else std::snprintf(b, sizeof b, "%lld ns", static_cast<long long>(ns));
  return b;
}

std::string FormatNumber(double v) {
  char b[48];
  if (v == static_cast<double>(static_cast<int64_t>(v))) {
    std::snprintf(b, sizeof b, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(b, sizeof b, "%.3g", v);
  }
  return b;
}

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string FormatBytes(uint64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes) / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) v /= 1024.0, ++u;
    if (v == static_cast<double>(static_cast<uint64_t>(v))) {
      std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(v), units[u]);
    } else {
      std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
    }
  }
  return buf;
}

}  // namespace kairos
