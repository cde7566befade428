// File: format.h
// Layer: kairos_analysis. Number formatting shared by the text and markdown summaries and
// the HTML report, so they print the same values the same way.
// Threading: pure functions.
#ifndef KAIROS_SRC_ANALYSIS_FORMAT_H_
#define KAIROS_SRC_ANALYSIS_FORMAT_H_

#include <cstdint>
#include <string>

namespace kairos {

// Human time: "1.23 s", "45.60 ms", "7.8 us", "900 ns".
std::string FormatDuration(int64_t ns);
// Integral values as integers, others with 3 significant digits.
std::string FormatNumber(double v);
// Human size: "512 B", "256 KiB", "1.50 MiB", "2.00 GiB".
std::string FormatBytes(uint64_t bytes);
// 100 * part / whole (0 when whole <= 0).
double Percent(int64_t part, int64_t whole);

}  // namespace kairos

#endif  // KAIROS_SRC_ANALYSIS_FORMAT_H_
