// File: summary_row.cc
// Layer: tools. See summary_row.h; the field list is docs/SUMMARY.md's table, in order.
// Threading: stateless.
#include "summary_row.h"

#include <cstdlib>

#include "json/json_writer.h"
#include "util/rank_name.h"

namespace kairos::tools {
namespace {

const std::string* Metadata(const TraceData& data, const char* key) {
  for (const auto& [k, v] : data.metadata)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace

std::string SummaryRow(const std::string& path, const TraceData& data, const Summary& summary) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(kSummaryRowSchemaVersion);
  w.Key("trace").String(path);
  w.Key("trace_id");
  if (data.trace_id.empty()) w.Null(); else w.String(data.trace_id);
  // The job: KAIROS_JOB_ID / SLURM_JOB_ID as kairos recorded it, else null.
  w.Key("job_id");
  const std::string* job = Metadata(data, "job_id");
  char* end = nullptr;
  const long long job_id = job != nullptr ? std::strtoll(job->c_str(), &end, 10) : 0;
  if (job != nullptr && !job->empty() && *end == '\0') w.Int(job_id); else w.Null();
  w.Key("job_name");
  if (const std::string* name = Metadata(data, "job_name")) w.String(*name); else w.Null();
  // The rank: the trace's distributedInfo when the job has several ranks, else the file name's
  // (_rank<R>_), else null.
  w.Key("rank");
  const int64_t file_rank = RankFromFileName(path);
  if (data.distributed.world_size > 1) w.Int(data.distributed.rank);
  else if (file_rank >= 0) w.Int(file_rank);
  else w.Null();
  w.Key("world_size").Int(data.distributed.world_size);
  w.Key("host");
  if (data.host_name.empty()) w.Null(); else w.String(data.host_name);
  w.Key("pid").Int(data.pid);
  w.Key("window_start_ns").Int(summary.window_start_ns);
  w.Key("window_end_ns").Int(summary.window_end_ns);
  w.Key("verdict").String(summary.verdict);
  w.Key("gpus").Uint(summary.devices.size());
  w.Key("idle_gpus").Uint(summary.idle_devices.size());
  // Over the GPUs with work: busy time over window time, and SM active weighted by window
  // (devices without PM samples left out; null when none has them).
  int64_t busy = 0, window = 0;
  double sm_weighted = 0, sm_weight = 0;
  for (const DeviceSummary& d : summary.devices) {
    busy += d.busy_ns;
    window += d.window_ns;
    if (d.measured_sm_active_pct >= 0) {
      sm_weighted += d.measured_sm_active_pct * static_cast<double>(d.window_ns);
      sm_weight += static_cast<double>(d.window_ns);
    }
  }
  w.Key("gpu_busy_pct");
  if (window > 0) w.Double(100.0 * static_cast<double>(busy) / static_cast<double>(window)); else w.Null();
  w.Key("sm_efficiency_pct");
  if (sm_weight > 0) w.Double(sm_weighted / sm_weight); else w.Null();
  w.Key("steps").Uint(summary.steps.count);
  w.Key("step_median_ms");
  if (summary.steps.count > 0) w.Double(static_cast<double>(summary.steps.median_ns) / 1e6); else w.Null();
  w.Key("findings").Uint(summary.findings.size());
  w.Key("top_finding");
  if (summary.findings.empty()) w.Null(); else w.String(summary.findings[0].id);
  w.Key("top_finding_share");
  if (summary.findings.empty()) w.Null(); else w.Double(summary.findings[0].window_share);
  w.EndObject();
  return std::string(w.str());
}

}  // namespace kairos::tools
