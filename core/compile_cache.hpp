// A directory of compiled artifacts (AOTInductor packages), one entry per content-hash key.
//
//   <root>/<key>/<artifact>        the artifact, written by the builder (with any other files)
//   <root>/<key>/manifest.json     {"artifact", "sha256", "bytes", "build_seconds", "description"
//                                   [, "rebuilt_for"], "files": {"<path in the entry>":
//                                   {"bytes", "sha256", "mtime_ns"}, ...}}
//   <root>/<key>.lock              flock(2) held while an entry is checked or built
//
// Concurrent processes that want the same key serialise on its lock: one builds, the others wait and
// then hit. An entry is built in a private temporary directory and renamed into place, so a crash or
// a kill mid-build never leaves a half-written entry under the key. The manifest records every
// file the builder left (the artifact and, e.g., the package's extracted files): an entry whose
// manifest is missing or unreadable, or one of whose files is missing, has another size, or has
// another modification time and another SHA-256 than recorded, is corrupt: it is reported and
// replaced once a rebuild succeeds; a failed build leaves the old entry as it was. A file whose
// size and modification time are the recorded ones is not read on a hit (as git's index: a hit on
// a gigabyte package is a few stat calls, not a gigabyte hashed); one whose time changed but whose
// bytes did not (a copy without its times) is hashed once and its new time recorded. A manifest
// without "files" (written before they were recorded) has its artifact hashed on every check.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace benchmatrix {

/// What get_or_build found and did.
struct cache_entry {
  std::filesystem::path artifact;  // the artifact's path inside the entry
  bool hit = false;                // true: a valid entry existed and was used as is
  std::string rebuilt_because;     // why an existing entry was rebuilt ("" when none existed or hit)
  double build_seconds = 0;        // the builder's wall time; for a hit, the time it took originally
  bool built = false;              // true: this call ran the builder (build_seconds is its time now)
};

class compile_cache {
public:
  /// Creates `root` when missing. Throws std::runtime_error when it cannot.
  explicit compile_cache(std::filesystem::path root);

  /// The valid entry for `key` (a hex digest), or a new one: `build(directory)` must write
  /// `artifact_name` into the directory it is given (throwing on failure, which leaves no entry).
  /// `rebuild` replaces even a valid entry (--cold-start), except one that a rebuild with the same
  /// non-empty `rebuild_token` made (a sweep's token: its verifier and baseline children reuse the
  /// fresh build of its timing child instead of compiling a third time). `description` is stored
  /// in the manifest for people reading the cache (what the key was made of).
  cache_entry get_or_build(const std::string& key, const std::string& artifact_name,
                           const std::string& description, bool rebuild,
                           const std::function<void(const std::filesystem::path&)>& build,
                           const std::string& rebuild_token = "");

  /// Removes the entry for `key` under its lock (run_and_check --clear_cache). Returns whether an
  /// entry existed.
  bool remove(const std::string& key);

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }

private:
  std::filesystem::path m_root;
};

}  // namespace benchmatrix
