// File: daemon_json.cc
// Layer: tools. Recursive-descent JSON reader with a depth limit, so hostile RPC input can
// neither overflow the stack nor be half-accepted.
// Threading: stateless.
#include "daemon_json.h"

#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kairos::tools {
namespace {

constexpr int kMaxDepth = 32;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    if (absl::Status s = ParseValue(value, 0); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return value;
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", std::string(what), " at byte ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::Status ParseValue(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      out.type = JsonValue::Type::kString;
      return ParseString(out.string);
    }
    if (Consume("true") || Consume("false")) {
      out.type = JsonValue::Type::kBool;
      out.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return ParseNumber(out);
  }

  absl::Status ParseObject(JsonValue& out, int depth) {
    out.type = JsonValue::Type::kObject;
    ++pos_;
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a key");
      std::string key;
      if (absl::Status s = ParseString(key); !s.ok()) return s;
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue value;
      if (absl::Status s = ParseValue(value, depth + 1); !s.ok()) return s;
      out.object[key] = std::move(value);  // later duplicates win, as in nlohmann
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::Status ParseArray(JsonValue& out, int depth) {
    out.type = JsonValue::Type::kArray;
    ++pos_;
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue value;
      if (absl::Status s = ParseValue(value, depth + 1); !s.ok()) return s;
      out.array.push_back(std::move(value));
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::Status ParseString(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Error("short \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= h - '0';
            else if (h >= 'a' && h <= 'f') code |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F') code |= h - 'A' + 10;
            else return Error("bad \\u escape");
          }
          // Surrogates are not needed by the RPC; encode the BMP code point as UTF-8.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xc0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3f));
          } else {
            out += static_cast<char>(0xe0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
          }
          break;
        }
        default:
          return Error("bad escape");
      }
    }
    return Error("unterminated string");
  }

  absl::Status ParseNumber(JsonValue& out) {
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    bool integral = true;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integral = false;
        ++pos_;
      } else {
        break;
      }
    }
    const std::string number(text_.substr(start, pos_ - start));
    if (number.empty() || number == "-") return Error("unexpected character");
    char* end = nullptr;
    out.type = JsonValue::Type::kNumber;
    out.number = strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(out.number)) {
      return Error("bad number");
    }
    if (integral) {
      errno = 0;
      out.integer = strtoll(number.c_str(), &end, 10);
      out.is_integer = errno == 0;
    }
    return absl::OkStatus();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(std::string_view text) { return Parser(text).ParseDocument(); }

std::string JsonQuote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace kairos::tools
