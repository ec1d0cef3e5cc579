"""Puts python/ (the conveyor package) on sys.path for the interop tests."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
