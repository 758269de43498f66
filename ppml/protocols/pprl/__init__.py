"""Privacy-preserving reinforcement learning (Sakuma et al., ICML 2008): SARSA and Q-learning
shared among agents whose perceptions are partitioned by time or by observation.  The tasks and
the plaintext methods are here; docs/pprl.md."""
