// cutlass-splitk: an entry point's launches replayed as one CUDA graph (issue 15's host time).
//
// On the H100 machine (benchmarks/launch_probe.cu, each call timed alone) one kernel launch
// costs the host 3.6-4.2 us, a plan's two launches (partial GEMM + reduction) 6.3-6.9 us, a
// memset + GEMM 4.0-5.0 us, and cudaGraphLaunch of a graph holding that same work 1.5-2.4 us.
// So the run entry point records the launches of an argument block it sees a second time (the
// steady loop: the same weights and workspace, activations and outputs at the addresses the
// caching allocator hands back) into a graph executable, once, and replays it from then on.
//
// What is replayed is exactly what a direct run would launch: every byte of the argument block
// is the key (pointers included), and a run's launches are a pure function of it (the plans
// of cks_plan_cache.cuh are). Recording happens on a private stream of the device with this
// thread's capture mode relaxed, so it cannot disturb a capture the caller has in progress on
// another stream. Launches go directly (never replayed) when the caller's stream is itself
// being captured (the launches then join the caller's graph), when recording fails, and with
// CUTLASS_SPLITK_GRAPHS=0 in the environment.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "cks_abi.h"
#include "cks_error.cuh"
#include "cks_host.cuh"
#include "cks_replay_cache.cuh"

namespace cks {

// CUTLASS_SPLITK_GRAPHS=0 turns replays off (read at every call, like CUTLASS_SPLITK_PDL, for
// A/B timing and debugging).
inline bool replay_enabled() { return !env_is("CUTLASS_SPLITK_GRAPHS", "0"); }

// What a recording is a pure function of: the argument block and the launch settings read from
// the environment (the PDL and tail modes), so that changing a setting records anew.
struct ReplayKey {
  CksArgs args;
  int32_t pdl;
  int32_t tail;
};

// Recording holds recording_mutex(): one recording at a time, on the private stream of the
// current device (created on its first recording; nullptr if it cannot be).
inline std::mutex& recording_mutex() {
  static std::mutex& m = *new std::mutex();
  return m;
}

inline cudaStream_t recording_stream(int device) {
  static cudaStream_t streams[64] = {};  // under recording_mutex()
  cudaStream_t& s = streams[device & 63];
  if (s == nullptr && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    s = nullptr;
  }
  return s;
}

// Records what run(a, stream) launches into a graph executable; nullptr (and no pending CUDA
// error) if anything fails.
template <class Run>
cudaGraphExec_t record_run(int device, Run&& run) {
  std::lock_guard<std::mutex> lock(recording_mutex());
  cudaStream_t stream = recording_stream(device);
  if (stream == nullptr) return nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
  if (err == cudaSuccess) {
    int const status = run(stream);
    err = cudaStreamEndCapture(stream, &graph);  // ends the capture whatever run() did
    if (status != CKS_OK && err == cudaSuccess) err = cudaErrorUnknown;
  }
  if (err == cudaSuccess) err = cudaGraphInstantiateWithFlags(&exec, graph, 0);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaThreadExchangeStreamCaptureMode(&mode);  // back to the caller's mode
  if (err != cudaSuccess) {
    cudaGetLastError();
    last_error().clear();  // the direct run that follows reports real problems itself
    return nullptr;
  }
  return exec;
}

// The run entry point of an implementation with a static run(CksArgs const&, cudaStream_t):
// the first sighting of an argument block runs directly, the second records and replays, later
// ones replay (see the top of this file).
template <class Impl>
int replayed_run(CksArgs const& a, cudaStream_t stream) {
  static auto& cache = *new ReplayCache<ReplayKey, cudaGraphExec_t>();  // never destroyed: no exit-order hazard
  if (!replay_enabled()) return Impl::run(a, stream);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess) {
    cudaGetLastError();  // e.g. the legacy stream while another stream captures: run directly
    return Impl::run(a, stream);
  }
  if (capturing != cudaStreamCaptureStatusNone) return Impl::run(a, stream);
  auto replay = [&a, stream](cudaGraphExec_t exec) {
    if (int s = select_device(a)) return s;
    return launched(cudaGraphLaunch(exec, stream), "graph launch");
  };
  auto destroy = [](cudaGraphExec_t exec) { cudaGraphExecDestroy(exec); };
  ReplayKey key;
  std::memset(&key, 0, sizeof(key));  // compared as bytes, padding included
  key.args = a;
  key.pdl = int32_t(pdl_mode(a.device));
  key.tail = int32_t(tail_mode());
  int status = CKS_OK;
  switch (cache.visit(key, replay, destroy, &status)) {
    case Sighting::kRecorded:
      return status;
    case Sighting::kFirst:
      return Impl::run(a, stream);
    case Sighting::kSecond:
      break;
  }
  if (int s = select_device(a)) return s;  // the recording stream is the device's
  cudaGraphExec_t exec = record_run(a.device, [&a](cudaStream_t s) { return Impl::run(a, s); });
  if (exec == nullptr) return Impl::run(a, stream);
  return cache.record(key, exec, replay, destroy);
}

}  // namespace cks
