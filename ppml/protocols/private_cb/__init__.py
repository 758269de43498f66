"""The private contextual bandit family (Hannun et al., Algorithm 1): protocol, plaintext
reference, exploration tape, world and config (docs/private-cb.md)."""
