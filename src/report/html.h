// File: html.h
// Layer: kairos_report (internal). Building blocks of the HTML report: text escaping (and
// UTF-8 repair, since kernel names are arbitrary bytes) and server-side inline SVG charts.
// Every chart takes pre-aggregated series (a few thousand points at most) so the page stays
// fast whatever the trace size; nothing here loads a script, a font or an image.
// Threading: pure functions.
#ifndef KAIROS_SRC_REPORT_HTML_H_
#define KAIROS_SRC_REPORT_HTML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::report {

// Text for element content and attribute values: & < > " ' escaped; invalid UTF-8 bytes
// become U+FFFD so the page is always valid UTF-8.
std::string Escape(std::string_view text);
// Escape() of at most `max_chars` bytes (cut at a UTF-8 boundary), "..." appended if cut.
std::string EscapeShort(std::string_view text, size_t max_chars);

struct Series {
  std::string label;
  std::string color;           // CSS color
  std::vector<double> y;       // one value per x
};

// Stacked areas over equally spaced x in [x0, x1] (labels in ms from the window start);
// values are fractions 0..1, the y axis is percent.
std::string StackedAreaSvg(const std::vector<Series>& layers, double x0_ms, double x1_ms,
                           const std::string& title);

struct Segment {
  std::string label;
  std::string color;
  double value = 0;  // in units of `total`
};
// One horizontal stacked bar (100% = total) with a legend giving each share.
std::string StackedBarHtml(const std::vector<Segment>& segments, double total);

struct Point {
  double x = 0, y = 0;
  bool mark = false;           // drawn as a red dot (e.g. an outlier)
  std::string tip;             // hover text (SVG <title>)
};
// A line through `points` (x ascending) with axis labels; y formatted by `y_unit`
// ("ms", "%", "bytes", "1/s" or "").
std::string LineSvg(const std::vector<std::vector<Point>>& lines, const std::vector<std::string>& colors,
                    const std::vector<std::string>& labels, const std::string& x_unit,
                    const std::string& y_unit, const std::string& title);

// Vertical bars for a histogram: counts per equal-width bin over [lo, hi].
std::string HistogramSvg(const std::vector<uint64_t>& counts, double lo, double hi,
                         const std::string& x_unit, const std::string& title);

// Axis label: "12.5 ms", "45%", "1.2 GB", "3.4k".
std::string FormatAxis(double v, const std::string& unit);

// Reduces `points` (x ascending) to at most `max_points` by keeping, per equal-x-width
// bucket, the minimum and maximum (so spikes survive) and every marked point.
std::vector<Point> Downsample(const std::vector<Point>& points, size_t max_points);

}  // namespace kairos::report

#endif  // KAIROS_SRC_REPORT_HTML_H_
