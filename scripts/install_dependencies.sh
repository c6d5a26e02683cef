#!/usr/bin/env bash
# Installs what the build needs, idempotently and quickly when everything is there:
#  - Debian packages (Boost, yaml-cpp, RapidJSON, doctest, OpenSSL, ccache, ninja, CMake, g++);
#  - LibTorch: the PyPI wheel torch==2.11.0 in the project-local virtual environment .venv
#    (created with --system-site-packages, so a machine whose python3 already has torch 2.11.0 —
#    the GPU machine, which has no internet — uses it without downloading);
#  - for the tests only: Debian's chromium (the HTML report is rendered headless in a test) and
#    slurm-wlm + munge (the Slurm test starts a real single-node cluster), tried where apt-get can
#    install them and skipped with a note otherwise (the GPU machine has no internet; the tests then
#    skip those parts and say why);
#  - the pip originals our models are compared with (torchvision, timm, transformers), at
#    versions that match torch 2.11.0 (timm and transformers also build the huggingface and
#    timm_models suites' models: python/benchmatrix_import), and scipy, whose mannwhitneyu the
#    compare_runs test checks our p-values against. Skipped with a note where pip cannot reach
#    PyPI; the reference_architectures test then fails and says why, and compare_runs' scipy check
#    is skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_VERSION=2.11.0
PACKAGES=(g++ cmake ninja-build ccache python3-venv libboost-dev libboost-program-options-dev
          libboost-filesystem-dev libyaml-cpp-dev rapidjson-dev doctest-dev libssl-dev
          libsqlite3-dev)

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
# Headers found elsewhere (e.g. RapidJSON unpacked into third_party_cache/ by
# scripts/prepare_offline_build.sh, for machines without internet) need no package.
if [[ " ${missing[*]} " == *" rapidjson-dev "* && -f third_party_cache/rapidjson/usr/include/rapidjson/document.h ]]; then
  missing=("${missing[@]/rapidjson-dev}")
fi
if [[ " ${missing[*]} " == *" libsqlite3-dev "* && -f third_party_cache/sqlite/usr/include/sqlite3.h ]]; then
  missing=("${missing[@]/libsqlite3-dev}")
fi
if [[ " ${missing[*]} " == *" python3-venv "* ]] && python3 -m venv --help >/dev/null 2>&1; then
  missing=("${missing[@]/python3-venv}")  # a Python that has venv built in (pyenv) needs no package
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  echo "Installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
fi

# Test-only Debian packages: installed when missing and apt-get can get them; never fatal.
TEST_PACKAGES=(chromium slurm-wlm munge)
test_missing=()
for package in "${TEST_PACKAGES[@]}"; do
  [[ $package == chromium ]] && command -v chromium >/dev/null 2>&1 && continue  # e.g. a snap
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    test_missing+=("$package")
done
if ((${#test_missing[@]})); then
  echo "Installing test-only Debian packages: ${test_missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  if ! { "${sudo_cmd[@]}" apt-get update -q &&
         DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "${test_missing[@]}"; }; then
    echo "note: could not install ${test_missing[*]}; test_html_report skips its Chromium rendering" \
         "and test_slurm its cluster without them" >&2
  fi
fi

stamp=.venv/.torch-$TORCH_VERSION
if [[ ! -f $stamp ]]; then
  [[ -x .venv/bin/python ]] || python3 -m venv --system-site-packages .venv
  if ! .venv/bin/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" 2>/dev/null; then
    echo "Installing torch==$TORCH_VERSION into .venv (LibTorch for the C++ build; a few GB)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==$TORCH_VERSION"
  fi
  touch "$stamp"
fi

# torchax and jax (CPU): the XLA backend's StableHLO export and its CI check (e2e_xla_export).
REFERENCE_PACKAGES=(torchvision==0.26.0 timm==1.0.31 transformers==5.23.0 scipy==1.17.1
                    torchax==0.0.13 jax==0.10.2)
reference_stamp=.venv/.references-$(echo "${REFERENCE_PACKAGES[*]}" | tr ' =' '_-')
if [[ ! -f $reference_stamp ]]; then
  echo "Installing the test references into .venv: ${REFERENCE_PACKAGES[*]}"
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check "${REFERENCE_PACKAGES[@]}"; then
    touch "$reference_stamp"
  else
    echo "note: could not install ${REFERENCE_PACKAGES[*]}; the reference_architectures test needs" \
         "them (and test_compare_runs skips its scipy check without scipy)" >&2
  fi
fi

# The PJRT C API header for the XLA backend (and torchax for machines without PyPI), into the ignored
# third_party_cache/; without them xla=PJRT configs are SKIP records. Non-fatal.
bash scripts/fetch_pjrt_header.sh || echo "note: could not fetch the PJRT C API header" >&2
