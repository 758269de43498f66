"""Bandit protocols and their plaintext references."""
