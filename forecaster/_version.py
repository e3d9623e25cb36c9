"""The package version, in a module of its own so that any module can import it without a cycle."""

__version__ = "0.17.6"
