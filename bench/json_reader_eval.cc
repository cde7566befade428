// File: json_reader_eval.cc
// Layer: bench (not part of bench_all). The measurement behind docs/PERFORMANCE.md's "JSON
// reader: hand-written vs simdjson" section: reads one Kineto JSON trace with
//   read      read(2) in 64 KiB chunks (the I/O floor)
//   kairos    ReadKinetoJsonFile (kairos_json's streaming parser; one event at a time)
//   simdjson  simdjson On Demand over the whole file loaded into a padded buffer (its API
//             needs the complete document in memory)
// doing the same work per event in both parsers (ph/cat/name, ts and dur as exact ns text,
// args.correlation), and prints MB/s. Run each mode in its own process under
// /usr/bin/time -v for peak RSS. Built only where libsimdjson-dev is installed:
//   cmake --build build --target json_reader_eval
//   build/bench/json_reader_eval kairos|simdjson|read TRACE.json
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "output/json_reader.h"
#include "simdjson.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: json_reader_eval kairos|simdjson|read TRACE.json\n");
    return 2;
  }
  const std::string mode = argv[1], path = argv[2];
  uint64_t events = 0, bytes = 0, kernels = 0, corr_sum = 0;
  int64_t dur_sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (mode == "read") {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    std::unique_ptr<char[]> buf(new char[64 * 1024]);
    for (ssize_t n; (n = read(fd, buf.get(), 64 * 1024)) > 0;) bytes += static_cast<uint64_t>(n);
    close(fd);
  } else if (mode == "kairos") {
    kairos::KinetoJsonCallbacks cb;
    cb.on_event = [&](const kairos::KinetoEvent& ev) {
      ++events;
      if (ev.cat == "kernel") ++kernels;
      dur_sum += ev.dur_ns;
      if (const kairos::JsonValue* c = ev.args.Find("correlation")) corr_sum += c->AsUint();
    };
    kairos::KinetoJsonStats stats;
    const absl::Status st = kairos::ReadKinetoJsonFile(path, cb, &stats);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
      return 1;
    }
    bytes = stats.bytes;
  } else if (mode == "simdjson") {
    using namespace simdjson;
    padded_string json;
    if (padded_string::load(path).get(json)) return 1;
    bytes = json.size();
    ondemand::parser parser;
    ondemand::document doc = parser.iterate(json);
    for (auto field : doc.get_object()) {
      std::string_view key = field.unescaped_key();
      if (key != "traceEvents") continue;
      for (ondemand::object ev : field.value().get_array()) {
        ++events;
        for (auto f : ev) {
          std::string_view k = f.unescaped_key();
          if (k == "cat") {
            if (f.value().get_string().value() == "kernel") ++kernels;
          } else if (k == "ph" || k == "name") {
            (void)f.value().get_string().value();
          } else if (k == "ts" || k == "dur") {
            // Exact ns needs the number's text (a double loses the 3 ns digits of a 2026 ts).
            std::string_view t = f.value().raw_json_token();
            if (k == "dur") dur_sum += static_cast<int64_t>(std::strtod(std::string(t).c_str(), nullptr) * 1000);
          } else if (k == "args") {
            ondemand::object args = f.value().get_object();
            for (auto a : args) {
              if (a.unescaped_key().value() == "correlation") corr_sum += a.value().get_uint64().value();
            }
          }
        }
      }
    }
  } else {
    return 2;
  }
  const double s = Seconds(t0);
  std::printf("%s: %llu events (%llu kernels) in %.2f s: %.0f MB/s [checks: dur %lld, corr %llu]\n",
              mode.c_str(), (unsigned long long)events, (unsigned long long)kernels, s,
              bytes / s / 1e6, (long long)dur_sum, (unsigned long long)corr_sum);
  return 0;
}
