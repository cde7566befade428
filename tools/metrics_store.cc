// File: metrics_store.cc
// Layer: tools (`kairos daemon --metrics-port`). See metrics_store.h.
// Threading: relay event-loop thread only.
#include "metrics_store.h"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "json/json_escape.h"
#include "json/json_reader.h"

namespace kairos::tools {
namespace {

// A number as Prometheus parses it: shortest text that round-trips a percent/100 to well
// under 1e-6.
std::string Num(double v) {
  char buf[40];
  snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// Optional number field: absent or null -> nullopt (ok); a non-number -> false.
bool OptDouble(const JsonValue& o, std::string_view key, std::optional<double>* out) {
  const JsonValue* v = o.Find(key);
  if (v == nullptr || v->type == JsonValue::Type::kNull) return true;
  if (!v->is_number()) return false;
  // 1e999 parses as infinity: no gauge is infinite, and "inf" is not the exposition format's
  // spelling (+Inf), so such a line is malformed.
  const double d = v->AsDouble();
  if (!std::isfinite(d)) return false;
  *out = d;
  return true;
}

// Unix seconds with millisecond precision from nanoseconds, for any int64 (a negative value
// keeps one sign: "-1.500", never "-1.-500", which breaks the whole scrape).
std::string Seconds3(int64_t ns) {
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[48];
  snprintf(buf, sizeof(buf), "%s%llu.%03llu", ns < 0 ? "-" : "",
           static_cast<unsigned long long>(mag / 1000000000),
           static_cast<unsigned long long>((mag / 1000000) % 1000));
  return buf;
}

// The first `max` bytes of UTF-8 text, cut before a character that would not fit whole.
std::string_view CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

bool OptInt(const JsonValue& o, std::string_view key, std::optional<int64_t>* out) {
  const JsonValue* v = o.Find(key);
  if (v == nullptr || v->type == JsonValue::Type::kNull) return true;
  int64_t n = 0;
  if (!v->AsExactInt(&n)) return false;
  *out = n;
  return true;
}

// OptInt for counts and sizes: a negative value is malformed.
bool OptCount(const JsonValue& o, std::string_view key, std::optional<int64_t>* out) {
  return OptInt(o, key, out) && (!*out || **out >= 0);
}

// Family value readers: a field of a series as exposition text, nothing when null.
template <typename S>
std::function<std::optional<std::string>(const S&)> Scaled(std::optional<double> S::*field, double divisor) {
  return [field, divisor](const S& s) -> std::optional<std::string> {
    if (!(s.*field)) return std::nullopt;
    return Num(*(s.*field) / divisor);
  };
}
template <typename S, typename T>
std::function<std::optional<std::string>(const S&)> Whole(std::optional<T> S::*field) {
  return [field](const S& s) -> std::optional<std::string> {
    if (!(s.*field)) return std::nullopt;
    return std::to_string(*(s.*field));
  };
}

// Adds `delta` to `total`, saturating: a counter that wrapped would read as a reset (a huge
// rate() spike).
void AddSaturating(std::optional<uint64_t>& total, const std::optional<int64_t>& delta) {
  if (!delta) return;
  uint64_t sum = 0;
  if (__builtin_add_overflow(total.value_or(0), static_cast<uint64_t>(*delta), &sum)) sum = UINT64_MAX;
  total = sum;
}

}  // namespace

const char* MetricsRejectName(MetricsReject r) {
  switch (r) {
    case MetricsReject::kMalformed: return "malformed";
    case MetricsReject::kUnknownProcess: return "unknown_process";
    case MetricsReject::kRateLimited: return "rate_limited";
    case MetricsReject::kTooManyLines: return "too_many_lines";
    case MetricsReject::kPidMismatch: return "pid_mismatch";
    case MetricsReject::kCount: break;
  }
  return "?";
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x80) {
      // Prometheus refuses a scrape with a label value that is not UTF-8 (every series of the
      // agent is lost): an invalid byte becomes U+FFFD.
      const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (len > 1 && i + len <= value.size() && IsValidUtf8(value.substr(i, len))) {
        out.append(value.data() + i, len);
        i += len;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
      continue;
    }
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += static_cast<char>(c);
    ++i;
  }
  return out;
}

size_t MetricsStore::Ingest(std::string_view payload, int64_t now_ms, const Known& known,
                            std::optional<int64_t> sender) {
  // Split first: every line of one datagram must come from one process, which is checked
  // (known, rate) once for the datagram.
  std::vector<std::string_view> lines;
  while (!payload.empty()) {
    const size_t nl = payload.find('\n');
    std::string_view line = payload.substr(0, nl);
    payload = nl == std::string_view::npos ? std::string_view() : payload.substr(nl + 1);
    if (line.empty()) continue;
    if (lines.size() == kMaxLinesPerDatagram) {
      Reject(MetricsReject::kTooManyLines);
      return 0;
    }
    lines.push_back(line);
  }
  if (lines.empty()) {
    Reject(MetricsReject::kMalformed);
    return 0;
  }
  size_t taken = 0;
  for (std::string_view line : lines) taken += IngestLine(line, now_ms, known, sender) ? 1 : 0;
  return taken;
}

bool MetricsStore::WithinRate(Sender& sender, int64_t now_ms) {
  if (now_ms - sender.window_start_ms >= 1000) {
    sender.window_start_ms = now_ms;
    sender.count = 0;
  }
  if (sender.count >= kMaxLinesPerSecond) return false;
  ++sender.count;
  return true;
}

bool MetricsStore::ClaimPid(int64_t sender, int64_t pid) {
  auto by_sender = pid_of_sender_.find(sender);
  auto by_pid = sender_of_pid_.find(pid);
  if (by_sender != pid_of_sender_.end() && by_sender->second != pid) return false;
  if (by_pid != sender_of_pid_.end() && by_pid->second != sender) return false;
  // Both maps are bounded by the series: Sweep erases a pair once its pid has none left, and
  // a line that is not stored (cap reached) leaves no pair behind (IngestLine undoes it).
  pid_of_sender_[sender] = pid;
  sender_of_pid_[pid] = sender;
  return true;
}

bool MetricsStore::Admit(int64_t job_id, int64_t pid, int64_t now_ms, const Known& known,
                         std::optional<int64_t> sender) {
  if (!known(job_id, pid)) {
    Reject(MetricsReject::kUnknownProcess);
    return false;
  }
  if (sender && !ClaimPid(*sender, pid)) {
    Reject(MetricsReject::kPidMismatch);
    return false;
  }
  if (!WithinRate(senders_[pid], now_ms)) {
    Reject(MetricsReject::kRateLimited);
    return false;
  }
  return true;
}

bool MetricsStore::IngestLine(std::string_view line, int64_t now_ms, const Known& known,
                              std::optional<int64_t> sender) {
  JsonParseOptions parse;
  parse.max_depth = 2;
  parse.strict = true;  // a local process's bytes: valid UTF-8, no repeated keys
  absl::StatusOr<JsonValue> parsed = ParseJson(line, parse);
  if (!parsed.ok() || !parsed->is_object()) {
    Reject(MetricsReject::kMalformed);
    return false;
  }
  const JsonValue& o = *parsed;
  int64_t pid = 0, device = 0, ts_ns = 0, interval_ns = 0;
  const JsonValue* f_pid = o.Find("pid");
  const JsonValue* f_dev = o.Find("device");
  const JsonValue* f_ts = o.Find("ts_ns");
  const JsonValue* f_int = o.Find("interval_ns");
  Series s;
  if (f_pid == nullptr || !f_pid->AsExactInt(&pid) || pid <= 0 || pid > INT32_MAX ||
      f_dev == nullptr || !f_dev->AsExactInt(&device) || device < 0 || device > 4095 ||
      f_ts == nullptr || !f_ts->AsExactInt(&ts_ns) || f_int == nullptr ||
      !f_int->AsExactInt(&interval_ns) || interval_ns <= 0 || interval_ns > kMaxIntervalNs ||
      !OptInt(o, "job_id", &s.job_id) ||
      !OptInt(o, "rank", &s.rank) || !OptDouble(o, "gpu_busy_pct", &s.busy) ||
      !OptDouble(o, "sm_active_pct", &s.sm) ||
      !OptDouble(o, "achieved_occupancy_pct", &s.occupancy) ||
      !OptDouble(o, "tensor_active_pct", &s.tensor) ||
      !OptDouble(o, "dram_throughput_pct", &s.dram) ||
      !OptDouble(o, "step_time_ms_p50", &s.step_time_ms) ||
      !OptDouble(o, "process_cpu_pct", &s.process_cpu_pct) ||
      !OptInt(o, "process_rss_bytes", &s.process_rss_bytes)) {
    Reject(MetricsReject::kMalformed);
    return false;
  }
  std::optional<int64_t> kernels, bytes, steps;
  if (!OptCount(o, "kernels", &kernels) || !OptCount(o, "memcpy_bytes", &bytes) ||
      !OptCount(o, "steps", &steps) || !OptCount(o, "gpu_memory_used_bytes", &s.gpu_memory_used_bytes) ||
      !OptCount(o, "gpu_memory_total_bytes", &s.gpu_memory_total_bytes)) {
    Reject(MetricsReject::kMalformed);
    return false;
  }
  if (const JsonValue* uuid = o.Find("gpu_uuid"); uuid != nullptr && uuid->is_string())
    s.gpu_uuid = std::string(CutUtf8(uuid->text, 64));
  if (!Admit(s.job_id.value_or(0), pid, now_ms, known, sender)) return false;
  const auto key = std::make_pair(pid, static_cast<uint32_t>(device));
  auto it = series_.find(key);
  if (it == series_.end()) {
    // The cap, and a share of it per process: one process (a bug, or a forged pid) naming
    // thousands of devices would otherwise hold every slot and blind the agent to the rest.
    const size_t of_pid = static_cast<size_t>(
        std::distance(series_.lower_bound(std::make_pair(pid, uint32_t{0})),
                      series_.lower_bound(std::make_pair(pid + 1, uint32_t{0}))));
    if (series_.size() >= options_.max_series || of_pid >= kMaxDevicesPerProcess) {
      ++dropped_series_;
      if (of_pid == 0) ForgetPid(pid);
      return false;
    }
    it = series_.emplace(key, Series{}).first;
  }
  Series& old = it->second;
  AddSaturating(old.kernels, kernels);
  AddSaturating(old.memcpy_bytes, bytes);
  AddSaturating(old.steps, steps);
  s.kernels = old.kernels;
  s.memcpy_bytes = old.memcpy_bytes;
  s.steps = old.steps;
  s.ts_ns = ts_ns;
  s.interval_ns = interval_ns;
  s.updated_ms = now_ms;
  old = std::move(s);
  ++lines_;
  return true;
}

size_t MetricsStore::Sweep(int64_t now_ms, const Alive& alive) {
  size_t removed = 0;
  for (auto it = series_.begin(); it != series_.end();) {
    const Series& s = it->second;
    const bool stale = now_ms - s.updated_ms > 2 * (s.interval_ns / 1000000) + options_.stale_grace_ms;
    if (stale || (alive && !alive(it->first.first))) {
      it = series_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  for (auto it = senders_.begin(); it != senders_.end();) {
    if (!HasPid(it->first) && now_ms - it->second.window_start_ms >= 1000) it = senders_.erase(it);
    else ++it;
  }
  for (auto it = sender_of_pid_.begin(); it != sender_of_pid_.end();) {
    if (HasPid(it->first)) {
      ++it;
      continue;
    }
    pid_of_sender_.erase(it->second);
    it = sender_of_pid_.erase(it);
  }
  return removed;
}

void MetricsStore::ForgetPid(int64_t pid) {
  auto it = sender_of_pid_.find(pid);
  if (it == sender_of_pid_.end()) return;
  pid_of_sender_.erase(it->second);
  sender_of_pid_.erase(it);
}

bool MetricsStore::HasPid(int64_t pid) const {
  auto it = series_.lower_bound(std::make_pair(pid, uint32_t{0}));
  return it != series_.end() && it->first.first == pid;
}

std::string MetricsStore::Render() const {
  struct Family {
    const char* name;
    const char* type;
    const char* help;
    std::function<std::optional<std::string>(const Series&)> value;
  };
  auto ratio = [](std::optional<double> Series::*field) { return Scaled(field, 100.0); };
  const Family families[] = {
      {"kairos_gpu_busy_ratio", "gauge",
       "Share of the last telemetry interval the GPU had work (gr__cycles_active), 0-1.",
       ratio(&Series::busy)},
      {"kairos_gpu_sm_active_ratio", "gauge",
       "SM efficiency over the last telemetry interval (sm__cycles_active), 0-1.",
       ratio(&Series::sm)},
      {"kairos_gpu_achieved_occupancy_ratio", "gauge",
       "Achieved occupancy over the last telemetry interval (sm__warps_active), 0-1.",
       ratio(&Series::occupancy)},
      {"kairos_gpu_tensor_active_ratio", "gauge",
       "Tensor pipe active over the last telemetry interval, 0-1.", ratio(&Series::tensor)},
      {"kairos_gpu_dram_throughput_ratio", "gauge",
       "DRAM throughput over the last telemetry interval, share of peak, 0-1.",
       ratio(&Series::dram)},
      {"kairos_step_time_seconds", "gauge",
       "Median time between consecutive steps of the last telemetry interval.",
       Scaled(&Series::step_time_ms, 1000.0)},
      {"kairos_gpu_kernels_total", "counter", "Kernels that ended, from CUPTI records.",
       Whole(&Series::kernels)},
      {"kairos_gpu_memcpy_bytes_total", "counter", "Bytes of the copies that ended.",
       Whole(&Series::memcpy_bytes)},
      {"kairos_steps_total", "counter", "Iterations the process counted (kairos_step).",
       Whole(&Series::steps)},
      {"kairos_process_cpu_cores", "gauge",
       "CPU time of the process over the last telemetry interval, in cores (1 = one core busy).",
       Scaled(&Series::process_cpu_pct, 100.0)},
      {"kairos_process_resident_memory_bytes", "gauge",
       "Resident memory of the process at the end of the last telemetry interval.",
       Whole(&Series::process_rss_bytes)},
      {"kairos_gpu_memory_used_bytes", "gauge",
       "Device memory in use on the GPU at the end of the last telemetry interval (total - free, "
       "cuMemGetInfo: every process's, not only this one's).",
       Whole(&Series::gpu_memory_used_bytes)},
      {"kairos_gpu_memory_total_bytes", "gauge", "Device memory of the GPU (cuMemGetInfo's total).",
       Whole(&Series::gpu_memory_total_bytes)},
      {"kairos_telemetry_interval_seconds", "gauge", "Length of the last telemetry interval.",
       [](const Series& s) -> std::optional<std::string> {
         return Num(static_cast<double>(s.interval_ns) / 1e9);
       }},
      {"kairos_telemetry_timestamp_seconds", "gauge",
       "End of the last telemetry interval, Unix seconds (the line's ts_ns).",
       [](const Series& s) -> std::optional<std::string> { return Seconds3(s.ts_ns); }},
  };
  const std::string host = EscapeLabelValue(options_.host);
  std::string out;
  for (const Family& f : families) {
    absl::StrAppend(&out, "# HELP ", f.name, " ", f.help, "\n# TYPE ", f.name, " ", f.type, "\n");
    for (const auto& [key, s] : series_) {
      const std::optional<std::string> v = f.value(s);
      if (!v) continue;
      absl::StrAppend(&out, f.name, "{host=\"", host, "\",job_id=\"",
                      s.job_id ? std::to_string(*s.job_id) : std::string(), "\",rank=\"",
                      s.rank ? std::to_string(*s.rank) : std::string(), "\",device=\"", key.second,
                      "\",gpu_uuid=\"", EscapeLabelValue(s.gpu_uuid), "\",pid=\"", key.first,
                      "\"} ", *v, "\n");
    }
  }
  return out;
}

}  // namespace kairos::tools
