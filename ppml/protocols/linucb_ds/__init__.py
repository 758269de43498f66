"""The LinUCB-DS and SpectralUCB-DS family (Ciucanu et al., sections 3 and 6): protocol, roles,
scores, plaintext reference, spectral policy and config (docs/linucb-ds.md)."""
