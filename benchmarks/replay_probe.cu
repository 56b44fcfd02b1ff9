// The replay path of an entry point (templates/cks_replay.cuh) on its own, with a kernel that
// counts its runs: five calls with the same argument block must run the kernel five times (the
// first directly, the second is recorded without running and then replayed, the rest replayed),
// and the host time of each kind of call is printed. Build and run:
//   nvcc -std=c++17 -O2 -Icutlass_splitk/templates -gencode arch=compute_90a,code=sm_90a \
//        benchmarks/replay_probe.cu -o replay_probe && ./replay_probe
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cks_replay.cuh"

__global__ void count_kernel(int* counter) { atomicAdd(counter, 1); }

struct Counting {  // an entry point's implementation: one launch
  static int run(CksArgs const& a, cudaStream_t stream) {
    count_kernel<<<1, 1, 0, stream>>>(static_cast<int*>(a.d));
    return cks::launched("count kernel launch");
  }
};

int main() {
  int* counter = nullptr;
  cudaMalloc(&counter, sizeof(int));
  cudaMemset(counter, 0, sizeof(int));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  CksArgs a{};
  a.abi_version = CKS_ABI_VERSION;
  a.d = counter;
  char const* kinds[] = {"direct (first sighting)", "recorded + replayed", "replayed", "replayed", "replayed"};
  int failed = 0;
  for (int call = 0; call < 5; ++call) {
    cudaStreamSynchronize(stream);
    auto start = std::chrono::steady_clock::now();
    int status = cks::replayed_run<Counting>(a, stream);
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    cudaStreamSynchronize(stream);
    int runs = 0;
    cudaMemcpy(&runs, counter, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("call %d %-26s status %d, kernel runs so far %d, host %.1f us\n", call + 1, kinds[call], status, runs, us);
    failed |= status != 0 || runs != call + 1;
  }
  // Where a replayed call's host time goes: each piece timed alone, the stream drained before
  // it (median of 2,000 calls).
  auto median_us = [&](auto&& fn) {
    std::vector<double> t;
    for (int i = 0; i < 2000; ++i) {
      cudaStreamSynchronize(stream);
      auto start = std::chrono::steady_clock::now();
      fn();
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    cudaStreamSynchronize(stream);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  extern char** environ;
  int vars = 0;
  for (char** e = environ; *e; ++e) ++vars;
  std::printf("pieces of a replayed call (%d environment variables):\n", vars);
  std::printf("  %-44s %6.2f us\n", "replayed_run (the whole replay path)",
              median_us([&] { cks::replayed_run<Counting>(a, stream); }));
  std::printf("  %-44s %6.2f us\n", "getenv(CUTLASS_SPLITK_GRAPHS)",
              median_us([&] { volatile char const* v = std::getenv("CUTLASS_SPLITK_GRAPHS"); (void)v; }));
  std::printf("  %-44s %6.2f us\n", "pdl_mode(0)", median_us([&] { volatile int v = int(cks::pdl_mode(0)); (void)v; }));
  cudaStreamCaptureStatus capturing;
  std::printf("  %-44s %6.2f us\n", "cudaStreamIsCapturing",
              median_us([&] { cudaStreamIsCapturing(stream, &capturing); }));
  std::printf("  %-44s %6.2f us\n", "select_device (cudaGetDevice)", median_us([&] { cks::select_device(a); }));
  cks::ReplayKey key{};
  std::printf("  %-44s %6.2f us\n", "ReplayKey copy + key_hash",
              median_us([&] { key.args = a; volatile uint64_t h = cks::key_hash(key); (void)h; }));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  Counting::run(a, stream);
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  std::printf("  %-44s %6.2f us\n", "cudaGraphLaunch of the same one kernel",
              median_us([&] { cudaGraphLaunch(exec, stream); }));
  std::printf("  %-44s %6.2f us\n", "<<<>>> of the same kernel", median_us([&] { Counting::run(a, stream); }));
  std::printf("%s\n", failed ? "FAIL" : "PASS");
  return failed;
}
