// File: daemon_process_util.h
// Layer: test (daemon). Child processes for the end-to-end tests: spawn with extra
// environment, read a pipe line by line with a deadline, wait for files with inotify. No
// sleeps: every wait is a poll(2) on a pipe or an inotify fd with a deadline.
// Threading: single-threaded test helpers.
#ifndef KAIROS_TEST_DAEMON_DAEMON_PROCESS_UTIL_H_
#define KAIROS_TEST_DAEMON_DAEMON_PROCESS_UTIL_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

extern char** environ;

namespace kairos::testing {

inline int64_t MonoMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A child whose `pipe_stdout` or `pipe_stderr` stream is readable line by line.
struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of the piped stream
  std::string buffer;
  std::string all;  // everything read so far

  // Next line (without '\n'), or "" with *ok=false after the deadline or EOF.
  std::string ReadLine(int timeout_ms, bool* ok) {
    const int64_t deadline = MonoMs() + timeout_ms;
    while (true) {
      const size_t nl = buffer.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        *ok = true;
        return line;
      }
      const int64_t left = deadline - MonoMs();
      pollfd p{out, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char chunk[4096];
      const ssize_t n = read(out, chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      all.append(chunk, static_cast<size_t>(n));
    }
    *ok = false;
    return "";
  }
  // Reads lines until one contains `needle`; false on timeout/EOF.
  bool WaitFor(const std::string& needle, int timeout_ms) {
    const int64_t deadline = MonoMs() + timeout_ms;
    bool ok = true;
    while (ok) {
      const int64_t left = deadline - MonoMs();
      if (left <= 0) return false;
      if (ReadLine(static_cast<int>(left), &ok).find(needle) != std::string::npos && ok) {
        return true;
      }
    }
    return false;
  }
  // Waits for exit; returns the exit status or -1 (killed after the timeout).
  int Wait(int timeout_ms) {
    const int64_t deadline = MonoMs() + timeout_ms;
    int status = 0;
    while (true) {
      // Keep the pipe drained so the child never blocks on a full pipe while exiting.
      bool ok = true;
      ReadLine(10, &ok);
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (MonoMs() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
      }
    }
    if (out >= 0) {
      bool ok = true;
      while (ReadLine(0, &ok), ok) {
      }
      close(out);
      out = -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

// Spawns argv with `extra_env` added. One stream is piped: stdout if `pipe_stderr` is false,
// else stderr; the other goes to `other_file` (or /dev/null when empty).
inline Child Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                   bool pipe_stderr, const std::string& other_file = "") {
  Child child;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return child;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], pipe_stderr ? 2 : 1);
  posix_spawn_file_actions_addopen(&actions, pipe_stderr ? 1 : 2,
                                   other_file.empty() ? "/dev/null" : other_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
  for (const std::string& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp, args;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  if (posix_spawn(&child.pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) {
    child.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.out = fds[0];
  return child;
}

// Waits until `count` files whose names fully match `pattern` have been created (closed
// after writing, or renamed into the watched directory). Returns the names seen.
inline std::vector<std::string> WaitForFiles(int inotify_fd, const std::string& pattern,
                                             size_t count, int timeout_ms) {
  const std::regex re(pattern);
  std::vector<std::string> seen;
  const int64_t deadline = MonoMs() + timeout_ms;
  while (seen.size() < count) {
    const int64_t left = deadline - MonoMs();
    pollfd p{inotify_fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
    alignas(inotify_event) char buf[8192];
    const ssize_t n = read(inotify_fd, buf, sizeof(buf));
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      if (ev->len > 0 && std::regex_match(std::string(ev->name), re)) {
        seen.push_back(ev->name);
      }
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return seen;
}

}  // namespace kairos::testing

#endif  // KAIROS_TEST_DAEMON_DAEMON_PROCESS_UTIL_H_
