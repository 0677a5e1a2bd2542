"""Makes the ism package importable from the build tree (ISM_BUILD_DIR,
default build/) and the Python examples importable by name."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("ISM_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
