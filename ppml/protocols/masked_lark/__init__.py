"""Masked LARK (Charles et al.): secret-shared, differentially private aggregation and masked gradients."""
