// SHA-256 digests (OpenSSL) as lower-case hex: the compile cache's keys and its integrity check.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace benchmatrix {

/// Accumulates bytes; `hex()` gives the SHA-256 of everything added so far (64 hex digits).
class sha256_hasher {
public:
  sha256_hasher();
  ~sha256_hasher();
  sha256_hasher(const sha256_hasher&) = delete;  // owns an OpenSSL digest context
  sha256_hasher& operator=(const sha256_hasher&) = delete;

  sha256_hasher& add(std::string_view bytes);
  /// Adds the file's bytes. Throws std::runtime_error when it cannot be read.
  sha256_hasher& add_file(const std::filesystem::path& path);
  /// Adds "label=<size>:value;" so that concatenated fields can never alias each other.
  sha256_hasher& add_field(std::string_view label, std::string_view value);
  [[nodiscard]] std::string hex();

private:
  struct state;
  state* m_state;
};

[[nodiscard]] std::string sha256_hex(std::string_view bytes);
[[nodiscard]] std::string file_sha256_hex(const std::filesystem::path& path);

}  // namespace benchmatrix
