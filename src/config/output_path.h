// File: output_path.h
// Layer: kairos_config. Where a trace is written: the libkineto-compatible default path, the
// `_<pid>` file-name rewrite, {pid}/{rank}/{time}/{host} templating, and the safety rule for
// paths requested by the daemon (config-and-env.md §6 plus kairos hardening).
// Threading: pure functions of their arguments (plus lstat/realpath for the on-demand check);
// safe from any thread. Process facts (pid, time, host) are injected through PathContext.
#ifndef KAIROS_SRC_CONFIG_OUTPUT_PATH_H_
#define KAIROS_SRC_CONFIG_OUTPUT_PATH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "config/env.h"

namespace kairos {

// The values placeholders expand to.
struct PathContext {
  int64_t pid = 0;
  int64_t rank = -1;        // -1 = unknown; {rank} then expands to 0
  int64_t unix_time_s = 0;  // {time} = this instant in UTC as yyyymmddThhmmssZ
  std::string host;         // {host}; characters outside [A-Za-z0-9._-] become '_'
};

// The calling process's context: getpid(), `rank` (the environment's, EnvSettings::rank;
// -1 = unknown), time(nullptr), gethostname().
PathContext CurrentPathContext(int64_t rank);

// Directory of the default trace path: KAIROS_TRACE_DIR, else TMPDIR, else /tmp.
std::string DefaultTraceDir(const EnvSettings& env);

// "<dir>/libkineto_activities_<pid>.json" (libkineto's default name, in `dir`).
std::string DefaultTracePath(std::string_view dir, int64_t pid);

// libkineto's `_<pid>` rewrite, applied to the FILE NAME only: the first ".pt.trace.json"
// becomes "_<pid>.pt.trace.json", else the first ".json" becomes "_<pid>.json", else the path
// is unchanged. (libkineto searches the whole path, so a directory named "a.json" got the
// suffix instead of the file; kairos does not reproduce that.)
//   InsertPidSuffix("/t/run.pt.trace.json", 42) == "/t/run_42.pt.trace.json"
//   InsertPidSuffix("/t/x.json.gz", 42)         == "/t/x_42.json.gz"
// With a known rank (>= 0) the suffix is "_rank<R>_<pid>", so that every rank of a job that
// got the same path writes a file whose name says its rank (kairos summarize/merge read it):
//   InsertPidSuffix("/t/run.json", 42, 3)       == "/t/run_rank3_42.json"
std::string InsertPidSuffix(std::string_view path, int64_t pid, int64_t rank = -1);

// Replaces every {pid}, {rank}, {time} and {host}; other braces are kept verbatim.
std::string ExpandPathTemplate(std::string_view path, const PathContext& context);

// The path a trusted (file, env or API) config writes to: "" gives
// DefaultTracePath(default_dir, pid); otherwise placeholders are expanded and, unless the
// path contains {pid}, the `_<pid>` rewrite is applied (`_rank<R>_<pid>` when the context's
// rank is known and the path has no {rank}).
std::string ResolveOutputPath(std::string_view configured, std::string_view default_dir,
                              const PathContext& context);

// Directory daemon-requested traces must stay in, with a trailing '/':
// KINETO_ONDEMAND_TRACE_DIR, else KAIROS_TRACE_DIR, else the system temp dir (TMPDIR or /tmp).
std::string OnDemandAllowedDir(const EnvSettings& env);

struct OnDemandPath {
  std::string path;       // where to write
  bool replaced = false;  // true if the requested path was refused
  std::string message;    // why it was refused (one line, for the log and trace metadata)
};

// ResolveOnDemandPath
//
// The path for a daemon-requested trace. `requested` is ACTIVITIES_LOG_FILE from the daemon
// config ("" = default). It is resolved as ResolveOutputPath does, then refused if it:
// contains ".." anywhere; is relative; does not start with `allowed_dir`; has a parent
// directory that does not exist or whose canonical path (realpath) is outside the canonical
// allowed directory; ends in '/'; or names anything that already exists (a symlink, even
// dangling, a file, a directory): kairos never overwrites and never follows a final symlink.
// A refused path is replaced by the default path in the allowed directory (or, if that exists
// too, "libkineto_activities_<pid>_<time>[_<n>].json"). The checks are advisory against a
// racing attacker: the writer must still create the file with O_CREAT|O_EXCL|O_NOFOLLOW.
OnDemandPath ResolveOnDemandPath(std::string_view requested, std::string_view allowed_dir,
                                 const PathContext& context);

}  // namespace kairos

#endif  // KAIROS_SRC_CONFIG_OUTPUT_PATH_H_
