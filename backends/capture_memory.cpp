#include "backends/capture_memory.hpp"

#include <algorithm>

namespace benchmatrix {
namespace {

/// The innermost open scope of this thread (captures run on the thread that builds the step).
thread_local capture_memory_scope* innermost = nullptr;

}  // namespace

capture_memory_scope::capture_memory_scope() : m_outer(innermost) { innermost = this; }

capture_memory_scope::~capture_memory_scope() { innermost = m_outer; }

std::optional<capture_memory> capture_memory_scope::seen() const {
  if (m_seen.captures == 0) return std::nullopt;
  return m_seen;
}

void report_capture_peak(int64_t peak_allocated_bytes) {
  for (capture_memory_scope* scope = innermost; scope; scope = scope->m_outer) {
    ++scope->m_seen.captures;
    scope->m_seen.peak_allocated_bytes =
        std::max(scope->m_seen.peak_allocated_bytes, peak_allocated_bytes);
  }
}

}  // namespace benchmatrix
