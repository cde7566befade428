// File: spawn_util.h
// Layer: bench. Child-process helpers the process-level benchmarks share
// (footprint_benchmark, attach_overhead_benchmark): locate the build
// tree, spawn a command with extra environment and capture its stdout, wall time and peak
// RSS, and small statistics.
// Threading: single-threaded callers; one child at a time.
#ifndef KAIROS_BENCH_SPAWN_UTIL_H_
#define KAIROS_BENCH_SPAWN_UTIL_H_

#include <dirent.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

extern char** environ;

namespace kairos::bench {

// <build> when this binary is <build>/bench/<name>.
inline std::string BuildDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string exe(buf, static_cast<size_t>(n));
  exe = exe.substr(0, exe.rfind('/'));  // <build>/bench
  return exe.substr(0, exe.rfind('/'));
}

inline bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

struct Child {
  bool ok = false;      // exited with status 0
  int exit_code = -1;   // -1: did not exit normally (signal) or could not be spawned
  long max_rss_kb = 0;  // ru_maxrss from wait4
  double wall_ms = 0;   // spawn to exit
  std::string out;      // stdout
};

// Runs `argv` with `extra_env` put before this process's environment (so it wins for
// getenv), stdout captured, stderr inherited.
inline Child Spawn(const std::vector<std::string>& argv,
                   const std::vector<std::string>& extra_env) {
  Child c;
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy(argv);
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof(buf))) > 0) c.out.append(buf, static_cast<size_t>(n));
  close(out[0]);
  if (rc != 0) return c;
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return c;
  c.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
  c.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  c.ok = c.exit_code == 0;
  return c;
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Removes every entry of `dir` (not recursive); returns how many names contained `marker`
// and how many did not (marker "" counts all as not).
struct Removed {
  int with_marker = 0, without_marker = 0;
};
inline Removed RemoveAll(const std::string& dir, const std::string& marker = "") {
  Removed r;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (!marker.empty() && name.find(marker) != std::string::npos) {
        ++r.with_marker;
      } else {
        ++r.without_marker;
      }
      unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  return r;
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_SPAWN_UTIL_H_
