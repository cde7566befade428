// File: log.cc — see log.h.
#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace kairos {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarning)};
const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kVerbose: return "verbose";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    default: return "";
  }
}

// Formats one line ("kairos: <level>: <message><suffix>\n", at most 1 KiB) and writes it
// with a single write(2).
void VLog(LogLevel level, const char* suffix, const char* fmt, va_list ap) {
  char buf[1024];
  int n = snprintf(buf, sizeof(buf), "kairos: %s: ", LevelName(level));
  if (n < 0) return;
  // Room for the suffix is kept, so a long message cannot cut the suppressed count off.
  const size_t reserve = suffix != nullptr ? strlen(suffix) : 0;
  int m = vsnprintf(buf + n, sizeof(buf) - n - 1 - reserve, fmt, ap);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof(buf) - 2 - reserve) len = sizeof(buf) - 2 - reserve;
  if (suffix != nullptr) {
    for (const char* p = suffix; *p != '\0' && len < sizeof(buf) - 2; ++p) buf[len++] = *p;
  }
  // Keep it one line even if a caller passed text with newlines in it.
  for (size_t i = static_cast<size_t>(n); i < len; ++i)
    if (buf[i] == '\n' || buf[i] == '\r') buf[i] = ' ';
  buf[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
}

bool Enabled(LogLevel level) {
  return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void Log(LogLevel level, const char* fmt, ...) {
  if (!Enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  VLog(level, nullptr, fmt, ap);
  va_end(ap);
}

bool LogRateLimiter::Admit(int64_t now_ns, uint64_t* suppressed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || now_ns - window_start_ns_ >= interval_ns_ || now_ns < window_start_ns_) {
    started_ = true;
    window_start_ns_ = now_ns;
    used_ = 0;
  }
  if (used_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++used_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

uint64_t LogRateLimiter::pending_suppressed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return suppressed_;
}

void LogLimited(LogRateLimiter& limiter, LogLevel level, const char* fmt, ...) {
  if (!Enabled(level)) return;
  uint64_t suppressed = 0;
  if (!limiter.Admit(MonotonicNs(), &suppressed)) return;
  char suffix[64] = {};
  if (suppressed > 0) {
    snprintf(suffix, sizeof(suffix), " (suppressed %llu similar messages)",
             static_cast<unsigned long long>(suppressed));
  }
  va_list ap;
  va_start(ap, fmt);
  VLog(level, suppressed > 0 ? suffix : nullptr, fmt, ap);
  va_end(ap);
}

}  // namespace kairos
