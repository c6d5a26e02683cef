// A PJRT C API client (xla/pjrt/c/pjrt_c_api.h): a plugin dlopened at run time (JAX's CUDA plugin,
// xla_cuda_plugin.so), one device, one compiled program. Only built when the header was found
// (BENCHMATRIX_HAVE_PJRT; scripts/fetch_pjrt_header.sh extracts it into third_party_cache/pjrt).
// Errors are std::runtime_error with the plugin's message.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

struct PJRT_LoadedExecutable;  // xla/pjrt/c/pjrt_c_api.h

namespace benchmatrix::pjrt {

class session;

/// A device buffer owned by the session's client; destroyed with it.
class buffer {
public:
  buffer(std::shared_ptr<session> owner, void* handle);
  ~buffer();
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  [[nodiscard]] void* handle() const { return m_handle; }

private:
  std::shared_ptr<session> m_owner;
  void* m_handle;
};

/// The plugin, its client and device 0 (CUDA_VISIBLE_DEVICES pins the child's GPU).
class session : public std::enable_shared_from_this<session> {
public:
  /// dlopens `plugin_path`, checks its PJRT API major version against the header's, initialises it
  /// and creates a client (no GPU memory preallocation: torch shares the device).
  static std::shared_ptr<session> open(const std::string& plugin_path);
  ~session();

  /// "<plugin path> (PJRT API <major>.<minor>, platform <name>)".
  [[nodiscard]] std::string describe() const;

  /// Compiles a StableHLO/MLIR module (bytecode or text) with serialized CompileOptionsProto bytes.
  void compile(const std::string& module, const std::string& compile_options);

  /// The compiled program's platform-specific bytes (PJRT_Executable_Serialize), which load() turns
  /// back into the program in a session of the same plugin build and device kind.
  [[nodiscard]] std::string serialize() const;

  /// The program from serialize()'s bytes (PJRT_Executable_DeserializeAndLoad) instead of a
  /// compile. Throws std::runtime_error with the plugin's message on bytes it cannot load.
  void load(const std::string& serialized);

  /// A device copy of host memory (row-major `shape` of `type`), awaited.
  std::unique_ptr<buffer> from_host(const void* data, at::ScalarType type,
                                    const std::vector<int64_t>& shape);

  /// A view of a contiguous CUDA tensor's memory (no copy); `tensor` must outlive the buffer.
  std::unique_ptr<buffer> view_of(const torch::Tensor& tensor);

  /// Runs the compiled program once on `arguments` and waits for the device to finish. Returns the
  /// output buffers.
  std::vector<std::unique_ptr<buffer>> execute(const std::vector<buffer*>& arguments);

  /// A torch tensor of `output`'s contents on `device` (CUDA: the device memory itself, kept alive
  /// by the tensor, when its layout is row-major; else through a host copy).
  torch::Tensor to_tensor(std::unique_ptr<buffer> output, at::ScalarType type,
                          const std::vector<int64_t>& shape, const torch::Device& device);

  void destroy_buffer(void* handle);

private:
  session() = default;
  /// Takes `executable` (compiled or loaded) as the session's program; reads its output count.
  void adopt(PJRT_LoadedExecutable* executable);
  struct state;
  std::unique_ptr<state> m;
};

}  // namespace benchmatrix::pjrt
