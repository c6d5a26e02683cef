// reference_outputs: golden conv2d and matmul outputs over an input-channel sweep, as tt-metal's
// generate_torch_reference_outputs.py / load_torch_reference_outputs.py (reference/kernel_evals.md
// §4), with the inputs saved, drawn on the CPU generator wherever the outputs are computed, and a
// ULP comparison of two machines' outputs.
//
//   reference_outputs generate --out DIR [--device cpu|cuda|cuda:N] [--ic 8 16 ...] [--allow-tf32]
//                               (--out is required: the whole sweep is about 3.1 GiB of .npy files)
//   reference_outputs verify DIR          regenerate inputs, compare hashes (✓/✗ per dtype and ic)
//   reference_outputs summary DIR         system info, configuration, cases
//   reference_outputs compare DIR_A DIR_B [--max-ulp N]   mean and max ULP distance per case
//
// Exit status: 0 ok; 1 verification failed, or compare found a case above --max-ulp, a case on one
// side only, different inputs or shapes; 2 usage error or unreadable input.
#include "core/flag_tool.hpp"
#include "core/log.hpp"
#include "core/text_file.hpp"
#include "numerics/reference_cases.hpp"
#include "numerics/reference_generation.hpp"
#include "numerics/ulp_distance.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <set>

namespace {

using namespace benchmatrix;
namespace fs = std::filesystem;

const char* const program = "reference_outputs";

/// The configuration generate writes: the seed's, over `input_channels` (empty: the whole sweep).
reference_config sweep_of(const std::vector<std::int64_t>& input_channels) {
  reference_config config;
  if (!input_channels.empty())
    config.input_channels_sweep = input_channels;
  return config;
}

/// Bytes of the .npy data a configuration's cases take on disk: every tensor is stored as float32
/// (4 bytes an element) in either dtype; the .npy headers and JSON files, a few kB a case, are left
/// out.
std::uint64_t data_set_bytes(const reference_config& config) {
  std::uint64_t bytes = 0;
  for (const auto ic : config.input_channels_sweep)
    for (const auto& [name, shape] : reference_shapes(config, ic)) {
      std::uint64_t elements = 1;
      for (const auto extent : shape)
        elements *= static_cast<std::uint64_t>(extent);
      bytes += elements * sizeof(float);
    }
  return bytes * config.dtypes.size();
}

/// "3.1 GiB", "1.2 MiB", "940 B": binary units (1 GiB = 2^30 bytes), the numbers du -h and ls -lh
/// show, one decimal past bytes.
std::string binary_size(std::uint64_t bytes) {
  const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  for (; value >= 1023.95 && unit + 1 < std::size(units); value /= 1024)
    ++unit;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

struct subcommand {
  std::string name;
  std::string description;
  std::vector<flag_spec> specs;
};

std::vector<subcommand> subcommands() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"generate",
       "Generates the data set: conv2d (batch 1, 32x32 input, 32 output channels, 3x3 kernel, "
       "padding 1,\nstride 1, bias) and a matmul [M, K] @ [K, N] (M = 1024, K = ic*9, N = 32), "
       "bfloat16 and float32,\nover the input-channel sweep 8 ... 8192. Inputs: seed 42, randn on "
       "the CPU generator, then moved to\nthe device.",
       {{"device",
         0,
         a::store,
         t::text,
         {},
         false,
         "cpu",
         "cpu, cuda or cuda:N (CUDA absent: a warning, then the CPU)."},
        {"out",
         0,
         a::store,
         t::text,
         {},
         false,
         "",
         "Output directory (required; the whole sweep writes " + binary_size(data_set_bytes({})) +
             ", ic 8 alone " + binary_size(data_set_bytes(sweep_of({8}))) + ")."},
        {"ic",
         0,
         a::extend,
         t::integer,
         {},
         false,
         "",
         "Input channels to generate (default: the whole sweep 8 ... 8192)."},
        {"allow-tf32",
         0,
         a::store_true,
         t::text,
         {},
         false,
         "",
         "Let float32 cuDNN convolutions and CUDA matmuls use TF32 (off by default, as in the "
         "seed: golden outputs at full float32 precision; system_info.json records the flags)."}}},
      {"verify",
       "Regenerates every case's inputs and checks their SHA-256 against the metadata, and every "
       ".npy's data\nagainst it: one line per dtype and ic, exit 1 when any fails.",
       {{"dir", 0, a::positional, t::text, {}, false, "", "A reference_outputs directory."}}},
      {"summary",
       "Prints the system info, the configuration and the cases of a directory.",
       {{"dir", 0, a::positional, t::text, {}, false, "", "A reference_outputs directory."}}},
      {"compare",
       "Mean and max bit-pattern ULP distance (in the case's dtype) of B's outputs from A's, per "
       "case.",
       {{"dirs", 0, a::positional, t::text, {}, false, "", "Two directories: A (reference), B."},
        {"max-ulp",
         0,
         a::store,
         t::integer,
         {},
         false,
         "0",
         "Largest max ULP distance that passes (exit 1 above it)."}}},
  };
}



std::string one_dir(const parsed_flags& flags) {
  const auto dirs = flags.texts("dir");
  if (dirs.size() != 1)
    throw usage_error("expected one directory, got " + std::to_string(dirs.size()));
  if (!fs::is_directory(dirs[0]))
    throw usage_error(dirs[0] + ": no such directory");
  return dirs[0];
}

std::string case_name(const reference_case& c) {
  return c.dtype + " ic=" + std::to_string(c.input_channels) + " K=" + std::to_string(c.k);
}

int run_generate(const parsed_flags& flags) {
  generate_options options;
  for (const auto& ic : flags.texts("ic")) {
    options.input_channels.push_back(std::stoll(ic));
    if (options.input_channels.back() < 1)
      throw usage_error("argument --ic: must be 1 or more, got " + ic);
  }
  const reference_config config = sweep_of(options.input_channels);
  const std::size_t cases = config.dtypes.size() * config.input_channels_sweep.size();
  const std::string size = std::to_string(cases) + " cases, about " +
                           binary_size(data_set_bytes(config)) + " of .npy files";
  // No default directory: a data set of gigabytes written into wherever the command was run from
  // is never what was meant.
  const std::string out = flags.text_or("out", "");
  if (out.empty())
    throw usage_error("argument --out: required: the directory generate writes the data set "
                      "into (" +
                      size + "; --ic narrows the sweep); nothing was written");
  options.out_dir = out;
  options.device = flags.text_or("device", "cpu");
  options.allow_tf32 = flags.given("allow-tf32");
  log_info("writing " + size + " into " + options.out_dir.string());
  try {
    generate_reference_outputs(options);
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  std::cout << "wrote " << options.out_dir.string() << "\n";
  return 0;
}

int run_verify(const parsed_flags& flags) {
  const fs::path dir = one_dir(flags);
  const reference_config config = read_reference_config(dir);
  const auto cases = list_reference_cases(dir);
  if (cases.empty())
    throw std::runtime_error(dir.string() + ": no cases");
  std::size_t failed = 0;
  for (const auto& c : cases) {
    std::string problems;
    try {
      const auto loaded = load_reference_case(dir, c.dtype, c.input_channels);
      for (const auto& check : check_reference_hashes(
               loaded, regenerated_input_hashes(config, c.dtype, c.input_channels))) {
        if (check.passed())
          continue;
        problems += "\n    " + check.tensor + ": ";
        if (check.file_hash != check.expected)
          problems += "file data differs from the metadata hash";
        if (check.file_hash != check.expected && !check.regenerated_hash.empty() &&
            check.regenerated_hash != check.expected)
          problems += "; ";
        if (!check.regenerated_hash.empty() && check.regenerated_hash != check.expected)
          problems += "regenerated input differs from the metadata hash";
      }
    } catch (const std::exception& e) {
      problems = "\n    " + std::string(e.what());
    }
    std::cout << (problems.empty() ? "✓ " : "✗ ") << case_name(c) << problems << "\n";
    if (!problems.empty())
      ++failed;
  }
  std::cout << (cases.size() - failed) << " of " << cases.size() << " cases verified\n";
  return failed ? 1 : 0;
}

int run_summary(const parsed_flags& flags) {
  const fs::path dir = one_dir(flags);
  const reference_config config = read_reference_config(dir);
  const auto cases = list_reference_cases(dir);
  std::cout << "System info (" << (dir / "system_info.json").string() << "):\n";
  const std::string info = read_text_file(dir / "system_info.json");
  if (info.empty()) {
    std::cout << "  (missing)\n";
  } else {
    const json_document d = parse_json(info, (dir / "system_info.json").string());
    for (const auto& m : d.GetObject())
      std::cout << "  " << m.name.GetString() << ": " << python_str(m.value) << "\n";
  }
  std::cout << "Configuration: seed " << config.seed << ", batch " << config.batch << ", input "
            << config.input_height << "x" << config.input_width << ", " << config.out_channels
            << " output channels, kernel " << config.kernel_h << "x" << config.kernel_w
            << ", padding (" << config.padding_h << ", " << config.padding_w << "), stride ("
            << config.stride_h << ", " << config.stride_w << "), bias "
            << (config.use_bias ? "on" : "off") << "; matmul M=" << config.m()
            << ", N=" << config.out_channels << "\n";
  std::cout << "Cases (" << cases.size() << "):\n";
  for (const auto& c : cases) {
    std::cout << "  " << case_name(c) << "  " << case_prefix(c) << "\n";
  }
  return 0;
}

std::string case_key(const reference_case& c) {
  return c.dtype + "/" + std::to_string(c.input_channels);
}

int run_compare(const parsed_flags& flags) {
  const auto dirs = flags.texts("dirs");
  if (dirs.size() != 2)
    throw usage_error("expected two directories, A and B, got " + std::to_string(dirs.size()));
  for (const auto& d : dirs)
    if (!fs::is_directory(d))
      throw usage_error(d + ": no such directory");
  const long long max_ulp = std::stoll(flags.text_or("max-ulp", "0"));
  if (max_ulp < 0)
    throw usage_error("argument --max-ulp: must be 0 or more");
  std::map<std::string, reference_case> a_cases, b_cases;
  for (const auto& c : list_reference_cases(dirs[0]))
    a_cases[case_key(c)] = c;
  for (const auto& c : list_reference_cases(dirs[1]))
    b_cases[case_key(c)] = c;
  std::set<std::string> keys;
  for (const auto& [k, c] : a_cases)
    keys.insert(k);
  for (const auto& [k, c] : b_cases)
    keys.insert(k);
  std::vector<std::pair<reference_case, std::string>> ordered;
  for (const auto& k : keys)
    ordered.emplace_back(a_cases.count(k) ? a_cases[k] : b_cases[k], k);
  std::sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) {
    return std::tie(x.first.dtype, x.first.input_channels) <
           std::tie(y.first.dtype, y.first.input_channels);
  });

  std::size_t failed = 0;
  for (const auto& [c, key] : ordered) {
    if (!b_cases.count(key) || !a_cases.count(key)) {
      std::cout << "✗ " << case_name(c) << ": only in " << (a_cases.count(key) ? "A" : "B") << "\n";
      ++failed;
      continue;
    }
    const auto a = load_reference_case(dirs[0], c.dtype, c.input_channels);
    const auto b = load_reference_case(dirs[1], c.dtype, c.input_channels);
    std::string line = case_name(c) + ":";
    bool ok = true;
    for (const auto& name : reference_input_names())
      if (a.tensors.at(name).data != b.tensors.at(name).data) {
        line += " inputs differ (" + name + "), outputs not compared";
        ok = false;
        break;
      }
    if (ok)
      for (const auto& name : reference_output_names()) {
        const auto& x = a.tensors.at(name);
        const auto& y = b.tensors.at(name);
        if (x.shape != y.shape) {
          line += " " + name + " shapes differ";
          ok = false;
          continue;
        }
        ulp_statistics stats;
        try {
          stats = ulp_distance_statistics(reinterpret_cast<const float*>(x.data.data()),
                                          reinterpret_cast<const float*>(y.data.data()),
                                          static_cast<std::size_t>(x.element_count()),
                                          c.dtype == "bfloat16" ? ulp_unit::bfloat16
                                                                : ulp_unit::float32);
        } catch (const std::invalid_argument& e) {
          line += " " + name + ": " + e.what();
          ok = false;
          continue;
        }
        char buffer[160];
        std::snprintf(buffer, sizeof buffer, " %s mean ULP %.4f max ULP %llu",
                      name.substr(0, name.find('/')).c_str(), stats.mean,
                      static_cast<unsigned long long>(stats.max));
        line += buffer;
        if (stats.nan_mismatches)
          line += " (" + std::to_string(stats.nan_mismatches) + " NaN on one side)";
        if (stats.nan_mismatches || stats.max > static_cast<unsigned long long>(max_ulp))
          ok = false;
      }
    std::cout << (ok ? "✓ " : "✗ ") << line << "\n";
    if (!ok)
      ++failed;
  }
  std::cout << (keys.size() - failed) << " of " << keys.size() << " cases within " << max_ulp
            << " ULP\n";
  return failed ? 1 : 0;
}

std::string top_usage() {
  return std::string("usage: ") + program + " {generate,verify,summary,compare} ...";
}

} // namespace

int main(int argc, char** argv) {
  set_logger_name(program);
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  if (arguments.empty() || arguments[0] == "-h" || arguments[0] == "--help") {
    std::cout << top_usage() << "\n\n";
    for (const auto& s : subcommands())
      std::cout << "  " << s.name << "\n";
    std::cout << "\n'" << program << " SUBCOMMAND --help' describes each.\n";
    return arguments.empty() ? 2 : 0;
  }
  const auto all = subcommands();
  const auto sub = std::find_if(all.begin(), all.end(),
                                [&](const subcommand& s) { return s.name == arguments[0]; });
  if (sub == all.end()) {
    std::cerr << top_usage() << "\n"
              << program << ": error: unknown subcommand '" << arguments[0]
              << "' (choose from generate, verify, summary, compare)\n";
    return 2;
  }
  const std::string name = std::string(program) + " " + sub->name;
  const std::vector<std::string> rest(arguments.begin() + 1, arguments.end());
  const auto dispatch = [&](const parsed_flags& flags) {
    if (sub->name == "generate") return run_generate(flags);
    if (sub->name == "verify") return run_verify(flags);
    if (sub->name == "summary") return run_summary(flags);
    return run_compare(flags);
  };
  return run_flag_tool(name, sub->description, sub->specs, rest, dispatch, /*failure_status=*/2);
}
