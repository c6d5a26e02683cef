// A model's setup for one config (worker/model_setup.hpp) with the real registry and the real
// configs/torchbench.yaml: the batch-size order (model rule > --batch-size > YAML > default, the
// CPU's eval default) and the precision a prepared model ends up in. Fast: no torchbench model is
// run, and only speech_transformer (to read its data-dependent batch) and the dummy MLP are built.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "backends/backend.hpp"
#include "suites/imported/torchscript_program.hpp"
#include "suites/model.hpp"
#include "suites/suite_config.hpp"
#include "torch_support/multi_tensor_optimizer.hpp"
#include "worker/model_setup.hpp"

#include <torch/script.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace benchmatrix {
namespace {

const suite_config& torchbench_yaml() {
  static const suite_config config = suite_config::load_file(TORCHBENCH_YAML);
  return config;
}

const model_definition& torchbench_model(const std::string& name) {
  const model_definition* definition = find_model("torchbench", name);
  REQUIRE_MESSAGE(definition != nullptr, "torchbench has no model " << name);
  return *definition;
}

child_settings with_batch_size(std::optional<long long> batch_size) {
  child_settings options;
  options.batch_size = batch_size;
  return options;
}

long long batch_of(const std::string& model, bool training, bool cpu,
                   std::optional<long long> cli = std::nullopt,
                   const suite_config* config = &torchbench_yaml()) {
  return resolve_batch_size(torchbench_model(model), with_batch_size(cli), config, training, cpu)
      .batch_size;
}

experiment_config experiment(const std::string& test) {
  experiment_config e;
  e.accelerator = "cpu";
  e.test = test;
  return e;
}

TEST_CASE("the YAML's training batch sizes beat the models' defaults") {
  CHECK(batch_of("dlrm", /*training=*/true, /*cpu=*/true) == 1024);
  CHECK(batch_of("densenet121", /*training=*/true, /*cpu=*/false) == 4);
  // The YAML lists training only: eval keeps DEFAULT_EVAL_BSIZE.
  CHECK(batch_of("dlrm", /*training=*/false, /*cpu=*/false) == 2048);
  CHECK(batch_of("densenet121", /*training=*/false, /*cpu=*/true) == 64);
  // Without a suite configuration, the model's defaults.
  CHECK(batch_of("dlrm", true, true, std::nullopt, nullptr) == 2048);
  CHECK(batch_of("densenet121", true, true, std::nullopt, nullptr) == 256);
}

TEST_CASE("--batch-size beats the YAML and the defaults") {
  CHECK(batch_of("dlrm", /*training=*/true, /*cpu=*/true, 8) == 8);
  CHECK(batch_of("densenet121", /*training=*/true, /*cpu=*/false, 3) == 3);
  CHECK(batch_of("resnet50", /*training=*/false, /*cpu=*/true, 5) == 5);
  CHECK_FALSE(resolve_batch_size(torchbench_model("dlrm"), with_batch_size(8), &torchbench_yaml(),
                                 true, true)
                  .ignored.has_value());
}

TEST_CASE("BERT_pytorch evaluates 2 samples on the CPU by default, 16 elsewhere") {
  CHECK(batch_of("BERT_pytorch", /*training=*/false, /*cpu=*/true) == 2);
  CHECK(batch_of("BERT_pytorch", /*training=*/false, /*cpu=*/false) == 16);
  CHECK(batch_of("BERT_pytorch", /*training=*/true, /*cpu=*/true) == 16);
  // Only the default changes: an explicit size, or a YAML entry, is used as given.
  CHECK(batch_of("BERT_pytorch", /*training=*/false, /*cpu=*/true, 16) == 16);
  const auto yaml =
      suite_config::load_text("batch_size:\n  inference: {BERT_pytorch: 8}\n", "t.yaml");
  CHECK(batch_of("BERT_pytorch", /*training=*/false, /*cpu=*/true, std::nullopt, &yaml) == 8);
  // Models without a CPU rule evaluate their DEFAULT_EVAL_BSIZE on the CPU.
  CHECK(batch_of("hf_GPT2", /*training=*/false, /*cpu=*/true) == 1);
  CHECK(batch_of("resnet50", /*training=*/false, /*cpu=*/true) == 32);
}

TEST_CASE("speech_transformer ignores --batch-size, says so, and keeps its 29 utterances") {
  const auto& definition = torchbench_model("speech_transformer");
  const auto choice =
      resolve_batch_size(definition, with_batch_size(2), &torchbench_yaml(), true, true);
  REQUIRE(choice.ignored.has_value());
  CHECK(*choice.ignored ==
        "--batch-size=2 ignored: speech_transformer does not allow changing its batch size");
  CHECK(choice.batch_size == 32);  // the nominal default, which the model does not read

  const prepared_model prepared =
      prepare_model(definition, with_batch_size(2), &torchbench_yaml(), experiment("train"));
  CHECK(prepared.model.batch_size == 29);
  CHECK(prepared.model.example_inputs.at(0).toTensor().size(0) == 29);

  // Without --batch-size there is nothing to warn about.
  CHECK_FALSE(resolve_batch_size(definition, with_batch_size(std::nullopt), &torchbench_yaml(),
                                 false, true)
                  .ignored.has_value());
}

TEST_CASE("dont_change_batch_size ignores --batch-size and the YAML's entry, with a warning") {
  const auto yaml = suite_config::load_text(
      "batch_size:\n  training: {resnet50: 4}\ndont_change_batch_size: [resnet50]\n", "t.yaml");
  const auto& resnet50 = torchbench_model("resnet50");
  const auto cli = resolve_batch_size(resnet50, with_batch_size(3), &yaml, true, true);
  CHECK(cli.batch_size == 32);
  CHECK(cli.ignored == "--batch-size=3 ignored: resnet50 is in dont_change_batch_size");
  const auto from_yaml =
      resolve_batch_size(resnet50, with_batch_size(std::nullopt), &yaml, true, true);
  CHECK(from_yaml.batch_size == 32);
  CHECK(from_yaml.ignored ==
        "batch_size.training.resnet50 = 4 ignored: resnet50 is in dont_change_batch_size");
}

TEST_CASE("an eval-only model has no train batch size") {
  CHECK_THROWS_WITH_AS(resolve_batch_size(torchbench_model("llama"), with_batch_size(2),
                                          &torchbench_yaml(), true, true),
                       doctest::Contains("llama is eval-only"), std::invalid_argument);
}

/// The dtype of every floating parameter and input of a prepared model (they must agree), as
/// LibTorch names it ("BFloat16", "Float", "Half", "Double").
std::string floating_dtype_of(const prepared_model& prepared) {
  std::optional<c10::ScalarType> dtype;
  auto see = [&](const torch::Tensor& t) {
    if (!t.is_floating_point()) return;
    if (dtype) REQUIRE(std::string(c10::toString(t.scalar_type())) == c10::toString(*dtype));
    dtype = t.scalar_type();
  };
  for (const auto& p : prepared.model.module->parameters()) see(p);
  for (const auto& input : prepared.model.example_inputs)
    if (input.isTensor()) see(input.toTensor());
  REQUIRE(dtype.has_value());
  return c10::toString(*dtype);
}

TEST_CASE("prepare_model applies the precision rule to the module and its inputs (CPU)") {
  const model_definition* dummy = find_model("dummy", "dummy");
  REQUIRE(dummy != nullptr);
  const child_settings options;

  const auto eval = prepare_model(*dummy, options, nullptr, experiment("eval"));
  CHECK(floating_dtype_of(eval) == "BFloat16");
  CHECK_FALSE(eval.step.use_amp);

  const auto train = prepare_model(*dummy, options, nullptr, experiment("train"));
  CHECK(floating_dtype_of(train) == "Float");
  CHECK_FALSE(train.step.use_amp);  // the CPU never autocasts

  const auto fp16_yaml =
      suite_config::load_text("dtype:\n  force_fp16_for_bf16_models: [dummy]\n", "t.yaml");
  const auto fp16 = prepare_model(*dummy, options, &fp16_yaml, experiment("eval"));
  CHECK(floating_dtype_of(fp16) == "Half");

  for (const char* test : {"eval", "train"}) {
    INFO("test=" << test);
    const auto golden =
        prepare_model(*dummy, options, &fp16_yaml, experiment(test), torch::kDouble);
    CHECK(floating_dtype_of(golden) == "Double");
    CHECK_FALSE(golden.step.use_amp);
  }

  CHECK_THROWS_WITH_AS(
      (void)prepare_model(*dummy, options, nullptr, experiment("eval"), torch::kFloat),
      doctest::Contains("cannot force dtype Float"), std::invalid_argument);
}

}  // namespace
TEST_CASE("the train step's optimizer: the suite YAML's lists, then TorchBench's SGD list, else Adam") {
  static const suite_config huggingface = suite_config::load_file(HUGGINGFACE_YAML);
  // PyTorch's CI_SKIP_OPTIMIZER and BENCHMARK_USE_SGD, as configs/huggingface.yaml lists them
  CHECK(train_optimizer("MobileBertForMaskedLM", &huggingface) == optimizer_algorithm::none);
  CHECK(train_optimizer("OPTForCausalLM", &huggingface) == optimizer_algorithm::sgd);
  CHECK(train_optimizer("BertForMaskedLM", &huggingface) == optimizer_algorithm::adam);
  // TorchBench: the original runner's TRAIN_WITH_SGD, with or without a YAML
  CHECK(train_optimizer("resnet18", &torchbench_yaml()) == optimizer_algorithm::sgd);
  CHECK(train_optimizer("resnet18", nullptr) == optimizer_algorithm::sgd);
  CHECK(train_optimizer("resnet50", &torchbench_yaml()) == optimizer_algorithm::adam);
}

TEST_CASE("prepare_model gives the train step its suite YAML's optimizer") {
  const model_definition* dummy = find_model("dummy", "dummy");
  REQUIRE(dummy != nullptr);
  const child_settings options;
  const auto none = suite_config::load_text("optimizer:\n  none: [dummy]\n", "t.yaml");
  const auto sgd = suite_config::load_text("optimizer:\n  sgd: [dummy]\n", "t.yaml");
  CHECK(prepare_model(*dummy, options, &none, experiment("train")).step.optimizer ==
        optimizer_algorithm::none);
  CHECK(prepare_model(*dummy, options, &sgd, experiment("train")).step.optimizer ==
        optimizer_algorithm::sgd);
  CHECK(prepare_model(*dummy, options, nullptr, experiment("train")).step.optimizer ==
        optimizer_algorithm::adam);
}

TEST_CASE("a step without an optimizer leaves the parameters as they were and clears gradients") {
  auto parameter = torch::ones({3}, torch::requires_grad());
  multi_tensor_optimizer optimizer({parameter}, {optimizer_algorithm::none});
  parameter.mutable_grad() = torch::full({3}, 0.5);
  optimizer.step();
  CHECK(torch::equal(parameter.detach(), torch::ones({3})));
  optimizer.zero_grad();
  CHECK_FALSE(parameter.grad().defined());
  CHECK(std::string(optimizer_algorithm_name(optimizer_algorithm::none)) == "none");
}

TEST_CASE("a program's tied weights are one parameter, as Python's named_parameters lists them") {
  // A transformers LM ties its decoder to its word embeddings: the program holds one tensor under
  // two names. Registered twice, the optimizer would step it twice per train step.
  const torch::Tensor shared = torch::rand({4, 4});
  torch::jit::Module head("head");
  head.register_parameter("weight", shared, /*is_buffer=*/false);
  torch::jit::Module program("tied");
  program.register_parameter("embedding", shared, /*is_buffer=*/false);
  program.register_parameter("bias", torch::zeros({4}), /*is_buffer=*/false);
  program.register_module("head", head);
  program.define("def forward(self, x):\n"
                 "    return torch.matmul(torch.matmul(x, self.embedding), self.head.weight) + "
                 "self.bias\n");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tied_program_test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  program.save((dir / "tied.pt").string());
  const auto bytes = torch::pickle_save(c10::ivalue::Tuple::create({torch::rand({2, 4})}));
  std::ofstream(dir / "tied.inputs.pt", std::ios::binary).write(bytes.data(), bytes.size());

  model_instance model =
      load_torchscript_program(dir / "tied.pt", dir / "tied.inputs.pt", torch::kCPU);
  const auto parameters = model.module->named_parameters();
  CHECK(parameters.keys() == std::vector<std::string>{"embedding", "bias"});
  CHECK(torch::equal(parameters["embedding"], shared));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a program runs as saved on a GPU when all but its 0-dim CPU constants are there") {
  // No GPU needed: the decision compares devices. A traced program's numbers (`0.5 * x`) are
  // 0-dim CPU tensor constants, which run as the op's scalars where they are; anything else a
  // GPU run needs on the GPU, or the whole program is moved there.
  const torch::Device gpu(torch::kCUDA, 0);
  torch::jit::Module program("numbers");
  program.define("def forward(self, x):\n    return x\n");
  CHECK(holds_all_on(program, torch::kCPU));
  CHECK(holds_all_on(program, gpu));
  const auto graph = program.get_method("forward").graph();
  graph->insertConstant(torch::tensor(0.5, torch::kFloat64));
  CHECK(holds_all_on(program, gpu));
  CHECK(holds_all_on(program, torch::Device(torch::kCUDA)));  // no index: the first GPU
  CHECK(holds_all_on(program, torch::Device(torch::kCUDA, 1)));  // scalars: any GPU
  graph->insertConstant(torch::arange(4));
  CHECK_FALSE(holds_all_on(program, gpu));
  CHECK(holds_all_on(program, torch::kCPU));

  torch::jit::Module with_weight("weighted");
  with_weight.register_parameter("weight", torch::ones({2}), /*is_buffer=*/false);
  with_weight.define("def forward(self, x):\n    return x * self.weight\n");
  CHECK_FALSE(holds_all_on(with_weight, gpu));
  CHECK(holds_all_on(with_weight, torch::kCPU));
}

}  // namespace benchmatrix
