// File: json_reader.cc
// Layer: kairos_output. See json_reader.h. Walks a trace's top-level object with kairos_json's
// pull parser and reads each traceEvents element into a KinetoEvent. The byte sources (plain,
// gzip, zstd) are trace_file_source.cc; the mapping of events back to a TraceData is
// json_reader_trace.cc.
// Threading: no shared state.
#include "output/json_reader.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "util/checked_time.h"
#include "json/json_span.h"
#include "output/trace_file_source.h"

namespace kairos {
namespace {

using Source = JsonByteSource;

// ---- Driver: walks the top-level object, one traceEvents element at a time ----

// Kineto time text (µs, up to 3 fraction digits = ns) to ns, exactly. False when the value
// does not fit int64 ns (about ±292 years): such a trace is rejected, never wrapped.
bool MicrosTextToNs(std::string_view t, int64_t* ns_out) {
  bool exponent = false;  // a loop, not find_first_of: two memchr calls cost more on 8 bytes
  for (const char c : t) exponent |= c == 'e' || c == 'E';
  if (exponent) {
    const double ns = strtod(std::string(t).c_str(), nullptr) * 1000.0;
    // 2^63 is exact as a double; anything at or past it (or NaN) does not fit.
    if (!(ns > -9223372036854775808.0 && ns < 9223372036854775808.0)) return false;
    *ns_out = static_cast<int64_t>(ns);
    return true;
  }
  const bool neg = !t.empty() && t[0] == '-';
  size_t i = neg ? 1 : 0;
  int64_t ns = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    if (__builtin_mul_overflow(ns, 10, &ns) || __builtin_add_overflow(ns, t[i] - '0', &ns))
      return false;
  }
  int64_t frac = 0;
  int digits = 0;
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (digits < 3) frac = frac * 10 + (t[i] - '0');
      ++digits;
    }
  }
  for (; digits < 3; ++digits) frac *= 10;
  if (__builtin_mul_overflow(ns, 1000, &ns) || __builtin_add_overflow(ns, frac, &ns)) return false;
  *ns_out = neg ? -ns : ns;
  return true;
}

// A number or string holds a time; any other value means 0.
bool MicrosToNs(const JsonValue& v, int64_t* ns_out) {
  *ns_out = 0;
  return (v.type != JsonValue::Type::kNumber && v.type != JsonValue::Type::kString) ||
         MicrosTextToNs(v.text, ns_out);
}

absl::Status TimeOutOfRange(std::string_view key, std::string_view text,
                            const JsonStreamParser& p) {
  return absl::OutOfRangeError(absl::StrCat("JSON: \"", std::string(key), "\": ", std::string(text),
                                            " does not fit a 64-bit ns time (event ending at byte ",
                                            p.offset(), ")"));
}

// Every consumer computes an event's end as ts + dur (the trace builder, merge's collective
// ends and steps): the reader guarantees that sum fits, so none of them can wrap it.
bool EndFits(const KinetoEvent& ev) {
  int64_t end;
  return !(ev.has_ts && ev.has_dur) || AddNs(ev.ts_ns, ev.dur_ns, &end);
}

absl::Status EndOutOfRange(const KinetoEvent& ev, const JsonStreamParser& p) {
  return absl::OutOfRangeError(absl::StrCat("JSON: \"ts\" + \"dur\" (", ev.ts_ns, " + ", ev.dur_ns,
                                            " ns) does not fit a 64-bit ns time (event ending at byte ",
                                            p.offset(), ")"));
}

// Member by member: std::swap's three moves of a JsonValue (operator= and the destructor)
// were 5% of a trace read's cycles.
void SwapJson(JsonValue& a, JsonValue& b) {
  std::swap(a.type, b.type);
  std::swap(a.boolean, b.boolean);
  a.text.swap(b.text);
  a.items.swap(b.items);
  a.members.swap(b.members);
}

void SetNull(JsonValue* v) {
  v->type = JsonValue::Type::kNull;
  v->boolean = false;
  v->text.clear();
  v->items.clear();
  v->members.clear();
}

enum class Key : uint8_t { kOther = 0, kPh, kCat, kName, kPid, kTid, kTs, kDur, kId, kArgs };
constexpr uint32_t Bit(Key k) { return 1u << static_cast<unsigned>(k); }

// Byte compares, not string_view ==: the library compare is a memcmp call per key.
Key KeyOf(std::string_view k) {
  const char* c = k.data();
  switch (k.size()) {
    case 2:
      if (c[0] == 'p' && c[1] == 'h') return Key::kPh;
      if (c[0] == 't' && c[1] == 's') return Key::kTs;
      if (c[0] == 'i' && c[1] == 'd') return Key::kId;
      return Key::kOther;
    case 3:
      if (c[1] == 'i' && c[2] == 'd') {
        if (c[0] == 'p') return Key::kPid;
        if (c[0] == 't') return Key::kTid;
      }
      if (c[0] == 'c' && c[1] == 'a' && c[2] == 't') return Key::kCat;
      if (c[0] == 'd' && c[1] == 'u' && c[2] == 'r') return Key::kDur;
      return Key::kOther;
    case 4:
      if (c[0] == 'n' && c[1] == 'a' && c[2] == 'm' && c[3] == 'e') return Key::kName;
      if (c[0] == 'a' && c[1] == 'r' && c[2] == 'g' && c[3] == 's') return Key::kArgs;
      return Key::kOther;
    default:
      return Key::kOther;
  }
}

// The Kineto keys matched on their bytes, closing quote included, at `p` (the opening
// quote): no string scan and no compare for the eight keys every event has (6% of a trace
// read's instructions). Letters then a quote can only be that key, unescaped. Returns the
// literal's length, or 0 for anything else (read the general way).
size_t QuickKey(const char* p, const char* end, Key* k) {
  if (end - p < 6) return 0;
  // The literal's length when `word` (n letters) is the key at p, else 0.
  auto match = [p, k](const char* word, size_t n, Key key) -> size_t {
    for (size_t i = 0; i < n; ++i)
      if (p[1 + i] != word[i]) return 0;
    if (p[1 + n] != '"') return 0;
    *k = key;
    return n + 2;
  };
  switch (p[1]) {
    case 'p': {
      const size_t n = match("ph", 2, Key::kPh);
      return n != 0 ? n : match("pid", 3, Key::kPid);
    }
    case 't': {
      const size_t n = match("ts", 2, Key::kTs);
      return n != 0 ? n : match("tid", 3, Key::kTid);
    }
    case 'c': return match("cat", 3, Key::kCat);
    case 'd': return match("dur", 3, Key::kDur);
    case 'n': return match("name", 4, Key::kName);
    case 'a': return match("args", 4, Key::kArgs);
    case 'i': return match("id", 2, Key::kId);
    default: return 0;
  }
}

}  // namespace

// The whole event object of KinetoEvent::raw: the event's bytes in the parser's window until
// someone asks, then the tree (reused from event to event, like the stream parser's value).
class internal::LazyEventObject {
 public:
  void SetText(std::string_view text, KinetoRawEvent* raw) {
    text_ = text;
    parsed_ = false;
    raw->lazy_ = this;
  }
  // For an event the stream parser read: the caller parses into the returned value.
  JsonValue* SetParsed(KinetoRawEvent* raw) {
    parsed_ = true;
    raw->lazy_ = this;
    return &value_;
  }
  const JsonValue& Get() {
    if (!parsed_) {
      // The bytes were read whole once (the window keeps its padding after them), so this
      // succeeds; ParseJson is only the belt to those braces.
      JsonSpanReader r(text_.data(), text_.data() + text_.size());
      if (r.Value(&value_, 0) != JsonSpanStatus::kOk) {
        absl::StatusOr<JsonValue> v = ParseJson(text_);
        value_ = v.ok() ? *std::move(v) : JsonValue{};
      }
      parsed_ = true;
    }
    return value_;
  }

 private:
  std::string_view text_;
  JsonValue value_;
  bool parsed_ = true;
};

const JsonValue& KinetoRawEvent::operator*() const {
  static const JsonValue kNull;
  return lazy_ != nullptr ? lazy_->Get() : kNull;
}

namespace {

// Reads one traceEvents element from the parser's window: the Kineto keys straight into a
// KinetoEvent (reused from event to event, so same-shaped events allocate nothing), every
// other key checked and skipped. Same results as the stream-parser path in Drive, which is
// what an element that is malformed (kInvalid) or cut off at the end of input takes.
class EventParser {
 public:
  JsonSpanStatus Parse(JsonSpanReader& r, int64_t base_ns);
  bool is_object() const { return is_object_; }
  KinetoEvent& event() { return ev_; }
  internal::LazyEventObject& raw() { return raw_; }
  // The first ts/dur that did not fit 64-bit ns, in member order (empty key: none).
  std::string_view time_error_key() const { return time_error_key_; }
  const std::string& time_error_text() const { return time_error_text_; }

 private:
  JsonSpanStatus Text(JsonSpanReader& r, std::string* out);
  JsonSpanStatus Time(JsonSpanReader& r, std::string_view key, int64_t base_ns, int64_t* out);
  JsonSpanStatus MemberKey(JsonSpanReader& r, Key* k);
  JsonSpanStatus MemberValue(JsonSpanReader& r, Key k, uint32_t seen, int64_t base_ns);
  void ClearMissing(uint32_t seen);

  // Event categories have different args shapes (a cpu_op has 1 key, a kernel 16): args
  // are parsed into a slot kept per category, so the keys and values of the previous event
  // of that category are reused (parsing a kernel's args over a cpu_op's destroyed and
  // rebuilt 15 members: 10% of the time). ev_.args holds slot args_slot_'s value meanwhile.
  void ReturnArgsSlot() {
    if (args_slot_ >= 0) SwapJson(ev_.args, args_slots_[static_cast<size_t>(args_slot_)].second);
    args_slot_ = -1;
  }
  void TakeArgsSlot(std::string_view cat) {
    if (args_slot_ >= 0 && args_slots_[static_cast<size_t>(args_slot_)].first == cat) return;
    ReturnArgsSlot();
    size_t i = 0;
    while (i < args_slots_.size() && args_slots_[i].first != cat) ++i;
    if (i == args_slots_.size()) {
      if (i == kArgsSlots)
        i = kArgsSlots - 1;  // more categories than slots: they share
      else
        args_slots_.emplace_back(std::string(cat), JsonValue{});
    }
    SwapJson(ev_.args, args_slots_[i].second);
    args_slot_ = static_cast<int>(i);
  }
  static constexpr size_t kArgsSlots = 16;

  KinetoEvent ev_;
  std::vector<std::pair<std::string, JsonValue>> args_slots_;
  int args_slot_ = -1;
  internal::LazyEventObject raw_;
  bool is_object_ = false;
  std::string_view time_error_key_;
  std::string time_error_text_, key_scratch_, time_scratch_;
};

// ph/cat/name take the value's text: a string's decoded text, a number's source text, ""
// for anything else (what JsonValue::text holds for it).
JsonSpanStatus EventParser::Text(JsonSpanReader& r, std::string* out) {
  const char c = r.cur();
  if (c == '"') return r.String(out);
  if (c == '-' || (c >= '0' && c <= '9')) {
    std::string_view t;
    const JsonSpanStatus s = r.Number(&t);
    if (s == JsonSpanStatus::kOk) out->assign(t.data(), t.size());
    return s;
  }
  out->clear();
  return r.Skip(1);
}

JsonSpanStatus EventParser::Time(JsonSpanReader& r, std::string_view key, int64_t base_ns,
                                 int64_t* out) {
  const char c = r.cur();
  std::string_view text;
  bool has_text = true;
  JsonSpanStatus s;
  if (c >= '1' && c <= '9') {
    // Kineto's own form, digits[.digits]: converted while scanned. Anything else (a sign, an
    // exponent, 18+ integer digits, a number byte after it) takes the general path below.
    const std::string_view w(r.pos(), static_cast<size_t>(r.end() - r.pos()));
    size_t i = 0;
    int64_t us = 0;
    while (i < w.size() && i < 18 && w[i] >= '0' && w[i] <= '9') us = us * 10 + (w[i++] - '0');
    int64_t frac = 0;
    int digits = 0;
    bool plain = i < w.size() && i < 18;
    if (plain && w[i] == '.') {
      const size_t dot = ++i;
      for (; i < w.size() && w[i] >= '0' && w[i] <= '9'; ++i) {
        if (digits < 3) frac = frac * 10 + (w[i] - '0');
        ++digits;
      }
      plain = i > dot;
    }
    if (plain && i < w.size() && !internal::IsNumberByte(w[i])) {
      for (; digits < 3; ++digits) frac *= 10;
      r.Consume(i);
      // us < 10^18 fits, but us * 1000 may not: the checked path decides.
      int64_t ns;
      if (!__builtin_mul_overflow(us, 1000, &ns) && !__builtin_add_overflow(ns, frac, &ns) &&
          AddNs(base_ns, ns, out))
        return JsonSpanStatus::kOk;
      if (time_error_key_.empty()) {
        time_error_key_ = key;
        time_error_text_.assign(w.data(), i);
      }
      return JsonSpanStatus::kOk;
    }
  }
  if (c == '"') {
    s = r.StringView(&text, &time_scratch_);
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    s = r.Number(&text);
  } else {
    has_text = false;
    s = r.Skip(1);
  }
  if (s != JsonSpanStatus::kOk) return s;
  int64_t rel = 0;
  if ((has_text && !MicrosTextToNs(text, &rel)) || !AddNs(base_ns, rel, out)) {
    if (time_error_key_.empty()) {
      time_error_key_ = key;
      time_error_text_.assign(text.data(), text.size());
    }
  }
  return JsonSpanStatus::kOk;
}

// The member's key, at its opening quote: the Kineto keys matched on their bytes, anything
// else read as a string and classified.
JsonSpanStatus EventParser::MemberKey(JsonSpanReader& r, Key* k) {
  if (size_t n = QuickKey(r.pos(), r.end(), k); n != 0) {
    r.Consume(n);
    return JsonSpanStatus::kOk;
  }
  std::string_view key;
  if (JsonSpanStatus s = r.StringView(&key, &key_scratch_); s != JsonSpanStatus::kOk) return s;
  *k = KeyOf(key);
  return JsonSpanStatus::kOk;
}

// The value of member `k` into its KinetoEvent field (skipped for other keys).
JsonSpanStatus EventParser::MemberValue(JsonSpanReader& r, Key k, uint32_t seen, int64_t base_ns) {
  switch (k) {
    case Key::kPh: return Text(r, &ev_.ph);
    case Key::kCat: return Text(r, &ev_.cat);
    case Key::kName: return Text(r, &ev_.name);
    case Key::kPid: return r.Value(&ev_.pid, 1);
    case Key::kTid: return r.Value(&ev_.tid, 1);
    case Key::kId: return r.Value(&ev_.id, 1);
    case Key::kArgs:
      TakeArgsSlot((seen & Bit(Key::kCat)) ? std::string_view(ev_.cat) : std::string_view());
      return r.Value(&ev_.args, 1);
    case Key::kTs:
      ev_.has_ts = true;
      return Time(r, "ts", base_ns, &ev_.ts_ns);
    case Key::kDur:
      ev_.has_dur = true;
      return Time(r, "dur", 0, &ev_.dur_ns);
    default: return r.Skip(1);
  }
}

// Keys this event lacks read as a fresh KinetoEvent's; the slots of keys it has keep their
// capacity for the next event.
void EventParser::ClearMissing(uint32_t seen) {
  if (!(seen & Bit(Key::kPh))) ev_.ph.clear();
  if (!(seen & Bit(Key::kCat))) ev_.cat.clear();
  if (!(seen & Bit(Key::kName))) ev_.name.clear();
  if (!(seen & Bit(Key::kPid))) SetNull(&ev_.pid);
  if (!(seen & Bit(Key::kTid))) SetNull(&ev_.tid);
  if (!(seen & Bit(Key::kId))) SetNull(&ev_.id);
  if (!(seen & Bit(Key::kArgs))) {
    ReturnArgsSlot();
    SetNull(&ev_.args);
  }
}

JsonSpanStatus EventParser::Parse(JsonSpanReader& r, int64_t base_ns) {
  constexpr JsonSpanStatus kOk = JsonSpanStatus::kOk, kNeedMore = JsonSpanStatus::kNeedMore,
                           kInvalid = JsonSpanStatus::kInvalid;
  time_error_key_ = {};
  if (!r.SkipSpace()) return kNeedMore;
  const char* start = r.pos();
  is_object_ = r.cur() == '{';
  if (!is_object_) return r.Skip(0);
  r.Advance();
  uint32_t seen = 0;
  ev_.has_ts = ev_.has_dur = false;
  ev_.ts_ns = ev_.dur_ns = 0;
  if (!r.SkipSpace()) return kNeedMore;
  if (r.cur() == '}') {
    r.Advance();
  } else {
    for (;;) {
      if (!r.SkipSpace()) return kNeedMore;
      if (r.cur() != '"') return kInvalid;
      Key k;
      if (JsonSpanStatus s = MemberKey(r, &k); s != kOk) return s;
      if (!r.SkipSpace()) return kNeedMore;
      if (r.cur() != ':') return kInvalid;
      r.Advance();
      if (!r.SkipSpace()) return kNeedMore;
      seen |= Bit(k);
      if (JsonSpanStatus s = MemberValue(r, k, seen, base_ns); s != kOk) return s;
      if (!r.SkipSpace()) return kNeedMore;
      const char sep = r.cur();
      r.Advance();
      if (sep == '}') break;
      if (sep != ',') return kInvalid;
    }
  }
  ClearMissing(seen);
  raw_.SetText(std::string_view(start, static_cast<size_t>(r.pos() - start)), &ev_.raw);
  return kOk;
}

// A UTF-8 byte order mark before the text is skipped (RFC 8259 lets a parser ignore it;
// editors on Windows write one).
bool SkipByteOrderMark(JsonStreamParser& p) {
  while (p.window().size() < 3)
    if (!p.ReadMore()) break;
  if (!p.error().ok()) return false;
  if (p.window().substr(0, 3) == "\xEF\xBB\xBF") p.Skip(3);
  return true;
}

// The Kineto keys of an element the stream parser read whole (the slow path), into `ev`.
absl::Status EventFromObject(const JsonValue& whole, int64_t base_ns, const JsonStreamParser& p,
                             KinetoEvent& ev) {
  KinetoRawEvent raw = ev.raw;
  ev = KinetoEvent{};
  ev.raw = raw;
  for (auto& [k, v] : whole.members) {
    if (k == "ph") ev.ph = v.text;
    else if (k == "cat") ev.cat = v.text;
    else if (k == "name") ev.name = v.text;
    else if (k == "pid") ev.pid = v;
    else if (k == "tid") ev.tid = v;
    else if (k == "ts") {
      int64_t rel = 0;
      if (!MicrosToNs(v, &rel) || !AddNs(base_ns, rel, &ev.ts_ns))
        return TimeOutOfRange("ts", v.text, p);
      ev.has_ts = true;
    } else if (k == "dur") {
      if (!MicrosToNs(v, &ev.dur_ns)) return TimeOutOfRange("dur", v.text, p);
      ev.has_dur = true;
    }
    else if (k == "id") ev.id = v;
    else if (k == "args") ev.args = v;
  }
  return absl::OkStatus();
}

// Slow path: an element that is malformed, or cut off by the end of input. The stream parser
// reads it again from its first byte and names the error, or (should the two readers ever
// disagree) reads it the same way the fast path would have.
absl::Status ReadElementWhole(JsonStreamParser& p, EventParser& events, int64_t base_ns,
                              const KinetoJsonCallbacks& cb, KinetoJsonStats& st) {
  KinetoEvent& ev = events.event();
  JsonValue& whole = *events.raw().SetParsed(&ev.raw);
  if (!p.ParseValue(&whole)) return p.error();
  if (whole.type != JsonValue::Type::kObject) {
    ++st.skipped;
    return absl::OkStatus();
  }
  ++st.events;
  if (absl::Status s = EventFromObject(whole, base_ns, p, ev); !s.ok()) return s;
  if (!EndFits(ev)) return EndOutOfRange(ev, p);
  if (cb.on_event) cb.on_event(ev);
  return absl::OkStatus();
}

// The elements of traceEvents, after its '['. Fast path: each element read from the window;
// when it runs past the bytes read, more are read and it starts again (the window grows for
// an element larger than itself).
absl::Status ReadTraceEvents(JsonStreamParser& p, EventParser& events, int64_t base_ns,
                             const KinetoJsonCallbacks& cb, KinetoJsonStats& st) {
  if (p.Consume(']')) return absl::OkStatus();
  do {
    JsonSpanStatus s;
    size_t used = 0;
    for (;;) {
      const std::string_view w = p.window();
      JsonSpanReader r(w.data(), w.data() + w.size());
      s = events.Parse(r, base_ns);
      used = static_cast<size_t>(r.pos() - w.data());
      if (s != JsonSpanStatus::kNeedMore || !p.ReadMore()) break;
    }
    if (s != JsonSpanStatus::kOk) {
      if (!p.error().ok()) return p.error();
      if (absl::Status e = ReadElementWhole(p, events, base_ns, cb, st); !e.ok()) return e;
      continue;
    }
    p.Skip(used);
    if (!events.is_object()) {
      ++st.skipped;
      continue;
    }
    ++st.events;
    KinetoEvent& ev = events.event();
    if (!events.time_error_key().empty())
      return TimeOutOfRange(events.time_error_key(), events.time_error_text(), p);
    if (!EndFits(ev)) return EndOutOfRange(ev, p);
    if (cb.on_event) cb.on_event(ev);
  } while (p.Consume(','));
  if (!p.Expect(']')) return p.error();
  return absl::OkStatus();
}

absl::Status Drive(Source& src, const KinetoJsonCallbacks& cb, KinetoJsonStats* stats) {
  JsonStreamParser p(src);
  KinetoJsonStats local;
  KinetoJsonStats& st = stats ? *stats : local;
  st = KinetoJsonStats{};
  int64_t base_ns = 0;
  if (!SkipByteOrderMark(p)) return p.error();
  if (!p.Expect('{')) return p.error();
  if (!p.Consume('}')) {
    std::string key;
    JsonValue value;
    auto events = std::make_unique<EventParser>();
    do {
      if (!p.ParseString(&key) || !p.Expect(':')) return p.error();
      if (key != "traceEvents") {
        if (!p.ParseValue(&value)) return p.error();
        if (key == "baseTimeNanoseconds") base_ns = value.AsInt();
        if (cb.on_metadata) cb.on_metadata(key, value);
        continue;
      }
      if (!p.Expect('[')) return p.error();
      if (absl::Status s = ReadTraceEvents(p, *events, base_ns, cb, st); !s.ok()) return s;
    } while (p.Consume(','));
    if (!p.Expect('}')) return p.error();
  }
  if (!p.ExpectEnd()) return p.error();
  st.bytes = p.offset();
  return p.error();
}

}  // namespace

absl::Status ReadKinetoJsonText(std::string_view text, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats) {
  JsonTextSource src(text);
  return Drive(src, callbacks, stats);
}

absl::Status ReadKinetoJsonFile(const std::string& path, const KinetoJsonCallbacks& callbacks,
                                KinetoJsonStats* stats) {
  auto src = internal::OpenTraceSource(path);
  if (!src.ok()) return src.status();
  absl::Status st = Drive(**src, callbacks, stats);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  return st;
}

}  // namespace kairos
