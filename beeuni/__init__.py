"""beeuni — the validator and tool resolver of the Beeuni agent platform."""

__version__ = "0.1.0"
