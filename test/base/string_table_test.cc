// Tests for src/model/string_table.h.
#include "model/string_table.h"

#include <catch2/catch.hpp>
#include <string>

namespace kairos {

TEST_CASE("StringTable interns once and keeps ids dense") {
  StringTable t;
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).empty());
  StringId a = t.Intern("forward");
  StringId b = t.Intern("backward");
  CHECK(a == 1);
  CHECK(b == 2);
  std::string tmp = "forward";
  CHECK(t.Intern(tmp) == a);  // content, not pointer, decides
  CHECK(t.Intern("") == 0);
  CHECK(t.Get(a) == "forward");
  CHECK(t.Get(b) == "backward");
  CHECK(t.Get(999).empty());
  CHECK(t.size() == 3);
}

TEST_CASE("StringTable views stay valid while the table grows") {
  StringTable t;
  StringId first = t.Intern("first");
  std::string_view v = t.Get(first);
  for (int i = 0; i < 10000; ++i) t.Intern("name" + std::to_string(i));
  CHECK(v == "first");
  CHECK(t.Get(first).data() == v.data());
  CHECK(t.size() == 10002);
}

}  // namespace kairos
