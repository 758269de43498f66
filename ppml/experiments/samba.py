"""The Samba experiment (Ciucanu et al., section 6): one algorithm of Fig. 4 on K Bernoulli arms
(MovieLens, Jester or synthetic), three versions.

* ``plaintext``: Fig. 3 with Fig. 4 (ppml/protocols/samba/reference.py), replaying the secure
  run's draws in an explicit evaluation mode (`replay_keys`): the seeded mode's keys, or each
  role's own keys collected after a fresh run;
* ``distributed``: Samba's participants and messages with every Enc and E removed (A_no-enc in
  the proof of Theorem 2) and the paper's masks instead of the selection on shares: what the
  protocol costs without its privacy;
* ``secure``: Samba (ppml/protocols/samba/protocol.py), DC decrypting the cumulative reward.

Per step: the arm and reward of the secure run and of the reference.  Per run: both cumulative
rewards, the wall time of each version, each participant's own seconds (Fig. 8(d)), the
phases of the secure run (``setup_s`` with DC's ``keygen_s`` and the DOs' offline obfuscators
``offline_s``, ``steps_s`` of steps 2-5, ``end_s`` of steps 6-7 with the K Paillier
encryptions), the time per step t of the secure and
the distributed runs (``step_ms``, ``distributed_step_ms``: their difference is the
cryptography and the selection on shares, the rest messaging), the counts of AES-GCM and
Paillier operations beside Theorem 4's, and the selection's rounds and the bytes the Controller
sent in them (``selection_rounds``, ``selection_bytes``; 0 under mask=paper), and the secure
run's slowdowns against the plaintext reference (the median of `slowdown.TIMINGS` timings,
``plaintext_wall_s``): ``slowdown_online`` (steps 2-7, ``steps_s + end_s``) and
``slowdown_total`` (``wall_s``, set-up included).

With ``checkpoint_every`` the secure run's roles checkpoint (`ppml.protocols.samba.protocol`);
it resumes by ``resume=<run_id>``, and by itself under runtime=ray or federated when a role is
lost; each row says whether its step ran twice (``replayed``).  The distributed run, a
timing baseline, never checkpoints: it runs after the secure run has ended.
"""

from __future__ import annotations

from dataclasses import replace

from ppml.protocols.samba.reference import run_reference
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.protocol import SambaRun, run_samba
from ppml.protocols.samba.keys import SambaKeys
from ppml.data.bernoulli_items import load_bernoulli_arms
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import run_parties
from ppml.experiments.registry import register
from ppml.experiments.slowdown import slowdowns, timed
from ppml.experiments.results import RunOutput
from ppml.experiments.table import format_table


def replay_keys(seed: int | None, secure) -> SambaKeys:
    """EVALUATION MODE: the keys the plaintext reference replays the secure run with: derived
    from the seed in the seeded mode, else collected from the roles after the run."""
    return SambaKeys.for_seed(seed) if seed is not None else secure.replay_keys


def run_federated(config: RunConfig) -> SambaRun:
    """The Controller, Comp, DC and the DO groups each their own process on loopback
    (`ppml.experiments.samba_parties`); the Controller's report."""
    if config.record_views:
        raise ValueError("record_views=true is not supported with runtime=federated yet: each "
                         "party's view stays in its process")
    return SambaRun(**run_parties(config)["controller"]["run"])


def run_secure(config: RunConfig, data, setup: SambaConfig) -> SambaRun:
    """The secure run of one attempt (``config`` says whether it resumes)."""
    if config.runtime == "federated":
        return run_federated(config)
    return run_samba(data, replace(setup, checkpoints=checkpointing.plan(config, [])))


def load_data(config: RunConfig):
    """The run's arms (`ppml.data.bernoulli_items.load_bernoulli_arms`); also the run's input
    check (`registry.register`), before anything starts."""
    options = config.samba
    return load_bernoulli_arms(config.dataset, arms=config.arms, threshold=options.threshold,
                               denominator=options.denominator, min_ratings=options.min_ratings,
                               seed=config.data_seed, data_dir=config.data_dir)


SHOWN = ("dataset", "algorithm", "mask", ("arms", "K"), ("steps", "N"),
         ("secure_cumulative_reward", "reward"), ("plaintext_cumulative_reward", "plaintext"),
         ("arm_agreement", "same arm"), "wall_s", "step_ms", ("slowdown_total", "slowdown"))
"""The printed summary: did it work (DC's sum against the reference's, the share of steps with
its arm), how fast (the secure run, a step, and everything the secure run costs against the
plaintext reference); the protocol reveals nothing beyond the sum to DC, which the columns'
equality shows."""


@register("samba", check=load_data)
def samba(config: RunConfig, data) -> RunOutput:
    options = config.samba
    spec = options.spec()
    checkpointing.prepare(config)
    setup = SambaConfig(config.horizon, spec, runtime=config.runtime, mask=options.mask,
                        owners_per_actor=options.owners_per_actor, key_bits=config.key_bits,
                        insecure_key_bits_ok=config.insecure_key_bits_ok, seed=config.seed,
                        record_views=config.record_views, collect_keys=config.seed is None,
                        timeout_s=config.party_timeout_s)
    secure = checkpointing.with_restarts(config,
                                         lambda attempt: run_secure(attempt, data, setup))
    federated = config.runtime == "federated"
    distributed = run_samba(data, replace(setup, crypto=False, mask="paper", record_views=False,
                                          collect_keys=False,
                                          runtime="local" if federated else setup.runtime))
    keys = replay_keys(config.seed, secure)
    plain, plain_s = timed(lambda: run_reference(data, config.horizon, spec, keys, options.mask))
    replayed = checkpointing.replayed(secure.replays, config.horizon)
    rows = [{"step": t + 1, "arm": secure.arms[t], "reward": float(data.reward(t, secure.arms[t])),
             "plaintext_arm": plain.arms[t], "plaintext_reward": float(plain.rewards[t]),
             "replayed": replayed[t]}
            for t in range(config.horizon)]
    iterations = spec.policy(config.arms).iterations
    steps = max(1, config.horizon - config.arms)
    summary = {
        "secure_cumulative_reward": float(secure.cumulative_reward),
        "plaintext_cumulative_reward": float(plain.cumulative_reward),
        "arm_agreement": sum(a == b for a, b in zip(secure.arms, plain.arms)) / config.horizon,
        "wall_s": secure.wall_s, "plaintext_wall_s": plain_s,
        **slowdowns(secure.wall_s - secure.seconds["setup_s"], secure.wall_s, plain_s),
        "distributed_wall_s": distributed.wall_s,
        "step_ms": 1e3 * secure.seconds["steps_s"] / steps,
        "distributed_step_ms": 1e3 * distributed.seconds["steps_s"] / steps,
        **secure.seconds, **secure.counts,
        "theorem4_aes_gcm_ops": 4 * config.arms * (config.horizon - config.arms) * iterations,
    }
    shown = {"dataset": data.name, "algorithm": spec.name, "mask": options.mask,
             "arms": config.arms, "steps": config.horizon, **summary}
    return RunOutput(rows=rows, summary=summary, table=format_table([shown], SHOWN),
                     views=secure.views)
