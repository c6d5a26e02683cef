#include "backends/aoti_package.hpp"

#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"

#include <caffe2/serialize/inline_container.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace benchmatrix {
namespace {

// Where AOTInductor's archive keeps the model's files and its constants (without the archive's
// top folder, which PyTorchStreamReader strips), as AOTIModelPackageLoader looks them up.
constexpr std::string_view model_files = "data/aotinductor/model/";
constexpr std::string_view constant_files = "data/constants/";
constexpr size_t extract_chunk_bytes = 16 << 20;  // 16 MiB per read and write

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// The path below `folder` for the archive record `name`, or "" for a record the loader does not
/// extract. Throws for a name that would leave the folder.
std::filesystem::path destination(const std::filesystem::path& folder, std::string_view name) {
  std::filesystem::path relative;
  if (name.rfind(model_files, 0) == 0) {
    relative = std::string(name.substr(model_files.size()));
  } else if (name.rfind(constant_files, 0) == 0) {
    // flattened beside the model's files, as the loader does
    relative = std::filesystem::path(std::string(name)).filename();
  } else {
    return {};
  }
  for (const auto& part : relative)
    if (part == "..")
      throw std::runtime_error("archive record '" + std::string(name) + "' leaves its folder");
  if (relative.empty() || relative.filename().empty()) return {};
  return folder / relative;
}

void extract_record(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name,
                    const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot create " + path.string());
  const size_t size = reader.getRecordSize(name);
  std::vector<char> buffer(std::min(size, extract_chunk_bytes));
  auto chunks = reader.createChunkReaderIter(name, size, buffer.size());
  size_t written = 0;
  while (written < size) {
    const size_t n = chunks.next(buffer.data());
    if (n == 0) break;
    out.write(buffer.data(), static_cast<std::streamsize>(n));
    written += n;
  }
  if (written != size || !out.flush())
    throw std::runtime_error("cannot extract " + name + " (" + std::to_string(size) +
                             " bytes) to " + path.string());
}

/// The one file of `folder` whose name ends with `suffix` (preferring one ending with
/// `preferred_suffix`), or "" when there is none. Throws when several match.
std::filesystem::path find_file(const std::filesystem::path& folder, std::string_view suffix,
                                std::string_view preferred_suffix) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && ends_with(entry.path().filename().string(), suffix))
      found.push_back(entry.path());
  if (found.size() <= 1) return found.empty() ? std::filesystem::path() : found.front();
  std::vector<std::filesystem::path> preferred;
  for (const auto& path : found)
    if (ends_with(path.filename().string(), preferred_suffix)) preferred.push_back(path);
  if (preferred.size() == 1) return preferred.front();
  throw std::runtime_error("the extracted package " + folder.string() + " holds several *" +
                           std::string(suffix) + " files; expected one");
}

std::unordered_map<std::string, std::string> read_metadata(const std::filesystem::path& path) {
  const json_document json = parse_json(read_text_file(path), path.string());
  if (!json.IsObject()) throw std::runtime_error(path.string() + " is not a JSON object");
  std::unordered_map<std::string, std::string> metadata;
  for (const auto& item : json.GetObject()) {
    if (!item.value.IsString())
      throw std::runtime_error(path.string() + ": metadata '" + item.name.GetString() +
                               "' is not a string");
    metadata[item.name.GetString()] = item.value.GetString();
  }
  return metadata;
}

}  // namespace

void extract_aoti_package(const std::filesystem::path& pt2, const std::filesystem::path& folder) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(pt2.string());
    std::filesystem::create_directory(folder);
    bool has_library = false;
    for (const auto& name : reader.getAllRecords()) {
      const auto path = destination(folder, name);
      if (path.empty()) continue;
      extract_record(reader, name, path);
      has_library = has_library || ends_with(name, ".so") || ends_with(name, ".cpp");
    }
    if (!has_library)
      throw std::runtime_error("it holds no " + std::string(model_files) + "*.so or *.cpp");
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot extract the AOTInductor package " + pt2.string() + ": " +
                             e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot extract the AOTInductor package " + pt2.string() + ": " +
                             e.what());
  }
}

extracted_aoti_package::extracted_aoti_package(const std::filesystem::path& folder,
                                               const c10::Device& device) {
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("cannot load the AOTInductor package extracted in " +
                              folder.string() + ": " + why);
  };
  log_info("loading the AOTInductor package extracted in " + folder.string());
  try {
    const auto library = find_file(folder, ".so", "wrapper.so");
    if (library.empty()) throw fail("it holds no wrapper library (*.so)");
    const auto metadata = find_file(folder, "_metadata.json", "wrapper_metadata.json");
    if (metadata.empty()) throw fail("it holds no *_metadata.json");
    m_metadata = read_metadata(metadata);
    const std::string device_key = m_metadata["AOTI_DEVICE_KEY"];
    if (device_key.empty()) throw fail(metadata.string() + " names no AOTI_DEVICE_KEY");
    auto& registry = torch::inductor::getAOTIModelRunnerRegistry();
    const auto create = registry.find(device_key);
    if (create == registry.end())
      throw fail("this LibTorch has no AOTInductor runner for device '" + device_key + "'");
    c10::Device runner_device(device_key);
    runner_device.set_index(device.is_cuda() ? device.index() : c10::DeviceIndex(-1));
    m_runner = create->second(library.string(), /*num_models=*/1, runner_device.str(),
                              /*cubin_dir=*/folder.string(), /*run_single_threaded=*/true);
    // The weights Inductor wrote beside the library (binary_blob: the compile helper's default,
    // python/benchmatrix_compile/__main__.py). An empty file means no constants to load (a train
    // step's parameters are inputs), and AOTInductor's mmap of 0 bytes would fail.
    if (const auto blob = find_file(folder, ".blob", ".blob");
        !blob.empty() && std::filesystem::file_size(blob) > 0)
      m_runner->update_constant_buffer_from_blob(blob.string());
  } catch (const c10::Error& e) {
    throw fail(e.what_without_backtrace());
  }
}

}  // namespace benchmatrix
