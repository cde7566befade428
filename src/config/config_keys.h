// File: config_keys.h
// Layer: kairos_config (internal). The single key table: name, type, range, default, doc and
// setter of every config key. ParseConfig, ConfigToText and the generated key tables in
// docs/CONFIG.md are all driven by it, so a key cannot exist in one and not the others.
// Threading: the table is compile-time constant data.
#ifndef KAIROS_SRC_CONFIG_CONFIG_KEYS_H_
#define KAIROS_SRC_CONFIG_CONFIG_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "config/config.h"

namespace kairos::internal {

enum class KeyType : uint8_t { kBool, kInt, kString, kList, kCustom };

enum class KeyKind : uint8_t {
  kKineto,   // current libkineto key, same name and semantics
  kAlias,    // older libkineto name for another key
  kInert,    // libkineto key for another backend/build: validated, then has no effect
  kKairos,   // KAIROS_ key
  kRemoved,  // removed from libkineto: warned about and ignored
};

// Extra integer validation beyond the [min, max] range.
enum class IntCheck : uint8_t {
  kNone,
  kNotPast,      // PROFILE_START_TIME: more than 10 s before now is an error
  kZeroIgnored,  // PROFILE_START_ITERATION_ROUNDUP: 0 is warned about and ignored
};

inline constexpr int64_t kInt32Max = 2147483647;
inline constexpr int64_t kInt64Max = INT64_MAX;

struct ConfigKey {
  std::string_view name;
  KeyType type = KeyType::kBool;
  KeyKind kind = KeyKind::kKineto;
  int64_t min_value = 0;
  int64_t max_value = kInt32Max;
  IntCheck int_check = IntCheck::kNone;
  // The on-demand whitelist: a daemon request may set this key (every other key in a request
  // rejects the whole request by name). Keys left out are base-only: settings of the
  // in-process loader, memory and exit-time bounds, and paths that would bypass the on-demand
  // output directory restriction.
  bool daemon = false;
  // Upper bound for an integer set by a daemon request (-1 = max_value). Keeps a request from
  // raising a cost the job owner did not choose (duration, zstd level, ...).
  int64_t daemon_max_value = -1;
  // Accepted (and validated) for compatibility but not implemented by kairos: setting it
  // warns once per config text, by name.
  bool unimplemented = false;
  std::string_view default_text;  // for docs
  std::string_view doc;           // for docs: meaning and kairos behaviour
  std::string_view target;        // alias: the key it stands for; removed: why
  std::string_view custom_type;   // kCustom: "list" or "choice" (for docs)

  // Where a parsed value goes. For kBool/kInt/kString/kList one field pointer or an apply
  // function is set (apply functions have side effects beyond one field). None are set for
  // inert and removed keys.
  bool Config::*bool_field = nullptr;
  int64_t Config::*int_field = nullptr;
  std::string Config::*string_field = nullptr;
  std::vector<std::string> Config::*list_field = nullptr;
  void (*apply_bool)(Config&, bool) = nullptr;
  void (*apply_int)(Config&, int64_t) = nullptr;
  // kCustom: parses `value` into the config; returns "" or the reason it is invalid.
  std::string (*apply_custom)(Config&, std::string_view value) = nullptr;
  // kCustom: the canonical text of the current value (for ConfigToText).
  std::string (*custom_text)(const Config&) = nullptr;
};

// Debian's abseil is built without std::string_view support, so absl::StrCat and friends need
// this explicit conversion.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Longest string or list value any config source may set (PATH_MAX on Linux).
inline constexpr size_t kMaxValueBytes = 4096;
// PROFILE_START_TIME may be at most this far in the future (24 h): a farther start is a typo
// or an attack, and bounding it keeps every later ms->ns conversion far from overflow.
inline constexpr int64_t kMaxStartTimeAheadMs = 24LL * 3600 * 1000;

// The upper bound for `k` in a text from `source`.
inline int64_t MaxValueFor(const ConfigKey& k, ConfigSource source) {
  return source == ConfigSource::kDaemon && k.daemon_max_value >= 0 ? k.daemon_max_value
                                                                    : k.max_value;
}

// Every known key (current, alias, inert, kairos and removed), in documentation order.
absl::Span<const ConfigKey> ConfigKeys();

// nullptr if `name` is not a known key. Names are case-sensitive.
const ConfigKey* FindConfigKey(std::string_view name);

// Case-insensitive Kineto booleans: n y no yes f t false true 0 1. False if not one of them.
bool ParseConfigBool(std::string_view text, bool* value);

// Comma-separated items, each trimmed of space/tab/CR/LF; empty items are dropped.
std::vector<std::string> SplitConfigList(std::string_view text);

// `s` in double quotes for a log line, cut after `max_chars` (then "..."), with control bytes,
// '"' and '\\' written as \xNN, so untrusted text (daemon requests) cannot flood or forge logs.
std::string QuoteForLog(std::string_view s, size_t max_chars);

// The markdown key tables of docs/CONFIG.md (between its GENERATED markers).
std::string ConfigKeysMarkdown();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_CONFIG_CONFIG_KEYS_H_
