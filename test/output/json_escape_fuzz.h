// File: json_escape_fuzz.h
// Layer: tests (output). libFuzzer-style entry point for the JSON string encoder; replayed
// over test/output/corpus/json_escape by json_escape_test.cc, and linkable into a libFuzzer
// binary with clang -fsanitize=fuzzer where that is available.
// Threading: stateless.
#ifndef KAIROS_TEST_OUTPUT_JSON_ESCAPE_FUZZ_H_
#define KAIROS_TEST_OUTPUT_JSON_ESCAPE_FUZZ_H_

#include <cstddef>
#include <cstdint>

// Escapes the input, parses the result with nlohmann and checks it decodes to a valid UTF-8
// string that equals the input wherever the input was valid. Aborts on a violation (so a
// fuzzer reports it); returns 0 otherwise.
extern "C" int KairosFuzzJsonEscape(const uint8_t* data, size_t size);

#endif  // KAIROS_TEST_OUTPUT_JSON_ESCAPE_FUZZ_H_
