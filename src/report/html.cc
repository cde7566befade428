// File: html.cc — see html.h. Charts use a fixed viewBox (scaled by CSS to the page width)
// and coordinates printed with one decimal, which keeps a 600-bin area chart near 20 KB.
#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kairos::report {
namespace {

constexpr double kW = 1000, kH = 200;                 // viewBox of a chart
constexpr double kLeft = 60, kRight = 10, kTop = 24, kBottom = 28;
constexpr double kPlotW = kW - kLeft - kRight, kPlotH = kH - kTop - kBottom;

std::string F(double v) {
  char b[32];
  if (!std::isfinite(v)) v = 0;
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// Length of the valid UTF-8 sequence at s[i], or 0 if the bytes there are not one.
size_t Utf8Len(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t min;
  if ((c & 0xE0) == 0xC0) { n = 2; min = 0x80; }
  else if ((c & 0xF0) == 0xE0) { n = 3; min = 0x800; }
  else if ((c & 0xF8) == 0xF0) { n = 4; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

void Frame(std::string* out, const std::string& title, const std::string& y_top,
           const std::string& y_mid, const std::string& y_bottom, const std::string& x_left,
           const std::string& x_mid, const std::string& x_right) {
  *out += "<text x=\"" + F(kLeft) + "\" y=\"15\" class=\"ct\">" + Escape(title) + "</text>";
  for (int i = 0; i <= 2; ++i) {
    const double y = kTop + kPlotH * i / 2;
    *out += "<line x1=\"" + F(kLeft) + "\" y1=\"" + F(y) + "\" x2=\"" + F(kW - kRight) + "\" y2=\"" + F(y) +
            "\" class=\"grid\"/>";
    const std::string& label = i == 0 ? y_top : i == 1 ? y_mid : y_bottom;
    *out += "<text x=\"" + F(kLeft - 6) + "\" y=\"" + F(y + 4) + "\" class=\"ax\" text-anchor=\"end\">" +
            Escape(label) + "</text>";
  }
  const double yb = kH - 8;
  *out += "<text x=\"" + F(kLeft) + "\" y=\"" + F(yb) + "\" class=\"ax\">" + Escape(x_left) + "</text>";
  *out += "<text x=\"" + F(kLeft + kPlotW / 2) + "\" y=\"" + F(yb) + "\" class=\"ax\" text-anchor=\"middle\">" +
          Escape(x_mid) + "</text>";
  *out += "<text x=\"" + F(kW - kRight) + "\" y=\"" + F(yb) + "\" class=\"ax\" text-anchor=\"end\">" +
          Escape(x_right) + "</text>";
}

std::string SvgOpen() {
  return "<svg class=\"chart\" viewBox=\"0 0 " + F(kW) + " " + F(kH) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">";
}

std::string Legend(const std::vector<std::string>& labels, const std::vector<std::string>& colors) {
  std::string out = "<div class=\"legend\">";
  for (size_t i = 0; i < labels.size() && i < colors.size(); ++i) {
    out += "<span><i style=\"background:" + Escape(colors[i]) + "\"></i>" + Escape(labels[i]) + "</span>";
  }
  return out + "</div>";
}

}  // namespace

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Len(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters other than tab and newline are not allowed in HTML text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string EscapeShort(std::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return Escape(s);
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return Escape(s.substr(0, cut)) + "...";
}

std::string FormatAxis(double v, const std::string& unit) {
  char b[48];
  if (unit == "ms") {
    if (std::fabs(v) >= 1000) std::snprintf(b, sizeof b, "%.2f s", v / 1000);
    else if (std::fabs(v) >= 1 || v == 0) std::snprintf(b, sizeof b, "%.3g ms", v);
    else std::snprintf(b, sizeof b, "%.3g us", v * 1000);
  } else if (unit == "%") {
    std::snprintf(b, sizeof b, "%.0f%%", v);
  } else if (unit == "bytes" || unit == "bytes/s") {
    const char* suffix[] = {"B", "KB", "MB", "GB", "TB"};
    int k = 0;
    while (std::fabs(v) >= 1000 && k < 4) {
      v /= 1000;
      ++k;
    }
    std::snprintf(b, sizeof b, "%.3g %s%s", v, suffix[k], unit == "bytes/s" ? "/s" : "");
  } else {
    if (std::fabs(v) >= 1e6) std::snprintf(b, sizeof b, "%.3gM", v / 1e6);
    else if (std::fabs(v) >= 1e4) std::snprintf(b, sizeof b, "%.3gk", v / 1e3);
    else std::snprintf(b, sizeof b, "%.3g", v);
    if (!unit.empty()) return std::string(b) + " " + unit;
  }
  return b;
}

std::string StackedAreaSvg(const std::vector<Series>& layers, double x0_ms, double x1_ms,
                           const std::string& title) {
  std::string out = SvgOpen();
  Frame(&out, title, "100%", "50%", "0%", FormatAxis(x0_ms, "ms"), FormatAxis((x0_ms + x1_ms) / 2, "ms"),
        FormatAxis(x1_ms, "ms"));
  const size_t n = layers.empty() ? 0 : layers[0].y.size();
  if (n > 0) {
    // Step-shaped areas: each bin is a flat segment, so a busy bin never bleeds into the next.
    const double dx = kPlotW / static_cast<double>(n);
    std::vector<double> base(n, 0.0);
    for (const Series& layer : layers) {
      std::vector<double> top(n);
      for (size_t i = 0; i < n; ++i) top[i] = base[i] + std::clamp(i < layer.y.size() ? layer.y[i] : 0.0, 0.0, 1.0);
      auto y = [](double v) { return kTop + kPlotH * (1.0 - std::min(v, 1.0)); };
      std::string d = "M" + F(kLeft) + " " + F(y(base[0]));
      for (size_t i = 0; i < n; ++i) {
        d += "L" + F(kLeft + dx * i) + " " + F(y(top[i])) + "L" + F(kLeft + dx * (i + 1)) + " " + F(y(top[i]));
      }
      for (size_t i = n; i-- > 0;) {
        d += "L" + F(kLeft + dx * (i + 1)) + " " + F(y(base[i])) + "L" + F(kLeft + dx * i) + " " + F(y(base[i]));
      }
      d += "Z";
      out += "<path d=\"" + d + "\" fill=\"" + Escape(layer.color) + "\" stroke=\"none\"><title>" +
             Escape(layer.label) + "</title></path>";
      base = std::move(top);
    }
  }
  out += "</svg>";
  std::vector<std::string> labels, colors;
  for (const Series& l : layers) {
    labels.push_back(l.label);
    colors.push_back(l.color);
  }
  return out + Legend(labels, colors);
}

std::string StackedBarHtml(const std::vector<Segment>& segments, double total) {
  std::string bar = "<div class=\"sbar\">", legend = "<div class=\"legend\">";
  for (const Segment& s : segments) {
    const double pct = total > 0 ? 100.0 * s.value / total : 0.0;
    char p[32];
    std::snprintf(p, sizeof p, "%.1f%%", pct);
    if (pct > 0) {
      char w[32];
      std::snprintf(w, sizeof w, "%.3f%%", pct);
      bar += "<span style=\"width:" + std::string(w) + ";background:" + Escape(s.color) + "\" title=\"" +
             Escape(s.label) + " " + p + "\"></span>";
    }
    legend += "<span><i style=\"background:" + Escape(s.color) + "\"></i>" + Escape(s.label) + " <b>" + p +
              "</b></span>";
  }
  return bar + "</div>" + legend + "</div>";
}

std::string LineSvg(const std::vector<std::vector<Point>>& lines, const std::vector<std::string>& colors,
                    const std::vector<std::string>& labels, const std::string& x_unit,
                    const std::string& y_unit, const std::string& title) {
  double x0 = INFINITY, x1 = -INFINITY, y1 = 0;
  for (const auto& line : lines) {
    for (const Point& p : line) {
      x0 = std::min(x0, p.x);
      x1 = std::max(x1, p.x);
      y1 = std::max(y1, p.y);
    }
  }
  if (!std::isfinite(x0)) x0 = x1 = 0;
  if (x1 <= x0) x1 = x0 + 1;
  if (y_unit == "%" && y1 <= 100) y1 = 100;
  if (y1 <= 0) y1 = 1;
  y1 *= y_unit == "%" && y1 == 100 ? 1.0 : 1.1;  // headroom so the peak is visible
  std::string out = SvgOpen();
  Frame(&out, title, FormatAxis(y1, y_unit), FormatAxis(y1 / 2, y_unit), FormatAxis(0, y_unit),
        FormatAxis(x0, x_unit), FormatAxis((x0 + x1) / 2, x_unit), FormatAxis(x1, x_unit));
  auto px = [&](double x) { return kLeft + kPlotW * (x - x0) / (x1 - x0); };
  auto py = [&](double y) { return kTop + kPlotH * (1.0 - y / y1); };
  std::string marks;
  for (size_t li = 0; li < lines.size(); ++li) {
    const auto& line = lines[li];
    if (line.empty()) continue;
    const std::string color = li < colors.size() ? colors[li] : "#555";
    std::string pts;
    for (const Point& p : line) {
      pts += F(px(p.x)) + "," + F(py(p.y)) + " ";
      if (p.mark) {
        marks += "<circle cx=\"" + F(px(p.x)) + "\" cy=\"" + F(py(p.y)) + "\" r=\"5\" class=\"mark\"><title>" +
                 Escape(p.tip) + "</title></circle>";
      }
    }
    if (line.size() == 1) {
      out += "<circle cx=\"" + F(px(line[0].x)) + "\" cy=\"" + F(py(line[0].y)) + "\" r=\"3\" fill=\"" +
             Escape(color) + "\"/>";
    } else {
      out += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + Escape(color) +
             "\" stroke-width=\"1.5\"/>";
    }
  }
  out += marks + "</svg>";
  if (labels.size() > 1 || (labels.size() == 1 && !labels[0].empty())) out += Legend(labels, colors);
  return out;
}

std::string HistogramSvg(const std::vector<uint64_t>& counts, double lo, double hi,
                         const std::string& x_unit, const std::string& title) {
  uint64_t top = 1;
  for (uint64_t c : counts) top = std::max(top, c);
  std::string out = SvgOpen();
  Frame(&out, title, std::to_string(top), FormatAxis(static_cast<double>(top) / 2, ""), "0",
        FormatAxis(lo, x_unit), FormatAxis((lo + hi) / 2, x_unit), FormatAxis(hi, x_unit));
  const double dx = counts.empty() ? 0 : kPlotW / static_cast<double>(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    const double h = kPlotH * static_cast<double>(counts[i]) / static_cast<double>(top);
    const double a = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(counts.size());
    const double b = lo + (hi - lo) * static_cast<double>(i + 1) / static_cast<double>(counts.size());
    out += "<rect x=\"" + F(kLeft + dx * i + 1) + "\" y=\"" + F(kTop + kPlotH - h) + "\" width=\"" +
           F(std::max(dx - 2, 1.0)) + "\" height=\"" + F(h) + "\" class=\"hbar\"><title>" +
           Escape(FormatAxis(a, x_unit) + " - " + FormatAxis(b, x_unit) + ": " + std::to_string(counts[i])) +
           "</title></rect>";
  }
  return out + "</svg>";
}

std::vector<Point> Downsample(const std::vector<Point>& points, size_t max_points) {
  if (points.size() <= max_points || max_points < 4) return points;
  const size_t buckets = max_points / 2;
  const double x0 = points.front().x, x1 = points.back().x;
  const double width = x1 > x0 ? (x1 - x0) / static_cast<double>(buckets) : 1.0;
  std::vector<Point> out;
  std::vector<Point> marked;
  size_t i = 0;
  for (size_t b = 0; b < buckets && i < points.size(); ++b) {
    const double end = b + 1 == buckets ? INFINITY : x0 + width * static_cast<double>(b + 1);
    const Point* lo = nullptr;
    const Point* hi = nullptr;
    for (; i < points.size() && points[i].x < end; ++i) {
      const Point& p = points[i];
      if (p.mark) marked.push_back(p);
      if (lo == nullptr || p.y < lo->y) lo = &p;
      if (hi == nullptr || p.y > hi->y) hi = &p;
    }
    if (lo == nullptr) continue;
    if (lo == hi) {
      out.push_back(*lo);
    } else if (lo->x <= hi->x) {
      out.push_back(*lo);
      out.push_back(*hi);
    } else {
      out.push_back(*hi);
      out.push_back(*lo);
    }
  }
  // Marked points (outliers) are always drawn; they replace their unmarked twin.
  for (const Point& m : marked) {
    bool found = false;
    for (Point& p : out) {
      if (p.x == m.x && p.y == m.y) {
        p = m;
        found = true;
        break;
      }
    }
    if (!found) out.push_back(m);
  }
  std::stable_sort(out.begin(), out.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  return out;
}

}  // namespace kairos::report
