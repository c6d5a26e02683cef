// The backend registry: what each backend declares, and what the CLI, the matrix, availability
// and the reports derive from it.
#include "backends/availability.hpp"
#include "backends/backend_name.hpp"
#include "backends/backend_registry.hpp"
#include "output/aggregate_report.hpp"
#include "runner/experiment_matrix.hpp"
#include "runner/runner_cli.hpp"

#include <doctest/doctest.h>
#include <set>

using namespace benchmatrix;

namespace {
experiment_config config(std::string accelerator, nullable_string xla, nullable_string dynamo,
                         nullable_string torch_xla2, std::string test = "eval") {
  experiment_config c;
  c.accelerator = std::move(accelerator);
  c.xla = std::move(xla);
  c.dynamo = std::move(dynamo);
  c.torch_xla2 = std::move(torch_xla2);
  c.test = std::move(test);
  return c;
}
}  // namespace

TEST_CASE("every backend has its own identity, report name and title") {
  std::set<std::string> names, titles, identities;
  for (const backend_descriptor* b : backend_catalog()) {
    CHECK(names.insert(b->report_name).second);
    CHECK(titles.insert(b->title).second);
    const auto& id = b->identity;
    CHECK(identities
              .insert(id.xla.value_or("None") + "/" + id.dynamo.value_or("None") + "/" +
                      id.torch_xla2.value_or("None"))
              .second);
    CHECK(find_backend(id.xla, id.dynamo, id.torch_xla2) == b);
    if (b->dynamo_choice)
      CHECK(id.dynamo.has_value());
    // a backend without a step is only named: every config of it is a SKIP with its reason
    if (b->step_factory.empty()) {
      REQUIRE(b->unavailable_reason);
      CHECK(b->unavailable_reason(config("cpu", id.xla, id.dynamo, id.torch_xla2)).has_value());
    }
  }
}

TEST_CASE("the CLI's --dynamo choices and default axis come from the backends") {
  CHECK(dynamo_choices() ==
        std::vector<std::string>{"None", "inductor", "openxla", "torchscript", "cudagraphs"});
  CHECK(default_dynamo_axis() == std::vector<nullable_string>{std::nullopt, "inductor", "openxla"});
  const auto specs = runner_flag_specs({"dummy"});
  const auto dynamo = std::find_if(specs.begin(), specs.end(),
                                   [](const flag_spec& s) { return s.name == "dynamo"; });
  REQUIRE(dynamo != specs.end());
  CHECK(dynamo->choices == dynamo_choices());
  CHECK(dynamo->default_text == "None, inductor, openxla");
  CHECK_THROWS_WITH(
      parse_runner_options({"--suite-name=dummy", "--dynamo=aot_eager"}, {"dummy"}, "/nonexistent"),
      "argument --dynamo: invalid choice: 'aot_eager' (choose from 'None', "
      "'inductor', 'openxla', 'torchscript', 'cudagraphs')");
}

TEST_CASE("report names are aggregate.py's, in the reports' order") {
  std::vector<std::string> names;
  for (const auto& [name, title] : known_backends())
    names.push_back(name);
  CHECK(names == std::vector<std::string>{"eager", "inductor", "openxla+dynamo",
                                          "openxla+lazytensor", "cudagraphs", "torchscript",
                                          "torch_xla2+torch_export"});
  CHECK(backend_title("openxla+dynamo") == "XLA+Dynamo");
  CHECK(report_backend_name(std::nullopt, std::nullopt, std::nullopt) == "eager");
  CHECK(report_backend_name("openxla", "PJRT", std::nullopt) == "openxla+dynamo");
  CHECK(report_backend_name(std::nullopt, "PJRT", std::nullopt) == "openxla+lazytensor");
  CHECK(report_backend_name(std::nullopt, "PJRT", "torch_export") == "torch_xla2+torch_export");
  CHECK(report_backend_name("cudagraphs", std::nullopt, std::nullopt) == "cudagraphs");
  // records no backend runs keep aggregate.py's names
  CHECK(report_backend_name(std::nullopt, std::nullopt, "extract_jax") == "torch_xla2+extract_jax");
  CHECK(report_backend_name("inductor", "PJRT", std::nullopt) == "inductor");
  CHECK_THROWS_WITH(report_backend_name("openxla", "XRT", std::nullopt),
                    "xla=XRT is not a reported backend");
  CHECK_THROWS_WITH(report_backend_name("torchscript", "PJRT", std::nullopt),
                    "xla=PJRT with dynamo=torchscript is not a reported backend");
  CHECK(display_backend_name("torchscript", "PJRT", std::nullopt) == "xla=PJRT+torchscript");
}

TEST_CASE("SKIP reasons: the backend's own, then those of configs no backend runs") {
  // openxla trains (its joint train step); on the CPU it needs a plugin, as its eval does
  CHECK(unavailable_reason(config("cpu", "PJRT", "openxla", std::nullopt, "train"))
            ->find("not available on accelerator=cpu") != std::string::npos);
  CHECK(unavailable_reason(config("cpu", "PJRT", "openxla", std::nullopt, "train")) ==
        unavailable_reason(config("cpu", "PJRT", "openxla", std::nullopt, "eval")));
  CHECK(unavailable_reason(config("cpu", "PJRT", std::nullopt, "torch_export", "train")) ==
        "xla=PJRT torch_xla2=torch_export exports the forward only; benchmatrix runs the train "
        "step's StableHLO as xla=PJRT dynamo=openxla");
  CHECK(unavailable_reason(config("cpu", "PJRT", std::nullopt, std::nullopt))
            ->find("lazy tensor mode") != std::string::npos);
  CHECK(unavailable_reason(config("cpu", std::nullopt, "cudagraphs", std::nullopt)) ==
        "dynamo=cudagraphs needs accelerator=cuda (CUDA graphs capture GPU work), got "
        "accelerator=cpu");
  CHECK(unavailable_reason(config("cpu", "PJRT", "inductor", std::nullopt)) ==
        "xla=PJRT is not available in this build (benchmatrix runs xla=PJRT with dynamo=openxla)");
  CHECK(unavailable_reason(config("cpu", std::nullopt, "torchscript", std::nullopt)) ==
        std::nullopt);
}

TEST_CASE("a dynamo value's validity rules are its backend's") {
  const auto expand = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--suite-name=dummy");
    return expand_experiment_matrix(parse_runner_options(args, {"dummy"}, "/nonexistent"));
  };
  // --keep-model-data-on-cuda applies to openxla only; without --dynamo the default axis is used
  const auto kept = expand({"--accelerator=cuda", "--xla=None", "--xla=PJRT", "--test=eval",
                            "--keep-model-data-on-cuda"});
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].dynamo == "openxla");
  CHECK(kept[0].xla == "PJRT");
  // openxla needs an xla runtime; the LibTorch backends never run with one
  for (const auto& c : expand({"--accelerator=cpu", "--xla=None", "--xla=PJRT", "--test=eval",
                               "--dynamo=openxla", "--dynamo=torchscript", "--dynamo=inductor"}))
    CHECK(c.xla.has_value() == (c.dynamo == "openxla"));
}
