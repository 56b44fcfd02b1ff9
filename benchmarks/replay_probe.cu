// The replay path of an entry point (templates/cks_replay.cuh) on its own, with a kernel that
// counts its runs: five calls with the same argument block must run the kernel five times (the
// first directly, the second is recorded without running and then replayed, the rest replayed),
// and the host time of each kind of call is printed. Build and run:
//   nvcc -std=c++17 -O2 -Icutlass_splitk/templates -gencode arch=compute_90a,code=sm_90a \
//        benchmarks/replay_probe.cu -o replay_probe && ./replay_probe
#include <chrono>
#include <cstdio>

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
  std::printf("%s\n", failed ? "FAIL" : "PASS");
  return failed;
}
