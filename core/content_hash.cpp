#include "core/content_hash.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace benchmatrix {

struct sha256_hasher::state {
  EVP_MD_CTX* context = nullptr;
};

sha256_hasher::sha256_hasher() : m_state(new state) {
  m_state->context = EVP_MD_CTX_new();
  if (!m_state->context || EVP_DigestInit_ex(m_state->context, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(m_state->context);
    delete m_state;
    throw std::runtime_error("OpenSSL: cannot initialise a SHA-256 digest");
  }
}

sha256_hasher::~sha256_hasher() {
  EVP_MD_CTX_free(m_state->context);
  delete m_state;
}

sha256_hasher& sha256_hasher::add(std::string_view bytes) {
  if (EVP_DigestUpdate(m_state->context, bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("OpenSSL: SHA-256 update failed");
  return *this;
}

sha256_hasher& sha256_hasher::add_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string() + " to hash it");
  std::array<char, 1 << 16> buffer{};  // 64 KiB reads
  while (in) {
    in.read(buffer.data(), buffer.size());
    add(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw std::runtime_error("error while reading " + path.string());
  return *this;
}

sha256_hasher& sha256_hasher::add_field(std::string_view label, std::string_view value) {
  add(label).add("=").add(std::to_string(value.size())).add(":").add(value).add(";");
  return *this;
}

std::string sha256_hasher::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(m_state->context, digest.data(), &size) != 1)
    throw std::runtime_error("OpenSSL: SHA-256 final failed");
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    out += byte;
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) { return sha256_hasher().add(bytes).hex(); }

std::string file_sha256_hex(const std::filesystem::path& path) {
  return sha256_hasher().add_file(path).hex();
}

}  // namespace benchmatrix
