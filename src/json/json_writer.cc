// File: json_writer.cc
// Layer: kairos_json. The out-of-line parts of JsonBuffer; see json_writer.h.
// Threading: one thread per object.
#include "json/json_writer.h"

namespace kairos {

void JsonBuffer::Clear() {
  len_ = 0;
  if (cap_ > 4 * initial_capacity_) Allocate(initial_capacity_);
}

void JsonBuffer::Grow(size_t need) {
  size_t cap = cap_ * 2;
  if (cap < need) cap = need;
  std::unique_ptr<char[]> bigger(new char[cap]);
  std::memcpy(bigger.get(), buf_.get(), len_);
  buf_ = std::move(bigger);
  cap_ = cap;
}

}  // namespace kairos
