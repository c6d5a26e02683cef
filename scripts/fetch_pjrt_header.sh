#!/usr/bin/env bash
# Extracts the PJRT C API header (xla/pjrt/c/pjrt_c_api.h, self-contained C) from PyPI's
# tensorflow-cpu wheel into third_party_cache/pjrt/include, for the XLA backend
# (backends/pjrt_runtime.cpp). Neither jaxlib nor the JAX CUDA plugin ships it. Also unpacks
# torchax (pure Python, the StableHLO export) into third_party_cache/python for machines whose
# Python has jax but no PyPI access (the GPU machine: carry third_party_cache). Idempotent; only the
# header and torchax are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
TENSORFLOW_WHEEL=tensorflow-cpu==2.21.0   # PJRT C API 0.90
TORCHAX=torchax==0.0.13
PYTHON=${PYTHON:-.venv/bin/python}
[[ -x $PYTHON ]] || PYTHON=python3
header=third_party_cache/pjrt/include/xla/pjrt/c/pjrt_c_api.h
# The header kept per user too, so that a fresh clone on this machine copies it instead of
# downloading the 250 MB wheel again (about 30 s of a fresh clone's `make test`).
user_copy=${XDG_CACHE_HOME:-$HOME/.cache}/benchmatrix/pjrt/$TENSORFLOW_WHEEL/pjrt_c_api.h

if [[ ! -f $header && -f $user_copy ]]; then
  mkdir -p "$(dirname "$header")"
  cp "$user_copy" "$header.tmp" && mv "$header.tmp" "$header"
fi
if [[ ! -f $header ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "Fetching the PJRT C API header from $TENSORFLOW_WHEEL (a large download, kept: the header only)"
  "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$tmp" "$TENSORFLOW_WHEEL"
  unzip -q -o "$tmp"/tensorflow*.whl 'tensorflow/include/xla/pjrt/c/pjrt_c_api.h' -d "$tmp/x"
  mkdir -p "$(dirname "$header")"
  cp "$tmp/x/tensorflow/include/xla/pjrt/c/pjrt_c_api.h" "$header.tmp"
  mv "$header.tmp" "$header"
  echo "PJRT C API header: $header ($(grep -m1 'define PJRT_API_MINOR' "$header"))"
  if mkdir -p "$(dirname "$user_copy")" 2>/dev/null; then
    cp "$header" "$user_copy.tmp.$$" && mv "$user_copy.tmp.$$" "$user_copy" || true
  fi
fi

if [[ ! -d third_party_cache/python/torchax ]]; then
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target third_party_cache/python.tmp "$TORCHAX"
  rm -rf third_party_cache/python && mv third_party_cache/python.tmp third_party_cache/python
fi
