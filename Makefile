# The two commands of README.md. Both install what is missing, build incrementally, then act.
#   make run   - the default sweep (configs/matrices/default.yaml) on the CPU, or the GPU if present,
#                then the HTML report of it ($(OUTPUT_DIR)/report.html)
#   make test  - every test, through ctest (after pruning the tests' per-user compile cache of
#                entries unused for a week, or beyond 10 GiB: tests/prune_test_cache.py)
BUILD_DIR ?= build
OUTPUT_DIR ?= results
JOBS ?= $(shell nproc)
# CUDA when nvidia-smi lists a GPU, else the preset's CPU.
ACCELERATOR_FLAG := $(shell nvidia-smi -L >/dev/null 2>&1 && echo --accelerator=cuda)

.PHONY: run test build deps clean

deps:
	@scripts/install_dependencies.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DPython3_EXECUTABLE=$(CURDIR)/.venv/bin/python \
	  -DCMAKE_PREFIX_PATH="$$(.venv/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/experiment_runner --matrix=default $(ACCELERATOR_FLAG) --output-dirname=$(OUTPUT_DIR)
	$(BUILD_DIR)/html_report --output-dirname=$(OUTPUT_DIR)
	@echo "Report: open $(OUTPUT_DIR)/report.html in a browser (self-contained, works offline)"

test: build
	@python3 tests/prune_test_cache.py  # the tests' compile cache: unused entries go
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
