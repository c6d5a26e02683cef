#include "backends/pjrt_runtime.hpp"

#include "xla/pjrt/c/pjrt_c_api.h"

#include <c10/cuda/CUDAStream.h>

#include <dlfcn.h>

#include <cstddef>
#include <stdexcept>

namespace benchmatrix::pjrt {

struct session::state {
  std::string plugin_path;
  void* library = nullptr;
  const PJRT_Api* api = nullptr;
  PJRT_Client* client = nullptr;
  PJRT_Device* device = nullptr;
  PJRT_LoadedExecutable* executable = nullptr;
  size_t num_outputs = 0;
  std::string platform;
};

namespace {

/// Throws with the plugin's message when `error` is set (and frees it).
void check(const PJRT_Api* api, PJRT_Error* error, const std::string& what) {
  if (!error) return;
  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api->PJRT_Error_Message(&message);
  std::string text(message.message, message.message_size);
  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
  throw std::runtime_error("PJRT " + what + ": " + text);
}

void await_and_destroy(const PJRT_Api* api, PJRT_Event* event, const std::string& what) {
  if (!event) return;
  PJRT_Event_Await_Args wait{};
  wait.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
  wait.event = event;
  PJRT_Error* error = api->PJRT_Event_Await(&wait);
  PJRT_Event_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  destroy.event = event;
  api->PJRT_Event_Destroy(&destroy);
  check(api, error, what);
}

PJRT_Buffer_Type buffer_type(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return PJRT_Buffer_Type_F32;
    case at::kBFloat16: return PJRT_Buffer_Type_BF16;
    case at::kHalf: return PJRT_Buffer_Type_F16;
    case at::kDouble: return PJRT_Buffer_Type_F64;
    case at::kLong: return PJRT_Buffer_Type_S64;
    case at::kInt: return PJRT_Buffer_Type_S32;
    case at::kShort: return PJRT_Buffer_Type_S16;
    case at::kChar: return PJRT_Buffer_Type_S8;
    case at::kByte: return PJRT_Buffer_Type_U8;
    case at::kBool: return PJRT_Buffer_Type_PRED;
    case at::kComplexFloat: return PJRT_Buffer_Type_C64;    // (re, im) float pairs, as torch's
    case at::kComplexDouble: return PJRT_Buffer_Type_C128;
    default:
      throw std::runtime_error(std::string("PJRT: no buffer type for ") + c10::toString(type));
  }
}

/// The plugin's function table must reach `offset` (a plugin older than our header lacks the
/// newest entries).
void require_entry(const PJRT_Api* api, size_t offset, const char* name) {
  if (offset >= api->struct_size)
    throw std::runtime_error(std::string("the PJRT plugin's API table has no ") + name +
                             " (the plugin is older than the header)");
}
#define BENCHMATRIX_REQUIRE(api, entry) require_entry(api, offsetof(PJRT_Api, entry), #entry)

}  // namespace

buffer::buffer(std::shared_ptr<session> owner, void* handle)
    : m_owner(std::move(owner)), m_handle(handle) {}

buffer::~buffer() {
  if (m_handle) m_owner->destroy_buffer(m_handle);
}

void session::destroy_buffer(void* handle) {
  PJRT_Buffer_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE;
  destroy.buffer = static_cast<PJRT_Buffer*>(handle);
  if (PJRT_Error* error = m->api->PJRT_Buffer_Destroy(&destroy)) {
    try { check(m->api, error, "PJRT_Buffer_Destroy"); } catch (const std::exception&) {}
  }
}

std::shared_ptr<session> session::open(const std::string& plugin_path) {
  std::shared_ptr<session> self(new session());
  self->m = std::make_unique<state>();
  state& s = *self->m;
  s.plugin_path = plugin_path;
  s.library = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!s.library)
    throw std::runtime_error("cannot dlopen the PJRT plugin " + plugin_path + ": " + dlerror());
  using get_api_function = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<get_api_function>(dlsym(s.library, "GetPjrtApi"));
  if (!get_api) throw std::runtime_error(plugin_path + " exports no GetPjrtApi: not a PJRT plugin");
  s.api = get_api();
  if (!s.api) throw std::runtime_error(plugin_path + ": GetPjrtApi returned null");
  const auto& version = s.api->pjrt_api_version;
  if (version.major_version != PJRT_API_MAJOR)
    throw std::runtime_error("the PJRT plugin " + plugin_path + " implements PJRT C API " +
                             std::to_string(version.major_version) + "." +
                             std::to_string(version.minor_version) + ", this build's header " +
                             std::to_string(PJRT_API_MAJOR) + "." + std::to_string(PJRT_API_MINOR) +
                             ": major versions must match");
  BENCHMATRIX_REQUIRE(s.api, PJRT_Client_CreateViewOfDeviceBuffer);
  BENCHMATRIX_REQUIRE(s.api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  BENCHMATRIX_REQUIRE(s.api, PJRT_Buffer_GetMemoryLayout);

  PJRT_Plugin_Initialize_Args initialize{};
  initialize.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
  check(s.api, s.api->PJRT_Plugin_Initialize(&initialize), "PJRT_Plugin_Initialize");

  // As JAX's XLA_PYTHON_CLIENT_PREALLOCATE=false: torch allocates on the same GPU.
  PJRT_NamedValue options[1]{};
  options[0].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  options[0].name = "preallocate";
  options[0].name_size = 11;
  options[0].type = PJRT_NamedValue_kBool;
  options[0].bool_value = false;
  options[0].value_size = 1;
  PJRT_Client_Create_Args create{};
  create.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  create.create_options = options;
  create.num_options = 1;
  check(s.api, s.api->PJRT_Client_Create(&create), "PJRT_Client_Create");
  s.client = create.client;

  PJRT_Client_PlatformName_Args platform{};
  platform.struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE;
  platform.client = s.client;
  check(s.api, s.api->PJRT_Client_PlatformName(&platform), "PJRT_Client_PlatformName");
  s.platform.assign(platform.platform_name, platform.platform_name_size);

  PJRT_Client_AddressableDevices_Args devices{};
  devices.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  devices.client = s.client;
  check(s.api, s.api->PJRT_Client_AddressableDevices(&devices), "PJRT_Client_AddressableDevices");
  if (devices.num_addressable_devices == 0)
    throw std::runtime_error("the PJRT plugin " + plugin_path + " sees no device");
  s.device = devices.addressable_devices[0];
  return self;
}

session::~session() {
  if (!m || !m->api) return;
  if (m->executable) {
    PJRT_LoadedExecutable_Destroy_Args destroy{};
    destroy.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
    destroy.executable = m->executable;
    if (PJRT_Error* e = m->api->PJRT_LoadedExecutable_Destroy(&destroy)) {
      try { check(m->api, e, "destroy"); } catch (const std::exception&) {}
    }
  }
  if (m->client) {
    PJRT_Client_Destroy_Args destroy{};
    destroy.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
    destroy.client = m->client;
    if (PJRT_Error* e = m->api->PJRT_Client_Destroy(&destroy)) {
      try { check(m->api, e, "destroy"); } catch (const std::exception&) {}
    }
  }
  // The library stays loaded: plugins register process-wide state (CUDA, threads) at init.
}

std::string session::describe() const {
  return m->plugin_path + " (PJRT API " + std::to_string(m->api->pjrt_api_version.major_version) +
         "." + std::to_string(m->api->pjrt_api_version.minor_version) + ", platform " +
         m->platform + ")";
}

void session::compile(const std::string& module, const std::string& compile_options) {
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  program.code = const_cast<char*>(module.data());
  program.code_size = module.size();
  program.format = "mlir";
  program.format_size = 4;
  PJRT_Client_Compile_Args compile{};
  compile.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  compile.client = m->client;
  compile.program = &program;
  compile.compile_options = compile_options.data();
  compile.compile_options_size = compile_options.size();
  check(m->api, m->api->PJRT_Client_Compile(&compile), "PJRT_Client_Compile");
  adopt(compile.executable);
}

void session::load(const std::string& serialized) {
  PJRT_Executable_DeserializeAndLoad_Args load{};
  load.struct_size = PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE;
  load.client = m->client;
  load.serialized_executable = serialized.data();
  load.serialized_executable_size = serialized.size();
  // no overridden compile options: the ones serialized with the executable
  check(m->api, m->api->PJRT_Executable_DeserializeAndLoad(&load),
        "PJRT_Executable_DeserializeAndLoad");
  adopt(load.loaded_executable);
}

std::string session::serialize() const {
  if (!m->executable) throw std::runtime_error("PJRT serialize before compile");
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = m->executable;
  check(m->api, m->api->PJRT_LoadedExecutable_GetExecutable(&get), "GetExecutable");
  PJRT_Executable_Serialize_Args serialize{};
  serialize.struct_size = PJRT_Executable_Serialize_Args_STRUCT_SIZE;
  serialize.executable = get.executable;
  PJRT_Error* error = m->api->PJRT_Executable_Serialize(&serialize);
  std::string bytes;
  if (!error) {
    bytes.assign(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_executable_deleter(serialize.serialized_executable);
  }
  PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  destroy.executable = get.executable;
  m->api->PJRT_Executable_Destroy(&destroy);
  check(m->api, error, "PJRT_Executable_Serialize");
  return bytes;
}

void session::adopt(PJRT_LoadedExecutable* executable) {
  m->executable = executable;

  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = m->executable;
  check(m->api, m->api->PJRT_LoadedExecutable_GetExecutable(&get), "GetExecutable");
  PJRT_Executable_NumOutputs_Args outputs{};
  outputs.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  outputs.executable = get.executable;
  PJRT_Error* error = m->api->PJRT_Executable_NumOutputs(&outputs);
  PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  destroy.executable = get.executable;
  m->api->PJRT_Executable_Destroy(&destroy);
  check(m->api, error, "PJRT_Executable_NumOutputs");
  m->num_outputs = outputs.num_outputs;
}

std::unique_ptr<buffer> session::from_host(const void* data, at::ScalarType type,
                                           const std::vector<int64_t>& shape) {
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  args.client = m->client;
  args.data = data;
  args.type = buffer_type(type);
  args.dims = shape.data();
  args.num_dims = shape.size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args.device = m->device;
  check(m->api, m->api->PJRT_Client_BufferFromHostBuffer(&args), "PJRT_Client_BufferFromHostBuffer");
  auto result = std::make_unique<buffer>(shared_from_this(), args.buffer);
  await_and_destroy(m->api, args.done_with_host_buffer, "host-to-device transfer");
  return result;
}

std::unique_ptr<buffer> session::view_of(const torch::Tensor& tensor) {
  if (!tensor.is_cuda() || !tensor.is_contiguous())
    throw std::runtime_error("PJRT view_of needs a contiguous CUDA tensor");
  const std::vector<int64_t> shape(tensor.sizes().begin(), tensor.sizes().end());
  PJRT_Client_CreateViewOfDeviceBuffer_Args args{};
  args.struct_size = PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE;
  args.client = m->client;
  args.device_buffer_ptr = tensor.data_ptr();
  args.dims = shape.data();
  args.num_dims = shape.size();
  args.element_type = buffer_type(tensor.scalar_type());
  args.device = m->device;
  // torch owns the memory; the plugin calls this when the view goes (some versions call it
  // unconditionally, so it must be set).
  args.on_delete_callback = [](void*, void*) {};
  check(m->api, m->api->PJRT_Client_CreateViewOfDeviceBuffer(&args),
        "PJRT_Client_CreateViewOfDeviceBuffer");
  return std::make_unique<buffer>(shared_from_this(), args.buffer);
}

std::vector<std::unique_ptr<buffer>> session::execute(const std::vector<buffer*>& arguments) {
  if (!m->executable) throw std::runtime_error("PJRT execute before compile");
  std::vector<PJRT_Buffer*> argument_list;
  for (buffer* b : arguments) argument_list.push_back(static_cast<PJRT_Buffer*>(b->handle()));
  PJRT_Buffer* const* argument_lists[1] = {argument_list.data()};
  std::vector<PJRT_Buffer*> output_list(m->num_outputs, nullptr);
  PJRT_Buffer** output_lists[1] = {output_list.data()};
  PJRT_Event* complete[1] = {nullptr};
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = m->executable;
  args.options = &options;
  args.argument_lists = argument_lists;
  args.num_devices = 1;
  args.num_args = argument_list.size();
  args.output_lists = output_lists;
  args.device_complete_events = complete;
  check(m->api, m->api->PJRT_LoadedExecutable_Execute(&args), "PJRT_LoadedExecutable_Execute");
  std::vector<std::unique_ptr<buffer>> outputs;
  for (PJRT_Buffer* b : output_list) outputs.push_back(std::make_unique<buffer>(shared_from_this(), b));
  await_and_destroy(m->api, complete[0], "execution");
  return outputs;
}

torch::Tensor session::to_tensor(std::unique_ptr<buffer> output, at::ScalarType type,
                                 const std::vector<int64_t>& shape, const torch::Device& device) {
  auto* handle = static_cast<PJRT_Buffer*>(output->handle());
  if (device.is_cuda()) {
    PJRT_Buffer_GetMemoryLayout_Args layout{};
    layout.struct_size = PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE;
    layout.buffer = handle;
    bool row_major = false;
    if (PJRT_Error* error = m->api->PJRT_Buffer_GetMemoryLayout(&layout)) {
      try { check(m->api, error, "layout"); } catch (const std::exception&) {}
    } else if (layout.layout.type == PJRT_Buffer_MemoryLayout_Type_Tiled &&
               layout.layout.tiled.num_tiles == 0 &&
               layout.layout.tiled.minor_to_major_size == shape.size()) {
      row_major = true;
      for (size_t i = 0; i < shape.size(); ++i)
        if (layout.layout.tiled.minor_to_major[i] != static_cast<int64_t>(shape.size() - 1 - i))
          row_major = false;
    }
    if (row_major) {
      PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args pointer{};
      pointer.struct_size = PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE;
      pointer.buffer = handle;
      check(m->api, m->api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer),
            "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
      std::shared_ptr<buffer> keep(std::move(output));
      return torch::from_blob(pointer.device_memory_ptr, shape,
                              [keep](void*) mutable { keep.reset(); },
                              torch::TensorOptions().dtype(type).device(device));
    }
  }
  auto host = torch::empty(shape, torch::TensorOptions().dtype(type));
  PJRT_Buffer_ToHostBuffer_Args copy{};
  copy.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  copy.src = handle;
  copy.dst = host.data_ptr();
  copy.dst_size = host.nbytes();
  check(m->api, m->api->PJRT_Buffer_ToHostBuffer(&copy), "PJRT_Buffer_ToHostBuffer");
  await_and_destroy(m->api, copy.event, "device-to-host transfer");
  return host.to(device);
}

}  // namespace benchmatrix::pjrt
