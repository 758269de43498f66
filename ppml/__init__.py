"""ppml: privacy-preserving bandits and RL with secure multi-party computation, run on Ray."""

__version__ = "0.1.0"
