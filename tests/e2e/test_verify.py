"""--verify: a verifier child after each timing child; its code and figures land in the same record."""
import os
import tempfile
import time
import unittest

from harness import FAULTY_RUNNER, RUNNER, OutputDirTest, read_records, run

COMMON = ["--suite-name=verifier_checks", "--accelerator=cpu", "--xla=None", "--dynamo=None",
          "--repeat=2", "--verify", f"--subprocess-grace-period=0.5"]
# Adds 0.02 to the second output: beyond allclose at eval's 1e-2 and the RMSE rule, within cosine
# similarity's 0.99 and 8e-2 (tolerance.even_higher).
NEAR_MISS = "perturb:0.02"


class VerifyTest(OutputDirTest):
    def sweep(self, *args, backend=None, yaml=None):
        """One sweep of the verifier_checks suite; `yaml`: the text of its suite YAML."""
        env = dict(os.environ)
        env.pop("BENCHMATRIX_TEST_BACKEND", None)
        if backend:
            env["BENCHMATRIX_TEST_BACKEND"] = backend
        if yaml is not None:
            config_dir = tempfile.mkdtemp(dir=self.out)
            with open(os.path.join(config_dir, "verifier_checks.yaml"), "w", encoding="utf-8") as f:
                f.write(yaml)
            env["BENCHMATRIX_CONFIG_DIR"] = config_dir
        if os.path.exists(self.results):
            os.remove(self.results)
        proc = run(FAULTY_RUNNER, *COMMON, *args, f"--output-dirname={self.out}", "--no-resume", env=env)
        self.last_output = proc.stdout + proc.stderr
        return {(r["model"]["model_name"], r["experiment"]["test"]): r for r in read_records(self.results)}

    def verify_one(self, *args, model="two_outputs", **kwargs):
        """The eval record of `model` and its verification details."""
        record = self.sweep(f"--filter=^{model}$", "--test=eval", "--repeat=1", *args, **kwargs)[(model, "eval")]
        return record, record.get("verification", {})

    def test_backend_within_tolerance_passes_and_beyond_fails(self):
        for amount, code in (("1e-4", "PASS"), ("0.5", "FAIL")):
            with self.subTest(amount=amount):
                records = self.sweep("--filter=^two_outputs$", "--test=eval", "--test=train",
                                     backend=f"perturb:{amount}")
                self.assertEqual(len(records), 2)
                for test in ("eval", "train"):
                    record = records[("two_outputs", test)]
                    self.assertEqual(record["verification_code"], code, record)
                    # one line carries the timings and the verdict with its figures
                    self.assertEqual(len(record["metrics"]["total_time"]), 2)
                    details = record["verification"]
                    self.assertIn("max_abs_error", details)
                    self.assertIn("rmse_vs_fp64", details)
                    self.assertIn("cosine_similarity", details)
                    self.assertEqual(details["iterations"], 1)
                    # the train step's optimizer, whose update is compared with the rest
                    if test == "train":
                        self.assertEqual(details["optimizer"], "adam")
                    else:
                        self.assertNotIn("optimizer", details)
                if code == "PASS":
                    self.assertNotIn("failed_output", records[("two_outputs", "eval")]["verification"])
                if code == "FAIL":
                    # the perturbed output is the second one (of the prediction, in train): the
                    # record names it and its figures are the worst failing leaf's
                    for test, path in (("eval", "output[1]"), ("train", "output[0][1]")):
                        details = records[("two_outputs", test)]["verification"]
                        self.assertEqual(details["failed_output"], path, test)
                        self.assertEqual(details["worst_output"], path, test)
                        self.assertAlmostEqual(details["max_abs_error"], 0.5, delta=0.01)
                        self.assertIn("RMSE", details["message"])
                        # relative to eager's values, which are below 3.2 in magnitude (Linear(8, 4)
                        # of rand inputs): at least 0.5 / 3.2
                        self.assertGreater(details["max_rel_error"], details["max_abs_error"] / 4)
                        self.assertGreater(details["tolerance"], 0)  # what it was judged with
                        self.assertTrue(details["tolerance_rule"])

    def test_verify_deterministic_runs_the_verifier_in_pytorchs_deterministic_mode(self):
        # nondeterministic_kernel differs between runs unless PyTorch's deterministic algorithms
        # are on, as CUDA's embedding backward does (the huggingface suite's train configs)
        record, details = self.verify_one(model="nondeterministic_kernel")
        self.assertEqual(record["verification_code"], "NONDETERMINISTIC_EAGER_RUN")
        self.assertNotIn("deterministic_algorithms", details)
        record, details = self.verify_one("--verify-deterministic", model="nondeterministic_kernel")
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertIs(details["deterministic_algorithms"], True)
        # strict, as PyTorch's harness: a kernel with a deterministic path only in strict mode
        # (memory-efficient attention's backward) takes it
        self.assertIs(details["deterministic_warn_only"], False)
        # only the verifier: the timing child runs as it would without the flag
        self.assertEqual(len(record["metrics"]["total_time"]), 1)

    def test_verify_deterministic_fails_an_op_without_a_deterministic_kernel_as_pytorch_does(self):
        record, details = self.verify_one(model="no_deterministic_kernel")
        self.assertEqual(record["verification_code"], "PASS", details)
        record, details = self.verify_one("--verify-deterministic", model="no_deterministic_kernel")
        self.assertEqual(record["verification_code"], "EAGER_FAILED", details)
        self.assertIn("no_deterministic_kernel's test op", details["error"])
        self.assertIn("deterministic", details["error"])
        self.assertEqual(len(record["metrics"]["total_time"]), 1)  # the timing child's run stands

    def test_faulty_models_and_backends_get_their_codes(self):
        records = self.sweep("--test=eval", "--subprocess-timeout=20", "--filter=^(two_outputs|"
                             "nondeterministic_output|structure_changes|eager_throws|"
                             "hangs_in_verifier|crashes_in_verifier)$")
        code = {model: r["verification_code"] for (model, _), r in records.items()}
        self.assertEqual(code["two_outputs"], "PASS")
        self.assertEqual(code["nondeterministic_output"], "NONDETERMINISTIC_EAGER_RUN")
        # where the verifier's time went: each of its runs, as far as it got
        seconds = records[("two_outputs", "eval")]["verification"]["run_seconds"]
        self.assertEqual(set(seconds), {"eager", "eager_rerun", "fp64", "backend"})
        self.assertTrue(all(0 < s < 60 for s in seconds.values()), seconds)
        # and its comparisons of outputs (CPU, float64)
        self.assertGreater(records[("two_outputs", "eval")]["verification"]["compare_seconds"], 0)
        seconds = records[("nondeterministic_output", "eval")]["verification"]["run_seconds"]
        self.assertEqual(set(seconds), {"eager", "eager_rerun"})
        # how far apart the two eager runs are, without a rerun: the leaf that differs and its figures
        apart = records[("nondeterministic_output", "eval")]["verification"]
        self.assertEqual(apart["worst_output"], apart["failed_output"])
        self.assertGreater(apart["max_abs_error"], 0)
        self.assertGreater(apart["max_rel_error"], 0)
        self.assertLess(apart["cosine_similarity"], 1)
        # same() raising on the two eager runs (their structures differ) counts as their differing
        changed = records[("structure_changes", "eval")]
        self.assertEqual(changed["verification_code"], "NONDETERMINISTIC_EAGER_RUN")
        self.assertIn("comparing them raised: type mismatch", changed["verification"]["message"])
        self.assertEqual(code["eager_throws"], "EAGER_FAILED")
        self.assertIn("eager forward failed on purpose",
                      records[("eager_throws", "eval")]["verification"]["error"])
        # the verifier hung and was killed, or crashed; the timing record survives and the sweep went on
        hung = records[("hangs_in_verifier", "eval")]
        self.assertEqual(hung["verification_code"], "VERIFIER_DIDNT_RUN")
        # where it hung, and what it had finished: where a slow verifier's time went
        self.assertRegex(hung["verification"]["error"],
                         r"^the verifier timed out after 20 seconds in its float64 reference run; "
                         r"finished: eager [0-9.e-]+ s, eager_rerun [0-9.e-]+ s$")
        self.assertEqual(len(hung["metrics"]["total_time"]), 2)
        crashed = records[("crashes_in_verifier", "eval")]
        self.assertEqual(crashed["verification_code"], "VERIFIER_DIDNT_RUN")
        self.assertIn("killed by signal SIGABRT", crashed["verification"]["error"])
        self.assertIn(") in its eager run\n", crashed["verification"]["error"])
        self.assertEqual(len(crashed["metrics"]["total_time"]), 2)
        self.assertNotIn("error", crashed["metrics"])

        # the backend raises in the verifier only (the timing child ran it fine): EXCEPTION_RAISED
        thrown = self.sweep("--filter=^two_outputs$", "--test=eval", backend="throw-in-verifier")
        record = thrown[("two_outputs", "eval")]
        self.assertEqual(record["verification_code"], "EXCEPTION_RAISED")
        self.assertIn("failed on purpose", record["verification"]["error"])
        self.assertNotIn("error", record["metrics"])

    def test_a_failed_timing_child_gets_no_verifier(self):
        # A backend that raises in the timing child too: its error record gets no verdict beside it.
        record = self.sweep("--filter=^two_outputs$", "--test=eval", backend="throw")[("two_outputs", "eval")]
        self.assertEqual(record["verification_code"], "VERIFIER_DIDNT_RUN")
        self.assertIn("failed on purpose", record["metrics"]["error"])
        self.assertEqual(record["verification"]["error"],
                         "the timing child failed: child exited with status 1")
        self.assertNotIn("(verifying)", self.last_output)

    def test_a_forward_no_tracer_can_record_is_an_inductor_skip_naming_why(self):
        # TorchBench's maml on the H100 (2026-12-07): no torch.export package and an output the
        # tracer finds no data dependence for; the inductor backend has nothing to compile
        run(FAULTY_RUNNER, *[a for a in COMMON if a != "--dynamo=None"], "--dynamo=inductor",
            "--test=eval", "--filter=^output_without_data_dependence$",
            f"--output-dirname={self.out}", "--no-resume")
        [record] = read_records(self.results)
        self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")
        error = record["metrics"]["error"]
        self.assertTrue(error.startswith("SKIP: dynamo=inductor cannot trace the forward of "
                                         "output_without_data_dependence: tracing the forward "
                                         "failed: "), error)
        self.assertIn("did not have observable data dependence", error)

    def test_a_timing_child_that_hangs_costs_one_timeout(self):
        # A hang costs one timeout, not a second one in a verifier that would hang the same way.
        start = time.monotonic()
        records = self.sweep("--test=eval", "--filter=^hangs_always$", "--subprocess-timeout=5")
        elapsed = time.monotonic() - start
        record = records[("hangs_always", "eval")]
        self.assertEqual(record["verification_code"], "VERIFIER_DIDNT_RUN")
        self.assertIn("timed out after 5 seconds", record["metrics"]["error"])
        reason = record["verification"]["error"]
        self.assertTrue(reason.startswith("the timing child failed: Command '["), reason)
        self.assertTrue(reason.endswith("timed out after 5 seconds"), reason)
        self.assertNotIn("(verifying)", self.last_output)
        self.assertLess(elapsed, 9.5)

    def test_float64_failure_falls_back_to_cosine(self):
        record, details = self.verify_one(model="no_float64")
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertIs(details["cosine"], True)
        self.assertIn("no float64 kernel, on purpose", details["fp64_error"])
        self.assertNotIn("rmse_vs_fp64", details)  # no golden run to measure against

    def test_verify_iterations_runs_that_many_steps(self):
        record, details = self.verify_one(model="second_step_throws_in_verifier")
        self.assertEqual(record["verification_code"], "PASS", details)
        record, details = self.verify_one("--verify-iterations=2", model="second_step_throws_in_verifier")
        self.assertEqual(record["verification_code"], "EAGER_FAILED", details)
        self.assertIn("second step of this model instance failed on purpose", details["error"])
        self.assertEqual(details["iterations"], 2)

    def test_tolerance_and_cosine_from_flags_and_the_suite_yaml(self):
        record, details = self.verify_one(backend=NEAR_MISS)
        self.assertEqual(record["verification_code"], "FAIL", details)
        self.assertEqual(details["tolerance"], 1e-2)
        self.assertEqual(details["precision"], "bfloat16")
        self.assertEqual(details["tolerance_rule"], "bfloat16 eval: 1e-4, raised to eval's 1e-2")
        self.assertIs(details["cosine"], False)

        record, details = self.verify_one("--verify-tolerance=0.1", backend=NEAR_MISS)
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertEqual((details["tolerance"], details["tolerance_rule"]), (0.1, "--verify-tolerance"))

        record, details = self.verify_one("--verify-cosine-similarity", backend=NEAR_MISS)
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertIs(details["cosine"], True)

        record, details = self.verify_one(backend=NEAR_MISS, yaml="tolerance:\n  cosine: [two_outputs]\n")
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertIs(details["cosine"], True)

        # float16 inference (dtype.force_fp16_for_bf16_models): eval's 1e-2, or 8e-2 for even_higher
        fp16 = "dtype:\n  force_fp16_for_bf16_models: [two_outputs]\n"
        record, details = self.verify_one(backend=NEAR_MISS, yaml=fp16)
        self.assertEqual(record["verification_code"], "FAIL", details)
        self.assertEqual((details["precision"], details["tolerance"]), ("float16", 1e-2))
        record, details = self.verify_one(backend=NEAR_MISS,
                                          yaml=fp16 + "tolerance:\n  even_higher: [two_outputs]\n")
        self.assertEqual(record["verification_code"], "PASS", details)
        self.assertEqual(details["tolerance"], 8e-2)
        self.assertEqual(details["tolerance_rule"], "float16, tolerance.even_higher: 8e-2")

    def test_skip_list_gives_verifier_skipped(self):
        record, details = self.verify_one(yaml="accuracy:\n  skip:\n    large_models: [two_outputs]\n")
        self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")
        self.assertIn("accuracy.skip", details["message"])
        self.assertEqual(len(record["metrics"]["total_time"]), 1)  # the timings are kept

    def test_without_verify_the_code_stays_skipped(self):
        run(FAULTY_RUNNER, "--suite-name=verifier_checks", "--accelerator=cpu", "--xla=None",
            "--dynamo=None", "--test=eval", "--repeat=1", "--filter=^two_outputs$",
            f"--output-dirname={self.out}")
        [record] = read_records(self.results)
        self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")
        self.assertNotIn("verification", record["metrics"])

    def test_real_models_pass_against_themselves(self):
        # A faithful eager backend agrees with itself and with float64 within tolerance.
        run(RUNNER, "--suite-name=torchbench", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--test=train", "--filter=^(resnet18|squeezenet1_1|nanogpt)$",
            "--batch-size=2", "--repeat=1", "--verify", f"--output-dirname={self.out}")
        records = read_records(self.results)
        self.assertGreaterEqual(len(records), 5)
        for record in records:
            self.assertEqual(record["verification_code"], "PASS",
                             (record["model"]["model_name"], record["experiment"]["test"],
                              record.get("verification")))


if __name__ == "__main__":
    unittest.main()
