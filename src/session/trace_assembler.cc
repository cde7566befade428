// File: trace_assembler.cc — see trace_assembler.h.
// Layer: kairos_session. Threading: runner thread, no session lock held.
#include "session/trace_assembler.h"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "analysis/emit_summary.h"
#include "util/clock.h"
#include "config/env.h"
#include "config/output_path.h"
#include "util/dcheck.h"
#include "util/log.h"
#include "output/writer.h"
#include "report/report.h"
#include "session/output_config.h"
#include "session/root.h"
#include "session/trace_identity.h"

namespace kairos {

namespace {

std::string TracePath(const Config& config, ConfigSource source, const EnvSettings& env,
                      const PathContext& ctx, std::vector<std::string>* warnings) {
  if (source != ConfigSource::kDaemon)
    return ResolveOutputPath(config.log_file, DefaultTraceDir(env), ctx);
  OnDemandPath od = ResolveOnDemandPath(config.log_file, OnDemandAllowedDir(env), ctx);
  if (od.replaced) {
    KAIROS_LOG_WARNING("%s", od.message.c_str());
    warnings->push_back(od.message);
  }
  return od.path;
}


// The trace's identity: process, host, window, name, ranks, job and the request's metadata,
// config and warnings (moved out of `request`).
void FillIdentity(AssembleRequest& request, const ClockConverter& clock, const EnvSettings& env,
                  const std::string& path, TraceData* data) {
  data->pid = getpid();
  data->process_name = ReadProcessName();
  data->host_name = ReadHostName();
  data->window_start_ns = clock.ToUnixNs(request.start_raw);
  data->window_end_ns = std::max(data->window_start_ns, clock.ToUnixNs(request.end_raw));
  data->trace_name = path;
  data->trace_id = request.config.request_trace_id;
  data->distributed = DistributedFromEnv(request.nccl);
  auto& metadata = request.metadata;
  // The job id (KAIROS_JOB_ID / SLURM_JOB_ID): `kairos summarize --format jsonl` rows carry it.
  if (env.job_id != 0) metadata.emplace_back("job_id", std::to_string(env.job_id));
  if (!env.job_name.empty()) metadata.emplace_back("job_name", env.job_name);
  if (!env.job_version.empty()) metadata.emplace_back("job_version", env.job_version);
  if (!env.job_attempt_index.empty())
    metadata.emplace_back("job_attempt_index", env.job_attempt_index);
  data->metadata = std::move(metadata);
  data->config_text = ConfigToText(request.config);
  data->warnings = std::move(request.warnings);
}

// KAIROS_EXTRA_OUTPUTS: the same trace in more formats or places; a failure is logged, the
// main trace stands.
void WriteExtraOutputs(const TraceData& data, const Config& config, const OutputOptions& out,
                       const EnvSettings& env, const PathContext& ctx) {
  for (const std::string& extra : config.extra_outputs) {
    OutputOptions r2 = out;
    r2.path = ResolveOutputPath(extra, DefaultTraceDir(env), ctx);
    r2.format = TraceFormat::kAuto;
    r2.summary_json.clear();
    absl::Status s2 = WriteTraceFile(data, r2);
    if (!s2.ok())
      KAIROS_LOG_WARNING("extra output %s not written: %s", r2.path.c_str(),
                         std::string(s2.message()).c_str());
  }
}

}  // namespace

AssembleResult AssembleAndWrite(AssembleRequest request) {
  KAIROS_DCHECK(request.process_base_ns > 0, "the session fixed the process's base time");
  const Config& config = request.config;
  TraceData data;
  // Anchors from open to now (clock.h); without a log, Calibrate() as for a log never opened.
  const ClockConverter clock = request.anchors != nullptr ? request.anchors->Converter() : WindowAnchors().Converter();
  WindowEdges edges;
  edges.start_raw = request.start_raw;
  edges.end_raw = request.end_raw;
  edges.clock = &clock;
  edges.start_is_step_boundary = request.start_is_step_boundary;
  for (TraceSource* s : request.sources) s->SetWindowEdges(edges);

  const EnvSettings& env = ProcessEnv();
  const PathContext ctx = CurrentPathContext(env.rank);
  const std::string path = TracePath(config, request.source, env, ctx, &request.warnings);

  FillIdentity(request, clock, env, path, &data);

  for (TraceSource* s : request.sources) s->Collect(data);  // registration order: cpu first
  for (const auto& [name, value] : request.stats) data.AddStat(name, value);
  // A release build's broken invariant (dcheck.h) is in every later trace, not only a log line.
  if (const uint64_t breaks = internal::InvariantBreaks(); breaks != 0)
    data.AddStat("invariant_breaks", breaks);
  data.SortTracks();
  data.base_time_ns = TraceBaseTimeNs(request.process_base_ns, EarliestTimestampNs(data));
  for (TraceSource* s : request.sources) s->Reset();

  if (data.EventCount() == 0 && request.source != ConfigSource::kApi) {
    // Counter samples alone do not count: every process has /proc.
    KAIROS_LOG_INFO("this process recorded no events in the window; no trace written "
                    "(would have been %s)", path.c_str());
    return AssembleResult{absl::NotFoundError("no events were recorded; no trace written"),
                          std::string()};
  }

  // The analysis summary travels inside the trace and next to it (<trace>.summary.json,
  // written by the output layer only once the trace is, with the trace's permissions).
  OutputOptions out = OutputOptionsFromConfig(config, path);
  // One analysis serves the summary and the report: with the report on, it also keeps the
  // series the page draws (the summary JSON does not contain them).
  const bool want_report = config.report == ReportMode::kHtml;
  std::optional<Summary> analysed;
  if (config.summary != SummaryMode::kOff || want_report) {
    AnalysisOptions ao = want_report ? ReportAnalysisOptions() : AnalysisOptions{};
    ao.peak_tflops = env.peak_tflops;  // KAIROS_PEAK_TFLOPS (docs/FLOPS.md)
    analysed = Analyze(data, ao);
  }
  if (config.summary != SummaryMode::kOff) {
    EmitOptions options;
    options.print_text = config.summary == SummaryMode::kStdout;
    out.summary_json = EmitSummary(*analysed, options);
    data.metadata_json.emplace_back("kairos_summary", out.summary_json);
  }
  // A daemon request's file is created confined to the allowed directory (no symlink in the
  // path followed, nothing replaced), closing the window between ResolveOnDemandPath's check
  // and the creation.
  if (request.source == ConfigSource::kDaemon) out.confine_dir = OnDemandAllowedDir(env);
  absl::Status st = WriteTraceFile(data, out);
  if (!st.ok()) {
    KAIROS_LOG_WARNING("trace not written to %s: %s", path.c_str(),
                       std::string(st.message()).c_str());
    return AssembleResult{st, std::string()};
  }
  WriteExtraOutputs(data, config, out, env, ctx);
  // Opt-in HTML report next to the trace (docs/REPORT.md), written only with its trace and
  // through the same sink, from the summary analysed above.
  if (want_report) {
    absl::Status rs = WriteTextFile(ReportPathFor(path),
                                    RenderHtmlReport({{path, &data, &*analysed}}), out.confine_dir);
    if (!rs.ok())
      KAIROS_LOG_WARNING("report not written: %s", std::string(rs.message()).c_str());
  }
  KAIROS_LOG_INFO("trace written to %s (%zu events)", path.c_str(), data.EventCount());
  return AssembleResult{absl::OkStatus(), path};
}

}  // namespace kairos
