// NCCL collectives over 2..N GPUs of one host, one process driving every GPU
// (ncclCommInitAll), NVLink multicast off. Built only when NCCL is found.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "calibration/cuda/suites.h"

#ifdef SERVESIM_HAVE_NCCL
#include <nccl.h>

#define NCCL_CHECK(expr)                                                                                 \
  do {                                                                                                   \
    ncclResult_t servesim_r_ = (expr);                                                                   \
    if (servesim_r_ != ncclSuccess) {                                                                    \
      std::fprintf(stderr, "servesim_calibrate: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,      \
                   ncclGetErrorString(servesim_r_));                                                     \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)
#endif

namespace servesim::calibration::cuda {

void RunCollectivesSuite(Context& ctx) {
  int gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
#ifndef SERVESIM_HAVE_NCCL
  std::printf("collectives: skipped (built without NCCL)\n");
  (void)ctx;
  return;
#else
  if (gpus < 2) {
    std::printf("collectives: skipped (%d GPU visible; all_reduce, all_gather, reduce_scatter and all_to_all need "
                ">= 2)\n", gpus);
    return;
  }
  // NVLink SHARP multicast can take a shared host's GPUs out of service; the
  // device notes require it off before any communicator exists.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  const size_t max_bytes = ctx.cfg.quick ? (size_t{16} << 20) : (size_t{1} << 30);
  for (int n = 2; n <= gpus; n *= 2) {
    std::vector<int> devs(n);
    for (int i = 0; i < n; ++i) devs[i] = i;
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
    std::vector<cudaStream_t> streams(n);
    std::vector<char*> send(n), recv(n);
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
      CUDA_CHECK(cudaMalloc(&send[i], max_bytes * n));
      CUDA_CHECK(cudaMalloc(&recv[i], max_bytes * n));
      FillBf16(send[i], max_bytes * n / 2, 2000 + i, 1.0f, streams[i]);
    }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
      const int t = ctx.rec->Table(kind, {{"gpus", n}}, "bytes_per_gpu",
                                   "NCCL, one process, ncclCommInitAll, NCCL_NVLS_ENABLE=0, BF16; x per "
                                   "docs/profile-tables.md (all_reduce: buffer; all_gather: input shard; "
                                   "reduce_scatter: output shard; all_to_all: bytes sent to the other GPUs); time = "
                                   "GPU 0 event pair around one collective (launch included); achieved_gbps = bus "
                                   "bandwidth as nccl-tests defines it");
      for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        const size_t elems = bytes / 2;
        auto issue = [&]() {
          NCCL_CHECK(ncclGroupStart());
          for (int i = 0; i < n; ++i) {
            const std::string k(kind);
            if (k == "all_reduce") {
              NCCL_CHECK(ncclAllReduce(send[i], recv[i], elems, ncclBfloat16, ncclSum, comms[i], streams[i]));
            } else if (k == "all_gather") {
              NCCL_CHECK(ncclAllGather(send[i], recv[i], elems, ncclBfloat16, comms[i], streams[i]));
            } else if (k == "reduce_scatter") {
              // x is the output shard; the input is n shards.
              NCCL_CHECK(ncclReduceScatter(send[i], recv[i], elems, ncclBfloat16, ncclSum, comms[i], streams[i]));
            } else {
              // x is what this GPU sends to the others, split evenly.
              const size_t per = elems / (n - 1);
              for (int j = 0, slot = 0; j < n; ++j) {
                if (j == i) continue;
                NCCL_CHECK(ncclSend(send[i] + slot * per * 2, per, ncclBfloat16, j, comms[i], streams[i]));
                NCCL_CHECK(ncclRecv(recv[i] + slot * per * 2, per, ncclBfloat16, j, comms[i], streams[i]));
                ++slot;
              }
            }
          }
          NCCL_CHECK(ncclGroupEnd());
        };
        for (int w = 0; w < 3; ++w) issue();
        std::vector<double> samples;
        for (int r = 0; r < ctx.cfg.repeats; ++r) {
          for (int i = 0; i < n; ++i) {
            CUDA_CHECK(cudaSetDevice(i));
            CUDA_CHECK(cudaStreamSynchronize(streams[i]));
          }
          CUDA_CHECK(cudaSetDevice(0));
          CUDA_CHECK(cudaEventRecord(start, streams[0]));
          issue();
          CUDA_CHECK(cudaSetDevice(0));
          CUDA_CHECK(cudaEventRecord(stop, streams[0]));
          CUDA_CHECK(cudaEventSynchronize(stop));
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
          samples.push_back(1000.0 * ms);
        }
        std::sort(samples.begin(), samples.end());
        Stats st;
        st.samples = static_cast<int>(samples.size());
        st.median_us = samples[samples.size() / 2];
        st.p10_us = samples[samples.size() / 10];
        st.p90_us = samples[(samples.size() * 9) / 10];
        const std::string k(kind);
        // nccl-tests bus bandwidth factors.
        // all_reduce: 2(n-1)/n x buffer; all_gather / reduce_scatter: (n-1)/n x
        // the full (n-shard) buffer; all_to_all: what leaves each GPU.
        double bus_bytes = double(bytes);
        if (k == "all_reduce") bus_bytes = 2.0 * (n - 1) / n * bytes;
        if (k == "all_gather" || k == "reduce_scatter") bus_bytes = double(n - 1) * bytes;
        ctx.rec->Add(t, double(bytes), st, 0, bus_bytes);
      }
    }
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      NCCL_CHECK(ncclCommDestroy(comms[i]));
      CUDA_CHECK(cudaFree(send[i]));
      CUDA_CHECK(cudaFree(recv[i]));
      CUDA_CHECK(cudaStreamDestroy(streams[i]));
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
  }
#endif
}

}  // namespace servesim::calibration::cuda
