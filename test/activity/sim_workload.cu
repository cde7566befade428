// File: sim_workload.cu
// Layer: test helper (nvcc). Device code for activity_sim_test: plain <<<>>> launches and a
// captured CUDA graph, compiled with `nvcc -cudart shared` like a user's program, so the
// CUDA 13 launch path (__cudaLaunchKernel) is what the simulator sees.
// Threading: called from the test thread.
#include <cuda_runtime.h>

__global__ void act_step(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void act_graph_node(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 2.0f;
}

extern "C" int ActLaunch(float* x, int n, cudaStream_t stream) {
  act_step<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  return static_cast<int>(cudaGetLastError());
}

// Captures `nodes` kernels into a graph on `stream`, instantiates it and launches it once.
extern "C" int ActGraph(float* x, int n, int nodes, cudaStream_t stream) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  if (e != cudaSuccess) return static_cast<int>(e);
  for (int i = 0; i < nodes; ++i) act_graph_node<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  e = cudaStreamEndCapture(stream, &graph);
  if (e != cudaSuccess) return static_cast<int>(e);
  e = cudaGraphInstantiate(&exec, graph, 0);
  if (e != cudaSuccess) return static_cast<int>(e);
  e = cudaGraphLaunch(exec, stream);
  if (e != cudaSuccess) return static_cast<int>(e);
  return static_cast<int>(cudaStreamSynchronize(stream));
}
