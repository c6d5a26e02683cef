#include "profiler/cupti_collector.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#ifdef BENCHMATRIX_HAVE_CUPTI
#include <cupti.h>
#endif

namespace benchmatrix {

#ifdef BENCHMATRIX_HAVE_CUPTI
namespace {

constexpr size_t buffer_bytes = 4 * 1024 * 1024;  // Kineto's size; CUPTI recommends 1-10 MB
constexpr size_t buffer_alignment = 8;            // CUPTI requires 8-byte aligned buffers

std::mutex g_mutex;  // guards g_records (CUPTI calls back from its own thread)
std::vector<device_activity> g_records;

// The activity kinds collected: kernels, and the memory operations the device executes between
// them (a CUDA graph's memcpy and memset nodes, cuDNN's and cuBLAS's memsets, ATen's same-dtype
// device copies), which are device time too: without them busy time counted them as idle.
constexpr CUpti_ActivityKind collected_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY,
                                                  CUPTI_ACTIVITY_KIND_MEMSET};

std::string demangle(const char* name) {
  if (!name) return "<unnamed kernel>";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

std::string cupti_error(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text ? text : "unknown CUPTI error";
}

void check(CUptiResult result, const char* what) {
  if (result != CUPTI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cupti_error(result));
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(buffer_alignment, buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;  // as many as fit
}

/// "Memcpy HtoD", "Memcpy DtoD", ... as Kineto's traces name a copy's direction.
std::string memcpy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy (array)";
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<device_activity> records;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records.push_back({demangle(kernel->name), device_activity_kind::kernel,
                         static_cast<int64_t>(kernel->start), static_cast<int64_t>(kernel->end)});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      records.push_back({memcpy_name(copy->copyKind), device_activity_kind::memcpy,
                         static_cast<int64_t>(copy->start), static_cast<int64_t>(copy->end)});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      records.push_back({"Memset", device_activity_kind::memset,
                         static_cast<int64_t>(set->start), static_cast<int64_t>(set->end)});
    }
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& r : records) g_records.push_back(std::move(r));
}

}  // namespace

bool cupti_available() { return true; }

cupti_collector::cupti_collector() {
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
        "cuptiActivityRegisterCallbacks");
}

cupti_collector::~cupti_collector() {
  for (const CUpti_ActivityKind kind : collected_kinds) cuptiActivityDisable(kind);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void cupti_collector::start() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
  }
  for (const CUpti_ActivityKind kind : collected_kinds)
    check(cuptiActivityEnable(kind), "cuptiActivityEnable");
}

kernel_summary cupti_collector::stop(size_t top_count) {
  for (const CUpti_ActivityKind kind : collected_kinds)
    check(cuptiActivityDisable(kind), "cuptiActivityDisable");
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::vector<device_activity> records;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    records.swap(g_records);
  }
  auto summary = summarise_activities(std::move(records), top_count);
  summary.dropped += static_cast<int64_t>(dropped);
  return summary;
}

#else

bool cupti_available() { return false; }

cupti_collector::cupti_collector() {
  throw std::runtime_error("this build has no CUPTI (cupti_activity.h and libcupti were not found "
                           "at configure time)");
}
cupti_collector::~cupti_collector() = default;
void cupti_collector::start() {}
kernel_summary cupti_collector::stop(size_t) { return {}; }

#endif

}  // namespace benchmatrix
