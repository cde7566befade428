// File: string_table.h
// Layer: kairos_model. Interns strings once per session; ids are dense and stable.
// Threading: not thread-safe; owned and used by one kairos thread at a time.
#ifndef KAIROS_SRC_STRING_TABLE_H_
#define KAIROS_SRC_STRING_TABLE_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/event.h"

namespace kairos {

class StringTable {
 public:
  StringTable();  // id 0 is ""
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StringId Intern(std::string_view s);
  // Returns "" for an unknown id rather than crashing: a bad id is a bug, not a reason to
  // take down the host process.
  std::string_view Get(StringId id) const {
    return id < views_.size() ? views_[id] : std::string_view();
  }
  size_t size() const { return views_.size(); }

 private:
  std::deque<std::string> storage_;  // deque: element addresses stay stable
  std::vector<std::string_view> views_;
  absl::flat_hash_map<std::string_view, StringId> index_;
};

}  // namespace kairos

#endif  // KAIROS_SRC_STRING_TABLE_H_
