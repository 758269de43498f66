"""The secret-sharing engine: fixed-point arithmetic on Z/2^64 shares for any number of parties.

It implements Hannun et al.'s section 3 and appendices A-C (sharing, Beaver products,
conversions, comparisons, fixed-point encoding, public division).

    from ppml.runtime import spmd
    outs = spmd.run(program, parties=3, runtime="local", precision_bits=20, seed=7,
                    inputs={0: {"a": A}, 2: {"b": B}})

runs ``program(ctx, **inputs)`` for every party (`ppml.runtime.spmd`); the engine itself knows
nothing of where parties run.  `local_context` holds every party in this process.

See docs/mpc.md for the protocols, their rounds and their accuracy.
"""

from ppml.mpc.context import Context, EngineConfig, PerParty
from ppml.mpc.local import local_context
from ppml.mpc.products import products
from ppml.mpc.tensor import (ArithmeticShared, BinaryShared, argmax, bernoulli, concatenate,
                              receive_argmax, reveal_argmax, stack, uniform)

__all__ = ["argmax", "reveal_argmax", "receive_argmax", "bernoulli", "uniform", "concatenate", "products",
           "stack", "local_context", "Context", "EngineConfig", "PerParty", "ArithmeticShared",
           "BinaryShared"]
