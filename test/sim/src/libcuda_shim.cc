// File: test/sim/src/libcuda_shim.cc
// Layer: CUDA/CUPTI simulator: the substitute libcuda.so.1. Intentionally empty: the driver
// API it stands for is implemented in the substitute libcudart.so.13 (cuda_driver.cc), which
// this library lists as NEEDED, so symbol lookup through libcuda.so.1 finds it there.
namespace kairos::sim {
// One symbol so the object is not empty (some linkers warn about empty shared objects).
__attribute__((visibility("hidden"))) int ksim_libcuda_shim_marker = 1;
}  // namespace kairos::sim
