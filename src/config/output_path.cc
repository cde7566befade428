// File: output_path.cc
// Layer: kairos_config. Output path defaults, templating and the on-demand safety rule.
// Threading: no shared state; safe from any thread.
#include "config/output_path.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "config/config_keys.h"

namespace kairos {
namespace {

using internal::AV;

std::string WithSlash(std::string_view dir) {
  std::string d(dir);
  if (d.empty() || d.back() != '/') d += '/';
  return d;
}

std::string WithoutSlash(std::string_view dir) {
  std::string d(dir);
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::string TimeText(int64_t unix_time_s) {
  const time_t t = static_cast<time_t>(unix_time_s);
  struct tm tm;
  if (gmtime_r(&t, &tm) == nullptr) return "00000000T000000Z";
  char buf[32];
  strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string SafeHost(std::string_view host) {
  std::string out;
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? "unknown" : out;
}

bool Exists(const std::string& path, bool* is_symlink) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  *is_symlink = S_ISLNK(st.st_mode);
  return true;
}

std::string RealPath(const std::string& path, int* err) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    *err = errno;
    return "";
  }
  return buf;
}

// Why `path` (already expanded) may not be written, or "" if it may.
std::string RefusalReason(std::string_view requested, const std::string& path,
                          const std::string& allowed) {
  if (requested.find("..") != std::string_view::npos || path.find("..") != std::string::npos) {
    return "contains \"..\"";
  }
  if (path.empty() || path[0] != '/') return "is not an absolute path";
  if (path.compare(0, allowed.size(), allowed) != 0) {
    return absl::StrCat("is outside the allowed directory ", allowed);
  }
  const size_t slash = path.rfind('/');
  if (slash + 1 == path.size()) return "names a directory, not a file";
  int err = 0;
  const std::string parent = RealPath(path.substr(0, slash + 1), &err);
  if (parent.empty()) {
    return absl::StrCat("has a parent directory that cannot be resolved (", std::strerror(err),
                        ")");
  }
  const std::string canonical_allowed = RealPath(allowed, &err);
  if (canonical_allowed.empty()) {
    return absl::StrCat("cannot be checked: the allowed directory ", allowed,
                        " cannot be resolved (", std::strerror(err), ")");
  }
  if (parent != canonical_allowed &&
      parent.compare(0, canonical_allowed.size() + 1, canonical_allowed + "/") != 0) {
    return absl::StrCat("has a parent directory that resolves to ", parent,
                        ", outside the allowed directory ", canonical_allowed);
  }
  bool is_symlink = false;
  if (Exists(path, &is_symlink)) {
    return is_symlink ? "is an existing symlink (never followed)"
                      : "already exists (never overwritten)";
  }
  return "";
}

// The default path in `allowed`, or a fresh variant of it if that name is taken.
std::string FreshDefaultPath(const std::string& allowed, const PathContext& context) {
  const std::string dir = WithoutSlash(allowed);
  std::string path = DefaultTracePath(dir, context.pid);
  bool is_symlink = false;
  if (!Exists(path, &is_symlink)) return path;
  const std::string stem =
      absl::StrCat(dir, "/libkineto_activities_", context.pid, "_", TimeText(context.unix_time_s));
  path = absl::StrCat(stem, ".json");
  for (int n = 2; n < 1000 && Exists(path, &is_symlink); ++n) {
    path = absl::StrCat(stem, "_", n, ".json");
  }
  return path;
}

}  // namespace

PathContext CurrentPathContext(int64_t rank) {
  PathContext context;
  context.pid = static_cast<int64_t>(::getpid());
  context.rank = rank;
  context.unix_time_s = static_cast<int64_t>(::time(nullptr));
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) context.host = host;
  return context;
}

std::string DefaultTraceDir(const EnvSettings& env) {
  return env.trace_dir.empty() ? env.tmp_dir : env.trace_dir;
}

std::string DefaultTracePath(std::string_view dir, int64_t pid) {
  return absl::StrCat(WithSlash(dir), "libkineto_activities_", pid, ".json");
}

std::string InsertPidSuffix(std::string_view path, int64_t pid, int64_t rank) {
  const size_t name_start = path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1;
  const std::string_view name = path.substr(name_start);
  size_t at = name.find(".pt.trace.json");
  if (at == std::string_view::npos) at = name.find(".json");
  if (at == std::string_view::npos) return std::string(path);
  return absl::StrCat(AV(path.substr(0, name_start + at)),
                      rank >= 0 ? absl::StrCat("_rank", rank) : std::string(), "_", pid,
                      AV(path.substr(name_start + at)));
}

std::string ExpandPathTemplate(std::string_view path, const PathContext& context) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    const std::string_view rest = path.substr(i);
    if (rest.substr(0, 5) == "{pid}") {
      absl::StrAppend(&out, context.pid);
      i += 5;
    } else if (rest.substr(0, 6) == "{rank}") {
      absl::StrAppend(&out, context.rank < 0 ? 0 : context.rank);
      i += 6;
    } else if (rest.substr(0, 6) == "{time}") {
      out += TimeText(context.unix_time_s);
      i += 6;
    } else if (rest.substr(0, 6) == "{host}") {
      out += SafeHost(context.host);
      i += 6;
    } else {
      out += path[i++];
    }
  }
  return out;
}

std::string ResolveOutputPath(std::string_view configured, std::string_view default_dir,
                              const PathContext& context) {
  if (configured.empty()) return DefaultTracePath(default_dir, context.pid);
  const std::string expanded = ExpandPathTemplate(configured, context);
  if (configured.find("{pid}") != std::string_view::npos) return expanded;
  const bool names_rank = configured.find("{rank}") != std::string_view::npos;
  return InsertPidSuffix(expanded, context.pid, names_rank ? -1 : context.rank);
}

std::string OnDemandAllowedDir(const EnvSettings& env) {
  if (!env.ondemand_trace_dir.empty()) return WithSlash(env.ondemand_trace_dir);
  if (!env.trace_dir.empty()) return WithSlash(env.trace_dir);
  return WithSlash(env.tmp_dir);
}

OnDemandPath ResolveOnDemandPath(std::string_view requested, std::string_view allowed_dir,
                                 const PathContext& context) {
  const std::string allowed = WithSlash(allowed_dir);
  OnDemandPath result;
  if (requested.empty()) {
    result.path = FreshDefaultPath(allowed, context);
    return result;
  }
  const std::string path = ResolveOutputPath(requested, allowed, context);
  const std::string reason = RefusalReason(requested, path, allowed);
  if (reason.empty()) {
    result.path = path;
    return result;
  }
  result.path = FreshDefaultPath(allowed, context);
  result.replaced = true;
  // The requested text is untrusted: bound it so a hostile request cannot flood the log.
  result.message = absl::StrCat(
      "on-demand ACTIVITIES_LOG_FILE ", internal::QuoteForLog(requested, 200), " refused: ",
      path == requested ? "it "
                        : absl::StrCat("resolved path ", internal::QuoteForLog(path, 200), " "),
      reason, "; writing to ", result.path, " instead");
  return result;
}

}  // namespace kairos
