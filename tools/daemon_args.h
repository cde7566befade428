// File: daemon_args.h
// Layer: tools. Tiny "--name value" / "--name=value" / "--flag" parser shared by
// `kairos daemon` and `kairos trace` (dyno's clap-style spelling).
// Threading: single-threaded CLI code.
#ifndef KAIROS_TOOLS_DAEMON_ARGS_H_
#define KAIROS_TOOLS_DAEMON_ARGS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos::tools {

class ArgParser {
 public:
  // `flags`: options without a value; `valued`: options that take one. Names include "--".
  ArgParser(std::set<std::string> flags, std::set<std::string> valued)
      : flags_(std::move(flags)), valued_(std::move(valued)) {}
  // argv[0] is the subcommand name. Unknown options and missing values are errors.
  absl::Status Parse(int argc, char** argv);
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  std::string Get(const std::string& name, const std::string& fallback) const;
  // Whole-string integer parse with range check; the error names the option.
  absl::StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback, int64_t min,
                                 int64_t max) const;

 private:
  std::set<std::string> flags_, valued_;
  std::map<std::string, std::string> values_;
};

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_ARGS_H_
