#include "numerics/reference_cases.hpp"

#include "core/content_hash.hpp"
#include "core/text_file.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

namespace fs = std::filesystem;

json_value text(const std::string& s, json_allocator& alloc) {
  return json_value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), alloc);
}

json_value int_list(const std::vector<std::int64_t>& values, json_allocator& alloc) {
  json_value list(rapidjson::kArrayType);
  for (const auto v : values)
    list.PushBack(json_value(static_cast<int64_t>(v)), alloc);
  return list;
}

/// {"conv2d": {"input": f(...), ...}, "matmul": {...}} over the given tensor names.
template <typename F>
json_value per_op(const std::vector<std::string>& names, json_allocator& alloc, F value_of) {
  json_value out(rapidjson::kObjectType);
  for (const auto& name : names) {
    const auto slash = name.find('/');
    const std::string op = name.substr(0, slash), tensor = name.substr(slash + 1);
    if (!out.HasMember(op.c_str()))
      out.AddMember(text(op, alloc), json_value(rapidjson::kObjectType), alloc);
    out[op.c_str()].AddMember(text(tensor, alloc), value_of(name), alloc);
  }
  return out;
}

std::vector<std::string> all_tensor_names() {
  std::vector<std::string> names;
  for (const std::string op : {"conv2d", "matmul"}) {
    for (const auto& n : reference_input_names())
      if (n.rfind(op + "/", 0) == 0)
        names.push_back(n);
    names.push_back(op + "/output");
  }
  return names;
}

const json_value& member(const json_value& object, const std::string& path, const fs::path& file) {
  const json_value* v = &object;
  std::stringstream parts(path);
  for (std::string key; std::getline(parts, key, '/');) {
    if (!v->IsObject() || !v->HasMember(key.c_str()))
      throw std::runtime_error(file.string() + ": missing key '" + path + "'");
    v = &(*v)[key.c_str()];
  }
  return *v;
}

std::int64_t int_member(const json_value& object, const std::string& key, const fs::path& file) {
  const auto& v = member(object, key, file);
  if (!v.IsInt64())
    throw std::runtime_error(file.string() + ": '" + key + "' is not an integer");
  return v.GetInt64();
}

std::vector<std::int64_t> int_list_member(const json_value& object, const std::string& key,
                                          const fs::path& file) {
  const auto& v = member(object, key, file);
  if (!v.IsArray())
    throw std::runtime_error(file.string() + ": '" + key + "' is not a list");
  std::vector<std::int64_t> out;
  for (const auto& x : v.GetArray()) {
    if (!x.IsInt64())
      throw std::runtime_error(file.string() + ": '" + key + "' holds a non-integer");
    out.push_back(x.GetInt64());
  }
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

std::int64_t reference_config::output_height() const {
  return (input_height + 2 * padding_h - kernel_h) / stride_h + 1;
}
std::int64_t reference_config::output_width() const {
  return (input_width + 2 * padding_w - kernel_w) / stride_w + 1;
}

const std::vector<std::string>& reference_input_names() {
  static const std::vector<std::string> names{"conv2d/input", "conv2d/weight", "conv2d/bias",
                                              "matmul/A", "matmul/B"};
  return names;
}

const std::vector<std::string>& reference_output_names() {
  static const std::vector<std::string> names{"conv2d/output", "matmul/output"};
  return names;
}

std::map<std::string, std::vector<std::int64_t>> reference_shapes(const reference_config& c,
                                                                  std::int64_t ic) {
  return {
      {"conv2d/input", {c.batch, ic, c.input_height, c.input_width}},
      {"conv2d/weight", {c.out_channels, ic, c.kernel_h, c.kernel_w}},
      {"conv2d/bias", {c.out_channels}},
      {"conv2d/output", {c.batch, c.out_channels, c.output_height(), c.output_width()}},
      {"matmul/A", {c.m(), c.k(ic)}},
      {"matmul/B", {c.k(ic), c.out_channels}},
      {"matmul/output", {c.m(), c.out_channels}},
  };
}

std::string case_prefix(const reference_case& c) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "k%04lld_ic%03lld", static_cast<long long>(c.k),
                static_cast<long long>(c.input_channels));
  return buffer;
}

fs::path tensor_path(const fs::path& dir, const reference_case& c, const std::string& tensor) {
  std::string suffix = tensor;
  std::replace(suffix.begin(), suffix.end(), '/', '_');
  return dir / c.dtype / (case_prefix(c) + "_" + suffix + ".npy");
}

fs::path metadata_path(const fs::path& dir, const reference_case& c) {
  return dir / c.dtype / (case_prefix(c) + "_metadata.json");
}

std::string config_json(const reference_config& c) {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("seed", static_cast<int64_t>(c.seed), a);
  d.AddMember("input_channels_sweep", int_list(c.input_channels_sweep, a), a);
  d.AddMember("batch", static_cast<int64_t>(c.batch), a);
  d.AddMember("input_height", static_cast<int64_t>(c.input_height), a);
  d.AddMember("input_width", static_cast<int64_t>(c.input_width), a);
  d.AddMember("out_channels", static_cast<int64_t>(c.out_channels), a);
  d.AddMember("kernel_h", static_cast<int64_t>(c.kernel_h), a);
  d.AddMember("kernel_w", static_cast<int64_t>(c.kernel_w), a);
  d.AddMember("padding", int_list({c.padding_h, c.padding_w}, a), a);
  d.AddMember("stride", int_list({c.stride_h, c.stride_w}, a), a);
  d.AddMember("use_bias", c.use_bias, a);
  json_value dtypes(rapidjson::kArrayType);
  for (const auto& t : c.dtypes)
    dtypes.PushBack(text(t, a), a);
  d.AddMember("dtypes", dtypes, a);
  json_value methods(rapidjson::kArrayType);
  methods.PushBack("randn", a);
  d.AddMember("gen_methods", methods, a);
  std::vector<std::int64_t> ks;
  for (const auto ic : c.input_channels_sweep)
    ks.push_back(c.k(ic));
  d.AddMember("k_values", int_list(ks, a), a);
  d.AddMember("input_generator", "cpu", a);
  return to_python_json(d) + "\n";
}

reference_config read_reference_config(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error(dir.string() + ": no such directory");
  const fs::path file = dir / "config.json";
  if (!fs::is_regular_file(file))
    throw std::runtime_error(file.string() + ": missing (not a reference_outputs directory?)");
  const json_document d = parse_json(read_text_file(file), file.string());
  reference_config c;
  c.seed = int_member(d, "seed", file);
  c.input_channels_sweep = int_list_member(d, "input_channels_sweep", file);
  c.batch = int_member(d, "batch", file);
  c.input_height = int_member(d, "input_height", file);
  c.input_width = int_member(d, "input_width", file);
  c.out_channels = int_member(d, "out_channels", file);
  c.kernel_h = int_member(d, "kernel_h", file);
  c.kernel_w = int_member(d, "kernel_w", file);
  const auto padding = int_list_member(d, "padding", file);
  const auto stride = int_list_member(d, "stride", file);
  if (padding.size() != 2 || stride.size() != 2)
    throw std::runtime_error(file.string() + ": 'padding' and 'stride' need two values each");
  c.padding_h = padding[0];
  c.padding_w = padding[1];
  c.stride_h = stride[0];
  c.stride_w = stride[1];
  const auto& bias = member(d, "use_bias", file);
  if (!bias.IsBool())
    throw std::runtime_error(file.string() + ": 'use_bias' is not a boolean");
  c.use_bias = bias.GetBool();
  c.dtypes.clear();
  for (const auto& t : member(d, "dtypes", file).GetArray()) {
    const std::string name = t.IsString() ? t.GetString() : "";
    if (name != "bfloat16" && name != "float32")
      throw std::runtime_error(file.string() +
                               ": unknown dtype in 'dtypes' (expected bfloat16 or float32)");
    c.dtypes.push_back(name);
  }
  return c;
}

std::string case_metadata_json(const reference_config& config, const reference_case& c,
                               const std::map<std::string, std::string>& hashes,
                               const std::string& device) {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  const auto shapes = reference_shapes(config, c.input_channels);
  d.AddMember("shapes",
              per_op(all_tensor_names(), a,
                     [&](const std::string& n) { return int_list(shapes.at(n), a); }),
              a);
  json_value dtypes(rapidjson::kObjectType);
  dtypes.AddMember("conv2d", text("torch." + c.dtype, a), a);
  dtypes.AddMember("matmul", text("torch." + c.dtype, a), a);
  d.AddMember("dtypes", dtypes, a);
  d.AddMember("gen_method", "randn", a);
  d.AddMember("input_hashes",
              per_op(reference_input_names(), a,
                     [&](const std::string& n) { return text(hashes.at(n), a); }),
              a);
  d.AddMember("output_hashes",
              per_op(reference_output_names(), a,
                     [&](const std::string& n) { return text(hashes.at(n), a); }),
              a);
  d.AddMember("input_channels", static_cast<int64_t>(c.input_channels), a);
  d.AddMember("k", static_cast<int64_t>(c.k), a);
  d.AddMember("seed", static_cast<int64_t>(config.seed), a);
  d.AddMember("input_generator", "cpu", a);
  d.AddMember("device", text(device, a), a);
  d.AddMember("stored_dtype", "float32", a);
  return to_python_json(d) + "\n";
}

std::string reference_readme(const reference_config& c) {
  std::ostringstream s;
  s << "# Reference outputs: conv2d and matmul over an input-channel sweep\n\n"
       "Generated by benchmatrix `reference_outputs generate`. Check with `reference_outputs "
       "verify "
       "DIR`,\ncompare two machines' outputs with `reference_outputs compare DIR_A DIR_B` "
       "(ULPs).\n\n"
       "## Configuration\n\n"
    << "- seed " << c.seed
    << ": `manual_seed(seed)`, then `randn` for the conv2d input, weight and bias;\n"
       "  `manual_seed(seed)` again, then `randn` for matmul A and B. Inputs are always drawn on "
       "the\n"
       "  CPU generator in the case's dtype, then moved to the device (system_info.json says "
       "which).\n"
    << "- conv2d: input [" << c.batch << ", ic, " << c.input_height << ", " << c.input_width
    << "], weight [" << c.out_channels << ", ic, " << c.kernel_h << ", " << c.kernel_w
    << "], bias [" << c.out_channels << "], padding (" << c.padding_h << ", " << c.padding_w
    << "), stride (" << c.stride_h << ", " << c.stride_w << ")\n"
    << "- matmul: A [M, K] @ B [K, N] with M = batch·OH·OW = " << c.m() << ", K = ic·"
    << c.kernel_h * c.kernel_w << ", N = " << c.out_channels
    << ". A and B are independent random tensors:\n  only the shapes match the conv2d (it is not "
       "an im2col of it).\n"
    << "- dtypes: ";
  for (std::size_t i = 0; i < c.dtypes.size(); ++i)
    s << (i ? ", " : "") << c.dtypes[i];
  s << "\n- input channels (K): ";
  for (std::size_t i = 0; i < c.input_channels_sweep.size(); ++i)
    s << (i ? ", " : "") << c.input_channels_sweep[i] << " (" << c.k(c.input_channels_sweep[i])
      << ")";
  s << "\n- float32 on CUDA: cuDNN convolutions and matmuls without TF32 unless generated with\n"
       "  `--allow-tf32`; system_info.json records cudnn_allow_tf32, cuda_matmul_allow_tf32 and\n"
       "  float32_matmul_precision.";
  s << "\n\n## Layout\n\n```\nsystem_info.json  config.json  "
       "README.md\n<dtype>/k<K:04d>_ic<ic:03d>_"
       "conv2d_{input,weight,bias,output}.npy\n<dtype>/"
       "k<K:04d>_ic<ic:03d>_matmul_{A,B,output}.npy\n"
       "<dtype>/k<K:04d>_ic<ic:03d>_metadata.json   shapes, dtypes, input_hashes, "
       "output_hashes\n```\n\n"
       "Every .npy is float32 ('<f4', C order; `numpy.load` reads it as is). bfloat16 tensors are "
       "widened\nto float32 exactly; the metadata's dtypes give the original. Hashes are SHA-256 "
       "of "
       "the float32\nbytes, i.e. `hashlib.sha256(numpy.load(f).tobytes()).hexdigest()`.\n";
  return s.str();
}

std::vector<reference_case> list_reference_cases(const fs::path& dir) {
  const reference_config config = read_reference_config(dir);
  static const std::regex name_re("k(\\d+)_ic(\\d+)_metadata\\.json");
  std::vector<reference_case> cases;
  for (const auto& dtype : config.dtypes) {
    if (!fs::is_directory(dir / dtype))
      continue;
    for (const auto& entry : fs::directory_iterator(dir / dtype)) {
      std::smatch m;
      const std::string name = entry.path().filename().string();
      if (!std::regex_match(name, m, name_re))
        continue;
      reference_case c{dtype, std::stoll(m[2]), std::stoll(m[1])};
      if (case_prefix(c) + "_metadata.json" == name)
        cases.push_back(c);
    }
  }
  std::sort(cases.begin(), cases.end(), [](const reference_case& a, const reference_case& b) {
    return std::tie(a.dtype, a.input_channels) < std::tie(b.dtype, b.input_channels);
  });
  return cases;
}

loaded_reference_case load_reference_case(const fs::path& dir, const std::string& dtype,
                                          std::int64_t ic) {
  const reference_config config = read_reference_config(dir);
  loaded_reference_case loaded;
  loaded.id = {dtype, ic, config.k(ic)};
  const fs::path meta = metadata_path(dir, loaded.id);
  if (!fs::is_regular_file(meta))
    throw std::runtime_error(meta.string() + ": missing (no case " + dtype +
                             " ic=" + std::to_string(ic) + ")");
  loaded.metadata = parse_json(read_text_file(meta), meta.string());
  for (const auto& name : all_tensor_names()) {
    const fs::path file = tensor_path(dir, loaded.id, name);
    npy_array array = read_npy(file);
    if (array.descr != "<f4")
      throw std::runtime_error(file.string() + ": dtype '" + array.descr + "', expected '<f4'");
    const auto expected = int_list_member(member(loaded.metadata, "shapes", meta), name, meta);
    if (array.shape != expected)
      throw std::runtime_error(file.string() + ": shape " + shape_text(array.shape) +
                               ", the metadata says " + shape_text(expected));
    loaded.tensors.emplace(name, std::move(array));
  }
  return loaded;
}

std::vector<hash_check>
check_reference_hashes(const loaded_reference_case& loaded,
                       const std::map<std::string, std::string>& regenerated) {
  std::vector<hash_check> checks;
  const auto& meta = loaded.metadata;
  const auto expected_of = [&](const char* group, const std::string& name) -> std::string {
    const std::string key = std::string(group) + "/" + name;
    const auto& v = member(meta, key, "metadata of " + case_prefix(loaded.id));
    return v.IsString() ? v.GetString() : "";
  };
  for (const auto& name : reference_input_names()) {
    hash_check c{name, expected_of("input_hashes", name), sha256_hex(loaded.tensors.at(name).data),
                 ""};
    const auto it = regenerated.find(name);
    c.regenerated_hash = it == regenerated.end() ? "(not regenerated)" : it->second;
    checks.push_back(c);
  }
  if (meta.HasMember("output_hashes"))
    for (const auto& name : reference_output_names())
      checks.push_back(
          {name, expected_of("output_hashes", name), sha256_hex(loaded.tensors.at(name).data), ""});
  return checks;
}

} // namespace benchmatrix
