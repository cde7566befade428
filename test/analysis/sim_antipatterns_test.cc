// File: sim_antipatterns_test.cc
// Layer: test/analysis (end to end). Runs each sample workload of examples/cuda on the CUDA
// simulator, unmodified, with libkairos.so preloaded and a window that covers the whole run
// (closed and written at exit), then checks the summary the session wrote next to the trace:
// each antipattern program fires its detector with evidence, and the well-fed reference
// fires none.
// Threading: single-threaded; each workload is a child process.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "temp_dir.h"

namespace {

using kairos::testing::TempDir;

struct Run {
  std::unique_ptr<TempDir> temp;  // owns `dir` (tests read its files later); removed with the Run
  std::string dir;
  nlohmann::json summary;
  std::set<std::string> findings;
};

Run RunWorkload(const std::string& name, const std::string& args, const std::string& extra_env,
                const std::string& extra_config = "") {
  Run run;
  run.temp = std::make_unique<TempDir>("kairos_simap_");
  const std::string& dir = run.temp->path();
  const std::string trace = std::string(dir) + "/" + name + "_{pid}.json";
  const std::string cmd =
      "env LD_LIBRARY_PATH=" KAIROS_SIM_LIB_DIR " LD_PRELOAD=" KAIROS_LIB " " + extra_env +
      " 'KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=60000;"
      "ACTIVITIES_LOG_FILE=" + trace + extra_config + "' " KAIROS_EXAMPLES_DIR "/" + name + " " + args +
      " > " + dir + "/out.txt 2>&1; ls " + dir + "/*.summary.json > " + dir + "/list.txt";
  INFO(cmd);
  REQUIRE(system(cmd.c_str()) == 0);
  std::ifstream list(std::string(dir) + "/list.txt");
  std::string path;
  std::getline(list, path);
  REQUIRE(!path.empty());
  std::ifstream in(path);
  run.dir = dir;
  run.summary = nlohmann::json::parse(in);
  for (const auto& f : run.summary["findings"]) run.findings.insert(f["id"].get<std::string>());
  return run;
}

const nlohmann::json& Finding(const Run& run, const std::string& id) {
  for (const auto& f : run.summary["findings"])
    if (f["id"] == id) return f;
  FAIL("no finding " << id);
  static nlohmann::json none;
  return none;
}

TEST_CASE("well-fed reference workload: busy GPU, no findings") {
  // The simulated GPU runs in wall-clock time while the host is at the mercy of the machine's
  // load: with 300 us kernels, one 10 ms preemption of the launching thread idled the GPU for
  // a sixth of the run and fired gpu_idle_host_bound on a loaded machine. 5 ms kernels queue
  // 25 ms per step ahead of the host (1 s of GPU work in all), so only a stall of that order
  // per step could starve it.
  Run run = RunWorkload("well_fed", "40", "KAIROS_SIM_KERNEL_TIMES=big_=5000");
  CHECK(run.findings.empty());
  REQUIRE(run.summary["devices"].size() == 1);
}

TEST_CASE("KAIROS_REPORT=html writes a self-contained report next to the trace") {
  Run run = RunWorkload("well_fed", "10", "KAIROS_SIM_KERNEL_TIMES=big_=300", ";KAIROS_REPORT=html");
  const std::string cmd = "ls " + run.dir + "/*.report.html > " + run.dir + "/report_list.txt";
  REQUIRE(system(cmd.c_str()) == 0);
  std::ifstream list(run.dir + "/report_list.txt");
  std::string path;
  std::getline(list, path);
  REQUIRE(!path.empty());
  std::ifstream page(path);
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<section id=\"utilisation\">") != std::string::npos);
  CHECK(html.find("data-kairos-report','ok'") != std::string::npos);
}

TEST_CASE("many tiny memcpys fire small_copies") {
  Run run = RunWorkload("antipattern_tiny_memcpy", "5", "");
  REQUIRE(run.findings.count("small_copies") == 1);
  CHECK(Finding(run, "small_copies")["examples"].size() > 0);
}

TEST_CASE("host-bound data loading fires gpu_idle_host_bound") {
  Run run = RunWorkload("antipattern_host_bound", "10", "");
  REQUIRE(run.findings.count("gpu_idle_host_bound") == 1);
}

TEST_CASE("tiny kernels fire launch_bound") {
  Run run = RunWorkload("antipattern_tiny_kernels", "5", "");
  REQUIRE(run.findings.count("launch_bound") == 1);
}

TEST_CASE("kernels with too few blocks fire insufficient_concurrency") {
  // A finding must cover 2% of the window, and the window spans the whole process: on a
  // loaded machine start-up and exit stretch it while the modelled kernels stay short, and the
  // finding fell under the floor. Pinned 2 ms kernels (200 ms of GPU time) keep it far above.
  Run run = RunWorkload("antipattern_few_blocks", "10", "KAIROS_SIM_KERNEL_TIMES=reduce_rows=2000");
  REQUIRE(run.findings.count("insufficient_concurrency") == 1);
}

TEST_CASE("a device sync after every step fires excessive_sync") {
  Run run = RunWorkload("antipattern_sync_every_step", "200", "");
  REQUIRE(run.findings.count("excessive_sync") == 1);
}

// tensor_cores_idle: fp32 GEMMs (cuBLAS's sgemm name) are 4 of every 5 kernels, 2 ms each, on
// the simulated H100 (cc 9.0); the control runs the same loop with a bf16 tensor-core GEMM.
TEST_CASE("fp32 GEMMs fire tensor_cores_idle; the bf16 control does not") {
  Run run = RunWorkload("antipattern_fp32_gemm", "10 fp32", "KAIROS_SIM_KERNEL_TIMES=ampere_=2000");
  REQUIRE(run.findings.count("tensor_cores_idle") == 1);
  const nlohmann::json& f = Finding(run, "tensor_cores_idle");
  CHECK(f["evidence"]["fp32_gemm_time_ns"].get<double>() == 40 * 2000000.0);
  CHECK(f["evidence"]["reduced_precision_gemm_time_ns"].get<double>() == 0);
  CHECK(f["evidence"]["compute_capability"].get<double>() == 9.0);
  CHECK(f["evidence"]["fp32_gemm_share_of_kernel_time"].get<double>() > 0.5);
  CHECK(f["recommendation"].get<std::string>().find("allow_tf32") != std::string::npos);
  CHECK(f["examples"].size() > 0);
  Run control = RunWorkload("antipattern_fp32_gemm", "10 bf16", "KAIROS_SIM_KERNEL_TIMES=ampere_=2000");
  CHECK(control.findings.count("tensor_cores_idle") == 0);
}

TEST_CASE("pageable copies fire pageable_copies") {
  Run run = RunWorkload("antipattern_pageable_copy", "5", "");
  REQUIRE(run.findings.count("pageable_copies") == 1);
}

}  // namespace
