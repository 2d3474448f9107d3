#!/usr/bin/env python3
"""Times ad-gradbench and other GradBench tools on one eval, side by side:
the tools take turns for ROUNDS rounds (this machine's speed drifts, so turns
matter more than repetitions), each row keeps each tool's fastest median, and
the ratios are ad over each other tool, with their geometric mean per
function.

usage: side_by_side.py GRADBENCH_CHECKOUT EVAL ROUNDS [eval args...]

AD=path/to/ad-gradbench overrides ad's binary. REFERENCE='tool command'
overrides the first tool ad is compared with, named `cpp`, which defaults to
GradBench's hand-written C++ tool (`manual`). PEERS='name=command;...' adds
more tools, each run in the same turns, for example
PEERS='codipack=python3 python/gradbench/gradbench/cpp.py codipack'.
REFERENCE=none leaves `cpp` out.

It drives each run through ../shared/tools/gradbench-run.py, which prints a
line per evaluation: eval, function, input, validity, median time in ms.
"""
import collections
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
runner = os.path.join(here, "..", "..", "..", "shared", "tools", "gradbench-run.py")
root, ev, rounds, *eval_args = sys.argv[1:]
tools = {"ad": os.path.abspath(os.environ.get(
    "AD", os.path.join(here, "..", "..", "target", "release", "ad-gradbench")))}
reference = os.environ.get("REFERENCE", "python3 python/gradbench/gradbench/cpp.py manual")
if reference != "none":
    tools["cpp"] = reference
for peer in filter(None, os.environ.get("PEERS", "").split(";")):
    name, command = peer.split("=", 1)
    tools[name.strip()] = command.strip()
others = [name for name in tools if name != "ad"]

best = collections.defaultdict(dict)
invalid = 0
for _ in range(int(rounds)):
    for name, command in tools.items():
        out = subprocess.run(
            [sys.executable, runner, root, ev, command, *eval_args],
            cwd=root, capture_output=True, text=True,
        ).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 6 and fields[-1] == "ms":
                key, ms = (fields[1], fields[2]), float(fields[-2])
                if fields[3] != "valid":
                    invalid += 1
                    print("INVALID", name, line)
                best[key][name] = min(best[key].get(name, math.inf), ms)

ratios = collections.defaultdict(list)
for (function, description), times in best.items():
    if "ad" not in times:
        continue
    row = [f"{function:10s} {description:28s} ad {times['ad']:10.3f} ms"]
    for name in others:
        if name in times:
            ratio = times["ad"] / times[name]
            ratios[function, name].append(ratio)
            row.append(f"{name} {times[name]:10.3f} ms (ratio {ratio:5.2f})")
    print("  ".join(row))
for (function, name), rs in ratios.items():
    geomean = math.exp(sum(map(math.log, rs)) / len(rs))
    print(f"{function} ad / {name}: geometric mean {geomean:.2f} over {len(rs)} inputs "
          f"(range {min(rs):.2f} to {max(rs):.2f})")
print(f"invalid rows: {invalid}")
