"""Privacy accounting and audits."""
