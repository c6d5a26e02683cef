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
std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> g_records;

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

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> records;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    records.emplace_back(demangle(kernel->name),
                         std::make_pair(static_cast<int64_t>(kernel->start),
                                        static_cast<int64_t>(kernel->end)));
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
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void cupti_collector::start() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
  }
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
        "cuptiActivityEnable(CONCURRENT_KERNEL)");
}

kernel_summary cupti_collector::stop(size_t top_count) {
  check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
        "cuptiActivityDisable(CONCURRENT_KERNEL)");
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> records;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    records.swap(g_records);
  }
  auto summary = summarise_kernels(std::move(records), top_count);
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
