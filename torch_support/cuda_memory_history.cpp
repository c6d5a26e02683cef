#include "torch_support/cuda_memory_history.hpp"

#include "core/text_file.hpp"

#include <torch/csrc/cuda/memory_snapshot.h>
#include <torch/cuda.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace benchmatrix {

cuda_memory_history::cuda_memory_history(size_t max_entries) {
  if (!torch::cuda::is_available())
    throw std::runtime_error("--dump-memory-snapshot records the CUDA caching allocator's "
                             "history: this process sees no CUDA device");
  // enabled "all": every alloc and free as an event (the timeline), not the segments alone;
  // context "all": each event's and block's frames; stacks "python": no C++ unwinding, and the
  // child has no Python frames, so the frames stay empty and cost nothing.
  torch::cuda::_record_memory_history(std::string("all"), std::string("all"), "python",
                                     max_entries);
}

cuda_memory_history::~cuda_memory_history() {
  try {
    torch::cuda::_record_memory_history(std::nullopt, std::nullopt, "python", 0);
  } catch (...) {  // a destructor must not throw; the process ends soon after anyway
  }
}

void cuda_memory_history::dump(const std::filesystem::path& path) const {
  replace_text_file(path, torch::cuda::_memory_snapshot_pickled());
}

}  // namespace benchmatrix
