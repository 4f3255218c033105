"""qrspi-guard: keeps QRSPI AI review rounds honest."""

__version__ = "0.1.0"
