"""The Samba family, secure federated multi-armed bandits (Ciucanu et al., sections 4-6):
protocol, roles, policies, draws, keys, plaintext reference and config (docs/samba.md)."""
