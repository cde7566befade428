// File: trace_hosts.cc
// Layer: tools. See trace_hosts.h.
// Threading: see trace_hosts.h; the table's mutex guards every slot.
#include "trace_hosts.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "daemon_rpc.h"

namespace kairos::tools {
namespace {

absl::StatusOr<HostPort> ParseOne(std::string_view entry, int default_port) {
  const auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", std::string(entry), "'"));
  };
  HostPort hp;
  hp.port = default_port;
  std::string_view host = entry, port;
  bool has_port = false;
  if (entry[0] == '[') {  // [v6] or [v6]:port
    const size_t close = entry.find(']');
    if (close == std::string_view::npos) return bad("bad host");
    host = entry.substr(1, close - 1);
    const std::string_view rest = entry.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return bad("bad host");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else if (const size_t colon = entry.find(':'); colon != std::string_view::npos) {
    if (entry.find(':', colon + 1) != std::string_view::npos)
      return bad("write IPv6 addresses as [addr]:port, not");
    host = entry.substr(0, colon);
    port = entry.substr(colon + 1);
    has_port = true;
  }
  if (host.empty()) return bad("bad host");
  if (has_port) {
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos)
      return bad("bad port in");
    const int p = std::stoi(std::string(port));
    if (p < 1 || p > 65535) return bad("bad port in");
    hp.port = p;
  }
  hp.host = std::string(host);
  return hp;
}

}  // namespace

std::string HostPort::Label() const {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

absl::StatusOr<std::vector<HostPort>> ParseHostList(std::string_view text, int default_port) {
  std::vector<HostPort> out;
  std::set<std::pair<std::string, int>> seen;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != ' ' && text[j] != '\t' &&
           text[j] != '\n' && text[j] != '\r' && text[j] != '#')
      ++j;
    absl::StatusOr<HostPort> hp = ParseOne(text.substr(i, j - i), default_port);
    if (!hp.ok()) return hp.status();
    if (seen.insert({hp->host, hp->port}).second) out.push_back(*hp);
    if (out.size() > kMaxHosts)
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxHosts, " hosts"));
    i = j;
  }
  if (out.empty()) return absl::InvalidArgumentError("no hosts given");
  return out;
}

std::vector<HostReply> CallHosts(const std::vector<HostPort>& hosts, const std::string& request,
                                 int timeout_ms) {
  struct Table {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<HostReply> replies;
    // Each reply's status as plain data: an absl::Status shares a reference-counted rep, and
    // the last worker to exit would free reps the caller had copied (Debian's abseil is not
    // TSan-instrumented, so that hand-over is invisible to it). The caller builds the
    // statuses on its own thread.
    std::vector<std::pair<absl::StatusCode, std::string>> status;
    size_t next = 0;  // the next host a worker takes
    size_t left = 0;  // hosts not yet answered
  };
  auto table = std::make_shared<Table>();
  table->replies.resize(hosts.size());
  table->status.resize(hosts.size());
  table->left = hosts.size();
  for (size_t i = 0; i < hosts.size(); ++i) table->replies[i].target = hosts[i];
  // A little past the RPCs' own deadline, so their own errors ("connect timed out") come back.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms + 250);
  // Workers take hosts one by one: every host is asked at once up to kMaxWorkers; past that,
  // hosts wait for a worker, and those still waiting at the deadline are reported unasked.
  const size_t workers = std::min(hosts.size(), kMaxWorkers);
  for (size_t w = 0; w < workers; ++w) {
    try {
      std::thread([table, request, timeout_ms, deadline] {
        while (true) {
          size_t i;
          HostPort host;
          {
            std::lock_guard<std::mutex> lock(table->mu);
            if (table->next == table->replies.size() || std::chrono::steady_clock::now() >= deadline) return;
            i = table->next++;
            host = table->replies[i].target;
          }
          absl::StatusOr<std::string> reply = CallRpc(host.host, host.port, request, timeout_ms);
          std::lock_guard<std::mutex> lock(table->mu);
          HostReply& r = table->replies[i];
          r.done = true;
          table->status[i] = {reply.status().code(), std::string(reply.status().message())};
          if (reply.ok()) r.reply = std::move(*reply);
          if (--table->left == 0) table->cv.notify_all();
        }
      }).detach();
    } catch (const std::system_error&) {
      break;  // out of threads: the workers already started take the rest
    }
  }
  std::unique_lock<std::mutex> lock(table->mu);
  table->cv.wait_until(lock, deadline, [&] { return table->left == 0; });
  std::vector<HostReply> out = table->replies;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].done) {
      out[i].status = absl::Status(table->status[i].first, table->status[i].second);
      continue;
    }
    out[i].status = i >= table->next
                        ? absl::DeadlineExceededError(absl::StrCat(
                              "not asked: ", kMaxWorkers, " hosts at a time and no worker was free within ",
                              timeout_ms, " ms"))
                        : absl::DeadlineExceededError(absl::StrCat("no answer within ", timeout_ms, " ms"));
  }
  return out;
}

}  // namespace kairos::tools
