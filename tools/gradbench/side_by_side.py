#!/usr/bin/env python3
"""Times ad-gradbench and GradBench's hand-written C++ tool on one eval, side
by side: the two take turns for ROUNDS rounds (this machine's speed drifts,
so turns matter more than repetitions), each row keeps its fastest median,
and the ratios are ad over C++, with their geometric mean per function.

usage: side_by_side.py GRADBENCH_CHECKOUT EVAL ROUNDS [eval args...]
       (AD=path/to/ad-gradbench and REFERENCE='tool command' override the
       two tools; REFERENCE defaults to the C++ `manual` tool)

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
tools = {
    "ad": os.environ.get("AD", os.path.join(here, "..", "..", "target", "release", "ad-gradbench")),
    "cpp": os.environ.get("REFERENCE", "python3 python/gradbench/gradbench/cpp.py manual"),
}
best = collections.defaultdict(dict)
invalid = 0
for _ in range(int(rounds)):
    for name, command in tools.items():
        out = subprocess.run(
            [sys.executable, runner, root, ev, os.path.abspath(command) if name == "ad" else command, *eval_args],
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
    if "ad" in times and "cpp" in times:
        ratio = times["ad"] / times["cpp"]
        ratios[function].append(ratio)
        print(f"{function:10s} {description:28s} ad {times['ad']:10.3f} ms  "
              f"cpp {times['cpp']:10.3f} ms  ratio {ratio:5.2f}")
for function, rs in ratios.items():
    geomean = math.exp(sum(map(math.log, rs)) / len(rs))
    print(f"{function}: geometric mean {geomean:.2f} over {len(rs)} inputs "
          f"(range {min(rs):.2f} to {max(rs):.2f})")
print(f"invalid rows: {invalid}")
