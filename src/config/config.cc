// File: config.cc
// Layer: kairos_config. ParseConfig (the Kineto key=value syntax, config-and-env.md §2 with
// kairos's fixes) and ConfigToText, both driven by the key table in config_keys.cc.
// Threading: pure functions; safe from any thread.
#include "config/config.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/clock.h"
#include "config/config_keys.h"
#include "util/log.h"
#include "util/trim.h"

namespace kairos {
namespace {

using internal::AV;
using internal::ConfigKey;
using internal::KeyKind;
using internal::KeyType;

constexpr int64_t kMaxStartTimeAgeMs = 10000;
constexpr size_t kMaxQuoted = 64;


// The first control byte of `s` (tab is allowed inside a value), or -1. A NUL would cut a
// path short at the first system call, CR/ESC could forge log lines: all are rejected.
int FirstControlByte(std::string_view s) {
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return c;
  }
  return -1;
}

std::string Quote(std::string_view s) { return internal::QuoteForLog(s, kMaxQuoted); }

std::string ExpectedInt(const ConfigKey& k, int64_t max_value) {
  return absl::StrCat("expected an integer in [", k.min_value, ", ", max_value, "]");
}

// Decimal, optional sign, every character consumed, range [k.min_value, max_value]; the
// magnitude is accumulated with an overflow check, so no input is undefined behaviour.
// Returns "" or the reason.
std::string ParseInt(std::string_view v, const ConfigKey& k, int64_t max_value, int64_t* out) {
  size_t i = 0;
  const bool negative = !v.empty() && v[0] == '-';
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) i = 1;
  if (i == v.size()) return absl::StrCat(Quote(v), " is not an integer; ", ExpectedInt(k, max_value));
  uint64_t magnitude = 0;
  bool overflow = false;
  for (; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') {
      return absl::StrCat(Quote(v), " is not an integer; ", ExpectedInt(k, max_value));
    }
    const uint64_t digit = static_cast<uint64_t>(v[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) {
      overflow = true;
    } else {
      magnitude = magnitude * 10 + digit;
    }
  }
  if (negative && magnitude != 0) {
    return absl::StrCat(Quote(v), " is negative; ", ExpectedInt(k, max_value));
  }
  if (overflow || magnitude > static_cast<uint64_t>(max_value) ||
      static_cast<int64_t>(magnitude) < k.min_value) {
    return absl::StrCat(Quote(v), " is out of range; ", ExpectedInt(k, max_value));
  }
  *out = static_cast<int64_t>(magnitude);
  return "";
}

int64_t NowUnixMs(const ParseOptions& options) {
  return options.now_unix_ms != 0 ? options.now_unix_ms : UnixNowNs() / 1000000;
}

// Applies one value; returns "" or the reason it is invalid. `warning` receives a non-error
// remark (ROUNDUP=0).
std::string Apply(const ConfigKey& k, std::string_view value, const ParseOptions& options,
                  Config& config, std::string* warning) {
  switch (k.type) {
    case KeyType::kBool: {
      bool b = false;
      if (!internal::ParseConfigBool(value, &b)) {
        return absl::StrCat(Quote(value),
                            " is not a boolean; expected one of n y no yes f t false true 0 1");
      }
      if (k.apply_bool != nullptr) {
        k.apply_bool(config, b);
      } else if (k.bool_field != nullptr) {
        config.*k.bool_field = b;
      }
      return "";
    }
    case KeyType::kInt: {
      int64_t n = 0;
      std::string reason = ParseInt(value, k, internal::MaxValueFor(k, options.source), &n);
      if (!reason.empty()) {
        if (options.source == ConfigSource::kDaemon && k.daemon_max_value >= 0)
          absl::StrAppend(&reason, " (the on-demand limit)");
        return reason;
      }
      if (k.int_check == internal::IntCheck::kNotPast && n != 0) {
        const int64_t now = NowUnixMs(options);
        if (n < now - kMaxStartTimeAgeMs) {
          return absl::StrCat(Quote(value), " is more than 10 s in the past (now is ", now,
                              " Unix ms)");
        }
        if (n > now + internal::kMaxStartTimeAheadMs) {
          return absl::StrCat(Quote(value), " is more than 24 h in the future (now is ", now,
                              " Unix ms)");
        }
      }
      if (k.int_check == internal::IntCheck::kZeroIgnored && n == 0) {
        *warning = "0 is invalid (must be > 0); ignored";
        return "";
      }
      if (k.apply_int != nullptr) {
        k.apply_int(config, n);
      } else if (k.int_field != nullptr) {
        config.*k.int_field = n;
      }
      return "";
    }
    case KeyType::kString:
      if (k.string_field != nullptr) config.*k.string_field = std::string(value);
      return "";
    case KeyType::kList:
      if (k.list_field != nullptr) config.*k.list_field = internal::SplitConfigList(value);
      return "";
    case KeyType::kCustom:
      return k.apply_custom(config, value);
  }
  return "";
}

// A value ConfigToText can write so that ParseConfig reads it back unchanged.
bool Representable(std::string_view v) { return ConfigTextValueProblem(v).empty(); }

}  // namespace

bool KeyNamesWindow(std::string_view key) {
  static constexpr std::string_view kKeys[] = {
      "PROFILE_START_TIME",       "PROFILE_START_ITERATION",   "PROFILE_START_ITERATION_ROUNDUP",
      "ACTIVITIES_ITERATIONS",    "ACTIVITIES_DURATION_MSECS", "ACTIVITIES_DURATION_SECS",
      "ACTIVITIES_WARMUP_PERIOD_SECS", "ACTIVITIES_WARMUP_ITERATIONS"};
  for (std::string_view k : kKeys) {
    if (key == k) return true;
  }
  return false;
}

namespace {

// One parse: the config being built, what was seen, and the remarks to report.
struct ConfigParser {
  const ParseOptions& options;
  Config config;
  ConfigParseInfo seen;
  std::vector<std::string> remarks;
  std::set<std::string, std::less<>> warned_keys;

  // `where` is "config line N" for text, "config value N" for a value given as data.
  void WarnOnce(std::string_view where, std::string_view key, std::string_view why) {
    if (!warned_keys.insert(std::string(key)).second) return;
    remarks.push_back(absl::StrCat(AV(where), ": ", AV(key), ": ", AV(why)));
  }
  static absl::Status Error(std::string_view where, std::string_view key, std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(AV(where), ": ", AV(key), ": ", AV(why)));
  }

  // One KEY=VALUE, from a text line or given as data; `checked` is everything the control
  // character rule applies to (the whole line for text).
  absl::Status ApplyOne(std::string_view where, std::string_view key, std::string_view value,
                        std::string_view checked) {
    if (const int c = FirstControlByte(checked); c >= 0) {
      return Error(where, FirstControlByte(key) < 0 ? std::string(key) : Quote(key),
                   absl::StrCat("contains the control character \\x", absl::Hex(c, absl::kZeroPad2),
                                " (NUL and control characters are never accepted)"));
    }
    const ConfigKey* k = internal::FindConfigKey(key);
    // An on-demand request may set only whitelisted keys; anything else rejects the whole
    // request by name, so a remote party cannot change what it was not granted (and a typo
    // in a request is reported to the person who sent it, not silently dropped).
    if (options.source == ConfigSource::kDaemon && (k == nullptr || !k->daemon)) {
      return Error(where, Quote(key),
                   k == nullptr ? "unknown key; not accepted in an on-demand (daemon) request"
                                : "not accepted in an on-demand (daemon) request (base config "
                                  "only, docs/CONFIG.md)");
    }
    if (k == nullptr) {
      WarnOnce(where, Quote(key), "unrecognized key; ignored");
      return absl::OkStatus();
    }
    if (k->kind == KeyKind::kRemoved) {
      WarnOnce(where, key, absl::StrCat("removed key (", AV(k->target), "); ignored"));
      return absl::OkStatus();
    }
    if ((k->type == KeyType::kString || k->type == KeyType::kList || k->type == KeyType::kCustom) &&
        value.size() > internal::kMaxValueBytes) {
      return Error(where, key,
                   absl::StrCat("value is ", value.size(), " bytes; the limit is ",
                                internal::kMaxValueBytes));
    }
    std::string remark;
    const std::string reason = Apply(*k, value, options, config, &remark);
    if (!reason.empty()) return Error(where, key, reason);
    if (!remark.empty()) remarks.push_back(absl::StrCat(AV(where), ": ", AV(key), ": ", remark));
    if (k->unimplemented) WarnOnce(where, key, "accepted but not implemented by kairos; no effect");
    if (std::find(seen.keys_set.begin(), seen.keys_set.end(), key) == seen.keys_set.end())
      seen.keys_set.emplace_back(key);
    if (KeyNamesWindow(key)) seen.names_window = true;
    return absl::OkStatus();
  }

  absl::Status ApplyText(std::string_view text) {
    int line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      // '#' starts a comment anywhere, as in libkineto: a value cannot contain '#'.
      line = TrimBlanks(line.substr(0, line.find('#')));
      if (line.empty()) continue;
      // Splitting at every '=' (not the first) keeps libkineto's rule: "A=b=c" is invalid.
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos || line.find('=', eq + 1) != std::string_view::npos ||
          TrimBlanks(line.substr(0, eq)).empty()) {
        return absl::InvalidArgumentError(absl::StrCat("config line ", line_no,
                                                       ": invalid config line ", Quote(line),
                                                       "; expected KEY=VALUE with exactly one '='"));
      }
      const std::string where = absl::StrCat("config line ", line_no);
      if (absl::Status s = ApplyOne(where, TrimBlanks(line.substr(0, eq)),
                                    TrimBlanks(line.substr(eq + 1)), line);
          !s.ok())
        return s;
    }
    return absl::OkStatus();
  }

  // Values given as data: taken as they are (no comment, '=' or trimming rule); the key and
  // value are both checked for control characters.
  absl::Status ApplyValues(const std::vector<ConfigValue>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string where = absl::StrCat("config value ", i + 1);
      if (values[i].key.empty() || TrimBlanks(values[i].key) != values[i].key ||
          values[i].key.find_first_of("#=") != std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": invalid key ", Quote(values[i].key), "; expected a key name"));
      }
      const int kc = FirstControlByte(values[i].key);
      if (absl::Status s = ApplyOne(where, values[i].key, values[i].value,
                                    kc >= 0 ? values[i].key : values[i].value);
          !s.ok())
        return s;
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<Config> ParseConfig(std::string_view text, const Config& base,
                                   const ParseOptions& options,
                                   std::vector<std::string>* warnings) {
  return ParseConfig(text, base, options, warnings, nullptr);
}

absl::StatusOr<Config> ParseConfig(std::string_view text, const Config& base,
                                   const ParseOptions& options, std::vector<std::string>* warnings,
                                   ConfigParseInfo* info) {
  return ParseConfig(text, {}, base, options, warnings, info);
}

absl::StatusOr<Config> ParseConfig(std::string_view text, const std::vector<ConfigValue>& values,
                                   const Config& base, const ParseOptions& options,
                                   std::vector<std::string>* warnings, ConfigParseInfo* info) {
  ConfigParser p{options, base, {}, {}, {}};
  if (absl::Status s = p.ApplyText(text); !s.ok()) return s;
  if (absl::Status s = p.ApplyValues(values); !s.ok()) return s;
  Config& config = p.config;
  // Derived defaults (config-and-env.md §5), only after the whole text parsed.
  if (config.profile_start_iteration_roundup > 0 && config.profile_start_iteration < 0) {
    config.profile_start_iteration = 0;
  }
  for (std::string& r : p.remarks) {
    if (warnings != nullptr) {
      warnings->push_back(std::move(r));
    } else {
      KAIROS_LOG_WARNING("%s", r.c_str());
    }
  }
  if (info != nullptr) *info = std::move(p.seen);
  return std::move(config);
}

std::string ConfigTextValueProblem(std::string_view value) {
  if (value.find('#') != std::string_view::npos) return "contains '#' (a comment starts there)";
  if (value.find('=') != std::string_view::npos)
    return "contains '=' (a config line has exactly one)";
  if (const int c = FirstControlByte(value); c >= 0)
    return absl::StrCat("contains the control character \\x", absl::Hex(c, absl::kZeroPad2));
  if (TrimBlanks(value) != value) return "has leading or trailing blanks (they are trimmed)";
  if (value.size() > internal::kMaxValueBytes)
    return absl::StrCat("is ", value.size(), " bytes; the limit is ", internal::kMaxValueBytes);
  return "";
}

std::string ConfigToText(const Config& config) {
  std::string out;
  for (const ConfigKey& k : internal::ConfigKeys()) {
    if (k.kind != KeyKind::kKineto && k.kind != KeyKind::kKairos) continue;
    std::string value;
    bool representable = true;
    switch (k.type) {
      case KeyType::kBool:
        if (k.bool_field == nullptr) continue;
        value = (config.*k.bool_field) ? "true" : "false";
        break;
      case KeyType::kInt:
        // Negative means "unset" and cannot be written; it reads back as the default.
        if (k.int_field == nullptr || config.*k.int_field < 0) continue;
        value = absl::StrCat(config.*k.int_field);
        // ACTIVITIES_DURATION_SECS can set more ms than ACTIVITIES_DURATION_MSECS accepts.
        if (k.int_field == &Config::duration_ms && config.duration_ms > k.max_value) {
          representable = config.duration_ms % 1000 == 0;
          if (representable) {
            absl::StrAppend(&out, "ACTIVITIES_DURATION_SECS=", config.duration_ms / 1000, "\n");
            continue;
          }
        }
        break;
      case KeyType::kString:
        value = config.*k.string_field;
        representable = Representable(value);
        break;
      case KeyType::kList:
        for (const std::string& item : config.*k.list_field) {
          representable = representable && !item.empty() && Representable(item) &&
                          item.find(',') == std::string::npos;
        }
        value = absl::StrJoin(config.*k.list_field, ",");
        break;
      case KeyType::kCustom:
        value = k.custom_text(config);
        representable = Representable(value);
        break;
    }
    if (representable) {
      absl::StrAppend(&out, AV(k.name), "=", value, "\n");
    } else {
      absl::StrAppend(&out, "# ", AV(k.name), ": value not representable\n");
    }
  }
  return out;
}

}  // namespace kairos
