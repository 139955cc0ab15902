"""The one version number of webcrawl (read by pyproject.toml and every package)."""

__version__ = "0.2.0"
