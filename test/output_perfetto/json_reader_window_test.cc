// File: json_reader_window_test.cc
// Layer: test (output_perfetto). The trace reader's fast path (each traceEvents element read
// straight from the parser's window, output/json_reader.cc) against an oracle built from
// ParseJson's tree of the same text with the mapping KinetoEvent documents: strings holding
// braces, quotes and escaped backslashes, events split across window refills at every byte,
// an event larger than the window, cut-off files (same error as ParseJson), non-object
// elements, a byte order mark and whitespace.
// Threading: single-threaded.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "json/json_reader.h"
#include "output/json_reader.h"

namespace kairos {
namespace {

// Exact ns of a Kineto µs text as the tests write it (digits, optional '-', up to 3 fraction
// digits): the oracle's own conversion, independent of the reader's.
int64_t TestMicros(const std::string& t) {
  if (t.find_first_of("eE") != std::string::npos)
    return std::llround(std::strtod(t.c_str(), nullptr) * 1000);
  const bool neg = !t.empty() && t[0] == '-';
  const size_t dot = t.find('.');
  const std::string whole =
      t.substr(neg ? 1 : 0, dot == std::string::npos ? std::string::npos : dot - (neg ? 1 : 0));
  std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  frac = (frac + "000").substr(0, 3);
  const int64_t ns = std::stoll(whole.empty() ? "0" : whole) * 1000 + std::stoll(frac);
  return neg ? -ns : ns;
}

std::string Describe(const KinetoEvent& e) {
  return "ph=" + e.ph + " cat=" + e.cat + " name=" + e.name + " pid=" + e.pid.ToJson() +
         " tid=" + e.tid.ToJson() + " id=" + e.id.ToJson() + " args=" + e.args.ToJson() +
         " ts=" + (e.has_ts ? std::to_string(e.ts_ns) : "-") +
         " dur=" + (e.has_dur ? std::to_string(e.dur_ns) : "-") + " raw=" + e.raw->ToJson();
}

// What KinetoEvent documents for one event object: ph/cat/name are the value's text, the
// others the value, the last of a repeated key wins, ts/dur are ns (0 for a value that is
// neither number nor string).
std::string Expected(const JsonValue& ev, int64_t base_ns) {
  KinetoEvent e;
  for (const auto& [k, v] : ev.members) {
    const bool timed = v.is_number() || v.is_string();
    if (k == "ph")
      e.ph = v.text;
    else if (k == "cat")
      e.cat = v.text;
    else if (k == "name")
      e.name = v.text;
    else if (k == "pid")
      e.pid = v;
    else if (k == "tid")
      e.tid = v;
    else if (k == "id")
      e.id = v;
    else if (k == "args")
      e.args = v;
    else if (k == "ts")
      e.has_ts = true, e.ts_ns = base_ns + (timed ? TestMicros(v.text) : 0);
    else if (k == "dur")
      e.has_dur = true, e.dur_ns = timed ? TestMicros(v.text) : 0;
  }
  std::string d = Describe(e);
  return d.substr(0, d.rfind(" raw=")) + " raw=" + ev.ToJson();
}

struct Result {
  absl::Status status;
  KinetoJsonStats stats;
  std::vector<std::string> events;
};

Result Read(const std::string& text) {
  Result r;
  KinetoJsonCallbacks cb;
  cb.on_event = [&](const KinetoEvent& e) { r.events.push_back(Describe(e)); };
  r.status = ReadKinetoJsonText(text, cb, &r.stats);
  return r;
}

std::vector<std::string> Oracle(const std::string& text, uint64_t* skipped) {
  absl::StatusOr<JsonValue> doc = ParseJson(text);
  REQUIRE(doc.ok());
  const JsonValue* base = doc->Find("baseTimeNanoseconds");
  std::vector<std::string> out;
  *skipped = 0;
  for (const JsonValue& ev : doc->Find("traceEvents")->items) {
    if (ev.is_object())
      out.push_back(Expected(ev, base ? base->AsInt() : 0));
    else
      ++*skipped;
  }
  return out;
}

// Events whose bytes hold everything a structural scan can trip on.
const char* const kTricky[] = {
    R"({"ph":"X","cat":"cpu_op","name":"a{b}[c]\"d\\","pid":1,"tid":2,"ts":10.5,"dur":2,"args":{"s":"}\\","t":"\\\"{"}})",
    R"({ "ph" : "X" ,"n\u0061me":"key with an escape","cat":"kernel","ts":"12.25","dur":{"x":[1,{"y":"]"}]},"args":{}})",
    R"({"ph":"i","name":"\u00e9\ud83d\ude00\\u","ts":-1.5,"pid":"Spans","tid":"","id":18446744073709551616})",
    R"({"ph":"X","name":"exp","ts":1e3,"dur":2.5E1,"ph":"B","args":{"a":[true,false,null,-0.5e-2,"x"],"b":{"c":{}}}})",
    R"({"name":"long ts","ts":9223372036853775,"dur":0.0001,"cat":7,"ph":null,"args":[1,2]})",
    R"({})",
    R"({"ph":"X","name":"\/\b\f\n\r\t","ts":0,"dur":0.999,"unknown":{"deep":[[[["\"]]]]"]]]]},"args":{"k":"v"}})",
};

std::string TrickyBlock() {
  std::string s;
  for (const char* e : kTricky) s += std::string(s.empty() ? "" : ",\n") + e;
  return s;
}

TEST_CASE("fast path: tricky strings and values read exactly as the oracle reads them") {
  const std::string text =
      "{\"baseTimeNanoseconds\":1000000,\"traceEvents\":[" + TrickyBlock() + "]}";
  uint64_t skipped = 0;
  const std::vector<std::string> want = Oracle(text, &skipped);
  Result got = Read(text);
  REQUIRE(got.status.ok());
  CHECK(got.events == want);
  CHECK(got.stats.events == 7);
  CHECK(got.stats.skipped == 0);
  CHECK(got.stats.bytes == text.size());
  // The strings with braces, quotes and escaped backslashes, spelled out.
  REQUIRE(got.events.size() == 7);
  CHECK(got.events[0].rfind("ph=X cat=cpu_op name=a{b}[c]\"d\\ pid=1 tid=2 id=null "
                            "args={\"s\":\"}\\\\\",\"t\":\"\\\\\\\"{\"} ts=1010500 dur=2000 raw=",
                            0) == 0);
  CHECK(got.events[1].rfind(
            "ph=X cat=kernel name=key with an escape pid=null tid=null id=null args={} "
            "ts=1012250 dur=0 raw=",
            0) == 0);
  CHECK(got.events[2].rfind("ph=i cat= name=\xC3\xA9\xF0\x9F\x98\x80\\u pid=\"Spans\" tid=\"\" "
                            "id=18446744073709551616 args=null ts=998500 dur=- raw=",
                            0) == 0);
  // A repeated key: the last wins; an exponent goes the checked way (1e3 us = 1 ms).
  CHECK(got.events[3].rfind("ph=B cat= name=exp ", 0) == 0);
  CHECK(got.events[3].find(" ts=2000000 dur=25000 ") != std::string::npos);
  // The largest ts that fits with this base, a number category, a null ph, array args, and
  // a dur with 4 fraction digits (ns precision: the fourth is dropped).
  CHECK(got.events[4].rfind("ph= cat=7 name=long ts pid=null tid=null id=null args=[1,2] "
                            "ts=9223372036854775000 dur=0 raw=",
                            0) == 0);
  CHECK(got.events[5] == "ph= cat= name= pid=null tid=null id=null args=null ts=- dur=- raw={}");
}

TEST_CASE("fast path: events split across a window refill at every byte read as whole") {
  // The first 64 KiB window ends inside the tricky block; shifting the text one byte at a
  // time moves that end over every byte of every tricky event.
  const std::string filler =
      R"({"ph":"X","cat":"cpu_op","name":"f","pid":1,"tid":1,"ts":1.000,"dur":1,"args":{"External id":1}})";
  std::string events;
  while (events.size() + filler.size() + 2 < JsonStreamParser::kChunk - 2000)
    events += filler + ",\n";
  const std::string block = TrickyBlock();
  const std::string head = "{\"traceEvents\":[";
  uint64_t skipped = 0;
  const std::vector<std::string> want = Oracle(head + events + block + "]}", &skipped);
  const size_t first_byte = head.size() + events.size();
  size_t mismatches = 0, runs = 0;
  // Leading whitespace moves the whole text; shifts from "window ends before the block" to
  // "window ends after it".
  const size_t lo = JsonStreamParser::kChunk > first_byte + block.size()
                        ? JsonStreamParser::kChunk - first_byte - block.size()
                        : 0;
  const size_t hi = JsonStreamParser::kChunk - first_byte + 1;
  for (size_t shift = lo; shift <= hi; ++shift) {
    const std::string text = std::string(shift, ' ') + head + events + block + "]}";
    Result got = Read(text);
    ++runs;
    if (!got.status.ok() || got.events != want || got.stats.bytes != text.size()) {
      ++mismatches;
      INFO("shift " << shift << ": " << got.status.message());
      CHECK(got.events == want);
    }
  }
  CHECK(runs == block.size() + 2);
  CHECK(mismatches == 0);
}

TEST_CASE("fast path: an event larger than the window is read whole") {
  std::string big_name;
  while (big_name.size() < 5 * JsonStreamParser::kChunk)
    big_name += "x{\\\"}[\\\\";  // 8 bytes, x{"}[\ (6) decoded
  std::string numbers;
  for (int i = 0; i < 40000; ++i) numbers += std::string(i ? "," : "") + std::to_string(i);
  const std::string text = "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"name\":\"" +
                           big_name + "\",\"ts\":2,\"args\":{\"n\":[" + numbers +
                           "]}},{\"ph\":\"X\",\"ts\":3}]}";
  std::vector<size_t> name_sizes;
  std::vector<int64_t> ts;
  size_t items = 0;
  uint64_t last_item = 0;
  bool name_ok = false;
  KinetoJsonCallbacks cb;
  cb.on_event = [&](const KinetoEvent& e) {
    name_sizes.push_back(e.name.size());
    ts.push_back(e.ts_ns);
    if (const JsonValue* n = e.args.Find("n")) {
      items = n->items.size();
      last_item = n->items.back().AsUint();
      std::string want;
      for (size_t i = 0; i < big_name.size() / 8; ++i) want += "x{\"}[\\";
      name_ok = e.name == want && e.raw->Find("name")->text == want;
    }
  };
  KinetoJsonStats stats;
  REQUIRE(ReadKinetoJsonText(text, cb, &stats).ok());
  CHECK(stats.events == 3);
  CHECK(stats.bytes == text.size());
  CHECK(ts == std::vector<int64_t>{1000, 2000, 3000});
  CHECK(name_sizes == std::vector<size_t>{0, big_name.size() / 8 * 6, 0});
  CHECK(name_ok);
  CHECK(items == 40000);
  CHECK(last_item == 39999);
}

TEST_CASE("fast path: a cut-off file fails as ParseJson fails, after the complete events") {
  const std::string text = "{\"traceEvents\":[" + TrickyBlock() + "]}";
  uint64_t skipped = 0;
  const std::vector<std::string> all = Oracle(text, &skipped);
  // Where each event ends, to know how many a cut leaves complete.
  std::vector<size_t> ends;
  size_t at = std::string("{\"traceEvents\":[").size();
  for (const char* e : kTricky) {
    at += std::string(e).size();
    ends.push_back(at);
    at += 2;  // ",\n"
  }
  // From the first element on (before it, the reader walks the top level with its own
  // expectations: "expected '['" where ParseJson says "unexpected end of input").
  for (size_t cut = std::string("{\"traceEvents\":[").size(); cut < text.size(); ++cut) {
    const std::string part = text.substr(0, cut);
    INFO("cut at " << cut);
    Result got = Read(part);
    REQUIRE(!got.status.ok());
    CHECK(got.status.message() == ParseJson(part).status().message());
    size_t complete = 0;
    while (complete < ends.size() && ends[complete] <= cut) ++complete;
    // An event is delivered once its closing brace is read, before its separator.
    CHECK(got.events == std::vector<std::string>(all.begin(), all.begin() + complete));
  }
  // Two spelled out.
  CHECK(Read(R"({"traceEvents":[{"ph":"X","name":"cut he)").status.message() ==
        "JSON: unterminated string at byte 40");
  CHECK(Read(R"({"traceEvents":[{"ph":"X","ts":12)").status.message() ==
        "JSON: expected '}' at byte 33");
}

TEST_CASE("fast path: malformed events report the stream parser's error and offset") {
  for (const std::string& bad :
       {std::string(R"({"ph":"X","ts":01})"), std::string(R"({"ph":"X",})"),
        std::string(R"({"ph":"X","name":"a)") + '\x01' + R"("})",
        std::string(R"({"ph":"X","args":{"a":[1,]}})"), std::string(R"({"ph":"X","name":"\q"})")}) {
    const std::string text = "{\"traceEvents\":[{\"ph\":\"X\"}," + bad + ",{}]}";
    INFO(text);
    Result got = Read(text);
    REQUIRE(!got.status.ok());
    CHECK(got.status.message() == ParseJson(text).status().message());
    CHECK(got.events.size() == 1);
  }
  CHECK(Read(R"({"traceEvents":[{"ph":"X","ts":01}]})").status.message() ==
        "JSON: bad number at byte 33");
}

TEST_CASE("fast path: non-object elements are checked, skipped and counted") {
  const std::string text =
      R"({"traceEvents":[1,"x",[{"ph":"X"}],null,true,{"ph":"X","ts":1},-2.5e3,{}]})";
  Result got = Read(text);
  REQUIRE(got.status.ok());
  CHECK(got.stats.events == 2);
  CHECK(got.stats.skipped == 6);
  CHECK(got.events == std::vector<std::string>{
                          "ph=X cat= name= pid=null tid=null id=null args=null ts=1000 dur=- "
                          "raw={\"ph\":\"X\",\"ts\":1}",
                          "ph= cat= name= pid=null tid=null id=null args=null ts=- dur=- raw={}"});
  // A malformed non-object element is an error like any other.
  CHECK(Read(R"({"traceEvents":[[1,],{}]})").status.message() ==
        "JSON: unexpected character at byte 19");
}

TEST_CASE("a byte order mark and whitespace around every token are accepted") {
  const std::string text =
      "\xEF\xBB\xBF \r\n{\n \"traceEvents\" :\t[\n  { \"ph\" : \"X\" ,\n \"name\" : \"a\" , \"ts\" "
      ": 1.5 } ,\n"
      "\t7 ]\n , \"traceName\" : \"t\" }\n\n";
  Result got = Read(text);
  REQUIRE(got.status.ok());
  CHECK(got.stats.events == 1);
  CHECK(got.stats.skipped == 1);
  CHECK(got.stats.bytes == text.size());
  CHECK(got.events ==
        std::vector<std::string>{"ph=X cat= name=a pid=null tid=null id=null args=null ts=1500 "
                                 "dur=- raw={\"ph\":\"X\",\"name\":\"a\",\"ts\":1.5}"});
  // Only before the text: anywhere else it is an unexpected byte.
  CHECK(Read("{\"traceEvents\":[\xEF\xBB\xBF{}]}").status.message() ==
        "JSON: unexpected character at byte 16");
  CHECK(Read("\xEF\xBB").status.message() == "JSON: expected '{' at byte 0");
  CHECK(Read("\xEF\xBB\xBF").status.message() == "JSON: expected '{' at byte 3");
}

}  // namespace
}  // namespace kairos
