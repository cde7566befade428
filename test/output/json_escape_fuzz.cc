// File: json_escape_fuzz.cc
// Layer: tests (output). Fuzz entry point for AppendJsonString; see json_escape_fuzz.h.
// Threading: stateless.
#include "json_escape_fuzz.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "json/json_escape.h"
#include "json/json_reader.h"

namespace {

[[noreturn]] void FuzzFail(const char* why) {
  std::fprintf(stderr, "KairosFuzzJsonEscape: %s\n", why);
  std::abort();
}

}  // namespace

extern "C" int KairosFuzzJsonEscape(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string out;
  kairos::AppendJsonString(input, &out);
  if (!kairos::IsValidJson(out)) FuzzFail("output rejected by IsValidJson");
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(out);
  } catch (const std::exception&) {
    FuzzFail("output rejected by nlohmann");
  }
  if (!parsed.is_string()) FuzzFail("output is not a JSON string");
  const std::string decoded = parsed.get<std::string>();
  // Worst case is a control byte: 1 byte in, 6 out ("\u00XX").
  if (out.size() > 6 * size + 2) FuzzFail("output grew more than 6x");
  // The decoded string must be valid UTF-8 (nlohmann's dump throws otherwise), and valid
  // input must round-trip exactly.
  try {
    (void)nlohmann::json(decoded).dump();
  } catch (const std::exception&) {
    FuzzFail("decoded string is not valid UTF-8");
  }
  bool input_valid = true;
  try {
    (void)nlohmann::json(input).dump();
  } catch (const std::exception&) {
    input_valid = false;
  }
  if (input_valid && decoded != input) FuzzFail("valid input did not round-trip");
  return 0;
}
