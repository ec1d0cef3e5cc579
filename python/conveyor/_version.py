"""The package version; python/build_wheel.py names the wheel from it."""
__version__ = "0.1.0"
