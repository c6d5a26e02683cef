// numeric_check --a DIR_A --b DIR_B: compares two experiment_runner --export directories (one
// subdirectory per config, .npy files plus manifest.json; worker/numerics_export.hpp), or two config
// directories themselves (a directory holding manifest.json or .npy files is one config). Configs
// are matched by directory name and tensors by file name. Each file's data must have the SHA-256
// its manifest lists (else CORRUPTED, not compared). Per tensor: dtype and shape must agree; then
// element-wise, as torch.testing.assert_close, |a - b| <= atol + rtol * |b| (b: the --b side) with
// the default tolerances per original dtype, NaN equal to NaN at the same position (equal_nan) and
// a NaN against a number a mismatch. --rtol and --atol each override only their own default.
// --max-ulp N also accepts float32 and bfloat16 elements within N ULPs (numerics/ulp_distance.hpp).
// Reports every mismatching tensor (count, max abs/rel error, first mismatch with both values),
// every config, tensor or manifest present on one side only, corrupted or unreadable files, and
// configs with no tensor on either side ("NOTHING TO COMPARE", with the manifest's note; never
// counted as a match). Exit 0: every entry matches and at least one tensor was compared; 1: any
// mismatch, one-sided, corrupted or unreadable entry, or nothing compared at all; 2: bad input.
#include "core/content_hash.hpp"
#include "core/flag_tool.hpp"
#include "core/python_json.hpp"
#include "core/text_file.hpp"
#include "numerics/close_tolerances.hpp"
#include "numerics/npy_file.hpp"
#include "numerics/ulp_distance.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;

constexpr const char* program = "numeric_check";

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"a", 0, a::store, t::text, {}, false, "", "Export directory A (the run to check)."},
      {"b", 0, a::store, t::text, {}, false, "", "Export directory B (the reference: rtol scales |b|)."},
      {"rtol", 0, a::store, t::real, {}, false, "per dtype", "Relative tolerance for every floating tensor (float32 1.3e-6, bfloat16 1.6e-2, float16 1e-3, float64 1e-7; integers and bool 0); atol keeps its default unless given too."},
      {"atol", 0, a::store, t::real, {}, false, "per dtype", "Absolute tolerance (float32, bfloat16, float16 1e-5; float64 1e-7; integers and bool 0); rtol keeps its default unless given too."},
      {"max-ulp", 0, a::store, t::integer, {}, false, "", "Also accept float32 and bfloat16 elements at most this many ULPs apart (bit-pattern distance; with --rtol 0 --atol 0 the ULP test alone)."},
  };
}

struct options {
  fs::path a, b;
  std::optional<double> rtol, atol;
  std::optional<long long> max_ulp;
};

struct bad_input : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::set<std::string> entries(const fs::path& dir, bool directories) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (directories && entry.is_directory()) out.insert(entry.path().filename().string());
    if (!directories && entry.is_regular_file() && entry.path().extension() == ".npy")
      out.insert(entry.path().stem().string());
  }
  return out;
}

/// A config directory (one config's export): it holds manifest.json or .npy files itself.
bool is_config_directory(const fs::path& dir) {
  return fs::exists(dir / "manifest.json") || !entries(dir, false).empty();
}

/// What a config's manifest.json says about its files (worker/numerics_export.hpp).
struct manifest_info {
  bool present = false;
  std::string error;  // unreadable or malformed: why (then nothing else is known)
  std::map<std::string, std::string> dtypes, hashes;  // file name → original torch dtype, SHA-256
  std::string note;                                   // why a config has nothing to export
};

manifest_info read_manifest(const fs::path& dir) {
  manifest_info m;
  const auto path = dir / "manifest.json";
  if (!fs::exists(path)) return m;
  m.present = true;
  try {
    const auto d = parse_json(read_text_file(path.string()), path.string());
    if (!d.IsObject() || !d.HasMember("tensors") || !d["tensors"].IsArray())
      throw std::runtime_error("no \"tensors\" list");
    if (d.HasMember("note") && d["note"].IsString()) m.note = d["note"].GetString();
    for (const auto& t : d["tensors"].GetArray()) {
      if (!t.IsObject() || !t.HasMember("file") || !t["file"].IsString() || !t.HasMember("dtype") ||
          !t["dtype"].IsString() || !t.HasMember("sha256") || !t["sha256"].IsString())
        throw std::runtime_error("a tensor entry without file, dtype or sha256");
      m.dtypes[t["file"].GetString()] = t["dtype"].GetString();
      m.hashes[t["file"].GetString()] = t["sha256"].GetString();
    }
  } catch (const std::exception& e) {
    m = manifest_info{};
    m.present = true;
    m.error = e.what();
  }
  return m;
}

std::string dtype_of_descr(const std::string& descr) {
  static const std::map<std::string, std::string> names = {
      {"<f4", "float32"}, {"<f8", "float64"}, {"<f2", "float16"}, {"<i8", "int64"},
      {"<i4", "int32"},   {"<i2", "int16"},   {"|i1", "int8"},    {"|u1", "uint8"},
      {"|b1", "bool"},    {"<u2", "uint16"},  {"<u4", "uint32"},  {"<u8", "uint64"}};
  const auto it = names.find(descr);
  return it == names.end() ? descr : it->second;
}

double element(const npy_array& array, std::int64_t i) {
  const char kind = array.descr[1];
  const std::size_t size = npy_item_size(array.descr);
  const char* p = array.data.data() + i * static_cast<std::int64_t>(size);
  if (kind == 'f' && size == 4) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (kind == 'f' && size == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (kind == 'f') throw bad_input("unsupported stored dtype " + array.descr);
  if (kind == 'b') return *p != 0;
  if (kind == 'u') {
    std::uint64_t v = 0;
    std::memcpy(&v, p, size);
    return static_cast<double>(v);
  }
  std::int64_t v = 0;
  std::memcpy(&v, p, size);
  const int shift = static_cast<int>(64 - 8 * size);  // sign-extend
  v = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << shift) >> shift;
  return static_cast<double>(v);
}

std::string index_text(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string out = "[";
  for (std::size_t d = 0; d < index.size(); ++d)
    out += (d ? ", " : "") + std::to_string(index[d]);
  return out + "]";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + "]";
}

std::string number(double v) { return python_float_repr(v); }

/// Compares one tensor pair; prints one line; true when it matches.
bool compare_tensor(const std::string& label, const npy_array& a, const npy_array& b,
                    const std::string& dtype_a, const std::string& dtype_b, const options& o) {
  if (dtype_a != dtype_b || a.descr != b.descr) {
    std::cout << label << ": DTYPE MISMATCH a " << dtype_a << " (" << a.descr << "), b " << dtype_b
              << " (" << b.descr << ")\n";
    return false;
  }
  if (a.shape != b.shape) {
    std::cout << label << ": SHAPE MISMATCH a " << shape_text(a.shape) << ", b "
              << shape_text(b.shape) << "\n";
    return false;
  }
  rtol_atol tol = default_rtol_atol(dtype_a);
  if (o.rtol) tol.rtol = *o.rtol;
  if (o.atol) tol.atol = *o.atol;
  const bool is_bool = a.descr == "|b1";
  std::optional<ulp_unit> unit;
  if (o.max_ulp && a.descr == "<f4") {
    if (dtype_a == "float32") unit = ulp_unit::float32;
    if (dtype_a == "bfloat16") unit = ulp_unit::bfloat16;
  }
  const std::int64_t n = a.element_count();
  std::int64_t mismatches = 0, first = -1;
  double max_abs = 0, max_rel = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = element(a, i), y = element(b, i);
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
      if (!ok) max_abs = max_rel = INFINITY;  // NaN against a number: an unbounded error
    } else if (x == y) {
      ok = true;
    } else {
      const double diff = std::abs(x - y);  // inf against -inf: inf
      max_abs = std::max(max_abs, diff);
      max_rel = std::max(max_rel, relative_difference(x, y));
      ok = !is_bool && std::isfinite(x) && std::isfinite(y) && diff <= tol.atol + tol.rtol * std::abs(y);
      if (!ok && unit) {
        float fx, fy;
        std::memcpy(&fx, a.data.data() + 4 * i, 4);
        std::memcpy(&fy, b.data.data() + 4 * i, 4);
        std::optional<std::uint64_t> distance;
        if (*unit == ulp_unit::float32) {
          distance = ulp_distance_float32(fx, fy);
        } else {
          const auto bx = bfloat16_bits_of_widened(fx), by = bfloat16_bits_of_widened(fy);
          if (bx && by) distance = ulp_distance_bfloat16(*bx, *by);
        }
        ok = distance && *distance <= static_cast<std::uint64_t>(*o.max_ulp);
      }
    }
    if (!ok) {
      ++mismatches;
      if (first < 0) first = i;
    }
  }
  std::ostringstream criteria;
  criteria << dtype_a << ", rtol " << number(tol.rtol) << ", atol " << number(tol.atol);
  if (unit) criteria << ", max-ulp " << *o.max_ulp;
  else if (o.max_ulp) criteria << ", max-ulp not applicable";
  if (mismatches == 0) {
    std::cout << label << ": OK (" << n << " elements; " << criteria.str() << "; max abs error "
              << number(max_abs) << ", max rel error " << number(max_rel) << ")\n";
    return true;
  }
  std::cout << label << ": MISMATCH " << mismatches << " of " << n << " elements ("
            << criteria.str() << "); max abs error " << number(max_abs) << ", max rel error "
            << number(max_rel) << "; first at " << index_text(first, a.shape)
            << ": a=" << number(element(a, first)) << " b=" << number(element(b, first)) << "\n";
  return false;
}

/// One side's copy of a tensor: loaded, and checked against its manifest entry. Prints a line and
/// returns nullopt when it is unreadable, corrupted (data SHA-256 differs from the manifest's) or
/// missing from a manifest that exists (its integrity cannot be checked).
std::optional<npy_array> load_checked(const std::string& label, const char* side,
                                      const fs::path& path, const manifest_info& manifest) {
  npy_array array;
  try {
    array = read_npy(path);
  } catch (const std::exception& e) {
    std::cout << label << ": UNREADABLE in " << side << ": " << e.what() << "\n";
    return std::nullopt;
  }
  if (!manifest.present || !manifest.error.empty()) return array;  // reported with the config
  const auto file = path.filename().string();
  const auto expected = manifest.hashes.find(file);
  if (expected == manifest.hashes.end()) {
    std::cout << label << ": NOT IN " << side << "'s manifest.json (its SHA-256 cannot be checked)\n";
    return std::nullopt;
  }
  const std::string actual = sha256_hex(array.data);
  if (actual != expected->second) {
    std::cout << label << ": CORRUPTED in " << side << ": the data's SHA-256 " << actual
              << " differs from manifest.json's " << expected->second << " (not compared)\n";
    return std::nullopt;
  }
  return array;
}

struct tally {
  std::size_t tensors = 0;          // tensor pairs compared element-wise
  std::size_t configs = 0;          // configs with at least one tensor compared
  std::size_t empty_configs = 0;    // configs without any tensor on either side
  std::size_t failures = 0;         // mismatching, one-sided, corrupted or unreadable entries
};

/// Compares one config (`name` empty: A and B are themselves config directories).
void compare_config(const std::string& name, const fs::path& dir_a, const fs::path& dir_b,
                    const options& o, tally& t) {
  const std::string shown = name.empty() ? "." : name;
  const auto label_of = [&](const std::string& tensor) {
    return name.empty() ? tensor : name + "/" + tensor;
  };
  const manifest_info manifest_a = read_manifest(dir_a), manifest_b = read_manifest(dir_b);
  if (manifest_a.present != manifest_b.present) {
    std::cout << label_of("manifest.json") << ": ONLY IN " << (manifest_a.present ? "A" : "B")
              << "\n";
    ++t.failures;
  }
  for (const auto& [side, m] : {std::pair{"A", &manifest_a}, std::pair{"B", &manifest_b}})
    if (!m->error.empty()) {
      std::cout << label_of("manifest.json") << ": UNREADABLE in " << side << ": " << m->error
                << "\n";
      ++t.failures;
    }
  const auto names_a = entries(dir_a, false), names_b = entries(dir_b, false);
  std::set<std::string> names(names_a.begin(), names_a.end());
  names.insert(names_b.begin(), names_b.end());
  // Listed in a manifest, yet on neither side (a file on one side only is reported below).
  std::set<std::string> missing;
  for (const auto* m : {&manifest_a, &manifest_b})
    for (const auto& [file, hash] : m->hashes)
      if (const auto stem = fs::path(file).stem().string(); !names.count(stem) && !missing.count(stem)) {
        missing.insert(stem);
        std::cout << label_of(stem) << ": MISSING on both sides (listed in "
                  << (m == &manifest_a ? "A" : "B") << "'s manifest.json)\n";
        ++t.failures;
      }
  const std::string note = !manifest_a.note.empty() ? manifest_a.note : manifest_b.note;
  if (names.empty()) {
    std::cout << shown << ": NOTHING TO COMPARE (no tensors on either side"
              << (note.empty() ? "" : "; manifest note: " + note) << ")\n";
    ++t.empty_configs;
    return;
  }
  if (!note.empty()) std::cout << shown << ": note: " << note << "\n";
  const std::size_t compared_before = t.tensors;
  for (const auto& tensor : names) {
    const std::string label = label_of(tensor);
    if (!names_b.count(tensor) || !names_a.count(tensor)) {
      std::cout << label << ": ONLY IN " << (names_a.count(tensor) ? "A" : "B") << "\n";
      ++t.failures;
      continue;
    }
    const auto file = tensor + ".npy";
    const auto a = load_checked(label, "A", dir_a / file, manifest_a);
    const auto b = load_checked(label, "B", dir_b / file, manifest_b);
    if (!a || !b) {
      ++t.failures;
      continue;
    }
    ++t.tensors;
    const auto dtype = [&](const manifest_info& m, const npy_array& x) {
      const auto found = m.dtypes.find(file);
      return found != m.dtypes.end() ? found->second : dtype_of_descr(x.descr);
    };
    if (!compare_tensor(label, *a, *b, dtype(manifest_a, *a), dtype(manifest_b, *b), o))
      ++t.failures;
  }
  if (t.tensors > compared_before) ++t.configs;
}

int run(const options& o) {
  for (const auto& dir : {o.a, o.b})
    if (!fs::is_directory(dir)) throw bad_input("no such directory: " + dir.string());
  // Either two export directories (one subdirectory per config) or two config directories.
  const bool config_a = is_config_directory(o.a), config_b = is_config_directory(o.b);
  if (config_a != config_b) {
    const auto& config = config_a ? o.a : o.b;
    const auto& root = config_a ? o.b : o.a;
    throw bad_input(config.string() + " is one config's directory (it holds manifest.json or .npy "
                    "files) but " + root.string() + " is not; give two --export directories or two "
                    "config directories");
  }
  tally t;
  std::size_t config_count = 1;
  if (config_a) {
    compare_config("", o.a, o.b, o, t);
  } else {
    const auto configs_a = entries(o.a, true), configs_b = entries(o.b, true);
    std::set<std::string> configs(configs_a.begin(), configs_a.end());
    configs.insert(configs_b.begin(), configs_b.end());
    config_count = configs.size();
    for (const auto& config : configs) {
      if (!configs_b.count(config) || !configs_a.count(config)) {
        std::cout << config << ": ONLY IN " << (configs_a.count(config) ? "A" : "B") << "\n";
        ++t.failures;
        continue;
      }
      compare_config(config, o.a / config, o.b / config, o, t);
    }
  }
  const std::string empty_note =
      t.empty_configs ? "; " + std::to_string(t.empty_configs) +
                            " config(s) with nothing to compare, not counted as a match"
                      : "";
  if (t.failures) {
    std::cout << t.failures << " mismatching, one-sided, corrupted or unreadable entries ("
              << t.tensors << " tensors compared in " << t.configs << " configs" << empty_note
              << ").\n";
    return 1;
  }
  if (t.tensors == 0) {
    std::cout << "Nothing was compared: no tensor in A and B (" << config_count
              << " configs found" << empty_note
              << "). Are these --export directories, and did the run export anything?\n";
    return 1;
  }
  std::cout << "A and B numerically match: " << t.tensors << " tensors in " << t.configs
            << " configs" << empty_note << ".\n";
  return 0;
}

options parse(const parsed_flags& flags) {
  options o;
  const auto a = flags.last("a"), b = flags.last("b");
  if (!a || !*a || !b || !*b) throw usage_error("the following arguments are required: --a, --b");
  o.a = **a;
  o.b = **b;
  for (const char* name : {"rtol", "atol"})
    if (const auto v = flags.last(name); v && *v) {
      const double value = std::stod(**v);
      if (!(value >= 0)) throw usage_error(std::string("argument --") + name + ": must not be negative");
      (std::string(name) == "rtol" ? o.rtol : o.atol) = value;
    }
  if (const auto v = flags.last("max-ulp"); v && *v) {
    o.max_ulp = std::stoll(**v);
    if (*o.max_ulp < 0) throw usage_error("argument --max-ulp: must not be negative");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const char* const description =
      "Compares two experiment_runner --export directories config by config (subdirectory "
      "name), or two\nconfig directories (holding manifest.json or .npy files), tensor by tensor "
      "(file name): each file's\nSHA-256 against its manifest, dtype, shape, then |a - b| <= atol "
      "+ rtol * |b| element-wise\n(torch.testing.assert_close; NaN equals NaN at the same "
      "position). Exit status: 0 all match,\n1 any mismatch, file on one side only, corrupted "
      "file, or no tensor compared at all, 2 bad input.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc},
                       [](const parsed_flags& flags) { return run(parse(flags)); },
                       /*failure_status=*/2);
}
