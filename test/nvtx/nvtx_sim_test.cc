// File: nvtx_sim_test.cc
// Layer: test/nvtx on the CUDA simulator. Runs nvtx_gpu (NVTX + CUDA, no kairos call) with
// libkairos.so as both the NVTX and the CUDA injection and checks that each NVTX range that
// launched kernels has a gpu_user_annotation span on exactly the streams it launched on,
// covering those kernels.
// Threading: single-threaded; the traced program is a child process.
#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("NVTX ranges that launch kernels get gpu_user_annotation spans per stream") {
  const kairos::testing::TempDir temp("kairos_nvtx_sim_");
  const std::string& dir = temp.path();
  const std::string cmd =
      "env -u KAIROS_CONFIG -u KINETO_CONFIG LD_LIBRARY_PATH=" KAIROS_SIM_LIB_DIR
      " NVTX_INJECTION64_PATH=" KAIROS_LIB " CUDA_INJECTION64_PATH=" KAIROS_LIB
      " 'KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=60000;"
      "ACTIVITIES_LOG_FILE=" + dir + "/trace.json' " NVTX_GPU " > " + dir + "/out.txt 2> " +
      dir + "/err.txt";
  const int rc = std::system(cmd.c_str());
  INFO(cmd << "\nstdout: " << ReadFile(dir + "/out.txt") << "\nstderr: "
           << ReadFile(dir + "/err.txt"));
  REQUIRE(rc == 0);
  std::string path;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".json" &&
          name.find("summary") == std::string::npos)
        path = dir + "/" + name;
    }
    closedir(d);
  }
  REQUIRE(!path.empty());
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(path));

  // External id of each NVTX range -> its name; kernels by the external id they carry.
  std::map<long long, std::string> range_name;
  std::vector<nlohmann::json> kernels, spans;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string cat = e.value("cat", "");
    if (cat == "user_annotation") range_name[e["args"]["External id"]] = e["name"];
    if (cat == "kernel") kernels.push_back(e);
    if (cat == "gpu_user_annotation") spans.push_back(e);
  }
  REQUIRE(kernels.size() == 3);
  REQUIRE(spans.size() == 2);
  std::map<std::string, std::set<long long>> kernel_tids;  // range name -> stream rows
  for (const auto& k : kernels) {
    const long long ext = k["args"]["External id"];
    REQUIRE(range_name.count(ext) == 1);
    kernel_tids[range_name[ext]].insert(k["tid"].get<long long>());
  }
  REQUIRE(kernel_tids["on-s1"].size() == 1);
  REQUIRE(kernel_tids["on-s2"].size() == 1);
  CHECK(*kernel_tids["on-s1"].begin() != *kernel_tids["on-s2"].begin());
  for (const auto& s : spans) {
    const std::string name = s["name"];
    INFO(s.dump());
    REQUIRE(kernel_tids.count(name) == 1);
    CHECK(kernel_tids[name].count(s["tid"].get<long long>()) == 1);
    for (const auto& k : kernels) {
      if (range_name[k["args"]["External id"]] != name) continue;
      CHECK(s["ts"].get<double>() <= k["ts"].get<double>() + 1e-3);
      CHECK(s["ts"].get<double>() + s["dur"].get<double>() + 1e-3 >=
            k["ts"].get<double>() + k["dur"].get<double>());
    }
  }
}
