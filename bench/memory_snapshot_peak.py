#!/usr/bin/env python3
"""What is alive at the peak of an --dump-memory-snapshot file (issue 50: where resnet50's
inductor train step's 3.3 GB capture peak goes).

Replays the snapshot's allocator events (device_traces: alloc, free_requested) from the start of
the recording, finds the moment the bytes allocated since then peak, and lists the blocks alive
there: by size, with how many of each, the stream they were allocated on, and whether they were
allocated inside a CUDA graph's private pool (a capture) — the blocks allocated before the
recording started (the model's parameters, ...) are the snapshot's segments' other blocks and are
summed apart. Sizes in MB (10^6 bytes).
Usage: bench/memory_snapshot_peak.py SNAPSHOT.pickle [--top N (default 25)] [--device D (0)]"""
import argparse
import collections
import pickle


def replay(events):
    """(peak bytes since the recording started, the index of the event at the peak, the blocks
    alive there as {address: event})."""
    alive, now, peak, peak_at, at_peak = {}, 0, 0, -1, {}
    for index, event in enumerate(events):
        action = event["action"]
        if action == "alloc":
            alive[event["addr"]] = dict(event, index=index)
            now += event["size"]
            if now > peak:
                peak, peak_at = now, index
                at_peak = dict(alive)
        elif action == "free_requested" and event["addr"] in alive:
            now -= alive.pop(event["addr"])["size"]
    return peak, peak_at, at_peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("snapshot")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    with open(args.snapshot, "rb") as f:
        snapshot = pickle.load(f)
    events = snapshot["device_traces"][args.device]
    actions = collections.Counter(event["action"] for event in events)
    print(f"{len(events)} events: " + ", ".join(f"{n} {a}" for a, n in sorted(actions.items())))
    # Blocks of a CUDA graph's private pool: segments whose pool id is not (0, 0).
    private = set()
    before_recording = 0
    recorded = {event["addr"] for event in events if event["action"] == "alloc"}
    for segment in snapshot["segments"]:
        if segment.get("device", args.device) != args.device:
            continue
        address = segment["address"]
        in_graph_pool = tuple(segment.get("segment_pool_id", (0, 0))) != (0, 0)
        for block in segment["blocks"]:
            if in_graph_pool:
                private.add(address)
            if block["state"] == "active_allocated" and address not in recorded:
                before_recording += block["size"]
            address += block["size"]
    peak, peak_at, at_peak = replay(events)
    print(f"allocated before the recording and still alive at its end: {before_recording / 1e6:.1f} MB")
    print(f"peak of the bytes allocated since the recording started: {peak / 1e6:.1f} MB, at event "
          f"{peak_at} of {len(events)}, {len(at_peak)} blocks alive")
    groups = collections.defaultdict(list)
    for address, event in at_peak.items():
        groups[(event["size"], event["stream"], address in private)].append(event)
    rows = sorted(groups.items(), key=lambda item: -item[0][0] * len(item[1]))
    print(f"\n| block MB | count | total MB | stream | graph pool | first allocated at event |")
    print("|---|---|---|---|---|---|")
    for (size, stream, in_graph_pool), blocks in rows[:args.top]:
        first = min(block["index"] for block in blocks)
        print(f"| {size / 1e6:.2f} | {len(blocks)} | {size * len(blocks) / 1e6:.1f} | {stream} | "
              f"{'yes' if in_graph_pool else 'no'} | {first} |")
    if len(rows) > args.top:
        rest = sum(size * len(blocks) for (size, _, _), blocks in rows[args.top:])
        print(f"| ... {len(rows) - args.top} more sizes | | {rest / 1e6:.1f} | | | |")


if __name__ == "__main__":
    main()
