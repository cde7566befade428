// File: log.h
// Layer: kairos_util. One-line diagnostics on stderr, prefixed "kairos: ".
// Threading: thread-safe; each message is written with a single write(2) so lines from
// several threads never interleave. Never used on the recording hot path.
#ifndef KAIROS_SRC_LOG_H_
#define KAIROS_SRC_LOG_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace kairos {

enum class LogLevel : int { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// Writes "<prefix><text><suffix>\n" to stderr with one write(2), as one bounded, inert line:
// CR and LF become spaces, every other control byte and DEL is shown as \xNN (so text from
// outside, an RPC function name, cannot forge a line or drive the terminal), and the line is
// cut at 1 KiB, the cut marked "..." (the suffix, a suppressed count, is kept). Log() uses the
// same rule; tools with their own prefix ("kairos daemon: ") call this.
void WriteLogLine(std::string_view prefix, std::string_view text, std::string_view suffix = {});

// Messages below this level are discarded. Default kWarning. Set from config/env at init.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

// printf-style; the message must not end with a newline (one is added).
void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define KAIROS_LOG_VERBOSE(...) ::kairos::Log(::kairos::LogLevel::kVerbose, __VA_ARGS__)
#define KAIROS_LOG_INFO(...) ::kairos::Log(::kairos::LogLevel::kInfo, __VA_ARGS__)
#define KAIROS_LOG_WARNING(...) ::kairos::Log(::kairos::LogLevel::kWarning, __VA_ARGS__)
#define KAIROS_LOG_ERROR(...) ::kairos::Log(::kairos::LogLevel::kError, __VA_ARGS__)

// Logs at most once per call site for the life of the process. The site's flag is a slot of
// the logger's site table (internal::LogSites below), not a static of its own.
#define KAIROS_LOG_ONCE(level, ...)                                                  \
  do {                                                                               \
    constexpr uint64_t kairos_site_ = ::kairos::internal::LogSiteKey(__FILE__, __LINE__); \
    if (::kairos::internal::FirstAtLogSite(kairos_site_)) ::kairos::Log(level, __VA_ARGS__); \
  } while (0)

// LogRateLimiter
//
// Bounds one kind of message (one call site, or one key): at most `burst` lines per
// `interval_ns`; the lines past that are counted, not printed, and the next line that is
// printed carries " (suppressed K similar messages)". So a flood (100k hostile datagrams, a
// warning per event) costs a handful of lines and the count is never lost from the log.
// Thread-safe (a small mutex: never on the recording hot path).
class LogRateLimiter {
 public:
  static constexpr int kDefaultBurst = 5;
  static constexpr int64_t kDefaultIntervalNs = 60LL * 1000 * 1000 * 1000;  // 60 s

  // constexpr: the logger's site table (an array of these) is constant-initialised, so a
  // message logged by another library's static initialiser finds it ready.
  constexpr explicit LogRateLimiter(int burst = kDefaultBurst,
                                    int64_t interval_ns = kDefaultIntervalNs)
      : burst_(burst), interval_ns_(interval_ns) {}
  LogRateLimiter(const LogRateLimiter&) = delete;
  LogRateLimiter& operator=(const LogRateLimiter&) = delete;

  // True if a line may be printed at `now_ns` (any monotonic clock); then `*suppressed`
  // receives the number of lines refused since the last admitted one (and that count is
  // reset). False: the line is counted as suppressed.
  bool Admit(int64_t now_ns, uint64_t* suppressed);
  // Lines refused so far and not yet reported by an admitted line.
  uint64_t pending_suppressed() const;

 private:
  const int burst_;
  const int64_t interval_ns_;
  mutable std::mutex mu_;
  bool started_ = false;
  int64_t window_start_ns_ = 0;
  int used_ = 0;
  uint64_t suppressed_ = 0;
};

// Log() through `limiter` (clock: CLOCK_MONOTONIC). Messages below the log level are
// dropped before the limiter sees them, so they use none of its budget.
void LogLimited(LogRateLimiter& limiter, LogLevel level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// One limiter per call site: for any warning an outside party (a daemon request, a datagram,
// a hostile input file) can trigger at will. The limiter is the site's slot in the logger's
// site table (internal::LogSites), found by a key computed at compile time from file and line.
#define KAIROS_LOG_LIMITED(level, ...)                                                  \
  do {                                                                                  \
    constexpr uint64_t kairos_site_ = ::kairos::internal::LogSiteKey(__FILE__, __LINE__); \
    ::kairos::LogLimited(::kairos::internal::LogSiteLimiter(kairos_site_), level, __VA_ARGS__); \
  } while (0)
#define KAIROS_LOG_WARNING_LIMITED(...) KAIROS_LOG_LIMITED(::kairos::LogLevel::kWarning, __VA_ARGS__)

namespace internal {

// A call site's key: FNV-1a of its file name and line, never 0 (0 marks a free slot). Two
// sites on one line of one file share a key, so they share one limit and one "once" flag.
constexpr uint64_t LogSiteKey(const char* file, int line) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char* p = file; *p != '\0'; ++p) {
    h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001b3ULL;
  }
  h = (h ^ static_cast<uint64_t>(static_cast<uint32_t>(line))) * 0x100000001b3ULL;
  return h | 1;
}

// LogSites
//
// The per-call-site state of KAIROS_LOG_LIMITED and KAIROS_LOG_ONCE, owned by the logger (one
// process-wide table in log.cc, instead of one static per site): a fixed array of slots, each
// claimed by the first message of its site (lock-free: one compare-and-swap of the key,
// linear probing from the key's hash). A limit must outlive the object that logs (a flood of
// datagrams spans daemon clients), so the table lives as long as the process. When all
// kCapacity slots are claimed, every further site shares one overflow slot (one limit, one
// "once" flag): bounded memory, and still no flood. Thread-safe; never on the hot path.
class LogSites {
 public:
  static constexpr size_t kCapacity = 64;
  struct Slot {
    std::atomic<uint64_t> key{0};     // 0: free
    std::atomic<bool> logged_once{false};
    LogRateLimiter limiter;
    // AdmitOncePerInterval's state: when the site last logged, and what it refused since.
    std::atomic<int64_t> last_ns{INT64_MIN};
    std::atomic<uint64_t> refused{0};
  };
  // The slot of `key` (not 0), claimed on first use; the overflow slot when the table is full.
  Slot& Find(uint64_t key);
  // How many slots are claimed (the overflow slot not counted).
  size_t claimed() const;
  const Slot& overflow() const { return overflow_; }

 private:
  Slot slots_[kCapacity];
  Slot overflow_;
};

// The process's table (log.cc's logger state): the site's limiter, and whether this is the
// first message of a KAIROS_LOG_ONCE site (true once per site).
LogRateLimiter& LogSiteLimiter(uint64_t key);
bool FirstAtLogSite(uint64_t key);
// Lock-free, for a site that formats its own suppressed count (the C ABI's exception
// barrier): true if the site may log at `now_ns` (one line per `interval_ns`); then
// `*suppressed` receives the calls refused since its last line (and that count restarts).
// False: this call is counted as refused.
bool AdmitOncePerInterval(uint64_t key, int64_t now_ns, int64_t interval_ns, uint64_t* suppressed);

}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_LOG_H_
