// File: log.cc — see log.h.
#include "util/log.h"

#include "util/dcheck.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace kairos {
namespace {

// The logger's process-wide state, in one owner: every layer logs, also before the root
// exists (and after fork, in the child, before anything is rebuilt), so it cannot live in
// the root. Constant-initialised (every member has a constexpr constructor): no static
// initialisation order to lose, no guard. After fork the child keeps it all (the level, the
// parent's invariant breaks, each site's budget).
struct Logger {
  std::atomic<int> level{static_cast<int>(LogLevel::kWarning)};
  // dcheck.h's release form: broken KAIROS_DCHECKs, counted into every later trace.
  std::atomic<uint64_t> invariant_breaks{0};
  // KAIROS_LOG_LIMITED / KAIROS_LOG_ONCE call sites.
  internal::LogSites sites;
};
Logger g_log;

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kVerbose: return "verbose";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    default: return "";
  }
}

constexpr size_t kMaxLine = 1024;  // bytes, newline included

// Appends `text` to `out` (which holds `*len` of kMaxLine - 1 usable bytes, room for the
// newline kept) sanitised as WriteLogLine describes, leaving `reserve` bytes free; false
// when it had to cut.
bool AppendSanitised(std::string_view text, char* out, size_t* len, size_t reserve) {
  static const char kHex[] = "0123456789abcdef";
  const size_t cap = kMaxLine - 1 - reserve;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    const bool control = c < 0x20 || c == 0x7f;
    const bool space = c == '\n' || c == '\r';
    const size_t need = control && !space ? 4 : 1;
    if (*len + need > cap) return false;
    if (space) {
      out[(*len)++] = ' ';
    } else if (control) {
      out[(*len)++] = '\\';
      out[(*len)++] = 'x';
      out[(*len)++] = kHex[c >> 4];
      out[(*len)++] = kHex[c & 15];
    } else {
      out[(*len)++] = ch;
    }
  }
  return true;
}

void WriteSanitisedLine(std::string_view prefix, std::string_view text, std::string_view suffix) {
  char buf[kMaxLine];
  size_t len = 0;
  // Room for the suffix (and a cut mark) is kept, so a long message cannot cut the
  // suppressed count off.
  const size_t reserve = std::min<size_t>(suffix.size(), 64) + 3;
  if (!AppendSanitised(prefix, buf, &len, reserve) || !AppendSanitised(text, buf, &len, reserve)) {
    for (const char c : std::string_view("...")) buf[len++] = c;
  }
  AppendSanitised(suffix.substr(0, 64), buf, &len, 0);
  buf[len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
}

// Formats one message and writes it as "kairos: <level>: <message><suffix>" (WriteLogLine's
// rules: one line, at most 1 KiB, control bytes shown as \xNN).
void VLog(LogLevel level, const char* suffix, const char* fmt, va_list ap) {
  char msg[kMaxLine];
  const int m = vsnprintf(msg, sizeof(msg), fmt, ap);
  if (m < 0) return;
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "kairos: %s: ", LevelName(level));
  WriteSanitisedLine(prefix, std::string_view(msg, std::min<size_t>(static_cast<size_t>(m), sizeof(msg) - 1)),
                     suffix != nullptr ? std::string_view(suffix) : std::string_view());
}

bool Enabled(LogLevel level) {
  return static_cast<int>(level) >= g_log.level.load(std::memory_order_relaxed);
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

void WriteLogLine(std::string_view prefix, std::string_view text, std::string_view suffix) {
  WriteSanitisedLine(prefix, text, suffix);
}

namespace internal {

void NoteInvariantBreak(const char* file, int line, const char* cond, const char* msg) {
  const uint64_t n = g_log.invariant_breaks.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n <= kLoggedInvariantBreaks) {
    Log(LogLevel::kError,
        "internal invariant broken at %s:%d: %s (%s); kairos carries on, counted in "
        "kairos_stats invariant_breaks%s: please report it",
        file, line, cond, msg, n == kLoggedInvariantBreaks ? " (later breaks: counted only)" : "");
  }
}

uint64_t InvariantBreaks() { return g_log.invariant_breaks.load(std::memory_order_relaxed); }

LogSites::Slot& LogSites::Find(uint64_t key) {
  KAIROS_DCHECK(key != 0, "0 marks a free slot; LogSiteKey never returns it");
  const size_t start = static_cast<size_t>(key % kCapacity);
  for (size_t i = 0; i < kCapacity; ++i) {
    Slot& s = slots_[(start + i) % kCapacity];
    uint64_t seen = s.key.load(std::memory_order_acquire);
    if (seen == 0 && s.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) {
      return s;
    }
    if (seen == key) return s;  // ours, or claimed for this key by another thread just now
  }
  return overflow_;
}

size_t LogSites::claimed() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.key.load(std::memory_order_relaxed) != 0 ? 1 : 0;
  return n;
}

LogRateLimiter& LogSiteLimiter(uint64_t key) { return g_log.sites.Find(key).limiter; }

bool FirstAtLogSite(uint64_t key) {
  return !g_log.sites.Find(key).logged_once.exchange(true, std::memory_order_relaxed);
}

bool AdmitOncePerInterval(uint64_t key, int64_t now_ns, int64_t interval_ns, uint64_t* suppressed) {
  KAIROS_DCHECK(interval_ns > 0, "an interval is positive");
  LogSites::Slot& slot = g_log.sites.Find(key);
  int64_t last = slot.last_ns.load(std::memory_order_relaxed);
  // last + interval, saturated: the first call (last = INT64_MIN) is always admitted.
  const int64_t next = last > INT64_MAX - interval_ns ? INT64_MAX : last + interval_ns;
  if (next <= now_ns &&
      slot.last_ns.compare_exchange_strong(last, now_ns, std::memory_order_relaxed)) {
    *suppressed = slot.refused.exchange(0, std::memory_order_relaxed);
    return true;
  }
  slot.refused.fetch_add(1, std::memory_order_relaxed);
  return false;
}
}  // namespace internal

void SetLogLevel(LogLevel level) { g_log.level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_log.level.load(std::memory_order_relaxed)); }

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
