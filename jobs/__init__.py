"""Entry points run as ``python -m jobs.<name>``, locally or under ``ray job submit``."""
