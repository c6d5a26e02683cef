#include "core/compile_cache.hpp"

#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// flock(LOCK_EX) on a file for the object's lifetime; blocks until the lock is free.
class exclusive_file_lock {
public:
  explicit exclusive_file_lock(const std::filesystem::path& path) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0)
      throw std::runtime_error("cannot open the cache lock " + path.string() + ": " +
                               std::strerror(errno));
    while (::flock(m_fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(m_fd);
      throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(error));
    }
  }
  ~exclusive_file_lock() { ::close(m_fd); }  // closing releases the flock
  exclusive_file_lock(const exclusive_file_lock&) = delete;  // one fd, closed once
  exclusive_file_lock& operator=(const exclusive_file_lock&) = delete;

private:
  int m_fd = -1;
};

/// The file's modification time in nanoseconds since the epoch (stat(2)'s st_mtim), or -1 when it
/// cannot be read.
int64_t modification_ns(const std::filesystem::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return -1;
  return static_cast<int64_t>(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec;
}

/// "" when the file matches its manifest record {"bytes", "sha256", "mtime_ns"}, else why not.
/// A file whose size and modification time are those recorded is taken as unchanged without
/// reading it (as git's index and make do); one whose time differs (touched, rewritten in place,
/// copied without its times) is hashed, and when its SHA-256 still matches, `restamp` turns true
/// and the record gets the new time, so that the next check is a stat again. As git's "racily
/// clean" rule: a time not older than the manifest's own (`manifest_ns`) proves nothing (a write
/// in the same clock tick as the recording keeps the time), so such a file is hashed too.
std::string check_file(const std::filesystem::path& directory, const std::string& name,
                       json_value& record, rapidjson::MemoryPoolAllocator<>& allocator,
                       int64_t manifest_ns, bool& restamp) {
  if (!record.IsObject() || !record.HasMember("bytes") || !record["bytes"].IsUint64() ||
      !record.HasMember("sha256") || !record["sha256"].IsString())
    return "manifest.json's record of " + name + " lacks bytes or sha256";
  const auto path = directory / name;
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return name + " is missing";
  if (size != record["bytes"].GetUint64())
    return name + " has " + std::to_string(size) + " bytes, the manifest says " +
           std::to_string(record["bytes"].GetUint64());
  const int64_t modified = modification_ns(path);
  const bool same_time = modified >= 0 && record.HasMember("mtime_ns") &&
                         record["mtime_ns"].IsInt64() && record["mtime_ns"].GetInt64() == modified;
  if (same_time && modified < manifest_ns) return "";
  if (file_sha256_hex(path) != record["sha256"].GetString())
    return name + "'s SHA-256 differs from the manifest's";
  if (same_time) return "";
  if (record.HasMember("mtime_ns")) record.RemoveMember("mtime_ns");
  record.AddMember("mtime_ns", json_value(modified), allocator);
  restamp = true;
  return "";
}

/// "" when the entry is valid, else why it is not. Fills build_seconds from the manifest.
std::string check_entry(const std::filesystem::path& directory, const std::string& artifact_name,
                        double& build_seconds, std::string& rebuilt_for) {
  const auto manifest_path = directory / "manifest.json";
  if (!std::filesystem::is_regular_file(manifest_path)) return "manifest.json is missing";
  json_document manifest;
  try {
    manifest = parse_json(read_text_file(manifest_path), manifest_path.string());
  } catch (const std::exception& e) {
    return std::string("manifest.json is unreadable: ") + e.what();
  }
  if (!manifest.IsObject() || !manifest.HasMember("sha256") || !manifest["sha256"].IsString() ||
      !manifest.HasMember("bytes") || !manifest["bytes"].IsUint64() ||
      !manifest.HasMember("artifact") || !manifest["artifact"].IsString())
    return "manifest.json lacks artifact, sha256 or bytes";
  if (manifest["artifact"].GetString() != artifact_name)
    return "manifest.json names artifact '" + std::string(manifest["artifact"].GetString()) +
           "', expected '" + artifact_name + "'";
  bool restamp = false;
  const int64_t manifest_ns = modification_ns(manifest_path);
  if (manifest.HasMember("files")) {
    auto& files = manifest["files"];
    if (!files.IsObject() || !files.HasMember(artifact_name.c_str()))
      return "manifest.json's files do not list " + artifact_name;
    // The artifact first (its problem is the one to report), then the others in manifest order.
    auto problem = check_file(directory, artifact_name, files[artifact_name.c_str()],
                              manifest.GetAllocator(), manifest_ns, restamp);
    for (auto file = files.MemberBegin(); problem.empty() && file != files.MemberEnd(); ++file)
      if (file->name.GetString() != artifact_name)
        problem = check_file(directory, file->name.GetString(), file->value,
                             manifest.GetAllocator(), manifest_ns, restamp);
    if (!problem.empty()) return problem;
  } else {  // written before files were recorded: the artifact alone, hashed on every check
    // (its record has no time, so check_file hashes it; the time it would record is dropped)
    json_value record(rapidjson::kObjectType);
    record.AddMember("bytes", json_value(manifest["bytes"], manifest.GetAllocator()),
                     manifest.GetAllocator());
    record.AddMember("sha256", json_value(manifest["sha256"], manifest.GetAllocator()),
                     manifest.GetAllocator());
    bool unused_restamp = false;
    const auto problem = check_file(directory, artifact_name, record, manifest.GetAllocator(),
                                    manifest_ns, unused_restamp);
    if (!problem.empty()) return problem;
  }
  if (manifest.HasMember("build_seconds") && manifest["build_seconds"].IsNumber())
    build_seconds = manifest["build_seconds"].GetDouble();
  if (manifest.HasMember("rebuilt_for") && manifest["rebuilt_for"].IsString())
    rebuilt_for = manifest["rebuilt_for"].GetString();
  if (restamp) {
    try {
      replace_text_file(manifest_path, to_python_json(manifest) + "\n");
    } catch (const std::exception& e) {  // a read-only cache still hits; it hashes again next time
      log_warning("cannot record the checked files' times in " + manifest_path.string() + ": " +
                  e.what());
    }
  }
  return "";
}

/// Every regular file below `directory` but manifest.json, as paths relative to it, sorted.
std::vector<std::string> entry_files(const std::filesystem::path& directory) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) {
      auto name = std::filesystem::relative(entry.path(), directory).string();
      if (name != "manifest.json") files.push_back(std::move(name));
    }
  std::sort(files.begin(), files.end());
  return files;
}

void write_manifest(const std::filesystem::path& directory, const std::string& artifact_name,
                    const std::string& description, double build_seconds,
                    const std::string& rebuilt_for) {
  const auto artifact = directory / artifact_name;
  if (!std::filesystem::is_regular_file(artifact))
    throw std::runtime_error("the compile step wrote no " + artifact.string());
  json_document manifest(rapidjson::kObjectType);
  auto& a = manifest.GetAllocator();
  json_value files(rapidjson::kObjectType);
  std::string artifact_sha256;
  for (const auto& name : entry_files(directory)) {
    const auto path = directory / name;
    const std::string sha256 = file_sha256_hex(path);
    if (name == artifact_name) artifact_sha256 = sha256;
    json_value record(rapidjson::kObjectType);
    const auto bytes = static_cast<uint64_t>(std::filesystem::file_size(path));
    record.AddMember("bytes", json_value(bytes), a);
    record.AddMember("sha256", json_value(sha256.c_str(), a), a);
    record.AddMember("mtime_ns", json_value(modification_ns(path)), a);
    files.AddMember(json_value(name.c_str(), a), record, a);
  }
  manifest.AddMember("artifact", json_value(artifact_name.c_str(), a), a);
  manifest.AddMember("sha256", json_value(artifact_sha256.c_str(), a), a);
  manifest.AddMember("bytes", json_value(static_cast<uint64_t>(std::filesystem::file_size(artifact))), a);
  manifest.AddMember("build_seconds", build_seconds, a);
  manifest.AddMember("description", json_value(description.c_str(), a), a);
  if (!rebuilt_for.empty()) manifest.AddMember("rebuilt_for", json_value(rebuilt_for.c_str(), a), a);
  manifest.AddMember("files", files, a);
  std::ofstream out(directory / "manifest.json", std::ios::trunc);
  out << to_python_json(manifest) << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write " + (directory / "manifest.json").string());
}

/// A sibling path unique to this process, for a build or a removal in progress.
std::filesystem::path private_sibling(const std::filesystem::path& root, const std::string& kind,
                                      const std::string& key) {
  return root / ("." + kind + "-" + key + "-" + std::to_string(::getpid()));
}

}  // namespace

compile_cache::compile_cache(std::filesystem::path root) : m_root(std::move(root)) {
  std::error_code error;
  std::filesystem::create_directories(m_root, error);
  if (error || !std::filesystem::is_directory(m_root))
    throw std::runtime_error("cannot create the compile cache directory " + m_root.string() +
                             (error ? ": " + error.message() : ""));
}

namespace {
void check_key(const std::string& key) {
  if (key.empty() || key.find('/') != std::string::npos || key.front() == '.')
    throw std::invalid_argument("compile cache: invalid key '" + key + "'");
}
}  // namespace

bool compile_cache::remove(const std::string& key) {
  check_key(key);
  exclusive_file_lock lock(m_root / (key + ".lock"));
  const auto directory = m_root / key;
  if (!std::filesystem::exists(directory)) return false;
  // Renamed aside first: the key is free at once, even if the removal stops half-way.
  const auto trash = private_sibling(m_root, "trash", key);
  std::filesystem::rename(directory, trash);
  remove_tree(trash.string());
  return true;
}

cache_entry compile_cache::get_or_build(
    const std::string& key, const std::string& artifact_name, const std::string& description,
    bool rebuild, const std::function<void(const std::filesystem::path&)>& build,
    const std::string& rebuild_token) {
  check_key(key);
  exclusive_file_lock lock(m_root / (key + ".lock"));
  const auto directory = m_root / key;
  cache_entry entry;
  entry.artifact = directory / artifact_name;
  const bool exists = std::filesystem::exists(directory);
  if (exists) {
    std::string rebuilt_for;
    std::string problem = check_entry(directory, artifact_name, entry.build_seconds, rebuilt_for);
    const bool fresh_for_this_token = !rebuild_token.empty() && rebuilt_for == rebuild_token;
    if (problem.empty() && (!rebuild || fresh_for_this_token)) {
      entry.hit = true;
      return entry;
    }
    entry.rebuilt_because = problem.empty() ? "--cold-start" : "corrupt entry: " + problem;
    if (!problem.empty())
      log_warning("compile cache entry " + directory.string() + " is corrupt (" + problem +
                  "); rebuilding it");
  }
  // A build or removal killed mid-way (timeout, Ctrl-C) left its staging or trash directory: no
  // one else builds or removes this key while we hold its lock, so any is stale.
  for (const auto& name : directory_entries(m_root.string()))
    if (name.rfind(".build-" + key + "-", 0) == 0 || name.rfind(".trash-" + key + "-", 0) == 0)
      remove_tree((m_root / name).string());
  // Built aside, so that a failed build leaves the old entry (if any) as it was.
  const auto staging = private_sibling(m_root, "build", key);
  remove_tree(staging.string());
  std::filesystem::create_directories(staging);
  try {
    const auto started = std::chrono::steady_clock::now();
    build(staging);
    entry.build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write_manifest(staging, artifact_name, description, entry.build_seconds,
                   rebuild ? rebuild_token : std::string());
    entry.built = true;
  } catch (...) {
    remove_tree(staging.string());
    throw;
  }
  if (exists) {
    // Moved aside first: the key's name is then free even if the removal fails half-way.
    const auto trash = private_sibling(m_root, "trash", key);
    remove_tree(trash.string());
    std::filesystem::rename(directory, trash);
    remove_tree(trash.string());
  }
  std::filesystem::rename(staging, directory);  // atomic: the entry appears whole or not at all
  return entry;
}

}  // namespace benchmatrix
