// A CUPTI injection library: what Nsight Systems would show, for machines without it (the lent GPU
// machine has CUPTI in its toolkit but no nsys). Loaded by the CUDA driver through
//   CUDA_INJECTION64_PATH=libcupti_trace.so CUPTI_TRACE_OUT=/tmp/trace <program>
// it records every CUDA runtime and driver API call (count, total and longest time per function and
// thread name, and each call longer than CUPTI_TRACE_MIN_US, default 500 µs, with its start), and
// every kernel, memcpy and memset on the GPU (start, end, stream, bytes, memory kinds), and the
// call stacks (module+offset, for addr2line) of chosen functions (CUPTI_TRACE_STACKS: every call;
// CUPTI_TRACE_SLOW_STACKS: calls over twice the threshold). At exit it writes <out>.api.tsv,
// <out>.slow.tsv, <out>.stacks.txt and <out>.gpu.tsv; tools/cupti_trace/summarize.py reads them.
// A developer tool: nothing in the library or its tests depends on it.
#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct ApiTotals {
  uint64_t count = 0, total_ns = 0, max_ns = 0;
};
struct SlowCall {
  std::string thread, function;
  uint64_t start_ns, duration_ns;
};
struct GpuRecord {
  char kind;  // K kernel, C memcpy, S memset
  uint64_t start, end;
  uint32_t stream;
  uint64_t bytes;
  int copy_kind, src_kind, dst_kind;
  std::string name;
};

std::mutex g_mu;
std::map<std::pair<std::string, std::string>, ApiTotals> g_api;  // (thread, function)
std::vector<SlowCall> g_slow;
std::vector<GpuRecord> g_gpu;
uint64_t g_min_ns = 500000;
std::string g_out = "/tmp/cupti_trace";
std::atomic<bool> g_done{false};
// Stacks: CUPTI_TRACE_STACKS names functions whose every call's stack is kept, CUPTI_TRACE_SLOW_STACKS
// those whose stack is kept when the call was slow (>= the threshold); aggregated by stack.
std::string g_stack_all = ",cuMemFree_v2,cuMemAlloc_v2,cuMemHostAlloc,cuMemFreeHost,";
std::string g_stack_slow = ",cuMemcpyHtoDAsync_v2,cuEventSynchronize,cuStreamSynchronize,cuLaunchKernel,";
std::map<std::string, std::pair<uint64_t, uint64_t>> g_stacks;  // "function\n frames" -> (count, ns)

std::string Stack() {
  void* frames[28];
  const int n = backtrace(frames, 28);
  std::string out;
  for (int i = 2; i < n; ++i) {  // skip this function and the callback
    Dl_info info{};
    char line[512];
    if (dladdr(frames[i], &info) && info.dli_fname) {
      const char* base = strrchr(info.dli_fname, '/');
      snprintf(line, sizeof line, "  %s+0x%lx %s\n", base ? base + 1 : info.dli_fname,
               (unsigned long)((char*)frames[i] - (char*)info.dli_fbase), info.dli_sname ? info.dli_sname : "");
    } else {
      snprintf(line, sizeof line, "  ?%p\n", frames[i]);
    }
    out += line;
  }
  return out;
}

std::string ThreadName() {
  thread_local std::string name = [] {
    char buf[32] = {};
    pthread_getname_np(pthread_self(), buf, sizeof buf);
    return std::string(buf) + "/" + std::to_string(syscall(SYS_gettid));
  }();
  return name;
}

void CUPTIAPI OnApi(void*, CUpti_CallbackDomain, CUpti_CallbackId, const CUpti_CallbackData* info) {
  if (g_done.load(std::memory_order_relaxed)) return;
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  if (info->callbackSite == CUPTI_API_ENTER) {
    *info->correlationData = now;
    return;
  }
  const uint64_t dur = now - *info->correlationData;
  const std::string thread = ThreadName();
  std::lock_guard<std::mutex> lock(g_mu);
  ApiTotals& t = g_api[{thread, info->functionName}];
  ++t.count;
  t.total_ns += dur;
  if (dur > t.max_ns) t.max_ns = dur;
  if (dur >= g_min_ns) g_slow.push_back({thread, info->functionName, *info->correlationData, dur});
  const std::string key = std::string(",") + info->functionName + ",";
  if (g_stack_all.find(key) != std::string::npos ||
      (dur >= 2 * g_min_ns && g_stack_slow.find(key) != std::string::npos)) {
    auto& agg = g_stacks[std::string(info->functionName) + "\n" + Stack()];
    ++agg.first;
    agg.second += dur;
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::vector<GpuRecord> local;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      local.push_back({'K', k->start, k->end, k->streamId, 0, 0, 0, 0, k->name ? k->name : "?"});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
      local.push_back({'C', m->start, m->end, m->streamId, m->bytes, m->copyKind, m->srcKind, m->dstKind, ""});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
      local.push_back({'S', m->start, m->end, m->streamId, m->bytes, 0, 0, 0, ""});
    }
  }
  free(buffer);
  std::lock_guard<std::mutex> lock(g_mu);
  g_gpu.insert(g_gpu.end(), local.begin(), local.end());
}

void Flush() {
  cuptiActivityFlushAll(1);
  g_done = true;
  std::lock_guard<std::mutex> lock(g_mu);
  if (FILE* f = fopen((g_out + ".api.tsv").c_str(), "w")) {
    fprintf(f, "thread\tfunction\tcount\ttotal_ns\tmax_ns\n");
    for (const auto& [key, t] : g_api) {
      fprintf(f, "%s\t%s\t%llu\t%llu\t%llu\n", key.first.c_str(), key.second.c_str(), (unsigned long long)t.count,
              (unsigned long long)t.total_ns, (unsigned long long)t.max_ns);
    }
    fclose(f);
  }
  if (FILE* f = fopen((g_out + ".slow.tsv").c_str(), "w")) {
    fprintf(f, "thread\tfunction\tstart_ns\tduration_ns\n");
    for (const SlowCall& s : g_slow) {
      fprintf(f, "%s\t%s\t%llu\t%llu\n", s.thread.c_str(), s.function.c_str(), (unsigned long long)s.start_ns,
              (unsigned long long)s.duration_ns);
    }
    fclose(f);
  }
  if (FILE* f = fopen((g_out + ".stacks.txt").c_str(), "w")) {
    std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> order;
    for (const auto& [stack, agg] : g_stacks) order.push_back({agg, stack});
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first.second > b.first.second; });
    for (const auto& [agg, stack] : order) {
      fprintf(f, "== %llu calls, %.1f ms: %s\n", (unsigned long long)agg.first, agg.second / 1e6, stack.c_str());
    }
    fclose(f);
  }
  if (FILE* f = fopen((g_out + ".gpu.tsv").c_str(), "w")) {
    fprintf(f, "kind\tstart_ns\tend_ns\tstream\tbytes\tcopy_kind\tsrc_kind\tdst_kind\tname\n");
    for (const GpuRecord& r : g_gpu) {
      fprintf(f, "%c\t%llu\t%llu\t%u\t%llu\t%d\t%d\t%d\t%s\n", r.kind, (unsigned long long)r.start,
              (unsigned long long)r.end, r.stream, (unsigned long long)r.bytes, r.copy_kind, r.src_kind, r.dst_kind,
              r.name.c_str());
    }
    fclose(f);
  }
}

}  // namespace

extern "C" int InitializeInjection() {
  if (const char* out = getenv("CUPTI_TRACE_OUT")) g_out = out;
  if (const char* min_us = getenv("CUPTI_TRACE_MIN_US")) g_min_ns = strtoull(min_us, nullptr, 10) * 1000;
  if (const char* all = getenv("CUPTI_TRACE_STACKS")) g_stack_all = std::string(",") + all + ",";
  if (const char* slow = getenv("CUPTI_TRACE_SLOW_STACKS")) g_stack_slow = std::string(",") + slow + ",";
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(OnApi), nullptr) != CUPTI_SUCCESS) {
    fprintf(stderr, "cupti_trace: cuptiSubscribe failed\n");
    return 0;
  }
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  atexit(Flush);
  fprintf(stderr, "cupti_trace: tracing into %s.*.tsv (slow calls >= %llu us)\n", g_out.c_str(),
          (unsigned long long)(g_min_ns / 1000));
  return 1;
}
