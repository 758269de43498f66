"""The protocol families, one folder each with the same file names (docs/architecture.md).

* `private_cb`: Hannun et al., private contextual bandits on secret shares (Algorithm 1);
* `linucb_ds`: Ciucanu et al., LinUCB-DS and SpectralUCB-DS on Paillier (Figs. 3-4);
* `samba`: Ciucanu et al., Samba, secure federated multi-armed bandits (Figs. 5-6).
"""
