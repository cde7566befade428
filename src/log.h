// File: log.h
// Layer: kairos_base. One-line diagnostics on stderr, prefixed "kairos: ".
// Threading: thread-safe; each message is written with a single write(2) so lines from
// several threads never interleave. Never used on the recording hot path.
#ifndef KAIROS_SRC_LOG_H_
#define KAIROS_SRC_LOG_H_

#include <atomic>

namespace kairos {

enum class LogLevel : int { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// Messages below this level are discarded. Default kWarning. Set from config/env at init.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

// printf-style; the message must not end with a newline (one is added).
void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define KAIROS_LOG_VERBOSE(...) ::kairos::Log(::kairos::LogLevel::kVerbose, __VA_ARGS__)
#define KAIROS_LOG_INFO(...) ::kairos::Log(::kairos::LogLevel::kInfo, __VA_ARGS__)
#define KAIROS_LOG_WARNING(...) ::kairos::Log(::kairos::LogLevel::kWarning, __VA_ARGS__)
#define KAIROS_LOG_ERROR(...) ::kairos::Log(::kairos::LogLevel::kError, __VA_ARGS__)

// Logs at most once per call site for the life of the process.
#define KAIROS_LOG_ONCE(level, ...)                                   \
  do {                                                                \
    static std::atomic<bool> kairos_logged_once_{false};              \
    if (!kairos_logged_once_.exchange(true, std::memory_order_relaxed)) \
      ::kairos::Log(level, __VA_ARGS__);                              \
  } while (0)

}  // namespace kairos

#endif  // KAIROS_SRC_LOG_H_
