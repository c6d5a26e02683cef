// --dump-memory-snapshot: the CUDA caching allocator's history of one config, as
// torch.cuda.memory._record_memory_history / _dump_snapshot write it (a pickle that
// https://pytorch.org/memory_viz and `python -m torch.cuda._memory_viz` read).
//
// A peak figure says how much; the snapshot says what: every allocation and free of the step's
// preparation, warm-up, CUDA graph capture and timed repeats, in order, with each block's size and
// stream, and the allocator's segments at the end. The child runs no Python, so the entries carry
// no Python frames; C++ frames are left out too (unwinding on every allocation and symbolising
// libtorch's frames at the dump would weigh on the config being recorded).
#pragma once

#include <cstddef>
#include <filesystem>

namespace benchmatrix {

/// Records the CUDA caching allocator's history from construction on; dump() writes it. The
/// destructor stops the recording and drops what was recorded. CUDA only: the constructor throws
/// std::runtime_error where no CUDA device is available.
class cuda_memory_history {
public:
  /// Keeps the last `max_entries` allocator events (default 1,000,000, the bound on the host
  /// memory the recording may take; older events are dropped past it).
  explicit cuda_memory_history(size_t max_entries = 1'000'000);
  ~cuda_memory_history();
  cuda_memory_history(const cuda_memory_history&) = delete;  // stops the recording once
  cuda_memory_history& operator=(const cuda_memory_history&) = delete;

  /// Writes the snapshot (segments and the events so far) to `path`, atomically; throws
  /// std::runtime_error naming the path when it cannot be written.
  void dump(const std::filesystem::path& path) const;
};

}  // namespace benchmatrix
