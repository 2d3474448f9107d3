#!/usr/bin/env python3
"""GradBench's `jax` tool, timed to the end of each computation.

JAX returns from a jitted call as soon as the work is dispatched, and
GradBench's timing wrapper stops its clock there: at large sizes the
recorded times of the `jax` tool are dispatch times (0.16 ms for a gradient
whose primal takes 54 ms). This runs that same tool with asynchronous
dispatch off and each timed call waiting for its result
(`jax.block_until_ready`).

usage, from a GradBench checkout whose Python has jax installed:
    python3 /path/to/jax_blocking.py     (as a tool command of gradbench-run.py)
"""
import runpy
import sys

import jax
import gradbench.wrap as wrap

jax.config.update("jax_cpu_enable_async_dispatch", False)
timed = wrap.multiple_runs


def multiple_runs(**options):
    time = timed(**options)

    def decorator(function):
        waited = time(lambda input: jax.block_until_ready(function(input)))
        return wrap.Wrapped(function=function, wrapped=waited.wrapped)

    return decorator


wrap.multiple_runs = multiple_runs
tool = "python/gradbench/gradbench/tools/jax"
sys.path.insert(0, tool)
sys.argv = [f"{tool}/run.py"]
runpy.run_path(f"{tool}/run.py", run_name="__main__")
