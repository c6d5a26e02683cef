#!/usr/bin/env python3
"""An offline HuggingFace cache (HF_HOME) holding hub configs, for TorchBench's hf_* models on a
machine without network (issue 49): their Model builds `AutoConfig.from_pretrained(HUB_ID)` and
random weights, so config.json is the only hub file they read.

Usage: bench/hf_cache_from_configs.py CONFIG_DIR HF_HOME
  CONFIG_DIR holds HUB_ID/config.json for each hub id (bench/hf_configs/: gpt2/config.json,
  facebook/bart-base/config.json, ...); each is written to HF_HOME in the hub's cache layout
  (hub/models--ORG--NAME/snapshots/REVISION/config.json, refs/main naming REVISION), the layout
  `hf download HUB_ID config.json` leaves where the network is reachable. Prints the hub ids.
"""
import hashlib
import os
import shutil
import sys


def main(config_dir, hf_home):
    hub_ids = []
    for folder, _, files in sorted(os.walk(config_dir)):
        if "config.json" not in files:
            continue
        hub_id = os.path.relpath(folder, config_dir)
        source = os.path.join(folder, "config.json")
        with open(source, "rb") as f:
            revision = hashlib.sha1(f.read()).hexdigest()  # a stand-in: 40 hex digits, as the hub's
        repo = os.path.join(hf_home, "hub", "models--" + hub_id.replace(os.sep, "--"))
        snapshot = os.path.join(repo, "snapshots", revision)
        os.makedirs(snapshot, exist_ok=True)
        os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write(revision)
        shutil.copyfile(source, os.path.join(snapshot, "config.json"))
        hub_ids.append(hub_id)
    if not hub_ids:
        sys.exit(f"hf_cache_from_configs: no HUB_ID/config.json under {config_dir}")
    print(f"HF cache {hf_home}: {', '.join(hub_ids)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
