// File: config_fuzz.cc
// Layer: fuzz entry point for the config parser (libFuzzer signature). Feeds the bytes to
// ParseConfig from every source, round-trips accepted configs through ConfigToText, and
// runs the on-demand path rule on the parsed log file. Must never crash, hang or leak.
// Threading: single-threaded per call.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/output_path.h"

extern "C" int KairosFuzzConfig(const uint8_t* data, size_t size) {
  using namespace kairos;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (ConfigSource source : {ConfigSource::kFile, ConfigSource::kDaemon}) {
    ParseOptions options;
    options.source = source;
    options.now_unix_ms = 1763772000000;
    std::vector<std::string> warnings;
    absl::StatusOr<Config> config = ParseConfig(text, Config{}, options, &warnings);
    if (!config.ok()) continue;
    // Whatever parses must read back to the same text. The canonical text is trace
    // metadata (trusted), not a request, so it is read back as a file would be.
    const std::string canonical = ConfigToText(*config);
    ParseOptions trusted = options;
    trusted.source = ConfigSource::kFile;
    absl::StatusOr<Config> again = ParseConfig(canonical, Config{}, trusted, &warnings);
    if (!again.ok() || ConfigToText(*again) != canonical) __builtin_trap();
    if (source == ConfigSource::kDaemon) {
      PathContext context;
      context.pid = 1;
      // A directory that does not exist: the rule must refuse without touching the disk.
      (void)ResolveOnDemandPath(config->log_file, "/nonexistent-kairos-fuzz/", context);
    }
  }
  return 0;
}
