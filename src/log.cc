// File: log.cc — see log.h.
#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

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
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void Log(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  char buf[1024];
  int n = snprintf(buf, sizeof(buf), "kairos: %s: ", LevelName(level));
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof(buf) - 2) len = sizeof(buf) - 2;
  // Keep it one line even if a caller passed text with newlines in it.
  for (size_t i = static_cast<size_t>(n); i < len; ++i)
    if (buf[i] == '\n' || buf[i] == '\r') buf[i] = ' ';
  buf[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
}

}  // namespace kairos
