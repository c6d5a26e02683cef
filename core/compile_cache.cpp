#include "core/compile_cache.hpp"

#include "core/content_hash.hpp"
#include "core/directory_tree.hpp"
#include "core/log.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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
  const auto artifact = directory / artifact_name;
  std::error_code error;
  const auto size = std::filesystem::file_size(artifact, error);
  if (error) return artifact_name + " is missing";
  if (size != manifest["bytes"].GetUint64())
    return artifact_name + " has " + std::to_string(size) + " bytes, the manifest says " +
           std::to_string(manifest["bytes"].GetUint64());
  if (file_sha256_hex(artifact) != manifest["sha256"].GetString())
    return artifact_name + "'s SHA-256 differs from the manifest's";
  if (manifest.HasMember("build_seconds") && manifest["build_seconds"].IsNumber())
    build_seconds = manifest["build_seconds"].GetDouble();
  if (manifest.HasMember("rebuilt_for") && manifest["rebuilt_for"].IsString())
    rebuilt_for = manifest["rebuilt_for"].GetString();
  return "";
}

void write_manifest(const std::filesystem::path& directory, const std::string& artifact_name,
                    const std::string& description, double build_seconds,
                    const std::string& rebuilt_for) {
  const auto artifact = directory / artifact_name;
  if (!std::filesystem::is_regular_file(artifact))
    throw std::runtime_error("the compile step wrote no " + artifact.string());
  json_document manifest(rapidjson::kObjectType);
  auto& a = manifest.GetAllocator();
  manifest.AddMember("artifact", json_value(artifact_name.c_str(), a), a);
  manifest.AddMember("sha256", json_value(file_sha256_hex(artifact).c_str(), a), a);
  manifest.AddMember("bytes", json_value(static_cast<uint64_t>(std::filesystem::file_size(artifact))), a);
  manifest.AddMember("build_seconds", build_seconds, a);
  manifest.AddMember("description", json_value(description.c_str(), a), a);
  if (!rebuilt_for.empty()) manifest.AddMember("rebuilt_for", json_value(rebuilt_for.c_str(), a), a);
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
