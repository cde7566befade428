// File: string_table.cc — see string_table.h.
#include "model/string_table.h"

namespace kairos {

StringTable::StringTable() { Intern(std::string_view()); }

StringId StringTable::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  storage_.emplace_back(s);
  std::string_view stored = storage_.back();
  StringId id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

}  // namespace kairos
