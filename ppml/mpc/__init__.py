"""The secret-sharing engine: fixed-point arithmetic on Z/2^64 shares for any number of parties.

    import ppml.mpc as mpc
    outs = mpc.run(program, parties=3, runtime="local", precision_bits=20, seed=7,
                   inputs={0: {"a": A}, 2: {"b": B}})

See docs/mpc.md for the protocols, their rounds and their accuracy.
"""

from ppml.mpc.context import Context, PerParty
from ppml.mpc.runtime import RUNTIMES, local_context, run
from ppml.mpc.tensor import (ArithmeticShared, BinaryShared, argmax, bernoulli, concatenate,
                              products, reveal_argmax, stack, uniform)

__all__ = ["run", "argmax", "reveal_argmax", "bernoulli", "uniform", "concatenate", "products",
           "stack", "local_context", "Context", "PerParty", "ArithmeticShared", "BinaryShared",
           "RUNTIMES"]
